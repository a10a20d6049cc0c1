//! The command line: `dossier init`, `check`, `build`, `serve`, `keys`, `schema` and `doctor`. Flags
//! also read environment variables (`DOSSIER_*`) and the site's `dossier.toml`
//! ([`config_file`]), so the same binary configures from any of them.

// Flag doc comments are also the `--help` text, where a URL is written bare.
#![allow(rustdoc::bare_urls)]

use crate::serve::access_log::AccessLog;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

pub mod check;
pub mod config_file;
pub mod doctor;
pub mod init;
use tokio::net::TcpListener;

use crate::auth::admission::{Limiter, RateLimits};
use crate::auth::endpoints::AuthService;
use crate::auth::keys::{self, Keyring};
use crate::auth::redis_store::RedisStore;
use crate::auth::shared_keys::{share_keys, SharedKeys};
use crate::auth::store::{EmbeddedStore, RevocationStore};
use crate::clock::{rfc3339, unix_seconds, SystemClock};
use crate::compile::output;
use crate::config::{AuthPolicy, BaseUrl, Compression, SiteConfig};
use crate::live::{self, LoadError, Source};
use crate::serve::client::TrustedProxies;
use crate::serve::connection::{self, ConnectionLimits};
use crate::serve::origin::OriginPolicy;
use crate::serve::tls::{Tls, TlsFiles};
use crate::serve::{self, App};
use crate::spool::Spool;
use crate::{key_watch, reload};

#[derive(Debug, Parser)]
#[command(
    name = "dossier",
    version,
    about = "A public, read-only company information service for AI agents"
)]
pub struct Cli {
    /// Read settings from this file instead of ./dossier.toml (keys are long flag names;
    /// a flag or environment variable wins over the file).
    #[arg(long, global = true, env = "DOSSIER_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new site (dossier.toml, content/, schemas/) that `dossier check` accepts.
    Init(init::InitArgs),
    /// Validate the content and every internal link in the pages, writing nothing.
    Check(check::CheckArgs),
    /// Compile content/ into build/: every response as a file, plus manifest.json.
    Build(BuildArgs),
    /// Serve the company from content/ (or a build/) with the dynamic core beside it.
    Serve(Box<ServeArgs>),
    /// Show or rotate the signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Write the JSON Schemas of company.json, division files and page front matter, for
    /// editors.
    Schema(SchemaArgs),
    /// Check a deployment as agents meet it: discovery, headers, the agent flow, MCP.
    Doctor(doctor::DoctorArgs),
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The directory to write company.schema.json, division.schema.json and
    /// page.schema.json into (created if missing).
    #[arg(long, default_value = "schemas")]
    pub out: PathBuf,
}

