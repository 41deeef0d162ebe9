//! Effective limits: the policy's value, else the manifest's, else the defaults here.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::manifest::{Kind, LimitSpec};

/// Fuel for a gate call when nothing says otherwise: ~600 units for a small check, so this
/// leaves three orders of magnitude of room while stopping a loop within milliseconds.
pub const DEFAULT_GATE_FUEL: u64 = 20_000_000;
/// Deadline for gate and skill calls when nothing says otherwise.
pub const DEFAULT_GATE_TIMEOUT: Duration = Duration::from_secs(1);
/// Memory cap for gate-only plugins.
pub const DEFAULT_GATE_MEMORY_MIB: u64 = 16;
/// Memory cap for every other plugin.
pub const DEFAULT_MEMORY_MIB: u64 = 64;
/// Output cap per call.
pub const DEFAULT_MAX_OUTPUT_KIB: u64 = 1024;
/// Bytes one tool or skill call may write to disk, in MiB, unless granted more.
pub const DEFAULT_DISK_MIB: u64 = 256;
/// The most a grant may give: 64 GiB.
pub const MAX_DISK_MIB: u64 = 64 * 1024;
/// Memory each program a plugin runs may take for its data (heap and writable mappings), in
/// MiB, unless granted more: a granted `tail /dev/zero` stops there instead of taking the
/// machine's memory.
pub const DEFAULT_PROGRAM_MEMORY_MIB: u64 = 1024;
/// The most a grant may give a program: 64 GiB.
pub const MAX_PROGRAM_MEMORY_MIB: u64 = 64 * 1024;
/// The largest memory cap a plugin may have (the pooling allocator reserves this per slot).
pub const MAX_MEMORY_MIB: u64 = 1024;
/// The longest deadline a call may have.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// The longest tool deadline a manifest gets without a grant: the seed's longest (shell).
pub const MAX_ASKED_TOOL_TIMEOUT: Duration = Duration::from_secs(300);
/// Fuel for load-time calls (`describe`), which nothing raises.
pub const DESCRIBE_FUEL: u64 = 500_000_000;
/// Deadline for load-time calls (`describe`), which nothing raises. A call that times out having
/// done little work is made once more (a starved machine, not a looping guest): one plugin can
/// never hold up the daemon's start for more than twice this.
pub const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(1);

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What the first-party plugins are granted beyond the defaults, as if the operator's policy
/// said so (`audit` shows it as granted). The operator's own `[plugins.NAME.limits]` replace it
/// field by field.
pub fn first_party_grant(name: &str) -> LimitSpec {
    match name {
        // CPython in a component: a ~13 MiB heap, ~0.1 M fuel per check.
        "pii" => LimitSpec {
            fuel: Some(300_000_000),
            timeout_ms: Some(2000),
            memory_mib: Some(32),
            ..LimitSpec::default()
        },
        "secrets" => LimitSpec {
            fuel: Some(200_000_000),
            memory_mib: Some(64),
            ..LimitSpec::default()
        },
        // An 8 MiB body and its headers.
        "http-fetch" => LimitSpec {
            max_output_kib: Some(8256),
            ..LimitSpec::default()
        },
        _ => LimitSpec::default(),
    }
}

/// What `manifest` asks above the defaults that `granted` does not grant: the limits an
/// install asks the operator to grant (empty when there is nothing to ask).
pub fn ungranted_asks(kinds: &[Kind], manifest: &LimitSpec, granted: &LimitSpec) -> LimitSpec {
    let all = |policy: &LimitSpec| Limits::resolve(kinds, manifest, policy);
    let (Ok(now), Ok(asked)) = (all(granted), all(manifest)) else {
        return LimitSpec::default();
    };
    let differs = |a: bool, v: Option<u64>| v.filter(|_| a);
    LimitSpec {
        fuel: differs(now.gate_fuel != asked.gate_fuel, manifest.fuel),
        timeout_ms: differs(now.timeout != asked.timeout, manifest.timeout_ms),
        tool_timeout_ms: manifest
            .tool_timeout_ms
            .iter()
            .filter(|(tool, _)| now.tool_timeouts.get(*tool) != asked.tool_timeouts.get(*tool))
            .map(|(tool, ms)| (tool.clone(), *ms))
            .collect(),
        memory_mib: differs(now.memory_bytes != asked.memory_bytes, manifest.memory_mib),
        max_output_kib: differs(
            now.max_output_bytes != asked.max_output_bytes,
            manifest.max_output_kib,
        ),
        disk_mib: differs(now.disk_bytes != asked.disk_bytes, manifest.disk_mib),
        concurrency: differs(now.concurrency != asked.concurrency, manifest.concurrency),
        program_memory_mib: differs(
            now.program_memory_bytes != asked.program_memory_bytes,
            manifest.program_memory_mib,
        ),
    }
}

