//! The site for people and agents, and the build/ that deploys to a CDN: pages and their
//! Markdown twins, the agent-facing files, internal links, the generated `_headers`,
//! `_redirects` and `_routes.json`, parity with the running core, and `--dynamic-only`.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{HttpClient, Reply, ServerProcess, TestServer};
use hyper::{Method, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};

const BASE: &str = common::BUILD_BASE;
const ORIGIN: &str = "https://core.cobaltridge.example";

fn build(content: &Path, out: &Path, state: &Path, origin: Option<&str>) {
    let output = common::run_build(content, out, state, origin);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn manifest(out: &Path) -> Value {
    serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

/// Every `href="…"` and `src="…"` in an HTML document.
fn html_links(html: &str) -> Vec<String> {
    let mut links = Vec::new();
    for attribute in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(start) = rest.find(attribute) {
            rest = &rest[start + attribute.len()..];
            if let Some(end) = rest.find('"') {
                links.push(rest[..end].replace("&amp;", "&"));
                rest = &rest[end..];
            }
        }
    }
    links
}

#[tokio::test]
async fn pages_for_people() {
    let server = TestServer::start().await;
    let index = server
        .get(
            "/",
            &[("accept", "text/html,application/xhtml+xml,*/*;q=0.8")],
        )
        .await;
    assert_eq!(index.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(index.header("vary"), "Accept, Accept-Encoding");
    let html = index.text();
    assert!(html.contains("<h1>Cobalt Ridge Instruments</h1>"));
    assert!(html.contains("href=\"/divisions/field-sensors\""));
    assert!(html.contains("href=\"/careers\""));
    assert!(!html.contains("<script src"), "no JavaScript is needed");
    let start = html.find("<script type=\"application/ld+json\">").unwrap();
    let json_ld = &html[start..];
    let json_ld = &json_ld[json_ld.find('>').unwrap() + 1..json_ld.find("</script>").unwrap()];
    let organization: Value = serde_json::from_str(json_ld).unwrap();
    assert_eq!(organization["@type"], "Organization");
    assert_eq!(organization["name"], "Cobalt Ridge Instruments");
    assert_eq!(organization["address"]["addressCountry"], "US");
    assert_eq!(organization["department"].as_array().unwrap().len(), 5);

    let division = server.get("/divisions/calibration-labs", &[]).await.text();
    assert!(division.contains("<h1>Calibration &amp; Research Labs</h1>"));
    assert!(division.contains("href=\"/quality-and-accreditation\""));
    assert!(
        !division.contains("href=\"/careers\""),
        "only the division's own pages are listed"
    );

    let page = server.get("/careers", &[]).await.text();
    assert!(page.contains("<h1 id=\"careers\">Careers</h1>"));
    assert!(page.contains("<li>Firmware engineer, low-power embedded (Longmont)</li>"));
    assert!(page.contains("mailto:careers@cobaltridge.example"));

    let docs = server.get("/docs", &[]).await.text().replace("&#x2f;", "/");
    let openapi = server.get("/openapi.json", &[]).await.json();
    for path in openapi["paths"].as_object().unwrap().keys() {
        assert!(
            docs.contains(&format!("<code>{}</code>", path.replace('&', "&amp;"))),
            "{path} missing from /docs"
        );
    }
    assert!(
        docs.contains("claim_not_supported"),
        "the agent flow from auth.md is on /docs"
    );
    // The auth.md address in the text is a link.
    let auth_md = server.url("/auth.md");
    assert!(
        docs.contains(&format!("<a href=\"{auth_md}\">{auth_md}</a>")),
        "{auth_md} is not a link on /docs"
    );
    // Places read the same way everywhere; an address in its country's order; lists of
    // places one per line; long emails break between their parts, never inside a word.
    assert!(html.contains("<dd>Boulder, Colorado, United States</dd>"));
    assert!(!html.contains("Boulder, US"));
    assert!(html.contains("Boulder, Colorado 80302<br>United States"));
    assert!(html.contains("hello<wbr>@cobaltridge.<wbr>example"));
    let sensors = server.get("/divisions/field-sensors", &[]).await.text();
    assert!(
        sensors.contains("<li>Longmont, Colorado</li><li>Tampere, Finland</li>"),
        "{sensors}"
    );
    let sensors_md = server.get("/divisions/field-sensors.md", &[]).await.text();
    assert!(sensors_md.contains("- Locations:\n  - Longmont, Colorado\n  - Tampere, Finland\n"));
    let css = server.get("/style.css", &[]).await;
    assert_eq!(css.header("content-type"), "text/css; charset=utf-8");
    server.stop().await;
}

#[tokio::test]
async fn markdown_is_negotiated_and_served_directly() {
    let server = TestServer::start().await;
    let twin = server.get("/index.md", &[]).await;
    assert_eq!(twin.header("content-type"), "text/markdown; charset=utf-8");
    assert!(twin.text().starts_with("# Cobalt Ridge Instruments\n"));
    for accept in [
        "text/markdown",
        "text/markdown, text/html",
        "text/html;q=0.5, text/markdown",
    ] {
        let reply = server.get("/", &[("accept", accept)]).await;
        assert_eq!(
            reply.header("content-type"),
            "text/markdown; charset=utf-8",
            "{accept}"
        );
        assert_eq!(reply.body, twin.body, "{accept}");
        assert_eq!(reply.header("vary"), "Accept, Accept-Encoding");
    }
    for accept in [
        "text/html",
        "*/*",
        "text/html, text/markdown;q=0.5",
        "text/markdown;q=0",
    ] {
        let reply = server.get("/", &[("accept", accept)]).await;
        assert_eq!(
            reply.header("content-type"),
            "text/html; charset=utf-8",
            "{accept}"
        );
    }
    let page = server.get("/about", &[("accept", "text/markdown")]).await;
    assert!(page.text().starts_with("# About Cobalt Ridge"));
    let division = server.get("/divisions/field-sensors.md", &[]).await.text();
    assert!(division.starts_with("# Field Sensors\n"));
    // The two representations have their own validators.
    let html = server.get("/about", &[]).await;
    assert_ne!(html.header("etag"), page.header("etag"));
    let revalidated = server
        .get(
            "/about",
            &[
                ("accept", "text/markdown"),
                ("if-none-match", page.header("etag")),
            ],
        )
        .await;
    assert_eq!(revalidated.status, StatusCode::NOT_MODIFIED);
    server.stop().await;
}

#[tokio::test]
async fn files_for_agents_and_crawlers() {
    let server = TestServer::start().await;
    let base = server.base.clone();
    let llms = server.get("/llms.txt", &[]).await;
    assert_eq!(llms.header("content-type"), "text/plain; charset=utf-8");
    let llms = llms.text();
    assert!(llms.starts_with("# Cobalt Ridge Instruments\n\n> "));
    let mut linked = 0;
    for line in llms.lines().filter(|l| l.starts_with("- [")) {
        let url = &line[line.find("](").unwrap() + 2..line.find(')').unwrap()];
        let path = url.strip_prefix(&base).unwrap();
        assert_eq!(server.get(path, &[]).await.status, StatusCode::OK, "{url}");
        linked += 1;
    }
    assert!(linked >= 16);

    let robots = server.get("/robots.txt", &[]).await.text();
    for needle in [
        "User-agent: GPTBot",
        "User-agent: ClaudeBot",
        "User-agent: Google-Extended",
        "User-agent: *",
        "Content-Signal: search=yes",
    ] {
        assert!(robots.contains(needle), "{needle}");
    }
    assert!(robots.contains(&format!("Sitemap: {base}/sitemap.xml")));
    assert!(robots.contains(&format!("Agentmap: {base}/.well-known/ai-catalog.json")));
    // Groups do not inherit: every group carries the signal itself.
    let groups: Vec<&str> = robots
        .split("\n\n")
        .filter(|group| group.contains("User-agent:"))
        .collect();
    assert!(groups.len() > 3, "{robots}");
    for group in groups {
        assert!(group.contains("\nContent-Signal: search=yes"), "{group}");
    }

    let sitemap = server.get("/sitemap.xml", &[]).await;
    assert_eq!(sitemap.header("content-type"), "application/xml");
    let sitemap = sitemap.text();
    let locations: Vec<&str> = sitemap
        .split("<loc>")
        .skip(1)
        .map(|s| &s[..s.find("</loc>").unwrap()])
        .collect();
    assert_eq!(locations.len(), 2 + 5 + 8);
    for location in locations {
        let reply = server.get(location.strip_prefix(&base).unwrap(), &[]).await;
        assert_eq!(
            reply.header("content-type"),
            "text/html; charset=utf-8",
            "{location}"
        );
    }

    let card = server
        .get("/.well-known/mcp/server-card.json", &[])
        .await
        .json();
    assert_eq!(card["serverInfo"]["name"], "dossier");
    assert_eq!(card["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(card["transport"]["endpoint"], format!("{base}/mcp"));
    assert!(card["capabilities"]["tools"].is_object());

    let skills = server
        .get("/.well-known/agent-skills/index.json", &[])
        .await
        .json();
    assert_eq!(
        skills["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    let skill = &skills["skills"][0];
    assert_eq!(skill["type"], "skill-md");
    let url = skill["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{base}/.well-known/agent-skills/")));
    let skill_md = server
        .get(url.strip_prefix(base.as_str()).unwrap(), &[])
        .await
        .body;
    let digest: String = Sha256::digest(&skill_md)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(skill["digest"], format!("sha256:{digest}"));
    server.stop().await;
}

#[test]
fn no_internal_link_in_the_built_site_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("build");
    build(
        &common::sample_content(),
        &out,
        &dir.path().join("state"),
        None,
    );
    let manifest = manifest(&out);
    let paths: Vec<&str> = manifest["artifacts"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut checked = 0;
    for entry in walkdir::WalkDir::new(&out) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy();
        if !(name.ends_with(".html") || name.ends_with(".md") || name.ends_with(".txt")) {
            continue;
        }
        let text = fs::read_to_string(entry.path()).unwrap();
        let mut links = html_links(&text);
        // Markdown and llms.txt links: (https://BASE/...)
        for part in text.split(&format!("({BASE}")).skip(1) {
            links.push(part[..part.find(')').unwrap()].to_string());
        }
        for link in links {
            let Some(path) = link
                .strip_prefix(BASE)
                .or(Some(link.as_str()))
                .filter(|l| l.starts_with('/') && !l.starts_with("//"))
            else {
                continue;
            };
            let path = path.split(['#', '?']).next().unwrap();
            let path = if path.is_empty() { "/" } else { path };
            assert!(
                paths.contains(&path),
                "{} links to {link}, which is not in the build",
                entry.path().display()
            );
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} links checked");
}

/// `_headers` rules: (pattern, headers).
fn header_rules(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut rules: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in text.lines() {
        if let Some(header) = line.strip_prefix("  ") {
            let (name, value) = header
                .split_once(": ")
                .unwrap_or_else(|| panic!("bad header line {line:?}"));
            rules
                .last_mut()
                .expect("header before any rule")
                .1
                .push((name.to_string(), value.to_string()));
        } else if !line.is_empty() {
            assert!(
                line.starts_with('/'),
                "rule lines are URL patterns: {line:?}"
            );
            rules.push((line.to_string(), Vec::new()));
        }
    }
    rules
}

fn pattern_matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        Some((prefix, suffix)) => {
            path.starts_with(prefix)
                && path.ends_with(suffix)
                && path.len() >= prefix.len() + suffix.len()
        }
        None => pattern == path,
    }
}

#[test]
fn cdn_files_follow_their_documented_syntax_and_limits_at_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    for i in 0..300 {
        fs::write(
            content.join(format!("pages/extra-{i}.md")),
            format!("+++\ntitle = \"Extra {i}\"\nsummary = \"An extra page.\"\n+++\nText {i}.\n"),
        )
        .unwrap();
    }
    let out = dir.path().join("build");
    build(&content, &out, &dir.path().join("state"), Some(ORIGIN));

    // llms.txt stays readable: divisions link their own, and the page list is capped.
    let llms = fs::read_to_string(out.join("llms.txt")).unwrap();
    assert!(llms.contains("## Pages by division"), "{llms}");
    assert!(llms.contains("/divisions/field-sensors/llms.txt"), "{llms}");
    assert!(!llms.contains("/extra-299.md"), "{llms}");
    assert!(llms.contains("more pages belong to no division"), "{llms}");
    assert!(llms.len() < 40_000, "{} bytes", llms.len());

    let headers = fs::read_to_string(out.join("_headers")).unwrap();
    let rules = header_rules(&headers);
    assert!(rules.len() <= 100, "{} _headers rules", rules.len());
    assert!(headers.lines().all(|l| l.len() <= 2000));
    for (pattern, headers) in &rules {
        assert!(pattern.matches('*').count() <= 1, "{pattern}");
        for (name, _) in headers {
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{name}"
            );
        }
    }

    let redirects = fs::read_to_string(out.join("_redirects")).unwrap();
    let (mut fixed, mut dynamic) = (0, 0);
    for line in redirects
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        assert!(line.len() <= 2000);
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 3, "{line}");
        assert!(fields[0].starts_with('/'), "{line}");
        assert!(
            fields[1].starts_with('/') || fields[1].starts_with(ORIGIN),
            "{line}"
        );
        assert!(
            ["200", "200!", "301", "302", "303", "307", "308"].contains(&fields[2]),
            "{line}"
        );
        if line.contains('*') || line.contains(':') && fields[0].contains(':') {
            dynamic += 1;
        } else {
            fixed += 1;
        }
    }
    assert!(fixed <= 2000 && dynamic <= 100);
    for proxied in ["/agent/*", "/oauth2/*", "/api/*", "/mcp ", "/ask "] {
        assert!(redirects.contains(proxied), "{proxied} is not proxied");
    }
    assert!(redirects.contains("/.well-known/oauth-protected-resource  /.well-known/oauth-protected-resource/index.json  200"));

    let routes: Value =
        serde_json::from_slice(&fs::read(out.join("_routes.json")).unwrap()).unwrap();
    assert_eq!(routes["version"], 1);
    let include = routes["include"].as_array().unwrap();
    assert!(include.len() + routes["exclude"].as_array().unwrap().len() <= 100);
    assert!(include.iter().all(|r| r.as_str().unwrap().starts_with('/')));
    assert!(include.contains(&"/ask".into()), "{include:?}");
    assert!(
        include.contains(&"/mcp".into())
            && include.contains(&"/.well-known/oauth-protected-resource".into())
    );
}

