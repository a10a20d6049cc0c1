//! The connection layer: accept, count, refuse beyond the caps, share connections out
//! between the serving threads, and keep one request's panic inside that request.
//!
//! Every open connection holds a file descriptor, and one address can open thousands of
//! them and send nothing. So connections are counted in total and per client (IPv6 by /64,
//! trusted proxies exempt, since they carry many clients), and a connection beyond either cap
//! is answered at once with a canned 503 or 429 and closed, without ever reaching hyper. The
//! total cap sits below the process's descriptor limit, so `accept` itself keeps working and
//! the refusals stay cheap. Headers must arrive within [`HEADER_READ_TIMEOUT`] (also on idle
//! keep-alive connections), and an HTTP/2 connection without a request in progress is closed
//! after [`HTTP2_IDLE_TIMEOUT`]: either way a connection that stays open does work, so the
//! caps cannot be filled by connections that only wait. Bodies have their own deadline in
//! the router.
//!
//! Sending is bounded as well as receiving: a client that stops reading must not hold a
//! connection, or the memory of its answers, for ever. A write to the socket that makes no
//! progress for the send timeout fails ([`SendDeadline`], under TLS too, HTTP/1 and
//! HTTP/2), and the kernel gives up on unacknowledged data after the same time
//! (`TCP_USER_TIMEOUT`). HTTP/2 adds flow control, where a client can stall an answer with a
//! zero window while the socket stays writable, so each HTTP/2 connection keeps the books of
//! its answers ([`Http2Streams`]): a request is answered only while fewer than
//! [`MAX_QUEUED_RESPONSE_BYTES`] of answers wait for the client, an MCP request reads its
//! body and makes its answer only when the router has checked the same ([`AnswerRoom`]), and
//! an answer that makes no progress for the send timeout ends the connection. Every phase of
//! a connection has a deadline; the README's "Connection budget" table lists them, and
//! `tests/adversarial.rs` crosses them.
//!
//! Words used below: an *answer* is a response on its way to the client; it is *queued*
//! from when it is made until HTTP/2 has taken all its bytes; it *makes progress* each time
//! HTTP/2 takes a piece of it, which hyper 1.x does only once the client's window has let
//! the previous piece through.

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
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::client::TrustedProxies;
use super::reply::{self, Body};
use super::tls::Tls;
use crate::auth::limits::group;
use crate::error_body::ErrorBody;

/// Largest request head (request line plus headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A client must send a complete request head within this time, also between requests on
/// a kept-alive connection.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// An HTTP/2 connection with no request in progress for this long is closed (GOAWAY, then
/// the end of the connection). It is HTTP/1's rule: there an idle kept-alive connection
/// must send its next request head within [`HEADER_READ_TIMEOUT`]. Without it, a client
/// that answers pings could hold its share of the connection caps forever.
pub const HTTP2_IDLE_TIMEOUT: Duration = HEADER_READ_TIMEOUT;

/// A connection asked to finish (idle HTTP/2, or shutting down) is dropped if it has not
/// finished within this time: a client that stops reading cannot keep it open after GOAWAY.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Bytes of answers one HTTP/2 connection may have waiting for its client to read them
/// before its next request waits. Together with one answer made while under it, and the
/// pieces HTTP/2 has taken (two of 16 KiB per stream), this bounds the memory one
/// connection can pin.
pub const MAX_QUEUED_RESPONSE_BYTES: usize = 1024 * 1024;

/// Answers are handed to HTTP/2 in pieces of this size (its default frame size), so that
/// each piece taken is a sign that the client's window let the previous one through.
const HTTP2_PIECE: usize = 16 * 1024;

/// How many connections may be open at once, and how long a request body may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// All clients together.
    pub total: usize,
    /// One client address (IPv6: one /64). Trusted proxies are exempt.
    pub per_client: usize,
    /// The whole request body must arrive within this time (else 408).
    pub body_timeout: Duration,
    /// A write to the client (or on HTTP/2, an answer) that makes no progress for this long
    /// ends the connection.
    pub send_timeout: Duration,
}

/// `--send-timeout`'s default.
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            total: 10_000,
            per_client: 128,
            body_timeout: Duration::from_secs(10),
            send_timeout: DEFAULT_SEND_TIMEOUT,
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

