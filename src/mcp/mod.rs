//! `POST /mcp`: the company over the Model Context Protocol, stateless, JSON responses,
//! both protocol eras on one path.
//!
//! - Legacy era (`2025-03-26`, `2025-06-18`, `2025-11-25`): `initialize` without a session,
//!   `notifications/initialized` answered 202, `ping`.
//! - Modern era (`2026-07-28`): `server/discover`, `_meta` on every request, the
//!   `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers checked against the body,
//!   `resultType`, `ttlMs` and `cacheScope` on results.
//!
//! The flow of one request, one module a step: `jsonrpc` reads the envelope, `era` decides
//! which era it speaks and checks that era's rules, `dispatch` answers the method from the
//! [`Prepared`] answers (built once per content revision, with every argument-free result
//! already serialized in both eras' shapes) and `tools`, `resources` and `prompts` hold
//! what the methods serve, read from the revision's [`ReadModel`](crate::read_model). [`handle`] is a plain function from headers and body to status
//! and body chunks; `serve` does the HTTP.

mod dispatch;
mod era;
pub mod jsonrpc;
mod prepared;
mod prompts;
mod resources;
pub(crate) mod tools;

use std::time::Duration;

use bytes::Bytes;
use hyper::StatusCode;

use dispatch::status_for;
use era::Era;
pub use era::{LEGACY_VERSIONS, MODERN_VERSIONS};
use jsonrpc::Failure;
use jsonrpc::{Id, Message};
pub use prepared::Prepared;

/// An icon of the server, as `serverInfo` and the server card list it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Icon {
    pub src: String,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<[&'static str; 1]>,
}

/// The server's title, in `serverInfo`, the server card and the AI catalog (at most 100
/// characters, as the card's schema allows).
pub fn server_title(company: &crate::content::Company) -> String {
    at_most(&format!("{} company information", company.name), 100)
}

/// The server's description, in `serverInfo` and the server card (whose schema allows 100
/// characters: a long company name is cut on a word).
pub fn server_description(company: &crate::content::Company) -> String {
    let text = format!(
        "Public, read-only facts about {}: divisions, pages, contacts, search.",
        company.name
    );
    at_most(&text, 100)
}

/// `text` cut to `max` characters on a word boundary, with an ellipsis when cut.
pub(crate) fn at_most(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end_matches([',', ';', ':', '.', ' ']))
}

/// The server's icons: the company's logo when it has one, then the site's favicon.
pub fn server_icons(company: &crate::content::Company, base: &crate::config::BaseUrl) -> Vec<Icon> {
    let mut icons = Vec::new();
    if let Some(logo) = company.logo.as_deref() {
        icons.push(Icon {
            src: logo.to_string(),
            mime_type: None,
            sizes: None,
        });
    }
    icons.push(Icon {
        src: base.join(crate::paths::FAVICON),
        mime_type: Some("image/svg+xml"),
        sizes: Some(["any"]),
    });
    icons
}

/// The MCP request headers the protocol looks at.
#[derive(Debug, Default, Clone, Copy)]
pub struct McpHeaders<'a> {
    pub protocol_version: Option<&'a str>,
    pub method: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// Asked before a search runs: a search is computed per request (a pass over the index),
/// unlike every other answer, so each client gets a share of them. `Err(wait)` when the
/// caller has used its share for now.
#[derive(Clone, Copy)]
pub struct SearchBudget<'a>(&'a (dyn Fn() -> Result<(), Duration> + Sync));

impl<'a> SearchBudget<'a> {
    pub fn new(check: &'a (dyn Fn() -> Result<(), Duration> + Sync)) -> Self {
        SearchBudget(check)
    }

    /// No limit: for tests and fuzzing, which call [`handle`] without a client.
    pub const UNLIMITED: SearchBudget<'static> = SearchBudget(&|| Ok(()));

    fn spend(&self) -> Result<(), Duration> {
        (self.0)()
    }
}

/// What to send back. `body: None` means 202 Accepted with no body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Option<Chunks>,
}

/// A JSON-RPC answer as the buffers to send, in order: the envelope's start, the result
/// (often a `Bytes` cached in [`Prepared`] and shared by every request), the envelope's
/// end. Sent as they are, the cached result is never copied.
#[derive(Debug, Clone, Default)]
pub struct Chunks(pub Vec<Bytes>);

impl Chunks {
    /// The answer in one buffer (tests and fuzzing read it whole).
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.concat()
    }
}

fn error_reply(id: Option<&Id>, failure: Failure, era: Era) -> Reply {
    Reply {
        status: status_for(failure.code, era),
        body: Some(Chunks(vec![Bytes::from(jsonrpc::error(
            id,
            failure.code,
            &failure.message,
            failure.data,
        ))])),
    }
}

