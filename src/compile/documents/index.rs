//! `GET /`: a small JSON index of what this service offers, with `Link` headers that let
//! agents find the API catalog and the OpenAPI description without parsing anything.

use hyper::header::{HeaderValue, LINK};
use serde::Serialize;

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;

#[derive(Serialize)]
struct Index<'a> {
    name: &'a str,
    description: &'a str,
    links: IndexLinks,
}

#[derive(Serialize)]
struct IndexLinks {
    company: String,
    openapi: String,
    api_catalog: String,
    health: String,
    auth: String,
    protected_resource_metadata: String,
    authorization_server_metadata: String,
}

pub fn index(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let index = Index {
        name: &input.site.company.name,
        description: &input.site.company.description,
        links: IndexLinks {
            company: base.join(paths::API_COMPANY),
            openapi: base.join(paths::OPENAPI),
            api_catalog: base.join(paths::API_CATALOG),
            health: base.join(paths::API_HEALTH),
            auth: base.join(paths::AUTH_MD),
            protected_resource_metadata: base.join(paths::PROTECTED_RESOURCE),
            authorization_server_metadata: base.join(paths::AUTHORIZATION_SERVER),
        },
    };
    let link = format!(
        "<{}>; rel=\"api-catalog\", <{}>; rel=\"service-desc\"; type=\"application/json\", <{}>; rel=\"service-doc\"; type=\"text/markdown\"",
        base.join(paths::API_CATALOG),
        base.join(paths::OPENAPI),
        base.join(paths::AUTH_MD),
    );
    let link = HeaderValue::from_str(&link).map_err(|e| CompileError::new("index", e))?;
    Ok(
        Artifact::json(paths::INDEX, JSON, CachePolicy::Content, &index)
            .map_err(|e| CompileError::new("index", e))?
            .with_header(LINK, link),
    )
}