#[tokio::test]
async fn the_core_serves_every_built_file_byte_for_byte_with_the_declared_headers() {
    let dir = tempfile::tempdir().unwrap();
    let (out, state) = (dir.path().join("build"), dir.path().join("state"));
    build(&common::sample_content(), &out, &state, Some(ORIGIN));
    let server = ServerProcess::start(&[
        "--from",
        out.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--no-watch",
    ]);
    let client = HttpClient::default();
    let rules = header_rules(&fs::read_to_string(out.join("_headers")).unwrap());
    let manifest = manifest(&out);
    let artifacts = manifest["artifacts"].as_object().unwrap();
    assert!(artifacts.len() > 40);
    for (path, entry) in artifacts {
        let reply: Reply = client.send(Method::GET, &server.url(path), &[], "").await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        let file = fs::read(out.join(entry["file"].as_str().unwrap())).unwrap();
        assert_eq!(reply.body, file, "{path} differs from {}", entry["file"]);
        let mut declared: BTreeMap<String, String> = BTreeMap::new();
        for (pattern, headers) in &rules {
            if pattern_matches(pattern, path) {
                for (name, value) in headers {
                    declared.insert(name.to_ascii_lowercase(), value.clone());
                }
            }
        }
        // What a static host infers from the file name, when no rule says otherwise.
        if !declared.contains_key("content-type") {
            let file = entry["file"].as_str().unwrap();
            let inferred = match file.rsplit('.').next().unwrap() {
                "html" => "text/html; charset=utf-8",
                "json" => "application/json",
                "css" => "text/css; charset=utf-8",
                "txt" => "text/plain; charset=utf-8",
                "xml" => "application/xml",
                other => panic!("{path}: no Content-Type rule and no known extension ({other})"),
            };
            declared.insert("content-type".into(), inferred.into());
        }
        for (name, value) in declared {
            assert_eq!(
                reply.headers.get(&name).map(|v| v.to_str().unwrap()),
                Some(value.as_str()),
                "{path}: {name}"
            );
        }
    }
}

