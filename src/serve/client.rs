//! Who the client is: the TCP peer, or, behind a trusted proxy or CDN, the address the proxy
//! says it forwarded for.
//!
//! Rate limits and connection caps count clients by address. Behind a CDN every request
//! arrives from the CDN's few addresses, so without this one client's limit would be the
//! whole world's. Forwarding headers are believed only from peers the operator listed
//! (`--trusted-proxy`): from anyone else they are ignored, since any client can send them.
//!
//! The operator names the one header their proxy writes (`--client-ip-header`,
//! `X-Forwarded-For` unless told otherwise), and only that header is read. Which header
//! counts never depends on what the request carries: a proxy that appends to
//! `X-Forwarded-For` passes a client's own `Forwarded` through untouched, so choosing
//! `Forwarded` whenever it is present would let any client name its own address.
//!
//! With `X-Forwarded-For` / `Forwarded`, each proxy appends the address it received the
//! request from, so the rightmost entries were written by our own proxies and the leftmost
//! by whoever sent the request first, possibly lies included. The client is therefore the
//! rightmost address that is not itself a trusted proxy, found walking from the right
//! through at most [`MAX_HOPS`] entries. With a header of the proxy's own (such as
//! Cloudflare's `CF-Connecting-IP`), the proxy sets the value itself, and it is taken as is.

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderName};
use ipnet::IpNet;

/// The operator's list of proxies whose forwarding header is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    networks: Vec<IpNet>,
    header: ClientHeader,
}

/// The one header that names the client, as the operator's proxy writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ClientHeader {
    /// `X-Forwarded-For`, appended to by each proxy (nginx, CloudFront, load balancers).
    #[default]
    XForwardedFor,
    /// `Forwarded: for=…` (RFC 7239), appended to by each proxy.
    Forwarded,
    /// A header the proxy sets to the client's address, replacing anything the client sent.
    Own(HeaderName),
}

/// Entries of a forwarding header walked from the right before giving up: more trusted
/// proxies than this in a row is not a real chain.
pub const MAX_HOPS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProxyConfigError(String);

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const FORWARDED: HeaderName = HeaderName::from_static("forwarded");

impl TrustedProxies {
    /// `networks` are CIDRs (`10.0.0.0/8`) or single addresses; `header` names the header
    /// that carries the client address, `None` for `X-Forwarded-For`.
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
        let named = header.map(str::trim).filter(|h| !h.is_empty());
        let header = match named {
            None => ClientHeader::XForwardedFor,
            Some(name) => match HeaderName::from_bytes(name.as_bytes()) {
                Ok(name) if name == X_FORWARDED_FOR => ClientHeader::XForwardedFor,
                Ok(name) if name == FORWARDED => ClientHeader::Forwarded,
                Ok(name) => ClientHeader::Own(name),
                Err(_) => {
                    return Err(ProxyConfigError(format!(
                        "--client-ip-header `{name}` is not a header name"
                    )))
                }
            },
        };
        if named.is_some() && networks.is_empty() {
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
        let (name, read): (&HeaderName, fn(&str) -> Option<IpAddr>) = match &self.header {
            ClientHeader::Own(name) => {
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
            ClientHeader::XForwardedFor => (&X_FORWARDED_FOR, |hop| parse_node(hop.trim())),
            ClientHeader::Forwarded => (&FORWARDED, forwarded_for),
        };
        // Later header lines were added by later proxies: the last line's last entry is the
        // nearest hop. Entries are split as bytes, so one that is not text (a client's, left
        // of ours on a merged line) spoils only itself.
        let nearest_first = headers
            .get_all(name)
            .iter()
            .rev()
            .flat_map(|line| line.as_bytes().rsplit(|byte| *byte == b','))
            .take(MAX_HOPS)
            .map(|hop| std::str::from_utf8(hop).ok().and_then(read));
        for hop in nearest_first {
            match hop {
                Some(address) if self.trusts(address) => continue,
                Some(address) => return address,
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
        let rfc7239 = TrustedProxies::new(
            &["10.0.0.0/8".into(), "192.0.2.10".into()],
            Some("Forwarded"),
        )
        .unwrap();
        assert_eq!(
            rfc7239.client_address(peer("10.0.0.5"), &standard),
            "2001:db8::7".parse::<IpAddr>().unwrap()
        );
        let garbage = headers(&[("x-forwarded-for", "1.1.1.1, not-an-address")]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &garbage),
            "10.0.0.5".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn only_the_header_the_operator_named_is_read() {
        // Behind a proxy that appends X-Forwarded-For, a client's own `Forwarded` passes
        // through untouched: it must not be believed, whatever it says.
        let proxies = TrustedProxies::new(&["127.0.0.1".into()], None).unwrap();
        let forged = headers(&[
            ("forwarded", "for=203.0.113.66"),
            ("x-forwarded-for", "198.51.100.7"),
        ]);
        assert_eq!(
            proxies.client_address(peer("127.0.0.1"), &forged),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // Named `Forwarded`: X-Forwarded-For is the one ignored.
        let rfc7239 = TrustedProxies::new(&["127.0.0.1".into()], Some("forwarded")).unwrap();
        let forged = headers(&[
            ("x-forwarded-for", "203.0.113.66"),
            ("forwarded", "for=198.51.100.7"),
        ]);
        assert_eq!(
            rfc7239.client_address(peer("127.0.0.1"), &forged),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // Named X-Forwarded-For is the default, spelled out.
        let spelled = TrustedProxies::new(&["127.0.0.1".into()], Some("X-Forwarded-For")).unwrap();
        assert_eq!(spelled.header, ClientHeader::XForwardedFor);
    }

    #[test]
    fn a_client_entry_that_is_not_text_spoils_only_itself() {
        // nginx merges the client's own X-Forwarded-For and the address it saw into one
        // line; a byte that is not ASCII on the client's side must not make the whole line
        // unreadable (which would count the client as the proxy).
        let proxies = TrustedProxies::new(&["127.0.0.1".into()], None).unwrap();
        let mut sent = HeaderMap::new();
        sent.append(
            X_FORWARDED_FOR,
            HeaderValue::from_bytes(b"1.1.1.\xff, 198.51.100.7").unwrap(),
        );
        assert_eq!(
            proxies.client_address(peer("127.0.0.1"), &sent),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn a_chain_of_trusted_hops_is_walked_only_so_far() {
        let proxies = TrustedProxies::new(&["10.0.0.0/8".into()], None).unwrap();
        let mut chain = vec!["198.51.100.7".to_string()];
        chain.extend((0..MAX_HOPS).map(|i| format!("10.0.0.{}", i % 250)));
        let long = headers(&[("x-forwarded-for", &chain.join(", "))]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &long),
            "10.0.0.5".parse::<IpAddr>().unwrap(),
            "past MAX_HOPS trusted entries, the peer is the client"
        );
        chain.remove(1);
        let within = headers(&[("x-forwarded-for", &chain.join(", "))]);
        assert_eq!(
            proxies.client_address(peer("10.0.0.5"), &within),
            "198.51.100.7".parse::<IpAddr>().unwrap()
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
