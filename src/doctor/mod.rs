//! `dossier doctor URL`: checks a deployment the way agents meet it, from outside, over
//! HTTP — the discovery documents, the headers as served, the agent flow end to end, MCP in
//! both protocol eras, and the DNS-AID records.
//!
//! A static host or CDN in front of the core is where deployments go wrong (a lost header,
//! a cached answer that must reach the core, a JWKS built from other keys), and none of
//! that shows on the machine that built `build/`. Each [`Finding`] therefore says what was
//! expected, what was seen and how to fix it. The checks are a fixed list with a fixed
//! request budget ([`http::Limits`]) and at most [`MAX_REGISTRATIONS`] registrations, so
//! doctor is never a flood against the rate limits it is checking.

mod checks;
pub mod dns;
pub mod http;
mod report;

use std::collections::HashMap;

use bytes::Bytes;
use hyper::Method;
use serde::Serialize;

pub use report::{render_json, render_text};

/// Registrations doctor may make (each one counts against the deployment's rate limit).
pub const MAX_REGISTRATIONS: usize = 3;

/// Findings kept from one run; a server that lists thousands of things gets a last finding
/// saying how many more were not checked, not a report the size of its documents.
const MAX_FINDINGS: usize = 300;

/// Characters of a finding's text kept: server text is quoted in findings, and a document
/// can be megabytes long.
const MAX_FINDING_CHARS: usize = 300;

/// `text` safe to print: control, separator and format characters (which can move the
/// cursor, retitle the terminal or fake a line of the report) written as `\u{…}`, and at
/// most [`MAX_FINDING_CHARS`] characters.
fn printable(text: String) -> String {
    let unsafe_char = |c: char| c.is_control() || crate::serve::access_log::is_invisible(c);
    if text.chars().count() <= MAX_FINDING_CHARS && !text.chars().any(unsafe_char) {
        return text;
    }
    let mut out = String::with_capacity(text.len().min(MAX_FINDING_CHARS * 2));
    for (index, c) in text.chars().enumerate() {
        if index == MAX_FINDING_CHARS {
            out.push('…');
            break;
        }
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The part of a deployment a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    Discovery,
    Headers,
    AgentFlow,
    Mcp,
    Dns,
}

impl Section {
    pub const ALL: [Section; 5] = [
        Section::Discovery,
        Section::Headers,
        Section::AgentFlow,
        Section::Mcp,
        Section::Dns,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Section::Discovery => "discovery",
            Section::Headers => "headers",
            Section::AgentFlow => "agent flow",
            Section::Mcp => "MCP",
            Section::Dns => "DNS",
        }
    }
}

/// How a check came out. Warnings are reported but do not fail the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Warn,
    Fail,
}

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub section: Section,
    pub check: String,
    pub outcome: Outcome,
    /// Empty for a pass.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub expected: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub seen: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

/// Everything one run found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub url: String,
    pub requests: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn count(&self, outcome: Outcome) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.outcome == outcome)
            .count()
    }

    /// Whether nothing failed (warnings allowed): doctor's exit status.
    pub fn healthy(&self) -> bool {
        self.count(Outcome::Fail) == 0
    }
}

/// A deployment's public origin, as doctor was given it.
#[derive(Debug, Clone)]
pub struct Target(String);

