//! [`Prepared`]: everything MCP serves for one content revision that can be made ahead of
//! time, built once from the revision's read model. Every result that does not depend on
//! arguments, and every tool result a tool asks to be prepared ([`Tool::prepared`]), is
//! serialized here in both eras' shapes, so a request only wraps it in its envelope.
//!
//! [`Tool::prepared`]: super::tools::Tool::prepared

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::era::{Era, META_SERVER_INFO, MODERN_VERSIONS};
use super::tools::{self, TOOLS};
use super::{prompts, resources};
use crate::listing::DEFAULT_LIMIT;
use crate::read_model::ReadModel;

/// How long modern clients may cache lists and reads. Content can change with any edit.
const TTL_MS: u64 = 60_000;
/// Entries per `resources/list` page.
const RESOURCES_PER_PAGE: usize = 100;

/// A result serialized once in each era's shape.
pub(super) struct EraBytes {
    legacy: Bytes,
    modern: Bytes,
}

impl EraBytes {
    pub(super) fn for_era(&self, era: Era) -> &Bytes {
        match era {
            Era::Legacy => &self.legacy,
            Era::Modern => &self.modern,
        }
    }
}

/// The prepared results of one tool, by the JSON of their arguments.
#[derive(Default)]
struct PreparedCalls {
    results: HashMap<String, EraBytes>,
    /// The most arguments any prepared call has: a call with more is not looked up.
    most_arguments: usize,
}

/// Everything MCP serves for one content revision, prepared once.
pub struct Prepared {
    pub(super) model: Arc<ReadModel>,
    /// The record as `/api/company` serializes it (compact JSON).
    pub(super) company_json: String,
    pub(super) server_info: Value,
    pub(super) instructions: String,
    /// The `_meta` member modern results carry, serialized once.
    pub(super) server_info_meta: String,
    pub(super) discover: Bytes,
    pub(super) tools_list: EraBytes,
    pub(super) templates_list: EraBytes,
    pub(super) prompts_list: EraBytes,
    /// The first page of `resources/list` ([`Prepared::resources_page`] makes the others).
    first_resources: EraBytes,
    /// Reads of the fixed URIs (`company://company`, `…/divisions`, `…/contacts`).
    pub(super) fixed_reads: HashMap<&'static str, EraBytes>,
    /// Prepared tool results, in [`TOOLS`] order.
    tool_calls: Vec<PreparedCalls>,
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

/// The key a prepared call is found under: the JSON of its arguments (`{}` for none, without
/// serializing anything).
fn arguments_key(arguments: &Map<String, Value>) -> Cow<'static, str> {
    if arguments.is_empty() {
        return Cow::Borrowed("{}");
    }
    Cow::Owned(serde_json::to_string(arguments).unwrap_or_default())
}

