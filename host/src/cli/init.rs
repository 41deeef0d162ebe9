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
# session_tokens = 200000               # refuse a call that could overspend

# [prices.claude-sonnet-4-5]            # dollars per million tokens, for `passepartout status`
# input = 3.0
# output = 15.0

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
