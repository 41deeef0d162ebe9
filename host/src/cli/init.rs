//! `passepartout init`, and the `.env` file read at start.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::Common;

const CONFIG: &str = r#"# Passepartout configuration. Every key is optional; environment variables override.
# Keys never go in this file: name the variable that holds each (api_key_env).

# The language models, tried in order until one answers (docs/providers.md).
# With none listed, ANTHROPIC_API_KEY / OPENAI_API_KEY / OPENROUTER_API_KEY / GEMINI_API_KEY
# decide, else a local Ollama on 127.0.0.1:11434 is tried.
#
# [[providers]]
# name = "claude"
# protocol = "anthropic"                # or "openai" for any Chat Completions server
# base_url = "https://api.anthropic.com"
# model = "claude-sonnet-4-5"
# api_key_env = "ANTHROPIC_API_KEY"
# timeout_secs = 60

# [budget]
# session_tokens = 200000               # per daemon client session, or per command: refuse a
#                                       # call that could overspend
# daily_usd = 5.0                       # all sessions together, per day (UTC)

# Well-known models are priced already (docs/providers.md); add others, or override:
# [prices.my-local-model]               # dollars per million tokens
# input = 0.0
# output = 0.0

# [journal]
# max_text_bytes = 16384                # longer texts keep their start, length and sha256

# MCP over streamable HTTP, served by the daemon; the bearer is the client key (docs/mcp.md).
# [mcp]
# http = "127.0.0.1:9120"               # loopback only unless any_interface = true

# The loop (docs/cli.md, "passepartout.toml").
# [pipeline]
# assistant = "Agent"                   # the assistant's name in the prompt
# default_actuator = "cli"              # where an action with no target and no source goes
# silent_actuators = ["cli", "system-message", "emacs"]   # results not fed back to the model
# mandates = []                         # standing instructions, first in the prompt
# max_depth = 10                        # feedback rounds before a signal is dropped
# attempts = 3                          # proposals the model gets when gates reject one
# approval_expiry_secs = 86400          # how long a held action waits for a person
# recovery = "reinject"                 # or "skip", "abort", { fallback = "text" }
"#;

/// Write the commented defaults where they are missing.
pub fn run(common: &Common) -> anyhow::Result<ExitCode> {
    let config = common
        .config
        .clone()
        .or_else(passepartout::dirs::config_file)
        .context("no configuration directory: pass --config")?;
    let policy = common
        .policy
        .clone()
        .or_else(passepartout::dirs::policy_file)
        .context("no configuration directory: pass --policy")?;
    let workspace = passepartout::dirs::workspace().context("no data directory")?;
    std::fs::create_dir_all(&workspace)
        .with_context(|| format!("cannot create the workspace {}", workspace.display()))?;
    let policy_text = passepartout::policy_edit::starter(&workspace);
    for (path, text) in [(config, CONFIG), (policy, policy_text.as_str())] {
        if path.exists() {
            outln!("kept {} (it exists)", path.display());
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        outln!("wrote {}", path.display());
    }
    let dotenv = dotenv_path(common).map_or_else(|| ".env".into(), |p| p.display().to_string());
    outln!(
        "\nNext:\n  \
         1. Give it a model: put a key in {dotenv} (ANTHROPIC_API_KEY=..., OPENAI_API_KEY=...,\n     \
            OPENROUTER_API_KEY=... or GEMINI_API_KEY=...), or run a local Ollama.\n  \
         2. Check: passepartout doctor\n  \
         3. Talk to it: passepartout chat    (or one question: passepartout ask \"...\")\n\
         Files it may touch go in {}; what each plugin may do is in the policy above.",
        workspace.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn dotenv_path(common: &Common) -> Option<PathBuf> {
    let config = common
        .config
        .clone()
        .or_else(passepartout::dirs::config_file)?;
    Some(config.with_file_name(".env"))
}

/// Read `KEY=value` lines from `.env` beside the configuration into the environment, without
/// overriding variables that are already set ([`passepartout::settings::load_dotenv`]). Called
/// first thing, before any thread starts.
pub fn load_dotenv(common: &Common) {
    if let Some(path) = dotenv_path(common) {
        // SAFETY: called at the top of main, before the process starts any other thread.
        unsafe { passepartout::settings::load_dotenv(&path) };
    }
}
