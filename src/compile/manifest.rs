//! `manifest.json`: what `build/` holds, path by path (file, content type, ETags, cache
//! policy, encodings, extra headers). Its own module because both the writer of `build/`
//! (`output`) and the CDN files made from it (`cdn`) read it, and neither should depend on
//! the other for it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::BaseUrl;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    pub generator: String,
    pub base_url: BaseUrl,
    pub revision: String,
    pub artifacts: BTreeMap<String, ManifestEntry>,
    /// The site model the artifacts were compiled from (`_model.json`; not a served path):
    /// `serve --from` rebuilds MCP and the paginated API from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<EncodedFile>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestEntry {
    pub file: String,
    pub content_type: String,
    pub etag: String,
    pub cache_control: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub encodings: BTreeMap<String, EncodedFile>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    pub vary: String,
    /// The path of this page's Markdown twin, for `Accept: text/markdown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncodedFile {
    pub file: String,
    pub etag: String,
}
