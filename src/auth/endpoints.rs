//! The auth endpoints as plain functions from parsed requests to [`Answer`]s.
//! `serve` turns requests into arguments and answers into HTTP responses.

use hyper::header::{HeaderName, HeaderValue};
use hyper::StatusCode;
use serde::Serialize;

use crate::config::BaseUrl;
use crate::paths;

/// A finished answer from the auth core, not yet an HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: StatusCode,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    error_description: &'a str,
}

impl Answer {
    /// An OAuth-style error (`{"error", "error_description"}`).
    pub fn error(status: StatusCode, code: &str, description: &str) -> Answer {
        Answer::json(
            status,
            &ErrorBody {
                error: code,
                error_description: description,
            },
        )
    }

    pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: serde_json::to_vec(value).unwrap_or_default(),
            headers: Vec::new(),
        }
    }
}

/// `POST /agent/identity/claim`: this service is anonymous-only, so every claim fails the
/// same way, whatever the body.
pub fn claim() -> Answer {
    Answer::error(
        StatusCode::BAD_REQUEST,
        "claim_not_supported",
        "this service offers anonymous access only; registrations cannot be claimed or linked to an account",
    )
}

/// The `authorization_endpoint`: there is no interactive login, so it explains where to go
/// instead. Browsers get a page, programs get JSON.
pub fn authorize(wants_html: bool, base: &BaseUrl) -> Answer {
    let description = format!(
        "interactive authorization is not offered; agents register anonymously as described in {}",
        base.join(paths::AUTH_MD)
    );
    if wants_html {
        let auth_md = base.join(paths::AUTH_MD);
        let page = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>No interactive login</title></head>\n<body><main><h1>No interactive login</h1><p>This service has no user login, so there is nothing to authorize here.</p><p>Agents register anonymously and exchange their identity for an access token; the steps are in <a href=\"{auth_md}\">auth.md</a>. Reading the public company information needs no token at all.</p></main></body></html>\n"
        );
        Answer {
            status: StatusCode::BAD_REQUEST,
            content_type: "text/html; charset=utf-8",
            body: page.into_bytes(),
            headers: Vec::new(),
        }
    } else {
        Answer::error(
            StatusCode::BAD_REQUEST,
            "unsupported_response_type",
            &description,
        )
    }
}
