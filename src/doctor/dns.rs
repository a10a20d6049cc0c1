//! The DNS-AID check: whether `_index._agents.<host>` and `_mcp._agents.<host>` have HTTPS
//! records (RFC 9460, type 65), the names `build/dns-records.txt` asks the operator to add.
//!
//! One UDP question per name to the first resolver in `/etc/resolv.conf`, with a deadline;
//! only the answer's header is read (is there an answer at all), which is all a warning
//! needs and keeps the parser of untrusted bytes to twelve bytes. A resolver crate would
//! bring a second DNS stack for one yes-or-no question.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use super::{Doctor, Section};

const HTTPS_RECORD: u16 = 65;
const DEADLINE: Duration = Duration::from_secs(2);
const FIX: &str = "add the records in build/dns-records.txt to the zone of this host, so agents find the service from DNS (docs/agents.md, \"DNS discovery\")";

/// What the header of a DNS answer says about the name.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The name has this many answer records.
    Records(u16),
    /// NXDOMAIN: the name does not exist.
    NoSuchName,
}

/// Why an answer could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DnsError {
    #[error("the answer is shorter than a DNS header")]
    Short,
    #[error("the answer is not for this question")]
    OtherQuestion,
    #[error("the resolver answered with error code {0}")]
    Code(u8),
}

/// A query for `name`'s HTTPS records, recursion desired.
pub fn query(id: u16, name: &str) -> Vec<u8> {
    let mut message = Vec::with_capacity(name.len() + 18);
    message.extend_from_slice(&id.to_be_bytes());
    message.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        let label = &label.as_bytes()[..label.len().min(63)];
        message.push(label.len() as u8);
        message.extend_from_slice(label);
    }
    message.push(0);
    message.extend_from_slice(&HTTPS_RECORD.to_be_bytes());
    message.extend_from_slice(&1u16.to_be_bytes());
    message
}

/// Reads the header of the answer to query `id`.
pub fn answer(message: &[u8], id: u16) -> Result<Lookup, DnsError> {
    let header = message.get(..12).ok_or(DnsError::Short)?;
    let is_response = header[2] & 0x80 != 0;
    if u16::from_be_bytes([header[0], header[1]]) != id || !is_response {
        return Err(DnsError::OtherQuestion);
    }
    match header[3] & 0x0f {
        0 => Ok(Lookup::Records(u16::from_be_bytes([header[6], header[7]]))),
        3 => Ok(Lookup::NoSuchName),
        code => Err(DnsError::Code(code)),
    }
}

fn resolver() -> Option<SocketAddr> {
    let text = std::fs::read_to_string("/etc/resolv.conf").ok()?;
    text.lines().find_map(|line| {
        let address = line.trim().strip_prefix("nameserver")?.trim();
        let ip: IpAddr = address.split('%').next()?.parse().ok()?;
        Some(SocketAddr::new(ip, 53))
    })
}

async fn ask(server: SocketAddr, name: &str) -> Result<Lookup, String> {
    let local: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse().map_err(|_| "address")?
    } else {
        "[::]:0".parse().map_err(|_| "address")?
    };
    let socket = tokio::net::UdpSocket::bind(local)
        .await
        .map_err(|error| error.to_string())?;
    let mut id = [0u8; 2];
    getrandom::fill(&mut id).map_err(|error| error.to_string())?;
    let id = u16::from_be_bytes(id);
    socket
        .send_to(&query(id, name), server)
        .await
        .map_err(|error| error.to_string())?;
    let mut buffer = [0u8; 1232];
    let exchange = async {
        loop {
            let (length, from) = socket.recv_from(&mut buffer).await?;
            // Anything not from the resolver, or not for this question, is ignored.
            if from == server {
                match answer(&buffer[..length], id) {
                    Err(DnsError::OtherQuestion) => continue,
                    other => return Ok::<_, std::io::Error>(other),
                }
            }
        }
    };
    match tokio::time::timeout(DEADLINE, exchange).await {
        Err(_) => Err(format!("no answer from {server} within {DEADLINE:?}")),
        Ok(Err(error)) => Err(error.to_string()),
        Ok(Ok(answer)) => answer.map_err(|error| error.to_string()),
    }
}

pub(super) async fn check(doctor: &mut Doctor) {
    doctor.section = Section::Dns;
    let host = doctor.host.trim_matches(['[', ']']).to_string();
    if host.parse::<IpAddr>().is_ok() || host == "localhost" || host.ends_with(".localhost") {
        doctor.pass(format!(
            "DNS-AID: not looked up ({host} is not a public DNS name)"
        ));
        return;
    }
    let Some(server) = resolver() else {
        doctor.warn(
            "DNS-AID records",
            "a resolver in /etc/resolv.conf",
            "none",
            FIX,
        );
        return;
    };
    for label in ["_index._agents", "_mcp._agents"] {
        let name = format!("{label}.{host}");
        let check = format!("DNS-AID: HTTPS records at {name}");
        match ask(server, &name).await {
            Ok(Lookup::Records(count)) if count > 0 => doctor.pass(check),
            Ok(_) => doctor.warn(check, "an HTTPS record", "none", FIX),
            Err(reason) => doctor.warn(check, "an HTTPS record", reason, FIX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_asks_for_https_records() {
        let message = query(0xabcd, "_mcp._agents.info.example.com.");
        assert_eq!(&message[..4], &[0xab, 0xcd, 0x01, 0x00]);
        assert_eq!(
            &message[12..],
            b"\x04_mcp\x07_agents\x04info\x07example\x03com\x00\x00\x41\x00\x01"
        );
    }

    #[test]
    fn only_the_header_of_the_right_answer_is_read() {
        let mut header = [0u8; 12];
        header[..2].copy_from_slice(&7u16.to_be_bytes());
        header[2] = 0x81;
        header[7] = 2;
        assert_eq!(answer(&header, 7), Ok(Lookup::Records(2)));
        assert_eq!(answer(&header, 8), Err(DnsError::OtherQuestion));
        assert_eq!(answer(&header[..11], 7), Err(DnsError::Short));
        header[3] = 3;
        assert_eq!(answer(&header, 7), Ok(Lookup::NoSuchName));
        header[3] = 2;
        assert_eq!(answer(&header, 7), Err(DnsError::Code(2)));
        header[2] = 0x01;
        assert_eq!(answer(&header, 7), Err(DnsError::OtherQuestion));
    }
}
