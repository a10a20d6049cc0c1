//! The `dossier` binary: `build`, `serve`, `serve --from build`, and their failure modes.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{run_dossier, HttpClient, ServerProcess};
use hyper::{Method, StatusCode};

const BASE: &str = common::BUILD_BASE;

fn build(content: &Path, out: &Path, state: &Path) -> std::process::Output {
    common::run_build(content, out, state, None)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().display().to_string(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn serving_a_build_gives_the_same_bytes_and_headers_as_serving_content() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let content = common::sample_content();
    let output = build(&content, &out, &state);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["base_url"], BASE);
    // The DNS-AID records for the operator's zone, for the base URL's host.
    let dns = fs::read_to_string(out.join("dns-records.txt")).unwrap();
    assert!(
        dns.contains("_index._agents.info.cobaltridge.example. 3600 IN HTTPS 1 info.cobaltridge.example. alpn=")
            && dns.contains("_mcp._agents.info.cobaltridge.example. 3600 IN HTTPS 1 ")
            && !dns.contains("_a2a"),
        "{dns}"
    );

    let state_arg = state.to_str().unwrap();
    let from_content = ServerProcess::start(&[
        "--content",
        content.to_str().unwrap(),
        "--state",
        state_arg,
        "--base-url",
        BASE,
    ]);
    // Same keys, separate revocation store: one state directory serves one process.
    let second_state = dir.path().join("state-2");
    fs::create_dir(&second_state).unwrap();
    fs::copy(state.join("keys.json"), second_state.join("keys.json")).unwrap();
    let from_build = ServerProcess::start(&[
        "--from",
        out.to_str().unwrap(),
        "--state",
        second_state.to_str().unwrap(),
    ]);
    let client = HttpClient::default();
    // `serve` answers with identity bytes at once and compresses in the background.
    gzip_once_compressed(&client, &from_content.url("/")).await;
    let artifacts = manifest["artifacts"].as_object().unwrap();
    assert!(artifacts.len() >= 9);
    for (path, entry) in artifacts {
        // The file on disk is exactly the identity body.
        let on_disk = fs::read(out.join(entry["file"].as_str().unwrap())).unwrap();
        for encoding in ["identity", "gzip", "br"] {
            let headers = [("accept-encoding", encoding)];
            let a = client
                .send(Method::GET, &from_content.url(path), &headers, "")
                .await;
            let b = client
                .send(Method::GET, &from_build.url(path), &headers, "")
                .await;
            assert_eq!(a.status, StatusCode::OK, "{path}");
            assert_eq!(a.status, b.status, "{path}");
            assert_eq!(a.body, b.body, "{path} {encoding}");
            for name in [
                "content-type",
                "etag",
                "cache-control",
                "vary",
                "link",
                "content-encoding",
                "content-length",
            ] {
                assert_eq!(
                    a.headers.get(name),
                    b.headers.get(name),
                    "{path} {encoding} {name}"
                );
            }
            if encoding == "identity" {
                assert_eq!(a.body, on_disk, "{path}");
                assert_eq!(a.header("etag"), entry["etag"].as_str().unwrap());
                assert_eq!(
                    a.header("content-type"),
                    entry["content_type"].as_str().unwrap()
                );
            } else if let Some(variant) = entry["encodings"].get(encoding) {
                assert_eq!(
                    a.body,
                    fs::read(out.join(variant["file"].as_str().unwrap())).unwrap()
                );
                assert_eq!(a.header("etag"), variant["etag"].as_str().unwrap());
            }
        }
    }
    let health = client
        .send(Method::GET, &from_build.url("/api/health"), &[], "")
        .await
        .json();
    assert_eq!(health["content"]["source"], "build");
    assert_eq!(health["content"]["revision"], manifest["revision"]);
}

