//! `passepartout cache prune | clear`: the compiled-component cache, kept small by hand (it is
//! also pruned after every compile, with the defaults of [`Prune`]).

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use passepartout::runtime::cache::{Prune, Pruned};
use passepartout::runtime::{Runtime, RuntimeConfig};

use super::Common;

#[derive(Subcommand)]
pub enum CacheCommand {
    /// Remove entries unused for MAX_AGE_DAYS, those of another wasmtime unused for a day, then
    /// the least recently used beyond MAX_MIB (never one used in the last hour).
    Prune {
        /// Days an entry may go unused.
        #[arg(long, default_value_t = 30)]
        max_age_days: u64,
        /// The most the cache may hold, MiB.
        #[arg(long, default_value_t = 1024)]
        max_mib: u64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove every entry: the next start compiles every plugin again.
    Clear {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(common: &Common, command: &CacheCommand) -> anyhow::Result<ExitCode> {
    let places = common.places();
    let Some(dir) = places.cache_dir() else {
        outln!("no cache (--no-cache, or no cache directory)");
        return Ok(ExitCode::SUCCESS);
    };
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(dir.clone()),
        ..RuntimeConfig::default()
    })?;
    let (pruned, json) = match command {
        CacheCommand::Prune {
            max_age_days,
            max_mib,
            json,
        } => (
            runtime.cache().prune(Prune {
                max_age: Duration::from_secs(max_age_days.saturating_mul(86_400)),
                max_bytes: max_mib.saturating_mul(1 << 20),
                ..Prune::default()
            })?,
            *json,
        ),
        CacheCommand::Clear { json } => (runtime.cache().clear()?, *json),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&pruned)?);
    } else {
        print(&pruned, &dir);
    }
    Ok(ExitCode::SUCCESS)
}

fn print(p: &Pruned, dir: &std::path::Path) {
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    outln!(
        "{}: removed {} entries ({:.1} MiB), kept {} ({:.1} MiB)",
        dir.display(),
        p.removed,
        mib(p.removed_bytes),
        p.kept,
        mib(p.kept_bytes)
    );
}