#[tokio::test]
async fn dynamic_only_serves_the_core_and_nothing_else() {
    let server = TestServer::start_dynamic_only().await;
    for path in [
        "/",
        "/openapi.json",
        "/auth.md",
        "/.well-known/oauth-authorization-server",
        "/.well-known/jwks.json",
        "/careers",
        "/llms.txt",
        "/style.css",
    ] {
        let reply = server.get(path, &[]).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(server.get("/api/company", &[]).await.status, StatusCode::OK);
    assert_eq!(server.get("/api/health", &[]).await.status, StatusCode::OK);
    assert_eq!(
        server
            .get("/api/company", &[("authorization", "Bearer bad")])
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        server.get("/oauth2/authorize", &[]).await.status,
        StatusCode::BAD_REQUEST
    );
    let registration = server
        .send(
            Method::POST,
            "/agent/identity",
            &[("content-type", "application/json")],
            r#"{"type":"anonymous"}"#,
        )
        .await;
    assert_eq!(registration.status, StatusCode::OK);
    let token = server
        .send(
            Method::POST,
            "/oauth2/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            "grant_type=client_credentials",
        )
        .await;
    assert_eq!(token.status, StatusCode::OK);
    let revoke = server
        .send(
            Method::POST,
            "/oauth2/revoke",
            &[("content-type", "application/x-www-form-urlencoded")],
            "token=x",
        )
        .await;
    assert_eq!(revoke.status, StatusCode::OK);
    let mcp = server
        .send(
            Method::POST,
            "/mcp",
            &[("content-type", "application/json")],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        )
        .await;
    assert_eq!(mcp.status, StatusCode::OK);
    server.stop().await;
}

#[test]
fn reserved_slugs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    fs::write(
        content.join("pages/docs.md"),
        "+++\ntitle = \"Docs\"\nsummary = \"s\"\n+++\nText\n",
    )
    .unwrap();
    let errors = dossier::content::load(&content).unwrap_err();
    assert!(
        errors.to_string().contains("slug: `docs` is reserved"),
        "{errors}"
    );
}