/// `name = value` for each limit `spec` sets, for people.
pub fn describe(spec: &LimitSpec) -> Vec<String> {
    let mut out = Vec::new();
    for (name, v) in spec.scalars() {
        if let Some(v) = v {
            out.push(format!("{name} = {v}"));
        }
    }
    for (tool, ms) in &spec.tool_timeout_ms {
        out.push(format!("tool_timeout_ms.{tool} = {ms}"));
    }
    out
}

/// The limits granted to plugin `name`: the policy's, over the first-party grant when the
/// plugin is built in.
pub fn granted(name: &str, builtin: bool, policy: &LimitSpec) -> LimitSpec {
    if !builtin {
        return policy.clone();
    }
    let base = first_party_grant(name);
    let mut tool_timeout_ms = base.tool_timeout_ms;
    tool_timeout_ms.extend(policy.tool_timeout_ms.clone());
    LimitSpec {
        fuel: policy.fuel.or(base.fuel),
        timeout_ms: policy.timeout_ms.or(base.timeout_ms),
        tool_timeout_ms,
        memory_mib: policy.memory_mib.or(base.memory_mib),
        max_output_kib: policy.max_output_kib.or(base.max_output_kib),
        disk_mib: policy.disk_mib.or(base.disk_mib),
        concurrency: policy.concurrency.or(base.concurrency),
        program_memory_mib: policy.program_memory_mib.or(base.program_memory_mib),
    }
}

/// The seed's per-tool timeouts: shell 300 s, search-files 30 s, eval 10 s, others 120 s.
pub fn seed_tool_timeout(tool: &str) -> Duration {
    Duration::from_secs(match tool {
        "shell" => 300,
        "search-files" => 30,
        "eval" | "eval-form" => 10,
        _ => 120,
    })
}

/// The limits a plugin runs under.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Limits {
    /// Fuel per gate call (always bounded).
    pub gate_fuel: u64,
    /// Fuel per tool or skill call; `None` is unbounded (the deadline still applies).
    pub tool_fuel: Option<u64>,
    /// Deadline per gate or skill call.
    #[serde(serialize_with = "millis", rename = "timeout_ms")]
    pub timeout: Duration,
    /// Deadline per tool call, for tools with their own (others use [`seed_tool_timeout`]
    /// unless `timeout_ms` is set).
    #[serde(serialize_with = "millis_map", rename = "tool_timeout_ms")]
    pub tool_timeouts: BTreeMap<String, Duration>,
    /// Deadline for tools not in `tool_timeouts`, if one was configured.
    #[serde(serialize_with = "opt_millis", rename = "tool_default_timeout_ms")]
    pub tool_default_timeout: Option<Duration>,
    /// Memory cap, bytes.
    pub memory_bytes: u64,
    /// Output cap per call, bytes.
    pub max_output_bytes: u64,
    /// Bytes one tool or skill call may write to disk (WASI writes; RLIMIT_FSIZE for its
    /// programs).
    pub disk_bytes: u64,
    /// Tool and skill calls that may run at once ([`super::share`]).
    pub concurrency: u64,
    /// Memory each program the plugin runs may take for its data, bytes (RLIMIT_DATA).
    pub program_memory_bytes: u64,
    /// Whether the seed's per-tool timeouts apply: only to the first-party plugins, whose
    /// tools they were written for, so that a third-party tool never inherits a deadline by
    /// its name.
    #[serde(skip)]
    pub seed_timeouts: bool,
    /// What the manifest asked above the defaults and the policy did not grant, each as
    /// `name = asked (runs at default …)`: the plugin runs at the defaults for these.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capped: Vec<String>,
}