/// The connection caps of one listener. A connection's permit goes with it to the thread
/// that serves it, and gives the place back from there.
#[derive(Clone)]
pub struct ConnectionGate(Arc<Gate>);

impl ConnectionGate {
    pub fn new(limits: ConnectionLimits) -> ConnectionGate {
        ConnectionGate(Arc::new(Gate {
            limits,
            open: AtomicUsize::new(0),
            per_client: Mutex::new(HashMap::new()),
        }))
    }
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

pin_project_lite::pin_project! {
    /// A handler's answer, with a panic (while the handler runs or while its future is
    /// polled) turned into a 500 for that request alone. The future is kept inline: a
    /// handler that answers at once should cost no allocation here.
    #[project = CatchPanicProjection]
    enum CatchPanic<F> {
        Running { #[pin] answer: F },
        Panicked,
    }
}

impl<F> CatchPanic<F> {
    fn call(handler: impl FnOnce() -> F) -> CatchPanic<F> {
        match std::panic::catch_unwind(AssertUnwindSafe(handler)) {
            Ok(answer) => CatchPanic::Running { answer },
            Err(_) => CatchPanic::Panicked,
        }
    }
}

impl<F: Future<Output = Response<Body>>> Future for CatchPanic<F> {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let polled = match self.project() {
            CatchPanicProjection::Running { answer } => {
                std::panic::catch_unwind(AssertUnwindSafe(|| answer.poll(cx))).ok()
            }
            CatchPanicProjection::Panicked => None,
        };
        match polled {
            Some(poll) => poll.map(Ok),
            // The panic hook has already logged what and where.
            None => Poll::Ready(Ok(reply::finish(reply::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "the server failed while answering this request; it has been logged",
            )))),
        }
    }
}

/// The status logged and counted for a request whose client left before it was answered:
/// nginx's 499, a client error, not the server's.
pub const CLIENT_GONE: StatusCode = match StatusCode::from_u16(499) {
    Ok(status) => status,
    Err(_) => StatusCode::BAD_REQUEST,
};

/// HTTP/2 streams one connection may have open at once.
pub const MAX_CONCURRENT_STREAMS: u32 = 100;

/// What every HTTP/2 connection starts with (RFC 9113 §3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The protocols a connection can speak, each with its builder and the same limits: the
/// request head (64 KiB; on HTTP/1 also within [`HEADER_READ_TIMEOUT`]), and the router's
/// body size and deadline. HTTP/2 adds a cap on concurrent streams, on streams reset
/// before they were answered (the "rapid reset" attack), and pings that close a
/// connection whose peer went away.
#[derive(Clone)]
struct Protocols {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

impl Protocols {
    fn new() -> Protocols {
        let mut http1 = http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .max_header_size(MAX_HEAD_BYTES)
            .keep_alive(true);
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2
            .timer(TokioTimer::new())
            .max_header_list_size(MAX_HEAD_BYTES as u32)
            .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
            .max_pending_accept_reset_streams(20)
            .max_local_error_reset_streams(256)
            .keep_alive_interval(HEADER_READ_TIMEOUT)
            .keep_alive_timeout(HEADER_READ_TIMEOUT);
        Protocols { http1, http2 }
    }