#[test]
fn a_broken_content_tree_fails_the_build_and_leaves_the_last_build_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    assert!(build(&content, &out, &state).status.success());
    let before = snapshot(&out);

    let division = content.join("divisions/data-platform.json");
    let text = fs::read_to_string(&division).unwrap();
    fs::write(
        &division,
        text.replace("\"ridgeline@cobaltridge.example\"", "\"ridgeline\""),
    )
    .unwrap();
    fs::write(
        content.join("pages/orphan.md"),
        "+++\ntitle = \"Orphan\"\nsummary = \"s\"\ndivision = \"nowhere\"\n+++\nText\n",
    )
    .unwrap();

    let output = build(&content, &out, &state);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let division_line = format!(
        "{}:10: contact.email: `ridgeline` is not an email address",
        division.display()
    );
    assert!(stderr.contains(&division_line), "{stderr}");
    let orphan_line = format!(
        "{}:4: division: unknown division `nowhere`",
        content.join("pages/orphan.md").display()
    );
    assert!(stderr.contains(&orphan_line), "{stderr}");
    assert!(
        stderr.contains("2 problems; nothing was written"),
        "{stderr}"
    );
    assert_eq!(snapshot(&out), before, "the previous build changed");
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A broken tree also refuses to start a server: there is no last good version yet.
    let fresh_state = tempfile::tempdir().unwrap();
    let serve = run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--content",
        content.to_str().unwrap(),
        "--state",
        fresh_state.path().to_str().unwrap(),
    ]);
    assert_eq!(serve.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&serve.stderr).contains("unknown division `nowhere`"));
    // Not a terminal: the log (it says the keys were created) carries no colour codes.
    assert!(String::from_utf8_lossy(&serve.stderr).contains("created signing keys"));
    assert!(!serve.stderr.contains(&0x1b), "ANSI escapes in a piped log");
}

#[test]
fn a_build_refuses_to_overwrite_a_directory_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("precious");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("thesis.tex"), "years of work").unwrap();
    let output = build(&common::sample_content(), &out, &dir.path().join("state"));
    assert!(!output.status.success());
    assert_eq!(
        fs::read_to_string(out.join("thesis.tex")).unwrap(),
        "years of work"
    );
}

#[test]
fn keys_persist_across_runs_and_a_corrupt_key_stops_startup() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let content = common::sample_content();
    let jwks = |out: &Path| fs::read_to_string(out.join(".well-known/jwks.json")).unwrap();
    assert!(build(&content, &dir.path().join("a"), &state)
        .status
        .success());
    assert!(build(&content, &dir.path().join("b"), &state)
        .status
        .success());
    assert_eq!(jwks(&dir.path().join("a")), jwks(&dir.path().join("b")));

    let key = state.join("keys.json");
    fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let output = run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("keys.json") && stderr.contains("left untouched"),
        "{stderr}"
    );
    assert!(fs::read_to_string(&key).unwrap().contains("broken"));
}

#[test]
fn a_build_for_another_key_or_a_tampered_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("build");
    assert!(
        build(&common::sample_content(), &out, &dir.path().join("state"))
            .status
            .success()
    );

    let other_state = dir.path().join("other-state");
    let output = run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--from",
        out.to_str().unwrap(),
        "--state",
        other_state.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("same --state"));

    fs::write(out.join("api/company"), "{}").unwrap();
    let output = run_dossier(&[
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--from",
        out.to_str().unwrap(),
        "--state",
        dir.path().join("state").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("api/company") && stderr.contains("does not match its ETag"),
        "{stderr}"
    );
}

#[test]
fn base_urls_must_be_plain_origins() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "https://info.example.com/",
        "info.example.com",
        "https://info.example.com/api",
    ] {
        let output = run_dossier(&[
            "build",
            "--base-url",
            bad,
            "--out",
            dir.path().join("b").to_str().unwrap(),
            "--state",
            dir.path().join("s").to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("base URL"),
            "{bad}"
        );
    }
}

/// A running `dossier serve` started from `command`, its stdout and the URL it listens on.
struct Serving {
    child: std::process::Child,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    url: String,
}

impl Serving {
    fn start(command: &mut std::process::Command) -> Serving {
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let url = Serving::read_line(&mut stdout)
            .strip_prefix("dossier listening on ")
            .unwrap()
            .to_string();
        Serving { child, stdout, url }
    }

