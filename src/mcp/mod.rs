//! `POST /mcp`: the company over the Model Context Protocol, stateless, JSON responses,
//! both protocol eras on one path.
//!
//! - Legacy era (`2025-03-26`, `2025-06-18`, `2025-11-25`): `initialize` without a session,
//!   `notifications/initialized` answered 202, `ping`.
//! - Modern era (`2026-07-28`): `server/discover`, `_meta` on every request, the
//!   `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers checked against the body,
//!   `resultType`, `ttlMs` and `cacheScope` on results.
//!
//! Routing between them: a modern `MCP-Protocol-Version` header, or (without the header) a
//! modern version in `_meta`, selects the modern era; no header or a legacy version selects
//! the legacy era; an unknown version is refused with `-32022`.
//!
//! A [`Catalog`] is built once per content revision from the same site model as
//! `/api/company`. Every result that does not depend on arguments is serialized then, in
//! both eras' shapes; a request only writes the JSON-RPC envelope around it. [`handle`] is a
//! plain function from headers and body to status and body; `serve` does the HTTP.

pub mod jsonrpc;
mod prompts;
mod resources;
pub mod search;
pub mod tools;

use std::collections::HashMap;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use hyper::StatusCode;
use serde_json::{json, Map, Value};

use jsonrpc::{Id, Message};
use search::SearchIndex;
use tools::{Outcome, Tool};

use crate::config::BaseUrl;
use crate::content::Site;
use crate::listing::DEFAULT_LIMIT;

pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
const LATEST_LEGACY: &str = "2025-11-25";
/// How long modern clients may cache lists and reads. Content can change with any edit.
const TTL_MS: u64 = 60_000;
/// Entries per `resources/list` page.
const RESOURCES_PER_PAGE: usize = 100;

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

/// The MCP request headers the protocol looks at.
#[derive(Debug, Default, Clone, Copy)]
pub struct McpHeaders<'a> {
    pub protocol_version: Option<&'a str>,
    pub method: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// What to send back. `body: None` means 202 Accepted with no body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Option<Vec<u8>>,
}

/// A result serialized once in each era's shape.
struct Precomputed {
    legacy: Bytes,
    modern: Bytes,
}

impl Precomputed {
    fn for_era(&self, era: Era) -> &[u8] {
        match era {
            Era::Legacy => &self.legacy,
            Era::Modern => &self.modern,
        }
    }
}

/// Everything MCP serves for one content revision.
pub struct Catalog {
    site: Arc<Site>,
    base: BaseUrl,
    search: SearchIndex,
    /// The record as `/api/company` serializes it (compact JSON).
    company_json: String,
    server_info: Value,
    instructions: String,
    /// The `_meta` member modern results carry, serialized once.
    server_info_meta: String,
    discover: Bytes,
    tools_list: Precomputed,
    templates_list: Precomputed,
    prompts_list: Precomputed,
    resource_pages: Vec<Precomputed>,
    /// Reads of the fixed URIs (`company://company`, `…/divisions`, `…/contacts`).
    fixed_reads: HashMap<&'static str, Precomputed>,
    /// Results of argument-free tool calls, and of `get_division` for each division.
    tool_results: HashMap<(Tool, String), Precomputed>,
}

