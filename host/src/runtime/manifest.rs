//! `plugin.toml`: what a plugin is and what it asks for. The operator's policy decides what it
//! gets (see [`crate::runtime::policy`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::capabilities::fs::{Access, FsRequest};
pub use super::capabilities::memory::MemoryAccess;

/// A plugin's manifest, read from the `plugin.toml` beside its component.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Unique name: lowercase letters, digits and `-`.
    pub name: String,
    /// Semver version.
    pub version: String,
    /// One sentence for people: what the plugin does.
    #[serde(default)]
    pub description: String,
    /// The roles the component exports: `gate`, `tool`, `skill`.
    pub kinds: Vec<Kind>,
    /// Gates run highest priority first; skills likewise. Default 0.
    #[serde(default)]
    pub priority: i32,
    /// The component's file name, beside the manifest. Default `plugin.wasm`.
    #[serde(default = "default_component")]
    pub component: String,
    /// The limits the plugin asks for; the policy may override them.
    #[serde(default)]
    pub limits: LimitSpec,
    /// The capabilities the plugin asks for; it gets those the policy also grants.
    #[serde(default)]
    pub capabilities: CapabilityRequest,
    /// Settings the plugin reads with `host.config()` (the policy's `[plugins.NAME.config]`
    /// keys replace these).
    #[serde(default)]
    pub config: toml::Table,
    /// Skills this skill builds on: they are ordered before it, and a cycle is refused.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// A skill's sensors: it is asked (`triggers`, then `prompt`) only about signals from these
    /// (`user-input`, `heartbeat`...), so other signals cost it no instance. Absent: every
    /// signal. Names as the pipeline normalises them: lowercase, `-` for `_`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensors: Option<Vec<String>>,
}

fn default_component() -> String {
    "plugin.wasm".into()
}

/// A role a plugin can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Exports `passepartout:plugin/gate`.
    Gate,
    /// Exports `passepartout:plugin/tool`.
    Tool,
    /// Exports `passepartout:plugin/skill`.
    Skill,
}

impl Kind {
    /// The WIT interface this role exports (without its version: any supported one).
    pub fn interface(self) -> &'static str {
        match self {
            Kind::Gate => "passepartout:plugin/gate",
            Kind::Tool => "passepartout:plugin/tool",
            Kind::Skill => "passepartout:plugin/skill",
        }
    }
}

/// Limits as written in a manifest or a policy; unset fields fall back (policy, then manifest,
/// then the defaults in [`crate::runtime::limits`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LimitSpec {
    /// Fuel per call. Gates always have a budget; tools only when this is set.
    pub fuel: Option<u64>,
    /// Wall-clock deadline per call, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Per-tool deadlines, by tool name, in milliseconds.
    #[serde(default)]
    pub tool_timeout_ms: BTreeMap<String, u64>,
    /// Memory cap, in MiB.
    pub memory_mib: Option<u64>,
    /// Cap on what one call may return, in KiB.
    pub max_output_kib: Option<u64>,
    /// Bytes one call may write to disk (through WASI, and per file for its programs), in MiB.
    pub disk_mib: Option<u64>,
    /// Tool and skill calls of the plugin that may run at once.
    pub concurrency: Option<u64>,
    /// Memory each program the plugin runs may take for its data (RLIMIT_DATA), in MiB.
    pub program_memory_mib: Option<u64>,
}

impl LimitSpec {
    /// Its single-valued limits by their TOML names (`tool_timeout_ms` is a table apart).
    pub fn scalars(&self) -> [(&'static str, Option<u64>); 7] {
        [
            ("fuel", self.fuel),
            ("timeout_ms", self.timeout_ms),
            ("memory_mib", self.memory_mib),
            ("max_output_kib", self.max_output_kib),
            ("disk_mib", self.disk_mib),
            ("concurrency", self.concurrency),
            ("program_memory_mib", self.program_memory_mib),
        ]
    }
}

/// The capabilities a manifest asks for.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapabilityRequest {
    /// Directories to be mounted, by the path the plugin sees.
    #[serde(default)]
    pub fs: Vec<FsRequest>,
    /// Environment variables, by name.
    #[serde(default)]
    pub env: Vec<String>,
    /// Hosts for outbound HTTP.
    #[serde(default)]
    pub net: Vec<String>,
    /// Programs it may run through the host's process interface.
    #[serde(default)]
    pub process: Vec<String>,
    /// Access to the memory store.
    #[serde(default)]
    pub memory: MemoryAccess,
}

