//! Building responses: the one JSON error shape and the headers every response carries.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderName, HeaderValue, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS,
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use hyper::{Response, StatusCode};
use serde::Serialize;

use crate::compile::cdn::COMMON_HEADERS;

pub type Body = Full<Bytes>;

pub const JSON: HeaderValue = HeaderValue::from_static("application/json");
pub const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
pub const PRAGMA: HeaderName = HeaderName::from_static("pragma");
pub const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// What every response carries: the same list, in the same order, as the CDN `_headers`
/// file's `/*` rule ([`COMMON_HEADERS`]), checked by a test below.
const COMMON: [(HeaderName, HeaderValue); 6] = [
    (
        ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static(COMMON_HEADERS[0].1),
    ),
    (
        ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(COMMON_HEADERS[1].1),
    ),
    (
        X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static(COMMON_HEADERS[2].1),
    ),
    (
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(COMMON_HEADERS[3].1),
    ),
    (
        REFERRER_POLICY,
        HeaderValue::from_static(COMMON_HEADERS[4].1),
    ),
    (
        X_FRAME_OPTIONS,
        HeaderValue::from_static(COMMON_HEADERS[5].1),
    ),
];

/// `{"error": "...", "error_description": "..."}`: the error body on every surface but
/// JSON-RPC.
#[derive(Serialize)]
pub struct ErrorBody<'a> {
    pub error: &'a str,
    pub error_description: &'a str,
}

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
    for (name, value) in COMMON {
        headers.insert(name, value);
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
        for ((name, value), (cdn_name, cdn_value)) in COMMON.iter().zip(COMMON_HEADERS) {
            assert!(name.as_str().eq_ignore_ascii_case(cdn_name));
            assert_eq!(value, cdn_value);
        }
    }
}
