//! `dossier check`: everything `dossier build` validates, and every internal link in the
//! pages, without writing anything (not even keys: the JWKS it compiles is left empty).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::config::Compression;
use crate::live;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The content directory to check.
    #[arg(long, env = "DOSSIER_CONTENT", default_value = "content")]
    pub content: PathBuf,
    /// The public origin the documents name (checked like `build` checks it).
    #[arg(
        long,
        env = "DOSSIER_BASE_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub base_url: String,
    /// Files here override the built-in templates; they must render.
    #[arg(long, env = "DOSSIER_TEMPLATES", default_value = "templates")]
    pub templates: PathBuf,
}

pub fn check(args: &CheckArgs) -> ExitCode {
    let config = match super::configure(&args.base_url, &args.templates, Compression::Deferred) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let (set, site) = match live::compile_content(&args.content, &config, &[]) {
        Ok(compiled) => compiled,
        Err(error) => {
            super::report_load_error(&error);
            return ExitCode::FAILURE;
        }
    };
    let broken = crate::links::report(&site, &set, &args.content);
    for line in &broken {
        eprintln!("{line}");
    }
    let links: usize = site
        .pages
        .iter()
        .map(|page| crate::links::count(&page.body_markdown))
        .sum();
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
            "error: {} broken internal link{}",
            broken.len(),
            if broken.len() == 1 { "" } else { "s" }
        );
        ExitCode::FAILURE
    }
}