    /// Serves one connection in `protocol`, answering with `handler`, until it ends. It is
    /// asked to finish (after the responses under way) when `stop` changes or its sender is
    /// dropped, and on HTTP/2 also after [`HTTP2_IDLE_TIMEOUT`] without a request; it is
    /// dropped [`SHUTDOWN_GRACE`] after that, or at once on HTTP/2 when an answer has made
    /// no progress for the send timeout (except from a trusted proxy, whose connections
    /// carry many clients' streams).
    async fn serve<I, H, F>(
        &self,
        io: I,
        protocol: Protocol,
        handler: H,
        stop: watch::Receiver<()>,
        peer: PeerBudget,
    ) where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
        H: Fn(SocketAddr, Request<Incoming>) -> F + Send + Sync + 'static,
        F: Future<Output = Response<Body>> + Send + 'static,
    {
        let PeerBudget {
            address: peer,
            send_timeout,
            trusted,
        } = peer;
        let ended = match protocol {
            Protocol::Http1 => {
                let service =
                    service_fn(move |request| CatchPanic::call(|| handler(peer, request)));
                let connection =
                    std::pin::pin!(self.http1.serve_connection(TokioIo::new(io), service));
                until_ended(
                    connection,
                    |connection| connection.graceful_shutdown(),
                    stop,
                    std::future::pending(),
                )
                .await
            }
            Protocol::Http2 => {
                // hyper has no idle timeout for HTTP/2 (its pings only find peers that are
                // gone), and flow control is out of sight of the socket, so the answers in
                // progress are counted here.
                let streams = Arc::new(Http2Streams::new(send_timeout, !trusted));
                let answers = Arc::clone(&streams);
                let handler = Arc::new(handler);
                let service = service_fn(move |mut request: Request<Incoming>| {
                    let handler = Arc::clone(&handler);
                    request
                        .extensions_mut()
                        .insert(AnswerRoom(Arc::clone(&answers)));
                    // The handler runs only once the connection's queue has room, so no
                    // answer is made (and held) while the client is not reading.
                    Arc::clone(&answers).answer(move || CatchPanic::call(|| handler(peer, request)))
                });
                let connection =
                    std::pin::pin!(self.http2.serve_connection(TokioIo::new(io), service));
                let ended = until_ended(
                    connection,
                    |connection| connection.graceful_shutdown(),
                    stop,
                    streams.watch(HTTP2_IDLE_TIMEOUT),
                )
                .await;
                // Requests still waiting for room must not be answered for nobody.
                streams.close();
                ended
            }
        };
        match ended {
            Ended::Closed(Ok(())) => {}
            Ended::Closed(Err(error)) => {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
            Ended::Dropped(reason) => tracing::debug!(%peer, reason, "connection dropped"),
        }
    }
}

/// Who is at the other end of a connection (its address, and whether it is a trusted
/// proxy), and the send timeout of its listener: what its budget follows from.
#[derive(Debug, Clone, Copy)]
struct PeerBudget {
    address: SocketAddr,
    /// The listener's [`ConnectionLimits::send_timeout`].
    send_timeout: Duration,
    /// One of the operator's trusted proxies (its connections carry many clients).
    trusted: bool,
}

/// How [`until_ended`] ended a connection.
enum Ended<T> {
    /// The protocol closed it (after a graceful finish, an error or the client leaving).
    Closed(T),
    /// It was cut off: the reason, for the log.
    Dropped(&'static str),
}

/// What the watcher of a connection found (see [`Http2Streams::watch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watched {
    /// No request in progress for the idle time: ask the connection to finish.
    Idle,
    /// An answer made no progress for the send timeout: drop the connection.
    Stalled,
}

/// Drives `connection` to its end. When `stop` changes (or its sender is gone) or `watch`
/// says the connection is idle, it is asked once to finish gracefully with `finish`: HTTP/1
/// closes after the response under way, HTTP/2 sends GOAWAY and lets open streams finish.
/// A connection that has not finished [`SHUTDOWN_GRACE`] after that, or that `watch` finds
/// stalled, is dropped.
async fn until_ended<C>(
    mut connection: Pin<&mut C>,
    finish: impl Fn(Pin<&mut C>),
    mut stop: watch::Receiver<()>,
    watch: impl Future<Output = Watched>,
) -> Ended<C::Output>
where
    C: Future,
{
    let mut watch = std::pin::pin!(watch);
    let grace = tokio::time::sleep(Duration::MAX);
    let mut grace = std::pin::pin!(grace);
    let mut asked = false;
    let mut watching = true;
    loop {
        // Biased: the connection is polled first, as it is on almost every wake-up.
        tokio::select! {
            biased;
            ended = connection.as_mut() => return Ended::Closed(ended),
            _ = stop.changed(), if !asked => {
                asked = true;
                finish(connection.as_mut());
                grace.as_mut().reset(tokio::time::Instant::now() + SHUTDOWN_GRACE);
            }
            watched = watch.as_mut(), if watching => {
                watching = false;
                match watched {
                    Watched::Stalled => return Ended::Dropped("an answer made no progress for the send timeout"),
                    Watched::Idle if !asked => {
                        asked = true;
                        finish(connection.as_mut());
                        grace.as_mut().reset(tokio::time::Instant::now() + SHUTDOWN_GRACE);
                    }
                    Watched::Idle => {}
                }
            }
            () = grace.as_mut(), if asked => {
                return Ended::Dropped("it did not finish within the shutdown grace");
            }
        }
    }
}

/// The answers of one HTTP/2 connection: how many requests are being answered, which
/// answers are being sent and when each last made progress, and how many of their bytes
/// wait for the client. Shared by the connection's streams (tasks on the same thread), so
/// the lock is never contended for long.
struct Http2Streams {
    opened: tokio::time::Instant,
    send_timeout: Duration,
    state: Mutex<StreamsState>,
    /// Woken when queued bytes fall below [`MAX_QUEUED_RESPONSE_BYTES`].
    drained: tokio::sync::Notify,
    /// Whether an answer without progress ends the connection (see [`Watched::Stalled`]).
    stalls_end_connection: bool,
    /// Set when the connection has ended.
    closed: std::sync::atomic::AtomicBool,
    /// Turns to read a large body (see [`AnswerRoom::read_body`]); closed with the
    /// connection, which wakes whoever waits.
    bodies: Arc<tokio::sync::Semaphore>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A handle on the queue of answers of the HTTP/2 connection a request came on, in the
/// request's extensions. An answer made after waiting for something (the MCP answer, once
/// its body has arrived) waits for room here first, so that the check and the charge of
/// its bytes happen together, with no other answer made in between.
#[derive(Clone)]
pub struct AnswerRoom(Arc<Http2Streams>);

/// The connection of a waiting request ended before it was answered: nobody would read
/// the answer, so it is not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionGone;

/// HTTP/2 requests of one connection whose bodies (up to 1 MiB for MCP, 64 KiB for the
/// auth endpoints) are read at once; the others wait before reading, their bytes held back
/// by flow control. Without it 100 streams could each hold a read body while their answers
/// wait for room.
pub const MAX_BODIES_READ_AT_ONCE: usize = 4;

impl AnswerRoom {
    /// Completes once the connection's queue has room (at once, almost always).
    pub async fn wait(&self) -> Result<(), ConnectionGone> {
        self.0.room().await;
        if self.0.closed.load(Ordering::Acquire) {
            return Err(ConnectionGone);
        }
        Ok(())
    }

