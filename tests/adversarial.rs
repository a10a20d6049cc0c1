//! The adversarial client suite: clients that misbehave on purpose, over real sockets, each
//! crossing one row of the connection budget (docs/operate.md, "Connection budget"). A client that
//! stops reading, or holds HTTP/2 answers with a zero window, must lose its connection after
//! the send timeout, and must not make the server hold more than one connection's queue of
//! answers; a query past the bounds is refused before anything reads it.
//!
//! The servers here answer every request with a large body from a handler that counts its
//! calls, through the same connection layer `dossier serve` uses, with a send timeout of
//! one second so the suite stays quick. Waits are upper bounds on liveness, never timings.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::TestServer;
use dossier::serve::client::TrustedProxies;
use dossier::serve::connection::{self, ConnectionLimits, HTTP2_IDLE_TIMEOUT, SHUTDOWN_GRACE};
use dossier::serve::reply::Body;
use dossier::serve::tls::{Tls, TlsFiles};
use hyper::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const SEND_TIMEOUT: Duration = Duration::from_secs(1);
/// Long enough for any connection this suite expects to end; it ends far sooner.
const LIVENESS: Duration = Duration::from_secs(30);

/// A server whose every answer is `size` bytes, and how many answers it has made.
struct BigAnswers {
    addr: String,
    calls: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl BigAnswers {
    async fn start(size: usize, tls: Option<Arc<Tls>>) -> BigAnswers {
        BigAnswers::start_behind(size, tls, TrustedProxies::default()).await
    }

    /// The same, with `proxies` as the operator's trusted proxies.
    async fn start_behind(
        size: usize,
        tls: Option<Arc<Tls>>,
        proxies: TrustedProxies,
    ) -> BigAnswers {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let body = Bytes::from(vec![b'x'; size]);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(connection::serve_connections(
            listener,
            connection::ConnectionGate::new(ConnectionLimits {
                send_timeout: SEND_TIMEOUT,
                ..ConnectionLimits::default()
            }),
            proxies,
            tls,
            Vec::new(),
            async move {
                let _ = stopped.await;
            },
            move |_peer, _request: Request<hyper::body::Incoming>| {
                counted.fetch_add(1, Ordering::SeqCst);
                // A fresh copy, as a computed answer (an MCP result) would be: memory the
                // connection pins for as long as it holds the answer.
                let body = Body::new(Bytes::copy_from_slice(&body));
                async move { Response::new(body) }
            },
        ));
        BigAnswers {
            addr,
            calls,
            stop: Some(stop),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Drop for BigAnswers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A TCP connection that can take only a few KiB before its receive window is full.
async fn small_window(addr: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

/// Reads until the server ends the connection (EOF or reset), or `LIVENESS` passes with
/// nothing more; the bytes read, and whether the server ended it.
async fn drain<S: AsyncRead + Unpin>(stream: &mut S) -> (usize, bool) {
    let mut total = 0;
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        match tokio::time::timeout(LIVENESS, stream.read(&mut buffer)).await {
            Err(_) => return (total, false),
            Ok(Ok(0)) | Ok(Err(_)) => return (total, true),
            Ok(Ok(n)) => total += n,
        }
    }
}

/// After reading nothing for longer than the send timeout, the client finds its
/// connection ended, with less than the `asked` bytes ever sent.
async fn is_cut_off<S: AsyncRead + Unpin>(stream: &mut S, asked: usize) {
    tokio::time::sleep(SEND_TIMEOUT * 3).await;
    let (read, ended) = drain(stream).await;
    assert!(ended, "the connection was never ended");
    assert!(
        read < asked,
        "all {read} bytes were sent: nothing was cut off"
    );
}

fn pipelined_gets(count: usize) -> Vec<u8> {
    "GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n"
        .repeat(count)
        .into_bytes()
}

/// HTTP/1.1: 8 pipelined GETs of 4 MiB, and a client that reads nothing. The server's
/// write makes no progress, so after the send timeout the connection is ended: what the
/// client can still read is far less than the 32 MiB it asked for.
#[tokio::test]
async fn http1_a_client_that_stops_reading_loses_its_connection() {
    let size = 4 << 20;
    let server = BigAnswers::start(size, None).await;
    let mut stream = small_window(&server.addr).await;
    stream.write_all(&pipelined_gets(8)).await.unwrap();
    is_cut_off(&mut stream, 8 * size).await;
    // One request at a time on HTTP/1: the stalled answer holds up the rest.
    assert!(server.calls() <= 2, "{} answers made", server.calls());
}

/// The same over TLS: the deadline is on the TCP stream under rustls, so it sees the
/// bytes that actually leave.
#[tokio::test]
async fn tls_a_client_that_stops_reading_loses_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let files = TlsFiles {
        cert: dir.path().join("cert.pem"),
        key: dir.path().join("key.pem"),
    };
    std::fs::write(&files.cert, certified.cert.pem()).unwrap();
    std::fs::write(&files.key, certified.signing_key.serialize_pem()).unwrap();
    let size = 4 << 20;
    let server = BigAnswers::start(size, Some(Arc::new(Tls::new(files).unwrap()))).await;

    let mut roots = rustls::RootCertStore::empty();
    roots.add(certified.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = small_window(&server.addr).await;
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut stream = connector.connect(name, tcp).await.unwrap();
    stream.write_all(&pipelined_gets(8)).await.unwrap();
    stream.flush().await.unwrap();
    is_cut_off(&mut stream, 8 * size).await;
}

/// An h2c connection over `addr` whose streams open with `window` bytes of flow-control
/// window, and never more: the client never releases capacity.
async fn h2_with_window(
    addr: &str,
    window: u32,
) -> (
    h2::client::SendRequest<Bytes>,
    tokio::task::JoinHandle<Result<(), h2::Error>>,
) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, connection) = h2::client::Builder::new()
        .initial_window_size(window)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    (client, tokio::spawn(connection))
}

/// Opens `count` GET streams and keeps their responses unread.
async fn open_streams(
    client: &mut h2::client::SendRequest<Bytes>,
    count: usize,
) -> Vec<h2::client::ResponseFuture> {
    let mut responses = Vec::new();
    for index in 0..count {
        let request = Request::get(format!("http://localhost/big/{index}"))
            .body(())
            .unwrap();
        let ready = match tokio::time::timeout(LIVENESS, client.clone().ready()).await {
            Ok(Ok(ready)) => ready,
            // The server ended the connection already.
            _ => break,
        };
        *client = ready;
        match client.send_request(request, true) {
            Ok((response, _)) => responses.push(response),
            Err(_) => break,
        }
    }
    responses
}

/// HTTP/2 with `SETTINGS_INITIAL_WINDOW_SIZE = 0` and 40 requests for 2 MiB answers, never
/// a `WINDOW_UPDATE`. The connection's queue of answers is capped, so the server makes one
/// answer (the next request waits for room), not 40; the stalled answer makes no progress
/// for the send timeout, so the connection is ended.
#[tokio::test]
async fn http2_a_zero_window_cannot_pin_answers_or_the_connection() {
    let server = BigAnswers::start(2 << 20, None).await;
    let (mut client, connection) = h2_with_window(&server.addr, 0).await;
    let responses = open_streams(&mut client, 40).await;
    assert!(!responses.is_empty());
    let ended = tokio::time::timeout(LIVENESS, connection).await;
    assert!(ended.is_ok(), "the connection was never ended");
    assert!(
        server.calls() <= 2,
        "{} answers of 2 MiB were made for a client that reads none",
        server.calls()
    );
}

/// A trusted proxy's HTTP/2 connection carries many clients' streams: one of them not
/// reading must not cost the others their connection, so a stalled answer does not end it
/// (the proxy's own timeouts govern its clients; the idle and write deadlines still hold).
#[tokio::test]
async fn http2_a_trusted_proxys_connection_is_not_ended_for_one_stalled_answer() {
    let proxies = TrustedProxies::new(&["127.0.0.1".into()], None).unwrap();
    let server = BigAnswers::start_behind(2 << 20, None, proxies).await;
    let (mut client, connection) = h2_with_window(&server.addr, 0).await;
    let responses = open_streams(&mut client, 2).await;
    assert_eq!(responses.len(), 2);
    tokio::time::sleep(SEND_TIMEOUT * 3).await;
    assert!(
        !connection.is_finished(),
        "the proxy's connection was ended"
    );
}

/// A one-byte window lets the server hand each small answer to HTTP/2 whole, so no answer
/// is in progress and the connection goes idle; but HTTP/2 cannot finish sending, so after
/// GOAWAY the connection would wait for ever. It is dropped after the shutdown grace.
#[tokio::test]
async fn http2_a_connection_that_cannot_finish_after_goaway_is_dropped() {
    let server = BigAnswers::start(10 * 1024, None).await;
    let (mut client, connection) = h2_with_window(&server.addr, 1).await;
    let responses = open_streams(&mut client, 4).await;
    assert_eq!(responses.len(), 4);
    let ended =
        tokio::time::timeout(HTTP2_IDLE_TIMEOUT + SHUTDOWN_GRACE + LIVENESS, connection).await;
    assert!(ended.is_ok(), "the connection was never ended");
    assert_eq!(server.calls(), 4);
}

/// A client that readily reads gets every answer, however many it asks for at once: the
/// queue cap makes requests wait for room, it never refuses them.
#[tokio::test]
async fn http2_a_client_that_reads_gets_every_answer() {
    let size = 512 * 1024;
    let server = BigAnswers::start(size, None).await;
    let tcp = TcpStream::connect(&server.addr).await.unwrap();
    // Windows as a browser opens them: reading the answers one after the other must not
    // leave the connection's window spent on answers not read yet (with HTTP/2's 64 KiB
    // default that deadlocks the client, and the send timeout rightly ends it).
    let (client, connection) = h2::client::Builder::new()
        .initial_connection_window_size(16 << 20)
        .initial_window_size(1 << 20)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut client = client;
    let responses = open_streams(&mut client, 20).await;
    assert_eq!(responses.len(), 20);
    for response in responses {
        let response = tokio::time::timeout(LIVENESS, response)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let mut body = response.into_body();
        let mut received = 0;
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            received += chunk.len();
            body.flow_control().release_capacity(chunk.len()).unwrap();
        }
        assert_eq!(received, size);
    }
    assert_eq!(server.calls(), 20);
}

/// A frame header that promises more payload than ever arrives: the connection has no
/// request in progress, so it is closed like any idle one.
#[tokio::test]
async fn http2_a_partial_frame_does_not_hold_the_connection() {
    let server = BigAnswers::start(16, None).await;
    let mut stream = TcpStream::connect(&server.addr).await.unwrap();
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    // An empty SETTINGS frame, then the header of a HEADERS frame of 1000 bytes on stream 1,
    // with only 10 bytes of its payload.
    stream
        .write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0])
        .await
        .unwrap();
    stream
        .write_all(&[0, 0x03, 0xe8, 1, 4, 0, 0, 0, 1])
        .await
        .unwrap();
    stream.write_all(&[0u8; 10]).await.unwrap();
    let ended = tokio::time::timeout(
        HTTP2_IDLE_TIMEOUT + SHUTDOWN_GRACE + LIVENESS,
        drain(&mut stream),
    )
    .await;
    assert!(
        matches!(ended, Ok((_, true))),
        "the connection was never ended"
    );
    assert_eq!(server.calls(), 0);
}

