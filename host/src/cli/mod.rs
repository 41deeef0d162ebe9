//! Command-line interface: parse, call the library, print.

mod journal;
mod pipeline;
mod plugins;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use passepartout::runtime::{LoadReport, Policy, Runtime, RuntimeConfig, loader};

/// Passepartout: an agent runtime where every skill, gate and tool is a sandboxed WebAssembly
/// component, and nothing runs that the gates, the capabilities and a person did not allow.
#[derive(Parser)]
#[command(name = "passepartout", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    common: Common,
}

/// Options every command that loads plugins takes.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// Third-party plugin directory (one folder per plugin) [default: $XDG_DATA_HOME/passepartout/plugins]
    #[arg(long, global = true, value_name = "DIR", env = "PASSEPARTOUT_PLUGINS")]
    plugins: Option<PathBuf>,
    /// The operator's policy [default: $XDG_CONFIG_HOME/passepartout/policy.toml]
    #[arg(long, global = true, value_name = "FILE", env = "PASSEPARTOUT_POLICY")]
    policy: Option<PathBuf>,
    /// Compiled-component cache [default: $XDG_CACHE_HOME/passepartout/compiled]
    #[arg(long, global = true, value_name = "DIR", env = "PASSEPARTOUT_CACHE")]
    cache: Option<PathBuf>,
    /// Compile every plugin, neither reading nor writing the cache.
    #[arg(long, global = true)]
    no_cache: bool,
    /// The database of the journal and approvals [default: $XDG_DATA_HOME/passepartout/passepartout.db]
    #[arg(long, global = true, value_name = "FILE", env = "PASSEPARTOUT_DB")]
    db: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// List the loaded plugins: kinds, priority, limits, effective grants, cache use.
    Plugins {
        /// Print JSON (schema in docs/cli.md) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Dry run: run every gate on an action and print the verdict and trace. Runs nothing.
    /// Exit 0 passed, 3 rejected, 4 approval required, 2 bad input.
    Verify {
        /// The action, JSON: {"target": "tool", "tool": "shell", "args": {"cmd": "ls"}}
        #[arg(long)]
        action: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Direct request: gates, then the actuator; prints the result and the trace.
    /// Exit 0 ran, 3 rejected, 4 approval required (token printed), 5 the tool failed, 2 bad input.
    Act {
        /// The action, JSON: {"target": "tool", "tool": "eval", "args": {"expression": "(+ 1 2)"}}
        #[arg(long)]
        action: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the actions waiting for approval.
    Approvals {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approve a suspended action: it runs (after a last-mile verify). Exit codes as `act`.
    Approve {
        /// The token printed when it was suspended.
        token: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Deny a suspended action: it is dropped.
    Deny {
        /// The token printed when it was suspended.
        token: String,
    },
    /// The tamper-evident journal of proposals, verdicts, approvals and results.
    Journal {
        #[command(subcommand)]
        command: JournalCommand,
    },
}

#[derive(Subcommand)]
enum JournalCommand {
    /// Check the hash chain; name the first record edited, removed or reordered. Exit 1 if any.
    Verify,
    /// Print the last records.
    Show {
        /// How many records, from the end.
        #[arg(long, default_value_t = 20)]
        last: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main_inner() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PASSEPARTOUT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Command::Journal { command } = &cli.command {
        let journal = journal::open(&cli.common)?;
        return match command {
            JournalCommand::Verify => journal::verify(&journal),
            JournalCommand::Show { last, json } => journal::show(&journal, *last, *json),
        };
    }
    let loaded = load(&cli.common)?;
    match cli.command {
        Command::Plugins { json } => plugins::run(&loaded, json),
        Command::Verify { action, json } => pipeline::verify(loaded, &action, json),
        Command::Act { action, json } => pipeline::act(loaded, &cli.common, &action, json),
        Command::Approvals { json } => pipeline::approvals(loaded, &cli.common, json),
        Command::Approve { token, json } => pipeline::approve(loaded, &cli.common, &token, json),
        Command::Deny { token } => pipeline::deny(loaded, &cli.common, &token),
        Command::Journal { .. } => Ok(ExitCode::from(2)),
    }
}

/// Everything the commands need: the runtime, what loaded, and where from.
pub struct Loaded {
    runtime: Runtime,
    report: LoadReport,
    plugin_dir: Option<PathBuf>,
    policy_file: Option<PathBuf>,
}

fn load(common: &Common) -> anyhow::Result<Loaded> {
    let cache_dir = if common.no_cache {
        None
    } else {
        common.cache.clone().or_else(passepartout::dirs::cache_dir)
    };
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir,
        pooling: true,
    })?;
    let policy_file = common
        .policy
        .clone()
        .or_else(passepartout::dirs::policy_file);
    let policy = match &policy_file {
        Some(p) => Policy::load(p)?,
        None => Policy::default(),
    };
    let plugin_dir = common
        .plugins
        .clone()
        .or_else(passepartout::dirs::plugin_dir);
    let mut sources = loader::builtin_sources();
    let mut errors = Vec::new();
    if let Some(dir) = &plugin_dir {
        let (more, errs) = loader::dir_sources(dir);
        sources.extend(more);
        errors.extend(errs);
    }
    let mut report = runtime.load_all(&sources, &policy);
    errors.append(&mut report.errors);
    report.errors = errors;
    Ok(Loaded {
        runtime,
        report,
        plugin_dir,
        policy_file,
    })
}

/// Run the command line; errors are printed with their causes and give exit code 2.
pub fn main() -> ExitCode {
    match main_inner() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("passepartout: {e:#}");
            ExitCode::from(2)
        }
    }
}
