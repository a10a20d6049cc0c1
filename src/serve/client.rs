//! Who the client is: the TCP peer, or, behind a trusted proxy or CDN, the address the proxy
//! says it forwarded for.
//!
//! Rate limits and connection caps count clients by address. Behind a CDN every request
//! arrives from the CDN's few addresses, so without this one client's limit would be the
//! whole world's. Forwarding headers are believed only from peers the operator listed
//! (`--trusted-proxy`): from anyone else they are ignored, since any client can send them.
//!
//! With `X-Forwarded-For` / `Forwarded`, each proxy appends the address it received the
//! request from, so the rightmost entries were written by our own proxies and the leftmost
//! by whoever sent the request first, possibly lies included. The client is therefore the
//! rightmost address that is not itself a trusted proxy. With a named header (such as
//! Cloudflare's `CF-Connecting-IP`), the proxy sets the value itself, and it is taken as is.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderName};
use ipnet::IpNet;

/// The operator's list of proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    networks: Vec<IpNet>,
    /// A header the proxy sets to the client's address, replacing anything the client sent.
    header: Option<HeaderName>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProxyConfigError(String);

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const FORWARDED: HeaderName = HeaderName::from_static("forwarded");

impl TrustedProxies {
    /// `networks` are CIDRs (`10.0.0.0/8`) or single addresses; `header` names the header
    /// that carries the client address, or `None` for `Forwarded` / `X-Forwarded-For`.
    pub fn new(networks: &[String], header: Option<&str>) -> Result<Self, ProxyConfigError> {
        let networks = networks
            .iter()
            .map(|text| text.trim())
            .filter(|text| !text.is_empty())
            .map(|text| {
                text.parse::<IpNet>()
                    .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        ProxyConfigError(format!(
                            "--trusted-proxy `{text}` is not an address or CIDR such as 10.0.0.0/8"
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let header = match header.map(str::trim).filter(|h| !h.is_empty()) {
            None => None,
            Some(name) => Some(HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ProxyConfigError(format!("--client-ip-header `{name}` is not a header name"))
            })?),
        };
        if header.is_some() && networks.is_empty() {
            return Err(ProxyConfigError(
                "--client-ip-header needs --trusted-proxy: the header is believed only from those peers"
                    .into(),
            ));
        }
        Ok(TrustedProxies { networks, header })
    }

    pub fn is_empty(&self) -> bool {
        self.networks.is_empty()
    }

    /// Whether `address` is one of the operator's proxies.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.networks.iter().any(|net| net.contains(&address))
    }

    /// The client's address for a request that arrived from `peer` with `headers`.
    pub fn client_address(&self, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer.ip());
        if !self.trusts(peer) {
            return peer;
        }
        if let Some(name) = &self.header {
            let mut values = headers.get_all(name).iter();
            return match (values.next(), values.next()) {
                (Some(value), None) => value
                    .to_str()
                    .ok()
                    .and_then(|text| parse_node(text.trim()))
                    .unwrap_or(peer),
                _ => peer,
            };
        }
        // Hops in the order the proxies appended them; `Forwarded` wins when both are sent,
        // as the standard form.
        let forwarded: Vec<Option<IpAddr>> = if headers.contains_key(FORWARDED) {
            headers
                .get_all(FORWARDED)
                .iter()
                .flat_map(|value| value.to_str().unwrap_or("").split(','))
                .map(forwarded_for)
                .collect()
        } else {
            headers
                .get_all(X_FORWARDED_FOR)
                .iter()
                .flat_map(|value| value.to_str().unwrap_or("").split(','))
                .map(|hop| parse_node(hop.trim()))
                .collect()
        };
        for hop in forwarded.iter().rev() {
            match hop {
                Some(address) if self.trusts(*address) => continue,
                Some(address) => return *address,
                // An unreadable hop: anything left of it may be invented, so stop at the
                // last address we can vouch for.
                None => return peer,
            }
        }
        peer
    }
}

/// IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`, seen on dual-stack sockets) as IPv4.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// The `for=` parameter of one `Forwarded` element (RFC 7239).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("for") {
            return None;
        }
        parse_node(value.trim().trim_matches('"'))
    })
}

/// An address as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `[2001:db8::1]` or `[2001:db8::1]:4711`.
fn parse_node(text: &str) -> Option<IpAddr> {
    if let Ok(address) = text.parse::<IpAddr>() {
        return Some(canonical(address));
    }
    if let Ok(socket) = text.parse::<SocketAddr>() {
        return Some(canonical(socket.ip()));
    }
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    inner.parse::<IpAddr>().ok().map(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn peer(text: &str) -> SocketAddr {
        SocketAddr::new(text.parse().unwrap(), 443)
    }

    #[test]
    fn untrusted_peers_are_the_client_whatever_they_claim() {
        let proxies = TrustedProxies::new(&["10.0.0.0/8".into()], None).unwrap();
        let claimed = headers(&[("x-forwarded-for", "198.51.100.7")]);
        assert_eq!(
            proxies.client_address(peer("203.0.113.9"), &claimed),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.client_address(peer("10.1.1.1"), &claimed),
            "10.1.1.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn the_rightmost_untrusted_hop_is_the_client() {
        let proxies =
            TrustedProxies::new(&["10.0.0.0/8".into(), "192.0.2.10".into()], None).unwrap();
        // A client that forges a left entry gains nothing: the CDN appended the real one.
        let forged = headers(&[("x-forwarded-for", "1.1.1.1, 198.51.100.7, 192.0.2.10")]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &forged),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        let split = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "198.51.100.8"),
        ]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &split),
            "198.51.100.8".parse::<IpAddr>().unwrap()
        );
        let standard = headers(&[(
            "forwarded",
            "for=1.1.1.1, for=\"[2001:db8::7]:4711\";proto=https, for=10.0.0.9",
        )]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &standard),
            "2001:db8::7".parse::<IpAddr>().unwrap()
        );
        let garbage = headers(&[("x-forwarded-for", "1.1.1.1, not-an-address")]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &garbage),
            "10.0.0.5".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_named_header_is_taken_from_trusted_peers_only() {
        let proxies =
            TrustedProxies::new(&["173.245.48.0/20".into()], Some("CF-Connecting-IP")).unwrap();
        let sent = headers(&[
            ("cf-connecting-ip", "198.51.100.7"),
            ("x-forwarded-for", "1.1.1.1"),
        ]);
        assert_eq!(
            proxies.client_address(peer("173.245.48.1"), &sent),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            proxies.client_address(peer("203.0.113.1"), &sent),
            "203.0.113.1".parse::<IpAddr>().unwrap()
        );
        let twice = headers(&[
            ("cf-connecting-ip", "1.1.1.1"),
            ("cf-connecting-ip", "2.2.2.2"),
        ]);
        assert_eq!(
            proxies.client_address(peer("173.245.48.1"), &twice),
            "173.245.48.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn bad_configuration_is_refused() {
        assert!(TrustedProxies::new(&["10.0.0.0/33".into()], None).is_err());
        assert!(TrustedProxies::new(&["example.com".into()], None).is_err());
        assert!(TrustedProxies::new(&[], Some("CF-Connecting-IP")).is_err());
        assert!(TrustedProxies::new(&["10.0.0.1".into()], Some("bad header")).is_err());
    }
}
