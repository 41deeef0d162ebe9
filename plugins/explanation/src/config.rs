//! The gate's configuration: `[config]` in plugin.toml, overridden per key by the operator's
//! `[plugins.explanation.config]`.

use serde_json::Value;

/// What the gate asks of an explanation, and which tools need none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Tool names (as the model calls them) treated as read-only even when they do not declare
    /// it (`read_only_tools`): an override, empty by default. A tool's own `read-only` flag is
    /// the source.
    pub read_only_tools: Vec<String>,
    /// Fewest characters an explanation may have, after trimming (`min_chars`).
    pub min_chars: usize,
    /// Fewest words (runs of non-space holding a letter or digit) (`min_words`).
    pub min_words: usize,
}

impl Default for Config {
    /// The same defaults as plugin.toml's `[config]`.
    fn default() -> Self {
        Config {
            read_only_tools: Vec::new(),
            min_chars: 12,
            min_words: 3,
        }
    }
}

impl Config {
    /// Read the configuration from the host's JSON. A key that is missing keeps its default;
    /// one of the wrong type keeps its default too, and is named in the returned warnings.
    pub fn from_json(json: &Value) -> (Config, Vec<String>) {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        if let Some(value) = json.get("read_only_tools") {
            match value.as_array() {
                Some(items) => {
                    config.read_only_tools = items
                        .iter()
                        .filter_map(|item| {
                            let name = item.as_str().map(String::from);
                            if name.is_none() {
                                warnings.push(format!(
                                    "read_only_tools: {item} is not a tool name (a string); ignored"
                                ));
                            }
                            name
                        })
                        .collect();
                }
                None => warnings.push(format!(
                    "read_only_tools must be a list of tool names, not {value}; using the defaults"
                )),
            }
        }
        for (key, slot) in [
            ("min_chars", &mut config.min_chars),
            ("min_words", &mut config.min_words),
        ] {
            if let Some(value) = json.get(key) {
                match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => *slot = n,
                    None => warnings.push(format!(
                        "{key} must be a whole number, not {value}; using {}",
                        *slot
                    )),
                }
            }
        }
        (config, warnings)
    }
}