    /// A turn to read a large body, held until the answer is made: at most
    /// [`MAX_BODIES_READ_AT_ONCE`] a connection (no limit for a trusted proxy, whose
    /// connection carries many clients).
    pub async fn read_body(
        &self,
    ) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, ConnectionGone> {
        if !self.0.stalls_end_connection {
            return Ok(None);
        }
        let permit = Arc::clone(&self.0.bodies)
            .acquire_owned()
            .await
            .map_err(|_| ConnectionGone)?;
        if self.0.closed.load(Ordering::Acquire) {
            return Err(ConnectionGone);
        }
        Ok(Some(permit))
    }
}

#[derive(Default)]
struct StreamsState {
    /// Requests whose handler has not returned yet.
    answering: usize,
    /// For each answer being sent, when it last made progress (milliseconds after
    /// `opened`); `None` is a free slot.
    last_progress: Vec<Option<u64>>,
    /// Bytes of answers not yet handed to HTTP/2.
    queued: usize,
    /// Requests waiting for the queue to drain.
    waiting: usize,
    /// When a request last started or an answer last finished (milliseconds after `opened`).
    last_change: u64,
}

impl StreamsState {
    fn in_progress(&self) -> bool {
        self.answering > 0 || self.last_progress.iter().any(Option::is_some)
    }
}

impl Http2Streams {
    fn new(send_timeout: Duration, stalls_end_connection: bool) -> Http2Streams {
        Http2Streams {
            opened: tokio::time::Instant::now(),
            send_timeout,
            state: Mutex::new(StreamsState::default()),
            drained: tokio::sync::Notify::new(),
            stalls_end_connection,
            closed: std::sync::atomic::AtomicBool::new(false),
            bodies: Arc::new(tokio::sync::Semaphore::new(MAX_BODIES_READ_AT_ONCE)),
        }
    }

