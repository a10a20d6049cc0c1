//! Header values the server interprets itself: `Host`, `Origin` (the MCP origin policy) and
//! the forwarding headers a trusted proxy sends.
#![no_main]

use std::net::SocketAddr;
use std::sync::OnceLock;

use dossier::config::BaseUrl;
use dossier::serve::client::TrustedProxies;
use dossier::serve::origin::{is_valid_host_header, OriginPolicy};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;

fn setup() -> &'static (OriginPolicy, TrustedProxies) {
    static SETUP: OnceLock<(OriginPolicy, TrustedProxies)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let base = BaseUrl::parse("http://127.0.0.1:8080").expect("base");
        let policy = OriginPolicy::new(&base, &["https://app.example.org".into()], true);
        let proxies =
            TrustedProxies::new(&["10.0.0.0/8".into(), "::1".into()], None).expect("proxies");
        (policy, proxies)
    })
}

fuzz_target!(|data: &[u8]| {
    let (policy, proxies) = setup();
    let _ = is_valid_host_header(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if policy.allows_origin(text) {
        // Whatever passes on a loopback server is ours, loopback, or listed.
        let lower = text.trim().to_ascii_lowercase();
        assert!(
            lower.starts_with("http://") || lower.starts_with("https://"),
            "{text}"
        );
    }
    let _ = policy.allows_host(text);
    let mut headers = HeaderMap::new();
    for (index, line) in text.lines().take(4).enumerate() {
        let name = [
            "x-forwarded-for",
            "forwarded",
            "x-forwarded-for",
            "forwarded",
        ][index];
        if let Ok(value) = HeaderValue::from_str(line) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
    let peer: SocketAddr = "10.1.2.3:443".parse().expect("peer");
    let client = proxies.client_address(peer, &headers);
    // The answer is the peer or an address that appeared in the headers.
    assert!(client == peer.ip() || !proxies.trusts(client));
});
