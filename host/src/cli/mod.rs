//! Command-line interface: parse, call the library, print.

mod call;
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
}

#[derive(Subcommand)]
enum Command {
    /// List the loaded plugins: kinds, priority, limits, effective grants, cache use.
    Plugins {
        /// Print JSON (schema in docs/cli.md) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool of a plugin with JSON arguments, in the sandbox, and print its output.
    Call {
        /// The tool's name, e.g. `eval` or `read-file`.
        tool: String,
        /// The arguments, a JSON object, e.g. '{"expression": "(+ 1 2)"}'.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// Run every gate, highest priority first, on an action and print each verdict.
    Check {
        /// The action as JSON: {"target": "tool", "tool": "shell", "args": {"command": "rm -rf /"}}
        action: String,
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
    let loaded = load(&cli.common)?;
    match cli.command {
        Command::Plugins { json } => plugins::run(&loaded, json),
        Command::Call { tool, args } => call::tool(&loaded, &tool, &args),
        Command::Check { action } => call::check(&loaded, &action),
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
