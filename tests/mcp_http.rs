//! `POST /mcp` over a real socket: every HTTP and JSON-RPC status rule, both eras, the tools
//! and resources, and that MCP says exactly what `/api/company` says.

use crate::common;

use common::{Reply, TestServer};
use hyper::{Method, StatusCode};
use serde_json::{json, Value};

const JSON_TYPE: (&str, &str) = ("content-type", "application/json");
const MODERN: &str = "2026-07-28";

async fn post(server: &TestServer, headers: &[(&str, &str)], body: Value) -> Reply {
    let mut all = vec![JSON_TYPE, ("accept", "application/json, text/event-stream")];
    all.extend_from_slice(headers);
    server
        .send(Method::POST, "/mcp", &all, body.to_string())
        .await
}

async fn legacy(server: &TestServer, method: &str, params: Value) -> Reply {
    post(
        server,
        &[],
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
    )
    .await
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

async fn modern(server: &TestServer, method: &str, mut params: Value, name: Option<&str>) -> Reply {
    params["_meta"] = modern_meta();
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    post(
        server,
        &headers,
        json!({"jsonrpc": "2.0", "id": "m1", "method": method, "params": params}),
    )
    .await
}

fn error_code(reply: &Reply) -> i64 {
    reply.json()["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {}", reply.text()))
}

async fn call_tool(server: &TestServer, name: &str, arguments: Value) -> Value {
    let reply = legacy(
        server,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["result"].clone()
}

#[tokio::test]
async fn legacy_handshake_is_stateless() {
    let server = TestServer::start().await;
    let reply = legacy(&server, "initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), "application/json");
    assert!(reply.headers.get("mcp-session-id").is_none());
    let result = &reply.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "dossier");
    for capability in ["tools", "resources", "prompts", "completions"] {
        assert!(
            result["capabilities"][capability].is_object(),
            "{capability}"
        );
    }
    let newer = legacy(
        &server,
        "initialize",
        json!({"protocolVersion": MODERN, "capabilities": {}}),
    )
    .await;
    assert_eq!(newer.json()["result"]["protocolVersion"], "2025-11-25");
    let unknown = legacy(
        &server,
        "initialize",
        json!({"protocolVersion": "2024-01-01", "capabilities": {}}),
    )
    .await;
    assert_eq!(unknown.json()["result"]["protocolVersion"], "2025-11-25");

    let notification = post(
        &server,
        &[],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(notification.status, StatusCode::ACCEPTED);
    assert!(notification.body.is_empty());
    assert!(notification.headers.get("content-type").is_none());
    let client_response = post(
        &server,
        &[],
        json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
    )
    .await;
    assert_eq!(client_response.status, StatusCode::ACCEPTED);

    let ping = legacy(&server, "ping", json!({})).await;
    assert_eq!(
        ping.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    server.stop().await;
}

#[tokio::test]
async fn http_rules() {
    let server = TestServer::start().await;
    for method in [Method::GET, Method::DELETE] {
        let reply = server
            .send(method, "/mcp", &[("accept", "text/event-stream")], "")
            .await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(reply.header("allow"), "POST, OPTIONS");
    }
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for accept in [
        None,
        Some("*/*"),
        Some("application/json"),
        Some("text/event-stream, application/json"),
    ] {
        let mut headers = vec![JSON_TYPE];
        if let Some(accept) = accept {
            headers.push(("accept", accept));
        }
        let reply = server
            .send(Method::POST, "/mcp", &headers, ping.clone())
            .await;
        assert_eq!(reply.status, StatusCode::OK, "Accept: {accept:?}");
        assert_eq!(reply.header("content-type"), "application/json");
    }
    let event_stream_only = server
        .send(
            Method::POST,
            "/mcp",
            &[JSON_TYPE, ("accept", "text/event-stream")],
            ping.clone(),
        )
        .await;
    assert_eq!(event_stream_only.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(error_code(&event_stream_only), -32600);

    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let headers: Vec<(&str, &str)> = content_type
            .map(|c| vec![("content-type", c)])
            .unwrap_or_default();
        let reply = server
            .send(Method::POST, "/mcp", &headers, ping.clone())
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type:?}"
        );
        assert_eq!(reply.json()["jsonrpc"], "2.0");
    }
    let charset = server
        .send(
            Method::POST,
            "/mcp",
            &[("content-type", "application/json; charset=utf-8")],
            ping.clone(),
        )
        .await;
    assert_eq!(charset.status, StatusCode::OK);

    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(1024 * 1024)
    );
    let reply = server.send(Method::POST, "/mcp", &[JSON_TYPE], huge).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&reply), -32600);
    server.stop().await;
}