    fn now(&self) -> u64 {
        millis(self.opened.elapsed())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, StreamsState> {
        // A panic never happens while the lock is held (only counters change under it).
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Answers one request with `make` once the queue has room, then charges the answer's
    /// bytes to the queue and sends it in pieces.
    ///
    /// Requests do not take turns: an answer made as soon as its handler is called (a
    /// document, a computed read) is made and charged in the same poll as the check, and
    /// one that waits for its body first checks again through [`AnswerRoom`]. So the queue
    /// overshoots its cap by at most the answers finished in one poll, while a slow request
    /// body never holds up the connection's other requests.
    fn answer<F>(
        self: Arc<Self>,
        make: impl FnOnce() -> F + Send,
    ) -> impl Future<Output = Result<Response<Sending>, Infallible>> + Send
    where
        F: Future<Output = Result<Response<Body>, Infallible>> + Send,
    {
        let answering = Answering::begin(Arc::clone(&self));
        async move {
            self.room().await;
            if self.closed.load(Ordering::Acquire) {
                // The connection ended while this request waited (a stalled client is
                // dropped, which frees the queue): its answer would reach nobody, so it is
                // not made. The stream is gone, so this answer is never sent either.
                let mut gone = Response::new(Sending::new(Body::Empty, &self));
                *gone.status_mut() = CLIENT_GONE;
                return Ok(gone);
            }
            let response = make()
                .await
                .map(|response| response.map(|body| Sending::new(body, &self)));
            drop(answering);
            response
        }
    }

    /// Marks the connection ended and wakes every request waiting for room.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.drained.notify_waiters();
        self.bodies.close();
    }

    /// Completes once fewer than [`MAX_QUEUED_RESPONSE_BYTES`] wait to be sent. It cannot
    /// wait for ever: the bytes are held by answers being sent, and one that makes no
    /// progress ends the connection.
    async fn room(&self) {
        loop {
            let drained = self.drained.notified();
            {
                let mut state = self.state();
                if state.queued < MAX_QUEUED_RESPONSE_BYTES || self.closed.load(Ordering::Acquire) {
                    return;
                }
                state.waiting += 1;
            }
            // Counted out again however the wait ends: woken, or dropped with a reset stream.
            let _waiting = RoomWaiter(self);
            drained.await;
        }
    }

    /// Takes `bytes` off the queue (handed to HTTP/2, or dropped); `slot`'s answer made
    /// progress now, or ended when `end` is set.
    fn progress(&self, slot: usize, bytes: usize, end: bool) {
        let now = self.now();
        let mut state = self.state();
        state.queued = state.queued.saturating_sub(bytes);
        if let Some(entry) = state.last_progress.get_mut(slot) {
            *entry = if end { None } else { Some(now) };
        }
        if end {
            state.last_change = now;
        }
        let wake = state.waiting > 0 && state.queued < MAX_QUEUED_RESPONSE_BYTES;
        drop(state);
        if wake {
            self.drained.notify_waiters();
        }
    }

    /// Completes when the connection should finish (nothing in progress for `idle`) or be
    /// dropped (an answer stalled for the send timeout).
    async fn watch(&self, idle: Duration) -> Watched {
        let mut deadline = self.opened + idle;
        loop {
            tokio::time::sleep_until(deadline).await;
            let now = self.now();
            let state = self.state();
            let stalled_since = state.last_progress.iter().flatten().min().copied();
            let idle_ms = millis(idle);
            let mut next = now.saturating_add(idle_ms);
            if let Some(since) = stalled_since.filter(|_| self.stalls_end_connection) {
                let limit = since.saturating_add(millis(self.send_timeout));
                if limit <= now {
                    return Watched::Stalled;
                }
                next = next.min(limit);
            }
            if !state.in_progress() {
                let limit = state.last_change.saturating_add(idle_ms);
                if limit <= now {
                    return Watched::Idle;
                }
                next = next.min(limit);
            }
            drop(state);
            deadline = self.opened + Duration::from_millis(next);
        }
    }
}

/// A request waiting for room in an [`Http2Streams`] queue.
struct RoomWaiter<'a>(&'a Http2Streams);

impl Drop for RoomWaiter<'_> {
    fn drop(&mut self) {
        self.0.state().waiting -= 1;
    }
}

/// One request being answered on an [`Http2Streams`]; counts as ended when dropped
/// (answered, or its stream reset).
struct Answering(Arc<Http2Streams>);

impl Answering {
    fn begin(streams: Arc<Http2Streams>) -> Answering {
        {
            let now = streams.now();
            let mut state = streams.state();
            state.answering += 1;
            state.last_change = now;
        }
        Answering(streams)
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        let now = self.0.now();
        let mut state = self.0.state();
        state.answering -= 1;
        state.last_change = now;
    }
}

/// An answer's body on HTTP/2: charged to its connection's queue when made, handed over in
/// pieces of [`HTTP2_PIECE`] bytes, each taken piece counting as progress. Dropped when the
/// stream is done (sent or reset), which takes it off the connection's books.
struct Sending {
    body: Body,
    /// What is left of the last buffer taken from `body`.
    rest: bytes::Bytes,
    streams: Arc<Http2Streams>,
    slot: usize,
}

impl Sending {
    fn new(body: Body, streams: &Arc<Http2Streams>) -> Sending {
        use hyper::body::Body as _;
        let bytes = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX);
        let now = streams.now();
        let slot = {
            let mut state = streams.state();
            state.queued = state.queued.saturating_add(bytes);
            match state.last_progress.iter().position(Option::is_none) {
                Some(free) => {
                    state.last_progress[free] = Some(now);
                    free
                }
                None => {
                    state.last_progress.push(Some(now));
                    state.last_progress.len() - 1
                }
            }
        };
        Sending {
            body,
            rest: bytes::Bytes::new(),
            streams: Arc::clone(streams),
            slot,
        }
    }

