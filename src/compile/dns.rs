//! `build/dns-records.txt`: the DNS-AID records an operator can add to their zone so agents
//! find the service from DNS alone (draft-mozleywilliams-dnsop-dnsaid: HTTPS records, RFC
//! 9460, under `_agents`).
//!
//! Two names are published: `_index._agents.<host>` (the entry point: the site, whose
//! `/.well-known/ai-catalog.json` lists the rest) and `_mcp._agents.<host>` (the MCP
//! server). An HTTPS record carries no path, so both point at the host; the MCP endpoint's
//! path is found through the AI Catalog and the server card. Nothing is written for what
//! dossier does not serve (no `_a2a`).

use crate::config::BaseUrl;

/// The zone-file lines, with comments saying where they go and what to check.
pub fn records(base_url: &BaseUrl) -> String {
    let host = base_url.host();
    let https = base_url.as_str().starts_with("https://");
    let port = base_url
        .as_str()
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse::<u16>().ok())
        .unwrap_or(if https { 443 } else { 80 });
    let mut text = format!(
        "; DNS-AID records for {base} (draft-mozleywilliams-dnsop-dnsaid; RFC 9460 HTTPS records).\n\
         ; Add them to the zone that holds {host}, and sign the zone (DNSSEC) so resolvers can\n\
         ; authenticate the answer. If agents should find the service from your organisation's\n\
         ; domain instead, publish the same records with that domain in place of {host} in the\n\
         ; owner names (the targets stay {host}).\n\
         ; alpn: the protocols the public endpoint speaks. Behind a CDN that is usually h3 and h2;\n\
         ; dossier itself speaks HTTP/1.1, so list only http/1.1 when agents reach it directly.\n",
        base = base_url.as_str(),
    );
    if !https {
        text.push_str(
            "; Warning: the base URL is plain http. Agents expect DNS-AID entries to lead to https;\n\
             ; build with the public https:// base URL before publishing these.\n",
        );
    }
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        text.push_str(
            "; The base URL's host is an IP address, which has no DNS name to publish under;\n\
             ; build with the public host name to get records you can use.\n",
        );
        return text;
    }
    let alpn = "h3,h2,http/1.1";
    text.push_str(&format!(
        "_index._agents.{host}. 3600 IN HTTPS 1 {host}. alpn=\"{alpn}\" port={port}\n\
         _mcp._agents.{host}. 3600 IN HTTPS 1 {host}. alpn=\"{alpn}\" port={port} mandatory=\"alpn,port\"\n"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_name_the_host_and_port() {
        let text = records(&BaseUrl::parse("https://info.example.com").unwrap());
        assert!(text.contains(
            "_index._agents.info.example.com. 3600 IN HTTPS 1 info.example.com. alpn=\"h3,h2,http/1.1\" port=443\n"
        ));
        assert!(text.contains("_mcp._agents.info.example.com. 3600 IN HTTPS 1 info.example.com."));
        assert!(!text.contains("_a2a"));
        assert!(!text.contains("Warning"));
        let local = records(&BaseUrl::parse("http://127.0.0.1:8080").unwrap());
        assert!(local.contains("Warning") && local.contains("IP address"));
        assert!(!local.contains("IN HTTPS"));
        let port = records(&BaseUrl::parse("https://info.example.com:8443").unwrap());
        assert!(port.contains("port=8443"));
    }
}