/// Why a `plugin.toml` is not a manifest.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not TOML, or a field of the wrong type or unknown (with line and column).
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A field whose value is not allowed: which, and what is expected.
    #[error("{0}")]
    Invalid(String),
}

/// Whether `name` is a plugin's name by the manifest's rule: 1-64 lowercase ASCII letters,
/// digits and `-`.
pub fn name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl Manifest {
    /// Parse and validate a manifest.
    ///
    /// # Errors
    /// A [`ManifestError`] naming the bad field and what is expected (TOML errors carry line
    /// and column).
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let m: Manifest = toml::from_str(text)?;
        m.validate().map_err(ManifestError::Invalid)?;
        Ok(m)
    }

    fn validate(&self) -> Result<(), String> {
        if !name_ok(&self.name) {
            return Err(format!(
                "name {:?}: use 1-64 lowercase letters, digits and `-`",
                self.name
            ));
        }
        // Semver 2.0: MAJOR.MINOR.PATCH, then a `-pre.release` and a `+build` part made of
        // dot-separated identifiers of ASCII letters, digits and `-`. The version is shown in
        // every listing and every error about the plugin: it cannot carry a space, a line
        // break or an invisible character.
        let (rest, build) = match self.version.split_once('+') {
            Some((rest, build)) => (rest, Some(build)),
            None => (self.version.as_str(), None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (rest, None),
        };
        let identifiers = |part: &str| {
            part.split('.').all(|id| {
                !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        };
        let version_ok = core.split('.').count() == 3
            && core
                .split('.')
                .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            && pre.is_none_or(identifiers)
            && build.is_none_or(identifiers);
        if !version_ok {
            return Err(format!(
                "plugin {}: version {:?} is not semver: use three numbers, then optionally a \
                 pre-release after `-` and build metadata after `+`, each of ASCII letters, \
                 digits, `-` and `.` (e.g. 0.1.0, 1.0.0-rc.1+build.5)",
                self.name, self.version
            ));
        }
        if self.kinds.is_empty() {
            return Err("kinds: list at least one of gate, tool, skill".into());
        }
        if self.component.is_empty()
            || self.component.contains(['/', '\\'])
            || self.component.starts_with('.')
            || self.component == "plugin.toml"
        {
            return Err(format!(
                "component {:?}: give a file name beside plugin.toml, without a path",
                self.component
            ));
        }
        let mut guests = std::collections::BTreeSet::new();
        for fs in &self.capabilities.fs {
            crate::runtime::capabilities::fs::check_guest_path(&fs.guest)?;
            if !guests.insert(fs.guest.as_str()) {
                return Err(format!(
                    "capabilities.fs asks for {:?} twice: ask for each guest path once, with the \
                     most access it needs",
                    fs.guest
                ));
            }
        }
        // Shown to the operator and written into policy.toml: tool names only.
        if let Some(bad) = self
            .limits
            .tool_timeout_ms
            .keys()
            .find(|t| !crate::runtime::tools::valid_name(t))
        {
            return Err(format!(
                "limits.tool_timeout_ms names {bad:?}, which is not a tool name \
                 (^[a-z][a-z0-9-]{{0,63}}$)"
            ));
        }
        self.validate_sensors()
    }

    fn validate_sensors(&self) -> Result<(), String> {
        let Some(sensors) = &self.sensors else {
            return Ok(());
        };
        if !self.kinds.contains(&Kind::Skill) {
            return Err("sensors: only a skill is asked about signals; remove `sensors`".into());
        }
        if sensors.is_empty() {
            return Err(
                "sensors = []: the skill would never be asked; list the sensors it \
                 handles, or remove `sensors` to be asked about every signal"
                    .into(),
            );
        }
        let normal = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        match sensors.iter().find(|s| !normal(s)) {
            Some(bad) => Err(format!(
                "sensors names {bad:?}: write sensors as the pipeline sees them, 1-64 lowercase \
                 letters, digits and `-` (e.g. \"user-input\")"
            )),
            None => Ok(()),
        }
    }

    /// Whether the skill is asked about signals from `sensor` ([`Manifest::sensors`]).
    pub fn listens_to(&self, sensor: Option<&str>) -> bool {
        self.sensors
            .as_ref()
            .is_none_or(|list| sensor.is_some_and(|s| list.iter().any(|l| l == s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = \"p\"\nversion = \"0.1.0\"\nkinds = [\"tool\"]\n";

    #[test]
    fn a_guest_path_asked_twice_is_refused() {
        let twice = format!(
            "{BASE}[[capabilities.fs]]\nguest = \"/w\"\naccess = \"read-only\"\n\
             [[capabilities.fs]]\nguest = \"/w\"\naccess = \"read-write\"\n"
        );
        let e = Manifest::parse(&twice).expect_err("refused");
        assert!(e.to_string().contains("\"/w\" twice"), "{e}");
        let once = format!("{BASE}[[capabilities.fs]]\nguest = \"/w\"\naccess = \"read-write\"\n");
        assert!(Manifest::parse(&once).is_ok());
    }

    #[test]
    fn sensors_are_a_skills_and_written_as_the_pipeline_sees_them() {
        let skill = "name = \"p\"\nversion = \"0.1.0\"\nkinds = [\"skill\"]\n";
        let m = Manifest::parse(&format!("{skill}sensors = [\"heartbeat\"]\n")).expect("valid");
        assert!(m.listens_to(Some("heartbeat")));
        assert!(!m.listens_to(Some("tool-output")));
        assert!(!m.listens_to(None));
        let every = Manifest::parse(skill).expect("valid");
        assert!(every.listens_to(Some("tool-output")) && every.listens_to(None));
        for (bad, says) in [
            (format!("{skill}sensors = []\n"), "never be asked"),
            (
                format!("{skill}sensors = [\"User_Input\"]\n"),
                "as the pipeline sees",
            ),
            (format!("{BASE}sensors = [\"heartbeat\"]\n"), "only a skill"),
        ] {
            let e = Manifest::parse(&bad).expect_err("refused");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_version_is_semver_and_nothing_else() {
        for good in [
            "0.1.0",
            "1.0.0-rc.1",
            "1.0.0-alpha-1+build.5",
            "2.10.3+sha.0a1b",
        ] {
            let m = BASE.replace("0.1.0", good);
            assert!(Manifest::parse(&m).is_ok(), "{good}");
        }
        for bad in [
            "0.1",
            "0.1.0.1",
            "0.1.x",
            "0.1.0-",
            "0.1.0-rc..1",
            "0.1.0-rc 1",
            "0.1.0-rc\\ngrants: none",
            "0.1.0+b\\u200b",
            "0.1.0-\\U000e0041",
            "0.1.0+a+b",
            "0.1.0-é",
        ] {
            let m = BASE.replace("0.1.0", bad);
            let e = Manifest::parse(&m).expect_err(bad);
            let e = e.to_string();
            assert!(
                e.contains("plugin p: version") && e.contains("not semver"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn per_tool_deadlines_name_tools() {
        let bad = format!("{BASE}[limits]\ntool_timeout_ms = {{ \"x\\n+ widening\" = 1 }}\n");
        let e = Manifest::parse(&bad).expect_err("refused");
        assert!(e.to_string().contains("not a tool name"), "{e}");
        let good = format!("{BASE}[limits]\ntool_timeout_ms = {{ run = 1000 }}\n");
        assert!(Manifest::parse(&good).is_ok());
    }
}
