//! One anonymous client must not be able to slow down, lock out or crash the service: every
//! limit is crossed here over a real socket, and every fault is injected for real.

use crate::common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{ServerProcess, TestServer};
use dossier::auth::admission::RateLimits;
use dossier::auth::assertion::{AssertionClaims, AssertionSigner};
use dossier::auth::keys::Keyring;
use dossier::auth::store::{EmbeddedStore, RETRY_INTERVAL};
use dossier::live::Source;
use dossier::serve::client::TrustedProxies;
use dossier::serve::connection::{self, ConnectionLimits};
use hyper::{Method, Response, StatusCode};
use redb::backends::FileBackend;
use redb::StorageBackend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Sends raw bytes and reads until the server closes or `wait` passes.
async fn raw_exchange(addr: &str, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    read_answer(&mut stream, wait).await
}

/// What the server wrote before closing (or before `wait` passed with nothing more).
async fn read_answer(stream: &mut TcpStream, wait: Duration) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match tokio::time::timeout(wait, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Err(_) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buffer[..n]);
                // One complete response is enough once its body has arrived.
                if let Some(text) = complete_response(&answer) {
                    return text;
                }
            }
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

fn complete_response(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    (body.len() >= length).then(|| text.into_owned())
}

/// A server on the sample content, with `configure` applied to its app before it starts.
async fn start_configured(
    configure: impl FnOnce(dossier::serve::App) -> dossier::serve::App,
) -> TestServer {
    start_with_limits(RateLimits::default(), configure).await
}

async fn start_with_limits(
    limits: RateLimits,
    configure: impl FnOnce(dossier::serve::App) -> dossier::serve::App,
) -> TestServer {
    TestServer::start_configured(
        Source::Content(common::sample_content()),
        tempfile::tempdir().unwrap(),
        None,
        limits,
        configure,
    )
    .await
}

fn host_port(server: &TestServer) -> String {
    server.base.trim_start_matches("http://").to_string()
}

