//! The limits part of a plugin's audit: what its manifest asks, what the policy grants, what is
//! in force ([`Limits::resolve`], the runtime's own), and findings for every limit above the
//! defaults, asked or granted.

use super::{FindingKind, PluginAudit, Severity, finding};
use crate::runtime::manifest::{Kind, LimitSpec, Manifest};
use crate::runtime::policy::PluginPolicy;
use crate::runtime::{Deadlines, Limits};

/// Tool fuel at or above this is no bound in practice (2^62 units is centuries of compute).
const NO_BOUND_IN_PRACTICE: u64 = 1 << 62;

/// Fill in `audit`'s limits for `manifest` under `entry`.
pub(crate) fn audit(
    audit: &mut PluginAudit,
    manifest: &Manifest,
    entry: &PluginPolicy,
    builtin: bool,
    deadlines: Deadlines,
) {
    let name = &manifest.name;
    let granted = crate::runtime::limits::granted(name, builtin, &entry.limits);
    audit.limits_asked = manifest.limits.clone();
    audit.limits_granted = granted.clone();
    let limits = match Limits::resolve(&manifest.kinds, &manifest.limits, &granted) {
        // The seed's per-tool deadlines apply to the first-party plugins, as the loader says.
        Ok(l) => Limits {
            seed_timeouts: builtin,
            ..l
        },
        Err(e) => {
            audit
                .findings
                .push(finding(FindingKind::Invalid, Severity::High, e));
            return;
        }
    };
    for asked in &limits.capped {
        audit.findings.push(finding(
            FindingKind::LimitNotGranted,
            Severity::Low,
            format!(
                "plugin.toml asks limits.{asked}: it runs at the default; grant it under \
                 [plugins.{name}.limits] if the plugin needs it"
            ),
        ));
    }
    // What the policy grants beyond what the manifest alone gets (its asks capped at the
    // defaults): the operator's decision, shown so that a reviewer sees every raised limit.
    if let Ok(alone) = Limits::resolve(&manifest.kinds, &manifest.limits, &LimitSpec::default())
        .map(|l| Limits {
            seed_timeouts: builtin,
            ..l
        })
    {
        let raised = above(&limits, &alone, &manifest.kinds);
        if !raised.is_empty() {
            audit.findings.push(finding(
                FindingKind::LimitGranted,
                Severity::Info,
                format!(
                    "runs with limits above the defaults, granted {}: {}",
                    if builtin && entry.limits == LimitSpec::default() {
                        "to this first-party plugin by the runtime"
                    } else {
                        "by policy.toml"
                    },
                    raised.join(", ")
                ),
            ));
        }
    }
    let unbounded = limits.tool_fuel.is_none_or(|f| f >= NO_BOUND_IN_PRACTICE);
    if unbounded && manifest.kinds.iter().any(|k| *k != Kind::Gate) {
        audit.findings.push(finding(
            FindingKind::UnboundedLimit,
            Severity::Info,
            format!(
                "tool and skill calls have no fuel bound in practice; {}. Set limits.fuel to \
                 bound their compute deterministically.",
                deadlines.enforced()
            ),
        ));
    }
    audit.limits = Some(limits);
}

/// Each limit of `now` above the same limit in `alone`, as `name = now (without the grant:
/// a)`.
pub(crate) fn above(now: &Limits, alone: &Limits, kinds: &[Kind]) -> Vec<String> {
    let shown = |v: Option<u64>| v.map_or_else(|| "unbounded".to_owned(), |v| v.to_string());
    pairs(now, alone, kinds, [])
        .into_iter()
        // None is unbounded (tool fuel): more than any bound.
        .filter(|(_, now, alone)| now.unwrap_or(u64::MAX) > alone.unwrap_or(u64::MAX))
        .map(|(name, now, alone)| {
            format!(
                "{name} = {} (without the grant: {})",
                shown(now),
                shown(alone)
            )
        })
        .collect()
}

/// The limits in force of `a` and `b` side by side, by name, for the calls a plugin with
/// `kinds` makes (None: unbounded tool fuel). Deadlines are as each call gets them: for each
/// tool with a deadline of its own in either, or named in `tools`, and for the rest.
pub(crate) fn pairs<'a>(
    a: &'a Limits,
    b: &'a Limits,
    kinds: &[Kind],
    tools: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, Option<u64>, Option<u64>)> {
    let (gates, checks, runs_tools) = roles(kinds);
    let mut out = Vec::new();
    let mut both = |name: &str, f: &dyn Fn(&Limits) -> Option<u64>| {
        out.push((name.to_owned(), f(a), f(b)));
    };
    if gates {
        both("fuel (gate calls)", &|l| Some(l.gate_fuel));
    }
    // Skill calls run on the tools' fuel.
    if runs_tools || kinds.contains(&Kind::Skill) {
        both("fuel (tool and skill calls)", &|l| l.tool_fuel);
    }
    if checks {
        both("timeout_ms (gate and skill calls)", &|l| {
            Some(ms(l.timeout))
        });
    }
    if runs_tools {
        let named: std::collections::BTreeSet<&str> = a
            .tool_timeouts
            .keys()
            .chain(b.tool_timeouts.keys())
            .map(String::as_str)
            .chain(tools)
            .collect();
        for tool in named {
            both(&format!("deadline of tool {tool:?} (ms)"), &|l| {
                Some(ms(l.tool_timeout(tool)))
            });
        }
        both("deadline of other tools (ms)", &|l| {
            Some(ms(l.tool_timeout("")))
        });
    }
    both("memory_mib", &|l| Some(l.memory_bytes >> 20));
    both("max_output_kib", &|l| Some(l.max_output_bytes >> 10));
    both("disk_mib", &|l| Some(l.disk_bytes >> 20));
    both("concurrency", &|l| Some(l.concurrency));
    both("program_memory_mib", &|l| {
        Some(l.program_memory_bytes >> 20)
    });
    out
}

/// Which calls a plugin with `kinds` makes: gate calls, gate or skill calls (their deadline),
/// tool calls.
pub(crate) fn roles(kinds: &[Kind]) -> (bool, bool, bool) {
    (
        kinds.contains(&Kind::Gate),
        kinds.iter().any(|k| *k != Kind::Tool),
        kinds.contains(&Kind::Tool),
    )
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
