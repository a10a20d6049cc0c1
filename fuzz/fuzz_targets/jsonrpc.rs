//! The MCP endpoint behind the HTTP layer: the JSON-RPC envelope, the era rules and every
//! method, against the sample company. Lines before the body are the MCP headers.
#![no_main]

use std::sync::{Arc, OnceLock};

use dossier::mcp::{self, McpHeaders, Prepared};
use dossier::read_model::ReadModel;
use libfuzzer_sys::fuzz_target;

fn prepared() -> &'static Prepared {
    static PREPARED: OnceLock<Prepared> = OnceLock::new();
    PREPARED.get_or_init(|| {
        let content = concat!(env!("CARGO_MANIFEST_DIR"), "/../content");
        let site = dossier::content::load(std::path::Path::new(content)).expect("sample content");
        let base = dossier::config::BaseUrl::parse("https://info.example.com").expect("base URL");
        Prepared::build(Arc::new(ReadModel::build(Arc::new(site), &base)))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(4, |b| *b == b'\n');
    let mut header = || parts.next().and_then(|line| std::str::from_utf8(line).ok());
    let (version, method, name) = (header(), header(), header());
    let body = parts.next().unwrap_or(data);
    let headers = McpHeaders {
        protocol_version: version.filter(|v| !v.is_empty()),
        method: method.filter(|m| !m.is_empty()),
        name: name.filter(|n| !n.is_empty()),
    };
    let reply = mcp::handle(prepared(), &headers, body, mcp::SearchBudget::UNLIMITED);
    if let Some(body) = reply.body {
        // Every answer is one JSON-RPC message.
        let value: serde_json::Value = serde_json::from_slice(&body.to_vec()).expect("answer is JSON");
        assert_eq!(value["jsonrpc"], "2.0");
    }
    // The one pass that reads well-formed messages and the thorough reading agree.
    assert_eq!(mcp::jsonrpc::parse(body), mcp::jsonrpc::parse_thoroughly(body));
});
