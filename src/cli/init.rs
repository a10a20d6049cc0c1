//! `dossier init [DIR]`: a new site that `dossier check` accepts as it is, for a company
//! to replace with its own facts.
//!
//! What it writes is the smallest site that shows every part (the company, one division,
//! one page linking to both), each content file naming the JSON Schema an editor checks it
//! against, plus `dossier.toml` so no command needs flags, a `.gitignore` for what is
//! generated or secret, and a README that says what to do next.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::compile::templates::DEFAULTS;
use crate::config::BaseUrl;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The directory to write the site into (created if missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// The company's name (asked for on a terminal when not given).
    #[arg(long)]
    pub name: Option<String>,
    /// The public origin the site will be served at, e.g. https://info.example.com (asked
    /// for on a terminal when not given; http://127.0.0.1:8080 otherwise).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Write into a directory that is not empty, replacing the files init writes.
    #[arg(long)]
    pub force: bool,
    /// Also copy the built-in templates into templates/, to restyle the pages.
    #[arg(long)]
    pub templates: bool,
}

const DEFAULT_URL: &str = "http://127.0.0.1:8080";

pub fn init(args: &InitArgs) -> ExitCode {
    match write_site(args) {
        Ok(written) => {
            for file in &written {
                println!("wrote {}", file.display());
            }
            let dir = args.dir.display();
            println!(
                "\nA new site in {dir}. Next:\n  cd {dir}\n  dossier check    # everything build checks, and every link\n  dossier serve    # then open http://127.0.0.1:8080"
            );
            ExitCode::SUCCESS
        }
        Err(InitError::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(InitError::Io(file, error)) => {
            eprintln!("error: {}: {error}", file.display());
            ExitCode::FAILURE
        }
    }
}

enum InitError {
    Usage(String),
    Io(PathBuf, std::io::Error),
}

/// One question on the terminal, with the answer given when the line is left empty.
fn ask(question: &str, default: &str) -> String {
    print!("{question} [{default}]: ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    let answer = line.trim();
    if answer.is_empty() {
        default.to_string()
    } else {
        answer.to_string()
    }
}

fn write_site(args: &InitArgs) -> Result<Vec<PathBuf>, InitError> {
    let dir = &args.dir;
    let occupied = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied && !args.force {
        return Err(InitError::Usage(format!(
            "{} is not empty; choose a new directory, or add --force to write into it",
            dir.display()
        )));
    }
    let interactive = std::io::stdin().is_terminal();
    let name = match (&args.name, interactive) {
        (Some(name), _) => name.clone(),
        (None, true) => ask("Company name", "Example Company"),
        (None, false) => "Example Company".to_string(),
    };
    let name = name.trim().to_string();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(InitError::Usage(
            "--name: a name of printable characters".into(),
        ));
    }
    let url = match (&args.base_url, interactive) {
        (Some(url), _) => url.clone(),
        (None, true) => ask("Public URL of the site", DEFAULT_URL),
        (None, false) => DEFAULT_URL.to_string(),
    };
    let base =
        BaseUrl::parse(&url).map_err(|error| InitError::Usage(format!("--base-url: {error}")))?;
    let host = base.host().to_string();
    let email_domain = if host.contains('.') && !host.starts_with("127.") {
        host.clone()
    } else {
        "example.com".to_string()
    };

    let mut files: Vec<(PathBuf, String)> = vec![
        (PathBuf::from("dossier.toml"), dossier_toml(base.as_str())),
        (PathBuf::from(".gitignore"), GITIGNORE.to_string()),
        (PathBuf::from("README.md"), readme(&name)),
        (
            PathBuf::from("content/company.json"),
            company_json(&name, &email_domain),
        ),
        (
            PathBuf::from("content/divisions/products.json"),
            division_json(&name),
        ),
        (PathBuf::from("content/pages/about.md"), about_page(&name)),
    ];
    for (file, schema) in crate::schema::content_schemas() {
        let text = serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n";
        files.push((Path::new("schemas").join(file), text));
    }
    if args.templates {
        for (file, text) in DEFAULTS {
            files.push((Path::new("templates").join(file), text.to_string()));
        }
    }
    let mut written = Vec::new();
    for (relative, text) in files {
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| InitError::Io(parent.into(), e))?;
        }
        std::fs::write(&path, text).map_err(|e| InitError::Io(path.clone(), e))?;
        written.push(path);
    }
    Ok(written)
}

