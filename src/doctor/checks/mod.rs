//! The checks, in the order an agent meets a deployment: discovery documents, the headers
//! they come with, the agent flow and MCP, a file each here, then DNS (`doctor/dns.rs`).
//! Paths an agent finds through a document (the token endpoint, the server card, the
//! skills) are taken from that document, not assumed, so a document pointing somewhere
//! wrong shows. What several checks share is here: the fixes findings name, and fetching a
//! document with its status and type checked.

mod discovery;
mod flow;
mod headers;
mod mcp;

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};

use super::http::Response;
use super::Doctor;
use crate::paths;

pub(super) use discovery::Discovered;

/// The fixes findings point to, written once.
mod fix {
    pub(super) const HEADERS: &str = "the host does not send the headers in build/_headers: upload _headers with build/ (Netlify, Cloudflare Pages); on S3 + CloudFront set them in a response-headers policy (docs/deploy.md, \"Deploy behind a CDN\")";
    pub(super) const CONTENT_TYPE: &str = "the host guesses the type from the file name: upload build/_headers (Netlify, Cloudflare Pages), or upload with `just deploy-s3`, which sets each Content-Type from manifest.json (S3)";
    pub(super) const PROXY: &str = "the dynamic paths /agent/*, /oauth2/*, /api/*, /ask and /mcp must reach `dossier serve --dynamic-only`: build with --origin-url naming the core (its _redirects and _worker.js proxy them), or on CloudFront add a behaviour per path to the core (docs/deploy.md)";
    pub(super) const UPLOAD: &str = "upload all of build/, dot-directories (.well-known) included, or run `dossier serve` where this URL points";
    pub(super) const BASE_URL: &str =
        "build and serve with --base-url set to the public origin this was checked at";
    pub(super) const STATE: &str = "build/ was made with other keys than the core signs with: build with the core's state directory (`dossier build --state DIR`, the same DIR as `serve --state`) and upload build/ again";
    pub(super) const FORWARD: &str = "the proxy in front of the core must forward Authorization, Accept, Origin, Content-Type and the MCP-* headers unchanged (CloudFront: an origin request policy with all viewer headers)";
    pub(super) const NO_CACHE: &str = "the CDN caches an answer that must come from the core each time: turn caching off for /agent/*, /oauth2/*, /api/*, /ask and /mcp";
    pub(super) const REWRITE: &str = "the host redirects where it must serve the document: apply the same-site rewrites in build/_redirects (Netlify, Cloudflare Pages), or upload with `just deploy-s3`, which stores each document at its URL path (S3)";
    pub(super) const REBUILD: &str = "rebuild with the current dossier and upload build/ again";
}

pub(super) use crate::wire::JSON;

pub(super) async fn all(doctor: &mut Doctor) {
    let discovered = discovery::check(doctor).await;
    headers::check(doctor).await;
    flow::check(doctor, &discovered).await;
    mcp::check(doctor).await;
    super::dns::check(doctor).await;
}

pub(super) fn text_of(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What a status means when a document is missing, for the fix.
pub(super) fn missing_fix(status: StatusCode, dynamic: bool) -> &'static str {
    if status.is_redirection() {
        fix::REWRITE
    } else if dynamic
        && matches!(
            status,
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
        )
    {
        fix::PROXY
    } else {
        fix::UPLOAD
    }
}

impl Doctor {
    /// GETs a document and checks its status and media type; its answer when both hold.
    pub(super) async fn document(&mut self, path: &str, media_types: &[&str]) -> Option<Response> {
        let response = self.get(path).await?;
        let check = format!("GET {}", self.shown(&self.absolute(path)));
        if response.status != StatusCode::OK {
            let dynamic = path.starts_with("/api/");
            self.fail(
                check,
                "200",
                response.status.to_string(),
                missing_fix(response.status, dynamic),
            );
            return None;
        }
        let media = response.media_type();
        if !media_types.contains(&media.as_str()) {
            self.fail(
                format!("{check}: Content-Type"),
                media_types.join(" or "),
                if media.is_empty() {
                    "none".to_string()
                } else {
                    response.header("content-type")
                },
                fix::CONTENT_TYPE,
            );
            return Some(response);
        }
        self.pass(check);
        Some(response)
    }

    /// A JSON document: its value when it answers 200 with a JSON type and parses.
    pub(super) async fn json_document(
        &mut self,
        path: &str,
        media_types: &[&str],
    ) -> Option<Value> {
        let response = self.document(path, media_types).await?;
        match response.json() {
            Some(value) => Some(value),
            None => {
                let check = format!("GET {}: body", self.shown(&self.absolute(path)));
                self.fail(check, "JSON", "not JSON", fix::UPLOAD);
                None
            }
        }
    }

    /// Checks that an advertised URL lies under the origin; its path then.
    pub(super) fn under_origin(&mut self, what: &str, value: &Value) -> Option<String> {
        let url = value.as_str().unwrap_or_default().to_string();
        match url.strip_prefix(self.base.as_str()) {
            Some(path) if path.starts_with('/') => Some(path.to_string()),
            _ => {
                self.fail(
                    what.to_string(),
                    format!("a URL under {}", self.base),
                    text_of(value),
                    fix::BASE_URL,
                );
                None
            }
        }
    }
}

pub(super) fn form(pairs: &[(&str, &str)]) -> Bytes {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        serializer.append_pair(name, value);
    }
    Bytes::from(serializer.finish())
}

pub(super) const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

pub(super) fn no_store(response: &Response) -> bool {
    response.header("cache-control").contains("no-store")
}

/// A request with a bad token must get the 401 challenge naming the metadata.
pub(super) async fn challenge(
    doctor: &mut Doctor,
    path: &str,
    authorization: &str,
    metadata: &str,
    what: &str,
) {
    let (method, headers, body) = if path == paths::MCP {
        (
            Method::POST,
            vec![
                ("authorization", authorization),
                ("content-type", JSON),
                ("accept", "application/json, text/event-stream"),
            ],
            Bytes::from(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()),
        )
    } else {
        (
            Method::GET,
            vec![("authorization", authorization)],
            Bytes::new(),
        )
    };
    let Some(response) = doctor.send(method.clone(), path, &headers, body).await else {
        return;
    };
    let challenge = response.header("www-authenticate");
    let ok = response.status == StatusCode::UNAUTHORIZED
        && challenge.contains("error=\"invalid_token\"")
        && challenge.contains(metadata);
    doctor.expect(
        ok,
        format!("{method} {path} with {what}: 401 challenge"),
        format!("401, WWW-Authenticate: Bearer error=\"invalid_token\", …, {metadata}"),
        format!("{} {:?}", response.status, challenge),
        if response.status == StatusCode::OK {
            fix::FORWARD
        } else {
            fix::PROXY
        },
    );
}

#[cfg(test)]
mod tests {
    use super::fix;

    #[test]
    fn the_fixes_name_every_path_a_cdn_must_send_to_the_core() {
        let rules = crate::routes::proxy_rules();
        let wanted = rules
            .prefixes
            .iter()
            .map(|prefix| format!("{prefix}*"))
            .chain(rules.paths.iter().map(|path| path.to_string()));
        for path in wanted {
            for text in [fix::PROXY, fix::NO_CACHE] {
                assert!(text.contains(&path), "{path} is not in: {text}");
            }
        }
    }
}
