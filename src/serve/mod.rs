//! The HTTP edge: accept connections, hand each request to the router, shut down cleanly.
//!
//! HTTP/1.1 with keep-alive via hyper. Limits that protect the process live here: header
//! size, the time a client may take to send its headers, and graceful shutdown.

mod negotiate;
pub mod origin;
pub mod reply;
mod router;
mod statics;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::{ArcSwap, Guard};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::auth::endpoints::AuthService;
use crate::clock::Clock;
use crate::config::SiteConfig;
use crate::content::ContentError;
use crate::live::{ContentStatus, Live, Source, Version};
use origin::OriginPolicy;

/// Largest request head (request line plus headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// A client must finish sending its request head within this time.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a request may need, shared by all connections.
pub struct App {
    pub config: SiteConfig,
    pub auth: AuthService,
    pub clock: Arc<dyn Clock>,
    pub source: Source,
    pub origins: OriginPolicy,
    /// Serve only the dynamic core (`serve --dynamic-only`).
    pub dynamic_only: bool,
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
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_HEAD_BYTES)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Running out of file descriptors must not end the server; back off.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = Arc::clone(&app);
        let service = service_fn(move |request| {
            let app = Arc::clone(&app);
            async move { Ok::<_, Infallible>(router::handle(&app, peer, request).await) }
        });
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {
            tracing::warn!("open connections did not finish within 10 s; closing");
        }
    }
    Ok(())
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
