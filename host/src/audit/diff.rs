//! `passepartout audit diff OLD NEW`: everything an update changes in what a plugin can do and
//! what it tells the model: its component (sha256), capabilities asked and imported, limits,
//! tools (added, removed, description or schema changed, read-only or effects changed),
//! priority, `[config]`, roles, imports and exports. Each line says whether it widens, narrows
//! or neither; a widening, and a change in what the model is told, need the operator's consent
//! for an update. A gate's code and config are its rules: a new component or a changed config
//! of a gate is a widening (what it rejected or held may now pass), as is a gate that stops
//! being one.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::PluginAudit;
use super::told::line_diff;
use crate::runtime::manifest::{CapabilityRequest, Kind};

/// Which way a change moves what the plugin can do.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// It can do more, or gates see less of what it does.
    Widening,
    /// It can do less.
    Narrowing,
    /// Neither (what it says, its place, its settings).
    Neutral,
}

/// One difference.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// `component`, `capability`, `import`, `export`, `role`, `limit`, `tool`, `priority`,
    /// `sensors` or `config`.
    pub what: &'static str,
    /// What changed, e.g. `network: asks for api.example.org`.
    pub item: String,
    /// Which way.
    pub direction: Direction,
    /// Whether it changes what the model is told (a tool added, or its description or schema
    /// changed): the model reads it, so an update asks consent for it.
    pub told_to_model: bool,
    /// For a changed text, its lines removed (`- `) and added (`+ `).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Everything that differs between two audits of a plugin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Diff {
    /// `name version` of the old one.
    pub old: String,
    /// `name version` of the new one.
    pub new: String,
    /// Every change, widenings first.
    pub changes: Vec<Change>,
}

impl Diff {
    /// Whether the update widens what the plugin can do.
    pub fn widens(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.direction == Direction::Widening)
    }

    /// Whether an update needs consent: a widening, or a change in what the model is told.
    /// Never for narrowings alone.
    pub fn needs_consent(&self) -> bool {
        self.widens() || self.changes.iter().any(|c| c.told_to_model)
    }
}

/// What makes `audit diff` fail (exit 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    /// Any widening.
    Widening,
    /// Anything `plugin update` asks consent for: a widening, or a change in what the model is
    /// told (a tool's description or schema).
    Consent,
    /// A finding of the new build at or above this level.
    Level(super::Severity),
}

impl FailOn {
    /// Parse `widening`, `consent` or a level (`info`, `low`, `medium`, `high`).
    ///
    /// # Errors
    /// Anything else, with what is accepted.
    pub fn parse(text: &str) -> Result<FailOn, String> {
        use clap::ValueEnum;
        match text {
            "widening" => return Ok(FailOn::Widening),
            "consent" => return Ok(FailOn::Consent),
            _ => {}
        }
        super::Severity::from_str(text, true)
            .map(FailOn::Level)
            .map_err(|_| format!("{text:?}: use widening, consent, info, low, medium or high"))
    }

    /// Whether `diff`, with `new` the new build's audit, meets it.
    pub fn met(self, diff: &Diff, new: &PluginAudit) -> bool {
        match self {
            FailOn::Widening => diff.widens(),
            FailOn::Consent => diff.needs_consent(),
            FailOn::Level(level) => new.findings.iter().any(|f| f.severity >= level),
        }
    }
}

/// Collects changes.
#[derive(Default)]
struct Changes(Vec<Change>);

impl Changes {
    fn push(&mut self, what: &'static str, item: String, direction: Direction) {
        self.0.push(Change {
            what,
            item,
            direction,
            told_to_model: false,
            detail: String::new(),
        });
    }

    fn told(&mut self, item: String, direction: Direction, detail: String) {
        self.0.push(Change {
            what: "tool",
            item,
            direction,
            told_to_model: true,
            detail,
        });
    }

    /// Items only in `new` widen (`grow`) or are neutral; items only in `old` narrow.
    fn sets<T: Ord + std::fmt::Display>(
        &mut self,
        what: &'static str,
        old: &BTreeSet<T>,
        new: &BTreeSet<T>,
        grow: Direction,
    ) {
        for added in new.difference(old) {
            self.push(what, format!("adds {added}"), grow);
        }
        let shrink = if grow == Direction::Widening {
            Direction::Narrowing
        } else {
            Direction::Neutral
        };
        for removed in old.difference(new) {
            self.push(what, format!("removes {removed}"), shrink);
        }
    }