#[tokio::test]
async fn json_rpc_errors_and_their_statuses() {
    let server = TestServer::start().await;
    let raw = |body: &'static str| server.send(Method::POST, "/mcp", &[JSON_TYPE], body);
    let parse = raw("{not json").await;
    assert_eq!(
        (parse.status, error_code(&parse)),
        (StatusCode::BAD_REQUEST, -32700)
    );
    assert_eq!(parse.json()["id"], Value::Null);
    let batch = raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
    assert_eq!(
        (batch.status, error_code(&batch)),
        (StatusCode::BAD_REQUEST, -32600)
    );
    let version = raw(r#"{"jsonrpc":"1.0","id":"keep-me","method":"ping"}"#).await;
    assert_eq!(
        (version.status, error_code(&version)),
        (StatusCode::BAD_REQUEST, -32600)
    );
    assert_eq!(version.json()["id"], "keep-me");

    let unknown = legacy(&server, "no/such/method", json!({})).await;
    assert_eq!(
        (unknown.status, error_code(&unknown)),
        (StatusCode::OK, -32601)
    );
    assert_eq!(unknown.json()["id"], 1);
    let unknown = modern(&server, "no/such/method", json!({}), None).await;
    assert_eq!(
        (unknown.status, error_code(&unknown)),
        (StatusCode::NOT_FOUND, -32601)
    );
    assert_eq!(unknown.json()["id"], "m1");
    for removed in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
    ] {
        let reply = modern(&server, removed, json!({}), None).await;
        assert_eq!(
            (reply.status, error_code(&reply)),
            (StatusCode::NOT_FOUND, -32601),
            "{removed}"
        );
    }
    let discover_in_legacy = legacy(&server, "server/discover", json!({})).await;
    assert_eq!(error_code(&discover_in_legacy), -32601);

    let tool = legacy(
        &server,
        "tools/call",
        json!({"name": "drop_tables", "arguments": {}}),
    )
    .await;
    assert_eq!((tool.status, error_code(&tool)), (StatusCode::OK, -32602));
    let tool = modern(
        &server,
        "tools/call",
        json!({"name": "drop_tables", "arguments": {}}),
        Some("drop_tables"),
    )
    .await;
    assert_eq!(
        (tool.status, error_code(&tool)),
        (StatusCode::BAD_REQUEST, -32602)
    );
    let resource = legacy(&server, "resources/read", json!({"uri": "company://nope"})).await;
    assert_eq!(error_code(&resource), -32602);
    assert_eq!(resource.json()["error"]["data"]["uri"], "company://nope");
    for method in [
        "tools/list",
        "resources/list",
        "prompts/list",
        "resources/templates/list",
    ] {
        let reply = legacy(&server, method, json!({"cursor": "bogus"})).await;
        assert_eq!(error_code(&reply), -32602, "{method}");
    }
    // resources/list pages are made when asked: a well-formed cursor past the last page
    // ("resources:1" on a one-page list), or one whose number overflows, makes nothing.
    let first = legacy(&server, "resources/list", json!({})).await.json();
    assert!(first["result"].get("nextCursor").is_none(), "{first}");
    for cursor in [
        "cmVzb3VyY2VzOjE=",
        "cmVzb3VyY2VzOjE4NDQ2NzQ0MDczNzA5NTUxNjE2",
    ] {
        let reply = legacy(&server, "resources/list", json!({"cursor": cursor})).await;
        assert_eq!(error_code(&reply), -32602, "{cursor}");
    }
    let prompt = legacy(&server, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(error_code(&prompt), -32602);
    server.stop().await;
}

#[tokio::test]
async fn modern_envelope_is_checked_against_the_headers() {
    let server = TestServer::start().await;
    let discover = modern(&server, "server/discover", json!({}), None).await;
    assert_eq!(discover.status, StatusCode::OK, "{}", discover.text());
    let result = &discover.json()["result"];
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "dossier"
    );
    assert!(result["capabilities"].get("logging").is_none());

    let body = |meta: Value| json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": meta}});
    type Case<'a> = (Vec<(&'a str, &'a str)>, Value, StatusCode, i64);
    let cases: Vec<Case> = vec![
        (
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/list"),
            ],
            json!({}),
            StatusCode::BAD_REQUEST,
            -32602,
        ),
        (
            vec![("mcp-method", "tools/list")],
            modern_meta(),
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/call"),
            ],
            modern_meta(),
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            vec![("mcp-protocol-version", MODERN)],
            modern_meta(),
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            vec![
                ("mcp-protocol-version", "2025-06-18"),
                ("mcp-method", "tools/list"),
            ],
            modern_meta(),
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            vec![
                ("mcp-protocol-version", "2099-01-01"),
                ("mcp-method", "tools/list"),
            ],
            json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}),
            StatusCode::BAD_REQUEST,
            -32022,
        ),
        (
            vec![
                ("mcp-protocol-version", MODERN),
                ("mcp-method", "tools/list"),
            ],
            json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}),
            StatusCode::BAD_REQUEST,
            -32020,
        ),
    ];
    for (headers, meta, status, code) in cases {
        let reply = post(&server, &headers, body(meta.clone())).await;
        assert_eq!(
            (reply.status, error_code(&reply)),
            (status, code),
            "{headers:?} {meta}"
        );
        assert_eq!(reply.json()["id"], 5);
    }
    let unsupported = post(
        &server,
        &[("mcp-protocol-version", "1999-01-01")],
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert_eq!(
        (unsupported.status, error_code(&unsupported)),
        (StatusCode::BAD_REQUEST, -32022)
    );
    assert_eq!(
        unsupported.json()["error"]["data"]["requested"],
        "1999-01-01"
    );

    // Mcp-Name must match, may be base64-wrapped, and header names are case-insensitive.
    let call = json!({"name": "list_divisions", "arguments": {}});
    let missing = modern(&server, "tools/call", call.clone(), None).await;
    assert_eq!(error_code(&missing), -32020);
    let wrong = modern(&server, "tools/call", call.clone(), Some("get_company")).await;
    assert_eq!(error_code(&wrong), -32020);
    let encoded = modern(
        &server,
        "tools/call",
        call.clone(),
        Some("=?base64?bGlzdF9kaXZpc2lvbnM=?="),
    )
    .await;
    assert_eq!(encoded.status, StatusCode::OK, "{}", encoded.text());
    let result = &encoded.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["isError"], false);
    let mut params = call.clone();
    params["_meta"] = modern_meta();
    let shouting = post(
        &server,
        &[
            ("MCP-PROTOCOL-VERSION", MODERN),
            ("MCP-METHOD", " tools/call "),
            ("MCP-NAME", "list_divisions"),
        ],
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}),
    )
    .await;
    assert_eq!(shouting.status, StatusCode::OK, "{}", shouting.text());
    let read = modern(
        &server,
        "resources/read",
        json!({"uri": "company://company"}),
        Some("company://company"),
    )
    .await;
    assert_eq!(read.json()["result"]["cacheScope"], "public");
    server.stop().await;
}

