//! `/.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264) pointing at the OpenAPI
//! description, the documentation, the protected-resource metadata and the health check of
//! the read API, and at the description and documentation of NLWeb's `/ask`.

use std::collections::BTreeMap;

use hyper::header::{HeaderValue, LINK};

use super::operation::{self, Context, Operations};
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;
use crate::wire::{LinkContext, LinkTarget, Linkset, LINKSET_CONTENT_TYPE};
use serde_json::json;

pub fn api_catalog(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let target = |path: &str, media_type| {
        vec![LinkTarget {
            href: base.join(path),
            media_type,
        }]
    };
    let relations = BTreeMap::from([
        ("service-desc", target(paths::OPENAPI, "application/json")),
        ("service-doc", target(paths::AUTH_MD, "text/markdown")),
        (
            "service-meta",
            target(paths::PROTECTED_RESOURCE, "application/json"),
        ),
        ("status", target(paths::API_HEALTH, "application/json")),
    ]);
    // NLWeb's `/ask` is an API of its own, described by the same document.
    let ask = BTreeMap::from([
        ("service-desc", target(paths::OPENAPI, "application/json")),
        ("service-doc", target(paths::DOCS, "text/html")),
    ]);
    let catalog = Linkset {
        linkset: vec![
            LinkContext {
                anchor: base.join(paths::API_COMPANY),
                relations,
            },
            LinkContext {
                anchor: base.join(paths::ASK),
                relations: ask,
            },
        ],
    };
    let link = format!("<{}>; rel=\"api-catalog\"", base.join(paths::API_CATALOG));
    let link = HeaderValue::from_str(&link).map_err(|e| CompileError::new("api-catalog", e))?;
    Ok(Artifact::json(
        paths::API_CATALOG,
        LINKSET_CONTENT_TYPE,
        CachePolicy::Content,
        &catalog,
    )
    .map_err(|e| CompileError::new("api-catalog", e))?
    .with_header(LINK, link))
}

/// The API catalog's operation in `/openapi.json`.
pub(crate) fn operations(_: &Context<'_>) -> Operations {
    let link = json!({
        "Link": {"description": "`<BASE/.well-known/api-catalog>; rel=\"api-catalog\"`", "schema": {"type": "string"}}
    });
    let mut catalog = operation::document_get(
        "getApiCatalog",
        "RFC 9727 API catalog",
        json!({
            "description": "A linkset (RFC 9264) pointing at this description, the documentation, the protected resource metadata and the health check.",
            "headers": link.clone(),
            "content": {"application/linkset+json": {"schema": operation::schema_ref::<Linkset>()}}
        }),
        "discovery",
    );
    catalog["head"]["responses"]["200"]["headers"] = link;
    vec![(paths::API_CATALOG, catalog)]
}
