//! The JSON read API: `GET /api/company` (the company, its divisions, and its pages listed
//! a page at a time), `GET /api/pages/{slug}` (one page with its Markdown) and
//! `GET /api/divisions/{id}` (one division with its pages listed).
//!
//! All three come from [`crate::listing`], the same shapes the MCP tools return, so the two
//! surfaces cannot disagree. Only the first page of `/api/company` is precompiled; a request
//! with `?limit=` or `?cursor=` is answered by the server from the same model.

use hyper::header::{HeaderValue, LINK};
use schemars::JsonSchema;
use serde::Serialize;

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::config::BaseUrl;
use crate::content::{Division, Page};
use crate::listing::{self, division_url, page_listing, page_url, PageListing, DEFAULT_LIMIT};
use crate::paths;

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

/// `GET /api/pages/{slug}`.
#[derive(Serialize, JsonSchema)]
pub(crate) struct PageDocument<'a> {
    page: &'a Page,
    /// The page for people: the address to cite.
    #[schemars(url)]
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    division_url: Option<String>,
}

/// `GET /api/divisions/{id}`.
#[derive(Serialize, JsonSchema)]
pub(crate) struct DivisionDocument<'a> {
    division: &'a Division,
    #[schemars(url)]
    url: String,
    pages: Vec<PageListing<'a>>,
}

pub fn api_pages(input: &CompileInput<'_>) -> Result<Vec<Artifact>, CompileError> {
    let base = &input.config.base_url;
    input
        .site
        .pages
        .iter()
        .map(|page| {
            let document = PageDocument {
                page,
                url: page_url(base, &page.slug),
                division_url: page.division.as_deref().map(|id| division_url(base, id)),
            };
            Artifact::json(
                format!("/api/pages/{}", page.slug),
                JSON,
                CachePolicy::Content,
                &document,
            )
            .map_err(|e| CompileError::new("/api/pages", e))
        })
        .collect()
}

pub fn api_divisions(input: &CompileInput<'_>) -> Result<Vec<Artifact>, CompileError> {
    let base = &input.config.base_url;
    input
        .site
        .divisions
        .iter()
        .map(|division| {
            let document = DivisionDocument {
                division,
                url: division_url(base, &division.id),
                pages: input
                    .site
                    .pages
                    .iter()
                    .filter(|p| p.division.as_deref() == Some(division.id.as_str()))
                    .map(|page| page_listing(base, page))
                    .collect(),
            };
            Artifact::json(
                format!("/api/divisions/{}", division.id),
                JSON,
                CachePolicy::Content,
                &document,
            )
            .map_err(|e| CompileError::new("/api/divisions", e))
        })
        .collect()
}
