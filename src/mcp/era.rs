//! Which protocol era a request speaks, and the modern era's envelope rules.
//!
//! A modern `MCP-Protocol-Version` header, or (without the header) a modern version in
//! `_meta`, selects the modern era; no header or a legacy version selects the legacy era;
//! an unknown version is refused with `-32022` listing what that era's clients can use.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};

use super::jsonrpc::{self, Failure};
use super::McpHeaders;

/// Versions of the legacy era (`initialize`, sessions optional), newest first.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// Versions of the modern era (`server/discover`, `_meta`, checked headers).
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
pub(super) const LATEST_LEGACY: &str = "2025-11-25";

pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    Legacy,
    Modern,
}

/// The era of a request whose body could not be read: the header alone decides.
pub(super) fn of_header(headers: &McpHeaders<'_>) -> Era {
    match headers
        .protocol_version
        .map(|v| v.trim_matches([' ', '\t']))
    {
        Some(version) if MODERN_VERSIONS.contains(&version) => Era::Modern,
        _ => Era::Legacy,
    }
}

/// The era of a request, after its envelope has been checked against that era's rules.
/// On refusal, the era to answer in comes with the failure.
pub(super) fn negotiate(
    headers: &McpHeaders<'_>,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Era, (Failure, Era)> {
    let header_version = headers
        .protocol_version
        .map(|v| v.trim_matches([' ', '\t']));
    let meta_version = params
        .get("_meta")
        .and_then(|meta| meta.get(META_VERSION))
        .and_then(Value::as_str);
    let is_modern = |version: Option<&str>| version.is_some_and(|v| MODERN_VERSIONS.contains(&v));
    let is_legacy = |version: Option<&str>| version.is_some_and(|v| LEGACY_VERSIONS.contains(&v));
    // A modern version in the header or in `_meta`, or any `_meta` version next to an unknown
    // header, means a modern client; its envelope rules then decide what is wrong.
    if is_modern(header_version)
        || is_modern(meta_version)
        || (meta_version.is_some() && header_version.is_some() && !is_legacy(header_version))
    {
        check_modern_envelope(headers, method, params).map_err(|f| (f, Era::Modern))?;
        return Ok(Era::Modern);
    }
    if let Some(version) = header_version.filter(|v| !LEGACY_VERSIONS.contains(v)) {
        return Err((unsupported_version(version, Era::Legacy), Era::Legacy));
    }
    Ok(Era::Legacy)
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