#[tokio::test]
async fn origins_preflight_and_bearer_tokens() {
    let server = TestServer::start().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let foreign = post(
        &server,
        &[("origin", "https://evil.example.com")],
        ping.clone(),
    )
    .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    assert_eq!(foreign.json()["jsonrpc"], "2.0");
    let rebinding = post(&server, &[("host", "evil.example.com")], ping.clone()).await;
    assert_eq!(rebinding.status, StatusCode::FORBIDDEN);
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1:3000",
        server.base.as_str(),
    ] {
        let reply = post(&server, &[("origin", origin)], ping.clone()).await;
        assert_eq!(reply.status, StatusCode::OK, "{origin}");
    }
    let preflight = server
        .send(
            Method::OPTIONS,
            "/mcp",
            &[
                ("origin", "http://localhost:6274"),
                ("access-control-request-method", "POST"),
                ("authorization", "Bearer junk"),
            ],
            "",
        )
        .await;
    assert_eq!(preflight.status, StatusCode::NO_CONTENT);
    let allowed = preflight.header("access-control-allow-headers");
    for header in [
        "Authorization",
        "Content-Type",
        "MCP-Protocol-Version",
        "Mcp-Method",
        "Mcp-Name",
    ] {
        assert!(allowed.contains(header), "{header} not allowed: {allowed}");
    }
    assert!(preflight
        .header("access-control-expose-headers")
        .contains("MCP-Protocol-Version"));
    let foreign_preflight = server
        .send(
            Method::OPTIONS,
            "/mcp",
            &[
                ("origin", "https://evil.example.com"),
                ("access-control-request-method", "POST"),
            ],
            "",
        )
        .await;
    assert_eq!(foreign_preflight.status, StatusCode::FORBIDDEN);

    let bad = post(&server, &[("authorization", "Bearer junk")], ping.clone()).await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    assert!(bad.header("www-authenticate").ends_with(&format!(
        "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        server.base
    )));
    // The 401 body is a JSON-RPC error for the request, so MCP clients can show the reason.
    let refusal = bad.json();
    assert_eq!(refusal["jsonrpc"], "2.0");
    assert_eq!(refusal["id"], ping["id"], "{refusal}");
    assert_eq!(refusal["error"]["code"], -32001);
    assert_eq!(refusal["error"]["message"], "the access token is malformed");
    assert_eq!(refusal["error"]["data"]["error"], "invalid_token");
    assert!(bad.header("content-type").starts_with("application/json"));
    // When the body is not a request, there is no id to answer with.
    let unreadable = server
        .send(
            Method::POST,
            "/mcp",
            &[JSON_TYPE, ("authorization", "Bearer junk")],
            "{nope",
        )
        .await;
    assert_eq!(unreadable.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unreadable.json()["id"], serde_json::Value::Null);
    let token = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            "grant_type=client_credentials",
        )
        .await
        .json()["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let good = post(
        &server,
        &[("authorization", &format!("Bearer {token}"))],
        ping.clone(),
    )
    .await;
    assert_eq!(good.status, StatusCode::OK);
    let query = server
        .send(
            Method::POST,
            "/mcp?access_token=abc",
            &[JSON_TYPE],
            ping.to_string(),
        )
        .await;
    assert_eq!(query.status, StatusCode::BAD_REQUEST);
    server.stop().await;
}