/// Writes the content schemas ([`crate::schema::content_schemas`]).
pub fn schema(args: &SchemaArgs) -> ExitCode {
    if let Err(error) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: {}: {error}", args.out.display());
        return ExitCode::FAILURE;
    }
    for (file, schema) in crate::schema::content_schemas() {
        let path = args.out.join(file);
        let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
        if let Err(error) = std::fs::write(&path, text) {
            eprintln!("error: {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// List the key generations: which signs, and until when a retired one still verifies.
    List(KeysArgs),
    /// Add a new signing key. The previous one keeps verifying (and stays in the JWKS) until
    /// every credential it signed has expired; running instances switch within seconds.
    Rotate(KeysArgs),
}

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// The state directory holding keys.json.
    #[arg(long, env = "DOSSIER_STATE", default_value = ".dossier-state")]
    pub state: PathBuf,
    /// With `redis://…`, the keyring shared by several instances in Redis instead of the
    /// state directory's.
    #[arg(long, env = "DOSSIER_STORE")]
    pub store: Option<String>,
}

/// What `build` and `check` both read: the content, the origin its documents name, and the
/// templates.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The content directory to compile.
    #[arg(long, env = "DOSSIER_CONTENT", default_value = "content")]
    pub content: PathBuf,
    /// The public origin the documents name, e.g. https://info.example.com (no trailing slash).
    #[arg(
        long,
        env = "DOSSIER_BASE_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub base_url: String,
    /// Files here override the built-in templates (pages, style.css, auth.md); they must render.
    #[arg(long, env = "DOSSIER_TEMPLATES", default_value = "templates")]
    pub templates: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// Where to write the build; replaced atomically.
    #[arg(long, env = "DOSSIER_OUT", default_value = "build")]
    pub out: PathBuf,
    /// Directory holding the signing keys (created if missing); its public key goes into the JWKS.
    #[arg(long, env = "DOSSIER_STATE", default_value = ".dossier-state")]
    pub state: PathBuf,
    /// Where the dynamic core runs when build/ is deployed to a CDN (e.g. https://core.example.com);
    /// the generated _redirects and _worker.js proxy /agent/*, /oauth2/*, /api/*, /ask and /mcp to it.
    #[arg(long, env = "DOSSIER_ORIGIN_URL")]
    pub origin_url: Option<String>,
    /// Also write each file's gzip and brotli variants (`.gz`, `.br`) and list them in the
    /// manifest, for `serve --from` to send without compressing at startup and for servers
    /// that send precompressed files (nginx's gzip_static). CDNs compress for themselves.
    #[arg(long, env = "DOSSIER_PRECOMPRESS")]
    pub precompress: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The content directory to compile and serve.
    #[arg(
        long,
        env = "DOSSIER_CONTENT",
        default_value = "content",
        conflicts_with = "from"
    )]
    pub content: PathBuf,
    /// Serve a directory written by `dossier build` instead of compiling content.
    #[arg(long, env = "DOSSIER_FROM")]
    pub from: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "DOSSIER_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// The public origin; defaults to http:// plus the listening address (or the build's origin with --from).
    #[arg(long, env = "DOSSIER_BASE_URL")]
    pub base_url: Option<String>,
    /// Directory for keys and durable state (created if missing).
    #[arg(long, env = "DOSSIER_STATE", default_value = ".dossier-state")]
    pub state: PathBuf,
    /// Files here override the built-in templates; watched for changes like the content.
    #[arg(long, env = "DOSSIER_TEMPLATES", default_value = "templates")]
    pub templates: PathBuf,
    /// Serve only the dynamic core (registration, tokens, revocation, authorization, MCP and
    /// the token-checked /api/*), for a deployment where a CDN serves build/.
    #[arg(long, env = "DOSSIER_DYNAMIC_ONLY")]
    pub dynamic_only: bool,
    /// Do not watch the content (or build) directory for changes.
    #[arg(long, env = "DOSSIER_NO_WATCH")]
    pub no_watch: bool,
    /// Keep response bodies on the heap instead of in files under `<state>/spool`.
    #[arg(long, env = "DOSSIER_NO_SPOOL")]
    pub no_spool: bool,
    /// Serve Prometheus metrics at GET /metrics on this address (a listener of its own; off
    /// by default, so the numbers are never public by accident).
    #[arg(long, env = "DOSSIER_METRICS_ADDR")]
    pub metrics_addr: Option<String>,
    /// One log line per request (client, method, path without query, status, bytes,
    /// duration, user agent): `text`, `json` (every log line as JSON), or `off`.
    #[arg(long, env = "DOSSIER_ACCESS_LOG", value_enum, default_value = "text")]
    pub access_log: AccessLog,
    /// Browser origins allowed to call /mcp besides the base URL's own and loopback (repeat
    /// the flag, or separate with commas). When bound to loopback, all others get 403; when
    /// bound publicly and none are given, any origin may call.
    #[arg(
        long = "allowed-origin",
        env = "DOSSIER_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// POST /agent/identity requests allowed per client address per minute (0: no limit).
    #[arg(long, env = "DOSSIER_REGISTER_RATE_LIMIT", default_value_t = RateLimits::default().register_per_minute)]
    pub register_rate_limit: u32,
    /// POST /oauth2/token requests allowed per client address per minute (0: no limit).
    #[arg(long, env = "DOSSIER_TOKEN_RATE_LIMIT", default_value_t = RateLimits::default().token_per_minute)]
    pub token_rate_limit: u32,
    /// Searches (GET /api/search, GET /ask, the search_company_info tool) allowed per client address
    /// per minute, on this instance (0: no limit). A search is computed per request.
    #[arg(long, env = "DOSSIER_SEARCH_RATE_LIMIT", default_value_t = crate::config::DEFAULT_SEARCHES_PER_MINUTE)]
    pub search_rate_limit: u32,
    /// Connections open at once, all clients together; beyond it new ones get 503. Lowered
    /// to fit the process's open-file limit if needed.
    #[arg(long, env = "DOSSIER_MAX_CONNECTIONS", default_value_t = ConnectionLimits::default().total)]
    pub max_connections: usize,
    /// Connections open at once from one client address (IPv6: one /64); beyond it new ones
    /// get 429. Trusted proxies are exempt.
    #[arg(long, env = "DOSSIER_MAX_CONNECTIONS_PER_CLIENT", default_value_t = ConnectionLimits::default().per_client)]
    pub max_connections_per_client: usize,
    /// Where revocations and rate limits live: `embedded` (redb in --state, one instance) or
    /// `redis://HOST:PORT/DB` / `rediss://` (shared by several instances; Valkey works too).
    #[arg(long, env = "DOSSIER_STORE")]
    pub store: Option<String>,
    /// With --store redis://…: when neither Redis nor --state holds a keyring, make one and
    /// publish it (the first start of a deployment). Without it such a start is refused, so
    /// an instance that meets an emptied Redis never replaces the deployment's keys.
    #[arg(long, env = "DOSSIER_CREATE_KEYRING")]
    pub create_keyring: bool,
    /// How long a client may take to send a whole request body (e.g. 10s); slower gets 408.
    #[arg(long, env = "DOSSIER_BODY_TIMEOUT", default_value = "10s", value_parser = humantime::parse_duration)]
    pub body_timeout: std::time::Duration,
    /// How long a write to a client may make no progress (a client that stops reading, or
    /// on HTTP/2 holds an answer with a zero window) before its connection is ended.
    #[arg(long, env = "DOSSIER_SEND_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration)]
    pub send_timeout: std::time::Duration,
    /// Proxies or CDN ranges (CIDR or address; repeat, or separate with commas) whose
    /// Forwarded / X-Forwarded-For (or --client-ip-header) name the client for rate limits.
    #[arg(
        long = "trusted-proxy",
        env = "DOSSIER_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    pub trusted_proxies: Vec<String>,
    /// The one header your proxy writes the client address in: X-Forwarded-For (the
    /// default), Forwarded, or a CDN's own (e.g. CF-Connecting-IP). Believed only from
    /// --trusted-proxy peers; no other header is ever read for it.
    #[arg(long, env = "DOSSIER_CLIENT_IP_HEADER")]
    pub client_ip_header: Option<String>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key); HTTP/2 by ALPN. The
    /// files are reloaded when they change.
    #[arg(long, env = "DOSSIER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Threads that answer connections: each new connection goes to the one with the fewest
    /// open and stays there (default: one per CPU core).
    #[arg(long, env = "DOSSIER_WORKERS")]
    pub workers: Option<usize>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "DOSSIER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// Logs panics through `tracing` (one line, with where), instead of the default hook's
