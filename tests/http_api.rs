//! The public read API and discovery documents, over a real socket.

use crate::common;

use std::io::Read;
use std::time::Duration;

use common::TestServer;
use hyper::{Method, StatusCode};
use serde_json::Value;

fn assert_cors(reply: &common::Reply) {
    assert_eq!(reply.header("access-control-allow-origin"), "*");
    let exposed = reply.header("access-control-expose-headers");
    for name in ["ETag", "WWW-Authenticate"] {
        assert!(exposed.contains(name), "{name} not exposed: {exposed}");
    }
    assert!(reply
        .headers
        .get("access-control-allow-credentials")
        .is_none());
}

fn assert_strong_etag(value: &str) {
    assert!(
        value.starts_with('"') && value.ends_with('"') && value.len() > 10,
        "not a strong ETag: {value}"
    );
}

/// Every array anywhere in `value` has at least one element.
fn assert_no_empty_arrays(value: &Value, at: &str) {
    match value {
        Value::Array(items) => {
            let required_empty = at.ends_with(".response_types_supported");
            assert!(!items.is_empty() || required_empty, "empty array at {at}");
            for (i, item) in items.iter().enumerate() {
                assert_no_empty_arrays(item, &format!("{at}[{i}]"));
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                assert_no_empty_arrays(item, &format!("{at}.{key}"));
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn company_document_has_company_divisions_pages_and_contacts() {
    let server = TestServer::start().await;
    let reply = server.get("/api/company", &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), "application/json");
    assert_strong_etag(reply.header("etag"));
    assert_eq!(reply.header("cache-control"), "public, max-age=60");
    assert_eq!(reply.header("vary"), "Accept-Encoding");
    assert_eq!(reply.header("x-content-type-options"), "nosniff");
    assert_cors(&reply);
    assert_eq!(
        reply.header("content-length").parse::<usize>().unwrap(),
        reply.body.len()
    );

    let body = reply.json();
    let company = &body["company"];
    assert_eq!(company["name"], "Cobalt Ridge Instruments");
    assert!(company["description"].as_str().unwrap().len() > 50);
    for field in ["email", "phone", "address", "web"] {
        assert!(
            !company["contact"][field].is_null(),
            "company contact lacks {field}"
        );
    }
    let divisions = body["divisions"].as_array().unwrap();
    assert!(divisions.len() >= 4);
    assert_eq!(divisions[0]["id"], "field-sensors");
    assert!(divisions.iter().all(|d| d["contact"]["email"].is_string()));
    let pages = body["pages"].as_array().unwrap();
    assert!(pages.len() >= 6);
    let slugs: Vec<&str> = pages.iter().map(|p| p["slug"].as_str().unwrap()).collect();
    assert!(slugs.contains(&"about") && slugs.contains(&"ridgeline-security"));
    let security = pages
        .iter()
        .find(|p| p["slug"] == "ridgeline-security")
        .unwrap();
    assert_eq!(security["division"], "data-platform");
    // Listed, not copied: the text is one request away, at a URL the listing names.
    assert!(security.get("body_markdown").is_none());
    assert_eq!(security["url"], server.url("/ridgeline-security"));
    assert!(
        body.get("next_cursor").is_none(),
        "the sample fits in one answer"
    );
    let page = server.get("/api/pages/ridgeline-security", &[]).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.header("etag").starts_with('"'));
    let page = page.json();
    assert_eq!(
        page["page"]["contact"]["email"],
        "security@cobaltridge.example"
    );
    assert!(page["page"]["body_markdown"]
        .as_str()
        .unwrap()
        .starts_with("# Ridgeline security"));
    assert_eq!(page["url"], server.url("/ridgeline-security"));
    assert_eq!(page["division_url"], server.url("/divisions/data-platform"));
    let division = server.get("/api/divisions/data-platform", &[]).await.json();
    assert_eq!(division["division"]["id"], "data-platform");
    assert!(division["pages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["slug"] == "ridgeline-security"));
    for unknown in ["/api/pages/no-such-page", "/api/divisions/no-such-division"] {
        let reply = server.get(unknown, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{unknown}");
        assert_eq!(reply.json()["error"], "not_found");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_page_list_paginates_with_a_next_link() {
    let server = TestServer::start().await;
    let total = server.get("/api/company", &[]).await.json()["pages"]
        .as_array()
        .unwrap()
        .len();
    let mut path = "/api/company?limit=4".to_string();
    let mut seen = Vec::new();
    loop {
        let reply = server.get(&path, &[]).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
        let body = reply.json();
        seen.extend(
            body["pages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["slug"].as_str().unwrap().to_string()),
        );
        let Some(cursor) = body["next_cursor"].as_str() else {
            assert!(reply.headers.get("link").is_none());
            break;
        };
        let link = reply.header("link");
        let next = server.url(&format!("/api/company?cursor={cursor}"));
        assert_eq!(link, format!("<{next}>; rel=\"next\""));
        path = format!("/api/company?limit=4&cursor={cursor}");
    }
    assert_eq!(seen.len(), total);
    let bad = server.get("/api/company?limit=0", &[]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.json()["error"], "invalid_request");

    // Search, ranked, with the URL to cite.
    let found = server.get("/api/search?q=careers", &[]).await;
    assert_eq!(found.status, StatusCode::OK);
    let found = found.json();
    assert_eq!(found["results"][0]["id"], "careers");
    assert_eq!(found["results"][0]["url"], server.url("/careers"));
    assert_eq!(
        server.get("/api/search", &[]).await.status,
        StatusCode::BAD_REQUEST
    );
    let post = server.send(Method::POST, "/api/search?q=x", &[], "").await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
    server.stop().await;
}

#[tokio::test]
async fn conditional_requests_get_304_without_a_body() {
    let server = TestServer::start().await;
    let first = server.get("/api/company", &[]).await;
    let etag = first.header("etag").to_string();

    let again = server
        .get("/api/company", &[("if-none-match", &etag)])
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), etag);
    assert_eq!(again.header("cache-control"), "public, max-age=60");
    assert_eq!(again.header("vary"), "Accept-Encoding");
    assert_cors(&again);

    let weak = format!("W/{etag}");
    let listed = format!("\"nope\", {etag}");
    for header in [weak.as_str(), listed.as_str(), "*"] {
        let reply = server
            .get("/api/company", &[("if-none-match", header)])
            .await;
        assert_eq!(
            reply.status,
            StatusCode::NOT_MODIFIED,
            "If-None-Match: {header}"
        );
    }
    for header in ["\"other\"", "garbage", ""] {
        let reply = server
            .get("/api/company", &[("if-none-match", header)])
            .await;
        assert_eq!(reply.status, StatusCode::OK, "If-None-Match: {header}");
        assert_eq!(reply.body, first.body);
    }

    // The ETag of one encoding does not validate another.
    let gzip = server
        .get("/api/company", &[("accept-encoding", "gzip")])
        .await;
    let identity_tag_on_gzip = server
        .get(
            "/api/company",
            &[("accept-encoding", "gzip"), ("if-none-match", &etag)],
        )
        .await;
    assert_eq!(identity_tag_on_gzip.status, StatusCode::OK);
    let gzip_tag = gzip.header("etag");
    let revalidated = server
        .get(
            "/api/company",
            &[("accept-encoding", "gzip"), ("if-none-match", gzip_tag)],
        )
        .await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
    server.stop().await;
}

#[tokio::test]
async fn compressed_variants_are_negotiated_and_decode_to_the_same_bytes() {
    let server = TestServer::start().await;
    let identity = server
        .get("/api/company", &[("accept-encoding", "identity")])
        .await;
    assert!(identity.headers.get("content-encoding").is_none());

    let br = server
        .get("/api/company", &[("accept-encoding", "gzip, deflate, br")])
        .await;
    assert_eq!(br.header("content-encoding"), "br");
    assert_eq!(br.header("vary"), "Accept-Encoding");
    let mut decoded = Vec::new();
    brotli::Decompressor::new(&br.body[..], 4096)
        .read_to_end(&mut decoded)
        .unwrap();
    assert_eq!(decoded, identity.body);
    assert!(br.body.len() < identity.body.len());

    let gzip = server
        .get("/api/company", &[("accept-encoding", "gzip")])
        .await;
    assert_eq!(gzip.header("content-encoding"), "gzip");
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(&gzip.body[..])
        .read_to_end(&mut decoded)
        .unwrap();
    assert_eq!(decoded, identity.body);

    let tags = [
        identity.header("etag"),
        br.header("etag"),
        gzip.header("etag"),
    ];
    assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2]);

    let refused = server
        .get("/api/company", &[("accept-encoding", "br;q=0, gzip;q=0")])
        .await;
    assert!(refused.headers.get("content-encoding").is_none());
    assert_eq!(refused.body, identity.body);
    server.stop().await;
}

#[tokio::test]
async fn head_has_the_get_headers_and_no_body() {
    let server = TestServer::start().await;
    for path in [
        "/",
        "/api/company",
        "/api/health",
        "/openapi.json",
        "/.well-known/api-catalog",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/jwks.json",
        "/auth.md",
    ] {
        let get = server.get(path, &[("accept-encoding", "br")]).await;
        let head = server
            .send(Method::HEAD, path, &[("accept-encoding", "br")], "")
            .await;
        assert_eq!(head.status, StatusCode::OK, "{path}");
        assert!(head.body.is_empty(), "{path}");
        for name in [
            "content-type",
            "etag",
            "cache-control",
            "content-length",
            "vary",
        ] {
            assert_eq!(
                head.headers.get(name),
                get.headers.get(name),
                "{path} {name}"
            );
        }
        assert_eq!(
            head.header("content-length").parse::<usize>().unwrap(),
            get.body.len()
        );
        assert_eq!(head.headers.get("link"), get.headers.get("link"), "{path}");
    }
    server.stop().await;
}

#[tokio::test]
async fn preflight_is_answered_before_auth() {
    let server = TestServer::start().await;
    let reply = server
        .send(
            Method::OPTIONS,
            "/api/company",
            &[
                ("origin", "https://agent.example"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "authorization"),
                ("authorization", "Bearer not-a-token"),
            ],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    assert_eq!(reply.header("access-control-allow-origin"), "*");
    assert!(reply.header("access-control-allow-methods").contains("GET"));
    assert!(reply
        .header("access-control-allow-headers")
        .contains("Authorization"));
    assert!(
        reply
            .header("access-control-max-age")
            .parse::<u32>()
            .unwrap()
            > 0
    );

    let token_endpoint = server
        .send(
            Method::OPTIONS,
            "/oauth2/token",
            &[
                ("origin", "https://agent.example"),
                ("access-control-request-method", "POST"),
            ],
            "",
        )
        .await;
    assert_eq!(token_endpoint.status, StatusCode::NO_CONTENT);
    assert!(token_endpoint
        .header("access-control-allow-methods")
        .contains("POST"));
    server.stop().await;
}

#[tokio::test]
async fn unknown_paths_get_json_404_and_wrong_methods_get_405_with_allow() {
    let server = TestServer::start().await;
    for path in [
        "/nope",
        "/api/company/",
        "/api",
        "/../../etc/passwd",
        "/api/company%00",
        "/build/manifest.json",
        "/api/company.gz",
    ] {
        let reply = server.get(path, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(reply.header("content-type"), "application/json");
        assert_eq!(reply.json()["error"], "not_found");
        assert!(reply.json()["error_description"].is_string());
        assert_cors(&reply);
    }
    for (method, path, allow) in [
        (Method::POST, "/api/company", "GET, HEAD, OPTIONS"),
        (Method::DELETE, "/openapi.json", "GET, HEAD, OPTIONS"),
        (Method::PUT, "/.well-known/jwks.json", "GET, HEAD, OPTIONS"),
        (Method::POST, "/api/health", "GET, HEAD, OPTIONS"),
        (Method::GET, "/agent/identity/claim", "POST, OPTIONS"),
        (Method::GET, "/oauth2/token", "POST, OPTIONS"),
        (Method::PATCH, "/", "GET, HEAD, OPTIONS"),
    ] {
        let reply = server.send(method.clone(), path, &[], "").await;
        assert_eq!(
            reply.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(reply.header("allow"), allow, "{method} {path}");
        assert_eq!(reply.json()["error"], "method_not_allowed");
    }
    server.stop().await;
}

#[tokio::test]
async fn bearer_tokens_are_optional_but_checked_when_present() {
    let server = TestServer::start().await;
    let anonymous = server.get("/api/company", &[]).await;
    let base = &server.base;
    let challenge_prefix = "Bearer error=\"invalid_token\", error_description=\"";
    let metadata = format!("resource_metadata=\"{base}/.well-known/oauth-protected-resource\"");
    for header in [
        "Bearer not-a-token",
        "bearer v4.local.AAAA",
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer a b",
    ] {
        let reply = server
            .get("/api/company", &[("authorization", header)])
            .await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{header}");
        let challenge = reply.header("www-authenticate");
        assert!(challenge.starts_with(challenge_prefix), "{challenge}");
        assert!(challenge.ends_with(&metadata), "{challenge}");
        assert_eq!(challenge.matches("resource_metadata=").count(), 1);
        assert_eq!(reply.json()["error"], "invalid_token");
        assert_eq!(reply.header("cache-control"), "no-store");
        assert_cors(&reply);
    }

    // A token minted with this server's key, for this server's audience, is accepted.
    let app = &server.app;
    let now = dossier::clock::Clock::now(app.clock().as_ref());
    let claims = dossier::auth::access::claims(
        app.config().base_url.as_str(),
        &app.config().base_url.join("/"),
        "anon_test",
        "company:read",
        app.config().auth.access_token_lifetime,
        now,
        None,
    )
    .unwrap();
    let token = dossier::auth::access::mint(&app.auth().keys().keyring().current().access, &claims)
        .unwrap();
    let authorized = server
        .get(
            "/api/company",
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(authorized.status, StatusCode::OK);
    assert_eq!(authorized.body, anonymous.body);
    assert_eq!(authorized.header("etag"), anonymous.header("etag"));
    let scheme_case = server
        .get(
            "/api/company",
            &[("authorization", &format!("BEARER {token}"))],
        )
        .await;
    assert_eq!(scheme_case.status, StatusCode::OK);

    // The same token after it expires (the clock moves; nothing sleeps).
    server
        .clock
        .advance(app.config().auth.access_token_lifetime + Duration::from_secs(61));
    let expired = server
        .get(
            "/api/company",
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(expired.status, StatusCode::UNAUTHORIZED);
    assert!(expired.header("www-authenticate").contains("expired"));

    let in_query = server.get("/api/company?access_token=abc", &[]).await;
    assert_eq!(in_query.status, StatusCode::BAD_REQUEST);
    assert_eq!(in_query.json()["error"], "invalid_request");

    // Discovery documents never answer 401.
    let metadata = server
        .get(
            "/.well-known/oauth-protected-resource",
            &[("authorization", "Bearer junk")],
        )
        .await;
    assert_eq!(metadata.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn health_reports_version_and_revision() {
    let server = TestServer::start().await;
    let reply = server.get("/api/health", &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("cache-control"), "no-cache");
    let body = reply.json();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(body["content"]["status"], "ok");
    assert_eq!(body["content"]["source"], "content");
    assert_eq!(
        body["content"]["revision"],
        server.app.live().artifacts.revision()
    );
    assert!(humantime::parse_rfc3339(body["started_at"].as_str().unwrap()).is_ok());
    let conditional = server
        .get("/api/health", &[("if-none-match", reply.header("etag"))])
        .await;
    assert_eq!(conditional.status, StatusCode::NOT_MODIFIED);
    server.stop().await;
}

#[tokio::test]
async fn protected_resource_metadata_documents() {
    let server = TestServer::start().await;
    let base = &server.base;
    let root = server
        .get("/.well-known/oauth-protected-resource", &[])
        .await;
    assert_eq!(root.header("content-type"), "application/json");
    assert_eq!(root.header("cache-control"), "public, max-age=60");
    let root = root.json();
    assert_eq!(root["resource"], format!("{base}/"));
    assert_eq!(root["authorization_servers"], serde_json::json!([base]));
    assert!(root["scopes_supported"]
        .as_array()
        .unwrap()
        .contains(&"company:read".into()));
    assert_eq!(
        root["bearer_methods_supported"],
        serde_json::json!(["header"])
    );
    assert!(root["resource_name"]
        .as_str()
        .unwrap()
        .contains("Cobalt Ridge"));
    assert_eq!(root["resource_documentation"], format!("{base}/auth.md"));
    assert_no_empty_arrays(&root, "prm");

    let mcp = server
        .get("/.well-known/oauth-protected-resource/mcp", &[])
        .await
        .json();
    assert_eq!(mcp["resource"], format!("{base}/mcp"));
    assert_eq!(mcp["authorization_servers"], serde_json::json!([base]));
    assert_no_empty_arrays(&mcp, "prm-mcp");
    server.stop().await;
}

#[tokio::test]
async fn authorization_server_metadata_and_agent_auth() {
    let server = TestServer::start().await;
    let base = server.base.clone();
    let reply = server
        .get("/.well-known/oauth-authorization-server", &[])
        .await;
    assert_eq!(reply.header("content-type"), "application/json");
    let metadata = reply.json();
    assert_no_empty_arrays(&metadata, "as");
    let prm = server
        .get("/.well-known/oauth-protected-resource", &[])
        .await
        .json();
    assert_eq!(metadata["issuer"], prm["authorization_servers"][0]);
    assert_eq!(metadata["issuer"], base.as_str());
    assert_eq!(metadata["token_endpoint"], format!("{base}/oauth2/token"));
    assert_eq!(
        metadata["revocation_endpoint"],
        format!("{base}/oauth2/revoke")
    );
    assert_eq!(
        metadata["jwks_uri"],
        format!("{base}/.well-known/jwks.json")
    );
    assert_eq!(
        metadata["grant_types_supported"],
        serde_json::json!([
            "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "client_credentials"
        ])
    );
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        serde_json::json!(["none"])
    );
    assert_eq!(
        metadata["revocation_endpoint_auth_methods_supported"],
        serde_json::json!(["none"])
    );
    assert!(metadata["scopes_supported"]
        .as_array()
        .unwrap()
        .contains(&"company:read".into()));
    // RFC 8414 §2: REQUIRED. Empty, because no response type is supported; the TypeScript
    // MCP SDK and authlib refuse metadata without it.
    assert_eq!(metadata["response_types_supported"], serde_json::json!([]));

    let agent_auth = &metadata["agent_auth"];
    assert_eq!(agent_auth["skill"], format!("{base}/auth.md"));
    assert_eq!(agent_auth["register_uri"], format!("{base}/agent/identity"));
    assert_eq!(
        agent_auth["identity_endpoint"],
        format!("{base}/agent/identity")
    );
    assert_eq!(
        agent_auth["claim_uri"],
        format!("{base}/agent/identity/claim")
    );
    assert_eq!(
        agent_auth["claim_endpoint"],
        format!("{base}/agent/identity/claim")
    );
    assert_eq!(
        agent_auth["revocation_uri"],
        format!("{base}/oauth2/revoke")
    );
    assert_eq!(
        agent_auth["identity_types_supported"],
        serde_json::json!(["anonymous"])
    );
    assert_eq!(
        agent_auth["anonymous"],
        serde_json::json!({"credential_types_supported": ["access_token"]})
    );

    // Every advertised URL answers: no 404 anywhere.
    let mut urls = Vec::new();
    collect_urls(&metadata, &mut urls);
    assert!(urls.len() >= 10);
    for url in urls {
        let path = url
            .strip_prefix(&base)
            .unwrap_or_else(|| panic!("{url} is not under {base}"));
        let get = server.get(path, &[]).await;
        let post = server.send(Method::POST, path, &[], "").await;
        assert!(
            get.status != StatusCode::NOT_FOUND && post.status != StatusCode::NOT_FOUND,
            "{url} does not answer"
        );
    }
    server.stop().await;
}

fn collect_urls(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(text) if text.starts_with("http") => into.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_urls(v, into)),
        Value::Object(map) => map.values().for_each(|v| collect_urls(v, into)),
        _ => {}
    }
}

#[tokio::test]
async fn jwks_publishes_the_identity_key() {
    let server = TestServer::start().await;
    let jwks = server.get("/.well-known/jwks.json", &[]).await.json();
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    let key = &keys[0];
    assert_eq!(key["kty"], "EC");
    assert_eq!(key["crv"], "P-256");
    assert_eq!(key["alg"], "ES256");
    assert_eq!(key["use"], "sig");
    assert_eq!(
        key["kid"],
        server.app.auth().keys().keyring().current().identity.kid()
    );
    use base64::Engine;
    for coordinate in ["x", "y"] {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(key[coordinate].as_str().unwrap())
            .unwrap();
        assert_eq!(bytes.len(), 32);
    }
    assert!(key.get("d").is_none(), "private key material published");
    server.stop().await;
}

#[tokio::test]
async fn api_catalog_is_an_rfc9727_linkset() {
    let server = TestServer::start().await;
    let base = &server.base;
    let reply = server.get("/.well-known/api-catalog", &[]).await;
    assert_eq!(
        reply.header("content-type"),
        "application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\""
    );
    let link = format!("<{base}/.well-known/api-catalog>; rel=\"api-catalog\"");
    assert_eq!(reply.header("link"), link);
    let head = server
        .send(Method::HEAD, "/.well-known/api-catalog", &[], "")
        .await;
    assert_eq!(head.header("link"), link);

    let catalog = reply.json();
    let object = catalog.as_object().unwrap();
    assert_eq!(object.keys().collect::<Vec<_>>(), ["linkset"]);
    let context = &catalog["linkset"][0];
    assert!(context["anchor"]
        .as_str()
        .unwrap()
        .starts_with(base.as_str()));
    let href = |relation: &str| context[relation][0]["href"].as_str().unwrap().to_string();
    assert_eq!(href("service-desc"), format!("{base}/openapi.json"));
    assert_eq!(href("status"), format!("{base}/api/health"));
    assert_eq!(
        href("service-meta"),
        format!("{base}/.well-known/oauth-protected-resource")
    );
    // Each target answers with the type the catalog claims.
    for (relation, targets) in context.as_object().unwrap() {
        if relation == "anchor" {
            continue;
        }
        for target in targets.as_array().unwrap() {
            let url = target["href"].as_str().unwrap();
            let answer = server
                .get(url.strip_prefix(base.as_str()).unwrap(), &[])
                .await;
            assert_eq!(answer.status, StatusCode::OK, "{url}");
            let claimed = target["type"].as_str().unwrap();
            assert!(answer.header("content-type").starts_with(claimed), "{url}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn openapi_describes_every_public_path() {
    let server = TestServer::start().await;
    let reply = server.get("/openapi.json", &[]).await;
    assert_eq!(reply.header("content-type"), "application/json");
    let document = reply.json();
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."));
    assert_eq!(document["servers"][0]["url"], server.base.as_str());
    for path in [
        "/",
        "/api/company",
        "/api/health",
        "/openapi.json",
        "/.well-known/api-catalog",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/jwks.json",
        "/auth.md",
    ] {
        assert!(
            document["paths"][path]["get"].is_object(),
            "{path} undocumented"
        );
        assert!(
            document["paths"][path]["head"].is_object(),
            "{path} HEAD undocumented"
        );
    }
    for path in [
        "/agent/identity",
        "/agent/identity/claim",
        "/oauth2/token",
        "/oauth2/revoke",
        "/oauth2/authorize",
    ] {
        assert!(document["paths"][path].is_object(), "{path} undocumented");
    }
    assert_eq!(
        document["components"]["securitySchemes"]["agentAuth"]["flows"]["clientCredentials"]
            ["tokenUrl"],
        format!("{}/oauth2/token", server.base)
    );
    server.stop().await;
}

#[tokio::test]
async fn auth_md_is_markdown_for_agents() {
    let server = TestServer::start().await;
    let reply = server.get("/auth.md", &[]).await;
    assert_eq!(reply.header("content-type"), "text/markdown; charset=utf-8");
    let text = reply.text();
    let h1 = text.lines().next().unwrap();
    assert!(h1.starts_with("# ") && h1.contains("auth.md"), "{h1}");
    for needle in [
        "regist",
        "claim_not_supported",
        "client_credentials",
        "invalid_grant",
        "invalid_client",
        "invalid_token",
        "rate_limit_exceeded",
        "3600 seconds",
        "900 seconds",
        "company:read",
    ] {
        assert!(text.contains(needle), "auth.md lacks {needle}");
    }
    assert!(text.contains(&format!(
        "{}/.well-known/oauth-protected-resource",
        server.base
    )));
    server.stop().await;
}

#[tokio::test]
async fn index_links_to_the_catalog_the_openapi_description_and_the_docs() {
    let server = TestServer::start().await;
    let base = &server.base;
    for method in [Method::GET, Method::HEAD] {
        let reply = server.send(method, "/", &[], "").await;
        assert_eq!(reply.status, StatusCode::OK);
        let link = reply.header("link");
        assert!(
            link.contains(&format!(
                "<{base}/.well-known/api-catalog>; rel=\"api-catalog\""
            )),
            "{link}"
        );
        assert!(
            link.contains(&format!("<{base}/openapi.json>; rel=\"service-desc\"")),
            "{link}"
        );
        assert!(
            link.contains(&format!(
                "<{base}/docs>; rel=\"service-doc\"; type=\"text/html\""
            )),
            "{link}"
        );
    }
    let index = server.get("/", &[]).await;
    assert_eq!(index.header("content-type"), "text/html; charset=utf-8");
    assert!(index.text().contains("<h1>Cobalt Ridge Instruments</h1>"));
    server.stop().await;
}

#[tokio::test]
async fn authorization_endpoint_explains_there_is_no_login() {
    let server = TestServer::start().await;
    let browser = server
        .get(
            "/oauth2/authorize?response_type=code&client_id=x",
            &[("accept", "text/html,application/xhtml+xml")],
        )
        .await;
    assert_eq!(browser.status, StatusCode::BAD_REQUEST);
    assert_eq!(browser.header("content-type"), "text/html; charset=utf-8");
    assert!(browser
        .text()
        .contains(&format!("href=\"{}/auth.md\"", server.base)));

    let program = server
        .get("/oauth2/authorize", &[("accept", "application/json")])
        .await;
    assert_eq!(program.status, StatusCode::BAD_REQUEST);
    assert_eq!(program.json()["error"], "unsupported_response_type");
    assert!(program.json()["error_description"]
        .as_str()
        .unwrap()
        .contains("/auth.md"));
    assert_eq!(program.header("cache-control"), "no-store");
    server.stop().await;
}

#[tokio::test]
async fn claim_is_never_supported() {
    let server = TestServer::start().await;
    for body in ["", "{\"claim_token\": \"x\"}", "not json at all"] {
        let reply = server
            .send(
                Method::POST,
                "/agent/identity/claim",
                &[("content-type", "application/json")],
                body.to_string(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(reply.json()["error"], "claim_not_supported");
        assert_eq!(reply.header("cache-control"), "no-store");
        assert_cors(&reply);
    }
    server.stop().await;
}

#[tokio::test]
async fn hostile_requests_are_refused_cleanly() {
    let server = TestServer::start().await;
    let huge = "x".repeat(100 * 1024);
    let reply = server.get("/api/company", &[("x-padding", &huge)]).await;
    assert_eq!(reply.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);

    let long_path = format!("/{}", "a".repeat(8000));
    assert_eq!(
        server.get(&long_path, &[]).await.status,
        StatusCode::NOT_FOUND
    );

    let many_encodings = vec!["gzip;q=0.1"; 500].join(", ");
    let reply = server
        .get("/api/company", &[("accept-encoding", &many_encodings)])
        .await;
    assert_eq!(reply.header("content-encoding"), "gzip");

    // Still healthy afterwards.
    assert_eq!(server.get("/api/health", &[]).await.status, StatusCode::OK);
    server.stop().await;
}
