use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = server::cli::Cli::parse();
    server::cli::run(cli)
}
