//! The gate's rules: `[config]` in plugin.toml, overridden per key by the operator's
//! `[plugins.approval.config]`.

use serde_json::Value;

use crate::paths::normalise;

/// The rules, as the gate applies them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Programs whose runs need approval; an entry may add words its arguments must hold
    /// (`["git", "push"]`).
    pub programs: Vec<Vec<String>>,
    /// Absolute, normalised guest paths writes may go to without asking; empty: no such rule.
    pub workspace: Vec<String>,
    /// Extra: tools whose args `path` is also judged as a place they write to, whatever they
    /// declare (the written paths come from the action's effects; this covers tools that do
    /// not declare theirs, and checks made without the host's context).
    pub write_tools: Vec<String>,
    /// Hosts fetched without asking: lower case, without a trailing dot; `*.d` for d's
    /// subdomains; IPv6 addresses in brackets.
    pub known_hosts: Vec<String>,
    /// Extra: tools whose args `url` is also judged as a place they fetch from, whatever they
    /// declare (as `write_tools`, for URLs).
    pub fetch_tools: Vec<String>,
    /// Tools whose every call needs approval, by the name called or their own name.
    pub dangerous_tools: Vec<String>,
    /// Places inside the workspace whose writing needs approval, as written in the config:
    /// files that configure programs run later outside the sandbox (`.git/`, `.envrc`,
    /// `.vscode/`...). A relative entry is a run of path components matched anywhere in a
    /// written path; an absolute one, a place and everything in it (see
    /// [`crate::paths::protected`]).
    pub protected_paths: Vec<String>,
}

/// The default `protected_paths`, as plugin.toml's `[config]` has them.
const PROTECTED_PATHS: &[&str] = &[
    ".git/",
    ".hg/",
    ".envrc",
    ".env",
    ".vscode/",
    ".idea/",
    ".devcontainer/",
    ".github/workflows/",
    ".gitlab-ci.yml",
    ".circleci/",
    ".pre-commit-config.yaml",
    ".husky/",
    ".cargo/",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".ssh/",
    ".gitconfig",
    ".wgetrc",
    ".curlrc",
];

impl Default for Config {
    /// The same defaults as plugin.toml's `[config]`.
    fn default() -> Self {
        let programs = [
            "sudo", "su", "doas", "pkexec", "run0", "dd", "mkfs", "fdisk", "parted", "shutdown",
            "reboot", "poweroff", "halt", "kill", "pkill", "killall",
        ];
        Config {
            programs: programs.iter().map(|p| vec![(*p).to_owned()]).collect(),
            workspace: vec!["/workspace".into()],
            write_tools: vec!["write-file".into()],
            known_hosts: vec![],
            fetch_tools: vec!["http-fetch".into()],
            dangerous_tools: vec![],
            protected_paths: PROTECTED_PATHS.iter().map(|p| (*p).to_owned()).collect(),
        }
    }
}

impl Config {
    /// Read the rules from the host's JSON. A missing key keeps its default; so does one of the
    /// wrong type, which is named in the returned warnings (as are list items that are ignored).
    pub fn from_json(json: &Value) -> (Config, Vec<String>) {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        if let Some(list) = strings(json, "programs", &mut warnings) {
            config.programs = list
                .iter()
                .map(|p| p.split_whitespace().map(String::from).collect::<Vec<_>>())
                .filter(|words| !words.is_empty())
                .collect();
        }
        if let Some(value) = json.get("workspace") {
            let list = match value {
                Value::String(s) if s.is_empty() => Some(vec![]),
                Value::String(s) => Some(vec![s.clone()]),
                _ => strings(json, "workspace", &mut warnings),
            };
            if let Some(list) = list {
                config.workspace = list
                    .iter()
                    .filter_map(|p| {
                        let path = normalise(p);
                        if path.is_none() {
                            warnings
                                .push(format!("workspace {p:?} is not an absolute path; ignored"));
                        }
                        path
                    })
                    .collect();
            }
        }
        if let Some(list) = strings(json, "known_hosts", &mut warnings) {
            config.known_hosts = list
                .iter()
                .filter_map(|h| known_host(h, &mut warnings))
                .collect();
        }
        for (key, slot) in [
            ("write_tools", &mut config.write_tools),
            ("fetch_tools", &mut config.fetch_tools),
            ("dangerous_tools", &mut config.dangerous_tools),
        ] {
            if let Some(list) = strings(json, key, &mut warnings) {
                *slot = list;
            }
        }
        if let Some(list) = strings(json, "protected_paths", &mut warnings) {
            config.protected_paths = list
                .iter()
                .filter_map(|p| protected_entry(p, &mut warnings))
                .collect();
        }
        (config, warnings)
    }
}

/// A `protected_paths` entry as the rule matches it (trimmed); `None`, with a warning, for one
/// that names nothing (empty) or climbs with `..`.
fn protected_entry(entry: &str, warnings: &mut Vec<String>) -> Option<String> {
    let entry = entry.trim();
    let named = entry.split('/').any(|part| !part.is_empty() && part != ".");
    if !named {
        warnings.push(format!("protected_paths: {entry:?} names no path; ignored"));
        return None;
    }
    if entry.split('/').any(|part| part == "..") {
        warnings.push(format!(
            "protected_paths: {entry:?} holds `..`; give the place itself; ignored"
        ));
        return None;
    }
    Some(entry.to_owned())
}

/// The list of strings under `key`; `None` when the key is absent or not a list.
fn strings(json: &Value, key: &str, warnings: &mut Vec<String>) -> Option<Vec<String>> {
    let value = json.get(key)?;
    let Some(items) = value.as_array() else {
        warnings.push(format!(
            "{key} must be a list of strings, not {value}; using the default"
        ));
        return None;
    };
    let mut list = Vec::with_capacity(items.len());
    for item in items {
        match item.as_str() {
            Some(s) => list.push(s.to_owned()),
            None => warnings.push(format!("{key}: {item} is not a string; ignored")),
        }
    }
    Some(list)
}

/// A `known_hosts` entry as hosts are compared: lower case, no trailing dot, IPv6 in brackets,
/// no port.
fn known_host(entry: &str, warnings: &mut Vec<String>) -> Option<String> {
    let mut host = entry.trim().to_ascii_lowercase();
    if host.ends_with('.') {
        host.pop();
    }
    let colons = host.matches(':').count();
    if colons >= 2 && !host.starts_with('[') {
        host = format!("[{host}]");
    } else if colons == 1 && !host.starts_with('[') {
        warnings.push(format!(
            "known_hosts: {entry:?} has a port; ports are ignored"
        ));
        host.truncate(host.find(':').unwrap_or(host.len()));
    }
    if host.is_empty() {
        warnings.push(format!("known_hosts: {entry:?} is not a host; ignored"));
        return None;
    }
    Some(host)
}
