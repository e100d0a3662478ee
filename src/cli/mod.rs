//! The `faultline` command line: a thin layer over the library, one module per subcommand.

mod analyze;
mod common;
mod filters;
mod fleet;
mod man;
mod output;

use clap::{Parser, Subcommand};
use output::print_stdout;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "faultline",
    version,
    about = "Offline forensics for GPU incidents: kernel, driver and job logs in, evidence-backed root cause out"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze one incident: files, folders, archives, or - (stdin). `PATH@HOST` names the host of an input.
    Analyze(analyze::AnalyzeArgs),
    /// Print the merged, aligned timeline of relevant events.
    Timeline(analyze::AnalyzeArgs),
    /// Explain an Xid/SXid code or an event kind: `explain xid 79`, `explain sxid 20034`, `explain kind fell_off_bus`
    /// (`explain prefilter` lists the literals of the line prefilter).
    Explain {
        /// `xid`, `sxid`, `kind`, or a kind name.
        what: String,
        /// The code or kind name.
        code: Option<String>,
    },
    /// Scan many bundles (bug reports, archives, folders per host): one JSON line per bundle,
    /// then a fleet summary. `--list` shows how files were grouped; `--shard K/N` takes one
    /// worker's share.
    Scan(fleet::ScanArgs),
    /// Fold the JSON Lines of `scan` runs (e.g. the shards of one archive) into one fleet summary.
    Merge(fleet::MergeArgs),
    /// Print a shell completion script, e.g.
    /// `faultline completions bash > /etc/bash_completion.d/faultline`.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `faultline man | man -l -`.
    Man,
}

/// Parses the command line and runs the subcommand.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "faultline", &mut out);
            print_stdout(&out)
        }
        Command::Man => print_stdout(&man::man_page()),
        Command::Analyze(a) => analyze::run_analyze(a, false),
        Command::Timeline(a) => analyze::run_analyze(a, true),
        Command::Scan(a) => fleet::run_scan(a),
        Command::Merge(a) => fleet::run_merge(a),
        Command::Explain { what, code } if what == "prefilter" => {
            match faultline::events::RecognizerSet::load(&[]) {
                Ok(set) => {
                    let _ = code;
                    print_stdout(format!("{}\n", set.prefilter_literals.join("\n")).as_bytes())
                }
                Err(e) => {
                    eprintln!("faultline: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Explain { what, code } => {
            let catalog = faultline::catalog::Catalog::builtin();
            match faultline::explain::explain(&catalog, &what, code.as_deref()) {
                Some(t) => print_stdout(t.as_bytes()),
                None => {
                    eprintln!(
                        "faultline: nothing known about `{what}{}`",
                        code.map(|c| format!(" {c}")).unwrap_or_default()
                    );
                    ExitCode::from(2)
                }
            }
        }
    }
}
