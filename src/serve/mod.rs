//! The HTTP edge: accept connections, hand each request to the router, shut down cleanly.
//!
//! HTTP/1.1 with keep-alive via hyper. [`connection`] owns the socket side (caps, timeouts,
//! panic isolation, graceful shutdown), [`client`] decides who a request is from, and
//! [`router`] what it gets.

pub(crate) mod api;
pub mod client;
pub mod connection;
mod negotiate;
pub mod origin;
pub mod reply;
mod router;
mod statics;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::{ArcSwap, Guard};
use tokio::net::TcpListener;

use crate::auth::endpoints::AuthService;
use crate::clock::Clock;
use crate::compile::ArtifactSet;
use crate::config::SiteConfig;
use crate::content::ContentError;
use crate::live::{ContentStatus, Live, Source, Version};
use client::TrustedProxies;
use connection::ConnectionLimits;
use origin::OriginPolicy;

/// Everything a request may need, shared by all connections.
pub struct App {
    pub config: SiteConfig,
    pub auth: AuthService,
    pub clock: Arc<dyn Clock>,
    pub source: Source,
    pub origins: OriginPolicy,
    /// Serve only the dynamic core (`serve --dynamic-only`).
    pub dynamic_only: bool,
    /// How many connections may be open at once.
    pub connections: ConnectionLimits,
    /// Proxies whose forwarding headers name the client.
    pub proxies: TrustedProxies,
    started_at: SystemTime,
    live: ArcSwap<Live>,
}

impl App {
    pub fn new(
        config: SiteConfig,
        auth: AuthService,
        clock: Arc<dyn Clock>,
        source: Source,
        version: Version,
        origins: OriginPolicy,
    ) -> App {
        let started_at = clock.now();
        let live = Live::new(&version, ContentStatus::Ok, &source, started_at);
        App {
            config,
            auth,
            clock,
            source,
            origins,
            dynamic_only: false,
            connections: ConnectionLimits::default(),
            proxies: TrustedProxies::default(),
            started_at,
            live: ArcSwap::from_pointee(live),
        }
    }

    /// The current version. Hold the guard for the whole request.
    pub fn live(&self) -> Guard<Arc<Live>> {
        self.live.load()
    }

    /// Swaps in a new version as one value; requests already running keep the old one.
    pub fn install(&self, version: Version) {
        let live = Live::new(&version, ContentStatus::Ok, &self.source, self.started_at);
        self.live.store(Arc::new(live));
    }

    /// Replaces the live artifacts with the same ones plus compressed variants, if the live
    /// version is still `revision`; false when a newer version was installed meanwhile.
    pub fn install_encodings(&self, revision: &str, artifacts: ArtifactSet) -> bool {
        let current = self.live.load();
        if current.artifacts.revision() != revision || artifacts.revision() != revision {
            return false;
        }
        let version = Version {
            artifacts: Arc::new(artifacts),
            mcp: Arc::clone(&current.mcp),
        };
        let live = Live::new(
            &version,
            current.status.clone(),
            &self.source,
            self.started_at,
        );
        self.live.store(Arc::new(live));
        true
    }

    /// Keeps serving the current version and reports why the latest edit was not taken.
    pub fn report_errors(&self, errors: Vec<ContentError>) {
        let current = self.live.load().version();
        let live = Live::new(
            &current,
            ContentStatus::Error(errors),
            &self.source,
            self.started_at,
        );
        self.live.store(Arc::new(live));
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then lets open requests finish.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = app.connections;
    let proxies = app.proxies.clone();
    connection::serve_connections(listener, limits, proxies, shutdown, move |peer, request| {
        let app = Arc::clone(&app);
        async move { router::handle(&app, peer, request).await }
    })
    .await
}

/// The address to print for a bound socket (unspecified addresses become loopback).
pub fn display_addr(addr: SocketAddr) -> SocketAddr {
    let mut shown = addr;
    if addr.ip().is_unspecified() {
        shown.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    shown
}