    fn read_line(stdout: &mut std::io::BufReader<std::process::ChildStdout>) -> String {
        let mut line = String::new();
        std::io::BufRead::read_line(stdout, &mut line).unwrap();
        line.trim().to_string()
    }

    /// SIGTERM, as an operator stops it, so the log writers write out what is queued; a
    /// kill after 20 s if it has not exited.
    fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn environment_variables_configure_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let serving = Serving::start(
        std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
            .arg("serve")
            .env("DOSSIER_ADDR", "127.0.0.1:0")
            .env("DOSSIER_CONTENT", common::sample_content())
            .env("DOSSIER_STATE", dir.path().join("state"))
            .env("DOSSIER_BASE_URL", BASE),
    );
    let url = serving.url.clone();
    let prm = HttpClient::default()
        .send(
            Method::GET,
            &format!("{url}/.well-known/oauth-protected-resource"),
            &[],
            "",
        )
        .await
        .json();
    assert_eq!(prm["resource"], format!("{BASE}/"));
    assert!(dir.path().join("state/keys.json").exists());
    serving.stop();
}

#[test]
fn a_build_says_what_it_cannot_do_once_deployed() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::sample_content();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let plain = run_dossier(&[
        "build",
        "--content",
        content.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    assert!(plain.status.success());
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(
        stderr.contains("warning: the base URL http://127.0.0.1:8080 is a loopback address"),
        "{stderr}"
    );
    assert!(stderr.contains("warning: no --origin-url"), "{stderr}");
    // Without an origin no path that exists as a file is sent to the worker (which could
    // only answer 503): /api/company is served as the file it is.
    let routes: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("_routes.json")).unwrap()).unwrap();
    let include: Vec<&str> = routes["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        !include
            .iter()
            .any(|r| r.starts_with("/api/") || *r == "/mcp"),
        "{include:?}"
    );
    assert!(include.contains(&"/.well-known/oauth-protected-resource"));

    let deployable = run_dossier(&[
        "build",
        "--content",
        content.to_str().unwrap(),
        "--out",
        dir.path().join("deployable").to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--base-url",
        BASE,
        "--origin-url",
        "https://core.example.com",
    ]);
    assert!(deployable.status.success());
    let stderr = String::from_utf8_lossy(&deployable.stderr);
    assert!(!stderr.contains("warning:"), "{stderr}");
}

/// Starts `serve` with `extra` flags and stderr in a file; returns it and the log file.
fn serve_logging(dir: &Path, extra: &[&str]) -> (Serving, std::path::PathBuf) {
    let log = dir.join("stderr.log");
    let serving = Serving::start(
        std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
            .args(["serve", "--addr", "127.0.0.1:0", "--no-watch"])
            .args(extra)
            .env("DOSSIER_CONTENT", common::sample_content())
            .env("DOSSIER_STATE", dir.join("state"))
            .env_remove("DOSSIER_LOG")
            .stderr(fs::File::create(&log).unwrap()),
    );
    (serving, log)
}