/// A JSON string literal for `text`.
fn string_literal(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

impl Prepared {
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

    fn precompute(&self, legacy: Vec<u8>, cacheable: bool) -> EraBytes {
        EraBytes {
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

    /// Prepares what MCP serves from `model`.
    pub fn build(model: Arc<ReadModel>) -> Prepared {
        let site = model.site();
        let base_url = model.base().as_str();
        let company = site.company.name.clone();
        // The same title, description and icons as the server card, which the server-card
        // extension asks to agree with `serverInfo`.
        let server_info = json!({
            "name": "dossier",
            "title": super::server_title(&site.company),
            "version": env!("CARGO_PKG_VERSION"),
            "description": super::server_description(&site.company),
            "icons": super::server_icons(&site.company, model.base()),
            "websiteUrl": base_url,
        });
        let instructions = tools::instructions(&company);
        let server_info_meta = format!(
            "\"_meta\":{{\"{META_SERVER_INFO}\":{}}}",
            serde_json::to_string(&server_info).unwrap_or_else(|_| "{}".into())
        );
        // The bytes of `/api/company` (its first page of page listings).
        let company_json =
            crate::listing::company_document(site, model.base(), DEFAULT_LIMIT, None)
                .ok()
                .and_then(|document| serde_json::to_string(&document).ok())
                .unwrap_or_default();
        let empty = || EraBytes {
            legacy: Bytes::new(),
            modern: Bytes::new(),
        };
        let mut prepared = Prepared {
            model: Arc::clone(&model),
            company_json,
            server_info,
            instructions,
            server_info_meta,
            discover: Bytes::new(),
            tools_list: empty(),
            templates_list: empty(),
            prompts_list: empty(),
            first_resources: empty(),
            fixed_reads: HashMap::new(),
            tool_calls: Vec::new(),
        };

        let discover = object(json!({
            "supportedVersions": MODERN_VERSIONS,
            "capabilities": capabilities(Era::Modern),
            "instructions": prepared.instructions,
        }));
        prepared.discover = Bytes::from(prepared.modernize(&to_bytes(&discover), true));
        prepared.tools_list = prepared.precompute(
            to_bytes(&object(json!({"tools": tools::definitions(&company)}))),
            true,
        );
        prepared.templates_list = prepared.precompute(
            to_bytes(&object(
                json!({"resourceTemplates": resources::templates()}),
            )),
            true,
        );
        prepared.prompts_list = prepared.precompute(
            to_bytes(&object(json!({"prompts": prompts::list(&company)}))),
            true,
        );

        // The first page of `resources/list` is what most clients ask for; the others are
        // made when asked, so a site of 100,000 pages does not list them all per edit.
        prepared.first_resources = prepared.precompute(prepared.resources_result(0), true);

        let company_literal = string_literal(&prepared.company_json);
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
                prepared.read_result(uri).unwrap_or_default()
            };
            fixed_reads.insert(uri, prepared.precompute(legacy, true));
        }
        prepared.fixed_reads = fixed_reads;

        prepared.tool_calls = TOOLS
            .iter()
            .enumerate()
            .map(|(position, tool)| {
                let mut calls = PreparedCalls::default();
                for arguments in tool.prepared(prepared.model.site()) {
                    let outcome = tools::call_at(position, &prepared.model, &arguments);
                    let bytes = prepared.precompute(outcome.result_bytes(), false);
                    calls.most_arguments = calls.most_arguments.max(arguments.len());
                    calls
                        .results
                        .insert(arguments_key(&arguments).into_owned(), bytes);
                }
                calls
            })
            .collect();
        prepared
    }

    /// The prepared result of calling the tool at `position` in [`TOOLS`] with
    /// `arguments`, if it was prepared.
    pub(super) fn prepared_call(
        &self,
        position: usize,
        arguments: &Map<String, Value>,
    ) -> Option<&EraBytes> {
        let calls = self.tool_calls.get(position)?;
        if arguments.len() > calls.most_arguments {
            return None;
        }
        calls.results.get(arguments_key(arguments).as_ref())
    }

    /// A `resources/read` result (legacy shape), or `None` for an unknown URI.
    pub(super) fn read_result(&self, uri: &str) -> Option<Vec<u8>> {
        let contents = resources::read(&self.model, &self.company_json, uri)?;
        Some(to_bytes(&object(json!({"contents": [{
            "uri": uri,
            "mimeType": contents.mime_type,
            "text": contents.text,
        }]}))))
    }
}

impl Prepared {
    /// How many pages `resources/list` has (at least one, maybe empty).
    pub(super) fn resource_pages(&self) -> usize {
        resources::listing_count(self.model.site())
            .div_ceil(RESOURCES_PER_PAGE)
            .max(1)
    }

    /// The result of `resources/list` for its page `page` (below [`Prepared::resource_pages`]).
    pub(super) fn resources_page(&self, page: usize, era: Era) -> Bytes {
        if page == 0 {
            return self.first_resources.for_era(era).clone();
        }
        Bytes::from(self.for_era(era, self.resources_result(page), true))
    }

    fn resources_result(&self, page: usize) -> Vec<u8> {
        let site = self.model.site();
        let count = resources::listing_count(site);
        let start = (page * RESOURCES_PER_PAGE).min(count);
        let end = (start + RESOURCES_PER_PAGE).min(count);
        let mut result = object(json!({"resources": resources::listings_in(site, start..end)}));
        if end < count {
            result.insert("nextCursor".into(), cursor_for(page + 1).into());
        }
        to_bytes(&result)
    }
}

fn cursor_for(page: usize) -> String {
    STANDARD.encode(format!("resources:{page}"))
}

pub(super) fn page_of_cursor(cursor: &str) -> Option<usize> {
    let decoded = String::from_utf8(STANDARD.decode(cursor).ok()?).ok()?;
    decoded.strip_prefix("resources:")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BaseUrl;

    /// `resources/list` pages are made when asked: walking them by cursor lists every
    /// resource once, in order (company, divisions, contacts, each division, each page), and
    /// only the last page has no cursor.
    #[test]
    fn resources_list_pages_list_everything_once_in_order() {
        let content = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content");
        let mut site = crate::content::load(&content).unwrap();
        let model_page = site.pages[0].as_ref().clone();
        for n in 0..250 {
            let mut page = model_page.clone();
            page.slug = format!("extra-{n}");
            site.pages.push(Arc::new(page));
        }
        let mut expected = vec![
            resources::COMPANY.to_string(),
            resources::DIVISIONS.to_string(),
            resources::CONTACTS.to_string(),
        ];
        expected.extend(
            site.divisions
                .iter()
                .map(|d| format!("company://divisions/{}", d.id)),
        );
        expected.extend(
            site.pages
                .iter()
                .map(|p| format!("company://pages/{}", p.slug)),
        );
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let prepared = Prepared::build(Arc::new(crate::read_model::ReadModel::build(
            Arc::new(site),
            &base,
        )));
        assert_eq!(
            prepared.resource_pages(),
            expected.len().div_ceil(RESOURCES_PER_PAGE)
        );
        let mut listed = Vec::new();
        for page in 0..prepared.resource_pages() {
            let result: Value =
                serde_json::from_slice(&prepared.resources_page(page, Era::Legacy)).unwrap();
            for entry in result["resources"].as_array().unwrap() {
                listed.push(entry["uri"].as_str().unwrap().to_string());
            }
            let next = result.get("nextCursor").and_then(Value::as_str);
            let last = page + 1 == prepared.resource_pages();
            assert_eq!(next.and_then(page_of_cursor), (!last).then_some(page + 1));
        }
        assert_eq!(listed, expected);
    }
}
