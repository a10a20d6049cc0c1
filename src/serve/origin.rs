//! Which browser origins (and `Host` names) may call `/mcp`.
//!
//! A server bound to loopback is the classic DNS-rebinding target: a page on a foreign
//! origin makes the browser talk to 127.0.0.1. So on loopback only the base URL's origin,
//! loopback origins and configured origins pass; everything else gets 403. A server bound to
//! a public address serves public data to anyone, so any origin may call unless an allowlist
//! is configured.

use std::net::IpAddr;

use crate::config::BaseUrl;

#[derive(Debug, Clone)]
pub struct OriginPolicy {
    base_origin: String,
    base_host: String,
    allowed: Vec<String>,
    bound_to_loopback: bool,
}

/// The host of an authority (`host`, `host:port`, `[v6]`, `[v6]:port`), or `None` when it is
/// not exactly that: `[::1].evil.com` or `127.0.0.1:80:80` have no host.
fn authority_host(authority: &str) -> Option<&str> {
    let (host, rest) = if authority.starts_with('[') {
        authority.split_at(authority.find(']')? + 1)
    } else {
        authority.split_at(authority.find(':').unwrap_or(authority.len()))
    };
    let port_ok = match rest.strip_prefix(':') {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => rest.is_empty(),
    };
    (port_ok && !host.is_empty()).then_some(host)
}

/// The host of an origin (`scheme://authority`, with nothing after the authority).
fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, authority) = origin.split_once("://")?;
    if !(scheme == "http" || scheme == "https") {
        return None;
    }
    authority_host(authority)
}

/// Loopback means `localhost` exactly, or an IP literal that parses as a loopback address.
/// Names that merely start like one (`127.0.0.1.nip.io`, `127.attacker.example`) resolve
/// wherever their owner likes.
pub fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let literal = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match literal.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

/// Whether a `Host` value has the shape RFC 9110 allows: a registered name or IP literal,
/// optionally with a port (or nothing at all).
pub fn is_valid_host_header(value: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    if text.is_empty() {
        return true;
    }
    let Some(host) = authority_host(text) else {
        return false;
    };
    if let Some(literal) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return literal.parse::<std::net::Ipv6Addr>().is_ok();
    }
    host.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b))
}

impl OriginPolicy {
    pub fn new(base: &BaseUrl, allowed: &[String], bound_to_loopback: bool) -> OriginPolicy {
        OriginPolicy {
            base_origin: base.as_str().to_ascii_lowercase(),
            base_host: origin_host(base.as_str())
                .unwrap_or_default()
                .to_ascii_lowercase(),
            allowed: allowed
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|o| !o.is_empty())
                .collect(),
            bound_to_loopback,
        }
    }

    /// Whether a request with this `Origin` header may proceed.
    pub fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        if origin == self.base_origin || self.allowed.contains(&origin) {
            return true;
        }
        let loopback = origin_host(&origin).is_some_and(is_loopback_host);
        loopback || (!self.bound_to_loopback && self.allowed.is_empty())
    }

    /// Whether a request with this `Host` header may proceed (only restricted on loopback).
    pub fn allows_host(&self, host: &str) -> bool {
        if !self.bound_to_loopback {
            return true;
        }
        let Some(name) = authority_host(host.trim()) else {
            return false;
        };
        let name = name.to_ascii_lowercase();
        is_loopback_host(&name)
            || name == self.base_host
            || self
                .allowed
                .iter()
                .any(|origin| origin_host(origin) == Some(name.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allowed: &[&str], loopback: bool) -> OriginPolicy {
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        OriginPolicy::new(
            &BaseUrl::parse("https://info.example.com").unwrap(),
            &allowed,
            loopback,
        )
    }

    #[test]
    fn loopback_servers_refuse_foreign_origins() {
        let policy = policy(&["https://app.example.org"], true);
        for ok in [
            "https://info.example.com",
            "http://localhost:6274",
            "http://127.0.0.1:3000",
            "http://[::1]:80",
            "https://app.example.org",
        ] {
            assert!(policy.allows_origin(ok), "{ok}");
        }
        for bad in [
            "https://evil.example.com",
            "null",
            "http://localhost.evil.com",
            "file://",
            "https://info.example.com.evil.com",
            "http://127.attacker.example:8080",
            "http://127.0.0.1.nip.io",
            "http://[::1].evil.com",
            "http://[::1]evil.com:80",
            "http://127.0.0.1:80:80",
            "http://localhost@evil.com",
            "javascript://127.0.0.1",
        ] {
            assert!(!policy.allows_origin(bad), "{bad}");
        }
        assert!(policy.allows_host("127.0.0.1:8080"));
        assert!(policy.allows_host("info.example.com"));
        assert!(policy.allows_host("[::1]:8080"));
        assert!(policy.allows_host("LOCALHOST"));
        assert!(policy.allows_host("127.9.9.9"));
        for bad in [
            "evil.example.com",
            "127.0.0.1.nip.io",
            "127.attacker.example:8080",
            "[::1].evil.com",
            "localhost.evil.com:8080",
            "127.0.0.1:80:80",
        ] {
            assert!(!policy.allows_host(bad), "{bad}");
        }
    }

    #[test]
    fn host_header_shapes() {
        for ok in [
            "",
            "example.com",
            "example.com:8080",
            "127.0.0.1",
            "[::1]:80",
            "a_b.example",
        ] {
            assert!(is_valid_host_header(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "exa mple.com",
            "a/b",
            "[::1",
            "[nothing]",
            "x:80:80",
            "x:8o",
            "a@b",
        ] {
            assert!(!is_valid_host_header(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn public_servers_take_any_origin_unless_restricted() {
        assert!(policy(&[], false).allows_origin("https://anyone.example"));
        assert!(
            !policy(&["https://app.example.org"], false).allows_origin("https://anyone.example")
        );
        assert!(policy(&[], false).allows_host("whatever"));
    }
}
