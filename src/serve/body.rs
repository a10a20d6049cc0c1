//! Request bodies: read within a size and a time limit however slowly they arrive, drained
//! after a refusal so the client sees it, and on HTTP/2 read a few at a time per
//! connection; and what an answer made after such a wait does before it is made, on HTTP/2:
//! wait for room in its connection's queue of answers ([`room_for_answer`]).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{HeaderMap, HeaderValue, CONNECTION, CONTENT_LENGTH, EXPECT};
use hyper::{Response, StatusCode};

use super::connection::{AnswerRoom, ConnectionGone, CLIENT_GONE};
use super::reply::{self, Body};

/// A request body the router can read: hyper's `Incoming` on a connection, any
/// `Full<Bytes>` in a unit test.
pub(super) trait RequestBody: hyper::body::Body<Data = Bytes> + Unpin {}

impl<B: hyper::body::Body<Data = Bytes> + Unpin> RequestBody for B {}

pub(super) fn single_header(headers: &HeaderMap, name: hyper::header::HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

/// Why a request body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyError {
    TooLarge,
    TimedOut,
    Unreadable,
    /// The connection ended while the request waited for its turn (answer [`client_gone`]).
    ClientGone,
}

/// A body read in its turn. The turn is held while the answer is made, so keep this alive
/// until then.
pub(super) struct Received {
    pub bytes: Bytes,
    _turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// Reads a request's body: first its turn (on HTTP/2, a few bodies of a connection are read
/// at once), then at most `limit` bytes within `timeout`. The one way bodies are read, so
/// no endpoint can read one outside its turn.
pub(super) async fn read_in_turn<B: RequestBody>(
    parts: &hyper::http::request::Parts,
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Received, BodyError> {
    let turn = body_turn(parts)
        .await
        .map_err(|ConnectionGone| BodyError::ClientGone)?;
    let bytes = read_body(&parts.headers, body, limit, timeout).await?;
    Ok(Received { bytes, _turn: turn })
}

/// After refusing an oversized body, up to this much more of it is read and thrown away, so a
/// client that writes its whole body before reading (Python's `http.client`, for one) sees
/// the 413 instead of a reset connection.
const DRAIN_LIMIT: usize = 4 * 1024 * 1024;

/// The most a body reservation takes before any of the body has arrived.
const INITIAL_BODY_CAPACITY: u64 = 16 * 1024;

/// Reads a body of at most `limit` bytes within `timeout`, however slowly it is sent.
async fn read_body<B: RequestBody>(
    headers: &HeaderMap,
    body: B,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // A client that waits for `100 Continue` has sent nothing yet: answering at once is
    // both cheaper and what it expects.
    let expects_continue = headers.contains_key(EXPECT);
    let mut body = body;
    if declared.is_some_and(|length| length > limit as u64) {
        if !expects_continue {
            drain(&mut body, deadline).await;
        }
        return Err(BodyError::TooLarge);
    }
    // Memory follows what arrives, not what is announced: a client that declares 1 MiB and
    // sends a byte holds a byte (plus this first reservation).
    let mut collected =
        Vec::with_capacity(declared.unwrap_or(0).min(INITIAL_BODY_CAPACITY) as usize);
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(BodyError::TimedOut),
            Ok(None) => return Ok(Bytes::from(collected)),
            Ok(Some(Err(_))) => return Err(BodyError::Unreadable),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if collected.len() + data.len() > limit {
            drain(&mut body, deadline).await;
            return Err(BodyError::TooLarge);
        }
        collected.extend_from_slice(&data);
    }
}

/// Reads and discards up to [`DRAIN_LIMIT`] bytes of `body`, until `deadline` at the latest.
async fn drain<B: RequestBody>(body: &mut B, deadline: tokio::time::Instant) {
    let mut discarded = 0usize;
    while discarded < DRAIN_LIMIT {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                discarded += frame.data_ref().map_or(0, |data| data.len());
            }
            _ => return,
        }
    }
}

pub(super) fn body_timeout(timeout: Duration) -> Response<Body> {
    let mut response = reply::error(
        StatusCode::REQUEST_TIMEOUT,
        "request_timeout",
        &format!(
            "the request body did not arrive within {}",
            humantime::format_duration(timeout)
        ),
    );
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// On HTTP/2, a turn to read this request's body, held until its answer is made: a few
/// bodies of a connection are read at once (see [`AnswerRoom::read_body`]). `Err` when the
/// connection ended while the request waited.
async fn body_turn(
    parts: &hyper::http::request::Parts,
) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, ConnectionGone> {
    match parts.extensions.get::<AnswerRoom>() {
        Some(room) => room.read_body().await,
        None => Ok(None),
    }
}

/// On HTTP/2, waits for room for this request's answer in its connection's queue of unread
/// answers. Every answer made after an await (its body, the search index) calls this last,
/// just before the answer is made: the room checked before the handler ran may have been
/// taken meanwhile by answers to the connection's other streams, and the check and the charge
/// of the answer's bytes must happen with nothing answered in between. Exempt are the small
/// answers of fixed size: refusals of a body (408, 413, 400), a rate limit's 429, and a
/// revocation's empty 200, which is stored whatever becomes of the connection. `Err` is the
/// answer when the connection ended while the request waited.
pub(super) async fn room_for_answer(
    extensions: &hyper::http::Extensions,
) -> Result<(), Response<Body>> {
    match extensions.get::<AnswerRoom>() {
        Some(room) => room.wait().await.map_err(|ConnectionGone| client_gone()),
        None => Ok(()),
    }
}

/// The answer to a request whose connection ended while it waited: nobody reads it, but it
/// is logged and counted.
pub(super) fn client_gone() -> Response<Body> {
    reply::error(
        CLIENT_GONE,
        "client_gone",
        "the connection ended before this request was answered",
    )
}
