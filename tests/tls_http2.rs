//! TLS and HTTP/2 over real sockets against the `dossier` binary: a certificate made with
//! rcgen, HTTP/2 chosen by ALPN and HTTP/1.1 for a client that asks for it, h2c by prior
//! knowledge on cleartext, HTTP/1's limits on HTTP/2 too (idle connections closed
//! included), and a renewed certificate served without a restart.

use crate::common;

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use common::ServerProcess;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// A fresh self-signed certificate for `localhost` and 127.0.0.1, written as PEM.
fn write_certificate(dir: &Path, name: &str) -> CertificateDer<'static> {
    let certified = rcgen::generate_simple_self_signed(vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        name.to_string(),
    ])
    .unwrap();
    // Written to a temporary name and renamed, as a renewal tool does.
    std::fs::write(
        dir.join("key.pem.new"),
        certified.signing_key.serialize_pem(),
    )
    .unwrap();
    std::fs::write(dir.join("cert.pem.new"), certified.cert.pem()).unwrap();
    std::fs::rename(dir.join("key.pem.new"), dir.join("key.pem")).unwrap();
    std::fs::rename(dir.join("cert.pem.new"), dir.join("cert.pem")).unwrap();
    certified.cert.der().clone()
}

fn start_tls(dir: &Path, extra: &[&str]) -> ServerProcess {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    let state = dir.join("state");
    let content = common::sample_content();
    let mut args = vec![
        "--no-watch",
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start(&args)
}

fn start_cleartext(dir: &Path) -> ServerProcess {
    let state = dir.join("state");
    let content = common::sample_content();
    ServerProcess::start(&[
        "--no-watch",
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ])
}

fn host_port(server: &ServerProcess) -> String {
    server
        .base
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .to_string()
}

/// A TLS connection offering `alpn`, trusting only `root`.
async fn connect_tls(
    server: &ServerProcess,
    root: &CertificateDer<'static>,
    alpn: &[&[u8]],
) -> TlsStream<TcpStream> {
    try_connect_tls(server, root, alpn)
        .await
        .expect("TLS handshake")
}

async fn try_connect_tls(
    server: &ServerProcess,
    root: &CertificateDer<'static>,
    alpn: &[&[u8]],
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(root.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(host_port(server)).await.unwrap();
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

/// What came back, read whole.
struct Answer {
    status: StatusCode,
    headers: hyper::HeaderMap,
    body: Bytes,
}

async fn read(response: Response<hyper::body::Incoming>) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body,
    }
}

/// An HTTP/2 connection over `io` (TLS or plain TCP).
async fn http2<B>(
    io: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> hyper::client::conn::http2::SendRequest<B>
where
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .expect("HTTP/2 handshake");
    tokio::spawn(connection);
    sender
}

/// `GET /api/health`, a request any connection can make at any time.
fn health(server: &ServerProcess) -> Request<Empty<Bytes>> {
    get(server, "/api/health").body(Empty::new()).unwrap()
}

fn get(server: &ServerProcess, path: &str) -> hyper::http::request::Builder {
    Request::get(server.url(path))
}

#[tokio::test]
async fn https_speaks_http2_by_alpn_and_http1_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = write_certificate(dir.path(), "first.example");
    let server = start_tls(dir.path(), &[]);
    assert!(
        server.base.starts_with("https://127.0.0.1:"),
        "{}",
        server.base
    );

    let tls = connect_tls(&server, &root, &[b"h2", b"http/1.1"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut h2 = http2(tls).await;
    let company = read(
        h2.send_request(
            get(&server, "/api/company")
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(company.status, StatusCode::OK);
    let document: serde_json::Value = serde_json::from_slice(&company.body).unwrap();
    assert!(document["company"]["name"].is_string());
    // The documents name the https base URL they are served from.
    assert!(document["pages"][0]["url"]
        .as_str()
        .unwrap()
        .starts_with(&server.base));
    let etag = company.headers["etag"].to_str().unwrap().to_string();
    let unchanged = read(
        h2.send_request(
            get(&server, "/api/company")
                .header("if-none-match", &etag)
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    assert!(unchanged.body.is_empty());

    // A POST with a body over HTTP/2: MCP.
    let mut h2 = http2(connect_tls(&server, &root, &[b"h2"]).await).await;
    let mcp = read(
        h2.send_request(
            Request::post(server.url("/mcp"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(Full::new(Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                )))
                .unwrap(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(mcp.status, StatusCode::OK);
    let tools: serde_json::Value = serde_json::from_slice(&mcp.body).unwrap();
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 7);

    // A client that offers only HTTP/1.1 gets it.
    let tls = connect_tls(&server, &root, &[b"http/1.1"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (mut h1, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(connection);
    let health = read(
        h1.send_request(
            get(&server, "/api/health")
                .header("host", host_port(&server))
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.headers["content-type"], "application/json");

    // Cleartext on the TLS port is not served.
    let mut plain = TcpStream::connect(host_port(&server)).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut plain, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_to_end(&mut plain, &mut answer),
    )
    .await;
    assert!(!String::from_utf8_lossy(&answer).contains("200 OK"));
}

#[tokio::test]
async fn cleartext_speaks_h2c_by_prior_knowledge_and_http1() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_cleartext(dir.path());
    let tcp = TcpStream::connect(host_port(&server)).await.unwrap();
    let mut h2 = http2(tcp).await;
    let page = read(
        h2.send_request(
            get(&server, "/about")
                .header("accept", "text/markdown")
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/markdown"));
    let client = common::HttpClient::default();
    let reply = client
        .send(
            hyper::Method::GET,
            &server.url("/api/health"),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn an_http2_connection_without_requests_is_closed() {
    use dossier::serve::connection::HTTP2_IDLE_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let server = start_cleartext(dir.path());
    let tcp = TcpStream::connect(host_port(&server)).await.unwrap();
    let (mut h2, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("HTTP/2 handshake");
    let connection = tokio::spawn(connection);

    // A connection in use stays open past the idle timeout: it is idleness that counts,
    // not age.
    let in_use_until = tokio::time::Instant::now() + HTTP2_IDLE_TIMEOUT + Duration::from_secs(4);
    while tokio::time::Instant::now() < in_use_until {
        let health = h2
            .send_request(health(&server))
            .await
            .expect("a connection in use is not closed");
        assert_eq!(health.status(), StatusCode::OK);
        tokio::time::sleep(HTTP2_IDLE_TIMEOUT / 5).await;
    }

    // Then silence: the server ends the connection (GOAWAY, then close). The wait is a
    // bound for the test, not a measurement.
    let ended =
        tokio::time::timeout(HTTP2_IDLE_TIMEOUT + Duration::from_secs(20), connection).await;
    assert!(ended.is_ok(), "an idle HTTP/2 connection stayed open");
    assert!(
        h2.send_request(health(&server)).await.is_err(),
        "the closed connection still took a request"
    );
}

/// A request body that sends its first bytes and then nothing, ever.
struct Stalled {
    sent: bool,
}

impl Body for Stalled {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.sent {
            return Poll::Pending;
        }
        self.sent = true;
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"grant_type=")))))
    }
}

#[tokio::test]
async fn http2_has_http1s_limits() {
    let dir = tempfile::tempdir().unwrap();
    let root = write_certificate(dir.path(), "limits.example");
    let server = start_tls(dir.path(), &["--body-timeout", "1s"]);

    // A body that never finishes: 408 after the deadline, as on HTTP/1.
    let mut h2 = http2(connect_tls(&server, &root, &[b"h2"]).await).await;
    let stalled = tokio::time::timeout(
        Duration::from_secs(10),
        h2.send_request(
            Request::post(server.url("/oauth2/token"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Stalled { sent: false })
                .unwrap(),
        ),
    )
    .await
    .expect("the server answers a stalled body")
    .unwrap();
    assert_eq!(stalled.status(), StatusCode::REQUEST_TIMEOUT);

    // A header block beyond 64 KiB is refused, and the connection still serves.
    let mut h2 = http2(connect_tls(&server, &root, &[b"h2"]).await).await;
    let huge = "x".repeat(70 * 1024);
    let refused = h2
        .send_request(
            get(&server, "/api/health")
                .header("x-huge", huge.as_str())
                .body(Empty::<Bytes>::new())
                .unwrap(),
        )
        .await;
    assert_eq!(
        refused.unwrap().status(),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
    );
    let mut h2 = http2(connect_tls(&server, &root, &[b"h2"]).await).await;
    let health = h2.send_request(health(&server)).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);

    // More streams at once than the server allows: the extra ones wait, none fails.
    let h2 = http2::<Empty<Bytes>>(connect_tls(&server, &root, &[b"h2"]).await).await;
    let requests = (0..150).map(|_| {
        let mut sender = h2.clone();
        let request = get(&server, "/api/company").body(Empty::new()).unwrap();
        async move { sender.send_request(request).await.map(|r| r.status()) }
    });
    let statuses = futures_util::future::join_all(requests).await;
    assert!(statuses
        .iter()
        .all(|status| matches!(status, Ok(StatusCode::OK))));
}

#[tokio::test]
async fn a_renewed_certificate_is_served_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_certificate(dir.path(), "first.example");
    let server = start_tls(dir.path(), &[]);
    let served =
        |tls: &TlsStream<TcpStream>| tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    assert_eq!(served(&connect_tls(&server, &first, &[b"h2"]).await), first);

    // A half-written key (the renewal's first step) keeps the old pair serving.
    std::fs::write(dir.path().join("key.pem"), "-----BEGIN PRIVATE KEY-----\n").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(served(&connect_tls(&server, &first, &[b"h2"]).await), first);

    let second = write_certificate(dir.path(), "second.example");
    let renewed = common::eventually(15, "the renewed certificate", || {
        let (server, second) = (&server, &second);
        async move {
            // Until the server presents the new certificate, trusting it fails the handshake.
            let tls = try_connect_tls(server, second, &[b"h2"]);
            match tokio::time::timeout(Duration::from_secs(2), tls).await {
                Ok(Ok(tls)) => Some(served(&tls)),
                _ => None,
            }
        }
    })
    .await;
    assert_eq!(renewed, second);
}

#[test]
fn serve_refuses_a_key_that_does_not_fit_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    write_certificate(dir.path(), "a.example");
    write_certificate(other.path(), "b.example");
    let cert = dir.path().join("cert.pem");
    let key = other.path().join("key.pem");
    let output = common::run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(key.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("does not fit"), "{stderr}");
    // One of the pair alone is a usage error.
    let output = common::run_dossier(&["serve", "--tls-cert", cert.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
}
