//! `GET /api/company`: the company, its divisions and its pages in one document.

use serde::Serialize;

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::content::{Company, Division, Page};
use crate::paths;

/// The body of `/api/company`. Also the data behind the MCP tools, so both say the same.
#[derive(Serialize)]
pub struct CompanyDocument<'a> {
    pub company: &'a Company,
    pub divisions: &'a [Division],
    pub pages: &'a [Page],
}

pub fn api_company(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let document = CompanyDocument {
        company: &input.site.company,
        divisions: &input.site.divisions,
        pages: &input.site.pages,
    };
    Artifact::json(paths::API_COMPANY, JSON, CachePolicy::Content, &document)
        .map_err(|e| CompileError::new("/api/company", e))
}
