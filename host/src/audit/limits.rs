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
    let (gates, checks, tools) = roles(kinds);
    let skills = kinds.contains(&Kind::Skill);
    let mut out = Vec::new();
    // None is unbounded (tool fuel): more than any bound.
    let mut check = |name: &str, now: Option<u64>, alone: Option<u64>| {
        if now.unwrap_or(u64::MAX) > alone.unwrap_or(u64::MAX) {
            let shown =
                |v: Option<u64>| v.map_or_else(|| "unbounded".to_owned(), |v| v.to_string());
            out.push(format!(
                "{name} = {} (without the grant: {})",
                shown(now),
                shown(alone)
            ));
        }
    };
    if gates {
        check(
            "fuel (gate calls)",
            Some(now.gate_fuel),
            Some(alone.gate_fuel),
        );
    }
    if tools || skills {
        check(
            "fuel (tool and skill calls)",
            now.tool_fuel,
            alone.tool_fuel,
        );
    }
    if checks {
        check(
            "timeout_ms (gate and skill calls)",
            Some(ms(now.timeout)),
            Some(ms(alone.timeout)),
        );
    }
    // Deadlines as each tool call gets them: its own, else the plugin's, else the default.
    let named: std::collections::BTreeSet<&str> = now
        .tool_timeouts
        .keys()
        .chain(alone.tool_timeouts.keys())
        .map(String::as_str)
        .collect();
    if tools {
        for tool in named {
            check(
                &format!("tool_timeout_ms.{tool}"),
                Some(ms(now.tool_timeout(tool))),
                Some(ms(alone.tool_timeout(tool))),
            );
        }
        check(
            "timeout_ms (tools without their own)",
            Some(ms(now.tool_timeout(""))),
            Some(ms(alone.tool_timeout(""))),
        );
    }
    check(
        "memory_mib",
        Some(now.memory_bytes >> 20),
        Some(alone.memory_bytes >> 20),
    );
    check(
        "max_output_kib",
        Some(now.max_output_bytes >> 10),
        Some(alone.max_output_bytes >> 10),
    );
    check(
        "disk_mib",
        Some(now.disk_bytes >> 20),
        Some(alone.disk_bytes >> 20),
    );
    check(
        "concurrency",
        Some(now.concurrency),
        Some(alone.concurrency),
    );
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