impl Limits {
    /// The limits of a plugin with `kinds` in one line, as `status` shows them: fuel per gate
    /// check and per tool or skill call (of the roles it takes), deadline, memory, output.
    pub fn summary(&self, kinds: &[Kind]) -> String {
        let millions = |f: u64| format!("{}M", f as f64 / 1e6);
        let mut fuel = Vec::new();
        if kinds.contains(&Kind::Gate) {
            fuel.push(format!("{} per check", millions(self.gate_fuel)));
        }
        if kinds.iter().any(|k| *k != Kind::Gate) {
            let per_call = self
                .tool_fuel
                .map_or_else(|| "unbounded".to_owned(), millions);
            fuel.push(format!("{per_call} per call"));
        }
        format!(
            "fuel {}; {} ms; memory {} MiB; output {} KiB",
            fuel.join(", "),
            self.timeout.as_millis(),
            self.memory_bytes >> 20,
            self.max_output_bytes >> 10
        )
    }

    /// Resolve the limits for a plugin with `kinds` from its manifest and its policy entry.
    ///
    /// # Errors
    /// A message naming the limit that is zero or past its maximum.
    pub fn resolve(
        kinds: &[Kind],
        manifest: &LimitSpec,
        policy: &LimitSpec,
    ) -> Result<Limits, String> {
        let gate_only = kinds.iter().all(|k| *k == Kind::Gate);
        let mut capped = Vec::new();
        // What a manifest asks above a default it gets only when the policy grants it: the
        // policy's value (the operator's) wins, a manifest's is capped at the default.
        let mut pick = |name: &str, asked: Option<u64>, granted: Option<u64>, default: u64| {
            if let Some(g) = granted {
                return Some(g);
            }
            let a = asked?;
            if a > default {
                capped.push(format!(
                    "{name} = {a} (runs at {default} until policy.toml grants it)"
                ));
                return Some(default);
            }
            Some(a)
        };
        // Only gate calls run on gate fuel: a tool's or skill's ask is its own bound (below),
        // never capped here.
        let gate_fuel = if kinds.contains(&Kind::Gate) {
            pick("fuel", manifest.fuel, policy.fuel, DEFAULT_GATE_FUEL).unwrap_or(DEFAULT_GATE_FUEL)
        } else {
            DEFAULT_GATE_FUEL
        };
        // Tools have no fuel bound by default: any bound a manifest asks is less.
        let tool_fuel = policy.fuel.or(manifest.fuel);
        if gate_fuel == 0 || tool_fuel == Some(0) {
            return Err("limits.fuel must be at least 1".into());
        }
        // `timeout_ms` is the deadline of gate and skill calls (default 1 s) and, for tools,
        // of every tool without its own (default: the seed's table, at most 300 s).
        let runs_checks = kinds.iter().any(|k| *k != Kind::Tool);
        let default_ms = if runs_checks {
            ms(DEFAULT_GATE_TIMEOUT)
        } else {
            ms(MAX_ASKED_TOOL_TIMEOUT)
        };
        let timeout_ms = pick(
            "timeout_ms",
            manifest.timeout_ms,
            policy.timeout_ms,
            default_ms,
        );
        let tool_default_ms = policy.timeout_ms.or(manifest
            .timeout_ms
            .map(|a| a.min(ms(MAX_ASKED_TOOL_TIMEOUT))));
        let mut tool_timeouts = BTreeMap::new();
        for (tool, asked) in &manifest.tool_timeout_ms {
            let granted = policy.tool_timeout_ms.get(tool).copied();
            let name = format!("tool_timeout_ms.{tool}");
            let ms =
                pick(&name, Some(*asked), granted, ms(MAX_ASKED_TOOL_TIMEOUT)).unwrap_or(*asked);
            tool_timeouts.insert(tool.clone(), checked_timeout(ms, &name)?);
        }
        for (tool, granted) in &policy.tool_timeout_ms {
            let name = format!("tool_timeout_ms.{tool}");
            tool_timeouts.insert(tool.clone(), checked_timeout(*granted, &name)?);
        }
        let default_memory = if gate_only {
            DEFAULT_GATE_MEMORY_MIB
        } else {
            DEFAULT_MEMORY_MIB
        };
        // A single-valued limit: picked as above, and from 1 to `most`.
        let mut bounded =
            |name: &str, asked: Option<u64>, granted: Option<u64>, default: u64, most: u64| {
                let value = pick(name, asked, granted, default).unwrap_or(default);
                if value == 0 || value > most {
                    return Err(format!("limits.{name} is {value}: use 1 to {most}"));
                }
                Ok(value)
            };
        let memory_mib = bounded(
            "memory_mib",
            manifest.memory_mib,
            policy.memory_mib,
            default_memory,
            MAX_MEMORY_MIB,
        )?;
        let output_kib = bounded(
            "max_output_kib",
            manifest.max_output_kib,
            policy.max_output_kib,
            DEFAULT_MAX_OUTPUT_KIB,
            64 * 1024,
        )?;
        let disk_mib = bounded(
            "disk_mib",
            manifest.disk_mib,
            policy.disk_mib,
            DEFAULT_DISK_MIB,
            MAX_DISK_MIB,
        )?;
        let concurrency = bounded(
            "concurrency",
            manifest.concurrency,
            policy.concurrency,
            super::share::PER_PLUGIN as u64,
            super::share::TOOLS_SHARE as u64,
        )?;
        let program_memory_mib = bounded(
            "program_memory_mib",
            manifest.program_memory_mib,
            policy.program_memory_mib,
            DEFAULT_PROGRAM_MEMORY_MIB,
            MAX_PROGRAM_MEMORY_MIB,
        )?;
        let tool_default_timeout = tool_default_ms
            .map(|ms| checked_timeout(ms, "timeout_ms"))
            .transpose()?;
        let timeout = timeout_ms
            .map(|ms| checked_timeout(ms, "timeout_ms"))
            .transpose()?;
        Ok(Limits {
            gate_fuel,
            tool_fuel,
            timeout: timeout.unwrap_or(DEFAULT_GATE_TIMEOUT),
            tool_timeouts,
            tool_default_timeout,
            memory_bytes: memory_mib << 20,
            max_output_bytes: output_kib << 10,
            disk_bytes: disk_mib << 20,
            concurrency,
            program_memory_bytes: program_memory_mib << 20,
            seed_timeouts: false,
            capped,
        })
    }