#[tokio::test]
async fn tools_are_deterministic_described_and_read_only() {
    let server = TestServer::start().await;
    let first = legacy(&server, "tools/list", json!({})).await;
    let second = legacy(&server, "tools/list", json!({})).await;
    assert_eq!(first.body, second.body);
    let tools = first.json()["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // The tools the contract names are all there (more may follow), each once.
    for name in [
        "get_company",
        "list_divisions",
        "get_division",
        "list_pages",
        "get_page",
        "list_contacts",
        "search_company_info",
    ] {
        assert_eq!(names.iter().filter(|n| **n == name).count(), 1, "{names:?}");
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    for tool in &tools {
        assert!(tool["title"].as_str().unwrap().len() > 5);
        assert!(tool["description"].as_str().unwrap().len() > 40);
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["inputSchema"]["additionalProperties"], false);
        assert_eq!(tool["outputSchema"]["type"], "object");
        assert_eq!(tool["annotations"]["readOnlyHint"], true);
        assert_eq!(tool["annotations"]["destructiveHint"], false);
    }
    server.stop().await;
}

#[tokio::test]
async fn tools_return_the_same_data_as_the_api() {
    let server = TestServer::start().await;
    let api = server.get("/api/company", &[]).await.json();
    let company = call_tool(&server, "get_company", json!({})).await;
    assert_eq!(company["structuredContent"], api);
    assert_eq!(
        serde_json::from_str::<Value>(company["content"][0]["text"].as_str().unwrap()).unwrap(),
        api
    );
    assert_eq!(company["isError"], false);

    let division = call_tool(
        &server,
        "get_division",
        json!({"division_id": "calibration-labs"}),
    )
    .await;
    assert_eq!(
        division["structuredContent"]["division"],
        api["divisions"][2]
    );
    assert_eq!(
        division["structuredContent"]["pages"][0]["slug"],
        "quality-and-accreditation"
    );
    let page = call_tool(&server, "get_page", json!({"slug": "careers"})).await;
    let api_page = server.get("/api/pages/careers", &[]).await.json();
    assert_eq!(page["structuredContent"]["page"], api_page["page"]);
    assert_eq!(page["structuredContent"]["url"], server.url("/careers"));
    let api_page = &api_page["page"];
    let pages = call_tool(
        &server,
        "list_pages",
        json!({"division_id": "data-platform"}),
    )
    .await;
    assert_eq!(
        pages["structuredContent"]["pages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let contacts = call_tool(&server, "list_contacts", json!({})).await;
    let contacts = contacts["structuredContent"]["contacts"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(contacts[0]["scope"], "company");
    assert_eq!(contacts[0]["contact"], api["company"]["contact"]);
    assert!(contacts
        .iter()
        .any(|c| c["scope"] == "page" && c["id"] == "press"));

    let search = call_tool(
        &server,
        "search_company_info",
        json!({"query": "calibration certificate", "limit": 3}),
    )
    .await;
    let results = search["structuredContent"]["results"].as_array().unwrap();
    assert!(results.len() <= 3 && !results.is_empty());
    assert_eq!(results[0]["id"], "quality-and-accreditation");
    assert_eq!(
        results[0]["uri"],
        "company://pages/quality-and-accreditation"
    );
    assert_eq!(results[0]["url"], server.url("/quality-and-accreditation"));
    // The HTTP search answers from the same index, in the same order.
    let http = server
        .get("/api/search?q=calibration%20certificate&limit=3", &[])
        .await
        .json();
    assert_eq!(http["results"], search["structuredContent"]["results"]);

    // Lists continue with nextCursor, visiting every item once.
    let mut slugs = Vec::new();
    let mut arguments = json!({"limit": 2});
    loop {
        let listed = call_tool(&server, "list_pages", arguments.clone()).await;
        let content = &listed["structuredContent"];
        slugs.extend(
            content["pages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["slug"].as_str().unwrap().to_string()),
        );
        match content["nextCursor"].as_str() {
            Some(cursor) => arguments = json!({"limit": 2, "cursor": cursor}),
            None => break,
        }
    }
    assert_eq!(slugs.len(), api["pages"].as_array().unwrap().len());
    let stale = call_tool(&server, "list_pages", json!({"cursor": "bm9wZQ"})).await;
    assert_eq!(stale["isError"], true);

    let read = legacy(
        &server,
        "resources/read",
        json!({"uri": "company://pages/careers"}),
    )
    .await;
    let contents = &read.json()["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/markdown");
    assert_eq!(contents["text"], api_page["body_markdown"]);
    server.stop().await;
}

#[tokio::test]
async fn bad_tool_arguments_are_tool_errors_the_model_can_fix() {
    let server = TestServer::start().await;
    let cases = [
        (
            "get_division",
            json!({"division_id": "sales"}),
            "field-sensors",
        ),
        (
            "get_division",
            json!({}),
            "missing required argument `division_id`",
        ),
        (
            "get_division",
            json!({"division_id": 7}),
            "must be a string",
        ),
        ("get_page", json!({"slug": "nope"}), "careers"),
        (
            "list_pages",
            json!({"division_id": "nope"}),
            "valid division ids",
        ),
        (
            "get_company",
            json!({"verbose": true}),
            "takes no arguments",
        ),
        (
            "search_company_info",
            json!({"query": "x", "limit": 500}),
            "from 1 to 20",
        ),
        (
            "search_company_info",
            json!({"query": ""}),
            "must not be empty",
        ),
        (
            "search_company_info",
            json!({"query": "a".repeat(201)}),
            "longer than 200",
        ),
    ];
    for (tool, arguments, hint) in cases {
        let result = call_tool(&server, tool, arguments.clone()).await;
        assert_eq!(result["isError"], true, "{tool} {arguments}");
        assert!(result.get("structuredContent").is_none());
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(hint), "{tool} {arguments}: {text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn resources_prompts_and_completion() {
    let server = TestServer::start().await;
    let list = legacy(&server, "resources/list", json!({})).await.json();
    let resources = list["result"]["resources"].as_array().unwrap().clone();
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        &uris[..3],
        [
            "company://company",
            "company://divisions",
            "company://contacts"
        ]
    );
    assert!(uris.contains(&"company://divisions/field-sensors"));
    assert!(uris.contains(&"company://pages/about"));
    assert!(list["result"].get("nextCursor").is_none());
    for resource in &resources {
        let read = legacy(&server, "resources/read", json!({"uri": resource["uri"]}))
            .await
            .json();
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["mimeType"], resource["mimeType"]);
        assert!(!contents["text"].as_str().unwrap().is_empty());
        if let Some(size) = resource["size"].as_u64() {
            assert_eq!(contents["text"].as_str().unwrap().len() as u64, size);
        }
    }
    let templates = legacy(&server, "resources/templates/list", json!({}))
        .await
        .json();
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "company://divisions/{division_id}"
    );

    let prompts = legacy(&server, "prompts/list", json!({})).await.json();
    assert_eq!(prompts["result"]["prompts"][0]["name"], "company_briefing");
    let briefing = legacy(
        &server,
        "prompts/get",
        json!({"name": "company_briefing", "arguments": {"division": "public-sector"}}),
    )
    .await
    .json();
    let text = briefing["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("Public Sector & Utilities")
            && text.contains("publicsector@cobaltridge.example")
    );
    let bad = legacy(
        &server,
        "prompts/get",
        json!({"name": "company_briefing", "arguments": {"division": "nope"}}),
    )
    .await;
    assert_eq!(error_code(&bad), -32602);

    let complete = |reference: Value, name: &str, value: &str| {
        let params = json!({"ref": reference, "argument": {"name": name, "value": value}});
        let server = &server;
        async move { legacy(server, "completion/complete", params).await }
    };
    let reply = complete(
        json!({"type": "ref/prompt", "name": "company_briefing"}),
        "division",
        "c",
    )
    .await
    .json();
    assert_eq!(
        reply["result"]["completion"]["values"],
        json!(["calibration-labs", "customer-care"])
    );
    let reply = complete(
        json!({"type": "ref/resource", "uri": "company://pages/{slug}"}),
        "slug",
        "ca",
    )
    .await
    .json();
    assert_eq!(reply["result"]["completion"]["values"], json!(["careers"]));
    let reply = complete(
        json!({"type": "ref/prompt", "name": "other"}),
        "division",
        "",
    )
    .await;
    assert_eq!(error_code(&reply), -32602);
    server.stop().await;
}
