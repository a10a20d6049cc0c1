//! The connection layer: accept, count, refuse beyond the caps, and keep one request's panic
//! inside that request.
//!
//! Every open connection holds a file descriptor, and one address can open thousands of
//! them and send nothing. So connections are counted in total and per client (IPv6 by /64,
//! trusted proxies exempt, since they carry many clients), and a connection beyond either cap
//! is answered at once with a canned 503 or 429 and closed, without ever reaching hyper. The
//! total cap sits below the process's descriptor limit, so `accept` itself keeps working and
//! the refusals stay cheap. Headers must arrive within [`HEADER_READ_TIMEOUT`] (also on idle
//! keep-alive connections); bodies have their own deadline in the router.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};

use super::client::TrustedProxies;
use super::reply::{self, Body};
use crate::auth::limits::group;
use crate::error_body::ErrorBody;

/// Largest request head (request line plus headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A client must send a complete request head within this time, also between requests on
/// a kept-alive connection.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How many connections may be open at once, and how long a request body may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// All clients together.
    pub total: usize,
    /// One client address (IPv6: one /64). Trusted proxies are exempt.
    pub per_client: usize,
    /// The whole request body must arrive within this time (else 408).
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            total: 10_000,
            per_client: 128,
            body_timeout: Duration::from_secs(10),
        }
    }
}

/// Connections open in this process, on every listener (for `/metrics`).
pub static OPEN_CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Counts open connections; a [`Permit`] gives its place back when dropped.
struct Gate {
    limits: ConnectionLimits,
    open: AtomicUsize,
    per_client: Mutex<HashMap<IpAddr, usize>>,
}

struct Permit {
    gate: Arc<Gate>,
    client: Option<IpAddr>,
}

enum Refusal {
    Full,
    ClientFull,
}

impl Gate {
    fn admit(self: &Arc<Self>, client: Option<IpAddr>) -> Result<Permit, Refusal> {
        if self.open.fetch_add(1, Ordering::AcqRel) >= self.limits.total {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return Err(Refusal::Full);
        }
        // A permit exists from here on, so every early return gives the place back.
        OPEN_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        let mut permit = Permit {
            gate: Arc::clone(self),
            client: None,
        };
        if let Some(client) = client {
            let Ok(mut counts) = self.per_client.lock() else {
                return Ok(permit);
            };
            let count = counts.entry(client).or_insert(0);
            if *count >= self.limits.per_client {
                return Err(Refusal::ClientFull);
            }
            *count += 1;
            permit.client = Some(client);
        }
        Ok(permit)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.open.fetch_sub(1, Ordering::AcqRel);
        OPEN_CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
        if let Some(client) = self.client {
            if let Ok(mut counts) = self.gate.per_client.lock() {
                if let Some(count) = counts.get_mut(&client) {
                    *count -= 1;
                    if *count == 0 {
                        counts.remove(&client);
                    }
                }
            }
        }
    }
}

/// The whole answer to a refused connection, written without parsing anything it sent.
fn refusal_bytes(refusal: &Refusal) -> Vec<u8> {
    let (status, code, description) = match refusal {
        Refusal::Full => (
            "503 Service Unavailable",
            "too_many_connections",
            "the server is at its connection limit; retry shortly",
        ),
        Refusal::ClientFull => (
            "429 Too Many Requests",
            "too_many_connections",
            "too many open connections from this address; close some and retry",
        ),
    };
    let body = String::from_utf8(crate::error_body::json_line(&ErrorBody {
        error: code,
        error_description: description,
    }))
    .unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncache-control: no-store\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn refuse(stream: TcpStream, peer: SocketAddr, refusal: Refusal) {
    // One non-blocking write into an empty send buffer always fits; then the socket is
    // closed. Nothing waits on this client, so refusing costs no task and no descriptor.
    let _ = stream.try_write(&refusal_bytes(&refusal));
    tracing::debug!(%peer, "connection refused: over the connection limit");
}

/// A handler's future with panics turned into a 500 for that request alone.
struct CatchPanic<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future<Output = Response<Body>>> Future for CatchPanic<F> {
    type Output = Response<Body>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll,
            Err(_) => {
                // The panic hook has already logged what and where.
                Poll::Ready(reply::finish(reply::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "the server failed while answering this request; it has been logged",
                )))
            }
        }
    }
}

/// Accepts connections on `listener` and answers each request with `handler`, until
/// `shutdown` completes; then lets open requests finish (for at most 10 s).
pub async fn serve_connections<H, F>(
    listener: TcpListener,
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    shutdown: impl Future<Output = ()>,
    handler: H,
) -> std::io::Result<()>
where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let gate = Arc::new(Gate {
        limits,
        open: AtomicUsize::new(0),
        per_client: Mutex::new(HashMap::new()),
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Only reachable if the descriptor limit is below the total cap; wait for
                    // connections to close instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let counted_as = (!proxies.trusts(peer.ip())).then(|| group(peer.ip()));
        let permit = match gate.admit(counted_as) {
            Ok(permit) => permit,
            Err(refusal) => {
                refuse(stream, peer, refusal);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let handler = handler.clone();
        let service = service_fn(move |request| {
            let answer = CatchPanic {
                inner: Box::pin(handler(peer, request)),
            };
            async move { Ok::<_, Infallible>(answer.await) }
        });
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {
            tracing::warn!("open connections did not finish within 10 s; closing");
        }
    }
    Ok(())
}

/// Raises the soft limit on open files to the hard limit and returns it, so the connection
/// cap can be set below it. `None` where the limit cannot be read.
pub fn raise_open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
    }
    Some(limit.rlim_cur)
}
