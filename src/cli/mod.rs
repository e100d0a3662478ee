//! The `faultline` command line: a thin layer over the library, one module per subcommand.

mod analyze;
mod collect;
mod color;
mod common;
mod explain;
mod filters;
mod fleet;
mod man;
mod output;
mod progress;
mod wrap;

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
    /// The catalog as a reference: `explain` lists the families, `explain xid` every Xid code,
    /// `explain 79`, `explain sxid 20034`, `explain dcgm DCGM_FR_…`, `explain kind hung_task`,
    /// `explain layer interconnect` one entry; `--format json`.
    Explain(explain::ExplainArgs),
    /// Scan many bundles (bug reports, archives, folders per host): one JSON line per bundle,
    /// then a fleet summary. `--list` shows how files were grouped; `--shard K/N` takes one
    /// worker's share.
    Scan(fleet::ScanArgs),
    /// Capture what an analysis needs on this node (kernel log, nvidia-smi, PCIe, InfiniBand,
    /// BMC, package history, job logs) into one `.tar.zst` that `analyze` and `scan` read, with a
    /// manifest of what was captured and why an item is missing.
    Collect(collect::CollectArgs),
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
        Command::Collect(a) => collect::run_collect(a),
        Command::Explain(a) => explain::run_explain(a),
    }
}
