//! Building responses: the one JSON error shape and the headers every response carries.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderName, HeaderValue, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS,
    CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use hyper::{Response, StatusCode};
use serde::Serialize;

pub type Body = Full<Bytes>;

pub const JSON: HeaderValue = HeaderValue::from_static("application/json");
pub const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
pub const PRAGMA: HeaderName = HeaderName::from_static("pragma");
pub const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

/// Headers a browser-based client may read from our responses: the same list the CDN
/// `_headers` file declares.
const EXPOSED: HeaderValue = HeaderValue::from_static(crate::compile::cdn::COMMON_HEADERS[1].1);

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
/// public), and `nosniff` so no body is ever reinterpreted as another type.
pub fn finish(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED);
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
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
