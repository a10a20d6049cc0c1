//! The agent flow over a real socket: register, exchange, call, revoke, and every way a
//! hostile or confused client can get it wrong.

use crate::common;

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::{Reply, TestServer};
use dossier::auth::admission::RateLimits;
use hyper::{Method, StatusCode};
use serde_json::Value;

const JSON: (&str, &str) = ("content-type", "application/json");
const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn assert_no_store(reply: &Reply) {
    assert_eq!(reply.header("cache-control"), "no-store");
    assert_eq!(reply.header("pragma"), "no-cache");
}

fn assert_error(reply: &Reply, status: StatusCode, code: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(reply.json()["error"], code, "{}", reply.text());
    assert!(reply.json()["error_description"].as_str().unwrap().len() > 10);
}

fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

async fn register(server: &TestServer) -> Value {
    let reply = server
        .send(
            Method::POST,
            "/agent/identity",
            &[JSON],
            r#"{"type":"anonymous"}"#,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_no_store(&reply);
    reply.json()
}

async fn token_request(server: &TestServer, body: &str) -> Reply {
    let reply = server
        .send(Method::POST, "/oauth2/token", &[FORM], body.to_string())
        .await;
    assert_no_store(&reply);
    reply
}

async fn exchange(server: &TestServer, assertion: &str) -> Reply {
    token_request(
        server,
        &format!(
            "grant_type={}&assertion={}",
            encode(JWT_BEARER),
            encode(assertion)
        ),
    )
    .await
}

async fn access_token(server: &TestServer, assertion: &str) -> String {
    let reply = exchange(server, assertion).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["access_token"].as_str().unwrap().to_string()
}

async fn call_api(server: &TestServer, token: &str) -> Reply {
    server
        .get(
            "/api/company",
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await
}

async fn revoke(server: &TestServer, token: &str) -> Reply {
    let reply = server
        .send(
            Method::POST,
            "/oauth2/revoke",
            &[FORM],
            format!("token={}", encode(token)),
        )
        .await;
    assert_no_store(&reply);
    reply
}

fn decode_part(token: &str, index: usize) -> Value {
    let part = token.split('.').nth(index).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[tokio::test]
async fn registration_returns_a_signed_assertion_in_both_shapes() {
    let server = TestServer::start().await;
    let body = register(&server).await;
    let assertion = body["identity_assertion"].as_str().unwrap();
    assert_eq!(body["identity"]["assertion"], assertion);
    assert_eq!(body["identity"]["expires_at"], body["expires_at"]);
    assert_eq!(body["registration_type"], "anonymous");
    assert_eq!(body["expires_in"], 3600);
    let registration = body["registration_id"].as_str().unwrap();
    assert!(registration.starts_with("reg_"));
    assert_eq!(body["id"], registration);

    let header = decode_part(assertion, 0);
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["typ"], "oauth-id-jag+jwt");
    assert_eq!(
        header["kid"],
        server.app.auth().keys().keyring().current().identity.kid()
    );
    let claims = decode_part(assertion, 1);
    assert_eq!(claims["iss"], server.base.as_str());
    assert_eq!(claims["aud"], server.base.as_str());
    assert_eq!(claims["sub"], registration);
    assert!(claims["jti"].as_str().unwrap().len() > 10);
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );
    let expires_at = humantime::parse_rfc3339(body["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(
        expires_at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
        claims["exp"].as_u64().unwrap()
    );

    let second = register(&server).await;
    assert_ne!(second["registration_id"], body["registration_id"]);
    server.stop().await;
}

#[tokio::test]
async fn registration_refuses_bad_requests_clearly() {
    let server = TestServer::start().await;
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, StatusCode, &'a str);
    let cases: [Case; 9] = [
        (
            &[JSON],
            r#"{"type":"service_auth"}"#,
            StatusCode::BAD_REQUEST,
            "service_auth_not_enabled",
        ),
        (
            &[JSON],
            r#"{"type":"email","email":"a@b.c"}"#,
            StatusCode::BAD_REQUEST,
            "unsupported_identity_type",
        ),
        (&[JSON], r#"{}"#, StatusCode::BAD_REQUEST, "invalid_request"),
        (
            &[JSON],
            r#"{"type": 7}"#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            &[JSON],
            r#"["anonymous"]"#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            &[JSON],
            r#"{"type":"anonymous""#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            &[("content-type", "text/plain")],
            r#"{"type":"anonymous"}"#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            &[FORM],
            "type=anonymous",
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            &[],
            r#"{"type":"anonymous"}"#,
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
    ];
    for (headers, body, status, code) in cases {
        let reply = server
            .send(Method::POST, "/agent/identity", headers, body.to_string())
            .await;
        assert_error(&reply, status, code);
        assert_no_store(&reply);
        assert_eq!(reply.header("access-control-allow-origin"), "*");
    }
    let unsupported = server
        .send(
            Method::POST,
            "/agent/identity",
            &[JSON],
            r#"{"type":"service_auth"}"#,
        )
        .await;
    assert!(unsupported.json()["error_description"]
        .as_str()
        .unwrap()
        .contains("anonymous"));

    // Unknown fields are ignored; a charset parameter is fine.
    let reply = server
        .send(
            Method::POST,
            "/agent/identity",
            &[("content-type", "application/json; charset=utf-8")],
            r#"{"type":"anonymous","requested_credential_type":"api_key","extra":{"deep":[1,2]}}"#,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);

    let huge = format!(
        r#"{{"type":"anonymous","pad":"{}"}}"#,
        "x".repeat(70 * 1024)
    );
    let reply = server
        .send(Method::POST, "/agent/identity", &[JSON], huge)
        .await;
    assert_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "request_too_large");
    server.stop().await;
}

#[tokio::test]
async fn the_whole_flow_register_exchange_call_revoke() {
    let server = TestServer::start().await;
    let anonymous = server.get("/api/company", &[]).await;
    let assertion = register(&server).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();

    let reply = exchange(&server, &assertion).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let token = reply.json();
    assert_eq!(token["token_type"], "Bearer");
    assert_eq!(token["expires_in"], 900);
    assert_eq!(token["scope"], "company:read");
    assert!(token.get("refresh_token").is_none());
    let access = token["access_token"].as_str().unwrap();
    assert!(access.starts_with("v4.local."));

    let authorized = call_api(&server, access).await;
    assert_eq!(authorized.status, StatusCode::OK);
    assert_eq!(authorized.body, anonymous.body);

    // The assertion is reusable.
    let second = access_token(&server, &assertion).await;
    assert_ne!(second, access);

    // Revoking one access token leaves the other.
    assert_eq!(revoke(&server, access).await.status, StatusCode::OK);
    let refused = call_api(&server, access).await;
    assert_error(&refused, StatusCode::UNAUTHORIZED, "invalid_token");
    assert!(refused.header("www-authenticate").contains("revoked"));
    assert_eq!(call_api(&server, &second).await.status, StatusCode::OK);

    // Revoking the assertion kills it and every token issued from it.
    assert_eq!(revoke(&server, &assertion).await.status, StatusCode::OK);
    assert_eq!(
        call_api(&server, &second).await.status,
        StatusCode::UNAUTHORIZED
    );
    let reply = exchange(&server, &assertion).await;
    assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");

    // A fresh registration still works.
    let fresh = register(&server).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let fresh_token = access_token(&server, &fresh).await;
    assert_eq!(call_api(&server, &fresh_token).await.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn client_credentials_needs_no_secret_and_never_trusts_the_client_id() {
    let server = TestServer::start().await;
    let keys = server.app.auth().keys();
    let key = [&keys.keyring().current().access];
    let audience = server.app.auth().audience().to_string();
    let mut subjects = Vec::new();
    for body in [
        "grant_type=client_credentials",
        "grant_type=client_credentials&client_id=admin",
        "grant_type=client_credentials&client_id=admin&scope=company%3Aread",
    ] {
        let reply = token_request(&server, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{body}: {}", reply.text());
        let access = reply.json()["access_token"].as_str().unwrap().to_string();
        assert_eq!(call_api(&server, &access).await.status, StatusCode::OK);
        let claims = dossier::auth::access::open(key, &access, &audience).unwrap();
        assert!(claims.sub.starts_with("anon_"), "{}", claims.sub);
        assert!(claims.assertion_jti.is_none());
        subjects.push(claims.sub);
    }
    subjects.dedup();
    assert_eq!(subjects.len(), 3, "each token gets a fresh subject");

    // Basic credentials with an empty password are a public client's id: accepted.
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("my-agent:")
    );
    let reply = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[FORM, ("authorization", &basic)],
            "grant_type=client_credentials",
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    server.stop().await;
}

#[tokio::test]
async fn token_requests_are_parsed_strictly() {
    let server = TestServer::start().await;
    let assertion = register(&server).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let good = format!(
        "grant_type={}&assertion={}",
        encode(JWT_BEARER),
        encode(&assertion)
    );

    for content_type in [
        "application/x-www-form-urlencoded;charset=UTF-8",
        "application/x-www-form-urlencoded; charset=utf-8",
    ] {
        let reply = server
            .send(
                Method::POST,
                "/oauth2/token",
                &[("content-type", content_type)],
                good.clone(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{content_type}");
    }
    let unknown_ignored = token_request(&server, &format!("{good}&foo=bar&audience=x")).await;
    assert_eq!(unknown_ignored.status, StatusCode::OK);
    let resource = token_request(
        &server,
        &format!(
            "{good}&resource={}",
            encode(&format!("{}/mcp", server.base))
        ),
    )
    .await;
    assert_eq!(resource.status, StatusCode::OK);

    let cases = [
        (
            format!("{good}&assertion=x"),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "grant_type=client_credentials&grant_type=client_credentials".to_string(),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        ("".to_string(), StatusCode::BAD_REQUEST, "invalid_request"),
        (
            "grant_type=".to_string(),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            format!("grant_type={}", encode(JWT_BEARER)),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "grant_type=password&username=a&password=b".to_string(),
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            "grant_type=authorization_code&code=x".to_string(),
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            "grant_type=refresh_token&refresh_token=x".to_string(),
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            "grant_type=client_credentials&scope=admin".to_string(),
            StatusCode::BAD_REQUEST,
            "invalid_scope",
        ),
        (
            "grant_type=client_credentials&resource=https%3A%2F%2Fevil.example".to_string(),
            StatusCode::BAD_REQUEST,
            "invalid_target",
        ),
        (
            "grant_type=client_credentials&client_secret=s3cret".to_string(),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            "grant_type=client_credentials&client_assertion=x&client_assertion_type=y".to_string(),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
    ];
    for (body, status, code) in cases {
        let reply = token_request(&server, &body).await;
        assert_error(&reply, status, code);
    }

    let with_password = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("id:secret")
    );
    let reply = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[FORM, ("authorization", &with_password)],
            "grant_type=client_credentials",
        )
        .await;
    assert_error(&reply, StatusCode::UNAUTHORIZED, "invalid_client");
    assert_eq!(reply.header("www-authenticate"), "Basic realm=\"dossier\"");
    assert_no_store(&reply);

    for content_type in [
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
    ] {
        let reply = server
            .send(
                Method::POST,
                "/oauth2/token",
                &[("content-type", content_type)],
                "{\"grant_type\":\"client_credentials\"}",
            )
            .await;
        assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_request");
        assert_no_store(&reply);
    }
    let latin1 = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[(
                "content-type",
                "application/x-www-form-urlencoded; charset=iso-8859-1",
            )],
            "grant_type=client_credentials",
        )
        .await;
    assert_error(&latin1, StatusCode::BAD_REQUEST, "invalid_request");

    let huge = format!(
        "grant_type=client_credentials&pad={}",
        "x".repeat(65 * 1024)
    );
    let reply = server
        .send(Method::POST, "/oauth2/token", &[FORM], huge)
        .await;
    assert_error(&reply, StatusCode::PAYLOAD_TOO_LARGE, "request_too_large");
    server.stop().await;
}

/// Re-encodes an assertion's parts, optionally re-signing with `key` (None keeps the
/// original signature).
fn rebuild(header: &Value, claims: &Value, signature: &str) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap()),
        signature
    )
}

#[tokio::test]
async fn forged_and_misused_assertions_are_invalid_grant() {
    let server = TestServer::start().await;
    let assertion = register(&server).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let header = decode_part(&assertion, 0);
    let claims = decode_part(&assertion, 1);
    let signature = assertion.split('.').nth(2).unwrap();

    let mut none_header = header.clone();
    none_header["alg"] = "none".into();
    let alg_none = rebuild(&none_header, &claims, "");

    // HS256 with the published public key (the JWKS x||y point) as the HMAC secret.
    let mut hs_header = header.clone();
    hs_header["alg"] = "HS256".into();
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&hs_header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap())
    );
    let public = server
        .app
        .auth()
        .keys()
        .keyring()
        .current()
        .identity
        .public_point();
    let mac = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &public),
        input.as_bytes(),
    );
    let hs256 = format!("{input}.{}", URL_SAFE_NO_PAD.encode(mac.as_ref()));

    // Signed by another service's key (another state directory).
    let other = TestServer::start().await;
    let foreign = register(&other).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut foreign_claims = decode_part(&foreign, 1);
    foreign_claims["iss"] = server.base.clone().into();
    foreign_claims["aud"] = server.base.clone().into();
    let foreign_signature = foreign.split('.').nth(2).unwrap();
    let foreign = rebuild(
        &decode_part(&foreign, 0),
        &foreign_claims,
        foreign_signature,
    );

    let mut tampered_claims = claims.clone();
    tampered_claims["sub"] = "reg_someone_else".into();
    let tampered = rebuild(&header, &tampered_claims, signature);

    let access = access_token(&server, &assertion).await;

    for (name, candidate) in [
        ("alg none", alg_none.as_str()),
        ("HS256 with the public key", hs256.as_str()),
        ("another key", foreign.as_str()),
        ("tampered payload", tampered.as_str()),
        ("access token as assertion", access.as_str()),
        ("garbage", "not.a.jwt"),
    ] {
        let reply = exchange(&server, candidate).await;
        assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
        assert!(
            !reply.text().contains(candidate),
            "{name}: the credential is echoed back"
        );
    }

    // Expired: the clock moves past exp plus the allowed skew.
    server.clock.advance(Duration::from_secs(3600 + 61));
    let reply = exchange(&server, &assertion).await;
    assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_grant");
    assert!(reply.json()["error_description"]
        .as_str()
        .unwrap()
        .contains("expired"));
    other.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn access_tokens_expire_and_never_outlive_their_assertion() {
    let server = TestServer::start().await;
    let assertion = register(&server).await["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let early = access_token(&server, &assertion).await;

    server.clock.advance(Duration::from_secs(900 + 61));
    assert_eq!(
        call_api(&server, &early).await.status,
        StatusCode::UNAUTHORIZED
    );

    // 10 minutes before the assertion expires, a new token lives 10 minutes, not 15.
    server.clock.advance(Duration::from_secs(3600 - 600 - 961));
    let reply = exchange(&server, &assertion).await;
    assert_eq!(reply.json()["expires_in"], 600);
    server.stop().await;
}

#[tokio::test]
async fn revocation_answers_200_for_anything_well_formed() {
    let server = TestServer::start().await;
    for token in ["unknown", "v4.local.AAAA", "eyJhbGciOiJub25lIn0.e30."] {
        assert_eq!(
            revoke(&server, token).await.status,
            StatusCode::OK,
            "{token}"
        );
    }
    let access = access_token(
        &server,
        register(&server).await["identity_assertion"]
            .as_str()
            .unwrap(),
    )
    .await;
    let hinted = server
        .send(
            Method::POST,
            "/oauth2/revoke",
            &[FORM],
            format!("token={}&token_type_hint=refresh_token", encode(&access)),
        )
        .await;
    assert_eq!(hinted.status, StatusCode::OK);
    assert_eq!(
        call_api(&server, &access).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        revoke(&server, &access).await.status,
        StatusCode::OK,
        "revoking twice is fine"
    );

    let missing = server
        .send(
            Method::POST,
            "/oauth2/revoke",
            &[FORM],
            "token_type_hint=access_token",
        )
        .await;
    assert_error(&missing, StatusCode::BAD_REQUEST, "invalid_request");
    let repeated = server
        .send(Method::POST, "/oauth2/revoke", &[FORM], "token=a&token=b")
        .await;
    assert_error(&repeated, StatusCode::BAD_REQUEST, "invalid_request");
    let json = server
        .send(Method::POST, "/oauth2/revoke", &[JSON], "{\"token\":\"a\"}")
        .await;
    assert_error(&json, StatusCode::BAD_REQUEST, "invalid_request");
    assert_eq!(
        server.get("/oauth2/revoke", &[]).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    server.stop().await;
}

#[tokio::test]
async fn tokens_in_a_form_body_are_refused() {
    let server = TestServer::start().await;
    let reply = server
        .send(Method::GET, "/api/company", &[FORM], "access_token=abc")
        .await;
    assert_error(&reply, StatusCode::BAD_REQUEST, "invalid_request");
    server.stop().await;
}

#[tokio::test]
async fn credential_endpoints_are_rate_limited_per_address_and_reads_are_not() {
    let server = TestServer::start_with_limits(RateLimits {
        register_per_minute: 2,
        token_per_minute: 3,
    })
    .await;
    register(&server).await;
    register(&server).await;
    let limited = server
        .send(
            Method::POST,
            "/agent/identity",
            &[JSON],
            r#"{"type":"anonymous"}"#,
        )
        .await;
    assert_error(
        &limited,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_exceeded",
    );
    assert_eq!(limited.header("retry-after"), "30");
    assert_no_store(&limited);

    for _ in 0..3 {
        assert_eq!(
            token_request(&server, "grant_type=client_credentials")
                .await
                .status,
            StatusCode::OK
        );
    }
    let limited = token_request(&server, "grant_type=client_credentials").await;
    assert_error(
        &limited,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_exceeded",
    );
    assert_eq!(limited.header("retry-after"), "20");

    for _ in 0..50 {
        assert_eq!(server.get("/api/company", &[]).await.status, StatusCode::OK);
        assert_eq!(
            server
                .get("/.well-known/oauth-authorization-server", &[])
                .await
                .status,
            StatusCode::OK
        );
    }
    // Revocation is never limited: a client must always be able to give a token back.
    assert_eq!(revoke(&server, "anything").await.status, StatusCode::OK);

    server.clock.advance(Duration::from_secs(30));
    register(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn chunked_bodies_over_the_limit_are_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let address = server.base.strip_prefix("http://").unwrap().to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut request = format!(
        "POST /oauth2/token HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..80 {
        request.extend_from_slice(format!("{:x}\r\n{}\r\n", 1024, "a".repeat(1024)).as_bytes());
    }
    request.extend_from_slice(b"0\r\n\r\n");
    stream.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("request_too_large"));
    server.stop().await;
}
