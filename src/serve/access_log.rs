//! The access log: one line per request, for operators, on the `dossier::access` target.
//!
//! Each line has the time (from the log format), the client address as resolved through the
//! trusted proxies, the method, the path without its query string, the status, the body
//! bytes, the duration and the user agent. Never a query value or a header that can carry a
//! credential: tokens belong in `Authorization`, which is not logged, and a token put in a
//! query string (refused with 400) stays out of the log with the rest of the query.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hyper::body::Body as _;
use hyper::header::USER_AGENT;
use hyper::{Method, Request, Response};

use super::client::TrustedProxies;
use super::reply::Body;

/// The `tracing` target of access lines (`DOSSIER_LOG=dossier::access=off` silences them).
pub const TARGET: &str = "dossier::access";

/// Longest user agent logged; the rest is cut so one client cannot write long lines.
const MAX_USER_AGENT_CHARS: usize = 200;

/// `--access-log`: whether requests are logged, and how log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AccessLog {
    Off,
    /// One human-readable line per request, like every other log line.
    #[default]
    Text,
    /// Every log line (access lines included) as one JSON object, for log pipelines.
    Json,
}

/// What is kept of a request to log it once it is answered.
pub struct RequestLine {
    client: IpAddr,
    method: Method,
    path: String,
    user_agent: String,
}

impl RequestLine {
    /// `None` when access lines are off, so a request costs nothing extra then.
    pub fn start<B>(
        mode: AccessLog,
        proxies: &TrustedProxies,
        peer: SocketAddr,
        request: &Request<B>,
    ) -> Option<RequestLine> {
        if mode == AccessLog::Off || !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
            return None;
        }
        let user_agent = request
            .headers()
            .get(USER_AGENT)
            .map(|value| printable(&String::from_utf8_lossy(value.as_bytes())))
            .unwrap_or_else(|| "-".to_string());
        Some(RequestLine {
            client: proxies.client_address(peer, request.headers()),
            method: request.method().clone(),
            path: printable(request.uri().path()),
            user_agent,
        })
    }

    pub fn finish(self, response: &Response<Body>, elapsed: Duration) {
        // HEAD answers carry the GET's length but send no body.
        let bytes = if self.method == Method::HEAD {
            0
        } else {
            response.body().size_hint().exact().unwrap_or(0)
        };
        tracing::info!(
            target: TARGET,
            client = %self.client,
            method = %self.method,
            path = %self.path,
            status = response.status().as_u16(),
            bytes,
            ms = format_args!("{:.3}", elapsed.as_secs_f64() * 1000.0),
            user_agent = %self.user_agent,
        );
    }
}

/// `text` without control characters and at most [`MAX_USER_AGENT_CHARS`] long: what a
/// client sends must not forge or break log lines.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_USER_AGENT_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_text_cannot_break_a_line() {
        assert_eq!(printable("curl/8\r\nINFO forged"), "curl/8INFO forged");
        assert_eq!(printable(&"a".repeat(500)).len(), MAX_USER_AGENT_CHARS);
    }
}