fn capabilities(era: Era) -> Value {
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

fn to_bytes(result: &Map<String, Value>) -> Vec<u8> {
    serde_json::to_vec(result).unwrap_or_default()
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn tool_result(outcome: Outcome) -> Map<String, Value> {
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

    fn for_era(&self, era: Era, legacy: Vec<u8>, cacheable: bool) -> Vec<u8> {
        match era {
            Era::Legacy => legacy,
            Era::Modern => self.modernize(&legacy, cacheable),
        }
    }

    /// Builds the catalog for `site`, served at `base`.
    pub fn build(site: Arc<Site>, base: &BaseUrl) -> Catalog {
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
        let search = SearchIndex::build(&site, base_url);
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
    fn read_result(&self, uri: &str) -> Option<Vec<u8>> {
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

fn page_of_cursor(cursor: &str) -> Option<usize> {
    let decoded = String::from_utf8(STANDARD.decode(cursor).ok()?).ok()?;
    decoded.strip_prefix("resources:")?.parse().ok()
}

/// A JSON-RPC error with the HTTP status its era gives it.
struct Failure {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Failure {
    fn new(code: i64, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn with_data(mut self, data: Value) -> Failure {
        self.data = Some(data);
        self
    }
}

fn status_for(code: i64, era: Era) -> StatusCode {
    match (code, era) {
        (jsonrpc::PARSE_ERROR | jsonrpc::INVALID_REQUEST | jsonrpc::UNSUPPORTED_VERSION, _) => {
            StatusCode::BAD_REQUEST
        }
        (jsonrpc::INVALID_PARAMS | jsonrpc::HEADER_MISMATCH, Era::Modern) => {
            StatusCode::BAD_REQUEST
        }
        (jsonrpc::METHOD_NOT_FOUND, Era::Modern) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

fn error_reply(id: Option<&Id>, failure: Failure, era: Era) -> Reply {
    Reply {
        status: status_for(failure.code, era),
        body: Some(jsonrpc::error(
            id,
            failure.code,
            &failure.message,
            failure.data,
        )),
    }
}

/// `-32022`, listing what this era's clients can use: modern clients get exactly the
/// versions `server/discover` announces.
fn unsupported_version(requested: &str, era: Era) -> Failure {
    let supported: Vec<&str> = match era {
        Era::Modern => MODERN_VERSIONS.to_vec(),
        Era::Legacy => MODERN_VERSIONS
            .iter()
            .chain(LEGACY_VERSIONS.iter())
            .copied()
            .collect(),
    };
    Failure::new(
        jsonrpc::UNSUPPORTED_VERSION,
        format!(
            "unsupported protocol version `{requested}`; supported: {}",
            supported.join(", ")
        ),
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

/// Decodes a header value that may use the `=?base64?…?=` form.
fn header_text(value: &str) -> Option<String> {
    let value = value.trim_matches([' ', '\t']);
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
        None => Some(value.to_string()),
    }
}

/// Serves one MCP POST body.
pub fn handle(catalog: &Catalog, headers: &McpHeaders<'_>, body: &[u8]) -> Reply {
    let header_version = headers
        .protocol_version
        .map(|v| v.trim_matches([' ', '\t']));
    let message = match jsonrpc::parse(body) {
        Ok(message) => message,
        Err(invalid) => {
            let era = match header_version {
                Some(version) if MODERN_VERSIONS.contains(&version) => Era::Modern,
                _ => Era::Legacy,
            };
            let failure = Failure::new(invalid.code, invalid.message);
            return error_reply(invalid.id.as_ref(), failure, era);
        }
    };
    let (id, method, params) = match message {
        Message::Request { id, method, params } => (id, method, params),
        Message::Notification { .. } | Message::ClientResponse => {
            return Reply {
                status: StatusCode::ACCEPTED,
                body: None,
            }
        }
    };
    let meta_version = params
        .get("_meta")
        .and_then(|meta| meta.get(META_VERSION))
        .and_then(Value::as_str);
    let is_modern = |version: Option<&str>| version.is_some_and(|v| MODERN_VERSIONS.contains(&v));
    let is_legacy = |version: Option<&str>| version.is_some_and(|v| LEGACY_VERSIONS.contains(&v));
    // A modern version in the header or in `_meta`, or any `_meta` version next to an unknown
    // header, means a modern client; its envelope rules then decide what is wrong.
    let era = if is_modern(header_version)
        || is_modern(meta_version)
        || (meta_version.is_some() && header_version.is_some() && !is_legacy(header_version))
    {
        Era::Modern
    } else {
        Era::Legacy
    };
    if era == Era::Legacy {
        if let Some(version) = header_version.filter(|v| !LEGACY_VERSIONS.contains(v)) {
            let failure = unsupported_version(version, Era::Legacy);
            return error_reply(Some(&id), failure, Era::Legacy);
        }
    } else if let Err(failure) = check_modern_envelope(headers, &method, &params) {
        return error_reply(Some(&id), failure, era);
    }
    match dispatch(catalog, era, &method, &params) {
        Ok(result) => Reply {
            status: StatusCode::OK,
            body: Some(jsonrpc::result(&id, &result)),
        },
        Err(failure) => error_reply(Some(&id), failure, era),
    }
}

/// Modern-era rules, in this order: `_meta` carries the version and client capabilities;
/// the `MCP-Protocol-Version` header repeats that version exactly; the version is one we
/// serve; `Mcp-Method` and `Mcp-Name` repeat the method and its name.
fn check_modern_envelope(
    headers: &McpHeaders<'_>,
    method: &str,
    params: &Map<String, Value>,
) -> Result<(), Failure> {
    let meta = params.get("_meta").and_then(Value::as_object);
    let meta_version = meta
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let has_capabilities =
        meta.is_some_and(|m| m.get(META_CAPABILITIES).is_some_and(Value::is_object));
    let Some(meta_version) = meta_version.filter(|_| has_capabilities) else {
        return Err(Failure::new(
            jsonrpc::INVALID_PARAMS,
            format!("params._meta must carry `{META_VERSION}` and `{META_CAPABILITIES}`"),
        ));
    };
    let mismatch = |what: &str| Failure::new(jsonrpc::HEADER_MISMATCH, what.to_string());
    match headers
        .protocol_version
        .map(|v| v.trim_matches([' ', '\t']))
    {
        None => return Err(mismatch("the MCP-Protocol-Version header is required")),
        Some(version) if version != meta_version => {
            return Err(mismatch(
                "the MCP-Protocol-Version header does not match params._meta",
            ))
        }
        Some(_) => {}
    }
    if !MODERN_VERSIONS.contains(&meta_version) {
        return Err(unsupported_version(meta_version, Era::Modern));
    }
    match headers.method.and_then(header_text) {
        None => return Err(mismatch("the Mcp-Method header is required")),
        Some(value) if value != method => {
            return Err(mismatch(
                "the Mcp-Method header does not match the request method",
            ))
        }
        Some(_) => {}
    }
    let named = match method {
        "tools/call" | "prompts/get" => params.get("name"),
        "resources/read" => params.get("uri"),
        _ => None,
    };
    if let Some(expected) = named.and_then(Value::as_str) {
        match headers.name.and_then(header_text) {
            None => return Err(mismatch("the Mcp-Name header is required for this method")),
            Some(value) if value != expected => {
                return Err(mismatch("the Mcp-Name header does not match the request"))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn no_cursor(params: &Map<String, Value>) -> Result<(), Failure> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(Failure::new(
            jsonrpc::INVALID_PARAMS,
            "invalid cursor: this list has one page",
        )),
    }
}

fn dynamic(catalog: &Catalog, era: Era, result: Map<String, Value>, cacheable: bool) -> Vec<u8> {
    catalog.for_era(era, to_bytes(&result), cacheable)
}

fn dispatch(
    catalog: &Catalog,
    era: Era,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Vec<u8>, Failure> {
    let not_found = || {
        Failure::new(
            jsonrpc::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    };
    match (era, method) {
        (Era::Legacy, "initialize") => {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            let version = requested
                .filter(|v| LEGACY_VERSIONS.contains(v))
                .unwrap_or(LATEST_LEGACY);
            let result = object(json!({
                "protocolVersion": version,
                "capabilities": capabilities(Era::Legacy),
                "serverInfo": catalog.server_info,
                "instructions": catalog.instructions,
            }));
            Ok(to_bytes(&result))
        }
        (Era::Legacy, "ping" | "logging/setLevel") => Ok(b"{}".to_vec()),
        (Era::Modern, "server/discover") => Ok(catalog.discover.to_vec()),
        (_, "tools/list") => {
            no_cursor(params)?;
            Ok(catalog.tools_list.for_era(era).to_vec())
        }
        (_, "tools/call") => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    "params.name (the tool) is required",
                ));
            };
            let empty = Map::new();
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(arguments)) => arguments,
                Some(_) => {
                    return Err(Failure::new(
                        jsonrpc::INVALID_PARAMS,
                        "params.arguments must be an object",
                    ))
                }
            };
            let tool = Tool::from_name(name);
            let key = match (tool, arguments.len()) {
                (_, 0) => Some(String::new()),
                (Some(Tool::GetDivision), 1) => arguments
                    .get("division_id")
                    .and_then(Value::as_str)
                    .map(String::from),
                _ => None,
            };
            if let (Some(tool), Some(key)) = (tool, key) {
                if let Some(precomputed) = catalog.tool_results.get(&(tool, key)) {
                    return Ok(precomputed.for_era(era).to_vec());
                }
            }
            match tools::call(
                &catalog.site,
                &catalog.base,
                &catalog.search,
                name,
                arguments,
            ) {
                Some(outcome) => Ok(dynamic(catalog, era, tool_result(outcome), false)),
                None => Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("unknown tool `{name}`; tools: {}", Tool::names()),
                )),
            }
        }
        (_, "resources/list") => {
            let page = match params.get("cursor") {
                None | Some(Value::Null) => 0,
                Some(Value::String(cursor)) => page_of_cursor(cursor)
                    .filter(|page| *page < catalog.resource_pages.len())
                    .ok_or_else(|| Failure::new(jsonrpc::INVALID_PARAMS, "invalid cursor"))?,
                Some(_) => return Err(Failure::new(jsonrpc::INVALID_PARAMS, "invalid cursor")),
            };
            Ok(catalog.resource_pages[page].for_era(era).to_vec())
        }
        (_, "resources/templates/list") => {
            no_cursor(params)?;
            Ok(catalog.templates_list.for_era(era).to_vec())
        }
        (_, "resources/read") => {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    "params.uri is required",
                ));
            };
            if let Some(precomputed) = catalog.fixed_reads.get(uri) {
                return Ok(precomputed.for_era(era).to_vec());
            }
            match catalog.read_result(uri) {
                Some(legacy) => Ok(catalog.for_era(era, legacy, true)),
                None => Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("resource not found: {uri}"),
                )
                .with_data(json!({"uri": uri}))),
            }
        }
        (_, "prompts/list") => {
            no_cursor(params)?;
            Ok(catalog.prompts_list.for_era(era).to_vec())
        }
        (_, "prompts/get") => {
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name != prompts::BRIEFING {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("unknown prompt `{name}`; prompts: {}", prompts::BRIEFING),
                ));
            }
            let division = params
                .get("arguments")
                .and_then(|a| a.get("division"))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty());
            let result = prompts::briefing(&catalog.site, division)
                .map_err(|message| Failure::new(jsonrpc::INVALID_PARAMS, message))?;
            Ok(dynamic(catalog, era, object(result), false))
        }
        (_, "completion/complete") => {
            let reference = params.get("ref").cloned().unwrap_or(Value::Null);
            let argument = params.get("argument");
            let name = argument.and_then(|a| a.get("name")).and_then(Value::as_str);
            let value = argument
                .and_then(|a| a.get("value"))
                .and_then(Value::as_str);
            let (Some(name), Some(value)) = (name, value) else {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    "params.argument needs a name and a value",
                ));
            };
            let result = prompts::complete(&catalog.site, &reference, name, value)
                .map_err(|message| Failure::new(jsonrpc::INVALID_PARAMS, message))?;
            Ok(dynamic(catalog, era, object(result), false))
        }
        _ => Err(not_found()),
    }
}