    fn unsent(&self) -> usize {
        use hyper::body::Body as _;
        let body = usize::try_from(self.body.size_hint().lower()).unwrap_or(usize::MAX);
        body.saturating_add(self.rest.len())
    }
}

impl hyper::body::Body for Sending {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.rest.is_empty() {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => this.rest = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                other => return other,
            }
        }
        let piece = this.rest.split_to(this.rest.len().min(HTTP2_PIECE));
        this.streams.progress(this.slot, piece.len(), false);
        Poll::Ready(Some(Ok(hyper::body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.unsent() as u64)
    }
}

impl Drop for Sending {
    fn drop(&mut self) {
        self.streams.progress(self.slot, self.unsent(), true);
    }
}

/// A socket whose writes fail with `TimedOut` once one has made no progress for the send
/// timeout: a client that stops reading is dropped, not kept open by a write that never
/// ends. Under TLS it wraps the TCP stream, so it sees the bytes actually leaving.
struct SendDeadline<T> {
    inner: T,
    timeout: Duration,
    /// Armed by the first write that cannot proceed; disarmed by any write that does.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> SendDeadline<T> {
    fn new(inner: T, timeout: Duration) -> SendDeadline<T> {
        SendDeadline {
            inner,
            timeout,
            stalled: None,
        }
    }

    fn check<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<R>>,
    ) -> Poll<std::io::Result<R>> {
        match polled {
            Poll::Pending => {
                let timeout = self.timeout;
                let stalled = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match stalled.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing for the send timeout",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.check(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.check(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.check(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.check(cx, polled)
    }
}

/// Tells the kernel to give up on a connection whose sent data has gone unacknowledged
/// for `timeout` (`TCP_USER_TIMEOUT`), so a peer that vanished, or shrank its receive
/// window to nothing, is dropped by the kernel too.
fn set_user_timeout(stream: &std::net::TcpStream, timeout: Duration) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let millis = libc::c_uint::try_from(timeout.as_millis()).unwrap_or(libc::c_uint::MAX);
        // SAFETY: setsockopt reads `size_of::<c_uint>()` bytes from the pointer, which
        // points at `millis`, alive for the call; the descriptor is the stream's own.
        let set = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_USER_TIMEOUT,
                (&millis as *const libc::c_uint).cast(),
                std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
            )
        };
        if set != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "TCP_USER_TIMEOUT not set");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (stream, timeout);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// Which protocol a cleartext client speaks: HTTP/2 if it starts with the preface ("h2c"
