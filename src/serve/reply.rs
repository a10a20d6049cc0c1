//! Building responses: the one JSON error shape and the headers every response carries.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use hyper::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};

use crate::compile::cdn::COMMON_HEADERS;
use crate::wire::ErrorBody;

/// A response body: one buffer (almost every response: a precompiled artifact's `Bytes`),
/// or a few sent one after the other without being copied into one (an MCP answer: its
/// envelope around a result cached per content revision; hyper writes them vectored).
#[derive(Debug, Default)]
pub enum Body {
    #[default]
    Empty,
    One(Bytes),
    Several(std::vec::IntoIter<Bytes>),
}

impl Body {
    pub fn new(bytes: Bytes) -> Body {
        if bytes.is_empty() {
            Body::Empty
        } else {
            Body::One(bytes)
        }
    }

    pub fn chunks(chunks: Vec<Bytes>) -> Body {
        Body::Several(chunks.into_iter())
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let next = match this {
            Body::Empty => None,
            Body::One(_) => match std::mem::take(this) {
                Body::One(bytes) => Some(bytes),
                _ => None,
            },
            Body::Several(chunks) => chunks.next(),
        };
        Poll::Ready(next.map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Empty => true,
            Body::One(_) => false,
            Body::Several(chunks) => chunks.as_slice().is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        let length = match self {
            Body::Empty => 0,
            Body::One(bytes) => bytes.len(),
            Body::Several(chunks) => chunks.as_slice().iter().map(Bytes::len).sum(),
        };
        SizeHint::with_exact(length as u64)
    }
}

pub const JSON: HeaderValue = HeaderValue::from_static(crate::wire::JSON);
pub const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
pub const PRAGMA: HeaderName = HeaderName::from_static("pragma");
pub const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// What every response carries: exactly the CDN `_headers` file's `/*` rule
/// ([`COMMON_HEADERS`]), parsed once.
static COMMON: LazyLock<Vec<(HeaderName, HeaderValue)>> = LazyLock::new(|| {
    COMMON_HEADERS
        .iter()
        .filter_map(|(name, value)| {
            Some((
                HeaderName::from_bytes(name.as_bytes()).ok()?,
                HeaderValue::from_static(value),
            ))
        })
        .collect()
});

/// A JSON error response; never cached, since errors describe one request.
pub fn error(status: StatusCode, code: &str, description: &str) -> Response<Body> {
    let body = crate::wire::json_line(&ErrorBody {
        error: code,
        error_description: description,
    });
    let mut response = Response::new(Body::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, JSON);
    response.headers_mut().insert(CACHE_CONTROL, NO_STORE);
    response
}

/// How many headers [`finish`] adds.
pub const COMMON_COUNT: usize = COMMON_HEADERS.len();

/// Adds what every response carries: CORS for any origin without credentials (the data is
/// public), `nosniff` so no body is ever reinterpreted as another type, and the browser
/// security policy for pages.
pub fn finish(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    for (name, value) in COMMON.iter() {
        headers.insert(name.clone(), value.clone());
    }
    response
}

impl crate::auth::reply::AuthReply {
    /// Auth answers carry credentials or describe one request: never stored by caches.
    pub fn into_response(self) -> Response<Body> {
        let mut response = Response::new(Body::new(Bytes::from(self.body)));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        headers.insert(CACHE_CONTROL, NO_STORE);
        headers.insert(PRAGMA, NO_CACHE);
        for (name, value) in self.headers {
            headers.append(name, value);
        }
        response
    }
}

/// 401 with the RFC 6750 / RFC 9728 challenge that points at the metadata.
pub(crate) fn invalid_token(
    base: &crate::config::BaseUrl,
    description: &str,
    metadata: &'static str,
) -> Response<Body> {
    let mut response = error(StatusCode::UNAUTHORIZED, "invalid_token", description);
    let challenge = format!(
        "Bearer error=\"invalid_token\", error_description=\"{description}\", resource_metadata=\"{}\"",
        base.join(metadata)
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response.headers_mut().insert(CACHE_CONTROL, NO_STORE);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_sends_what_the_cdn_rules_say() {
        // Every rule parses: none is silently dropped.
        assert_eq!(COMMON.len(), COMMON_HEADERS.len());
        let response = finish(Response::new(Body::default()));
        for (name, value) in COMMON_HEADERS {
            assert_eq!(response.headers()[name], value, "{name}");
        }
    }
}
