//! Configuration that shapes the published documents: the public origin, token lifetimes and
//! scopes. One place, so that metadata, `auth.md` and the token endpoint cannot disagree.

use std::fmt;
use std::time::Duration;

/// The public origin, e.g. `https://info.example.com`: scheme, host, optional port, no path
/// and no trailing slash. It appears byte-for-byte in every document; it is never taken from
/// a request's `Host` header.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BaseUrl(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BaseUrlError(String);

impl BaseUrl {
    pub fn parse(value: &str) -> Result<Self, BaseUrlError> {
        let fail = |why: &str| {
            Err(BaseUrlError(format!(
                "base URL `{value}` {why}; give an origin such as `https://info.example.com`"
            )))
        };
        let rest = if let Some(rest) = value.strip_prefix("https://") {
            rest
        } else if let Some(rest) = value.strip_prefix("http://") {
            rest
        } else {
            return fail("must start with http:// or https://");
        };
        if rest.is_empty() {
            return fail("has no host");
        }
        if rest.ends_with('/') {
            return fail("must not end with a slash");
        }
        if rest.contains(['/', '?', '#', '@']) {
            return fail("must be an origin only (no path, query, fragment or user)");
        }
        if rest
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || "-.:[]".contains(c)))
        {
            return fail("contains characters not allowed in a host");
        }
        let host_end = if rest.starts_with('[') {
            match rest.find(']') {
                Some(end) => end + 1,
                None => return fail("has an unclosed IPv6 bracket"),
            }
        } else {
            rest.find(':').unwrap_or(rest.len())
        };
        let (host, port) = rest.split_at(host_end);
        if host.is_empty() || host.starts_with('.') || host.ends_with('.') {
            return fail("has an invalid host");
        }
        if let Some(port) = port.strip_prefix(':') {
            if port.parse::<u16>().is_err() {
                return fail("has an invalid port");
            }
        } else if !port.is_empty() {
            return fail("has an invalid host");
        }
        Ok(BaseUrl(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The host, without scheme or port (IPv6 literals keep their brackets).
    pub fn host(&self) -> &str {
        let rest = self
            .0
            .split_once("://")
            .map_or(self.0.as_str(), |(_, rest)| rest);
        match rest.strip_prefix('[') {
            Some(inner) => inner.find(']').map_or(rest, |end| &rest[..end + 2]),
            None => rest.split(':').next().unwrap_or(rest),
        }
    }

    /// `BASE` + `path`, where `path` starts with `/`.
    pub fn join(&self, path: &str) -> String {
        debug_assert!(path.starts_with('/'));
        format!("{}{}", self.0, path)
    }
}

impl TryFrom<String> for BaseUrl {
    type Error = BaseUrlError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        BaseUrl::parse(&value)
    }
}

impl From<BaseUrl> for String {
    fn from(value: BaseUrl) -> Self {
        value.0
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The RFC 7523 grant that exchanges an identity assertion for an access token.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Anonymous `client_credentials`: no secret, a fresh subject per token.
pub const CLIENT_CREDENTIALS_GRANT: &str = "client_credentials";

/// The only scope this service grants: read the public company information.
pub const SCOPE_COMPANY_READ: &str = "company:read";

/// What the published documents promise about authentication. Everything here is rendered
/// into metadata and `auth.md` at build time and enforced by the auth core at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthPolicy {
    pub identity_assertion_lifetime: Duration,
    pub access_token_lifetime: Duration,
    /// Allowed clock skew when checking `exp`, `nbf` and `iat`.
    pub clock_skew: Duration,
    pub scopes: Vec<String>,
}

impl Default for AuthPolicy {
    fn default() -> Self {
        AuthPolicy {
            identity_assertion_lifetime: Duration::from_secs(3600),
            access_token_lifetime: Duration::from_secs(900),
            clock_skew: Duration::from_secs(60),
            scopes: vec![SCOPE_COMPANY_READ.to_string()],
        }
    }
}

/// Everything the compiler needs besides the content itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteConfig {
    pub base_url: BaseUrl,
    pub auth: AuthPolicy,
    /// What the server enforces and the documents publish.
    pub limits: Limits,
    /// A directory whose files override the built-in templates (`None`: built-ins only).
    pub templates: Option<std::path::PathBuf>,
    /// When the gzip and brotli variants are made.
    pub compression: Compression,
}

/// Searches (`/api/search`, `/ask`, `search_company_info`) one client address may run per
/// minute, in a burst or spread out, unless `--search-rate-limit` says otherwise.
pub const DEFAULT_SEARCHES_PER_MINUTE: u32 = 120;

/// Limits that the server enforces and the documents state (the OpenAPI document says how
/// many searches a minute are allowed): one value each, held here, so a document can never
/// promise a number the server does not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Searches per client address per minute (0: no limit).
    pub searches_per_minute: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            searches_per_minute: DEFAULT_SEARCHES_PER_MINUTE,
        }
    }
}

/// When compressed variants are made. Compressing is most of the work of a compile (a
/// site of 10,000 pages has 30,000 documents), so a server does it after the new version
/// is already serving identity bytes, and a build does it only when asked
/// (`build --precompress`), before writing the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// While compiling: the result has every variant (`dossier build --precompress`).
    WhileCompiling,
    /// Later, by [`crate::compile::add_encodings`]: the compile only reuses the previous
    /// version's variants for bytes that did not change (`dossier serve`, and a plain
    /// `dossier build`, which writes identity files only).
    Deferred,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_origins() {
        for ok in [
            "https://info.example.com",
            "http://127.0.0.1:8080",
            "http://[::1]:9000",
            "http://localhost",
        ] {
            assert!(BaseUrl::parse(ok).is_ok(), "{ok} refused");
        }
    }

    #[test]
    fn refuses_anything_but_an_origin() {
        for bad in [
            "",
            "info.example.com",
            "ftp://x.y",
            "https://",
            "https://x.y/",
            "https://x.y/path",
            "https://x.y?q",
            "https://u@x.y",
            "https://x.y:99999",
            "https://x y",
            "http://[::1",
        ] {
            assert!(BaseUrl::parse(bad).is_err(), "{bad} accepted");
        }
    }
}
