//! `dossier doctor` against real deployments on loopback: `dossier serve`, `serve --from
//! build`, build/ behind a static host that applies `_headers` and `_redirects` (as Netlify
//! does) with the dynamic core behind it, the same build/ on Python's `http.server` (which
//! ignores both), and a build whose keys are not the core's.

use std::path::Path;

use serde_json::Value;

use crate::common::{build_for, free_port, run_dossier, sample_content, ServerProcess, StaticHost};

/// Runs `dossier doctor URL --json`: its exit code and report.
fn doctor(url: &str) -> (Option<i32>, Value) {
    let output = run_dossier(&["doctor", url, "--json"]);
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code(), report)
}

fn failures(report: &Value) -> Vec<&Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["outcome"] == "fail")
        .collect()
}

fn failed<'r>(report: &'r Value, check: &str) -> &'r Value {
    failures(report)
        .into_iter()
        .find(|finding| finding["check"] == check)
        .unwrap_or_else(|| panic!("no failure `{check}` in {report:#}"))
}

fn assert_healthy(code: Option<i32>, report: &Value) {
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["healthy"], true);
    assert!(failures(report).is_empty(), "{report:#}");
    // Every part of the deployment was reached, within the budget.
    for section in ["discovery", "headers", "agent-flow", "mcp"] {
        let passed = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|finding| finding["section"] == section && finding["outcome"] == "pass")
            .count();
        assert!(passed >= 5, "{section}: {report:#}");
    }
    let requests = report["requests"].as_u64().unwrap();
    assert!((30..=100).contains(&requests), "{requests} requests");
}

fn build(out: &Path, state: &Path, base: &str, origin: Option<&str>) {
    let output = build_for(base, &sample_content(), out, state, origin, false);
    assert!(output.status.success(), "{output:?}");
}

/// `dossier serve --dynamic-only` on `addr`, for the origin `base`, keys in `state`.
fn start_core(addr: &str, base: &str, state: &Path) -> ServerProcess {
    let content = sample_content();
    ServerProcess::start(&[
        "--dynamic-only",
        "--content",
        content.to_str().unwrap(),
        "--addr",
        addr,
        "--base-url",
        base,
        "--state",
        state.to_str().unwrap(),
        "--no-watch",
    ])
}

#[test]
fn a_server_is_healthy() {
    let state = tempfile::tempdir().unwrap();
    let content = sample_content();
    let server = ServerProcess::start(&[
        "--content",
        content.to_str().unwrap(),
        "--state",
        state.path().to_str().unwrap(),
        "--no-watch",
    ]);
    let (code, report) = doctor(&server.base);
    assert_healthy(code, &report);
    let agent_flow: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["section"] == "agent-flow")
        .map(|finding| finding["check"].as_str().unwrap())
        .collect();
    assert!(agent_flow.contains(&"identity assertion verifies against the published JWKS"));
    assert!(agent_flow.contains(&"GET /api/company with the revoked token: 401 challenge"));

    // The text report ends with the summary table.
    let output = run_dossier(&["doctor", &server.base]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("\nsection       pass  warn  fail\n"),
        "{text}"
    );
    assert!(text.ends_with("healthy: nothing failed\n"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when not on a terminal");
}

#[test]
fn a_server_of_a_build_is_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let addr = format!("127.0.0.1:{}", free_port());
    let base = format!("http://{addr}");
    build(&out, &state, &base, None);
    let server = ServerProcess::start(&[
        "--from",
        out.to_str().unwrap(),
        "--addr",
        &addr,
        "--base-url",
        &base,
        "--state",
        state.to_str().unwrap(),
    ]);
    let (code, report) = doctor(&server.base);
    assert_healthy(code, &report);
}

#[test]
fn a_static_host_with_the_rules_of_build_and_the_core_behind_it_is_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let front = free_port();
    let base = format!("http://127.0.0.1:{front}");
    let core_addr = format!("127.0.0.1:{}", free_port());
    build(&out, &state, &base, Some(&format!("http://{core_addr}")));
    let _core = start_core(&core_addr, &base, &state);
    let _host = StaticHost::start(&out, front, false);
    let (code, report) = doctor(&base);
    assert_healthy(code, &report);
}

#[test]
fn a_plain_static_server_fails_naming_each_missing_header_and_endpoint_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    build(&out, &state, &base, None);
    let _host = StaticHost::start(&out, port, true);
    let (code, report) = doctor(&base);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["healthy"], false);

    let cors = failed(
        &report,
        "CORS: Access-Control-Allow-Origin on GET /api/company",
    );
    assert_eq!(cors["seen"], "none");
    assert!(cors["fix"].as_str().unwrap().contains("_headers"));
    let link = failed(&report, "Link header on /: api-catalog and service-desc");
    assert!(link["fix"].as_str().unwrap().contains("_headers"));
    let content_type = failed(&report, "GET /.well-known/api-catalog: Content-Type");
    assert_eq!(content_type["expected"], "application/linkset+json");
    assert!(content_type["fix"].as_str().unwrap().contains("deploy-s3"));
    for dynamic in ["register: POST /agent/identity", "legacy era: initialize"] {
        let finding = failed(&report, dynamic);
        assert!(
            finding["fix"].as_str().unwrap().contains("--origin-url"),
            "{finding:#}"
        );
    }
    // The protected-resource metadata is a directory on disk; the plain server redirects.
    let metadata = failed(&report, "GET /.well-known/oauth-protected-resource");
    assert!(metadata["fix"].as_str().unwrap().contains("_redirects"));
}

#[test]
fn a_build_from_other_keys_in_front_of_a_core_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("build");
    let front = free_port();
    let base = format!("http://127.0.0.1:{front}");
    let core_addr = format!("127.0.0.1:{}", free_port());
    build(
        &out,
        &dir.path().join("build-state"),
        &base,
        Some(&format!("http://{core_addr}")),
    );
    let _core = start_core(&core_addr, &base, &dir.path().join("core-state"));
    let _host = StaticHost::start(&out, front, false);
    let (code, report) = doctor(&base);
    assert_eq!(code, Some(1), "{report:#}");
    let checks: Vec<&Value> = failures(&report)
        .into_iter()
        .map(|finding| &finding["check"])
        .collect();
    assert_eq!(
        checks,
        ["identity assertion verifies against the published JWKS"],
        "{report:#}"
    );
    let mismatch = failed(
        &report,
        "identity assertion verifies against the published JWKS",
    );
    assert!(mismatch["seen"]
        .as_str()
        .unwrap()
        .contains("which the JWKS does not publish"));
    assert!(mismatch["fix"].as_str().unwrap().contains("--state"));
}

#[test]
fn doctor_refuses_what_is_not_an_origin() {
    let output = run_dossier(&["doctor", "https://info.example.com/docs"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("origin only"));
}
