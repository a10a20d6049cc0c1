//! The HTTP edge: accept connections, hand each request to the router, shut down cleanly.
//!
//! HTTP/1.1 with keep-alive and HTTP/2 via hyper, in cleartext or over TLS ([`tls`]), on one
//! accept loop per worker thread ([`run`]). [`connection`] owns the socket side (caps, timeouts,
//! panic isolation, graceful shutdown), [`client`] decides who a request is from, and
//! [`router`] what it gets.

pub mod access_log;
mod body;
pub mod client;
pub mod connection;
mod mcp_transport;
pub mod metrics;
mod negotiate;
pub mod origin;
pub mod reply;
mod router;
mod statics;
pub mod tls;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::Guard;
use futures_util::future::Either;
use tokio::net::TcpListener;

use crate::auth::endpoints::AuthService;
use crate::auth::limits::RateLimiter;
use crate::clock::Clock;
use crate::config::SiteConfig;
use crate::live::{Live, LiveState, Source, SpoolState, Version};
use access_log::{AccessLog, RequestLine};
use client::TrustedProxies;
use connection::ConnectionLimits;
use metrics::Metrics;
use origin::OriginPolicy;
use router::Routed;
use tls::Tls;

/// Everything a request may need, shared by all connections. Built once, before serving
/// starts (`App::new` and the `with_*` settings); what changes while serving (the live
/// version) is inside [`LiveState`], and revocations and keys inside the auth service.
pub struct App {
    config: SiteConfig,
    auth: AuthService,
    clock: Arc<dyn Clock>,
    origins: OriginPolicy,
    /// Serve only the dynamic core (`serve --dynamic-only`).
    dynamic_only: bool,
    /// How many connections may be open at once.
    connections: ConnectionLimits,
    /// Proxies whose forwarding headers name the client.
    proxies: TrustedProxies,
    access_log: AccessLog,
    metrics: Metrics,
    /// Searches per client address: the one read computed per request.
    search_limit: RateLimiter,
    searches_refused: AtomicU64,
    /// TLS on the public listener (`--tls-cert`/`--tls-key`), or cleartext.
    tls: Option<Arc<Tls>>,
    /// Threads that accept and answer connections (`run`).
    workers: usize,
    live: LiveState,
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
        let live = LiveState::new(&version, source, clock.now());
        let search_limit = RateLimiter::new(config.limits.searches_per_minute);
        App {
            config,
            auth,
            clock,
            origins,
            dynamic_only: false,
            connections: ConnectionLimits::default(),
            proxies: TrustedProxies::default(),
            access_log: AccessLog::default(),
            metrics: Metrics::default(),
            search_limit,
            searches_refused: AtomicU64::new(0),
            tls: None,
            workers: 1,
            live,
        }
    }

    /// Serve only the dynamic core; the compiled documents come from a CDN.
    pub fn with_dynamic_only(mut self, dynamic_only: bool) -> App {
        self.dynamic_only = dynamic_only;
        self
    }

    pub fn with_connections(mut self, connections: ConnectionLimits) -> App {
        self.connections = connections;
        self
    }

    pub fn with_access_log(mut self, access_log: AccessLog) -> App {
        self.access_log = access_log;
        self
    }

    pub fn with_proxies(mut self, proxies: TrustedProxies) -> App {
        self.proxies = proxies;
        self
    }

    /// Serve HTTPS with this certificate (HTTP/2 by ALPN).
    pub fn with_tls(mut self, tls: Arc<Tls>) -> App {
        self.tls = Some(tls);
        self
    }

    /// How many threads accept and answer connections, each with its own connections.
    pub fn with_workers(mut self, workers: usize) -> App {
        self.workers = workers.max(1);
        self
    }

    /// Whether the public listener speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Searches per client address per minute (0: no limit). The documents state the
    /// limit of the configuration they were compiled from: set it there
    /// ([`SiteConfig::limits`]) before compiling, as `serve` does; this also sets it for
    /// every later compile.
    pub fn with_search_limit(mut self, per_minute: u32) -> App {
        self.search_limit = RateLimiter::new(per_minute);
        self.config.limits.searches_per_minute = per_minute;
        self
    }

    /// Takes one search from `client`'s share, or says how long until it has one.
    fn admit_search(&self, client: IpAddr) -> Result<(), Duration> {
        let admitted = self.search_limit.check(client, self.clock.now());
        if admitted.is_err() {
            self.searches_refused.fetch_add(1, Ordering::Relaxed);
        }
        admitted
    }

    pub fn config(&self) -> &SiteConfig {
        &self.config
    }

    pub fn auth(&self) -> &AuthService {
        &self.auth
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn connections(&self) -> ConnectionLimits {
        self.connections
    }

    /// `GET /metrics`: the request counters, and what the other parts count.
    pub fn metrics_page(&self) -> String {
        let (reloads, reloads_refused) = self.live.reload_counts();
        let (revocations, rate_limited) = self.auth.counts();
        let content_errors = match &self.live().status {
            crate::live::ContentStatus::Ok => 0,
            crate::live::ContentStatus::Error(errors) => errors.len() as u64,
        };
        self.metrics.render(&metrics::Gauges {
            open_connections: connection::OPEN_CONNECTIONS
                .load(std::sync::atomic::Ordering::Relaxed) as u64,
            reloads,
            reloads_refused,
            content_errors,
            revocations,
            rate_limited: rate_limited + self.searches_refused.load(Ordering::Relaxed),
            store_ok: self.auth.store_health().is_ok(),
            spool_ok: match self.live.spool_state() {
                SpoolState::Up => Some(true),
                SpoolState::Down => Some(false),
                SpoolState::Off => None,
            },
            access_log_dropped: access_log::dropped_lines(),
        })
    }

    /// The swappable live version.
    pub fn live_state(&self) -> &LiveState {
        &self.live
    }

    /// For settings made before serving starts (see [`LiveState::use_spool`]).
    pub fn live_state_mut(&mut self) -> &mut LiveState {
        &mut self.live
    }

    /// The current version. Hold the guard for the whole request.
    pub fn live(&self) -> Guard<Arc<Live>> {
        self.live.current()
    }

    /// Returns once the live version's search index is built: at once, except in the
    /// moments after a start. No version is held afterwards, so what comes next (a body, room
    /// for the answer, both up to the client) pins none: the version live then has its
    /// index, since only a start's version is installed without one.
    async fn wait_for_search_index(&self) {
        let building = Arc::clone(&*self.live());
        building.model.wait_for_search_index().await;
    }
}

