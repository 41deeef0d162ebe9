//! `passepartout plugins`: what is loaded, under which limits, with which grants.

use std::process::ExitCode;

use passepartout::runtime::{Kind, Plugin};
use passepartout::terminal::one_line;
use serde::Serialize;

use super::Loaded;

/// The JSON document `passepartout plugins --json` prints (docs/cli.md).
#[derive(Serialize)]
struct Listing<'a> {
    plugins: Vec<Entry<'a>>,
    errors: Vec<String>,
    /// Plugins not loaded until the policy grants what they need.
    disabled: Vec<String>,
    /// Plugins that may be gates and did not load: every action is refused while any is here.
    missing_gates: &'a [passepartout::runtime::loader::MissingGate],
    plugin_dir: Option<&'a std::path::Path>,
    policy_file: Option<&'a std::path::Path>,
    cache_dir: Option<&'a std::path::Path>,
    pooling: bool,
}

#[derive(Serialize)]
struct Entry<'a> {
    name: &'a str,
    version: &'a str,
    description: &'a str,
    kinds: &'a [Kind],
    priority: i32,
    origin: &'a passepartout::runtime::Origin,
    sha256: &'a str,
    from_cache: bool,
    limits: &'a passepartout::runtime::Limits,
    grants: &'a passepartout::runtime::Grants,
    tools: Vec<Tool<'a>>,
    depends_on: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    sensors: Option<&'a [String]>,
    telemetry: passepartout::runtime::plugin::TelemetrySnapshot,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    /// The plugin's own name for it, when the policy offers it under an alias.
    #[serde(skip_serializing_if = "Option::is_none")]
    own_name: Option<&'a str>,
    description: &'a str,
    read_only: bool,
    /// Argument -> the effect it declares (`x-effect`).
    effects: std::collections::BTreeMap<&'a str, passepartout::runtime::effects::EffectKind>,
    /// Not read-only and declares no effects: gates cannot see what it does.
    opaque: bool,
    timeout_ms: u64,
}

fn entry(p: &Plugin) -> Entry<'_> {
    Entry {
        name: &p.id.name,
        version: &p.id.version,
        description: &p.manifest.description,
        kinds: &p.manifest.kinds,
        priority: p.priority,
        origin: &p.origin,
        sha256: &p.sha256,
        from_cache: p.from_cache,
        limits: &p.limits,
        grants: &p.grants,
        tools: p
            .tools
            .iter()
            .map(|t| {
                let own = p.tool_aliases.get(&t.name).map(String::as_str);
                let effects: std::collections::BTreeMap<_, _> = p
                    .effect_specs
                    .get(&t.name)
                    .map(|s| s.properties.iter().map(|(k, v)| (k.as_str(), *v)).collect())
                    .unwrap_or_default();
                Tool {
                    name: &t.name,
                    own_name: own,
                    description: &t.description,
                    read_only: t.read_only,
                    opaque: !t.read_only && effects.is_empty(),
                    effects,
                    timeout_ms: p.limits.tool_timeout(own.unwrap_or(&t.name)).as_millis() as u64,
                }
            })
            .collect(),
        depends_on: &p.manifest.depends_on,
        sensors: p.manifest.sensors.as_deref(),
        telemetry: p.telemetry.snapshot(),
    }
}

