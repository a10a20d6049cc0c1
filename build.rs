//! Records the commit dossier is built from, for `dossier --version`: a bug report then
//! names the exact source. Outside a git checkout it is `unknown`, unless the build is told
//! (`DOSSIER_COMMIT=…`, as the container image's build argument does).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DOSSIER_COMMIT");
    let given = std::env::var("DOSSIER_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty());
    let commit = given
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DOSSIER_COMMIT={commit}");
    // Run again when HEAD moves (a checkout) or its branch does (a commit), not on every
    // edit of a file.
    println!("cargo:rerun-if-changed=.git/HEAD");
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        if let Some(branch) = head.trim().strip_prefix("ref: ") {
            println!("cargo:rerun-if-changed=.git/{branch}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

fn git_commit() -> Option<String> {
    Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|commit| commit.trim().to_string())
        .filter(|commit| !commit.is_empty())
}