/// Serves one MCP POST body.
pub fn handle(
    prepared: &Prepared,
    headers: &McpHeaders<'_>,
    body: &[u8],
    searches: SearchBudget<'_>,
) -> Reply {
    let message = match jsonrpc::parse(body) {
        Ok(message) => message,
        Err(invalid) => {
            let failure = Failure::new(invalid.code, invalid.message);
            return error_reply(invalid.id.as_ref(), failure, era::of_header(headers));
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
    let era = match era::negotiate(headers, &method, &params) {
        Ok(era) => era,
        Err((failure, era)) => return error_reply(Some(&id), failure, era),
    };
    match dispatch::dispatch(prepared, era, &method, &params, searches) {
        Ok(result) => Reply {
            status: StatusCode::OK,
            body: Some(jsonrpc::result(&id, result)),
        },
        Err(failure) => error_reply(Some(&id), failure, era),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, LazyLock};

    use super::*;
    use crate::config::BaseUrl;

    static PREPARED: LazyLock<Prepared> = LazyLock::new(|| {
        let content = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content");
        let site = crate::content::load(&content).unwrap();
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        Prepared::build(Arc::new(crate::read_model::ReadModel::build(
            Arc::new(site),
            &base,
        )))
    });

    const MODERN: &str = "2026-07-28";

    fn modern_meta() -> String {
        format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    }

    /// A rule, the MCP headers (version, method, name), the body, and the status and a
    /// piece of the answer it gives.
    type Row<'a> = (&'a str, [Option<&'a str>; 3], String, u16, &'a str);

    /// One protocol rule a row.
    #[test]
    fn protocol_rules() {
        let meta = modern_meta();
        let tools_call_modern = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"list_divisions",{meta}}}}}"#
        );
        let discover =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#);
        let rows: Vec<Row> = vec![
            ("not JSON is a parse error", [None; 3], "{".into(), 400, "-32700"),
            ("a batch is refused", [None; 3], "[]".into(), 400, "-32600"),
            ("notifications are accepted without a body", [None; 3], r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(), 202, ""),
            ("legacy initialize offers the newest legacy version", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#.into(), 200, r#""protocolVersion":"2025-11-25""#),
            ("legacy ping", [None; 3], r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.into(), 200, r#""id":"p","result":{}"#),
            ("an unknown legacy header version is -32022", [Some("1999-01-01"), None, None], r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), 400, "-32022"),
            ("legacy unknown methods are 200 errors", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#.into(), 200, "-32601"),
            ("modern discovery", [Some(MODERN), Some("server/discover"), None], discover.clone(), 200, r#""supportedVersions":["2026-07-28"]"#),
            ("modern needs Mcp-Method", [Some(MODERN), None, None], discover.clone(), 400, "-32020"),
            ("modern header must match _meta", [Some("2025-11-25"), Some("server/discover"), None], discover, 400, "-32020"),
            ("modern needs Mcp-Name for tools/call", [Some(MODERN), Some("tools/call"), None], tools_call_modern.clone(), 400, "Mcp-Name"),
            ("modern tools/call with its headers", [Some(MODERN), Some("tools/call"), Some("list_divisions")], tools_call_modern, 200, r#""resultType":"complete""#),
            ("modern unknown methods are 404", [Some(MODERN), Some("nope"), None], format!(r#"{{"jsonrpc":"2.0","id":1,"method":"nope","params":{{{meta}}}}}"#), 404, "-32601"),
            ("unknown tools are invalid params", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#.into(), 200, "unknown tool `nope`"),
            ("tool errors are results", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_page","arguments":{"slug":"nope"}}}"#.into(), 200, r#""isError":true"#),
            ("lists of one page refuse a cursor", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#.into(), 200, "-32602"),
            ("unknown resources name the uri", [None; 3], r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"company://nope"}}"#.into(), 200, r#""uri":"company://nope""#),
        ];
        for (rule, [version, method, name], body, status, expected) in rows {
            let headers = McpHeaders {
                protocol_version: version,
                method,
                name,
            };
            let reply = handle(
                &PREPARED,
                &headers,
                body.as_bytes(),
                SearchBudget::UNLIMITED,
            );
            assert_eq!(reply.status.as_u16(), status, "{rule}");
            let text = reply
                .body
                .map(|body| String::from_utf8(body.to_vec()).unwrap())
                .unwrap_or_default();
            assert!(text.contains(expected), "{rule}: {text}");
            if !text.is_empty() {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(value["jsonrpc"], "2.0", "{rule}");
            }
        }
    }

    #[test]
    fn cached_results_are_sent_without_copying() {
        let body =
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_company"}}"#;
        let first = handle(
            &PREPARED,
            &McpHeaders::default(),
            body,
            SearchBudget::UNLIMITED,
        )
        .body
        .unwrap();
        let second = handle(
            &PREPARED,
            &McpHeaders::default(),
            body,
            SearchBudget::UNLIMITED,
        )
        .body
        .unwrap();
        // The result is the prepared buffer, shared, between two envelope pieces.
        assert_eq!(first.0.len(), 3);
        assert_eq!(first.0[1].as_ptr(), second.0[1].as_ptr());
        assert!(first
            .to_vec()
            .starts_with(br#"{"jsonrpc":"2.0","id":9,"result":"#));
    }
}