#[tokio::test]
async fn requests_do_not_wait_for_a_log_reader_that_stopped_reading() {
    // stderr is a pipe nobody reads: once its 64 KiB are full, a server that wrote access
    // lines on the request path would stop answering. 2,000 lines are about 300 KiB.
    let dir = tempfile::tempdir().unwrap();
    let serving = Serving::start(
        std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
            .args(["serve", "--addr", "127.0.0.1:0", "--no-watch"])
            .env("DOSSIER_CONTENT", common::sample_content())
            .env("DOSSIER_STATE", dir.path().join("state"))
            .env_remove("DOSSIER_LOG")
            .stderr(std::process::Stdio::piped()),
    );
    let url = format!("{}/api/health", serving.url);
    let client = HttpClient::default();
    let all = async {
        for _ in 0..2_000 {
            let reply = client
                .send(Method::GET, &url, &[("user-agent", &"x".repeat(150))], "")
                .await;
            assert_eq!(reply.status, StatusCode::OK);
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(120), all)
        .await
        .expect("requests stalled behind the access log");
    serving.stop();
}

#[tokio::test]
async fn every_request_gets_one_access_line_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let (serving, log) = serve_logging(dir.path(), &[]);
    let url = serving.url.clone();
    let client = HttpClient::default();
    let secret = "v4.local.SECRET-TOKEN-VALUE";
    let ok = client
        .send(
            Method::GET,
            &format!("{url}/api/company"),
            &[("user-agent", "probe/1.0")],
            "",
        )
        .await;
    assert_eq!(ok.status, StatusCode::OK);
    let refused = client
        .send(
            Method::GET,
            &format!("{url}/api/search?q=x&access_token={secret}"),
            &[],
            "",
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let bearer = format!("Bearer {secret}");
    let unauthorized = client
        .send(
            Method::GET,
            &format!("{url}/api/company"),
            &[
                ("authorization", &bearer),
                ("user-agent", "x\" status=200 client=6.6.6.6 path=/admin"),
            ],
            "",
        )
        .await;
    assert_eq!(unauthorized.status, StatusCode::UNAUTHORIZED);
    serving.stop();
    let text = fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("dossier::access"))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].contains("client=127.0.0.1 method=GET path=\"/api/company\" status=200 bytes=")
            && lines[0].ends_with("user_agent=\"probe/1.0\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("path=\"/api/search\" status=400"),
        "{}",
        lines[1]
    );
    // What the client wrote stays one quoted value: no second `client=` field.
    assert!(
        lines[2].contains("status=401")
            && lines[2].ends_with(r#"user_agent="x\" status=200 client=6.6.6.6 path=/admin""#),
        "{}",
        lines[2]
    );
    assert!(!text.contains("SECRET") && !text.contains("q=x"), "{text}");
}

