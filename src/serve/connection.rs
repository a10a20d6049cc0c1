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

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// dropped, and on HTTP/2 also after [`HTTP2_IDLE_TIMEOUT`] without a request.
    async fn serve<I, H, F>(
        &self,
        io: I,
        protocol: Protocol,
        handler: H,
        stop: watch::Receiver<()>,
        peer: SocketAddr,
    ) where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
        H: Fn(SocketAddr, Request<Incoming>) -> F + Send + Sync + 'static,
        F: Future<Output = Response<Body>> + Send + 'static,
    {
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
                // gone), so requests in progress are counted here.
                let activity = Arc::new(Activity::new());
                let requests = Arc::clone(&activity);
                let service = service_fn(move |request| {
                    let in_progress = requests.begin();
                    let answered = CatchPanic::call(|| handler(peer, request));
                    async move {
                        let response = answered.await;
                        drop(in_progress);
                        response
                    }
                });
                let connection =
                    std::pin::pin!(self.http2.serve_connection(TokioIo::new(io), service));
                until_ended(
                    connection,
                    |connection| connection.graceful_shutdown(),
                    stop,
                    activity.idle(HTTP2_IDLE_TIMEOUT),
                )
                .await
            }
        };
        if let Err(error) = ended {
            tracing::debug!(%peer, %error, "connection ended with an error");
        }
    }
}

/// Drives `connection` to its end. When `stop` changes (or its sender is gone) or `idle`
/// completes, the connection is asked once to finish gracefully with `finish`: HTTP/1
/// closes after the response under way, HTTP/2 sends GOAWAY and lets open streams finish.
async fn until_ended<C>(
    mut connection: Pin<&mut C>,
    finish: impl Fn(Pin<&mut C>),
    mut stop: watch::Receiver<()>,
    idle: impl Future<Output = ()>,
) -> C::Output
where
    C: Future,
{
    let mut idle = std::pin::pin!(idle);
    let mut asked = false;
    loop {
        // Biased: the connection is polled first, as it is on almost every wake-up.
        tokio::select! {
            biased;
            ended = connection.as_mut() => return ended,
            _ = stop.changed(), if !asked => {
                asked = true;
                finish(connection.as_mut());
            }
            () = idle.as_mut(), if !asked => {
                asked = true;
                finish(connection.as_mut());
            }
        }
    }
}

/// Requests in progress on one HTTP/2 connection, and when one last started or ended.
struct Activity {
    opened: tokio::time::Instant,
    in_progress: AtomicUsize,
    /// Milliseconds after `opened`.
    last_change: AtomicU64,
}

/// One request in progress on an [`Activity`]; counts as ended when dropped (answered, or
/// its stream reset).
struct InProgress(Arc<Activity>);

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: tokio::time::Instant::now(),
            in_progress: AtomicUsize::new(0),
            last_change: AtomicU64::new(0),
        }
    }

    fn begin(self: &Arc<Self>) -> InProgress {
        self.in_progress.fetch_add(1, Ordering::Relaxed);
        self.touch();
        InProgress(Arc::clone(self))
    }

    fn touch(&self) {
        let since = self.opened.elapsed().as_millis();
        self.last_change
            .store(u64::try_from(since).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Completes once no request has been in progress for `timeout`.
    async fn idle(&self, timeout: Duration) {
        let mut deadline = self.opened + timeout;
        loop {
            tokio::time::sleep_until(deadline).await;
            let now = tokio::time::Instant::now();
            if self.in_progress.load(Ordering::Relaxed) > 0 {
                deadline = now + timeout;
                continue;
            }
            let quiet_since =
                self.opened + Duration::from_millis(self.last_change.load(Ordering::Relaxed));
            if quiet_since + timeout <= now {
                return;
            }
            deadline = quiet_since + timeout;
        }
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.in_progress.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
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
async fn sniff(mut stream: TcpStream) -> Option<(Protocol, Rewind<TcpStream>)> {
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
            load,
        } = accepted;
        let stream = match TcpStream::from_std(stream) {
            Ok(stream) => stream,
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
                        protocols.serve(stream, protocol, handler, stop, peer).await;
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
                    protocols.serve(stream, protocol, handler, stop, peer).await;
                }
            }
            drop((permit, load));
        });
    }

    /// Lets open requests finish, for at most 10 s.
    async fn finish(self) {
        let _ = self.stop.send(());
        tokio::select! {
            () = self.stop.closed() => {}
            () = tokio::time::sleep(Duration::from_secs(10)) => {
                tracing::warn!("open connections did not finish within 10 s; closing");
            }
        }
    }
}

/// Accepts connections on `listener` and answers each request with `handler`, until
/// `shutdown` completes; then lets open requests finish (for at most 10 s). With `tls`,
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
/// thread, until that side shuts down; then lets open requests finish (for at most 10 s).
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