/// by prior knowledge), else HTTP/1. The bytes read to tell are put back in front of the
/// stream for hyper. Gives up (`None`) when the client closes first or does not finish
/// telling within [`HEADER_READ_TIMEOUT`], like a request head that never arrives.
///
/// It reads rather than peeks: a peek sees the same bytes again and again, so waiting for
/// more of a partial preface would be a polling loop (and a client that closed after part
/// of it would never look closed).
async fn sniff<S: AsyncRead + Unpin>(mut stream: S) -> Option<(Protocol, Rewind<S>)> {
    let deadline = tokio::time::Instant::now() + HEADER_READ_TIMEOUT;
    let mut start = [0u8; HTTP2_PREFACE.len()];
    let mut seen = 0;
    loop {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut start[seen..]))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            return None;
        }
        seen += read;
        let protocol = if !HTTP2_PREFACE.starts_with(&start[..seen]) {
            Protocol::Http1
        } else if seen == HTTP2_PREFACE.len() {
            Protocol::Http2
        } else {
            continue;
        };
        let stream = Rewind {
            start,
            next: 0,
            end: seen,
            inner: stream,
        };
        return Some((protocol, stream));
    }
}

/// A stream with the first bytes already read from it put back in front (see [`sniff`]).
struct Rewind<T> {
    start: [u8; HTTP2_PREFACE.len()],
    /// `start[next..end]` is still to be read.
    next: usize,
    end: usize,
    inner: T,
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.next < this.end {
            let count = (this.end - this.next).min(buf.remaining());
            buf.put_slice(&this.start[this.next..this.next + count]);
            this.next += count;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A connection accepted and admitted, on its way to the thread that will serve it.
struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    permit: Permit,
    /// The listener's [`ConnectionLimits::send_timeout`].
    send_timeout: Duration,
    /// Whether the peer is one of the operator's trusted proxies (its connections carry
    /// many clients).
    trusted: bool,
    load: Load,
}

/// One serving thread's count of open connections, for choosing who gets the next one.
#[derive(Clone, Default)]
struct Lane(Arc<AtomicUsize>);

/// One connection on a [`Lane`]; gives its place back when the connection ends.
struct Load(Lane);

impl Lane {
    fn take(&self) -> Load {
        self.0.fetch_add(1, Ordering::Relaxed);
        Load(self.clone())
    }

    fn open(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The accepting thread's end of a [`hand_off`] pair: connections go in here.
pub struct Handoff {
    lane: Lane,
    sender: tokio::sync::mpsc::UnboundedSender<Accepted>,
}

/// A serving thread's end of a [`hand_off`] pair: see [`serve_handed_off`].
pub struct Inbox {
    receiver: tokio::sync::mpsc::UnboundedReceiver<Accepted>,
}

/// A channel that carries accepted connections from the accepting thread to another
/// serving thread, with that thread's count of open connections. (It needs no bound of
/// its own: only admitted connections enter it, and those are capped.)
pub fn hand_off() -> (Handoff, Inbox) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    (
        Handoff {
            lane: Lane::default(),
            sender,
        },
        Inbox { receiver },
    )
}

/// Serves the connections of one thread: every connection is a task of the runtime it
/// was started on, with the same protocols and limits, and shutdown waits for all of them.
struct Connections<H> {
    protocols: Protocols,
    /// Every connection of this thread holds a receiver: sending asks them all to finish,
    /// and the sender sees when the last one is gone.
    stop: watch::Sender<()>,
    tls: Option<Arc<Tls>>,
    handler: H,
}

impl<H, F> Connections<H>
where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    fn new(tls: Option<Arc<Tls>>, handler: H) -> Self {
        Connections {
            protocols: Protocols::new(),
            stop: watch::Sender::new(()),
            tls,
            handler,
        }
    }

    fn spawn(&self, accepted: Accepted) {
        let Accepted {
            stream,
            peer,
            permit,
            send_timeout,
            trusted,
            load,
        } = accepted;
        set_user_timeout(&stream, send_timeout);
        let budget = PeerBudget {
            address: peer,
            send_timeout,
            trusted,
        };
        let stream = match TcpStream::from_std(stream) {
            Ok(stream) => SendDeadline::new(stream, send_timeout),
            Err(error) => {
                tracing::warn!(%peer, %error, "cannot register a connection with this thread");
                return;
            }
        };
        let handler = self.handler.clone();
        let stop = self.stop.subscribe();
        let protocols = self.protocols.clone();
        let tls = self.tls.as_ref().map(|tls| tls.acceptor().clone());
        tokio::spawn(async move {
            match tls {
                None => {
                    if let Some((protocol, stream)) = sniff(stream).await {
                        protocols
                            .serve(stream, protocol, handler, stop, budget)
                            .await;
                    }
                }
                Some(acceptor) => {
                    let stream =
                        match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(stream))
                            .await
                        {
                            Ok(Ok(stream)) => stream,
                            Ok(Err(error)) => {
                                tracing::debug!(%peer, %error, "TLS handshake failed");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!(%peer, "TLS handshake timed out");
                                return;
                            }
                        };
                    // Over TLS the protocol is agreed by ALPN (RFC 9113 §3.2), never guessed.
                    let protocol = match stream.get_ref().1.alpn_protocol() {
                        Some(b"h2") => Protocol::Http2,
                        _ => Protocol::Http1,
                    };
                    protocols
                        .serve(stream, protocol, handler, stop, budget)
                        .await;
                }
            }
            drop((permit, load));
        });
    }