#[tokio::test]
async fn access_log_json_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let (serving, log) = serve_logging(dir.path(), &["--access-log", "json"]);
    let url = serving.url.clone();
    let health = HttpClient::default()
        .send(Method::GET, &format!("{url}/api/health"), &[], "")
        .await;
    assert_eq!(health.status, StatusCode::OK);
    serving.stop();
    let text = fs::read_to_string(&log).unwrap();
    let access: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("every line is JSON"))
        .filter(|line| line["target"] == "dossier::access")
        .collect();
    assert_eq!(access.len(), 1, "{text}");
    assert_eq!(access[0]["path"], "/api/health");
    assert_eq!(access[0]["status"], 200);

    let quiet = tempfile::tempdir().unwrap();
    let (serving, log) = serve_logging(quiet.path(), &["--access-log", "off"]);
    let url = serving.url.clone();
    HttpClient::default()
        .send(Method::GET, &format!("{url}/api/health"), &[], "")
        .await;
    serving.stop();
    assert!(!fs::read_to_string(&log)
        .unwrap()
        .contains("dossier::access"));
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener() {
    let dir = tempfile::tempdir().unwrap();
    let mut serving = Serving::start(
        std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--no-watch",
                "--access-log",
                "off",
            ])
            .args([
                "--metrics-addr",
                "127.0.0.1:0",
                "--register-rate-limit",
                "1",
            ])
            .env("DOSSIER_CONTENT", common::sample_content())
            .env("DOSSIER_STATE", dir.path().join("state")),
    );
    let url = serving.url.clone();
    let metrics_url = Serving::read_line(&mut serving.stdout)
        .strip_prefix("dossier metrics on ")
        .unwrap()
        .to_string();
    let client = HttpClient::default();
    let get = |path: &str| format!("{url}{path}");
    assert_eq!(
        client
            .send(Method::GET, &get("/api/company"), &[], "")
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        client
            .send(Method::GET, &get("/nope"), &[], "")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // Not on the public port.
    assert_eq!(
        client
            .send(Method::GET, &get("/metrics"), &[], "")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let json = [("content-type", "application/json")];
    for _ in 0..2 {
        client
            .send(
                Method::POST,
                &get("/agent/identity"),
                &json,
                r#"{"type":"anonymous"}"#,
            )
            .await;
    }
    let page = client.send(Method::GET, &metrics_url, &[], "").await;
    serving.stop();
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.header("content-type"), "text/plain; version=0.0.4");
    let text = page.text();
    for expected in [
        "dossier_requests_total{route=\"document\",status=\"2xx\"} 1\n",
        "dossier_requests_total{route=\"not_found\",status=\"4xx\"} 2\n",
        "dossier_requests_total{route=\"register\",status=\"2xx\"} 1\n",
        "dossier_requests_total{route=\"register\",status=\"4xx\"} 1\n",
        "dossier_rate_limited_total 1\n",
        "dossier_request_duration_seconds_count 5\n",
        "dossier_store_up 1\n",
        "dossier_content_errors 0\n",
        "dossier_spool_up 1\n",
        "dossier_access_log_dropped_total 0\n",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
    assert!(text.contains("dossier_open_connections "), "{text}");
}

#[tokio::test]
async fn metrics_say_when_the_spool_is_down_and_nothing_else_is() {
    // A state directory where the spool cannot go: `spool` is a file. The site still
    // serves (bodies stay in memory), and `/metrics` shows it; `--no-spool` has no gauge.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    fs::create_dir_all(&state).unwrap();
    fs::write(state.join("spool"), "not a directory").unwrap();
    for (extra, expected) in [
        (None, Some("dossier_spool_up 0\n")),
        (Some("--no-spool"), None),
    ] {
        let mut serving = Serving::start(
            std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
                .args(["serve", "--addr", "127.0.0.1:0", "--no-watch"])
                .args(["--metrics-addr", "127.0.0.1:0"])
                .args(extra)
                .env("DOSSIER_CONTENT", common::sample_content())
                .env("DOSSIER_STATE", &state),
        );
        let metrics_url = Serving::read_line(&mut serving.stdout)
            .strip_prefix("dossier metrics on ")
            .unwrap()
            .to_string();
        let client = HttpClient::default();
        let company = client
            .send(
                Method::GET,
                &format!("{}/api/company", serving.url),
                &[],
                "",
            )
            .await;
        let page = client.send(Method::GET, &metrics_url, &[], "").await;
        serving.stop();
        assert_eq!(company.status, StatusCode::OK);
        let text = page.text();
        match expected {
            Some(line) => assert!(text.contains(line), "{line} not in\n{text}"),
            None => assert!(!text.contains("dossier_spool_up"), "{text}"),
        }
        assert!(text.contains("dossier_store_up 1\n"), "{text}");
    }
}

#[tokio::test]
async fn addr_without_a_host_listens_on_every_interface() {
    let dir = tempfile::tempdir().unwrap();
    let serving = Serving::start(
        std::process::Command::new(env!("CARGO_BIN_EXE_dossier"))
            .args(["serve", "--addr", ":0", "--no-watch"])
            .env("DOSSIER_CONTENT", common::sample_content())
            .env("DOSSIER_STATE", dir.path().join("state"))
            .env("DOSSIER_BASE_URL", BASE),
    );
    let url = serving.url.clone();
    let port = url.rsplit(':').next().unwrap().to_string();
    // Reachable over IPv4 loopback whichever family the socket is.
    let health = HttpClient::default()
        .send(
            Method::GET,
            &format!("http://127.0.0.1:{port}/api/health"),
            &[],
            "",
        )
        .await;
    serving.stop();
    assert_eq!(health.status, StatusCode::OK, "{url}");
}

#[tokio::test]
async fn revocations_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let content = common::sample_content();
    let args = [
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--base-url",
        BASE,
    ];
    let client = HttpClient::default();
    let form = [("content-type", "application/x-www-form-urlencoded")];

    let mut server = ServerProcess::start(&args);
    let registration = client
        .send(
            Method::POST,
            &server.url("/agent/identity"),
            &[("content-type", "application/json")],
            r#"{"type":"anonymous"}"#,
        )
        .await
        .json();
    let assertion = registration["identity_assertion"]
        .as_str()
        .unwrap()
        .to_string();
    let exchange_body = format!(
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}"
    );
    let token = |reply: common::Reply| reply.json()["access_token"].as_str().unwrap().to_string();
    let first = token(
        client
            .send(
                Method::POST,
                &server.url("/oauth2/token"),
                &form,
                exchange_body.clone(),
            )
            .await,
    );
    let second = token(
        client
            .send(
                Method::POST,
                &server.url("/oauth2/token"),
                &form,
                exchange_body.clone(),
            )
            .await,
    );
    let other = token(
        client
            .send(
                Method::POST,
                &server.url("/oauth2/token"),
                &form,
                "grant_type=client_credentials",
            )
            .await,
    );

    let revoked = client
        .send(
            Method::POST,
            &server.url("/oauth2/revoke"),
            &form,
            format!("token={first}"),
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK);
    let revoked = client
        .send(
            Method::POST,
            &server.url("/oauth2/revoke"),
            &form,
            format!("token={other}"),
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK);

    // SIGKILL: no shutdown handler runs, nothing is flushed on the way out.
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    let server = ServerProcess::start(&args);
    let call = |token: String| {
        let client = &client;
        let url = server.url("/api/company");
        async move {
            client
                .send(
                    Method::GET,
                    &url,
                    &[("authorization", &format!("Bearer {token}"))],
                    "",
                )
                .await
                .status
        }
    };
    assert_eq!(call(first).await, StatusCode::UNAUTHORIZED);
    assert_eq!(call(other).await, StatusCode::UNAUTHORIZED);
    assert_eq!(
        call(second.clone()).await,
        StatusCode::OK,
        "an unrevoked token survives a restart too"
    );

    let revoked = client
        .send(
            Method::POST,
            &server.url("/oauth2/revoke"),
            &form,
            format!("token={assertion}"),
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK);
    drop(server);
    let server = ServerProcess::start(&args);
    let url = server.url("/api/company");
    let status = client
        .send(
            Method::GET,
            &url,
            &[("authorization", &format!("Bearer {second}"))],
            "",
        )
        .await
        .status;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the assertion's revocation cascades after restart"
    );
    let exchange = client
        .send(
            Method::POST,
            &server.url("/oauth2/token"),
            &form,
            exchange_body,
        )
        .await;
    assert_eq!(exchange.json()["error"], "invalid_grant");
}