#[test]
fn deploy_s3_uploads_every_path_with_its_content_type() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("build");
    build(
        &common::sample_content(),
        &out,
        &dir.path().join("state"),
        None,
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/s3.py");
    let output = std::process::Command::new("python3")
        .args([
            script.to_str().unwrap(),
            out.to_str().unwrap(),
            "s3://bucket/site",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let commands = String::from_utf8(output.stdout).unwrap();
    let manifest = manifest(&out);
    assert_eq!(
        commands.lines().count(),
        manifest["artifacts"].as_object().unwrap().len()
    );
    assert!(commands.contains("s3://bucket/site/.well-known/api-catalog --content-type 'application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"'"), "{commands}");
    assert!(commands.contains(
        "s3://bucket/site/.well-known/oauth-protected-resource --content-type application/json"
    ));
    assert!(commands.contains(
        "s3://bucket/site/.well-known/oauth-protected-resource/mcp --content-type application/json"
    ));
    assert!(commands.contains("s3://bucket/site/careers --content-type 'text/html; charset=utf-8'"));
}

#[tokio::test]
async fn hostile_content_cannot_put_live_script_in_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let company_file = content.join("company.json");
    let company: Value = serde_json::from_slice(&fs::read(&company_file).unwrap()).unwrap();
    let mut company = company;
    company["description"] =
        Value::from("Desc <!--<script> text </script><script>alert(1)</script> & more");
    fs::write(&company_file, serde_json::to_vec_pretty(&company).unwrap()).unwrap();
    fs::write(
        content.join("pages/links.md"),
        "+++\ntitle = \"Links\"\nsummary = \"l\"\n+++\n[click](javascript:alert(1)) \
         [data](data:text/html,x) [ok](https://example.com) [ref][r]\n\n[r]: vbscript:x\n",
    )
    .unwrap();
    let server = TestServer::start_with(dossier::live::Source::Content(content)).await;

    let index = server.get("/", &[]).await;
    let html = index.text();
    let script = html
        .split("<script type=\"application/ld+json\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .unwrap();
    assert!(!script.contains('<') && !script.contains('>') && !script.contains('&'));
    let json_ld: Value = serde_json::from_str(script).unwrap();
    assert_eq!(
        json_ld["description"],
        "Desc <!--<script> text </script><script>alert(1)</script> & more"
    );
    // Every response, pages included, carries the browser security policy.
    let policy = index.header("content-security-policy");
    assert!(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"));
    // A page may fetch from its own origin (browser agents and audits read /robots.txt,
    // /llms.txt and the AI catalog from the page) and from nowhere else, and runs no script.
    let directive = |name: &str| {
        policy
            .split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix(name).map(str::trim).map(String::from))
    };
    assert_eq!(
        directive("connect-src ").as_deref(),
        Some("'self'"),
        "{policy}"
    );
    assert_eq!(directive("script-src "), None, "{policy}");
    assert_eq!(index.header("x-frame-options"), "DENY");
    assert_eq!(
        index.header("referrer-policy"),
        "strict-origin-when-cross-origin"
    );

    let page = server.get("/links", &[]).await.text();
    let links = html_links(&page);
    assert!(links.contains(&"https://example.com".to_string()));
    for link in links {
        let lower = link.to_ascii_lowercase();
        assert!(
            !lower.starts_with("javascript:")
                && !lower.starts_with("data:")
                && !lower.starts_with("vbscript:"),
            "{link}"
        );
    }
    assert!(page.contains("click") && page.contains("data"));
    server.stop().await;
}
