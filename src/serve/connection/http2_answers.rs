//! The books of one HTTP/2 connection's answers: how many requests are being answered,
//! how many bytes of answers wait for the client, and when each answer last made progress.
//! From them follow the queue cap (a request waits for room), the turns to read bodies, and
//! the stall that ends a connection whose client holds an answer with a zero window.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::{Response, StatusCode};

use crate::serve::reply::Body;

/// Bytes of answers one HTTP/2 connection may have waiting for its client to read them
/// before its next request waits. Together with one answer made while under it, and the
/// pieces HTTP/2 has taken (two of 16 KiB per stream), this bounds the memory one
/// connection can pin.
pub const MAX_QUEUED_RESPONSE_BYTES: usize = 1024 * 1024;

/// Answers are handed to HTTP/2 in pieces of this size (its default frame size), so that
/// each piece taken is a sign that the client's window let the previous one through.
pub(super) const HTTP2_PIECE: usize = 16 * 1024;

/// The status logged and counted for a request whose client left before it was answered:
/// nginx's 499, a client error, not the server's.
pub const CLIENT_GONE: StatusCode = match StatusCode::from_u16(499) {
    Ok(status) => status,
    Err(_) => StatusCode::BAD_REQUEST,
};

/// What the watcher of a connection found (see [`Http2Streams::watch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Watched {
    /// No request in progress for the idle time: ask the connection to finish.
    Idle,
    /// An answer made no progress for the send timeout: drop the connection.
    Stalled,
}

/// The answers of one HTTP/2 connection: how many requests are being answered, which
/// answers are being sent and when each last made progress, and how many of their bytes
/// wait for the client. Shared by the connection's streams (tasks on the same thread), so
/// the lock is never contended for long.
pub(super) struct Http2Streams {
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
/// request's extensions. An answer made after waiting for something (its body, the search
/// index: `serve::body::room_for_answer` lists who) waits for room here first, so that the
/// check and the charge of its bytes happen together, with no other answer made in between.
#[derive(Clone)]
pub struct AnswerRoom(pub(super) Arc<Http2Streams>);

#[cfg(test)]
impl AnswerRoom {
    /// The room of a connection whose queue of answers is full, for tests of the handlers
    /// that wait for it; [`AnswerRoom::drain_for_test`] empties the queue.
    pub(crate) fn full_for_test() -> AnswerRoom {
        let streams = Http2Streams::new(Duration::from_secs(60), true);
        streams.state().queued = MAX_QUEUED_RESPONSE_BYTES;
        AnswerRoom(Arc::new(streams))
    }

    /// As if the client had read every queued answer.
    pub(crate) fn drain_for_test(&self) {
        self.0.state().queued = 0;
        self.0.drained.notify_waiters();
    }
}

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
    pub(super) fn new(send_timeout: Duration, stalls_end_connection: bool) -> Http2Streams {
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
    /// one that waits for anything (its body, the search index) checks again through
    /// [`AnswerRoom`] just before it is made (`serve::body::room_for_answer`). So the queue
    /// overshoots its cap by at most the answers finished in one poll, while a slow request
    /// body holds up only the bodies waiting for a turn to be read, never a document.
    pub(super) fn answer<F>(
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
    pub(super) fn close(&self) {
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
    pub(super) async fn watch(&self, idle: Duration) -> Watched {
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
pub(super) struct Sending {
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