    /// Lets open requests finish, for at most [`SHUTDOWN_GRACE`].
    async fn finish(self) {
        let _ = self.stop.send(());
        tokio::select! {
            () = self.stop.closed() => {}
            () = tokio::time::sleep(SHUTDOWN_GRACE) => {
                tracing::warn!(grace = ?SHUTDOWN_GRACE, "open connections did not finish within the shutdown grace; closing");
            }
        }
    }
}

/// Accepts connections on `listener` and answers each request with `handler`, until
/// `shutdown` completes; then lets open requests finish (for at most [`SHUTDOWN_GRACE`]). With `tls`,
/// every connection must complete a TLS handshake within [`HEADER_READ_TIMEOUT`] first.
///
/// The connections are shared out between this thread and the threads behind `others`
/// ([`serve_handed_off`]): each new one goes to the thread with the fewest open, so that
/// every thread (every core) gets its share of the clients.
///
/// One thread accepts, instead of every thread accepting on the same socket: with a shared
/// socket, whichever thread wakes first takes the connection, and a client that opens all
/// its connections at once could land them all on one thread while the others idle.
pub async fn serve_connections<H, F>(
    listener: TcpListener,
    gate: ConnectionGate,
    proxies: TrustedProxies,
    tls: Option<Arc<Tls>>,
    mut others: Vec<Handoff>,
    shutdown: impl Future<Output = ()>,
    handler: H,
) -> std::io::Result<()>
where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let gate = gate.0;
    let here = Lane::default();
    let connections = Connections::new(tls, handler);
    let mut next = 0usize;
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
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(error) => {
                tracing::warn!(%peer, %error, "cannot take an accepted connection");
                continue;
            }
        };
        // The least loaded thread (0 is this one); ties go round in turn, so equal threads
        // fill evenly.
        let lane = |index: usize| match index {
            0 => &here,
            other => &others[other - 1].lane,
        };
        next = next.wrapping_add(1);
        let lanes = others.len() + 1;
        let chosen = (0..lanes)
            .map(|offset| (next + offset) % lanes)
            .min_by_key(|&index| lane(index).open())
            .unwrap_or(0);
        let accepted = Accepted {
            stream,
            peer,
            permit,
            send_timeout: gate.limits.send_timeout,
            trusted: proxies.trusts(peer.ip()),
            load: lane(chosen).take(),
        };
        match chosen {
            0 => connections.spawn(accepted),
            other => {
                if let Err(returned) = others[other - 1].sender.send(accepted) {
                    // That thread has stopped (it only does at shutdown, or by a bug):
                    // serve the connection here and stop handing it any.
                    tracing::error!("a serving thread stopped; its share is served here");
                    others.remove(other - 1);
                    let mut accepted = returned.0;
                    accepted.load = here.take();
                    connections.spawn(accepted);
                }
            }
        }
    }
    drop(listener);
    // Closing the hand-offs tells the other threads to finish too.
    drop(others);
    connections.finish().await;
    Ok(())
}

/// Serves the connections that arrive in `inbox` from [`serve_connections`] on another
/// thread, until that side shuts down; then lets open requests finish (for at most [`SHUTDOWN_GRACE`]).
pub async fn serve_handed_off<H, F>(mut inbox: Inbox, tls: Option<Arc<Tls>>, handler: H)
where
    H: Fn(SocketAddr, Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let connections = Connections::new(tls, handler);
    while let Some(accepted) = inbox.receiver.recv().await {
        connections.spawn(accepted);
    }
    connections.finish().await;
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
