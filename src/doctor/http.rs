//! The one HTTP client dossier has: `doctor` and `check --external` talk to servers they do
//! not control, so every request is bounded here — a request budget, a deadline for each
//! phase, a cap on the bytes read — and answers come back exactly as served: no redirect
//! followed, no body decompressed, every header kept, because those are what is checked.
//!
//! One connection per request over HTTP/1.1 (TLS with the Mozilla roots for `https`). A
//! checker makes a few dozen requests; connection reuse would save little and would hide
//! what a fresh agent meets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, HOST, USER_AGENT};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// What identifies these requests in a server's logs.
pub const AGENT: &str = concat!("dossier-doctor/", env!("CARGO_PKG_VERSION"));

/// The limits every request is held to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests this client may send in all; the next one fails with [`HttpError::Budget`].
    pub requests: usize,
    /// Connecting (DNS, TCP and TLS together).
    pub connect: Duration,
    /// From the request sent to the last byte of the answer.
    pub answer: Duration,
    /// Bytes of a body read before the answer is refused as too large.
    pub body_bytes: usize,
    /// Bytes of all bodies together: a server cannot fill memory one capped answer at a time.
    pub total_bytes: usize,
    /// The whole run: no request starts after it, however slowly a server answers each one.
    pub run: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            requests: 100,
            connect: Duration::from_secs(5),
            answer: Duration::from_secs(10),
            body_bytes: 8 << 20,
            total_bytes: 64 << 20,
            run: Duration::from_secs(180),
        }
    }
}

/// Why no answer came.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("not an http or https URL: {0}")]
    Url(String),
    #[error("the budget of {0} requests is spent")]
    Budget(usize),
    #[error("the run's time ({0:?}) is up")]
    RunOver(Duration),
    #[error("could not connect to {host}: {reason}")]
    Connect { host: String, reason: String },
    #[error("TLS with {host} failed: {reason}")]
    Tls { host: String, reason: String },
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the answer is over {0} bytes")]
    TooLarge(usize),
    #[error("HTTP: {0}")]
    Protocol(String),
}

/// An answer as it was served.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    /// A header's value as text; empty when absent, and all values joined with `, ` when
    /// repeated (as RFC 9110 allows for list headers).
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The media type without parameters, lowercased.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A bounded client. Cheap to share; the budget is shared by its clones.
#[derive(Clone)]
pub struct Client {
    limits: Limits,
    sent: Arc<AtomicUsize>,
    /// Body bytes read so far, against [`Limits::total_bytes`].
    read: Arc<AtomicUsize>,
    started: std::time::Instant,
    tls: tokio_rustls::TlsConnector,
}

impl Client {
    pub fn new(limits: Limits) -> Result<Client, HttpError> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|error| HttpError::Tls {
            host: String::new(),
            reason: error.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Client {
            limits,
            sent: Arc::new(AtomicUsize::new(0)),
            read: Arc::new(AtomicUsize::new(0)),
            started: std::time::Instant::now(),
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    /// How many requests were sent.
    pub fn sent(&self) -> usize {
        self.sent.load(Ordering::Relaxed)
    }

    /// Sends one request to an absolute `http` or `https` URL.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<Response, HttpError> {
        self.request(method, url, headers, body, true).await
    }

    /// Sends a bodiless request and keeps only the status and headers of the answer (its
    /// body, however large, is not read): for checking that a link answers.
    pub async fn status(&self, method: Method, url: &str) -> Result<Response, HttpError> {
        self.request(method, url, &[], Bytes::new(), false).await
    }

    async fn request(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Bytes,
        read_body: bool,
    ) -> Result<Response, HttpError> {
        let uri: Uri = url.parse().map_err(|_| HttpError::Url(url.to_string()))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(HttpError::Url(url.to_string())),
        };
        let host = uri
            .host()
            .ok_or_else(|| HttpError::Url(url.to_string()))?
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let authority = uri
            .authority()
            .map(|authority| authority.as_str().to_string())
            .unwrap_or_else(|| host.clone());
        let target = uri
            .path_and_query()
            .map(|path| path.as_str().to_string())
            .unwrap_or_else(|| "/".to_string());

        if self.started.elapsed() >= self.limits.run {
            return Err(HttpError::RunOver(self.limits.run));
        }
        let limit = self.limits.requests;
        if self
            .sent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |sent| {
                (sent < limit).then_some(sent + 1)
            })
            .is_err()
        {
            return Err(HttpError::Budget(limit));
        }