impl Target {
    /// `https://host[:port]`, with or without a trailing slash; no path, query or fragment.
    pub fn parse(url: &str) -> Result<Target, String> {
        let trimmed = url.trim().trim_end_matches('/');
        let uri: hyper::Uri = trimmed.parse().map_err(|_| {
            format!("`{url}` is not a URL; give an origin such as https://info.example.com")
        })?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "`{url}` is not an http or https origin; give one such as https://info.example.com"
            ));
        }
        if uri.path() != "/" && !uri.path().is_empty() || uri.query().is_some() {
            return Err(format!(
                "`{url}` has a path; give the origin only (dossier serves at the root of its host)"
            ));
        }
        Ok(Target(trimmed.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn host(&self) -> String {
        self.0
            .parse::<hyper::Uri>()
            .ok()
            .and_then(|uri| uri.host().map(str::to_string))
            .unwrap_or_default()
    }
}

/// Runs every check against `target`.
pub async fn run(target: &Target, limits: http::Limits) -> Result<Report, http::HttpError> {
    let mut doctor = Doctor {
        base: target.as_str().to_string(),
        host: target.host(),
        client: http::Client::new(limits)?,
        cache: HashMap::new(),
        findings: Vec::new(),
        section: Section::Discovery,
        registrations: 0,
        dropped_findings: 0,
    };
    checks::all(&mut doctor).await;
    if doctor.dropped_findings > 0 {
        let dropped = doctor.dropped_findings;
        doctor.findings.push(Finding {
            section: doctor.section,
            check: format!("{dropped} more findings not shown"),
            outcome: Outcome::Warn,
            expected: format!("at most {MAX_FINDINGS} findings"),
            seen: format!("{}", MAX_FINDINGS + dropped),
            fix: "the deployment lists far more than dossier publishes; check what it serves"
                .into(),
        });
    }
    Ok(Report {
        url: doctor.base.clone(),
        requests: doctor.client.sent(),
        findings: doctor.findings,
    })
}

/// The state of one run: the client, the answers already fetched, the findings so far.
pub(crate) struct Doctor {
    /// The origin, without a trailing slash (as `BASE` in the contract).
    base: String,
    host: String,
    client: http::Client,
    /// GET answers by URL, so a document several checks read is fetched once.
    cache: HashMap<String, Option<http::Response>>,
    findings: Vec<Finding>,
    section: Section,
    registrations: usize,
    /// Findings past [`MAX_FINDINGS`], counted rather than kept.
    dropped_findings: usize,
}

impl Doctor {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A GET of `url_or_path` (a path is taken as under the origin), fetched once. A failure
    /// to get any answer is recorded as a finding; `None` then.
    async fn get(&mut self, url_or_path: &str) -> Option<http::Response> {
        let url = self.absolute(url_or_path);
        if let Some(cached) = self.cache.get(&url) {
            return cached.clone();
        }
        let answer = self.send(Method::GET, &url, &[], Bytes::new()).await;
        self.cache.insert(url, answer.clone());
        answer
    }

    /// One request, not cached. A failure to get any answer is recorded as a finding.
    async fn send(
        &mut self,
        method: Method,
        url_or_path: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Option<http::Response> {
        let url = self.absolute(url_or_path);
        match self.client.send(method.clone(), &url, headers, body).await {
            Ok(response) => Some(response),
            Err(error) => {
                self.fail(
                    format!("{method} {}", self.shown(&url)),
                    "an HTTP answer",
                    error.to_string(),
                    "check that the URL is the deployment's public origin and that it is reachable from here",
                );
                None
            }
        }
    }

    fn absolute(&self, url_or_path: &str) -> String {
        if url_or_path.starts_with('/') {
            self.url(url_or_path)
        } else {
            url_or_path.to_string()
        }
    }

    /// A URL as shown in findings: its path when it is under the origin.
    fn shown<'u>(&self, url: &'u str) -> &'u str {
        match url.strip_prefix(self.base.as_str()) {
            Some(path) if path.starts_with('/') => path,
            _ => url,
        }
    }

    fn record(
        &mut self,
        outcome: Outcome,
        check: impl Into<String>,
        expected: impl Into<String>,
        seen: impl Into<String>,
        fix: impl Into<String>,
    ) {
        if self.findings.len() >= MAX_FINDINGS {
            self.dropped_findings += 1;
            return;
        }
        self.findings.push(Finding {
            section: self.section,
            check: printable(check.into()),
            outcome,
            expected: printable(expected.into()),
            seen: printable(seen.into()),
            fix: fix.into(),
        });
    }

    fn pass(&mut self, check: impl Into<String>) {
        self.record(Outcome::Pass, check, "", "", "");
    }

    fn fail(
        &mut self,
        check: impl Into<String>,
        expected: impl Into<String>,
        seen: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.record(Outcome::Fail, check, expected, seen, fix);
    }

    fn warn(
        &mut self,
        check: impl Into<String>,
        expected: impl Into<String>,
        seen: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.record(Outcome::Warn, check, expected, seen, fix);
    }

    /// A pass when `ok`, otherwise a failure with what was expected and seen.
    fn expect(
        &mut self,
        ok: bool,
        check: impl Into<String>,
        expected: impl Into<String>,
        seen: impl Into<String>,
        fix: impl Into<String>,
    ) -> bool {
        if ok {
            self.pass(check);
        } else {
            self.fail(check, expected, seen, fix);
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_an_origin() {
        assert_eq!(
            Target::parse("https://info.example.com/").unwrap().as_str(),
            "https://info.example.com"
        );
        assert_eq!(
            Target::parse("http://127.0.0.1:8080").unwrap().host(),
            "127.0.0.1"
        );
        for bad in [
            "info.example.com",
            "ftp://info.example.com",
            "https://info.example.com/docs",
            "https://info.example.com/?a=1",
            "",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn server_text_cannot_drive_the_terminal_or_grow_the_report() {
        assert_eq!(
            printable("x\u{1b}]0;owned\u{7}\nhealthy: nothing failed".into()),
            "x\\u{001b}]0;owned\\u{0007}\\u{000a}healthy: nothing failed"
        );
        assert_eq!(printable("a\u{202e}b".into()), "a\\u{202e}b");
        let long = printable("é".repeat(1000));
        assert_eq!(long.chars().count(), MAX_FINDING_CHARS + 1);
        assert!(long.ends_with('…'));
        assert_eq!(printable("plain text".into()), "plain text");
    }

    #[tokio::test]
    async fn a_run_keeps_a_bounded_number_of_findings() {
        let mut doctor = Doctor {
            base: "http://127.0.0.1:9".into(),
            host: "127.0.0.1".into(),
            client: http::Client::new(http::Limits::default()).unwrap(),
            cache: HashMap::new(),
            findings: Vec::new(),
            section: Section::Discovery,
            registrations: 0,
            dropped_findings: 0,
        };
        for index in 0..(MAX_FINDINGS + 50) {
            doctor.fail(format!("check {index}"), "x", "y", "z");
        }
        assert_eq!(doctor.findings.len(), MAX_FINDINGS);
        assert_eq!(doctor.dropped_findings, 50);
    }

    #[test]
    fn only_failures_make_a_report_unhealthy() {
        let finding = |outcome| Finding {
            section: Section::Headers,
            check: "x".into(),
            outcome,
            expected: String::new(),
            seen: String::new(),
            fix: String::new(),
        };
        let mut report = Report {
            url: "https://info.example.com".into(),
            requests: 2,
            findings: vec![finding(Outcome::Pass), finding(Outcome::Warn)],
        };
        assert!(report.healthy());
        report.findings.push(finding(Outcome::Fail));
        assert!(!report.healthy());
        assert_eq!(report.count(Outcome::Warn), 1);
    }
}