#[tokio::test]
async fn serving_a_build_picks_up_the_next_build() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    assert!(build(&content, &out, &state).status.success());
    let server = ServerProcess::start(&[
        "--from",
        out.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    let client = HttpClient::default();

    let division = content.join("divisions/public-sector.json");
    let text = fs::read_to_string(&division).unwrap();
    fs::write(
        &division,
        text.replace(
            "Public Sector & Utilities works",
            "Public Sector & Utilities now works",
        ),
    )
    .unwrap();
    assert!(build(&content, &out, &state).status.success());

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let body = client
            .send(Method::GET, &server.url("/api/company"), &[], "")
            .await
            .text();
        if body.contains("Public Sector & Utilities now works") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new build was not picked up"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // MCP follows the build too: it is rebuilt from the new /api/company.
    let mcp = client
        .send(
            Method::POST,
            &server.url("/mcp"),
            &[("content-type", "application/json")],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_division","arguments":{"division_id":"public-sector"}}}"#,
        )
        .await
        .text();
    assert!(mcp.contains("Public Sector & Utilities now works"));
}

/// The gzip answer for `url`, once the server has made it in the background (identity bytes
/// are sent until then).
async fn gzip_once_compressed(client: &HttpClient, url: &str) -> common::Reply {
    common::eventually(60, "the gzip variant", || async {
        let reply = client
            .send(Method::GET, url, &[("accept-encoding", "gzip")], "")
            .await;
        (reply.headers.get("content-encoding").map(|v| v.as_bytes()) == Some(b"gzip"))
            .then_some(reply)
    })
    .await
}

/// A plain build writes identity files only (usable at once; CDNs compress for themselves);
/// `serve --from` it sends identity bytes at once and compressed ones once it has made them,
/// each with its own ETag.
#[tokio::test]
async fn a_plain_build_has_no_variants_and_serve_from_compresses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let output = common::run_plain_build(&common::sample_content(), &out, &state);
    assert!(output.status.success());
    let files = snapshot(&out);
    assert!(files.keys().any(|f| f == "api/company"));
    assert!(
        !files
            .keys()
            .any(|f| f.ends_with(".gz") || f.ends_with(".br")),
        "variants written without --precompress"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["artifacts"]
        .as_object()
        .unwrap()
        .values()
        .all(|entry| entry["encodings"].as_object().is_none_or(|e| e.is_empty())));

    let server = ServerProcess::start(&[
        "--from",
        out.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ]);
    let client = HttpClient::default();
    let identity = client
        .send(Method::GET, &server.url("/api/company"), &[], "")
        .await;
    assert_eq!(identity.status, StatusCode::OK);
    assert_eq!(identity.body, files["api/company"]);
    let gzip = gzip_once_compressed(&client, &server.url("/api/company")).await;
    assert_ne!(gzip.header("etag"), identity.header("etag"));
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&gzip.body[..]),
        &mut decoded,
    )
    .unwrap();
    assert_eq!(decoded, identity.body);
}