    /// A number that widens when it grows.
    fn more(&mut self, what: &'static str, name: &str, old: Option<u64>, new: Option<u64>) {
        let shown = |v: Option<u64>| v.map_or_else(|| "unbounded".to_owned(), |v| v.to_string());
        // None is unbounded: more than any bound.
        let rank = |v: Option<u64>| v.unwrap_or(u64::MAX);
        if old == new {
            return;
        }
        let direction = if rank(new) > rank(old) {
            Direction::Widening
        } else {
            Direction::Narrowing
        };
        self.push(
            what,
            format!("{name}: {} -> {}", shown(old), shown(new)),
            direction,
        );
    }
}

/// Compare two audits.
pub fn diff(old: &PluginAudit, new: &PluginAudit) -> Diff {
    let mut c = Changes::default();
    let none = CapabilityRequest::default();
    let asked = |a: &PluginAudit| a.manifest.as_ref().map(|m| m.capabilities.clone());
    capabilities(
        &mut c,
        &asked(old).unwrap_or_else(|| none.clone()),
        &asked(new).unwrap_or(none),
    );
    let imported = |a: &PluginAudit| -> BTreeSet<String> {
        a.capabilities
            .iter()
            .filter(|r| !r.imported.is_empty())
            .map(|r| r.capability.to_owned())
            .collect()
    };
    c.sets(
        "capability",
        &imported(old)
            .into_iter()
            .map(|n| format!("imports {n}"))
            .collect(),
        &imported(new)
            .into_iter()
            .map(|n| format!("imports {n}"))
            .collect(),
        Direction::Widening,
    );
    let roles = |a: &PluginAudit| -> BTreeSet<String> {
        a.kinds.iter().map(|k| k.interface().to_owned()).collect()
    };
    let gate = Kind::Gate.interface();
    let mut old_roles = roles(old);
    if !new.kinds.contains(&Kind::Gate) {
        // Said below, as the widening it is.
        old_roles.remove(gate);
    }
    c.sets("role", &old_roles, &roles(new), Direction::Widening);
    // A gate that stops being one is a check that no longer runs: what it stopped now passes.
    if old.kinds.contains(&Kind::Gate) && !new.kinds.contains(&Kind::Gate) {
        c.push(
            "role",
            "no longer a gate: the actions it rejected or held for approval pass".into(),
            Direction::Widening,
        );
    }
    let set = |v: &[String]| -> BTreeSet<String> { v.iter().cloned().collect() };
    c.sets(
        "import",
        &set(&old.imports),
        &set(&new.imports),
        Direction::Neutral,
    );
    c.sets(
        "export",
        &set(&old.exports),
        &set(&new.exports),
        Direction::Neutral,
    );
    limits(&mut c, old, new);
    tools(&mut c, old, new);
    if old.priority != new.priority {
        c.push(
            "priority",
            match (old.walk_position, new.walk_position) {
                (None, None) => format!("{} -> {}", shown(old.priority), shown(new.priority)),
                (o, n) => format!(
                    "{} -> {} (its place in the walk: {} -> {})",
                    shown(old.priority),
                    shown(new.priority),
                    shown(o),
                    shown(n)
                ),
            },
            Direction::Neutral,
        );
    }
    sensors(&mut c, old.sensors.as_deref(), new.sensors.as_deref());
    // A gate's rules are its code and its config: either changed, what it rejected or held
    // for approval may now pass, and nothing else in the diff would say so.
    let gate = old.kinds.contains(&Kind::Gate) || new.kinds.contains(&Kind::Gate);
    component(&mut c, old.sha256.as_deref(), new.sha256.as_deref(), gate);
    config(&mut c, &old.config, &new.config, gate);
    let mut changes = c.0;
    changes.sort_by(|a, b| a.direction.cmp(&b.direction).then_with(|| a.cmp(b)));
    Diff {
        old: format!("{} {}", old.name, old.version),
        new: format!("{} {}", new.name, new.version),
        changes,
    }
}

