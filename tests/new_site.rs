//! A company's own site, from nothing: `dossier init` outside the repository, then `check`,
//! `build` and `serve` run in it with no flags; `dossier.toml`'s precedence; broken links.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn dossier_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dossier"));
    command.current_dir(dir).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn init(parent: &Path) -> std::path::PathBuf {
    let site = parent.join("acme");
    let output = dossier_in(
        parent,
        &[
            "init",
            "acme",
            "--name",
            "Acme Tools",
            "--base-url",
            "https://info.acme.example",
        ],
        &[],
    );
    assert!(output.status.success(), "{}", text(&output));
    site
}

fn openapi_server(build: &Path) -> String {
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(build.join("openapi.json")).unwrap()).unwrap();
    document["servers"][0]["url"].as_str().unwrap().to_string()
}

#[test]
fn init_then_check_build_and_serve_with_no_flags() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    for file in [
        "dossier.toml",
        ".gitignore",
        "README.md",
        "content/company.json",
        "content/divisions/products.json",
        "content/pages/about.md",
        "schemas/company.schema.json",
    ] {
        assert!(site.join(file).is_file(), "{file}");
    }
    let company = std::fs::read_to_string(site.join("content/company.json")).unwrap();
    assert!(company.contains("\"$schema\": \"../schemas/company.schema.json\""));

    let output = dossier_in(&site, &["check"], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout)
        .starts_with("ok: 1 divisions, 1 pages, 3 links checked"));

    let output = dossier_in(&site, &["build"], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        openapi_server(&site.join("build")),
        "https://info.acme.example"
    );
    assert!(site.join(".dossier-state/keys.json").is_file());

    // `serve` with no flags: the listening address comes from dossier.toml too.
    let mut toml = std::fs::read_to_string(site.join("dossier.toml")).unwrap();
    toml.push_str("addr = \"127.0.0.1:0\"\nno-watch = true\n");
    std::fs::write(site.join("dossier.toml"), toml).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dossier"))
        .current_dir(&site)
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("dossier listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_string();
    let fetch = |path: &str| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(crate::common::HttpClient::default().send(
            hyper::Method::GET,
            &format!("{base}{path}"),
            &[],
            bytes::Bytes::new(),
        ))
    };
    let company = fetch("/api/company");
    assert_eq!(company.status, 200);
    assert_eq!(company.json()["company"]["name"], "Acme Tools");
    let about = fetch("/about");
    assert_eq!(about.status, 200);
    assert!(
        about.text().contains("<h2 id=\"links\">"),
        "headings carry their anchors"
    );
    let catalog = fetch("/.well-known/api-catalog");
    assert!(catalog
        .text()
        .contains("https://info.acme.example/openapi.json"));
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    let build = site.join("build");
    let env = [("DOSSIER_BASE_URL", "https://env.acme.example")];
    /// Arguments, environment, and the base URL the build must name.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [
        (&["build"], &[], "https://info.acme.example"),
        (&["build"], &env, "https://env.acme.example"),
        (
            &["build", "--base-url", "https://flag.acme.example"],
            &env,
            "https://flag.acme.example",
        ),
    ];
    for (args, env, expected) in cases {
        let output = dossier_in(&site, args, env);
        assert!(output.status.success(), "{}", text(&output));
        assert_eq!(openapi_server(&build), expected, "{args:?} {env:?}");
    }
    // --config from elsewhere: relative paths in the file are the file's.
    let output = dossier_in(
        parent.path(),
        &["--config", "acme/dossier.toml", "check"],
        &[],
    );
    assert!(output.status.success(), "{}", text(&output));
    let output = dossier_in(
        parent.path(),
        &["check", "--config", "acme/dossier.toml"],
        &[],
    );
    assert!(output.status.success(), "{}", text(&output));
}

#[test]
fn a_mistake_in_dossier_toml_names_its_line_and_the_nearest_key() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    let mut toml = std::fs::read_to_string(site.join("dossier.toml")).unwrap();
    let line = toml.lines().count() + 1;
    toml.push_str("basse-url = \"https://x.example\"\n");
    std::fs::write(site.join("dossier.toml"), toml).unwrap();
    let output = dossier_in(&site, &["build"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        format!("error: dossier.toml:{line}: unknown key `basse-url`; did you mean `base-url`? (the keys are the long flags; see docs/cli.md)")
    );
    assert!(!site.join("build").exists());
}

