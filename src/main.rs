use std::process::ExitCode;

use clap::Parser;
use dossier::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli::init_logging();
    match cli.command {
        Command::Build(args) => cli::build(&args),
        Command::Serve(args) => {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("error: cannot start the runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            runtime.block_on(cli::serve(&args))
        }
    }
}