fn shown<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// What the manifest asks, capability by capability: a mount compared by its path and access
/// (read-write -> read-only narrows), memory by its level, the rest item by item.
fn capabilities(c: &mut Changes, old: &CapabilityRequest, new: &CapabilityRequest) {
    // The most access asked per guest path (a path asked twice gets both).
    let mounts = |r: &CapabilityRequest| -> BTreeMap<String, crate::runtime::manifest::Access> {
        let mut most = BTreeMap::new();
        for f in &r.fs {
            let access = most.entry(f.guest.clone()).or_insert(f.access);
            *access = (*access).max(f.access);
        }
        most
    };
    let (om, nm) = (mounts(old), mounts(new));
    for (guest, access) in &nm {
        match om.get(guest) {
            None => c.push(
                "capability",
                format!("filesystem: asks for {guest} ({access:?})"),
                Direction::Widening,
            ),
            Some(before) if before != access => c.push(
                "capability",
                format!("filesystem: {guest} {before:?} -> {access:?}"),
                if access > before {
                    Direction::Widening
                } else {
                    Direction::Narrowing
                },
            ),
            Some(_) => {}
        }
    }
    for (guest, access) in om.iter().filter(|(g, _)| !nm.contains_key(*g)) {
        c.push(
            "capability",
            format!("filesystem: no longer asks for {guest} ({access:?})"),
            Direction::Narrowing,
        );
    }
    for (name, o, n) in [
        ("environment", &old.env, &new.env),
        ("network", &old.net, &new.net),
        ("process", &old.process, &new.process),
    ] {
        let set = |v: &Vec<String>| -> BTreeSet<String> {
            v.iter().map(|i| format!("{name}: {i}")).collect()
        };
        c.sets("capability", &set(o), &set(n), Direction::Widening);
    }
    if old.memory != new.memory {
        c.push(
            "capability",
            format!("memory: {:?} -> {:?}", old.memory, new.memory),
            if new.memory > old.memory {
                Direction::Widening
            } else {
                Direction::Narrowing
            },
        );
    }
}

/// The limits in force under the policy, one by one; deadlines as each tool and skill call
/// gets them (a tool without its own has the plugin's, else the seed's or 120 s).
fn limits(c: &mut Changes, old: &PluginAudit, new: &PluginAudit) {
    let (Some(ol), Some(nl)) = (&old.limits, &new.limits) else {
        return;
    };
    // The calls either build makes.
    let kinds: Vec<Kind> = old.kinds.iter().chain(&new.kinds).copied().collect();
    let named = old.tools.iter().chain(&new.tools).map(|t| t.name.as_str());
    for (name, o, n) in super::limits::pairs(ol, nl, &kinds, named) {
        c.more("limit", &name, o, n);
    }
    // What the new build asks above the defaults and the policy does not grant: `plugin
    // update` asks to grant it, so it needs consent like a widening.
    let asks = |a: &PluginAudit| -> BTreeSet<String> {
        a.manifest
            .as_ref()
            .map(|m| {
                crate::runtime::limits::describe(&crate::runtime::limits::ungranted_asks(
                    &m.kinds,
                    &m.limits,
                    &a.limits_granted,
                ))
            })
            .unwrap_or_default()
            .into_iter()
            .collect()
    };
    // An ask the old build did not make (one it made and was never granted is no change,
    // though `plugin update` asks to grant it again).
    for ask in asks(new).difference(&asks(old)) {
        c.push(
            "limit",
            format!("asks {ask}, above the default (an update grants it)"),
            Direction::Widening,
        );
    }
}

