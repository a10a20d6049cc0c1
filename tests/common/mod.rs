//! Test harness: a real server on an ephemeral loopback port, and a real HTTP client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use dossier::auth::admission::{Limiter, RateLimits};
use dossier::auth::endpoints::AuthService;
use dossier::auth::keys::Keyring;
use dossier::auth::redis_store::RedisStore;
use dossier::auth::store::{EmbeddedStore, RevocationStore};
use dossier::clock::{Clock, ManualClock};
use dossier::config::{AuthPolicy, BaseUrl, SiteConfig};
use dossier::live::{self, Source};
use dossier::serve::origin::OriginPolicy;
use dossier::serve::{self, App};

/// The repository's sample content.
pub fn sample_content() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("content")
}

/// Copies the sample content into a fresh temporary directory that a test may edit.
pub fn copy_of_sample_content(into: &Path) -> PathBuf {
    let target = into.join("content");
    for entry in walkdir::WalkDir::new(sample_content()) {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(sample_content()).unwrap();
        let destination = target.join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&destination).unwrap();
        } else {
            std::fs::copy(entry.path(), &destination).unwrap();
        }
    }
    target
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header in {:?}", self.headers))
            .to_str()
            .unwrap()
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).unwrap()
    }
}

pub struct HttpClient {
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HttpClient {
    fn default() -> Self {
        HttpClient {
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }
}

impl HttpClient {
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Reply {
        let mut request = Request::builder().method(method).uri(url);
        for (name, value) in headers {
            request = request.header(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        let request = request.body(Full::new(body.into())).unwrap();
        let response = tokio::time::timeout(Duration::from_secs(30), self.client.request(request))
            .await
            .expect("request timed out")
            .expect("request failed");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body,
        }
    }
}

/// An in-process server on 127.0.0.1:<ephemeral>, with a clock the test controls.
pub struct TestServer {
    pub base: String,
    pub app: Arc<App>,
    pub clock: Arc<ManualClock>,
    pub client: HttpClient,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _state: tempfile::TempDir,
    _redis: Option<RedisServer>,
}

/// A `redis-server` on a free loopback port, with its data in a directory of its own
/// (append-only file on), stopped when dropped.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    _dir: Option<tempfile::TempDir>,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let dir = tempfile::tempdir().unwrap();
        // A free port can be taken by another test's listener before redis binds it; then
        // redis exits, and another port is tried.
        for _ in 0..5 {
            if let Some(mut server) = RedisServer::try_start_in(dir.path(), free_port()) {
                server._dir = Some(dir);
                return server;
            }
        }
        panic!("redis did not start on any of 5 free ports");
    }

    /// Starts (or restarts) a server keeping its data in `dir`, on `port`.
    pub fn start_in(dir: &Path, port: u16) -> RedisServer {
        RedisServer::try_start_in(dir, port)
            .unwrap_or_else(|| panic!("redis did not start on port {port}"))
    }

    /// `None` when redis exits at once (its port was taken) or is not answering PING.
    fn try_start_in(dir: &Path, port: u16) -> Option<RedisServer> {
        let mut child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server is needed (`just test` and CI install it with apt-get)");
        let started = std::time::Instant::now();
        // Ready once *this* redis answers PING (a connection alone could reach another
        // test's listener on the same port).
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                return None;
            }
            if redis_answers(port) {
                break;
            }
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(RedisServer {
            child,
            port,
            _dir: None,
        })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a redis server answers PING on `port`.
fn redis_answers(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut answer = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG\r\n"
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(Source::Content(sample_content())).await
    }

    pub async fn start_with(source: Source) -> TestServer {
        TestServer::start_full(
            source,
            tempfile::tempdir().unwrap(),
            None,
            RateLimits::default(),
        )
        .await
    }

    /// A server on `content_dir` that reloads when files there change.
    pub async fn start_watching(content_dir: PathBuf) -> TestServer {
        let server = TestServer::start_with(Source::Content(content_dir)).await;
        dossier::reload::watch(server.app.clone()).unwrap();
        server
    }

    /// A server whose registration and token endpoints allow `per_minute` requests per address.
    pub async fn start_with_limits(limits: RateLimits) -> TestServer {
        TestServer::start_full(
            Source::Content(sample_content()),
            tempfile::tempdir().unwrap(),
            None,
            limits,
        )
        .await
    }

    pub async fn start_full(
        source: Source,
        state: tempfile::TempDir,
        base: Option<BaseUrl>,
        limits: RateLimits,
    ) -> TestServer {
        TestServer::start_configured(source, state, base, limits, |app| app).await
    }

    /// A watching server on `content_dir` whose templates come from `templates`.
    pub async fn start_with_templates(content_dir: PathBuf, templates: PathBuf) -> TestServer {
        let source = Source::Content(content_dir);
        let state = tempfile::tempdir().unwrap();
        let server = TestServer::start_inner(
            source,
            state,
            None,
            RateLimits::default(),
            None,
            Some(templates),
            |app| app,
        )
        .await;
        dossier::reload::watch(server.app.clone()).unwrap();
        server
    }

    /// A server that serves only the dynamic core (`serve --dynamic-only`).
    pub async fn start_dynamic_only() -> TestServer {
        let source = Source::Content(sample_content());
        let state = tempfile::tempdir().unwrap();
        TestServer::start_configured(source, state, None, RateLimits::default(), |app| {
            app.with_dynamic_only(true)
        })
        .await
    }

    pub async fn start_configured(
        source: Source,
        state: tempfile::TempDir,
        base: Option<BaseUrl>,
        limits: RateLimits,
        configure: impl FnOnce(App) -> App,
    ) -> TestServer {
        TestServer::start_inner(source, state, base, limits, None, None, configure).await
    }

    /// A server on the sample content whose revocations go to `store` (opened in `state`).
    pub async fn start_with_store(
        state: tempfile::TempDir,
        store: Box<dyn RevocationStore>,
    ) -> TestServer {
        let source = Source::Content(sample_content());
        TestServer::start_inner(
            source,
            state,
            None,
            RateLimits::default(),
            Some(store),
            None,
            |app| app,
        )
        .await
    }

    async fn start_inner(
        source: Source,
        state: tempfile::TempDir,
        base: Option<BaseUrl>,
        limits: RateLimits,
        store: Option<Box<dyn RevocationStore>>,
        templates: Option<PathBuf>,
        configure: impl FnOnce(App) -> App,
    ) -> TestServer {
        let keys = Keyring::load_or_create(
            state.path(),
            dossier::clock::unix_seconds(SystemTime::now()),
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let base_url = base.unwrap_or_else(|| BaseUrl::parse(&format!("http://{addr}")).unwrap());
        let config = SiteConfig {
            limits: dossier::config::Limits::default(),
            base_url,
            auth: AuthPolicy::default(),
            templates,
            compression: dossier::config::Compression::WhileCompiling,
        };
        let version = live::prepare(
            &source,
            &config,
            &keys.published_jwks(&config.auth, 0),
            None,
        )
        .unwrap();
        // Whole seconds, like the timestamps in tokens, so lifetimes come out exact.
        let now = SystemTime::UNIX_EPOCH
            + Duration::from_secs(dossier::clock::unix_seconds(SystemTime::now()));
        let clock = Arc::new(ManualClock::new(now));
        // `DOSSIER_TEST_STORE=redis` runs the same tests against the shared store, on a
        // redis-server of this server's own.
        let mut redis = None;
        let mut shared_limits = None;
        let store: Box<dyn RevocationStore> = match store {
            Some(store) => store,
            None if std::env::var("DOSSIER_TEST_STORE").as_deref() == Ok("redis") => {
                let server = RedisServer::start();
                let store = RedisStore::connect(&server.url()).await.unwrap();
                shared_limits = Some((
                    Limiter::Shared(store.limiter("register", limits.register_per_minute)),
                    Limiter::Shared(store.limiter("token", limits.token_per_minute)),
                ));
                redis = Some(server);
                Box::new(store)
            }
            None => Box::new(EmbeddedStore::open(state.path()).unwrap()),
        };
        let auth = AuthService::new(
            config.base_url.clone(),
            config.auth.clone(),
            keys,
            store,
            limits,
        )
        .unwrap();
        let auth = match shared_limits {
            Some((register, token)) => auth.with_limiters(register, token),
            None => auth,
        };
        let origins = OriginPolicy::new(&config.base_url, &[], true);
        let mut app = configure(App::new(
            config,
            auth,
            clock.clone() as Arc<dyn Clock>,
            source,
            version,
            origins,
        ));
        // As `dossier serve` does: every test serves its bodies from the spool, the first
        // version's once the background thread has moved them (at once, on a small site).
        app.live_state_mut()
            .use_spool(dossier::spool::Spool::open(state.path()).unwrap());
        let app = Arc::new(app);
        dossier::reload::compress_in_background(app.clone());
        let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(serve::run(listener, app.clone(), async move {
            let _ = signal.await;
        }));
        let task = tokio::spawn(async move {
            task.await.unwrap().unwrap();
        });
        TestServer {
            base: format!("http://{addr}"),
            app,
            clock,
            client: HttpClient::default(),
            shutdown: Some(shutdown),
            task: Some(task),
            _state: state,
            _redis: redis,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        self.client
            .send(Method::GET, &self.url(path), headers, Bytes::new())
            .await
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Reply {
        self.client
            .send(method, &self.url(path), headers, body)
            .await
    }

    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

/// The `dossier` binary as a child process, for CLI behaviour.
pub struct ServerProcess {
    pub child: Child,
    pub base: String,
}

impl ServerProcess {
    /// Starts `dossier serve --addr 127.0.0.1:0 <args>` (unless `args` name an `--addr`) and
    /// waits for its listening line.
    pub fn start(args: &[&str]) -> ServerProcess {
        let any_port: &[&str] = if args.contains(&"--addr") {
            &[]
        } else {
            &["--addr", "127.0.0.1:0"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_dossier"))
            .arg("serve")
            .args(any_port)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let base = line
            .trim()
            .strip_prefix("dossier listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        ServerProcess { child, base }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the `dossier` binary to completion.
pub fn run_dossier(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dossier"))
        .args(args)
        .output()
        .unwrap()
}

/// Polls `check` until it returns `Some`, failing the test after `seconds`.
pub async fn eventually<T, F, Fut>(seconds: u64, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The public origin the CLI tests build for.
pub const BUILD_BASE: &str = "https://info.cobaltridge.example";

/// Runs `dossier build --precompress` for [`BUILD_BASE`], with `--origin-url` when given.
pub fn run_build(
    content: &Path,
    out: &Path,
    state: &Path,
    origin: Option<&str>,
) -> std::process::Output {
    // The tests compare every variant a build can hold.
    build(content, out, state, origin, true)
}

/// Runs `dossier build` for [`BUILD_BASE`] without `--precompress`: identity files only.
pub fn run_plain_build(content: &Path, out: &Path, state: &Path) -> std::process::Output {
    build(content, out, state, None, false)
}

fn build(
    content: &Path,
    out: &Path,
    state: &Path,
    origin: Option<&str>,
    precompress: bool,
) -> std::process::Output {
    build_for(BUILD_BASE, content, out, state, origin, precompress)
}

/// Runs `dossier build` for the origin `base`, with `--origin-url` when given.
pub fn build_for(
    base: &str,
    content: &Path,
    out: &Path,
    state: &Path,
    origin: Option<&str>,
    precompress: bool,
) -> std::process::Output {
    let mut args = vec![
        "build",
        "--content",
        content.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--base-url",
        base,
    ];
    if precompress {
        args.push("--precompress");
    }
    if let Some(origin) = origin {
        args.extend(["--origin-url", origin]);
    }
    run_dossier(&args)
}

/// The status of `GET /api/company` on `server` with `token` as a bearer.
pub async fn api_with(client: &HttpClient, server: &ServerProcess, token: &str) -> StatusCode {
    client
        .send(
            Method::GET,
            &server.url("/api/company"),
            &[("authorization", &format!("Bearer {token}"))],
            Bytes::new(),
        )
        .await
        .status
}

/// A static host serving `dir` on `port`: `tests/support/static_host.py` (Netlify's rules),
/// or with `plain`, `python3 -m http.server` (no rules at all).
pub struct StaticHost(Child);

impl StaticHost {
    pub fn start(dir: &Path, port: u16, plain: bool) -> StaticHost {
        let mut command = Command::new("python3");
        if plain {
            command.args([
                "-u",
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                "--directory",
            ]);
            command.arg(dir).arg(port.to_string());
        } else {
            command
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/support/static_host.py"
                ))
                .arg(dir)
                .arg(port.to_string());
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(
            line.to_ascii_lowercase().contains("serving http") || line.contains("listening on"),
            "{line:?}"
        );
        StaticHost(child)
    }
}

impl Drop for StaticHost {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