impl crate::reload::Host for App {
    fn live_state(&self) -> &LiveState {
        &self.live
    }

    fn config(&self) -> &SiteConfig {
        &self.config
    }

    fn published_jwks(&self) -> Vec<crate::auth::keys::PublicJwk> {
        self.auth.published_jwks(self.clock.now())
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then lets open requests finish.
///
/// The calling task accepts every connection and hands each to the serving thread with the
/// fewest open: itself, or one of the further workers (`with_workers`), each a thread with
/// a single-threaded runtime. A connection lives on the thread it was handed to, as in
/// nginx's worker processes, so answering a request never wakes another thread.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let gate = connection::ConnectionGate::new(app.connections);
    let mut handoffs = Vec::new();
    let mut threads = Vec::new();
    for worker in 1..app.workers {
        let (handoff, inbox) = connection::hand_off();
        let app = Arc::clone(&app);
        let thread = std::thread::Builder::new()
            .name(format!("dossier-http-{worker}"))
            .spawn(move || -> std::io::Result<()> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let tls = app.tls.clone();
                runtime.block_on(connection::serve_handed_off(
                    inbox,
                    tls,
                    move |peer, request| answer(&app, peer, request),
                ));
                Ok(())
            })?;
        handoffs.push(handoff);
        threads.push(thread);
    }
    let tls = app.tls.clone();
    let proxies = app.proxies.clone();
    let served = connection::serve_connections(
        listener,
        gate,
        proxies,
        tls,
        handoffs,
        shutdown,
        move |peer, request| answer(&app, peer, request),
    )
    .await;
    if threads.is_empty() {
        return served;
    }
    let joined = tokio::task::spawn_blocking(move || {
        threads
            .into_iter()
            .map(|thread| {
                thread.join().unwrap_or_else(|_| {
                    // Request handlers catch their own panics; this is a bug in the loop.
                    tracing::error!("a serving thread panicked");
                    Ok(())
                })
            })
            .collect::<std::io::Result<Vec<()>>>()
    })
    .await
    .unwrap_or(Ok(Vec::new()));
    served.and(joined.map(|_| ()))
}

/// A response: ready when the handler returns (almost every request), or a boxed future
/// for a request that waits for its body, the store or the MCP core. A document costs no
/// allocation and no move of the router's state this way.
type ResponseFuture = Either<
    std::future::Ready<hyper::Response<reply::Body>>,
    Pin<Box<dyn Future<Output = hyper::Response<reply::Body>> + Send>>,
>;

/// The answer to every request: the router, with metrics and the access log around it.
fn answer(
    app: &Arc<App>,
    peer: SocketAddr,
    request: hyper::Request<hyper::body::Incoming>,
) -> ResponseFuture {
    let started = std::time::Instant::now();
    let line = RequestLine::start(app.access_log, &app.proxies, peer, &request);
    match router::route(app, peer, request) {
        (Routed::Answered(response), label) => Either::Left(std::future::ready(record(
            app, label, started, line, response,
        ))),
        (Routed::Waiting(waiting), label) => {
            let app = Arc::clone(app);
            Either::Right(Box::pin(async move {
                let response = router::answer_waiting(&app, peer, waiting).await;
                record(&app, label, started, line, response)
            }))
        }
    }
}

/// Counts a finished request in the metrics and writes its access line.
fn record(
    app: &App,
    label: crate::routes::MetricLabel,
    started: std::time::Instant,
    line: Option<RequestLine>,
    response: hyper::Response<reply::Body>,
) -> hyper::Response<reply::Body> {
    let elapsed = started.elapsed();
    app.metrics
        .record(label, response.status().as_u16(), elapsed);
    if let Some(line) = line {
        line.finish(&response, elapsed);
    }
    response
}

/// Serves `GET /metrics` for `app` on `listener` (its own port, never the public one).
pub async fn run_metrics(listener: TcpListener, app: Arc<App>) {
    let limits = ConnectionLimits {
        total: 64,
        ..ConnectionLimits::default()
    };
    let served = connection::serve_connections(
        listener,
        connection::ConnectionGate::new(limits),
        TrustedProxies::default(),
        None,
        Vec::new(),
        std::future::pending(),
        move |_peer, request| {
            let app = Arc::clone(&app);
            async move {
                if request.uri().path() != "/metrics" {
                    return reply::error(
                        hyper::StatusCode::NOT_FOUND,
                        "not_found",
                        "this listener serves /metrics only",
                    );
                }
                let mut response =
                    hyper::Response::new(reply::Body::new(bytes::Bytes::from(app.metrics_page())));
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
                );
                response
            }
        },
    )
    .await;
    if let Err(error) = served {
        tracing::error!(%error, "the metrics listener stopped");
    }
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
