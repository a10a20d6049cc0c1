//! Hot reload: edits go live, every editor's way of saving works, broken edits never replace
//! the last good version, and no request ever sees half a version. Nothing sleeps as an
//! assertion: every wait polls with a deadline.

use crate::common;

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{eventually, TestServer};
use hyper::{Method, StatusCode};
use serde_json::{json, Value};

const DIVISION: &str = "divisions/field-sensors.json";

fn set_description(content: &Path, text: &str) -> String {
    let path = content.join(DIVISION);
    let mut division: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    division["description"] = text.into();
    serde_json::to_string_pretty(&division).unwrap()
}

async fn description(server: &TestServer) -> String {
    let company = server.get("/api/company", &[]).await.json();
    company["divisions"][0]["description"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn wait_for_description(server: &TestServer, text: &str) {
    eventually(10, text, || async {
        (description(server).await == text).then_some(())
    })
    .await;
}

#[tokio::test]
async fn an_edit_is_live_in_the_api_and_mcp_and_only_its_etags_change() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let server = TestServer::start_watching(content.clone()).await;
    let etag = |reply: &common::Reply| reply.header("etag").to_string();
    let company_before = etag(&server.get("/api/company", &[]).await);
    let unrelated = [
        "/.well-known/jwks.json",
        "/.well-known/oauth-protected-resource",
        "/auth.md",
    ];
    let mut unrelated_before = Vec::new();
    for path in unrelated {
        unrelated_before.push(etag(&server.get(path, &[("accept-encoding", "br")]).await));
    }
    let revision_before =
        server.get("/api/health", &[]).await.json()["content"]["revision"].clone();

    let text = "Field Sensors now also builds snow-depth sensors.";
    fs::write(content.join(DIVISION), set_description(&content, text)).unwrap();
    wait_for_description(&server, text).await;

    assert_ne!(etag(&server.get("/api/company", &[]).await), company_before);
    for (path, before) in unrelated.iter().zip(unrelated_before) {
        assert_eq!(
            etag(&server.get(path, &[("accept-encoding", "br")]).await),
            before,
            "{path}"
        );
    }
    let health = server.get("/api/health", &[]).await.json();
    assert_ne!(health["content"]["revision"], revision_before);
    assert_eq!(health["content"]["status"], "ok");

    let page = server.get("/divisions/field-sensors", &[]).await.text();
    assert!(
        page.contains(text),
        "the division's HTML page was not rebuilt"
    );
    let markdown = server.get("/divisions/field-sensors.md", &[]).await.text();
    assert!(markdown.contains(text));

    let mcp = server
        .send(
            Method::POST,
            "/mcp",
            &[("content-type", "application/json")],
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_division", "arguments": {"division_id": "field-sensors"}}}).to_string(),
        )
        .await
        .json();
    assert_eq!(
        mcp["result"]["structuredContent"]["division"]["description"],
        text
    );
    server.stop().await;
}

/// `serve` sets the watch up beside the first load, so a file may be read before its watch
/// exists; an edit in between raises no event. The watch's first act is a reload that
/// finds it.
#[tokio::test]
async fn an_edit_made_before_the_watch_began_goes_live() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let server = TestServer::start_with(dossier::live::Source::Content(content.clone())).await;
    let text = "Edited after the load, before the watch.";
    fs::write(content.join(DIVISION), set_description(&content, text)).unwrap();
    dossier::reload::watch(server.app.clone()).unwrap();
    wait_for_description(&server, text).await;
    server.stop().await;
}