/// unstructured stderr output. The panicking request, or reload, is answered elsewhere.
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = reload::panic_message(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(%location, %message, "panic");
    }));
}

/// Sets up logging to stderr: plain lines, or JSON objects (`--access-log json`).
///
/// Every line is formatted on the thread that logs it and written to stderr by a writer
/// thread, so no request waits for the terminal or the disk. Access lines go through a
/// queue of their own that drops what does not fit (counted in `/metrics` as
/// `dossier_access_log_dropped_total`) rather than slow the requests it records. Every
/// other line waits for room in its own queue (128,000 lines), as a warning must not be
/// lost: only a log reader stalled for that long can hold up the few requests that log.
/// Keep the returned guards until the process ends: dropping them writes out what is
/// queued.
#[must_use = "dropping the guards stops the log writers"]
pub fn init_logging(json: bool) -> Vec<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{fmt, Layer, Registry};

    let filter = tracing_subscriber::EnvFilter::try_from_env("DOSSIER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour only for a person at a terminal: log files and journald get plain text, and
    // `NO_COLOR` (https://no-color.org) turns it off everywhere.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let (access_writer, access_guard) =
        tracing_appender::non_blocking::NonBlockingBuilder::default()
            .lossy(true)
            .buffered_lines_limit(ACCESS_LOG_QUEUE_LINES)
            .thread_name("dossier-access-log")
            .finish(std::io::stderr());
    crate::serve::access_log::count_dropped_lines(access_writer.error_counter());
    let (other_writer, other_guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("dossier-log")
        .finish(std::io::stderr());
    type Boxed = Box<dyn Layer<Registry> + Send + Sync>;
    let layer = |writer: tracing_appender::non_blocking::NonBlocking| -> Boxed {
        if json {
            fmt::layer()
                .json()
                .flatten_event(true)
                .with_writer(writer)
                .boxed()
        } else {
            fmt::layer().with_ansi(colour).with_writer(writer).boxed()
        }
    };
    let is_access =
        |metadata: &tracing::Metadata<'_>| metadata.target() == crate::serve::access_log::TARGET;
    let layers: Vec<Boxed> = vec![
        layer(access_writer)
            .with_filter(filter_fn(is_access))
            .boxed(),
        layer(other_writer)
            .with_filter(filter_fn(move |m| !is_access(m)))
            .boxed(),
    ];
    tracing_subscriber::registry()
        .with(layers)
        .with(filter)
        .init();
    log_panics();
    vec![access_guard, other_guard]
}

/// Access lines queued for the writer before further ones are dropped: about half a second
/// of requests at full speed on 2 cores. A line is at most about 1.2 KB (path and user agent
/// are capped once escaped), so the queue holds at most about 60 MB, and usually under 10.
const ACCESS_LOG_QUEUE_LINES: usize = 50_000;

fn config_for(base_url: BaseUrl, templates: &Path, compression: Compression) -> SiteConfig {
    SiteConfig {
        compression,
        base_url,
        limits: crate::config::Limits::default(),
        auth: AuthPolicy::default(),
        // A missing directory just means the built-in templates.
        templates: templates.is_dir().then(|| templates.to_path_buf()),
    }
}

/// The site configuration, or the exit code to stop with (2: bad base URL).
pub(crate) fn configure(
    base_url: &str,
    templates: &Path,
    compression: Compression,
) -> Result<SiteConfig, ExitCode> {
    let base_url = BaseUrl::parse(base_url).map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::from(2)
    })?;
    Ok(config_for(base_url, templates, compression))
}

