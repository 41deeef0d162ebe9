//! Command-line interface: parse, call the library, print.

#[macro_use]
mod out;

mod audit;
mod cache;
mod chat;
mod daemon;
mod exit;
mod init;
mod journal;
mod mcp;
mod memory;
mod pipeline;
mod plugin_cmd;
mod plugin_test;
mod plugins;
mod progress;
mod reload;
mod status;
mod tui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use passepartout::agent::{Loaded, Places, Setup};

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
    /// Providers, budget and prices [default: $XDG_CONFIG_HOME/passepartout/passepartout.toml]
    #[arg(long, global = true, value_name = "FILE", env = "PASSEPARTOUT_CONFIG")]
    config: Option<PathBuf>,
    /// The daemon's port: `daemon` listens on it (0: any free port), clients connect to it
    /// [default: 9105, or 9105-9115 when taken; clients read the runtime directory]
    #[arg(long, global = true, value_name = "PORT")]
    port: Option<u16>,
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
    /// Write a commented default passepartout.toml and policy.toml (never overwriting).
    Init,
    /// Run the daemon: the pipeline behind the framed TCP protocol on 127.0.0.1. Clients
    /// prove the per-installation keys it makes in its keys directory (docs/protocol.md).
    Daemon {
        /// Turn authentication off: every local process, the agent's own tools included, may
        /// then connect and approve. For tests and benchmarks only.
        #[arg(long)]
        insecure_no_auth: bool,
    },
    /// Send one request to the daemon and print the reply.
    Send {
        /// The text (a user message).
        text: Option<String>,
        /// Send this action as a direct request instead.
        #[arg(long)]
        action: Option<String>,
        /// The memory headline (its ID) the text is about: the model is shown it whole.
        #[arg(long, value_name = "ID", conflicts_with = "action")]
        focus: Option<String>,
        /// Show the gate trace.
        #[arg(long)]
        trace: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Talk to the daemon line by line (starts one in the background if none answers).
    Chat {
        /// Show each gate's verdict (labelled `gates`, and `last mile` when the gates ran
        /// again before the tool) and each tool's output.
        #[arg(long)]
        trace: bool,
    },
    /// The terminal interface (docs/tui.md): the conversation, each gate's verdict as it is
    /// made, approvals to decide with a key, plugins, the journal (starts a daemon in the
    /// background if none answers).
    Tui,
    /// Serve the daemon's tools to an MCP client over stdin/stdout (docs/mcp.md): every call
    /// goes through the gates, approvals and the journal in the daemon (started in the
    /// background if none answers).
    Mcp {
        /// `pin NAME`: approve an MCP server's tools (gateway mode).
        #[command(subcommand)]
        action: Option<McpAction>,
        /// How long a call a gate flags waits for a person's decision before it returns
        /// (naming the token); below the 60 s many MCP clients wait for a call.
        #[arg(long, value_name = "SECS", default_value_t = mcp::APPROVAL_WAIT_SECS)]
        approval_wait: u64,
        /// The operator marks this client as one whose person may decide approvals: a call a
        /// gate flags is put to it as an MCP elicitation (needs the approver key). A client
        /// can answer an elicitation by itself; mark only clients that show it to a person.
        #[arg(long)]
        approver: bool,
    },
    /// Stop the running daemon (as SIGTERM does: requests in flight finish, nothing is lost).
    Stop,
    /// Ask the model: the text goes through Reason (the model, the gates), Act, and back.
    Ask {
        /// What to ask.
        text: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Spend per provider and model, pending approvals, journal length.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check plugins, policy, database and each provider; healthy, degraded or unhealthy.
    Doctor {
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
        /// The digest `approvals` showed: refused if the action is no longer that one.
        /// Without it, the action is looked up and printed before it is approved, and, at a
        /// terminal, approved only once you answer `y`.
        #[arg(long)]
        digest: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Deny a suspended action: it is dropped.
    Deny {
        /// The token printed when it was suspended.
        token: String,
        /// The digest `approvals` showed (as for `approve`).
        #[arg(long)]
        digest: Option<String>,
    },
    /// What every plugin can do: declared / granted / imported / enforced, and findings.
    /// Exit 0 clean, 1 a finding at or above --fail-on, 2 usage error.
    Audit {
        #[command(subcommand)]
        command: Option<AuditCommand>,
        /// Print JSON (schema: docs/audit.md).
        #[arg(long, global = true)]
        json: bool,
        /// The least severity that makes the exit code 1.
        #[arg(long, value_enum, default_value = "high")]
        fail_on: passepartout::audit::Severity,
    },
    /// Install, update or remove a third-party plugin.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// The compiled-component cache: prune or clear it.
    Cache {
        #[command(subcommand)]
        command: cache::CacheCommand,
    },
    /// The memory store of Org headlines: ingest, query, snapshots, rollback.
    Memory {
        #[command(subcommand)]
        command: memory::MemoryCommand,
    },
    /// The tamper-evident journal of proposals, verdicts, approvals and results.
    Journal {
        #[command(subcommand)]
        command: JournalCommand,
    },
}

/// What `passepartout mcp` does besides serving.
#[derive(Subcommand)]
enum McpAction {
    /// Approve what MCP server NAME (`[mcp.servers.NAME]`, gateway mode) offers, as the daemon
    /// last saw it: each tool's description and schema go into the model's prompt, so none is
    /// offered before the operator approves it, and a changed one waits for approval again.
    Pin {
        /// The server's name.
        server: String,
        /// Approve without asking.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// What a new build of a plugin changes: capabilities, limits, tools (and what the model
    /// is told of them), priority, config, imports, exports; each line a widening (+), a
    /// narrowing (-) or neither (~). Exit 1 when --fail-on is met.
    Diff {
        /// The old build: a folder with plugin.toml and the component (or the plugin.toml).
        old: PathBuf,
        /// The new build.
        new: PathBuf,
        /// `widening`: exit 1 when anything widens (a CI gate for updates); `consent`: also
        /// when what the model is told changes (what `plugin update` asks consent for); or a
        /// level (info, low, medium, high): exit 1 when the new build has a finding at or
        /// above it.
        #[arg(long, default_value = "high", value_parser = passepartout::audit::diff::FailOn::parse)]
        fail_on: passepartout::audit::diff::FailOn,
    },
}

#[derive(Subcommand)]
enum PluginCommand {
    /// Copy a plugin (a folder with plugin.toml and its component) into the plugin directory,
    /// pin its sha256, print its audit and ask for consent if it asks for any capability.
    Install {
        /// The plugin's folder or plugin.toml.
        path: PathBuf,
        /// Consent without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Replace an installed plugin with a new build: shows the diff and asks again.
    Update {
        /// The installed plugin's name.
        name: String,
        /// The new build's folder or plugin.toml.
        path: PathBuf,
        /// Consent without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Write a new plugin project that builds as it is: the SDK's sources and the WIT beside
    /// it, a plugin.toml, and cases.json for `plugin test`.
    New {
        /// The plugin's name (lowercase letters, digits, dashes).
        name: String,
        /// What it is.
        #[arg(long, value_enum, default_value = "gate")]
        kind: passepartout::authoring::Kind,
        /// Its language.
        #[arg(long, value_enum, default_value = "rust")]
        lang: passepartout::authoring::Lang,
        /// Where [default: ./NAME]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Build a project `plugin new` made, with its toolchain (runs the project's own build,
    /// natively: it is the author's code, on the author's machine). `plugin install` never
    /// builds.
    Build {
        /// The project [default: .]
        dir: Option<PathBuf>,
    },
    /// Run a plugin against a table of cases (docs/plugins.md, "Testing a plugin"): a
    /// folder's built component (granted what it asks for), or an installed or built-in plugin
    /// by name (under the policy). Exit 1 when any case fails.
    Test {
        /// A plugin folder, or the name of an installed or built-in plugin [default: .]
        plugin: Option<PathBuf>,
        /// The cases [default: cases.json in the plugin's folder]
        #[arg(long)]
        cases: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an installed plugin and its pin.
    Remove {
        /// The plugin's name.
        name: String,
    },
}

#[derive(Subcommand)]
enum JournalCommand {
    /// Check the hash chain; name the first record edited, removed or reordered, and print the
    /// newest record's seq and hash, to keep elsewhere. Exit 1 if any break, or if --expect is
    /// not met.
    Verify {
        /// SEQ:HASH, a head an earlier verify printed: fail unless record SEQ still has HASH
        /// (the journal cut short, or rewritten whole with fresh hashes, since).
        #[arg(long, value_name = "SEQ:HASH", value_parser = journal::anchor)]
        expect: Option<journal::Anchor>,
    },
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
    init::load_dotenv(&cli.common);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PASSEPARTOUT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal, never into a file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Command::Journal { command } = &cli.command {
        let journal = journal::open(&cli.common)?;
        return match command {
            JournalCommand::Verify { expect } => journal::verify(&journal, expect.as_ref()),
            JournalCommand::Show { last, json } => journal::show(&journal, *last, *json),
        };
    }
    match &cli.command {
        Command::Memory { command } => return memory::run(&cli.common, command),
        Command::Cache { command } => return cache::run(&cli.common, command),
        Command::Daemon { insecure_no_auth } => {
            return daemon::run(&cli.common, *insecure_no_auth);
        }
        Command::Send {
            text,
            action,
            focus,
            trace,
            json,
        } => {
            return daemon::send(
                &cli.common,
                text.as_deref(),
                action.as_deref(),
                focus.clone(),
                *trace,
                *json,
            );
        }
        Command::Chat { trace } => return chat::run(&cli.common, *trace),
        Command::Tui => return tui::run(&cli.common),
        Command::Mcp {
            action: Some(McpAction::Pin { server, yes }),
            ..
        } => return mcp::pin::run(&cli.common, server, *yes),
        Command::Mcp {
            action: None,
            approval_wait,
            approver,
        } => {
            return mcp::run(
                &cli.common,
                std::time::Duration::from_secs(*approval_wait),
                *approver,
            );
        }
        Command::Stop => return daemon::stop(),
        Command::Init => return init::run(&cli.common),
        Command::Approve {
            token,
            digest,
            json,
        } => {
            if let Some(done) =
                daemon::decide_via_daemon(&cli.common, "approve", token, digest.as_deref(), *json)
            {
                return done;
            }
        }
        Command::Deny { token, digest } => {
            if let Some(done) =
                daemon::decide_via_daemon(&cli.common, "deny", token, digest.as_deref(), false)
            {
                return done;
            }
        }
        Command::Audit {
            command,
            json,
            fail_on,
        } => {
            let setup = setup(&cli.common)?;
            return match command {
                None => audit::run(&setup, &cli.common.places(), *json, *fail_on),
                Some(AuditCommand::Diff { old, new, fail_on }) => {
                    audit::diff(&setup, old, new, *json, *fail_on)
                }
            };
        }
        Command::Plugin {
            command:
                PluginCommand::New {
                    name,
                    kind,
                    lang,
                    dir,
                },
        } => return plugin_test::new(name, *kind, *lang, dir.as_deref()),
        Command::Plugin {
            command: PluginCommand::Build { dir },
        } => return plugin_test::build(dir.as_deref()),
        Command::Plugin { command } => {
            let setup = setup(&cli.common)?;
            return match command {
                PluginCommand::Test {
                    plugin,
                    cases,
                    json,
                } => plugin_test::run(setup, plugin.as_deref(), cases.as_deref(), *json),
                PluginCommand::Install { path, yes } => {
                    plugin_cmd::install(&setup, &cli.common, path, *yes)
                }
                PluginCommand::Update { name, path, yes } => {
                    plugin_cmd::update(&setup, &cli.common, name, path, *yes)
                }
                PluginCommand::Remove { name } => plugin_cmd::remove(&setup, &cli.common, name),
                PluginCommand::New { .. } | PluginCommand::Build { .. } => {
                    unreachable!("handled above, without loading the plugins")
                }
            };
        }
        _ => {}
    }
    if matches!(
        cli.command,
        Command::Act { .. } | Command::Ask { .. } | Command::Approve { .. } | Command::Deny { .. }
    ) {
        // These write: the database (journal, memory) is created before plugins load.
        journal::open(&cli.common)?;
    }
    let loaded = load(&cli.common)?;
    if matches!(
        cli.command,
        Command::Verify { .. }
            | Command::Act { .. }
            | Command::Ask { .. }
            | Command::Approve { .. }
    ) {
        // A plugin that failed to load runs nothing (and a gate that failed to load makes
        // every verdict a refusal): say so where the verdict is read.
        for e in &loaded.report.errors {
            errln!("warning: not loaded: {e}");
        }
    }
    match cli.command {
        Command::Plugins { json } => plugins::run(&loaded, json),
        Command::Verify { action, json } => pipeline::verify(loaded, &action, json),
        Command::Act { action, json } => pipeline::act(loaded, &cli.common, &action, json),
        Command::Approvals { json } => pipeline::approvals(loaded, &cli.common, json),
        Command::Approve {
            token,
            digest,
            json,
        } => pipeline::approve(loaded, &cli.common, &token, digest.as_deref(), json),
        Command::Deny { token, digest } => {
            pipeline::deny(loaded, &cli.common, &token, digest.as_deref())
        }
        Command::Ask { text, json } => pipeline::ask(loaded, &cli.common, &text, json),
        Command::Status { json } => status::status(loaded, &cli.common, json),
        Command::Doctor { json } => status::doctor(loaded, &cli.common, json),
        // Handled above, before any plugin is loaded.
        Command::Journal { .. }
        | Command::Memory { .. }
        | Command::Cache { .. }
        | Command::Audit { .. }
        | Command::Plugin { .. }
        | Command::Daemon { .. }
        | Command::Send { .. }
        | Command::Chat { .. }
        | Command::Tui
        | Command::Mcp { .. }
        | Command::Stop
        | Command::Init => Ok(ExitCode::from(2)),
    }
}

impl Common {
    /// Where the agent's parts come from, as these options say.
    /// These options as flags again, for a daemon this command starts: it must use the
    /// places this command was given, not the defaults.
    pub fn as_flags(&self) -> Vec<std::ffi::OsString> {
        let mut flags: Vec<std::ffi::OsString> = Vec::new();
        let paths = [
            ("--plugins", &self.plugins),
            ("--policy", &self.policy),
            ("--cache", &self.cache),
            ("--config", &self.config),
            ("--db", &self.db),
        ];
        // `--db=VALUE`: a value that starts with `-` stays a value.
        for (flag, path) in paths {
            if let Some(path) = path {
                let mut arg = std::ffi::OsString::from(format!("{flag}="));
                arg.push(path);
                flags.push(arg);
            }
        }
        if self.no_cache {
            flags.push("--no-cache".into());
        }
        if let Some(port) = self.port {
            flags.extend(["--port".into(), port.to_string().into()]);
        }
        flags
    }

    pub fn places(&self) -> Places {
        Places {
            plugins: self.plugins.clone(),
            policy: self.policy.clone(),
            cache: self.cache.clone(),
            no_cache: self.no_cache,
            config: self.config.clone(),
            db: self.db.clone(),
            progress: progress::at_a_terminal(),
            also_protected: Vec::new(),
        }
    }
}

fn setup(common: &Common) -> anyhow::Result<Setup> {
    Ok(common.places().setup()?)
}

fn load(common: &Common) -> anyhow::Result<Loaded> {
    Ok(setup(common)?.load())
}

/// Run the command line; errors are printed with their causes and give exit code 2.
pub fn main() -> ExitCode {
    match main_inner() {
        Ok(code) => code,
        Err(e) => {
            errln!("passepartout: {}", passepartout::runtime::chain(e.as_ref()));
            ExitCode::from(2)
        }
    }
}