/// Tools by name: added (the model is told of it; widening), removed (narrowing), and for one
/// in both, its description and schema (told to the model), read-only and effects.
fn tools(c: &mut Changes, old_audit: &PluginAudit, new_audit: &PluginAudit) {
    // A build whose tools could not be read (it does not load under this policy: turned off,
    // or waiting for a grant) cannot be compared: what it would tell the model is unknown,
    // and asks consent.
    for (which, a) in [("old", old_audit), ("new", new_audit)] {
        if let Some(why) = &a.tools_unread {
            c.told(
                format!(
                    "the {which} build's tools could not be read, so they were not compared ({why})"
                ),
                Direction::Widening,
                String::new(),
            );
        }
    }
    let (old, new) = (&old_audit.tools, &new_audit.tools);
    for n in new {
        let Some(o) = old.iter().find(|o| o.name == n.name) else {
            c.told(
                format!(
                    "adds tool {:?}{}",
                    n.name,
                    if n.read_only { " (read-only)" } else { "" }
                ),
                Direction::Widening,
                line_diff("", &n.description),
            );
            continue;
        };
        if o.description_sha256 != n.description_sha256 {
            c.told(
                format!("tool {:?}: description changed", n.name),
                Direction::Neutral,
                line_diff(&o.description, &n.description),
            );
        }
        if o.schema_sha256 != n.schema_sha256 {
            c.told(
                format!("tool {:?}: parameters schema changed", n.name),
                Direction::Neutral,
                line_diff(&pretty(&o.schema), &pretty(&n.schema)),
            );
        }
        if o.read_only != n.read_only {
            c.push(
                "tool",
                format!(
                    "tool {:?}: {}",
                    n.name,
                    if n.read_only {
                        "now says it is read-only"
                    } else {
                        "no longer says it is read-only"
                    }
                ),
                if n.read_only {
                    Direction::Narrowing
                } else {
                    Direction::Widening
                },
            );
        }
        // An effect no longer declared is one gates no longer see: a widening.
        for (arg, kind) in &o.effects {
            if n.effects.get(arg) != Some(kind) {
                c.push(
                    "tool",
                    format!("tool {:?}: no longer declares {arg} as {kind}", n.name),
                    Direction::Widening,
                );
            }
        }
        for (arg, kind) in &n.effects {
            if o.effects.get(arg) != Some(kind) {
                c.push(
                    "tool",
                    format!("tool {:?}: declares {arg} as {kind}", n.name),
                    Direction::Neutral,
                );
            }
        }
    }
    for o in old.iter().filter(|o| !new.iter().any(|n| n.name == o.name)) {
        c.push(
            "tool",
            format!("removes tool {:?}", o.name),
            Direction::Narrowing,
        );
    }
}

/// A JSON text pretty-printed (one key per line, for a line diff), or as it is.
fn pretty(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_owned())
}

/// The component's sha256, old -> new: for a gate (`gate`) a widening, since its code is its
/// rules; for a tool or skill neither (what its code reaches is in the capability and import
/// lines).
fn component(c: &mut Changes, old: Option<&str>, new: Option<&str>, gate: bool) {
    if old == new {
        return;
    }
    let (item, direction) = if gate {
        (
            format!(
                "sha256 {} -> {} (a gate's code is its rules: what it rejected or held may now \
                 pass)",
                shown(old),
                shown(new)
            ),
            Direction::Widening,
        )
    } else {
        (
            format!("sha256 {} -> {}", shown(old), shown(new)),
            Direction::Neutral,
        )
    };
    c.push("component", item, direction);
}

/// The `[config]` in force, key by key: for a gate (`gate`) each change is a widening, since
/// its config is its rules (`known_hosts = ["*"]`); for a tool or skill neither.
fn config(c: &mut Changes, old: &serde_json::Value, new: &serde_json::Value, gate: bool) {
    let empty = serde_json::Map::new();
    let o = old.as_object().unwrap_or(&empty);
    let n = new.as_object().unwrap_or(&empty);
    let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        let (before, after) = (o.get(key), n.get(key));
        if before != after {
            let shown =
                |v: Option<&serde_json::Value>| v.map_or_else(|| "unset".into(), |v| v.to_string());
            c.push(
                "config",
                format!("{key}: {} -> {}", shown(before), shown(after)),
                if gate {
                    Direction::Widening
                } else {
                    Direction::Neutral
                },
            );
        }
    }
}

/// A skill's sensors: listening to more (or, with no list, to every signal) is a widening, as
/// the skill then sees the text of more signals.
fn sensors(c: &mut Changes, old: Option<&[String]>, new: Option<&[String]>) {
    match (old, new) {
        (None, None) => {}
        (Some(_), None) => c.push(
            "sensors",
            "no longer lists its sensors: asked about every signal".into(),
            Direction::Widening,
        ),
        (None, Some(list)) => c.push(
            "sensors",
            format!("asked only about {}", list.join(", ")),
            Direction::Narrowing,
        ),
        (Some(o), Some(n)) => c.sets(
            "sensors",
            &o.iter().collect(),
            &n.iter().collect(),
            Direction::Widening,
        ),
    }
}