#[test]
fn init_refuses_a_directory_that_is_not_empty_without_force() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    let output = dossier_in(parent.path(), &["init", "acme", "--name", "Other"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not empty"));
    let output = dossier_in(
        parent.path(),
        &["init", "acme", "--name", "Other", "--force", "--templates"],
        &[],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert!(site.join("templates/base.html").is_file());
    let output = dossier_in(&site, &["check"], &[]);
    assert!(output.status.success(), "{}", text(&output));
}

#[test]
fn a_broken_internal_link_is_an_error_in_check_and_a_warning_in_build() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    let page = site.join("content/pages/about.md");
    let mut markdown = std::fs::read_to_string(&page).unwrap();
    markdown.push_str("\nSee [the team](/abut#team) and [x](/no-such-page).\n");
    let line = markdown.lines().count();
    std::fs::write(&page, markdown).unwrap();
    let output = dossier_in(&site, &["check"], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("content/pages/about.md:{line}: link: /abut#team: nothing is served at this path; did you mean /about?")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "content/pages/about.md:{line}: link: /no-such-page: nothing is served at this path\n"
        )),
        "{stderr}"
    );
    let output = dossier_in(&site, &["build"], &[]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains(&format!(
        "warning: content/pages/about.md:{line}: link: /no-such-page"
    )));
}

#[test]
fn check_external_fetches_the_pages_links_only_when_asked() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    // A real server for the external links: one file there, one path missing, and a port
    // where nothing listens.
    let files = parent.path().join("files");
    std::fs::create_dir(&files).unwrap();
    std::fs::write(files.join("ok.txt"), "ok").unwrap();
    let port = crate::common::free_port();
    let server = crate::common::StaticHost::start(&files, port, true);
    let closed = crate::common::free_port();
    let page = site.join("content/pages/about.md");
    let mut markdown = std::fs::read_to_string(&page).unwrap();
    markdown.push_str(&format!(
        "\nSee [ok](http://127.0.0.1:{port}/ok.txt#top), [missing](http://127.0.0.1:{port}/missing)\nand [closed](http://127.0.0.1:{closed}/) and [ok again](http://127.0.0.1:{port}/ok.txt).\n"
    ));
    let line = markdown.lines().count() - 1;
    std::fs::write(&page, markdown).unwrap();

    let output = dossier_in(&site, &["check"], &[]);
    assert!(
        output.status.success(),
        "not fetched by default: {}",
        text(&output)
    );

    let output = dossier_in(&site, &["check", "--external"], &[]);
    drop(server);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("external: 3 URLs fetched: 1 ok, 0 redirected, 2 failed"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "content/pages/about.md:{line}: external link: http://127.0.0.1:{port}/missing: 404 Not Found\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "content/pages/about.md:{}: external link: http://127.0.0.1:{closed}/: could not connect",
            line + 1
        )),
        "{stderr}"
    );
    assert!(stderr.contains("error: 2 broken links"), "{stderr}");
}

#[test]
fn serve_warns_of_broken_links_at_startup_and_in_edited_pages() {
    let parent = tempfile::tempdir().unwrap();
    let site = init(parent.path());
    let page = site.join("content/pages/about.md");
    let mut markdown = std::fs::read_to_string(&page).unwrap();
    markdown.push_str("\n[gone](/gone)\n");
    let line = markdown.lines().count();
    std::fs::write(&page, &markdown).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dossier"))
        .current_dir(&site)
        .args(["serve", "--addr", "127.0.0.1:0", "--access-log", "off"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    // Lines read past while waiting for another: the startup link report runs on a thread
    // of its own, so it may come before or after "watching for changes".
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    let wait_for = |wanted: &str| {
        let earlier = seen.borrow().iter().position(|line| line.contains(wanted));
        if let Some(at) = earlier {
            return seen.borrow_mut().remove(at);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match received.recv_timeout(left) {
                Ok(line) if line.contains(wanted) => return line,
                Ok(line) => seen.borrow_mut().push(line),
                Err(_) => panic!("no log line with {wanted:?}"),
            }
        }
    };
    let warning = wait_for("link: /gone");
    assert!(warning.contains("WARN"), "{warning}");
    assert!(
        warning.contains(&format!(
            "content/pages/about.md:{line}: link: /gone: nothing is served at this path"
        )),
        "{warning}"
    );
    wait_for("watching for changes");
    markdown.push_str("[also gone](/also-gone)\n");
    std::fs::write(&page, &markdown).unwrap();
    let warning = wait_for("link: /also-gone");
    assert!(
        warning.contains(&format!(
            "content/pages/about.md:{}: link: /also-gone",
            line + 1
        )),
        "{warning}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
