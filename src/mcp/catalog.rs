//! The [`Catalog`]: everything MCP serves for one content revision, built once from the
//! same site model as `/api/company`. Every result that does not depend on arguments is
//! serialized here, in both eras' shapes, so a request only wraps it in its envelope.

use std::collections::HashMap;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::era::{Era, META_SERVER_INFO, MODERN_VERSIONS};
use super::search::SearchIndex;
use super::tools::{self, Outcome, Tool};
use super::{prompts, resources};
use crate::config::BaseUrl;
use crate::content::Site;
use crate::listing::DEFAULT_LIMIT;

/// How long modern clients may cache lists and reads. Content can change with any edit.
const TTL_MS: u64 = 60_000;
/// Entries per `resources/list` page.
const RESOURCES_PER_PAGE: usize = 100;

/// A result serialized once in each era's shape.
pub(super) struct Precomputed {
    legacy: Bytes,
    modern: Bytes,
}

impl Precomputed {
    pub(super) fn for_era(&self, era: Era) -> &Bytes {
        match era {
            Era::Legacy => &self.legacy,
            Era::Modern => &self.modern,
        }
    }
}

/// Everything MCP serves for one content revision.
pub struct Catalog {
    pub(super) site: Arc<Site>,
    pub(super) base: BaseUrl,
    pub(super) search: SearchIndex,
    /// The record as `/api/company` serializes it (compact JSON).
    pub(super) company_json: String,
    pub(super) server_info: Value,
    pub(super) instructions: String,
    /// The `_meta` member modern results carry, serialized once.
    pub(super) server_info_meta: String,
    pub(super) discover: Bytes,
    pub(super) tools_list: Precomputed,
    pub(super) templates_list: Precomputed,
    pub(super) prompts_list: Precomputed,
    pub(super) resource_pages: Vec<Precomputed>,
    /// Reads of the fixed URIs (`company://company`, `…/divisions`, `…/contacts`).
    pub(super) fixed_reads: HashMap<&'static str, Precomputed>,
    /// Results of argument-free tool calls, and of `get_division` for each division.
    pub(super) tool_results: HashMap<(Tool, String), Precomputed>,
}

pub(super) fn capabilities(era: Era) -> Value {
    let mut capabilities = json!({
        "tools": {},
        "resources": {},
        "prompts": {},
        "completions": {}
    });
    if era == Era::Legacy {
        // A no-op: nothing is logged, but legacy clients may set a level.
        capabilities["logging"] = json!({});
    }
    capabilities
}

pub(super) fn to_bytes(result: &Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(result).unwrap_or_default()
}

pub(super) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub(super) fn tool_result(outcome: Outcome) -> Map<String, Value> {
    object(match outcome {
        Outcome::Data(data) => json!({
            "content": [{"type": "text", "text": serde_json::to_string(&data).unwrap_or_default()}],
            "structuredContent": data,
            "isError": false
        }),
        Outcome::ToolError(message) => json!({
            "content": [{"type": "text", "text": message}],
            "isError": true
        }),
    })
}

