//! Key rotation, end to end with the real binary: `dossier keys rotate` adds a signing key,
//! running instances switch to it without a restart, the JWKS lists the new and the previous
//! key, and every credential signed before the rotation keeps working.

use crate::common;

use std::path::Path;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use common::{run_dossier, HttpClient, RedisServer, ServerProcess};
use hyper::{Method, StatusCode};

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

async fn form(
    client: &HttpClient,
    server: &ServerProcess,
    path: &str,
    body: String,
) -> serde_json::Value {
    let reply = client
        .send(Method::POST, &server.url(path), &[FORM], body)
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
    reply.json()
}

/// A fresh identity assertion from `server`.
async fn register(client: &HttpClient, server: &ServerProcess) -> String {
    let reply = client
        .send(
            Method::POST,
            &server.url("/agent/identity"),
            &[("content-type", "application/json")],
            r#"{"type":"anonymous"}"#,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string()
}

/// An access token for `assertion`.
async fn exchange(client: &HttpClient, server: &ServerProcess, assertion: &str) -> String {
    let body = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}"
    );
    form(client, server, "/oauth2/token", body).await["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The `kid`s the JWKS publishes, in order.
async fn published(client: &HttpClient, server: &ServerProcess) -> Vec<String> {
    let jwks = client
        .send(
            Method::GET,
            &server.url("/.well-known/jwks.json"),
            &[],
            Bytes::new(),
        )
        .await
        .json();
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| key["kid"].as_str().unwrap().to_string())
        .collect()
}

/// The `kid` in an assertion's JOSE header.
fn assertion_kid(assertion: &str) -> String {
    let header = assertion.split('.').next().unwrap();
    let header: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    header["kid"].as_str().unwrap().to_string()
}

/// The key id in an access token's PASETO footer.
fn token_kid(token: &str) -> String {
    let footer = token.split('.').nth(3).expect("the token has a footer");
    let footer: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(footer).unwrap()).unwrap();
    footer["kid"].as_str().unwrap().to_string()
}

fn keys(args: &[&str]) -> String {
    let output = run_dossier(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn a_rotation_in_the_state_directory_is_picked_up_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state_arg = state.to_str().unwrap();
    let content = common::sample_content();
    let content_arg = content.to_str().unwrap();
    let build_dir = dir.path().join("build");
    let built = common::run_build(&content, &build_dir, &state, None);
    assert!(built.status.success());
    let server = ServerProcess::start(&["--content", content_arg, "--state", state_arg]);
    let client = HttpClient::default();

    let before = published(&client, &server).await;
    assert_eq!(before.len(), 1);
    let old_assertion = register(&client, &server).await;
    assert_eq!(assertion_kid(&old_assertion), before[0]);
    let old_token = exchange(&client, &server, &old_assertion).await;

    let listed = keys(&["keys", "list", "--state", state_arg]);
    assert!(
        listed.contains("generation 1") && listed.contains("current"),
        "{listed}"
    );
    assert!(!listed.contains("generation 2"), "{listed}");
    let rotated = keys(&["keys", "rotate", "--state", state_arg]);
    assert!(rotated.contains("generation 2"), "{rotated}");
    assert!(rotated.contains("retired"), "{rotated}");

    let after = common::eventually(10, "the JWKS lists the new key", || async {
        let kids = published(&client, &server).await;
        (kids.len() == 2).then_some(kids)
    })
    .await;
    assert_eq!(after[1], before[0], "the previous key stays published");
    let new_assertion = register(&client, &server).await;
    assert_eq!(
        assertion_kid(&new_assertion),
        after[0],
        "new assertions use the new key"
    );
    let new_token = exchange(&client, &server, &new_assertion).await;
    assert_ne!(token_kid(&new_token), token_kid(&old_token));

    // Everything signed before the rotation keeps working.
    assert_eq!(
        common::api_with(&client, &server, &old_token).await,
        StatusCode::OK
    );
    assert_eq!(
        common::api_with(&client, &server, &new_token).await,
        StatusCode::OK
    );
    let from_old = exchange(&client, &server, &old_assertion).await;
    assert_eq!(
        common::api_with(&client, &server, &from_old).await,
        StatusCode::OK
    );
    drop(server);

    // A build made before the rotation still serves, with the current JWKS.
    let from_build = ServerProcess::start(&[
        "--from",
        build_dir.to_str().unwrap(),
        "--state",
        state_arg,
        "--no-watch",
    ]);
    assert_eq!(published(&client, &from_build).await, after);
}

#[tokio::test]
async fn a_rotation_in_redis_reaches_every_instance() {
    let redis = RedisServer::start();
    let (state_a, state_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let instance = |state: &Path| {
        ServerProcess::start(&[
            "--no-watch",
            "--state",
            state.to_str().unwrap(),
            "--store",
            &redis.url(),
            "--create-keyring",
            "--base-url",
            "https://info.example.com",
        ])
    };
    let (a, b) = (instance(state_a.path()), instance(state_b.path()));
    let client = HttpClient::default();
    let before = published(&client, &b).await;
    let old_assertion = register(&client, &a).await;
    let old_token = exchange(&client, &a, &old_assertion).await;

    let rotated = keys(&["keys", "rotate", "--store", &redis.url()]);
    assert!(rotated.contains("generation 2"), "{rotated}");
    for server in [&a, &b] {
        let kids = common::eventually(10, "every instance publishes the new key", || async {
            let kids = published(&client, server).await;
            (kids.len() == 2).then_some(kids)
        })
        .await;
        assert_eq!(kids[1], before[0]);
    }
    let new_kid = published(&client, &a).await[0].clone();

    // Minted on B with the new key, accepted by A; and the old credentials still work on B.
    let new_assertion = register(&client, &b).await;
    assert_eq!(assertion_kid(&new_assertion), new_kid);
    let new_token = exchange(&client, &b, &new_assertion).await;
    assert_ne!(token_kid(&new_token), token_kid(&old_token));
    assert_eq!(
        common::api_with(&client, &a, &new_token).await,
        StatusCode::OK
    );
    assert_eq!(
        common::api_with(&client, &b, &old_token).await,
        StatusCode::OK
    );
    let from_old = exchange(&client, &b, &old_assertion).await;
    assert_eq!(
        common::api_with(&client, &a, &from_old).await,
        StatusCode::OK
    );

    // Each instance's state directory holds the rotated keyring, as its backup.
    let listed = keys(&["keys", "list", "--state", state_b.path().to_str().unwrap()]);
    assert!(
        listed.contains(&new_kid) && listed.contains("generation 2"),
        "{listed}"
    );
    assert_eq!(
        keys(&["keys", "list", "--store", &redis.url()]),
        listed,
        "Redis and the copy agree"
    );
}
