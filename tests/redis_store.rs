//! Several instances on one Redis: shared revocations and rate limits, failing closed while
//! Redis is away, and resuming when it is back. A real `redis-server` is started on a free
//! loopback port by the test and stopped by it.

use crate::common;

use std::path::Path;
use std::time::Instant;

use bytes::Bytes;
use common::{HttpClient, RedisServer, Reply, ServerProcess};
use hyper::{Method, StatusCode};

fn instance(state: &Path, redis: &str) -> ServerProcess {
    ServerProcess::start(&[
        "--no-watch",
        "--state",
        state.to_str().unwrap(),
        "--store",
        redis,
        // The first instance of a deployment makes its keyring; later ones take it.
        "--create-keyring",
        "--register-rate-limit",
        "3",
        // Several instances behind one CDN serve one public origin.
        "--base-url",
        "https://info.example.com",
    ])
}

async fn token(client: &HttpClient, server: &ServerProcess) -> Reply {
    client
        .send(
            Method::POST,
            &server.url("/oauth2/token"),
            &[("content-type", "application/x-www-form-urlencoded")],
            "grant_type=client_credentials",
        )
        .await
}

async fn access_token(client: &HttpClient, server: &ServerProcess) -> String {
    let reply = token(client, server).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["access_token"].as_str().unwrap().to_string()
}

async fn revoke(client: &HttpClient, server: &ServerProcess, token: &str) -> Reply {
    client
        .send(
            Method::POST,
            &server.url("/oauth2/revoke"),
            &[("content-type", "application/x-www-form-urlencoded")],
            format!("token={token}"),
        )
        .await
}

async fn register(client: &HttpClient, server: &ServerProcess) -> StatusCode {
    client
        .send(
            Method::POST,
            &server.url("/agent/identity"),
            &[("content-type", "application/json")],
            r#"{"type":"anonymous"}"#,
        )
        .await
        .status
}

