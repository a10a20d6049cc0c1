//! What an auth endpoint answers, before it is an HTTP response: a status, a JSON body and
//! the headers the OAuth rules ask for (`Cache-Control: no-store`, `Retry-After`,
//! `WWW-Authenticate`). `serve` turns it into a response in one place.

use std::time::Duration;

use hyper::header::{HeaderName, HeaderValue, RETRY_AFTER};
use hyper::StatusCode;
use serde::Serialize;

use super::store::StoreError;
use super::MAX_BODY_BYTES;
use crate::wire::{json_line, ErrorBody};

/// A finished answer from the auth core, not yet an HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthReply {
    pub status: StatusCode,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl AuthReply {
    /// An OAuth-style error (`{"error", "error_description"}`).
    pub fn error(status: StatusCode, code: &str, description: &str) -> AuthReply {
        AuthReply::json(
            status,
            &ErrorBody {
                error: code,
                error_description: description,
            },
        )
    }

    pub fn json<T: Serialize>(status: StatusCode, value: &T) -> AuthReply {
        AuthReply {
            status,
            content_type: crate::wire::JSON,
            body: json_line(value),
            headers: Vec::new(),
        }
    }

    pub(super) fn with_header(mut self, name: HeaderName, value: HeaderValue) -> AuthReply {
        self.headers.push((name, value));
        self
    }

    pub(super) fn bad_request(code: &str, description: &str) -> AuthReply {
        AuthReply::error(StatusCode::BAD_REQUEST, code, description)
    }

    pub fn too_large() -> AuthReply {
        AuthReply::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            &format!(
                "request bodies are limited to {} KiB",
                MAX_BODY_BYTES / 1024
            ),
        )
    }

    pub fn rate_limited(retry_after: Duration) -> AuthReply {
        let seconds = retry_after.as_secs().max(1);
        AuthReply::error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_exceeded",
            &format!("too many requests from this address; retry in {seconds} s"),
        )
        .with_header(RETRY_AFTER, HeaderValue::from(seconds))
    }

    pub fn unavailable(error: &StoreError) -> AuthReply {
        // The store logs its own state changes; one line per refused request would let a
        // client flood the log during an outage.
        tracing::debug!(%error, "refused: the store is unavailable");
        // Whole seconds, rounded up, so a client that waits that long finds the retry done.
        let seconds = error.retry_after.as_secs() + u64::from(error.retry_after.subsec_nanos() > 0);
        let seconds = seconds.max(1);
        AuthReply::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            &format!("the revocation store is unavailable; retry in {seconds} s"),
        )
        .with_header(RETRY_AFTER, HeaderValue::from(seconds))
    }
}
