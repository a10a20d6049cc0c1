//! `dossier check`: everything `dossier build` validates, and every internal link in the
//! pages, without writing anything (not even keys: the JWKS it compiles is left empty).
//! With `--external`, the pages' `http` and `https` links are fetched too — never by
//! default, since other sites' answers change without the content changing.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use futures_util::stream::{self, StreamExt};
use hyper::{Method, StatusCode};

use super::SiteArgs;
use crate::config::Compression;
use crate::content::Site;
use crate::doctor::http::{Client, HttpError, Limits};
use crate::links::{self, ExternalLink, LineMessage};
use crate::live;

/// External links fetched at once.
const CONCURRENT_FETCHES: usize = 4;
/// External URLs fetched in one run; a site with more is told so.
const MAX_EXTERNAL_URLS: usize = 500;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub site: SiteArgs,
    /// Also fetch every http and https link of the pages (4 at a time, 10 s each; a HEAD,
    /// then a GET where HEAD is refused) and report those that fail.
    #[arg(long)]
    pub external: bool,
}

pub fn check(args: &CheckArgs) -> ExitCode {
    let site_args = &args.site;
    let config = match super::configure(
        &site_args.base_url,
        &site_args.templates,
        Compression::Deferred,
    ) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let (set, site) = match live::compile_content(&site_args.content, &config, &[]) {
        Ok(compiled) => compiled,
        Err(error) => {
            super::report_load_error(&error);
            return ExitCode::FAILURE;
        }
    };
    let mut broken = links::report(&site, &set, &site_args.content);
    let links: usize = site
        .pages
        .iter()
        .map(|page| links::count(&page.body_markdown.get()))
        .sum();
    let mut external_summary = String::new();
    if args.external {
        match external(&site) {
            Ok((failed, summary)) => {
                broken.extend(links::locate(&site, &site_args.content, failed));
                external_summary = summary;
            }
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    for line in &broken {
        eprintln!("{line}");
    }
    if !external_summary.is_empty() {
        println!("{external_summary}");
    }
    if broken.is_empty() {
        println!(
            "ok: {} divisions, {} pages, {} links checked; {} documents would be built",
            site.divisions.len(),
            site.pages.len(),
            links,
            set.len()
        );
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "error: {} broken link{}",
            broken.len(),
            if broken.len() == 1 { "" } else { "s" }
        );
        ExitCode::FAILURE
    }
}

/// How one external URL answered.
enum Outcome {
    Ok,
    Redirected(StatusCode, String),
    Failed(String),
}

/// Fetches each distinct external URL once; a failure message for every link to a failing
/// URL, and a one-line summary.
fn external(site: &Site) -> Result<(Vec<LineMessage>, String), HttpError> {
    let found = links::external_links(site);
    let mut urls: Vec<&str> = found.iter().map(|link| link.url.as_str()).collect();
    urls.sort_unstable();
    urls.dedup();
    let skipped = urls.len().saturating_sub(MAX_EXTERNAL_URLS);
    urls.truncate(MAX_EXTERNAL_URLS);
    let client = Client::new(Limits {
        requests: urls.len() * 2,
        run: Duration::from_secs(600),
        ..Limits::default()
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| HttpError::Protocol(error.to_string()))?;
    let outcomes: Vec<(&str, Outcome)> = runtime.block_on(
        stream::iter(urls.iter().map(|url| {
            let client = client.clone();
            async move { (*url, fetch(&client, url).await) }
        }))
        .buffer_unordered(CONCURRENT_FETCHES)
        .collect(),
    );
    let mut failures = Vec::new();
    let (mut ok, mut redirected) = (0, 0);
    for (url, outcome) in &outcomes {
        match outcome {
            Outcome::Ok => ok += 1,
            Outcome::Redirected(..) => redirected += 1,
            Outcome::Failed(reason) => {
                for link in found.iter().filter(|link: &&ExternalLink| link.url == *url) {
                    failures.push(LineMessage {
                        page: link.page,
                        body_line: link.body_line,
                        message: format!("external link: {url}: {reason}"),
                    });
                }
            }
        }
    }
    let mut summary = format!(
        "external: {} URLs fetched: {ok} ok, {redirected} redirected, {} failed",
        outcomes.len(),
        outcomes.len() - ok - redirected
    );
    for (url, outcome) in &outcomes {
        if let Outcome::Redirected(status, location) = outcome {
            summary.push_str(&format!("\n  {url}: {status} to {location}"));
        }
    }
    if skipped > 0 {
        summary.push_str(&format!(
            "\n  {skipped} more URLs not fetched (at most {MAX_EXTERNAL_URLS} a run)"
        ));
    }
    Ok((failures, summary))
}

/// A HEAD, then a GET when the server does not take HEAD. Redirects are not followed: they
/// are listed, as the link may be worth updating, but do not fail.
async fn fetch(client: &Client, url: &str) -> Outcome {
    let mut answer = client.status(Method::HEAD, url).await;
    if let Ok(response) = &answer {
        if matches!(
            response.status,
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED | StatusCode::FORBIDDEN
        ) {
            answer = client.status(Method::GET, url).await;
        }
    }
    match answer {
        Ok(response) if response.status.is_success() => Outcome::Ok,
        Ok(response) if response.status.is_redirection() => {
            Outcome::Redirected(response.status, response.header("location"))
        }
        Ok(response) => Outcome::Failed(response.status.to_string()),
        Err(error) => Outcome::Failed(error.to_string()),
    }
}