        let mut request = Request::builder()
            .method(method)
            .uri(target)
            .body(Full::new(body))
            .map_err(|error| HttpError::Protocol(error.to_string()))?;
        let fields = request.headers_mut();
        fields.insert(
            HOST,
            HeaderValue::from_str(&authority).map_err(|_| HttpError::Url(url.to_string()))?,
        );
        fields.insert(USER_AGENT, HeaderValue::from_static(AGENT));
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|error| HttpError::Protocol(error.to_string()))?;
            let value = HeaderValue::from_str(value)
                .map_err(|error| HttpError::Protocol(error.to_string()))?;
            fields.append(name, value);
        }

        let bare_host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let connect = async {
            let stream = TcpStream::connect((bare_host.as_str(), port))
                .await
                .map_err(|error| HttpError::Connect {
                    host: authority.clone(),
                    reason: error.to_string(),
                })?;
            let _ = stream.set_nodelay(true);
            if !https {
                return Ok(Stream::Plain(stream));
            }
            let name = rustls::pki_types::ServerName::try_from(bare_host.clone())
                .map_err(|_| HttpError::Url(url.to_string()))?;
            let tls = self
                .tls
                .connect(name, stream)
                .await
                .map_err(|error| HttpError::Tls {
                    host: authority.clone(),
                    reason: error.to_string(),
                })?;
            Ok(Stream::Tls(Box::new(tls)))
        };
        let stream = tokio::time::timeout(self.limits.connect, connect)
            .await
            .map_err(|_| HttpError::Timeout(self.limits.connect))??;

        let deadline = self.limits.answer;
        let exchange = async {
            let response = match stream {
                Stream::Plain(stream) => exchange(TokioIo::new(stream), request, deadline).await?,
                Stream::Tls(stream) => exchange(TokioIo::new(*stream), request, deadline).await?,
            };
            let (parts, body) = response.into_parts();
            if !read_body {
                return Ok(Response {
                    status: parts.status,
                    headers: parts.headers,
                    body: Bytes::new(),
                });
            }
            let left = self
                .limits
                .total_bytes
                .saturating_sub(self.read.load(Ordering::Relaxed));
            let cap = self.limits.body_bytes.min(left);
            let body = Limited::new(body, cap)
                .collect()
                .await
                .map_err(|error| {
                    if error.is::<http_body_util::LengthLimitError>() {
                        HttpError::TooLarge(cap)
                    } else {
                        HttpError::Protocol(error.to_string())
                    }
                })?
                .to_bytes();
            self.read.fetch_add(body.len(), Ordering::Relaxed);
            Ok(Response {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(self.limits.answer, exchange)
            .await
            .map_err(|_| HttpError::Timeout(self.limits.answer))?
    }
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

async fn exchange<T>(
    io: TokioIo<T>,
    request: Request<Full<Bytes>>,
    deadline: Duration,
) -> Result<hyper::Response<hyper::body::Incoming>, HttpError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|error| HttpError::Protocol(error.to_string()))?;
    // The connection task ends when the answer has been read; the deadline ends it when a
    // server stops sending halfway.
    tokio::spawn(tokio::time::timeout(deadline, connection));
    sender
        .send_request(request)
        .await
        .map_err(|error| HttpError::Protocol(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_budget_is_enforced_before_anything_is_sent() {
        let client = Client::new(Limits {
            requests: 0,
            ..Limits::default()
        })
        .unwrap();
        let error = client
            .send(Method::GET, "http://127.0.0.1:9/", &[], Bytes::new())
            .await
            .unwrap_err();
        assert!(matches!(error, HttpError::Budget(0)), "{error}");
        assert_eq!(client.sent(), 0);
    }

    #[tokio::test]
    async fn only_http_urls_are_fetched() {
        let client = Client::new(Limits::default()).unwrap();
        for url in ["ftp://example.com/", "/relative", "mailto:a@b.example"] {
            let error = client
                .send(Method::GET, url, &[], Bytes::new())
                .await
                .unwrap_err();
            assert!(matches!(error, HttpError::Url(_)), "{url}: {error}");
        }
        assert_eq!(client.sent(), 0);
    }
}
