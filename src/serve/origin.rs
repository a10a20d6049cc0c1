//! Which browser origins (and `Host` names) may call `/mcp`.
//!
//! A server bound to loopback is the classic DNS-rebinding target: a page on a foreign
//! origin makes the browser talk to 127.0.0.1. So on loopback only the base URL's origin,
//! loopback origins and configured origins pass; everything else gets 403. A server bound to
//! a public address serves public data to anyone, so any origin may call unless an allowlist
//! is configured.

use crate::config::BaseUrl;

#[derive(Debug, Clone)]
pub struct OriginPolicy {
    base_origin: String,
    base_host: String,
    allowed: Vec<String>,
    bound_to_loopback: bool,
}

fn host_of(origin: &str) -> &str {
    let rest = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    if let Some(end) = authority.strip_prefix('[').and_then(|a| a.find(']')) {
        return &authority[..end + 2];
    }
    authority.split(':').next().unwrap_or(authority)
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost" || host == "[::1]" || host == "::1" || host.starts_with("127.")
}

impl OriginPolicy {
    pub fn new(base: &BaseUrl, allowed: &[String], bound_to_loopback: bool) -> OriginPolicy {
        OriginPolicy {
            base_origin: base.as_str().to_ascii_lowercase(),
            base_host: host_of(base.as_str()).to_ascii_lowercase(),
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
        let loopback = (origin.starts_with("http://") || origin.starts_with("https://"))
            && is_loopback_host(host_of(&origin));
        loopback || (!self.bound_to_loopback && self.allowed.is_empty())
    }

    /// Whether a request with this `Host` header may proceed (only restricted on loopback).
    pub fn allows_host(&self, host: &str) -> bool {
        if !self.bound_to_loopback {
            return true;
        }
        let name = host_of(host).to_ascii_lowercase();
        is_loopback_host(&name)
            || name == self.base_host
            || self.allowed.iter().any(|origin| host_of(origin) == name)
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
        ] {
            assert!(!policy.allows_origin(bad), "{bad}");
        }
        assert!(policy.allows_host("127.0.0.1:8080"));
        assert!(policy.allows_host("info.example.com"));
        assert!(!policy.allows_host("evil.example.com"));
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
