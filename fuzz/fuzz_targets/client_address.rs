//! Client-address resolution behind trusted proxies, for each kind of forwarding header the
//! operator can name: the answer is the peer or an address the header carried, never a
//! trusted proxy (unless it is the peer itself), and a header the operator did not name is
//! never read.
#![no_main]

use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;

use dossier::serve::client::TrustedProxies;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 3] = ["x-forwarded-for", "forwarded", "cf-connecting-ip"];

fn proxies() -> &'static [TrustedProxies; 3] {
    static PROXIES: OnceLock<[TrustedProxies; 3]> = OnceLock::new();
    PROXIES.get_or_init(|| {
        let networks = ["10.0.0.0/8".to_string(), "2001:db8::/32".to_string()];
        NAMES.map(|name| TrustedProxies::new(&networks, Some(name)).expect("proxies"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut headers = HeaderMap::new();
    for (index, line) in text.lines().take(6).enumerate() {
        if let Ok(value) = HeaderValue::from_str(line) {
            headers.append(HeaderName::from_static(NAMES[index % 3]), value);
        }
    }
    let peer: SocketAddr = "10.1.2.3:443".parse().expect("peer");
    for (name, proxies) in NAMES.iter().zip(proxies()) {
        let client = proxies.client_address(peer, &headers);
        assert!(client == peer.ip() || !proxies.trusts(client) || *name == "cf-connecting-ip");
        // Only the named header counts: the others removed, the answer is the same.
        let mut only = HeaderMap::new();
        for value in headers.get_all(*name) {
            only.append(HeaderName::from_static(name), value.clone());
        }
        assert_eq!(proxies.client_address(peer, &only), client);
        let untrusted: SocketAddr = "192.0.2.1:443".parse().expect("peer");
        assert_eq!(
            proxies.client_address(untrusted, &headers),
            "192.0.2.1".parse::<IpAddr>().expect("address")
        );
    }
});
