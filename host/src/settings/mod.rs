//! Settings: `passepartout.toml` ([`ConfigFile`]), a `.env` file beside it ([`load_dotenv`]) and
//! the environment, read here and nowhere else in the library. The environment overrides the
//! file, key by key.
//!
//! Every environment variable Passepartout reads, in one place and under one naming scheme:
//! `PASSEPARTOUT_*`. The names of the Lisp original (`MEMEX_ASSISTANT`, `DAEMON_PORT`,
//! `OACP_HMAC_SECRET`...) are still accepted as aliases, with a deprecation note the first time
//! one is used. The LLM vendors' own variables (`OPENAI_API_KEY`...) keep their names: they are
//! the vendors' convention, not ours.
//!
//! Nothing else in the library reads the environment (clippy's `disallowed-methods` enforces it,
//! see `clippy.toml`); the capability modules that pass variables a policy grants to a plugin
//! are the exception, and say so.

mod file;

pub use file::{
    ConfigError, ConfigFile, DaemonSection, McpSection, McpServerConfig, PipelineSection,
};

use std::collections::BTreeSet;
use std::str::FromStr;
use std::sync::Mutex;

/// One setting the environment may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// Older names still read, first to last, when `name` is not set.
    pub aliases: &'static [&'static str],
    /// What it sets, for `--help` texts and the docs.
    pub doc: &'static str,
}

/// The assistant's name in prompts.
pub const ASSISTANT: Var = Var {
    name: "PASSEPARTOUT_ASSISTANT",
    aliases: &["MEMEX_ASSISTANT"],
    doc: "the assistant's name in prompts",
};
/// Where replies go when an action names no target.
pub const DEFAULT_ACTUATOR: Var = Var {
    name: "PASSEPARTOUT_DEFAULT_ACTUATOR",
    aliases: &["DEFAULT_ACTUATOR"],
    doc: "the actuator of actions that name no target",
};
/// Actuators whose results do not come back as feedback (comma-separated).
pub const SILENT_ACTUATORS: Var = Var {
    name: "PASSEPARTOUT_SILENT_ACTUATORS",
    aliases: &["SILENT_ACTUATORS"],
    doc: "actuators whose results are not fed back (comma-separated)",
};
/// Seconds a suspended action waits for a person.
pub const APPROVAL_EXPIRY_SECS: Var = Var {
    name: "PASSEPARTOUT_APPROVAL_EXPIRY_SECS",
    aliases: &[],
    doc: "seconds a suspended action waits for a person",
};
/// The model every provider uses instead of its configured one.
pub const MODEL: Var = Var {
    name: "PASSEPARTOUT_MODEL",
    aliases: &[],
    doc: "the model to use instead of the configured ones",
};
/// Seconds a silent client may stay connected.
pub const READ_TIMEOUT_SECS: Var = Var {
    name: "PASSEPARTOUT_READ_TIMEOUT_SECS",
    aliases: &[],
    doc: "seconds a silent client stays connected (300)",
};
/// How often the daemon looks for changed plugins and policy, in milliseconds.
pub const RELOAD_POLL_MS: Var = Var {
    name: "PASSEPARTOUT_RELOAD_POLL_MS",
    aliases: &[],
    doc: "milliseconds between looks for changed plugins and policy (2000; 0: never)",
};
/// The heartbeat interval in seconds.
pub const HEARTBEAT_SECS: Var = Var {
    name: "PASSEPARTOUT_HEARTBEAT_SECS",
    aliases: &["HEARTBEAT_INTERVAL"],
    doc: "seconds between heartbeats (60)",
};
/// How often the daemon re-ingests the memory's paths, in seconds.
pub const MEMORY_AUTO_SAVE_SECS: Var = Var {
    name: "PASSEPARTOUT_MEMORY_AUTO_SAVE_SECS",
    aliases: &["MEMORY_AUTO_SAVE_INTERVAL"],
    doc: "seconds between re-ingests of the memory's paths (300)",
};
/// The daemon's port.
pub const PORT: Var = Var {
    name: "PASSEPARTOUT_PORT",
    aliases: &["DAEMON_PORT"],
    doc: "the daemon's port",
};
/// The daemon's (loopback) address.
pub const HOST: Var = Var {
    name: "PASSEPARTOUT_HOST",
    aliases: &["DAEMON_HOST"],
    doc: "the daemon's loopback address (127.0.0.1)",
};
/// The client key, instead of the key file.
pub const CLIENT_SECRET: Var = Var {
    name: "PASSEPARTOUT_HMAC_SECRET",
    aliases: &["OACP_HMAC_SECRET"],
    doc: "the client key, instead of keys/client.key",
};
/// The approver key, instead of the key file.
pub const APPROVER_SECRET: Var = Var {
    name: "PASSEPARTOUT_APPROVER_SECRET",
    aliases: &[],
    doc: "the approver key, instead of keys/approver.key",
};
/// Refuse to start with authentication off.
pub const ENFORCE_AUTH: Var = Var {
    name: "PASSEPARTOUT_ENFORCE_AUTH",
    aliases: &["OACP_ENFORCE_HMAC"],
    doc: "refuse to start with --insecure-no-auth (1, true, yes, on)",
};