/// Response bodies live in `<state>/spool` by default, in files with no names; a spool
/// that cannot be made (here a file is in its way) leaves them in memory with one warning,
/// as `--no-spool` does: all three serve the same bytes.
#[tokio::test]
async fn bodies_are_the_same_from_the_spool_and_from_memory() {
    let client = HttpClient::default();
    let spooled_dir = tempfile::tempdir().unwrap();
    let blocked_dir = tempfile::tempdir().unwrap();
    let memory_dir = tempfile::tempdir().unwrap();
    fs::create_dir(blocked_dir.path().join("state")).unwrap();
    fs::write(blocked_dir.path().join("state").join("spool"), "in the way").unwrap();
    // One base URL, so the documents are the same bytes (each has its own keys: no JWKS).
    let (spooled, _) = serve_logging(spooled_dir.path(), &["--base-url", BASE]);
    let (blocked, blocked_log) = serve_logging(blocked_dir.path(), &["--base-url", BASE]);
    let (memory, _) = serve_logging(memory_dir.path(), &["--base-url", BASE, "--no-spool"]);
    for path in ["/", "/api/company", "/llms.txt", "/openapi.json"] {
        let spooled_gzip = gzip_once_compressed(&client, &format!("{}{path}", spooled.url)).await;
        for server in [&blocked, &memory] {
            let gzip = gzip_once_compressed(&client, &format!("{}{path}", server.url)).await;
            assert!(gzip.body == spooled_gzip.body, "{path}: gzip bodies differ");
            let identity = |url: String| {
                let client = &client;
                async move {
                    client
                        .send(Method::GET, &url, &[("accept-encoding", "identity")], "")
                        .await
                }
            };
            let a = identity(format!("{}{path}", spooled.url)).await;
            let b = identity(format!("{}{path}", server.url)).await;
            assert_eq!(a.status, StatusCode::OK, "{path}");
            assert!(a.body == b.body, "{path}: bodies differ");
            assert_eq!(a.headers.get("etag"), b.headers.get("etag"), "{path}");
        }
    }
    let spool = spooled_dir.path().join("state").join("spool");
    assert!(spool.is_dir());
    assert_eq!(
        fs::read_dir(&spool).unwrap().count(),
        0,
        "a spool file kept its name"
    );
    assert!(!memory_dir.path().join("state").join("spool").exists());
    blocked.stop();
    let log = fs::read_to_string(&blocked_log).unwrap();
    assert!(log.contains("cannot open the spool"), "{log}");
    spooled.stop();
    memory.stop();
}
