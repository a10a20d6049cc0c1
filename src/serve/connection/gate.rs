//! The connection caps: every open connection is counted in total and per client address,
//! and one beyond either cap is answered at once with a canned 503 or 429 and closed,
//! without reaching hyper.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::TcpStream;

use super::ConnectionLimits;
use crate::wire::ErrorBody;

/// Connections open in this process, on every listener (for `/metrics`).
pub static OPEN_CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Counts open connections; a [`Permit`] gives its place back when dropped.
pub(super) struct Gate {
    pub(super) limits: ConnectionLimits,
    open: AtomicUsize,
    per_client: Mutex<HashMap<IpAddr, usize>>,
}

pub(super) struct Permit {
    gate: Arc<Gate>,
    client: Option<IpAddr>,
}

pub(super) enum ConnectionRefusal {
    Full,
    ClientFull,
}

/// The connection caps of one listener. A connection's permit goes with it to the thread
/// that serves it, and gives the place back from there.
#[derive(Clone)]
pub struct ConnectionGate(pub(super) Arc<Gate>);

impl ConnectionGate {
    pub fn new(limits: ConnectionLimits) -> ConnectionGate {
        ConnectionGate(Arc::new(Gate {
            limits,
            open: AtomicUsize::new(0),
            per_client: Mutex::new(HashMap::new()),
        }))
    }
}

impl Gate {
    pub(super) fn admit(
        self: &Arc<Self>,
        client: Option<IpAddr>,
    ) -> Result<Permit, ConnectionRefusal> {
        if self.open.fetch_add(1, Ordering::AcqRel) >= self.limits.total {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return Err(ConnectionRefusal::Full);
        }
        // A permit exists from here on, so every early return gives the place back.
        OPEN_CONNECTIONS.fetch_add(1, Ordering::Relaxed);
        let mut permit = Permit {
            gate: Arc::clone(self),
            client: None,
        };
        if let Some(client) = client {
            let Ok(mut counts) = self.per_client.lock() else {
                return Ok(permit);
            };
            let count = counts.entry(client).or_insert(0);
            if *count >= self.limits.per_client {
                return Err(ConnectionRefusal::ClientFull);
            }
            *count += 1;
            permit.client = Some(client);
        }
        Ok(permit)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.open.fetch_sub(1, Ordering::AcqRel);
        OPEN_CONNECTIONS.fetch_sub(1, Ordering::Relaxed);
        if let Some(client) = self.client {
            if let Ok(mut counts) = self.gate.per_client.lock() {
                if let Some(count) = counts.get_mut(&client) {
                    *count -= 1;
                    if *count == 0 {
                        counts.remove(&client);
                    }
                }
            }
        }
    }
}

/// The whole answer to a refused connection, written without parsing anything it sent.
fn refusal_bytes(refusal: &ConnectionRefusal) -> Vec<u8> {
    let (status, code, description) = match refusal {
        ConnectionRefusal::Full => (
            "503 Service Unavailable",
            "too_many_connections",
            "the server is at its connection limit; retry shortly",
        ),
        ConnectionRefusal::ClientFull => (
            "429 Too Many Requests",
            "too_many_connections",
            "too many open connections from this address; close some and retry",
        ),
    };
    let body = String::from_utf8(crate::wire::json_line(&ErrorBody {
        error: code,
        error_description: description,
    }))
    .unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncache-control: no-store\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

pub(super) fn refuse(stream: TcpStream, peer: SocketAddr, refusal: ConnectionRefusal) {
    // One non-blocking write into an empty send buffer always fits; then the socket is
    // closed. Nothing waits on this client, so refusing costs no task and no descriptor.
    let _ = stream.try_write(&refusal_bytes(&refusal));
    tracing::debug!(%peer, "connection refused: over the connection limit");
}