#[tokio::test]
async fn two_instances_share_one_redis() {
    let data = tempfile::tempdir().unwrap();
    let mut redis = RedisServer::start_in(data.path(), common::free_port());
    // Separate state directories: A publishes its keys, B (with none) takes them.
    let state = tempfile::tempdir().unwrap();
    let state_b = tempfile::tempdir().unwrap();
    let a = instance(state.path(), &redis.url());
    let b = instance(state_b.path(), &redis.url());
    assert_eq!(
        std::fs::read(state.path().join("keys.json")).unwrap(),
        std::fs::read(state_b.path().join("keys.json")).unwrap(),
    );
    // An instance with other keys refuses to start instead of minting tokens nobody takes.
    let other = tempfile::tempdir().unwrap();
    dossier::auth::keys::Keyring::load_or_create(other.path(), 0).unwrap();
    let refused = common::run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--no-watch",
        "--state",
        other.path().to_str().unwrap(),
        "--store",
        &redis.url(),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("keys.json") && stderr.contains("differ"),
        "{stderr}"
    );
    let client = HttpClient::default();

    // A token minted on A works on B.
    let token_a = access_token(&client, &a).await;
    assert_eq!(
        common::api_with(&client, &b, &token_a).await,
        StatusCode::OK
    );

    // A revocation acknowledged by A is refused by B, within the staleness bound.
    let revoked = revoke(&client, &a, &token_a).await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text());
    let acknowledged = Instant::now();
    common::eventually(5, "B refuses the revoked token", || async {
        (common::api_with(&client, &b, &token_a).await == StatusCode::UNAUTHORIZED).then_some(())
    })
    .await;
    println!(
        "revocation on A refused by B after {:?}",
        acknowledged.elapsed()
    );

    // The registration limit (3 a minute) is one bucket for both instances.
    assert_eq!(register(&client, &a).await, StatusCode::OK);
    assert_eq!(register(&client, &b).await, StatusCode::OK);
    assert_eq!(register(&client, &a).await, StatusCode::OK);
    assert_eq!(register(&client, &b).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(register(&client, &a).await, StatusCode::TOO_MANY_REQUESTS);

    // Redis goes away: anonymous reads go on; anything that needs the store fails closed.
    let still_valid = access_token(&client, &b).await;
    redis.stop();
    assert_eq!(
        client
            .send(Method::GET, &a.url("/api/company"), &[], Bytes::new())
            .await
            .status,
        StatusCode::OK
    );
    let refused = common::eventually(5, "tokens are refused while Redis is away", || async {
        (common::api_with(&client, &a, &still_valid).await == StatusCode::SERVICE_UNAVAILABLE)
            .then_some(())
    })
    .await;
    let () = refused;
    common::eventually(5, "B's health reports the store", || async {
        let health = client
            .send(Method::GET, &b.url("/api/health"), &[], Bytes::new())
            .await
            .json();
        (health["store"]["status"] == "degraded" && health["status"] == "degraded").then_some(())
    })
    .await;
    let issued = token(&client, &a).await;
    assert_eq!(issued.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(issued.headers.contains_key("retry-after"));
    let revoking = revoke(&client, &b, &still_valid).await;
    assert_eq!(revoking.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(register(&client, &b).await, StatusCode::SERVICE_UNAVAILABLE);

    // Redis is back (same data): everything resumes without a restart.
    redis = RedisServer::start_in(data.path(), redis.port);
    for server in [&a, &b] {
        common::eventually(10, "tokens work again", || async {
            (common::api_with(&client, server, &still_valid).await == StatusCode::OK).then_some(())
        })
        .await;
        assert_eq!(
            common::api_with(&client, server, &token_a).await,
            StatusCode::UNAUTHORIZED
        );
    }

    // Both instances killed: no acknowledged revocation is lost.
    let revoked = revoke(&client, &b, &still_valid).await;
    assert_eq!(revoked.status, StatusCode::OK);
    drop(a);
    drop(b);
    let a = instance(state.path(), &redis.url());
    for token in [&token_a, &still_valid] {
        assert_eq!(
            common::api_with(&client, &a, token).await,
            StatusCode::UNAUTHORIZED
        );
    }
    drop(redis);
}

#[test]
fn an_unreachable_redis_stops_startup_with_a_clear_error() {
    let port = common::free_port();
    let state = tempfile::tempdir().unwrap();
    let output = common::run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--no-watch",
        "--state",
        state.path().to_str().unwrap(),
        "--store",
        &format!("redis://127.0.0.1:{port}/0"),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Redis"), "{stderr}");
    let bad = common::run_dossier(&["serve", "--addr", "127.0.0.1:0", "--store", "mysql://x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--store"));
}

fn redis_cli(redis: &RedisServer, args: &[&str]) -> String {
    let output = std::process::Command::new("redis-cli")
        .args(["-p", &redis.port.to_string()])
        .args(args)
        .output()
        .expect("redis-cli comes with redis-server");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

async fn jwks_kids(client: &HttpClient, server: &ServerProcess) -> Vec<String> {
    let reply = client
        .send(Method::GET, &server.url("/.well-known/jwks.json"), &[], "")
        .await;
    reply.json()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| key["kid"].as_str().unwrap().to_string())
        .collect()
}

/// Redis loses its data while A runs. A new instance with no keys must not make the
/// deployment a new keyring (that would invalidate every credential fleet-wide); A publishes
/// its own again, and keys planted in Redis that are unrelated to A's are never taken.
#[tokio::test]
async fn an_emptied_redis_never_replaces_the_deployments_keys() {
    let redis = RedisServer::start();
    let state_a = tempfile::tempdir().unwrap();
    let a = ServerProcess::start(&[
        "--state",
        state_a.path().to_str().unwrap(),
        "--store",
        &redis.url(),
        "--create-keyring",
        "--base-url",
        "https://info.example.com",
    ]);
    let client = HttpClient::default();
    let kids = jwks_kids(&client, &a).await;
    let token = access_token(&client, &a).await;
    let keyring_a = std::fs::read(state_a.path().join("keys.json")).unwrap();

    assert_eq!(redis_cli(&redis, &["FLUSHALL"]), "OK");
    // Within the second the key watcher takes, A publishes its keyring again.
    let published = common::eventually(10, "A publishes its keyring again", || async {
        let text = redis_cli(&redis, &["GET", "dossier:keys:keyring"]);
        (!text.is_empty()).then_some(text)
    })
    .await;
    // (redis-cli's output is trimmed, so compare without the file's final newline.)
    assert_eq!(published.trim(), String::from_utf8_lossy(&keyring_a).trim());

    // Had Redis still been empty, a fresh instance without --create-keyring is refused...
    let empty = RedisServer::start();
    let state_b = tempfile::tempdir().unwrap();
    let refused = common::run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--state",
        state_b.path().to_str().unwrap(),
        "--store",
        &empty.url(),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--create-keyring"), "{stderr}");
    assert!(!state_b.path().join("keys.json").exists());
    // ...and with Redis refilled by A, it takes A's keys.
    let b = ServerProcess::start(&[
        "--state",
        state_b.path().to_str().unwrap(),
        "--store",
        &redis.url(),
        "--base-url",
        "https://info.example.com",
    ]);
    assert_eq!(jwks_kids(&client, &b).await, kids);
    assert_eq!(common::api_with(&client, &b, &token).await, StatusCode::OK);

    // Keys planted in Redis that share nothing with A's are refused: A keeps its keys and
    // its copy, and credentials issued before keep working.
    let planted = tempfile::tempdir().unwrap();
    let foreign = dossier::auth::keys::Keyring::load_or_create(planted.path(), 0).unwrap();
    redis_cli(&redis, &["SET", "dossier:keys:keyring", &foreign.to_text()]);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(jwks_kids(&client, &a).await, kids);
    assert_eq!(
        std::fs::read(state_a.path().join("keys.json")).unwrap(),
        keyring_a
    );
    assert_eq!(common::api_with(&client, &a, &token).await, StatusCode::OK);

    // A's keyring goes back; after a rotation, a replica that lagged behind it hands back
    // the keyring from before: it is not taken (a retired key would sign again), and the
    // rotated one is published again.
    redis_cli(
        &redis,
        &[
            "SET",
            "dossier:keys:keyring",
            &String::from_utf8_lossy(&keyring_a),
        ],
    );
    let rotated = common::run_dossier(&["keys", "rotate", "--store", &redis.url()]);
    assert!(rotated.status.success(), "{rotated:?}");
    let after = common::eventually(10, "A takes the rotation", || async {
        let kids = jwks_kids(&client, &a).await;
        (kids.len() == 2).then_some(kids)
    })
    .await;
    let rotated_text = redis_cli(&redis, &["GET", "dossier:keys:keyring"]);
    redis_cli(
        &redis,
        &[
            "SET",
            "dossier:keys:keyring",
            &String::from_utf8_lossy(&keyring_a),
        ],
    );
    common::eventually(10, "the rotated keyring is published again", || async {
        (redis_cli(&redis, &["GET", "dossier:keys:keyring"]) == rotated_text).then_some(())
    })
    .await;
    assert_eq!(jwks_kids(&client, &a).await, after);
    let on_b = common::eventually(10, "B takes the rotation", || async {
        let kids = jwks_kids(&client, &b).await;
        (kids.len() == 2).then_some(kids)
    })
    .await;
    assert_eq!(on_b, after);
}
