//! `dossier doctor URL`: runs [`crate::doctor`] against a deployment and prints what it found.
//! Exit status 0 when nothing failed (warnings allowed), 1 when something did, 2 when the
//! URL is not an origin.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::doctor::{self, http::Limits, Target};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The deployment's public origin, as agents reach it (https://info.example.com).
    pub url: String,
    /// Print the findings as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for each answer (1 to 600).
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,
}

pub async fn doctor(args: &DoctorArgs) -> ExitCode {
    let target = match Target::parse(&args.url) {
        Ok(target) => target,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let limits = Limits {
        answer: Duration::from_secs(args.timeout),
        ..Limits::default()
    };
    let report = match doctor::run(&target, limits).await {
        Ok(report) => report,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    if args.json {
        print!("{}", doctor::render_json(&report));
    } else {
        // As for the logs: a terminal, and `NO_COLOR` unset or empty (no-color.org).
        let colour = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
        print!("{}", doctor::render_text(&report, colour));
    }
    if report.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
