//! Building responses: the one JSON error shape and the headers every response carries.

use std::sync::LazyLock;

use crate::error_body::ErrorBody;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::compile::cdn::COMMON_HEADERS;

pub type Body = Full<Bytes>;

pub const JSON: HeaderValue = HeaderValue::from_static("application/json");
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
    let body = serde_json::to_vec(&ErrorBody {
        error: code,
        error_description: description,
    })
    .unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, JSON);
    response.headers_mut().insert(CACHE_CONTROL, NO_STORE);
    response
}

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

impl crate::auth::endpoints::Answer {
    /// Auth answers carry credentials or describe one request: never stored by caches.
    pub fn into_response(self) -> Response<Body> {
        let mut response = Response::new(Full::new(Bytes::from(self.body)));
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