/// Every setting of ours, for the docs and for tests.
pub const ALL: &[Var] = &[
    ASSISTANT,
    DEFAULT_ACTUATOR,
    SILENT_ACTUATORS,
    APPROVAL_EXPIRY_SECS,
    MODEL,
    READ_TIMEOUT_SECS,
    RELOAD_POLL_MS,
    HEARTBEAT_SECS,
    MEMORY_AUTO_SAVE_SECS,
    PORT,
    HOST,
    CLIENT_SECRET,
    APPROVER_SECRET,
    ENFORCE_AUTH,
];

/// Aliases already warned about (once per process each).
static WARNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

impl Var {
    /// Its value: set and not blank, under its name or else an alias (noting the first use
    /// of each alias as deprecated).
    pub fn get(&self) -> Option<String> {
        self.lookup().map(|(_, v)| v)
    }

    /// As [`Var::get`], with the name the value was found under (for messages about it).
    pub fn lookup(&self) -> Option<(&'static str, String)> {
        self.lookup_with(nonblank)
    }

    /// Its value even when blank (`SILENT_ACTUATORS=` says "none"), under its name or an alias.
    pub fn get_even_blank(&self) -> Option<String> {
        self.lookup_with(set).map(|(_, v)| v)
    }

    fn lookup_with(&self, read: impl Fn(&str) -> Option<String>) -> Option<(&'static str, String)> {
        if let Some(v) = read(self.name) {
            return Some((self.name, v));
        }
        let (alias, value) = self.aliases.iter().find_map(|a| read(a).map(|v| (*a, v)))?;
        deprecated(alias, self.name);
        Some((alias, value))
    }

    /// Its value parsed as a `T`; a value that does not parse is reported, naming the variable
    /// it was found under and the value, and treated as unset (what `passepartout.toml` says
    /// applies, else the default).
    pub fn parse<T: FromStr>(&self) -> Option<T> {
        let (name, raw) = self.lookup()?;
        match raw.trim().parse() {
            Ok(v) => Some(v),
            Err(_) => {
                tracing::warn!(
                    "{name}={raw:?} is not valid ({}); ignoring it (passepartout.toml's value \
                     or the default applies)",
                    self.doc
                );
                None
            }
        }
    }

    /// Whether any of its names (the aliases too) is set to 1, true, yes or on (any case): for
    /// switches that make the daemon safer, one name cannot turn off what another turned on.
    pub fn enabled(&self) -> bool {
        let on = |name: &str| {
            nonblank(name).is_some_and(|v| {
                matches!(
                    v.trim().to_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            })
        };
        if on(self.name) {
            return true;
        }
        match self.aliases.iter().find(|a| on(a)) {
            Some(alias) => {
                deprecated(alias, self.name);
                true
            }
            None => false,
        }
    }
}

/// Note, once per process, that `alias` is deprecated in favour of `name`.
fn deprecated(alias: &'static str, name: &str) {
    if WARNED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(alias)
    {
        tracing::warn!("{alias} is deprecated: set {name} instead");
    }
}

/// Read `KEY=value` lines of the `.env` file at `path` into the environment, without overriding
/// variables that are already set. A missing or unreadable file is no error (it is optional).
///
/// # Safety
/// Changes the process environment: call it before the process starts any other thread.
#[allow(clippy::disallowed_methods, reason = "the .env loader of this module")]
pub unsafe fn load_dotenv(path: &std::path::Path) {
    // ambient authority: the operator's own .env file.
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let value = value.trim().trim_matches('"').trim_matches('\'');
        let valid = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid && std::env::var_os(key).is_none() {
            // SAFETY: the caller guarantees no other thread runs yet.
            unsafe { std::env::set_var(key, value) };
        }
    }
}

/// A variable named by the operator's configuration (`api_key_env`) or by an LLM vendor's
/// convention (`OPENAI_API_KEY`): set and not blank.
pub fn named(name: &str) -> Option<String> {
    nonblank(name)
}

fn nonblank(name: &str) -> Option<String> {
    set(name).filter(|v| !v.trim().is_empty())
}

#[allow(
    clippy::disallowed_methods,
    reason = "the one place that reads the environment"
)]
fn set(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_follows_the_naming_scheme_and_names_are_unique() {
        let mut seen = BTreeSet::new();
        for var in ALL {
            assert!(var.name.starts_with("PASSEPARTOUT_"), "{}", var.name);
            for name in std::iter::once(&var.name).chain(var.aliases) {
                assert!(seen.insert(*name), "{name} is read for two settings");
            }
            assert!(!var.doc.is_empty());
        }
    }

    #[test]
    fn the_docs_list_every_setting_and_its_aliases() {
        let docs = include_str!("../../../docs/cli.md");
        for var in ALL {
            for name in std::iter::once(&var.name).chain(var.aliases) {
                assert!(
                    docs.contains(&format!("`{name}`")),
                    "docs/cli.md misses {name}"
                );
            }
        }
    }
}