/// A JSON string literal for `text`.
fn string_literal(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

impl Catalog {
    /// The members a modern result adds: `resultType`, for cacheable results `ttlMs` and
    /// `cacheScope`, and the server info `_meta`. Spliced into the legacy bytes, so a result
    /// is serialized once for both eras.
    fn modernize(&self, legacy: &[u8], cacheable: bool) -> Vec<u8> {
        let mut extras = String::from("\"resultType\":\"complete\",");
        if cacheable {
            extras.push_str(&format!("\"ttlMs\":{TTL_MS},\"cacheScope\":\"public\","));
        }
        extras.push_str(&self.server_info_meta);
        let body = legacy.strip_suffix(b"}").unwrap_or(legacy);
        let mut out = Vec::with_capacity(legacy.len() + extras.len() + 2);
        out.extend_from_slice(body);
        if body.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(extras.as_bytes());
        out.push(b'}');
        out
    }

    fn precompute(&self, legacy: Vec<u8>, cacheable: bool) -> Precomputed {
        Precomputed {
            modern: Bytes::from(self.modernize(&legacy, cacheable)),
            legacy: Bytes::from(legacy),
        }
    }

    pub(super) fn for_era(&self, era: Era, legacy: Vec<u8>, cacheable: bool) -> Vec<u8> {
        match era {
            Era::Legacy => legacy,
            Era::Modern => self.modernize(&legacy, cacheable),
        }
    }

    /// Builds the catalog for `site`, served at `base`.
    pub fn build(site: Arc<Site>, base: &BaseUrl) -> Catalog {
        Catalog::build_reusing(site, base, None)
    }

    /// [`Catalog::build`], reusing what it can of `previous` (the catalog of the version
    /// being replaced): the search terms of unchanged pages.
    pub fn build_reusing(site: Arc<Site>, base: &BaseUrl, previous: Option<&Catalog>) -> Catalog {
        let base_url = base.as_str();
        let company = site.company.name.clone();
        let server_info = json!({
            "name": "dossier",
            "title": format!("{company} company information"),
            "version": env!("CARGO_PKG_VERSION"),
            "websiteUrl": base_url,
        });
        let instructions = format!(
            "Public, read-only information about {company}. Call get_company for the whole record, list_divisions / get_division and list_pages / get_page for one part, list_contacts for whom to reach, and search_company_info when unsure where an answer lives. The same data is available as company:// resources. No authentication is needed."
        );
        let server_info_meta = format!(
            "\"_meta\":{{\"{META_SERVER_INFO}\":{}}}",
            serde_json::to_string(&server_info).unwrap_or_else(|_| "{}".into())
        );
        // The bytes of `/api/company` (its first page of page listings).
        let company_json = crate::listing::company_document(&site, base, DEFAULT_LIMIT, None)
            .ok()
            .and_then(|document| serde_json::to_string(&document).ok())
            .unwrap_or_default();
        // Terms from another origin would carry its URLs in their items; only reuse same-origin.
        let earlier = previous
            .filter(|previous| previous.base == *base)
            .map(|previous| (previous.site.as_ref(), &previous.search));
        let search = SearchIndex::build_reusing(&site, base_url, earlier);
        let empty = || Precomputed {
            legacy: Bytes::new(),
            modern: Bytes::new(),
        };
        let mut catalog = Catalog {
            site,
            base: base.clone(),
            search,
            company_json,
            server_info,
            instructions,
            server_info_meta,
            discover: Bytes::new(),
            tools_list: empty(),
            templates_list: empty(),
            prompts_list: empty(),
            resource_pages: Vec::new(),
            fixed_reads: HashMap::new(),
            tool_results: HashMap::new(),
        };

        let discover = object(json!({
            "supportedVersions": MODERN_VERSIONS,
            "capabilities": capabilities(Era::Modern),
            "instructions": catalog.instructions,
        }));
        catalog.discover = Bytes::from(catalog.modernize(&to_bytes(&discover), true));
        catalog.tools_list = catalog.precompute(
            to_bytes(&object(json!({"tools": tools::definitions(&company)}))),
            true,
        );
        catalog.templates_list = catalog.precompute(
            to_bytes(&object(
                json!({"resourceTemplates": resources::templates()}),
            )),
            true,
        );
        catalog.prompts_list = catalog.precompute(
            to_bytes(&object(json!({"prompts": prompts::list(&company)}))),
            true,
        );

        let listings = resources::listings(&catalog.site);
        let pages = listings.len().div_ceil(RESOURCES_PER_PAGE).max(1);
        let mut resource_pages = Vec::with_capacity(pages);
        for page in 0..pages {
            let start = page * RESOURCES_PER_PAGE;
            let end = (start + RESOURCES_PER_PAGE).min(listings.len());
            let mut result = object(json!({"resources": listings[start..end]}));
            if end < listings.len() {
                result.insert("nextCursor".into(), cursor_for(page + 1).into());
            }
            resource_pages.push(catalog.precompute(to_bytes(&result), true));
        }
        catalog.resource_pages = resource_pages;

        let company_literal = string_literal(&catalog.company_json);
        let mut fixed_reads = HashMap::new();
        for uri in [
            resources::COMPANY,
            resources::DIVISIONS,
            resources::CONTACTS,
        ] {
            let legacy = if uri == resources::COMPANY {
                format!(
                    "{{\"contents\":[{{\"uri\":\"{uri}\",\"mimeType\":\"application/json\",\"text\":{company_literal}}}]}}"
                )
                .into_bytes()
            } else {
                catalog.read_result(uri).unwrap_or_default()
            };
            fixed_reads.insert(uri, catalog.precompute(legacy, true));
        }
        catalog.fixed_reads = fixed_reads;

        let mut tool_results = HashMap::new();
        let get_company = format!(
            "{{\"content\":[{{\"type\":\"text\",\"text\":{company_literal}}}],\"structuredContent\":{},\"isError\":false}}",
            catalog.company_json
        );
        tool_results.insert(
            (Tool::GetCompany, String::new()),
            catalog.precompute(get_company.into_bytes(), false),
        );
        let no_arguments = Map::new();
        for tool in [Tool::ListDivisions, Tool::ListPages, Tool::ListContacts] {
            if let Some(outcome) = tools::call(
                &catalog.site,
                &catalog.base,
                &catalog.search,
                tool.name(),
                &no_arguments,
            ) {
                let legacy = to_bytes(&tool_result(outcome));
                tool_results.insert((tool, String::new()), catalog.precompute(legacy, false));
            }
        }
        for division in &catalog.site.divisions {
            let legacy = to_bytes(&tool_result(tools::get_division(
                &catalog.site,
                &catalog.base,
                division,
            )));
            tool_results.insert(
                (Tool::GetDivision, division.id.clone()),
                catalog.precompute(legacy, false),
            );
        }
        catalog.tool_results = tool_results;
        catalog
    }

    /// The site model this catalog answers from.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The public origin the answers' URLs use.
    pub fn base(&self) -> &BaseUrl {
        &self.base
    }

    pub fn search_index(&self) -> &SearchIndex {
        &self.search
    }

    /// A `resources/read` result (legacy shape), or `None` for an unknown URI.
    pub(super) fn read_result(&self, uri: &str) -> Option<Vec<u8>> {
        let contents = resources::read(&self.site, &self.base, &self.company_json, uri)?;
        Some(to_bytes(&object(json!({"contents": [{
            "uri": uri,
            "mimeType": contents.mime_type,
            "text": contents.text,
        }]}))))
    }
}

fn cursor_for(page: usize) -> String {
    STANDARD.encode(format!("resources:{page}"))
}

pub(super) fn page_of_cursor(cursor: &str) -> Option<usize> {
    let decoded = String::from_utf8(STANDARD.decode(cursor).ok()?).ok()?;
    decoded.strip_prefix("resources:")?.parse().ok()
}
