//! The connection layer: accept, count, refuse beyond the caps, share connections out
//! between the serving threads, and keep one request's panic inside that request.
//!
//! [`gate`] counts connections and refuses those beyond the caps; [`socket`] tells the
//! protocol of a cleartext client and bounds every write; [`http2_answers`] keeps the books
//! of an HTTP/2 connection's answers. This file accepts, shares out, and drives each
//! connection through its deadlines.
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
//! [`MAX_QUEUED_RESPONSE_BYTES`] of answers wait for the client, a request whose answer
//! waits for something first (its body, the search index) checks the same again just before
//! its answer is made ([`AnswerRoom`]), and
//! an answer that makes no progress for the send timeout ends the connection. Every phase of
//! a connection has a deadline; the README's "Connection budget" table lists them, and
//! `tests/adversarial.rs` crosses them.
//!
//! Words used below: an *answer* is a response on its way to the client; it is *queued*
//! from when it is made until HTTP/2 has taken all its bytes; it *makes progress* each time
//! HTTP/2 takes a piece of it, which hyper 1.x does only once the client's window has let
//! the previous piece through.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

mod gate;
mod http2_answers;
mod socket;

use gate::{refuse, Permit};
pub use gate::{ConnectionGate, OPEN_CONNECTIONS};
pub use http2_answers::{
    AnswerRoom, ConnectionGone, CLIENT_GONE, MAX_BODIES_READ_AT_ONCE, MAX_QUEUED_RESPONSE_BYTES,
};
use http2_answers::{Http2Streams, Watched};
use socket::{set_user_timeout, sniff, Protocol, SendDeadline};

use super::client::TrustedProxies;
use super::reply::{self, Body};
use super::tls::Tls;
use crate::auth::limits::group;

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