fn load_keys(state: &Path) -> Result<Keyring, ExitCode> {
    Keyring::load_or_create(state, unix_seconds(std::time::SystemTime::now())).map_err(|error| {
        eprintln!("error: {error}");
        ExitCode::FAILURE
    })
}

/// The shared store named by `--store`, if it is not the embedded one.
fn shared_store(store: Option<&str>) -> Option<&str> {
    store.filter(|store| *store != "embedded")
}

pub fn build(args: &BuildArgs) -> ExitCode {
    // Compressing is most of a build's work (a site of 10,000 pages has 30,000 documents), and
    // only a server reading build/ uses the variants: by default the build is usable at once
    // and `serve --from` compresses in the background, as it does for content/.
    let compression = if args.precompress {
        Compression::WhileCompiling
    } else {
        Compression::Deferred
    };
    let config = match configure(&args.site.base_url, &args.site.templates, compression) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let keys = match load_keys(&args.state) {
        Ok(keys) => keys,
        Err(code) => return code,
    };
    let jwks = keys.published_jwks(&config.auth, unix_seconds(std::time::SystemTime::now()));
    let origin_url = match args.origin_url.as_deref().map(BaseUrl::parse).transpose() {
        Ok(origin) => origin,
        Err(error) => {
            eprintln!("error: --origin-url: {error}");
            return ExitCode::from(2);
        }
    };
    let started = std::time::Instant::now();
    let site = match crate::content::load(&args.site.content) {
        Ok(site) => site,
        Err(errors) => {
            report_load_error(&LoadError::Content(errors));
            return ExitCode::FAILURE;
        }
    };
    let input = crate::compile::CompileInput {
        site: &site,
        config: &config,
        jwks: &jwks,
        previous: None,
    };
    let built = match output::build(&input, origin_url.as_ref(), &args.out) {
        Ok(built) => built,
        Err(output::BuildError::Compile(error)) => {
            report_load_error(&LoadError::Compile(error));
            return ExitCode::FAILURE;
        }
        Err(output::BuildError::Output(error)) => {
            eprintln!("error: cannot write the build: {error}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "built {} artifacts (revision {}) into {} for {} in {} ms",
        built.paths.len(),
        built.revision,
        args.out.display(),
        config.base_url,
        started.elapsed().as_millis()
    );
    for warning in deployment_warnings(&config.base_url, origin_url.as_ref()) {
        eprintln!("warning: {warning}");
    }
    // A broken link is the author's to fix, not a reason to keep the site down: a warning
    // here, an error in `dossier check`.
    for broken in crate::links::report(&site, &built.paths, &args.site.content) {
        eprintln!("warning: {broken}");
    }
    ExitCode::SUCCESS
}

/// What a build cannot do once uploaded, said when it is made rather than found out later.
fn deployment_warnings(base_url: &BaseUrl, origin: Option<&BaseUrl>) -> Vec<String> {
    let mut warnings = Vec::new();
    if crate::serve::origin::is_loopback_host(base_url.host()) {
        warnings.push(format!(
            "the base URL {base_url} is a loopback address: every link and document names it, so this build works only on this machine; build with --base-url https://your.domain to deploy it"
        ));
    }
    if origin.is_none() {
        warnings.push(
            "no --origin-url: on a static host the dynamic endpoints (/agent/*, /oauth2/*, /mcp, /ask, /api/search, /api/company?cursor=) are absent; run `dossier serve --dynamic-only` somewhere and build with --origin-url pointing at it".to_string(),
        );
    }
    warnings
}

pub(crate) fn report_load_error(error: &LoadError) {
    match error {
        LoadError::Content(errors) => {
            for error in errors.iter() {
                eprintln!("{error}");
            }
            eprintln!(
                "error: the content has {} problem{}; nothing was written",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
        }
        other => eprintln!("error: {other}"),
    }
}

/// `--addr` as the addresses to try in order: `:PORT` (no host) means every interface,
/// IPv6 and IPv4 where the system is dual-stack, else IPv4 only.
fn listen_addresses(addr: &str) -> Vec<String> {
    match addr.strip_prefix(':') {
        Some(port) => vec![format!("[::]:{port}"), format!("0.0.0.0:{port}")],
        None => vec![addr.to_string()],
    }
}

async fn bind(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = None;
    for candidate in listen_addresses(addr) {
        match TcpListener::bind(&candidate).await {
            Ok(listener) => return Ok(listener),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no address to listen on")))
}

/// Why `serve` stopped before serving, or failed while serving: [`StartupError::report`]
/// is the one place that turns it into a message and an exit code.
enum StartupError {
    /// The flags are wrong (exit status 2), reported before anything is bound or opened.
    Usage(String),
    /// The content or build does not load; each problem names its file, line and field.
    Load(LoadError),
    /// Anything else (exit status 1).
    Failed(String),
    /// Already reported by the helper that found it, with this exit code.
    Reported(ExitCode),
}

impl StartupError {
    fn failed(error: impl std::fmt::Display) -> StartupError {
        StartupError::Failed(error.to_string())
    }

    fn report(self) -> ExitCode {
        match self {
            StartupError::Usage(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
            StartupError::Load(error) => {
                report_load_error(&error);
                ExitCode::FAILURE
            }
            StartupError::Failed(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
            StartupError::Reported(code) => code,
        }
    }
}

/// Binds, loads, and serves until Ctrl-C or SIGTERM.
pub async fn serve(args: &ServeArgs) -> ExitCode {
    match start_and_serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => error.report(),
    }
}

async fn start_and_serve(args: &ServeArgs) -> Result<(), StartupError> {
    // A usage error, reported before anything is bound, created or opened.
    let proxies = TrustedProxies::new(&args.trusted_proxies, args.client_ip_header.as_deref())
        .map_err(|error| StartupError::Usage(error.to_string()))?;
    let listener = bind(&args.addr).await.map_err(|error| {
        StartupError::Failed(format!("cannot listen on {}: {error}", args.addr))
    })?;
    let local = serve::display_addr(listener.local_addr().map_err(StartupError::failed)?);
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let files = TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            };
            let tls =
                Tls::new(files).map_err(|error| StartupError::failed(format!("TLS: {error}")))?;
            Some(Arc::new(tls))
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let source = match &args.from {
        Some(dir) => Source::Build(dir.clone()),
        None => Source::Content(args.content.clone()),
    };
    let base_text = match (&args.base_url, &source) {
        (Some(base), _) => base.clone(),
        (None, Source::Build(dir)) => {
            let (_, base) = output::read_build(dir)
                .map_err(|error| StartupError::failed(format!("cannot load the build: {error}")))?;
            base.to_string()
        }
        (None, Source::Content(_)) => format!("{scheme}://{local}"),
    };
    let mut config = configure(&base_text, &args.templates, Compression::Deferred)
        .map_err(StartupError::Reported)?;
    // Before anything is compiled, so the documents state the limit in force.
    config.limits.searches_per_minute = args.search_rate_limit;
    // Several instances sign with one keyring, kept in Redis; one instance keeps its own.
    let now = unix_seconds(std::time::SystemTime::now());
    let shared_keys = match shared_store(args.store.as_deref()) {
        Some(url) => Some(
            SharedKeys::connect(url)
                .await
                .map_err(StartupError::failed)?,
        ),
        None => None,
    };
    let keys = match &shared_keys {
        Some(shared) => share_keys(shared, &args.state, now, args.create_keyring)
            .await
            .map_err(StartupError::failed)?,
        None => load_keys(&args.state).map_err(StartupError::Reported)?,
    };
    let jwks = keys.published_jwks(&config.auth, now);
    let loaded_identity = reload::identity(source.dir());
    let version = live::prepare(&source, &config, &jwks, None).map_err(StartupError::Load)?;
    tracing::info!(
        revision = version.artifacts.revision(),
        artifacts = version.artifacts.len(),
        source = %source.dir().display(),
        base_url = %config.base_url,
        "loaded"
    );
    // Broken links are the author's to fix, not a reason to keep the site down: warnings,
    // as in `build`; `check` makes them errors. Reported beside the serving, which need
    // not wait for them.
    // The thread keeps the served paths, not the artifacts: their heap bodies must be free
    // to go once the spool has them. It lists them itself, since the first answer need
    // not wait for 300,000 paths to be copied.
    if let Source::Content(dir) = &source {
        let (model, dir) = (Arc::clone(&version.model), dir.clone());
        let artifacts = Arc::clone(&version.artifacts);
        let spawned = std::thread::Builder::new()
            .name("dossier-links".into())
            .spawn(move || {
                let served: std::collections::BTreeSet<String> = artifacts
                    .iter()
                    .map(|artifact| artifact.path.clone())
                    .collect();
                drop(artifacts);
                for line in crate::links::report(model.site(), &served, &dir) {
                    tracing::warn!("{line}");
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start the broken-link report");
        }
    }
    let limits = RateLimits {
        register_per_minute: args.register_rate_limit,
        token_per_minute: args.token_rate_limit,
    };
    let (store, shared_limits): (Box<dyn RevocationStore>, _) = match args.store.as_deref() {
        None | Some("embedded") => {
            let store = EmbeddedStore::open(&args.state).map_err(StartupError::failed)?;
            (Box::new(store), None)
        }
        Some(url) => {
            let store = RedisStore::connect(url)
                .await
                .map_err(StartupError::failed)?;
            let limiters = (
                Limiter::Shared(store.limiter("register", limits.register_per_minute)),
                Limiter::Shared(store.limiter("token", limits.token_per_minute)),
            );
            (Box::new(store), Some(limiters))
        }
    };
    let auth = AuthService::new(
        config.base_url.clone(),
        config.auth.clone(),
        keys,
        store,
        limits,
    )
    .map_err(StartupError::failed)?;
    let auth = match shared_limits {
        Some((register, token)) => auth.with_limiters(register, token),
        None => auth,
    };
    let connections = connection_limits(args);
    let origins = OriginPolicy::new(
        &config.base_url,
        &args.allowed_origins,
        local.ip().is_loopback(),
    );
    let app = App::new(
        config,
        auth,
        Arc::new(SystemClock),
        source,
        version,
        origins,
    )
    .with_dynamic_only(args.dynamic_only)
    .with_access_log(args.access_log)
    .with_connections(connections)
    .with_proxies(proxies)
    .with_workers(args.workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }));
    let mut app = match &tls {
        Some(tls) => {
            tls.watch();
            app.with_tls(Arc::clone(tls))
        }
        None => app,
    };
    if !args.no_spool {
        match Spool::open(&args.state) {
            Ok(spool) => app.live_state_mut().use_spool(spool),
            Err(error) => {
                tracing::warn!(
                    %error,
                    "cannot open the spool in the state directory; response bodies stay in memory"
                );
                app.live_state_mut().spool_unavailable();
            }
        }
    }
    let app = Arc::new(app);
    let metrics = match &args.metrics_addr {
        Some(addr) => Some(bind(addr).await.map_err(|error| {
            StartupError::failed(format!("cannot listen on {addr} for metrics: {error}"))
        })?),
        None => None,
    };
    // The first version serves identity bytes at once; gzip and brotli follow.
    reload::compress_in_background(Arc::clone(&app));
    tokio::spawn(purge_revocations(Arc::clone(&app)));
    key_watch::spawn(Arc::clone(&app), args.state.clone(), shared_keys);
    if !args.no_watch {
        reload::watch_in_background(Arc::clone(&app), loaded_identity);
    }
    // A fixed line on stdout, so scripts and tests can learn the port when --addr ends in :0.
    println!("dossier listening on {scheme}://{local}");
    if let Some(listener) = metrics {
        if let Ok(addr) = listener.local_addr() {
            println!(
                "dossier metrics on http://{}/metrics",
                serve::display_addr(addr)
            );
        }
        tokio::spawn(serve::run_metrics(listener, Arc::clone(&app)));
    }
    serve::run(listener, app, shutdown_signal())
        .await
        .map_err(StartupError::failed)
}

/// `dossier keys list|rotate`.
pub async fn keys(command: &KeysCommand) -> ExitCode {
    let (KeysCommand::List(args) | KeysCommand::Rotate(args)) = command;
    let policy = AuthPolicy::default();
    let now = unix_seconds(std::time::SystemTime::now());
    let rotate = matches!(command, KeysCommand::Rotate(_));
    let keyring = match shared_store(args.store.as_deref()) {
        Some(url) => {
            let shared = match SharedKeys::connect(url).await {
                Ok(shared) => shared,
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let result = if rotate {
                shared.rotate(&policy, now).await.map(Some)
            } else {
                shared.load().await
            };
            match result {
                Ok(Some(keyring)) => keyring,
                Ok(None) => {
                    eprintln!("error: Redis holds no keyring yet; start an instance with --store {url} first");
                    return ExitCode::FAILURE;
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        None => {
            let result = if rotate {
                keys::rotate_in(&args.state, &policy, now).map(Some)
            } else {
                Keyring::load(&args.state)
            };
            match result {
                Ok(Some(keyring)) => keyring,
                Ok(None) => {
                    eprintln!(
                        "error: {} holds no keys yet; `dossier serve` or `dossier build` creates them",
                        args.state.display()
                    );
                    return ExitCode::FAILURE;
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    print!("{}", describe_keyring(&keyring, &policy, now));
    if rotate {
        let previous = keyring.generations().len().saturating_sub(1);
        eprintln!(
            "rotated: new credentials are signed with {} from now on; the previous key{} verif{} until every credential it signed has expired ({} s). Running instances switch within seconds; rebuild and re-upload build/ if a CDN serves it (its JWKS changed).",
            keyring.current().identity.kid(),
            if previous == 1 { "" } else { "s" },
            if previous == 1 { "ies" } else { "y" },
            keys::overlap(&policy).as_secs()
        );
    }
    ExitCode::SUCCESS
}

/// One line per key generation, newest first.
pub fn describe_keyring(keyring: &Keyring, policy: &AuthPolicy, now: u64) -> String {
    let time =
        |seconds: u64| rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds));
    let mut out = String::new();
    for (number, generation) in keyring.generations().iter().enumerate().rev() {
        let status = match generation.identity_until(policy) {
            None => "current: signs new credentials".to_string(),
            Some(until) if until > now => format!(
                "retired {}: verifies and is published until {}",
                generation.retired.map(time).unwrap_or_default(),
                time(until)
            ),
            Some(_) => format!(
                "retired {}: no longer used; dropped at the next rotation",
                generation.retired.map(time).unwrap_or_default()
            ),
        };
        out.push_str(&format!(
            "generation {}  created {}\n  identity kid  {}\n  access key    {}\n  {status}\n",
            number + 1,
            time(generation.created),
            generation.identity.kid(),
            generation.access.id(),
        ));
    }
    out
}

/// The connection caps asked for, with the total lowered to fit the open-file limit: past
/// it, `accept` fails and nobody gets an answer, not even a refusal.
fn connection_limits(args: &ServeArgs) -> ConnectionLimits {
    let mut limits = ConnectionLimits {
        total: args.max_connections.max(1),
        per_client: args.max_connections_per_client.max(1),
        body_timeout: args.body_timeout.max(std::time::Duration::from_millis(100)),
        send_timeout: args.send_timeout.max(std::time::Duration::from_millis(100)),
    };
    // Room for the listener, the state files, the watcher and refused sockets in flight.
    const RESERVED: u64 = 256;
    if let Some(open_files) = connection::raise_open_file_limit() {
        let fits = open_files.saturating_sub(RESERVED).max(1);
        if (limits.total as u64) > fits {
            tracing::warn!(
                asked = limits.total,
                open_file_limit = open_files,
                using = fits,
                "--max-connections lowered to fit the open-file limit (raise it with ulimit -n)"
            );
            limits.total = fits as usize;
        }
    }
    limits
}

/// How often revocations of expired credentials are forgotten.
const PURGE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);

/// Keeps the revocation store bounded: entries outlive their credential by the clock skew
/// only, then go.
async fn purge_revocations(app: Arc<App>) {
    let mut interval = tokio::time::interval(PURGE_INTERVAL);
    loop {
        interval.tick().await;
        match app.auth().purge_expired(app.clock().now()).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "purged expired revocations"),
            Err(error) => tracing::warn!(%error, "purging revocations failed"),
        }
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    tracing::info!("shutting down");
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// docs/cli.md names every command, long flag and environment variable `--help` shows,
    /// so the reference cannot fall behind the code.
    #[test]
    fn the_cli_reference_names_every_flag() {
        let reference = include_str!("../../docs/cli.md");
        let mut missing = Vec::new();
        fn walk(command: &clap::Command, path: &str, reference: &str, missing: &mut Vec<String>) {
            for argument in command.get_arguments() {
                if let Some(long) = argument.get_long() {
                    if !matches!(long, "help" | "version")
                        && !reference.contains(&format!("`--{long}"))
                        && !reference.contains(&format!("[--{long}"))
                    {
                        missing.push(format!("{path} --{long}"));
                    }
                }
                if let Some(env) = argument.get_env() {
                    let env = env.to_string_lossy();
                    if !reference.contains(&format!("`{env}`")) {
                        missing.push(format!("{path} {env}"));
                    }
                }
            }
            for sub in command.get_subcommands() {
                let name = sub.get_name();
                let full = format!("{path} {name}");
                if name != "help"
                    && !reference.contains(&full)
                    && !reference.contains(&format!("{path} {name}|"))
                    && !reference.contains(&format!("|{name} "))
                {
                    missing.push(full.clone());
                }
                walk(sub, &full, reference, missing);
            }
        }
        walk(&Cli::command(), "dossier", reference, &mut missing);
        assert!(missing.is_empty(), "not in docs/cli.md: {missing:?}");
    }
}
