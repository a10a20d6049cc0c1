//! `GET /api/company`: the company, its divisions and its pages in one document.
//!
//! The body is the site model itself (`{"company", "divisions", "pages"}`), which is also
//! what the MCP catalog serializes, and what `serve --from build` reads back.

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;

pub fn api_company(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    Artifact::json(paths::API_COMPANY, JSON, CachePolicy::Content, input.site)
        .map_err(|e| CompileError::new("/api/company", e))
}
