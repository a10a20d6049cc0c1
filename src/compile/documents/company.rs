//! The JSON read API: `GET /api/company` (the company, its divisions, and its pages listed
//! a page at a time), `GET /api/pages/{slug}` (one page with its Markdown) and
//! `GET /api/divisions/{id}` (one division with its pages listed).
//!
//! All three come from [`crate::listing`], the same shapes the MCP tools return, so the two
//! surfaces cannot disagree. Only the first page of `/api/company` is precompiled; a request
//! with `?limit=` or `?cursor=` is answered by the server from the same model.

use std::sync::Arc;

use hyper::header::{HeaderValue, LINK};

use super::operation::{self, Context, Operations};
use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::config::BaseUrl;
use crate::content::Page;
use crate::listing::{self, DEFAULT_LIMIT};
use crate::paths;
use crate::wire::{CompanyDocument, DivisionDocument, PageDocument};
use serde_json::{json, Value};

/// `Link: <…?cursor=…>; rel="next"` for a list with more to come.
pub fn next_link(base: &BaseUrl, path: &str, cursor: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(&format!(
        "<{}?cursor={cursor}>; rel=\"next\"",
        base.join(path)
    ))
    .ok()
}

pub fn api_company(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let document = listing::company_document(input.site, base, DEFAULT_LIMIT, None)
        .map_err(|e| CompileError::new("/api/company", e))?;
    let next = document.next_cursor.clone();
    let mut artifact = Artifact::json(paths::API_COMPANY, JSON, CachePolicy::Content, &document)
        .map_err(|e| CompileError::new("/api/company", e))?;
    if let Some(link) = next.and_then(|cursor| next_link(base, paths::API_COMPANY, &cursor)) {
        artifact = artifact.with_header(LINK, link);
    }
    Ok(artifact)
}

pub fn api_pages(input: &CompileInput<'_>) -> Result<Vec<Arc<Artifact>>, CompileError> {
    api_pages_of(input, &input.site.pages)
}

/// [`api_pages`] for `of`, some of the site's pages.
pub fn api_pages_of(
    input: &CompileInput<'_>,
    of: &[Arc<Page>],
) -> Result<Vec<Arc<Artifact>>, CompileError> {
    let base = &input.config.base_url;
    // Pages are independent: on every core, as their HTML is.
    let pages: Vec<&Page> = of.iter().map(|page| &**page).collect();
    crate::parallel::map(pages, |page| {
        Artifact::json(
            paths::api_page(&page.slug),
            JSON,
            CachePolicy::Content,
            &listing::page_document(base, page),
        )
        .map(Arc::new)
        .map_err(|e| CompileError::new("/api/pages", e))
    })
    .into_iter()
    .collect()
}

pub fn api_divisions(input: &CompileInput<'_>) -> Result<Vec<Artifact>, CompileError> {
    let base = &input.config.base_url;
    input
        .site
        .divisions
        .iter()
        .map(|division| {
            Artifact::json(
                paths::api_division(&division.id),
                JSON,
                CachePolicy::Content,
                &listing::division_document(input.site, base, division, usize::MAX),
            )
            .map_err(|e| CompileError::new("/api/divisions", e))
        })
        .collect()
}

/// The read API documents' operations in `/openapi.json`.
pub(crate) fn operations(context: &Context<'_>) -> Operations {
    use operation::{document_get, json_response, read_security, schema_ref};
    let mut company_get = document_get(
        "getCompany",
        "The company, its divisions and its pages",
        json_response("The whole public record.", schema_ref::<CompanyDocument>()),
        "company",
    );
    company_get["get"]["security"] = read_security();
    company_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    company_get["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
    if let Some(parameters) = company_get["get"]["parameters"].as_array_mut() {
        parameters.push(operation::limit(DEFAULT_LIMIT, listing::MAX_LIMIT));
        parameters.push(operation::cursor());
    }
    company_get["get"]["description"] = json!(format!(
        "Works without authentication. A valid bearer token gives the same bytes; a present but invalid, expired or revoked token gets 401. Pages are listed without their text, {DEFAULT_LIMIT} at a time by default; `next_cursor` and `Link: rel=\"next\"` continue."
    ));
    let api_document = |operation_id: &str, summary: &str, schema: Value, parameter: &Value| {
        let mut item = document_get(
            operation_id,
            summary,
            json_response(summary, schema),
            "company",
        );
        item["get"]["security"] = read_security();
        item["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
        item["get"]["responses"]["404"] = json!({"$ref": "#/components/responses/NotFound"});
        if let Some(parameters) = item["get"]["parameters"].as_array_mut() {
            parameters.push(parameter.clone());
        }
        item["head"]["parameters"] = json!([parameter]);
        item
    };
    vec![
        (paths::API_COMPANY, company_get),
        (
            "/api/pages/{slug}",
            api_document(
                "getPage",
                "One page, with its Markdown and its URL",
                schema_ref::<PageDocument>(),
                &context.slug,
            ),
        ),
        (
            "/api/divisions/{division_id}",
            api_document(
                "getDivision",
                "One division, with its pages listed",
                schema_ref::<DivisionDocument>(),
                &context.division_id,
            ),
        ),
    ]
}