#[tokio::test]
async fn requests_without_exactly_one_valid_host_are_refused() {
    let server = TestServer::start().await;
    let addr = host_port(&server);
    let wait = Duration::from_secs(10);
    let missing = raw_exchange(&addr, b"GET /api/company HTTP/1.1\r\n\r\n", wait).await;
    assert!(missing.starts_with("HTTP/1.1 400"), "{missing}");
    assert!(missing.contains("Host"), "{missing}");
    let twice = format!("GET /api/company HTTP/1.1\r\nHost: {addr}\r\nHost: {addr}\r\n\r\n");
    let twice = raw_exchange(&addr, twice.as_bytes(), wait).await;
    assert!(twice.starts_with("HTTP/1.1 400"), "{twice}");
    let garbage = raw_exchange(
        &addr,
        b"GET /api/company HTTP/1.1\r\nHost: a b/c\r\n\r\n",
        wait,
    )
    .await;
    assert!(garbage.starts_with("HTTP/1.1 400"), "{garbage}");
    let good = format!("GET /api/company HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let good = raw_exchange(&addr, good.as_bytes(), wait).await;
    assert!(
        good.starts_with("HTTP/1.1 200"),
        "{}",
        &good[..80.min(good.len())]
    );
    // HTTP/1.0 predates Host; it is still served.
    let old = raw_exchange(&addr, b"GET /api/company HTTP/1.0\r\n\r\n", wait).await;
    assert!(
        old.starts_with("HTTP/1.0 200"),
        "{}",
        &old[..80.min(old.len())]
    );
    server.stop().await;
}

#[tokio::test]
async fn look_alike_loopback_origins_and_hosts_are_refused_on_mcp() {
    let server = TestServer::start().await;
    let port = server.base.rsplit(':').next().unwrap().to_string();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let json = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let attempts = [
        ("origin", format!("http://127.attacker.example:{port}")),
        ("origin", format!("http://127.0.0.1.nip.io:{port}")),
        ("origin", "http://[::1].evil.com".to_string()),
        ("host", format!("127.0.0.1.nip.io:{port}")),
        ("host", format!("127.attacker.example:{port}")),
    ];
    for (name, value) in &attempts {
        let mut headers = json.to_vec();
        headers.push((name, value));
        let reply = server.send(Method::POST, "/mcp", &headers, body).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{name}: {value}");
    }
    let mut headers = json.to_vec();
    let origin = format!("http://localhost:{port}");
    headers.push(("origin", &origin));
    let reply = server.send(Method::POST, "/mcp", &headers, body).await;
    assert_eq!(reply.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn a_body_that_never_arrives_gets_408_and_the_connection_is_closed() {
    let server = start_configured(|app| {
        let connections = app.connections();
        app.with_connections(ConnectionLimits {
            body_timeout: Duration::from_millis(500),
            ..connections
        })
    })
    .await;
    let addr = host_port(&server);
    for path in ["/oauth2/revoke", "/oauth2/token", "/mcp"] {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        let content_type = if path == "/mcp" {
            "application/json"
        } else {
            "application/x-www-form-urlencoded"
        };
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: 1000\r\n\r\ntoken="
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = read_answer(&mut stream, Duration::from_secs(20)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer}");
        // The server closed its side: the next read sees the end.
        let mut rest = [0u8; 16];
        let closed = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut rest)).await;
        assert!(
            matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
            "{path}: still open"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_writes_its_whole_oversized_body_first_still_sees_413() {
    // What Python's http.client does: write everything, then read.
    let server = TestServer::start().await;
    let addr = host_port(&server);
    for (path, content_type) in [
        ("/oauth2/token", "application/x-www-form-urlencoded"),
        ("/agent/identity", "application/json"),
        ("/mcp", "application/json"),
    ] {
        let body = vec![b'a'; 2 * 1024 * 1024];
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream
            .write_all(&body)
            .await
            .unwrap_or_else(|e| panic!("{path}: the server stopped reading: {e}"));
        let answer = read_answer(&mut stream, Duration::from_secs(20)).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{path}: {answer}");
    }
    // Chunked, without a declared length: the same.
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /oauth2/token HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..32 {
        let chunk = vec![b'a'; 64 * 1024];
        stream
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await
            .unwrap();
        stream.write_all(&chunk).await.unwrap();
        stream.write_all(b"\r\n").await.unwrap();
    }
    stream.write_all(b"0\r\n\r\n").await.unwrap();
    let answer = read_answer(&mut stream, Duration::from_secs(20)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "chunked: {answer}");
    server.stop().await;
}

/// Opens a connection from `local` (an address on the loopback interface) to `server`.
async fn connect_from(local: &str, server: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(format!("{local}:0").parse::<SocketAddr>().unwrap())
        .unwrap();
    socket
        .connect(server.parse::<SocketAddr>().unwrap())
        .await
        .unwrap()
}

/// Four serving threads share the connections; the caps count across all of them.
#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let server = start_configured(|app| {
        app.with_connections(ConnectionLimits {
            total: 6,
            per_client: 3,
            ..ConnectionLimits::default()
        })
        .with_workers(4)
    })
    .await;
    let addr = host_port(&server);
    // The attacker opens its share and sends nothing.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from("127.0.0.1", &addr).await);
    }
    // Let the accept loop count them.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut extra = connect_from("127.0.0.1", &addr).await;
    let refused = read_answer(&mut extra, Duration::from_secs(10)).await;
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert!(refused.to_ascii_lowercase().contains("retry-after: 1"));
    assert!(refused.contains("too_many_connections"));

    // Another address is still served.
    let mut other = connect_from("127.0.0.2", &addr).await;
    let request = format!("GET /api/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    other.write_all(request.as_bytes()).await.unwrap();
    let answer = read_answer(&mut other, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    // Past the total, everyone gets 503.
    for local in ["127.0.0.3", "127.0.0.3", "127.0.0.4"] {
        held.push(connect_from(local, &addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut late = connect_from("127.0.0.5", &addr).await;
    let full = read_answer(&mut late, Duration::from_secs(10)).await;
    assert!(full.starts_with("HTTP/1.1 503"), "{full}");

    // Closing connections gives their places back.
    held.clear();
    let reply = common::eventually(10, "a place frees up", || async {
        let mut stream = connect_from("127.0.0.1", &addr).await;
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_answer(&mut stream, Duration::from_secs(5)).await;
        answer.starts_with("HTTP/1.1 200").then_some(answer)
    })
    .await;
    assert!(reply.contains("\"status\""));
    server.stop().await;
}

#[tokio::test]
async fn idle_connections_are_closed_after_the_header_timeout() {
    // A connection that never sends a request does not stay forever. (The timeout is 10 s;
    // this waits for the close, it does not time it.)
    let server = TestServer::start().await;
    let mut stream = TcpStream::connect(host_port(&server)).await.unwrap();
    let mut buffer = [0u8; 64];
    let closed = tokio::time::timeout(
        connection::HEADER_READ_TIMEOUT + Duration::from_secs(20),
        stream.read(&mut buffer),
    )
    .await;
    assert!(matches!(closed, Ok(Ok(_)) | Ok(Err(_))), "never closed");
    server.stop().await;
}

#[tokio::test]
async fn a_panicking_handler_costs_one_request_not_the_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(connection::serve_connections(
        listener,
        connection::ConnectionGate::new(ConnectionLimits::default()),
        TrustedProxies::default(),
        None,
        Vec::new(),
        async move {
            let _ = stopped.await;
        },
        // A handler can fail before it returns its future (dossier's router answers most
        // requests right there) or while the future is polled.
        |_peer, request: hyper::Request<hyper::body::Incoming>| {
            if request.uri().path() == "/boom-at-once" {
                panic!("a bug in the synchronous part");
            }
            async move {
                if request.uri().path() == "/boom" {
                    panic!("a handler bug");
                }
                Response::new(dossier::serve::reply::Body::new(bytes::Bytes::from_static(
                    b"fine",
                )))
            }
        },
    ));
    let client = common::HttpClient::default();
    let url = |path: &str| format!("http://{addr}{path}");
    for boom in ["/boom", "/boom-at-once", "/boom"] {
        let boom = client
            .send(Method::GET, &url(boom), &[], bytes::Bytes::new())
            .await;
        assert_eq!(boom.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(boom.json()["error"], "server_error");
        let fine = client
            .send(Method::GET, &url("/ok"), &[], bytes::Bytes::new())
            .await;
        assert_eq!(fine.status, StatusCode::OK);
        assert_eq!(fine.text(), "fine");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// One client that opens all its connections at once gets them spread over every serving
/// thread, not all on the thread that happened to wake first.
#[tokio::test]
async fn connections_are_shared_out_evenly_between_threads() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // The answer names the thread that served it.
    let handler = |_peer, _request: hyper::Request<hyper::body::Incoming>| async move {
        let name = std::thread::current().name().unwrap_or("?").to_string();
        Response::new(dossier::serve::reply::Body::new(bytes::Bytes::from(name)))
    };
    let mut handoffs = Vec::new();
    let mut threads = Vec::new();
    for index in 1..3 {
        let (handoff, inbox) = connection::hand_off();
        handoffs.push(handoff);
        threads.push(
            std::thread::Builder::new()
                .name(format!("serving-{index}"))
                .spawn(move || {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap()
                        .block_on(connection::serve_handed_off(inbox, None, handler));
                })
                .unwrap(),
        );
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let accepting = std::thread::Builder::new()
        .name("serving-0".to_string())
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(connection::serve_connections(
                    listener,
                    connection::ConnectionGate::new(ConnectionLimits::default()),
                    TrustedProxies::default(),
                    None,
                    handoffs,
                    async move {
                        let _ = stopped.await;
                    },
                    handler,
                ))
        })
        .unwrap();

    let mut open = Vec::new();
    let mut served_by = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..9 {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        let request = format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        // The connection stays open, so read exactly one answer: its head, then
        // `content-length` bytes.
        let mut answer = Vec::new();
        let thread = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let mut buffer = [0u8; 1024];
                let read = stream.read(&mut buffer).await.unwrap();
                assert!(read > 0, "closed early");
                answer.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&answer).into_owned();
                let Some((head, body)) = text.split_once("\r\n\r\n") else {
                    continue;
                };
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length: "))
                    .unwrap()
                    .parse()
                    .unwrap();
                if body.len() >= length {
                    break body.to_string();
                }
            }
        })
        .await
        .expect("no answer within 10 s");
        *served_by.entry(thread).or_default() += 1;
        open.push(stream);
    }
    let expected: std::collections::BTreeMap<String, usize> = (0..3)
        .map(|index| (format!("serving-{index}"), 3))
        .collect();
    assert_eq!(served_by, expected);

    // Shutting down the accepting side ends the other threads too, once their
    // connections close.
    drop(open);
    let _ = stop.send(());
    accepting.join().unwrap().unwrap();
    for thread in threads {
        thread.join().unwrap();
    }
}

#[tokio::test]
async fn a_panic_while_compiling_keeps_the_last_good_version() {
    let server = TestServer::start().await;
    let before = server.get("/api/company", &[]).await;
    dossier::reload::reload_with(server.app.live_state(), |_| panic!("a compiler bug"));
    let health = server.get("/api/health", &[]).await.json();
    assert_eq!(health["content"]["status"], "error");
    assert_eq!(health["status"], "degraded");
    let message = health["content"]["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("a compiler bug"), "{message}");
    let after = server.get("/api/company", &[]).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_eq!(after.body, before.body);
    server.stop().await;
}

/// An assertion signed with the server's own key, with any times.
fn signed_assertion(server: &TestServer, state: &std::path::Path, iat: u64, exp: u64) -> String {
    let keys = Keyring::load(state).unwrap().unwrap();
    let signer = AssertionSigner::new(&keys.current().identity).unwrap();
    signer
        .sign(&AssertionClaims {
            iss: server.base.clone(),
            sub: "reg_x".into(),
            aud: server.base.clone(),
            jti: format!("as_far_{iat}"),
            iat,
            nbf: iat,
            exp,
            registration_type: "anonymous".into(),
        })
        .unwrap()
}

#[tokio::test]
async fn times_near_two_to_the_64_cannot_panic() {
    let state = tempfile::tempdir().unwrap();
    let state_path = state.path().to_path_buf();
    let server = TestServer::start_full(
        Source::Content(common::sample_content()),
        state,
        None,
        RateLimits::default(),
    )
    .await;
    let form = [("content-type", "application/x-www-form-urlencoded")];
    for (iat, exp) in [
        (u64::MAX - 10, u64::MAX),
        (u64::MAX, u64::MAX),
        (1 << 63, (1 << 63) + 60),
        (0, u64::MAX),
    ] {
        let assertion = signed_assertion(&server, &state_path, iat, exp);
        let body = format!("token={assertion}");
        let revoked = server
            .send(Method::POST, "/oauth2/revoke", &form, body)
            .await;
        assert_eq!(revoked.status, StatusCode::OK, "revoke {iat} {exp}");
        let body =
            format!("grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion={assertion}");
        let token = server
            .send(Method::POST, "/oauth2/token", &form, body)
            .await;
        assert_eq!(token.status, StatusCode::BAD_REQUEST, "token {iat} {exp}");
        assert_eq!(token.json()["error"], "invalid_grant");
    }
    assert_eq!(server.get("/api/health", &[]).await.status, StatusCode::OK);
    server.stop().await;
}

/// A disk that fails every write while `full` is set, as a full file system does.
#[derive(Debug)]
struct FullDisk(FileBackend, Arc<AtomicBool>);

impl FullDisk {
    fn check(&self) -> std::io::Result<()> {
        if self.1.load(Ordering::SeqCst) {
            return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
        }
        Ok(())
    }
}

impl StorageBackend for FullDisk {
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        self.0.read(offset, len)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.check()?;
        self.0.set_len(len)
    }
    fn sync_data(&self, eventual: bool) -> std::io::Result<()> {
        self.check()?;
        self.0.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.check()?;
        self.0.write(offset, data)
    }
}

async fn revoke(server: &TestServer, token: &str) -> common::Reply {
    server
        .send(
            Method::POST,
            "/oauth2/revoke",
            &[("content-type", "application/x-www-form-urlencoded")],
            format!("token={token}"),
        )
        .await
}

async fn client_credentials_token(server: &TestServer) -> String {
    let reply = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            "grant_type=client_credentials",
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    reply.json()["access_token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_full_disk_is_reported_and_recovered_from() {
    let state = tempfile::tempdir().unwrap();
    let full = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&full);
    let store = EmbeddedStore::open_with(
        state.path(),
        Box::new(move |file| {
            Ok(
                Box::new(FullDisk(FileBackend::new(file)?, Arc::clone(&flag)))
                    as Box<dyn StorageBackend>,
            )
        }),
    )
    .unwrap();
    let server = TestServer::start_with_store(state, Box::new(store)).await;
    assert_eq!(
        server.get("/api/health", &[]).await.json()["store"]["status"],
        "ok"
    );

    let revoked_before = client_credentials_token(&server).await;
    let first = revoke(&server, &revoked_before).await;
    assert_eq!(first.status, StatusCode::OK);

    full.store(true, Ordering::SeqCst);
    // Revoking again what is already on record writes nothing, so the full disk is no
    // obstacle.
    let again = revoke(&server, &revoked_before).await;
    assert_eq!(again.status, StatusCode::OK);
    let token = client_credentials_token(&server).await;
    let refused = revoke(&server, &token).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    let retry: u64 = refused.header("retry-after").parse().unwrap();
    assert!((1..=RETRY_INTERVAL.as_secs()).contains(&retry), "{retry}");
    let health = server.get("/api/health", &[]).await;
    assert_eq!(health.status, StatusCode::OK);
    let health = health.json();
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["store"]["status"], "degraded");
    let reason = health["store"]["error"].as_str().unwrap();
    assert!(!reason.is_empty(), "{health}");
    assert!(
        health["store"]["retry_in"].as_u64().unwrap() >= 1,
        "{health}"
    );
    // Reads are unaffected.
    assert_eq!(server.get("/api/company", &[]).await.status, StatusCode::OK);

    full.store(false, Ordering::SeqCst);
    let health = common::eventually(15, "the store recovers", || async {
        let health = server.get("/api/health", &[]).await.json();
        (health["store"]["status"] == "ok").then_some(health)
    })
    .await;
    assert_eq!(health["status"], "ok");
    let revoked = revoke(&server, &token).await;
    assert_eq!(revoked.status, StatusCode::OK);
    let call = server
        .get(
            "/api/company",
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(call.status, StatusCode::UNAUTHORIZED);
    server.stop().await;
}

#[test]
fn a_truncated_revocation_file_stops_the_server_with_a_clear_error() {
    let state = tempfile::tempdir().unwrap();
    {
        let store = EmbeddedStore::open(state.path()).unwrap();
        drop(store);
    }
    let path = state.path().join("revocations.redb");
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(4096).unwrap();
    drop(file);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
        .args(["serve", "--addr", "127.0.0.1:0", "--no-watch", "--state"])
        .arg(state.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the server started on a damaged revocation file");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("revocations.redb"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit() {
    let limits = RateLimits {
        register_per_minute: 2,
        token_per_minute: 120,
    };
    let server = start_with_limits(limits, |app| {
        app.with_proxies(TrustedProxies::new(&["127.0.0.1/32".into()], None).unwrap())
    })
    .await;
    let register = |forwarded: &'static str| {
        let server = &server;
        async move {
            server
                .send(
                    Method::POST,
                    "/agent/identity",
                    &[
                        ("content-type", "application/json"),
                        ("x-forwarded-for", forwarded),
                    ],
                    r#"{"type":"anonymous"}"#,
                )
                .await
                .status
        }
    };
    assert_eq!(register("198.51.100.1").await, StatusCode::OK);
    assert_eq!(register("198.51.100.1").await, StatusCode::OK);
    assert_eq!(
        register("198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // A forged left-hand entry does not buy a fresh bucket.
    assert_eq!(
        register("203.0.113.9, 198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(register("198.51.100.2").await, StatusCode::OK);
    server.stop().await;
}

#[test]
fn serve_refuses_a_bad_trusted_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let output = common::run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--state",
        state.to_str().unwrap(),
        "--trusted-proxy",
        "10.0.0.0/99",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("10.0.0.0/99"));
    // A usage error touches nothing: no keys made, no store opened.
    assert!(!state.exists());
}

#[tokio::test]
async fn serve_takes_the_hardening_flags() {
    let server = ServerProcess::start(&[
        "--no-watch",
        "--max-connections",
        "50",
        "--max-connections-per-client",
        "5",
        "--body-timeout",
        "3s",
        "--trusted-proxy",
        "10.0.0.0/8,192.0.2.1",
        "--client-ip-header",
        "CF-Connecting-IP",
        "--send-timeout",
        "5s",
        "--search-rate-limit",
        "7",
    ]);
    let client = common::HttpClient::default();
    let reply = client
        .send(
            Method::GET,
            &server.url("/api/health"),
            &[],
            bytes::Bytes::new(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    // The published limit is the one in force, not the default.
    let openapi = client
        .send(
            Method::GET,
            &server.url("/openapi.json"),
            &[],
            bytes::Bytes::new(),
        )
        .await
        .json();
    let search = openapi["paths"]["/api/search"]["get"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(search.contains("7 searches a minute"), "{search}");
}

#[tokio::test]
async fn json_rpc_ids_come_back_exactly_as_sent() {
    let server = TestServer::start().await;
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    for id in ["1267650600228229401496703205376", "1.50", "\"\\u00e9\""] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let reply = server.send(Method::POST, "/mcp", &headers, body).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert!(
            reply.text().contains(&format!("\"id\":{id},")),
            "{id}: {}",
            reply.text()
        );
    }
    server.stop().await;
}

/// A search is the one read computed per request (a pass over the index): one address gets
/// a share of them, over HTTP, NLWeb's `/ask` and MCP alike, while its other reads and other
/// clients go on.
#[tokio::test]
async fn one_client_cannot_run_unlimited_searches() {
    let server = start_configured(|app| {
        app.with_search_limit(3)
            .with_proxies(TrustedProxies::new(&["127.0.0.1/32".into()], None).unwrap())
    })
    .await;
    let search = |forwarded: &'static str| {
        let server = &server;
        async move {
            server
                .get(
                    "/api/search?q=calibration",
                    &[("x-forwarded-for", forwarded)],
                )
                .await
        }
    };
    for _ in 0..2 {
        assert_eq!(search("198.51.100.1").await.status, StatusCode::OK);
    }
    // The third search of the minute is the MCP tool's.
    let call = |forwarded: &'static str| {
        let server = &server;
        async move {
            let body = serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "search_company_info", "arguments": {"query": "calibration"}}
            });
            server
                .send(
                    Method::POST,
                    "/mcp",
                    &[
                        ("content-type", "application/json"),
                        ("accept", "application/json, text/event-stream"),
                        ("mcp-protocol-version", "2025-06-18"),
                        ("x-forwarded-for", forwarded),
                    ],
                    body.to_string(),
                )
                .await
                .json()
        }
    };
    let allowed = call("198.51.100.1").await;
    assert_eq!(allowed["result"]["isError"], false, "{allowed}");
    let refused = search("198.51.100.1").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.json()["error"], "rate_limit_exceeded");
    let wait: u64 = refused.header("retry-after").parse().unwrap();
    assert!((1..=20).contains(&wait), "{wait}");
    let refused = call("198.51.100.1").await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let asked = server
        .get(
            "/ask?query=calibration",
            &[("x-forwarded-for", "198.51.100.1")],
        )
        .await;
    assert_eq!(asked.status, StatusCode::TOO_MANY_REQUESTS);
    // Posted questions too, refused before their body is read.
    let posted = server
        .send(
            Method::POST,
            "/ask",
            &[
                ("content-type", "application/json"),
                ("x-forwarded-for", "198.51.100.1"),
            ],
            r#"{"query": "calibration"}"#,
        )
        .await;
    assert_eq!(posted.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("too many searches"));
    // Precompiled reads are not counted, and another address has its own share.
    let company = server
        .get("/api/company", &[("x-forwarded-for", "198.51.100.1")])
        .await;
    assert_eq!(company.status, StatusCode::OK);
    assert_eq!(search("198.51.100.2").await.status, StatusCode::OK);
    let asked = server
        .get(
            "/ask?query=calibration",
            &[("x-forwarded-for", "198.51.100.2")],
        )
        .await;
    assert_eq!(asked.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn a_request_under_way_when_the_server_stops_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let content = common::sample_content();
    let mut server = ServerProcess::start(&[
        "--no-watch",
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    let addr = server.base.trim_start_matches("http://").to_string();

    // A request whose body is half sent when the server is told to stop. It asks for
    // `100 Continue`, which hyper sends once the handler reads the body: from then on the
    // request is certainly under way.
    let body = b"grant_type=client_credentials";
    let mut under_way = TcpStream::connect(&addr).await.unwrap();
    under_way
        .write_all(
            format!(
                "POST /oauth2/token HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut interim = Vec::new();
    while !interim.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        under_way.read_exact(&mut byte).await.unwrap();
        interim.push(byte[0]);
    }
    assert!(interim.starts_with(b"HTTP/1.1 100"), "{interim:?}");
    under_way.write_all(&body[..10]).await.unwrap();
    // An idle kept-alive connection beside it.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    // Shutdown has begun once the server closes the idle connection.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), idle.read_to_end(&mut rest))
        .await
        .expect("the idle connection was closed at shutdown")
        .unwrap();

    // The rest of the body arrives after the signal, and the request is answered in full.
    under_way.write_all(&body[10..]).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), under_way.read_to_end(&mut answer))
        .await
        .expect("the request under way was answered and its connection closed")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    assert!(answer.contains("\"access_token\""), "{answer}");

    // The server then exits cleanly.
    let exited = tokio::task::spawn_blocking(move || {
        let status = server.child.wait().unwrap();
        (status, server)
    });
    let (status, _server) = tokio::time::timeout(Duration::from_secs(20), exited)
        .await
        .expect("the server exited")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_partial_http2_preface_does_not_hold_the_server() {
    // A cleartext client that starts the HTTP/2 preface and stops: once after closing its
    // side, once keeping it open. Both connections are closed by the server (the first at
    // once, the second after the header timeout), and nothing spins meanwhile. The waits
    // are bounds for the test, not measurements.
    let server = TestServer::start().await;
    let addr = host_port(&server);
    let mut closed = TcpStream::connect(&addr).await.unwrap();
    closed.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    closed.shutdown().await.unwrap();
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    silent.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    for (what, stream) in [("closed", &mut closed), ("silent", &mut silent)] {
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(
            connection::HEADER_READ_TIMEOUT + Duration::from_secs(20),
            stream.read_to_end(&mut rest),
        )
        .await;
        assert!(ended.is_ok(), "the {what} connection was never closed");
    }
    // And the server answers as before.
    let mut client = TcpStream::connect(&addr).await.unwrap();
    client
        .write_all(
            format!("GET /api/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"));
    server.stop().await;
}
