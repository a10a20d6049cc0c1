use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use dossier::cli::{self, config_file, Cli, Command};
use dossier::serve::access_log::AccessLog;

/// The version and the commit it was built from (`build.rs`).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("DOSSIER_COMMIT"), ")");

fn main() -> ExitCode {
    no_transparent_huge_pages();
    let argv = match config_file::apply(std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let matches = Cli::command().version(VERSION).get_matches_from(argv);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let json_logs =
        matches!(&cli.command, Command::Serve(args) if args.access_log == AccessLog::Json);
    let _log_writers = cli::init_logging(json_logs);
    match cli.command {
        Command::Build(args) => cli::build(&args),
        // The server starts one thread per further worker itself (`serve::run`); this one
        // runs the first worker and the background tasks.
        Command::Serve(args) => run(cli::serve(&args)),
        Command::Keys(command) => run(cli::keys(&command)),
        Command::Init(args) => cli::init::init(&args),
        Command::Check(args) => cli::check::check(&args),
        Command::Schema(args) => cli::schema(&args),
        Command::Doctor(args) => run(cli::doctor::doctor(&args)),
    }
}

/// Turns transparent huge pages off for this process. mimalloc asks for them (`madvise`) on
/// its arenas, and the kernel then zeroes 2 MiB at a time on first touch: at 100,000 pages
/// that was a quarter of the server's start-up CPU (`perf`: `clear_page_erms` under
/// `do_huge_pmd_anonymous_page`), and it kept about 30 MiB more resident once the
/// bodies were spooled. The flag is the kernel's, not the allocator's, so it holds whichever
/// allocator version asks. Failure (an old kernel) leaves the default, which only costs time.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Runs a command that needs the async runtime, on this thread.
fn run(task: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(task),
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

/// mimalloc instead of the system allocator. glibc gives threads that allocate at once
/// arenas of their own and keeps what is freed in each: after compiling 10,000 pages on
/// every core, a server with 70 MB of live heap stayed at 150 to 200 MB resident, even after
/// `malloc_trim`; limiting the arenas brought that down but slowed every reload by a quarter.
/// With mimalloc (and [`dossier::reload`] handing freed memory back once the background
/// compression after a reload is done) the same server is resident in about 110 MB, and a
/// one-page reload is faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