    /// The deadline for a call of tool `name`: its own, else the plugin's, else the seed's
    /// (for first-party plugins; 120 s for others).
    pub fn tool_timeout(&self, name: &str) -> Duration {
        self.tool_timeouts
            .get(name)
            .copied()
            .or(self.tool_default_timeout)
            .unwrap_or_else(|| {
                if self.seed_timeouts {
                    seed_tool_timeout(name)
                } else {
                    seed_tool_timeout("")
                }
            })
    }
}

fn checked_timeout(ms: u64, what: &str) -> Result<Duration, String> {
    let d = Duration::from_millis(ms);
    if ms == 0 || d > MAX_TIMEOUT {
        return Err(format!(
            "limits.{what} is {ms}: use 1 to {} ms",
            MAX_TIMEOUT.as_millis()
        ));
    }
    Ok(d)
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

fn opt_millis<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_millis() as u64)),
        None => s.serialize_none(),
    }
}

fn millis_map<S: serde::Serializer>(
    m: &BTreeMap<String, Duration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(m.len()))?;
    for (k, v) in m {
        map.serialize_entry(k, &(v.as_millis() as u64))?;
    }
    map.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_timeouts() {
        assert_eq!(seed_tool_timeout("shell"), Duration::from_secs(300));
        assert_eq!(seed_tool_timeout("search-files"), Duration::from_secs(30));
        assert_eq!(seed_tool_timeout("eval"), Duration::from_secs(10));
        assert_eq!(
            seed_tool_timeout("nonexistent-tool"),
            Duration::from_secs(120)
        );
    }

    #[test]
    fn policy_beats_manifest_and_specific_beats_general() {
        let manifest = LimitSpec {
            timeout_ms: Some(5000),
            memory_mib: Some(32),
            ..Default::default()
        };
        let mut policy = LimitSpec {
            memory_mib: Some(8),
            ..Default::default()
        };
        policy.tool_timeout_ms.insert("eval".into(), 250);
        let l = Limits::resolve(&[Kind::Tool], &manifest, &policy).expect("valid");
        assert_eq!(l.memory_bytes, 8 << 20);
        assert_eq!(l.tool_timeout("eval"), Duration::from_millis(250));
        assert_eq!(l.tool_timeout("shell"), Duration::from_millis(5000));
        assert_eq!(l.tool_fuel, None);
        assert_eq!(l.gate_fuel, DEFAULT_GATE_FUEL);
    }

    #[test]
    fn first_party_tools_without_a_timeout_get_the_seed_defaults() {
        let mut l = Limits::resolve(&[Kind::Tool], &LimitSpec::default(), &LimitSpec::default())
            .expect("valid");
        // A third-party plugin's tool named `shell` does not inherit the built-in's 300 s.
        assert_eq!(l.tool_timeout("shell"), Duration::from_secs(120));
        l.seed_timeouts = true;
        assert_eq!(l.tool_timeout("shell"), Duration::from_secs(300));
        assert_eq!(l.tool_timeout("read-file"), Duration::from_secs(120));
    }

    #[test]
    fn what_a_manifest_asks_above_the_defaults_needs_a_grant() {
        let greedy = LimitSpec {
            fuel: Some(u64::MAX),
            timeout_ms: Some(3_600_000),
            memory_mib: Some(1024),
            max_output_kib: Some(65536),
            ..Default::default()
        };
        let l = Limits::resolve(&[Kind::Gate], &greedy, &LimitSpec::default()).expect("valid");
        assert_eq!(
            (l.gate_fuel, l.timeout, l.memory_bytes, l.max_output_bytes),
            (
                DEFAULT_GATE_FUEL,
                DEFAULT_GATE_TIMEOUT,
                16 << 20,
                1024 << 10
            )
        );
        assert_eq!(l.capped.len(), 4, "{:?}", l.capped);
        // A tool asking a 300 s deadline (the seed's shell) gets it without a grant.
        let shell = LimitSpec {
            timeout_ms: Some(300_000),
            ..Default::default()
        };
        let l = Limits::resolve(&[Kind::Tool], &shell, &LimitSpec::default()).expect("valid");
        assert!(l.capped.is_empty(), "{:?}", l.capped);
        assert_eq!(l.tool_default_timeout, Some(Duration::from_secs(300)));
        // The first-party grant, and the operator's over it.
        let pii = LimitSpec {
            fuel: Some(300_000_000),
            memory_mib: Some(32),
            ..Default::default()
        };
        let l = Limits::resolve(
            &[Kind::Gate],
            &pii,
            &granted("pii", true, &LimitSpec::default()),
        )
        .expect("valid");
        assert_eq!((l.gate_fuel, l.memory_bytes), (300_000_000, 32 << 20));
        let l = Limits::resolve(
            &[Kind::Gate],
            &pii,
            &granted("pii", false, &LimitSpec::default()),
        )
        .expect("valid");
        assert_eq!(
            l.gate_fuel, DEFAULT_GATE_FUEL,
            "a third-party `pii` gets no first-party grant"
        );
        let operator = LimitSpec {
            fuel: Some(1_000),
            ..Default::default()
        };
        let l =
            Limits::resolve(&[Kind::Gate], &pii, &granted("pii", true, &operator)).expect("valid");
        assert_eq!((l.gate_fuel, l.memory_bytes), (1_000, 32 << 20));
    }

    #[test]
    fn out_of_range_limits_are_refused() {
        let bad = LimitSpec {
            memory_mib: Some(0),
            ..Default::default()
        };
        assert!(
            Limits::resolve(&[Kind::Gate], &bad, &LimitSpec::default())
                .is_err_and(|e| e.contains("memory_mib"))
        );
        let bad = LimitSpec {
            fuel: Some(0),
            ..Default::default()
        };
        assert!(
            Limits::resolve(&[Kind::Gate], &LimitSpec::default(), &bad)
                .is_err_and(|e| e.contains("fuel"))
        );
    }
}