/// HTTP/2: a connection's MCP bodies are read a few at a time. Four streams that send half
/// a body and stop hold every turn, so a fifth, complete request is read only once one of
/// them has timed out (408): the server never holds more than four bodies of one connection.
#[tokio::test]
async fn http2_only_a_few_mcp_bodies_of_a_connection_are_read_at_once() {
    use dossier::serve::connection::MAX_BODIES_READ_AT_ONCE;
    let server = TestServer::start_configured(
        dossier::live::Source::Content(common::sample_content()),
        tempfile::tempdir().unwrap(),
        None,
        dossier::auth::admission::RateLimits::default(),
        |app| {
            let connections = app.connections();
            app.with_connections(ConnectionLimits {
                body_timeout: Duration::from_secs(1),
                ..connections
            })
        },
    )
    .await;
    let addr = server.base.trim_start_matches("http://").to_string();
    let tcp = TcpStream::connect(&addr).await.unwrap();
    let (mut client, connection) = h2::client::Builder::new()
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    tokio::spawn(connection);
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let post = |length: usize| {
        Request::post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("content-length", length.to_string())
            .body(())
            .unwrap()
    };
    // Each order is (which request, its status), in the order the answers arrive.
    let (order_tx, mut order_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut held = Vec::new();
    for index in 0..MAX_BODIES_READ_AT_ONCE {
        client = client.ready().await.unwrap();
        let (response, mut body) = client.send_request(post(call.len()), false).unwrap();
        body.send_data(Bytes::from_static(&call[..10]), false)
            .unwrap();
        held.push(body);
        let order = order_tx.clone();
        tokio::spawn(async move {
            let status = response.await.map(|r| r.status().as_u16()).unwrap_or(0);
            let _ = order.send((index, status));
        });
    }
    // Give the server the time to start reading those four bodies.
    tokio::time::sleep(Duration::from_millis(300)).await;
    client = client.ready().await.unwrap();
    let (response, mut body) = client.send_request(post(call.len()), false).unwrap();
    body.send_data(Bytes::from_static(call), true).unwrap();
    tokio::spawn(async move {
        let status = response.await.map(|r| r.status().as_u16()).unwrap_or(0);
        let _ = order_tx.send((MAX_BODIES_READ_AT_ONCE, status));
    });
    let first = tokio::time::timeout(LIVENESS, order_rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        first.0 < MAX_BODIES_READ_AT_ONCE && first.1 == 408,
        "the first answer was {first:?}: the fifth body was read while four held every turn"
    );
    let mut fifth = None;
    while let Ok(Some((index, status))) = tokio::time::timeout(LIVENESS, order_rx.recv()).await {
        if index == MAX_BODIES_READ_AT_ONCE {
            fifth = Some(status);
            break;
        }
    }
    assert_eq!(
        fifth,
        Some(200),
        "the complete request is answered once a turn is free"
    );
    drop(held);
    server.stop().await;
}

/// Queries past the bounds are refused on every endpoint, before anything reads them:
/// 414 for a long one, 400 for too many parameters; within the bounds they still work.
#[tokio::test]
async fn huge_queries_are_refused_on_every_endpoint() {
    let server = TestServer::start().await;
    let long = format!("q={}", "a".repeat(5000));
    let many: Vec<String> = (0..17).map(|i| format!("p{i}=1")).collect();
    let many = many.join("&");
    // Thousands of distinct parameters in about 48 KB, as in the quadratic duplicate check.
    let flood: Vec<String> = (0..10_000).map(|i| format!("{i:x}")).collect();
    let flood = flood.join("&");
    for path in ["/api/company", "/api/search", "/", "/mcp", "/api/health"] {
        for (query, status) in [
            (&long, StatusCode::URI_TOO_LONG),
            (&many, StatusCode::BAD_REQUEST),
            (&flood, StatusCode::URI_TOO_LONG),
        ] {
            let reply = server
                .send(Method::GET, &format!("{path}?{query}"), &[], "")
                .await;
            assert_eq!(reply.status, status, "{path}");
            assert_eq!(reply.json()["error"], "invalid_request", "{path}");
        }
    }
    let fine = server
        .send(Method::GET, "/api/search?q=company&limit=5", &[], "")
        .await;
    assert_eq!(fine.status, StatusCode::OK);
    server.stop().await;
}