pub fn run(loaded: &Loaded, json: bool) -> anyhow::Result<ExitCode> {
    let report = &loaded.report;
    let listing = Listing {
        plugins: report.plugins.iter().map(entry).collect(),
        errors: report.errors.iter().map(ToString::to_string).collect(),
        disabled: report.disabled.iter().map(ToString::to_string).collect(),
        missing_gates: &report.missing_gates,
        plugin_dir: loaded.plugin_dir.as_deref(),
        policy_file: loaded.policy_file.as_deref(),
        cache_dir: loaded.runtime.cache_dir(),
        pooling: loaded.runtime.pooling(),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&listing)?);
    } else {
        print_table(&listing);
    }
    Ok(
        if report.errors.is_empty() && report.missing_gates.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// The listing as a table. What a plugin wrote (its name, version and description, its tools'
/// names and descriptions, what its grants name) is shown on one line ([`one_line`]), and an
/// error's further lines are indented: nothing a plugin says can start a line of its own, such
/// as a fake `grants: none`, a fake tool or a whole fake plugin.
fn print_table(l: &Listing<'_>) {
    for p in &l.plugins {
        let kinds: Vec<String> = p
            .kinds
            .iter()
            .map(|k| format!("{k:?}").to_lowercase())
            .collect();
        outln!(
            "{} {}  [{}]  priority {}  ({}, {})",
            one_line(p.name),
            one_line(p.version),
            kinds.join(", "),
            p.priority,
            one_line(&p.origin_label()),
            if p.from_cache {
                "compiled: cached"
            } else {
                "compiled: now"
            }
        );
        if !p.description.is_empty() {
            outln!("  {}", one_line(p.description));
        }
        let lim = p.limits;
        let mut limits = Vec::new();
        if p.kinds.contains(&Kind::Gate) {
            limits.push(format!(
                "gate calls: fuel {}, timeout {} ms",
                lim.gate_fuel,
                lim.timeout.as_millis()
            ));
        }
        if p.kinds.iter().any(|k| *k != Kind::Gate) {
            let fuel = lim.tool_fuel.map_or("unbounded".into(), |f| f.to_string());
            limits.push(format!("tool/skill calls: fuel {fuel}"));
        }
        limits.push(format!(
            "memory {} MiB, output {} KiB",
            lim.memory_bytes >> 20,
            lim.max_output_bytes >> 10
        ));
        outln!("  limits: {}", limits.join("; "));
        let g = p.grants;
        let mut grants: Vec<String> =
            g.fs.iter()
                .map(|m| format!("fs {} -> {} ({:?})", m.guest, m.host.display(), m.access))
                .collect();
        grants.extend(
            g.env
                .iter()
                .map(|e| format!("env {}{}", e.name, if e.set { "" } else { " (unset)" })),
        );
        if !g.net.is_empty() {
            grants.push(format!("net {}", g.net.join(", ")));
        }
        if !g.process.is_empty() {
            let confined = match g.confine {
                passepartout::runtime::capabilities::confine::Confine::Kernel => "confined",
                passepartout::runtime::capabilities::confine::Confine::None => "NOT CONFINED",
            };
            grants.push(format!("process {} ({confined})", g.process.join(", ")));
        }
        match g.memory {
            passepartout::runtime::manifest::MemoryAccess::None => {}
            passepartout::runtime::manifest::MemoryAccess::Read => {
                grants.push("memory read".into())
            }
            passepartout::runtime::manifest::MemoryAccess::ReadWrite => {
                grants.push("memory read-write".into());
            }
        }
        outln!(
            "  grants: {}",
            if grants.is_empty() {
                "none".into()
            } else {
                one_line(&grants.join("; ")).into_owned()
            }
        );
        for t in &p.tools {
            outln!("{}", tool_line(t));
        }
    }
    for d in &l.disabled {
        outln!("{}", indented(d));
    }
    for e in &l.errors {
        errln!("error: {}", indented(e));
    }
    for m in l.missing_gates {
        errln!(
            "error: gate {} did not load: every action is refused until it loads or is disabled \
             with [plugins.{}] enabled = false in policy.toml",
            m.name,
            m.name
        );
    }
    outln!(
        "{} plugin(s) loaded; plugin dir {}; policy {}; instances {}",
        l.plugins.len(),
        l.plugin_dir
            .map_or("none".into(), |p| p.display().to_string()),
        l.policy_file
            .map_or("none".into(), |p| p.display().to_string()),
        if l.pooling { "pooled" } else { "on demand" }
    );
}

/// Tool `t`'s line in the table: its name and description as the plugin wrote them, on one line.
fn tool_line(t: &Tool<'_>) -> String {
    format!(
        "  tool {} ({}, timeout {} ms): {}",
        one_line(t.name),
        if t.read_only {
            "read-only"
        } else if t.opaque {
            "writes, OPAQUE: declares no effects"
        } else {
            "writes"
        },
        t.timeout_ms,
        one_line(t.description)
    )
}

/// `text` (an error, which may quote a plugin's manifest over several lines) with every line
/// but the first indented: only its first line starts at the left margin.
fn indented(text: &str) -> String {
    text.replace('\n', "\n    ")
}

impl Entry<'_> {
    fn origin_label(&self) -> String {
        self.origin.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_plugin_writes_cannot_start_a_line() {
        let tool = Tool {
            name: "ls\ngrants: none",
            own_name: None,
            description: "Lists files.\n  tool rm (read-only, timeout 1 ms): harmless\nfake 1.0.0  [tool]",
            read_only: false,
            effects: std::collections::BTreeMap::new(),
            opaque: true,
            timeout_ms: 5000,
        };
        let line = tool_line(&tool);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert_eq!(
            line,
            "  tool ls\\ngrants: none (writes, OPAQUE: declares no effects, timeout 5000 ms): \
             Lists files.\\n  tool rm (read-only, timeout 1 ms): harmless\\nfake 1.0.0  [tool]"
        );
        assert_eq!(
            indented("a.toml: TOML parse error\n1 | x\nfake 1.0.0"),
            "a.toml: TOML parse error\n    1 | x\n    fake 1.0.0"
        );
    }
}