#[tokio::test]
async fn every_way_editors_save_ends_on_the_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let server = TestServer::start_watching(content.clone()).await;
    let file = content.join(DIVISION);

    // vim and most IDEs: write a temporary file, rename it over the original.
    let temporary = content.join("divisions/.field-sensors.json.swp");
    fs::write(&temporary, set_description(&content, "Saved by rename.")).unwrap();
    fs::rename(&temporary, &file).unwrap();
    wait_for_description(&server, "Saved by rename.").await;

    // Truncate and rewrite in place.
    {
        use std::io::Write;
        let text = set_description(&content, "Saved by truncating.");
        let mut handle = fs::File::create(&file).unwrap();
        handle.write_all(text.as_bytes()).unwrap();
    }
    wait_for_description(&server, "Saved by truncating.").await;

    // Delete, then create.
    let text = set_description(&content, "Saved by delete and create.");
    fs::remove_file(&file).unwrap();
    fs::write(&file, text).unwrap();
    wait_for_description(&server, "Saved by delete and create.").await;

    // A new page appears, a page is removed, a whole directory is replaced.
    fs::write(
        content.join("pages/new-page.md"),
        "+++\ntitle = \"New\"\nsummary = \"Fresh.\"\n+++\nHello.\n",
    )
    .unwrap();
    eventually(10, "new page", || async {
        server
            .get("/api/company", &[])
            .await
            .text()
            .contains("\"slug\":\"new-page\"")
            .then_some(())
    })
    .await;
    fs::remove_file(content.join("pages/new-page.md")).unwrap();
    eventually(10, "page removed", || async {
        (!server
            .get("/api/company", &[])
            .await
            .text()
            .contains("\"slug\":\"new-page\""))
        .then_some(())
    })
    .await;

    let replacement = dir.path().join("content-next");
    fs::create_dir(&replacement).unwrap();
    for entry in walkdir::WalkDir::new(&content).min_depth(1) {
        let entry = entry.unwrap();
        let target = replacement.join(entry.path().strip_prefix(&content).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
    fs::write(
        replacement.join(DIVISION),
        set_description(&replacement, "The directory was replaced."),
    )
    .unwrap();
    let old = dir.path().join("content-old");
    fs::rename(&content, &old).unwrap();
    fs::rename(&replacement, &content).unwrap();
    wait_for_description(&server, "The directory was replaced.").await;

    // The new directory is watched too.
    fs::write(
        content.join(DIVISION),
        set_description(&content, "Edited after the swap."),
    )
    .unwrap();
    wait_for_description(&server, "Edited after the swap.").await;
    server.stop().await;
}

#[tokio::test]
async fn a_broken_edit_keeps_the_last_good_version_and_health_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let server = TestServer::start_watching(content.clone()).await;
    let good = server.get("/api/company", &[]).await;

    let file = content.join(DIVISION);
    let original = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        original.replace(
            "\"sensors@cobaltridge.example\"",
            "\"sensors-at-cobaltridge\"",
        ),
    )
    .unwrap();
    let health = eventually(10, "the error in health", || async {
        let health = server.get("/api/health", &[]).await.json();
        (health["content"]["status"] == "error").then_some(health)
    })
    .await;
    // Uptime monitors read the top-level status: a broken edit makes it `degraded`.
    assert_eq!(health["status"], "degraded");
    let error = &health["content"]["errors"][0];
    assert!(
        error["file"].as_str().unwrap().ends_with(DIVISION),
        "{error}"
    );
    assert_eq!(error["line"], 10);
    assert_eq!(error["field"], "contact.email");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("not an email address"));
    assert_eq!(
        health["content"]["revision"],
        server.app.live().artifacts.revision()
    );

    let still = server.get("/api/company", &[]).await;
    assert_eq!(still.body, good.body);
    assert_eq!(still.header("etag"), good.header("etag"));

    fs::write(
        &file,
        original.replace("Field Sensors develops", "Field Sensors, fixed, develops"),
    )
    .unwrap();
    eventually(10, "the error to clear", || async {
        let health = server.get("/api/health", &[]).await.json();
        (health["status"] == "ok"
            && health["content"]["status"] == "ok"
            && health["content"].get("errors").is_none())
        .then_some(())
    })
    .await;
    assert!(description(&server)
        .await
        .starts_with("Field Sensors, fixed, develops"));
    server.stop().await;
}

#[tokio::test]
async fn under_load_every_response_is_one_whole_version() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let server = Arc::new(TestServer::start_watching(content.clone()).await);
    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicUsize::new(0));

    let mut clients = Vec::new();
    for encoding in ["identity", "gzip", "br"] {
        let (server, stop, requests) = (server.clone(), stop.clone(), requests.clone());
        clients.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                for path in ["/api/company", "/.well-known/api-catalog"] {
                    let reply = server.get(path, &[("accept-encoding", encoding)]).await;
                    requests.fetch_add(1, Ordering::Relaxed);
                    if reply.status != StatusCode::OK {
                        failures.push(format!("{path}: {}", reply.status));
                        continue;
                    }
                    let expected = dossier::compile::artifact::strong_etag(&reply.body);
                    if reply.header("etag") != expected.as_str() {
                        failures.push(format!(
                            "{path} ({encoding}): ETag does not match the bytes"
                        ));
                    }
                }
            }
            failures
        }));
    }

    for round in 0..100 {
        let text = format!("Reload number {round}.");
        fs::write(content.join(DIVISION), set_description(&content, &text)).unwrap();
        wait_for_description(&server, &text).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    for client in clients {
        failures.extend(client.await.unwrap());
    }
    assert!(
        failures.is_empty(),
        "{} failures, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(
        requests.load(Ordering::Relaxed) > 300,
        "the clients barely ran"
    );
}

#[tokio::test]
async fn template_edits_are_live_too() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let templates = dir.path().join("templates");
    fs::create_dir(&templates).unwrap();
    let server = TestServer::start_with_templates(content, templates.clone()).await;
    let before = server.get("/style.css", &[]).await.text();
    assert!(before.contains("--accent"));
    fs::write(
        templates.join("style.css"),
        "body { color: rebeccapurple; }\n",
    )
    .unwrap();
    eventually(10, "the new stylesheet", || async {
        (server.get("/style.css", &[]).await.text() == "body { color: rebeccapurple; }\n")
            .then_some(())
    })
    .await;
    // A broken template is an error in health; the last good version keeps serving.
    fs::write(templates.join("page.html"), "{% block main %}{{ unclosed ").unwrap();
    let health = eventually(10, "the template error", || async {
        let health = server.get("/api/health", &[]).await.json();
        (health["content"]["status"] == "error").then_some(health)
    })
    .await;
    // Located like a content error: the template file and its line.
    let error = &health["content"]["errors"][0];
    assert_eq!(
        error["file"].as_str().unwrap(),
        templates.join("page.html").to_str().unwrap(),
        "{health}"
    );
    assert_eq!(error["line"], 1, "{health}");
    assert_eq!(error["field"], "-", "{health}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("syntax error"),
        "{health}"
    );
    assert_eq!(server.get("/careers", &[]).await.status, StatusCode::OK);
    server.stop().await;
}