/// A string as a JSON or TOML basic string literal (the two agree for what a name holds).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

fn dossier_toml(base_url: &str) -> String {
    format!(
        r#"# Settings of this site, read by every dossier command run in this directory.
# Each key is the long name of a flag (see `dossier help <command>` or docs/cli.md);
# a flag or a DOSSIER_* environment variable given at run time wins over this file.

# The public origin every document and link names.
base-url = {url}

content = "content"
templates = "templates"
# Signing keys and durable state: keep it, back it up, never publish it.
state = ".dossier-state"
out = "build"

# addr = "127.0.0.1:8080"          # where `dossier serve` listens
# origin-url = "https://core.example.com"   # the dynamic core, when build/ goes to a CDN
"#,
        url = quoted(base_url)
    )
}

const GITIGNORE: &str =
    "# Made by dossier: keys and state (secret), and the build output.\n.dossier-state/\nbuild/\n";

fn readme(name: &str) -> String {
    format!(
        r#"# {name}: company information for AI agents

This directory is a dossier site: the facts and pages an AI agent (or a person) can read
about the company, served as pages, Markdown, a JSON API and an MCP server.

- `content/company.json`: the company; `content/divisions/*.json`: its divisions;
  `content/pages/*.md`: pages (TOML front matter between `+++` lines, then Markdown).
- `schemas/`: JSON Schemas of those files, for your editor (`dossier schema` rewrites them).
- `dossier.toml`: the settings every command reads here.

Commands, run in this directory:

    dossier check     # validate the content and every internal link; writes nothing
    dossier serve     # serve it at http://127.0.0.1:8080, reloading on every save
    dossier build     # write build/ for a static host or CDN

To deploy, set `base-url` in `dossier.toml` to the public address, run `dossier build`,
upload `build/`, and run `dossier serve --dynamic-only` where the CDN can reach it (see
dossier's docs/deploy.md). Keep `.dossier-state/` safe: it holds the signing keys.
"#
    )
}

fn company_json(name: &str, email_domain: &str) -> String {
    let company = serde_json::json!({
        "$schema": "../schemas/company.schema.json",
        "name": name,
        "description": format!("{name} makes things people rely on. Replace this with two or three sentences on what the company does, for whom, and where."),
        "founded": {"year": 2020},
        "headquarters": {
            "street": "1 Example Street",
            "locality": "Springfield",
            "postal_code": "00000",
            "country": "US"
        },
        "contact": {"email": format!("hello@{email_domain}")}
    });
    serde_json::to_string_pretty(&company).unwrap_or_default() + "\n"
}

fn division_json(name: &str) -> String {
    let division = serde_json::json!({
        "$schema": "../../schemas/division.schema.json",
        "id": "products",
        "name": "Products",
        "summary": format!("What {name} makes and sells."),
        "description": "Replace this with what the division does. Add a file like this one for each division; its id is its file name and its URL (/divisions/products)."
    });
    serde_json::to_string_pretty(&division).unwrap_or_default() + "\n"
}

fn about_page(name: &str) -> String {
    format!(
        r#"+++
#:schema ../../schemas/page.schema.json
title = {title}
summary = {summary}
division = "products"
+++

# About {name}

Write the page here in Markdown. Each page is served at `/<file name>` for people, as
Markdown for agents, and in the API at `/api/pages/<file name>`.

## Links

Links to other pages, to [the products division](/divisions/products) or to
[the API documentation](/docs) are checked by `dossier check`, and so are anchors such as
[this section](#links).
"#,
        title = quoted(&format!("About {name}")),
        summary = quoted(&format!("Who {name} is, in a page.")),
    )
}
