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

/// Bytes a logged path or user agent takes at most once escaped (an escape is up to ten
/// bytes for one character), which bounds the bytes the access log's queue can hold.
const MAX_FIELD_BYTES: usize = 512;

/// Counts the access lines the log writer's queue had no room for (see `cli::init_logging`).
static DROPPED: std::sync::OnceLock<tracing_appender::non_blocking::ErrorCounter> =
    std::sync::OnceLock::new();

/// Registers the counter of dropped access lines, read by [`dropped_lines`].
pub fn count_dropped_lines(counter: tracing_appender::non_blocking::ErrorCounter) {
    let _ = DROPPED.set(counter);
}

/// Access lines dropped since start because the writer could not keep up.
pub fn dropped_lines() -> u64 {
    DROPPED
        .get()
        .map_or(0, |counter| counter.dropped_lines() as u64)
}

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
    /// The path and user agent as sent, cut to [`MAX_USER_AGENT_CHARS`]: quoted and escaped
    /// for text lines; as they are for JSON lines, which escape every value themselves.
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
        // Text lines quote what the client chose, so it can neither add a field nor start a
        // line; made once here, in one allocation each.
        let shown = |text: &str| match mode {
            AccessLog::Json => cut(text),
            _ => quoted(text),
        };
        let user_agent = request
            .headers()
            .get(USER_AGENT)
            .map(|value| shown(&String::from_utf8_lossy(value.as_bytes())))
            .unwrap_or_else(|| "-".to_string());
        Some(RequestLine {
            client: proxies.client_address(peer, request.headers()),
            method: request.method().clone(),
            path: shown(request.uri().path()),
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

/// `text` cut to at most [`MAX_USER_AGENT_CHARS`] characters: one client cannot write long
/// lines.
fn cut(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(MAX_USER_AGENT_CHARS) {
        if out.len() + c.len_utf8() > MAX_FIELD_BYTES {
            break;
        }
        out.push(c);
    }
    out
}

/// Characters that change how a line reads without being control characters: line and
/// paragraph separators, and the format characters (Unicode category Cf) that reorder or
/// hide text, such as right-to-left overrides and zero-width characters.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}' | '\u{110CD}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}'..='\u{E007F}')
}

/// `text` (at most [`MAX_USER_AGENT_CHARS`] of it) in double quotes, with `"` and `\` escaped and every control, separator and
/// format character written as `\u{…}`: what a client sends must not forge or break a
/// log line.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_USER_AGENT_CHARS * 4) + 2);
    out.push('"');
    for c in text.chars().take(MAX_USER_AGENT_CHARS) {
        if out.len() >= MAX_FIELD_BYTES {
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || is_invisible(c) => {
                out.push_str(&format!("\\u{{{:04x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_text_cannot_break_a_line() {
        assert_eq!(
            quoted("curl/8\r\nINFO forged"),
            "\"curl/8\\u{000d}\\u{000a}INFO forged\""
        );
        // A forged field stays inside the quotes; a quote cannot close them early.
        assert_eq!(
            quoted("x status=200 client=6.6.6.6 path=/admin \u{2028}INFO forged"),
            "\"x status=200 client=6.6.6.6 path=/admin \\u{2028}INFO forged\""
        );
        assert_eq!(quoted("a\" b=\"c\\"), "\"a\\\" b=\\\"c\\\\\"");
        assert_eq!(quoted("\u{202E}evil\u{200B}"), "\"\\u{202e}evil\\u{200b}\"");
        assert_eq!(
            quoted("Mozilla/5.0 (X11; Linux) é"),
            "\"Mozilla/5.0 (X11; Linux) é\""
        );
        assert_eq!(cut(&"a".repeat(500)).len(), MAX_USER_AGENT_CHARS);
        // Escapes cannot make a field long: at most MAX_FIELD_BYTES and its closing escape.
        assert!(quoted(&"\u{E007F}".repeat(200)).len() <= MAX_FIELD_BYTES + 12);
        assert!(cut(&"\u{1F600}".repeat(200)).len() <= MAX_FIELD_BYTES);
    }
}
