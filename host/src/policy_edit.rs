//! Writing the operator's `policy.toml`: the starter policy `passepartout init` writes
//! ([`starter`]), and grants written into an existing one keeping its comments and layout
//! (toml_edit): `plugin install` writes the limits the operator consented to.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, value};

use crate::runtime::manifest::LimitSpec;

/// The policy `init` writes: each first-party plugin gets the least it needs. `{WORKSPACE}` is
/// replaced by the workspace directory (created by `init`).
const STARTER: &str = r#"# What plugins may touch. Nothing is granted unless it is listed here AND the plugin's
# plugin.toml asks for it. `passepartout audit --policy THIS_FILE` shows the effect first;
# `passepartout plugins` lists what each plugin got.

# For plugins without an entry of their own: nothing but these limits.
# [default]
# limits = { timeout_ms = 60000 }

# files: read, write, list and search, only inside the workspace.
[plugins.files]
fs = [{ guest = "/workspace", host = {WORKSPACE}, access = "read-write" }]

# shell: these programs only, started in the workspace, arguments as a list (no shell).
# Each run is confined by the kernel to the workspace and read-only system paths (not /etc,
# /proc or your home; no network unless net grants ports). Inside the workspace a program does
# whatever it is told: grant programs as you would to a person at your keyboard. Add "git" for
# repositories. Left out on purpose: `sort` (-o overwrites any workspace file,
# --compress-program runs another program), `find` (-exec, -delete), interpreters.
[plugins.shell]
fs = [{ guest = "/workspace", host = {WORKSPACE}, access = "read-write" }]
process = ["ls", "cat", "head", "tail", "wc", "grep", "diff", "echo"]

# http-fetch: turned off until you list hosts. Replace `enabled = false` with them, e.g.
#   net = ["en.wikipedia.org", "api.github.com"]
# Names match exactly ("*.example.org" for subdomains); private, loopback and link-local
# addresses (169.254.169.254...) are refused unless granted by address, e.g. "127.0.0.1:8080".
[plugins.http-fetch]
enabled = false

# memory: queries, and giving a headline without an :ID: its derived ID.
[plugins.memory]
memory = "read-write"

# gardener: reads memory on heartbeats to find headlines without an ID.
[plugins.gardener]
memory = "read"

# Gates read their settings from [config] in their plugin.toml; override keys here, e.g.:
# [plugins.approval.config]
# known_hosts = ["en.wikipedia.org"]
"#;

/// The policy `passepartout init` writes, with `workspace` as the directory the `files` and
/// `shell` plugins get (the benchmarks run the standard plugins under it too).
pub fn starter(workspace: &Path) -> String {
    // A TOML string, quoted and escaped whatever the path holds.
    let quoted = toml::Value::String(workspace.display().to_string()).to_string();
    STARTER.replace("{WORKSPACE}", &quoted)
}

/// Why a grant could not be written into `policy.toml`: each names the file, or the limit.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    /// The policy exists but cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The policy.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// The policy is not valid TOML.
    #[error("{path}: not valid TOML: {source}")]
    Parse {
        /// The policy.
        path: PathBuf,
        /// Where and why it does not parse.
        #[source]
        source: Box<toml_edit::TomlError>,
    },
    /// `[plugins.NAME]` or its `limits` is something other than a table.
    #[error("{path}: [plugins.{plugin}] or its `limits` is not a table: edit it by hand")]
    NotATable {
        /// The policy.
        path: PathBuf,
        /// The plugin.
        plugin: String,
    },
    /// `[plugins.NAME.limits] tool_timeout_ms` is something other than an inline table.
    #[error(
        "{path}: [plugins.{plugin}.limits] tool_timeout_ms is not an inline table: edit it by hand"
    )]
    NotInlineTable {
        /// The policy.
        path: PathBuf,
        /// The plugin.
        plugin: String,
    },
    /// A limit beyond TOML's integers (64-bit signed).
    #[error("limits.{name} = {value} does not fit in TOML")]
    TooLarge {
        /// The limit.
        name: String,
        /// Its value.
        value: u64,
    },
    /// The policy's directory cannot be made.
    #[error("{dir}: {source}")]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// Why it cannot be made.
        #[source]
        source: std::io::Error,
    },
    /// The policy cannot be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The policy.
        path: PathBuf,
        /// Why it cannot be written.
        #[source]
        source: std::io::Error,
    },
}

/// Set each limit `spec` sets under `[plugins.NAME.limits]` of the policy at `path` (created
/// when missing). Other keys, comments and formatting stay as they are. A `[plugins.NAME]`
/// made here replaces `[default]` for the plugin: it starts with `[default]`'s limits (so that
/// consenting to one limit widens no other), but none of its grants, which are returned by
/// name (`fs`, `net`, ...) for the operator to be told; a grant is never widened unasked.
///
/// # Errors
/// [`GrantError`]: the policy cannot be read or parsed, a value does not fit TOML's integers,
/// or the file cannot be written; each names the file (or the limit).
pub fn grant_limits(
    path: &Path,
    plugin: &str,
    spec: &LimitSpec,
) -> Result<Vec<String>, GrantError> {
    // ambient authority: the operator's own policy file.
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(GrantError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let mut doc = text
        .parse::<DocumentMut>()
        .map_err(|source| GrantError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
    let new_entry = doc
        .get("plugins")
        .and_then(Item::as_table_like)
        .is_none_or(|p| !p.contains_key(plugin));
    let not_inherited: Vec<String> = match doc.get("default").and_then(Item::as_table_like) {
        Some(default) if new_entry => default
            .iter()
            .map(|(key, _)| key.to_owned())
            .filter(|key| key != "limits")
            .collect(),
        _ => Vec::new(),
    };
    let limits = limits_table(&mut doc, plugin).ok_or_else(|| GrantError::NotATable {
        path: path.to_owned(),
        plugin: plugin.to_owned(),
    })?;
    let int = |name: &str, v: u64| {
        i64::try_from(v).map_err(|_| GrantError::TooLarge {
            name: name.to_owned(),
            value: v,
        })
    };
    for (name, v) in spec.scalars() {
        if let Some(v) = v {
            limits.insert(name, value(int(name, v)?));
        }
    }
    if !spec.tool_timeout_ms.is_empty() {
        let tools = limits
            .entry("tool_timeout_ms")
            .or_insert_with(|| value(toml_edit::InlineTable::new()));
        let Some(tools) = tools.as_inline_table_mut() else {
            return Err(GrantError::NotInlineTable {
                path: path.to_owned(),
                plugin: plugin.to_owned(),
            });
        };
        for (tool, ms) in &spec.tool_timeout_ms {
            tools.insert(tool, int("tool_timeout_ms", *ms)?.into());
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| GrantError::CreateDir {
            dir: dir.to_owned(),
            source,
        })?;
    }
    let partial = path.with_extension("toml.partial");
    std::fs::write(&partial, doc.to_string())
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|source| GrantError::Write {
            path: path.to_owned(),
            source,
        })?;
    Ok(not_inherited)
}

/// `[plugins.NAME.limits]`, made when missing; an inline `limits = { … }` is used as it is.
/// A `[plugins.NAME]` made here starts with a copy of `[default]`'s limits: an entry replaces
/// `[default]` entirely for its plugin, so an entry holding only the consented limits would
/// raise every other limit to the built-in default.
fn limits_table<'a>(
    doc: &'a mut DocumentMut,
    plugin: &str,
) -> Option<&'a mut dyn toml_edit::TableLike> {
    let seed = like_default(doc);
    let plugins = doc
        .entry("plugins")
        .or_insert_with(|| Item::Table(implicit()))
        .as_table_like_mut()?;
    let entry = plugins
        .entry(plugin)
        .or_insert(Item::Table(seed))
        .as_table_like_mut()?;
    entry
        .entry("limits")
        .or_insert(Item::Table(Table::new()))
        .as_table_like_mut()
}

/// A table that appears only through its sub-tables (`[plugins.x]`, never `[plugins]`).
fn implicit() -> Table {
    let mut t = Table::new();
    t.set_implicit(true);
    t
}

/// A new `[plugins.NAME]`: the `limits` of `doc`'s `[default]` (a table or an inline
/// table), else an empty table that appears only through its sub-tables.
fn like_default(doc: &DocumentMut) -> Table {
    let mut entry = Table::new();
    if let Some(limits) = doc
        .get("default")
        .and_then(Item::as_table_like)
        .and_then(|d| d.get("limits"))
    {
        entry.insert("limits", fresh_copy(limits));
    }
    entry.set_implicit(entry.is_empty());
    entry
}

/// A copy of `item` whose tables are new ones: placed where the copy is inserted, not where
/// the original stands in the file.
fn fresh_copy(item: &Item) -> Item {
    let fresh = |t: &Table| {
        let mut out = Table::new();
        out.set_dotted(t.is_dotted());
        out.set_implicit(t.is_implicit());
        for (key, inner) in t.iter() {
            out.insert(key, fresh_copy(inner));
        }
        out
    };
    match item {
        Item::Table(t) => Item::Table(fresh(t)),
        Item::ArrayOfTables(tables) => {
            let mut out = toml_edit::ArrayOfTables::new();
            for t in tables.iter() {
                out.push(fresh(t));
            }
            Item::ArrayOfTables(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_written_beside_what_the_operator_wrote() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("policy.toml");
        std::fs::write(
            &path,
            "# my policy\n[plugins.pii]\nlimits = { fuel = 1 } # keep\n\n[plugins.files]\nenv = [\"LANG\"]\n",
        )
        .expect("write");
        let spec = LimitSpec {
            memory_mib: Some(32),
            ..LimitSpec::default()
        };
        grant_limits(&path, "files", &spec).expect("granted");
        grant_limits(&path, "pii", &spec).expect("granted");
        grant_limits(&path, "new-one", &spec).expect("granted");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.contains("# my policy") && text.contains("# keep"),
            "{text}"
        );
        let policy = crate::runtime::Policy::parse(&text).expect("still a policy");
        for name in ["files", "pii", "new-one"] {
            assert_eq!(
                policy.for_plugin(name).limits.memory_mib,
                Some(32),
                "{text}"
            );
        }
        assert_eq!(policy.for_plugin("pii").limits.fuel, Some(1));
        assert_eq!(policy.for_plugin("files").env, ["LANG"]);
    }

    #[test]
    fn a_new_entry_keeps_the_limits_default_gave_and_none_of_its_grants() {
        // An entry replaces [default] entirely: made with the consented limit alone, it would
        // drop the operator's disk, output and timeout limits for this plugin; made as a copy
        // of all of it, it would keep grants the operator later narrows in [default].
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("policy.toml");
        std::fs::write(
            &path,
            "[default]\nlimits = { disk_mib = 8, max_output_kib = 64, timeout_ms = 60000 }\n",
        )
        .expect("write");
        let spec = LimitSpec {
            memory_mib: Some(32),
            ..LimitSpec::default()
        };
        let dropped = grant_limits(&path, "new-one", &spec).expect("granted");
        assert!(dropped.is_empty(), "{dropped:?}");
        let text = std::fs::read_to_string(&path).expect("read");
        let policy = crate::runtime::Policy::parse(&text).expect("still a policy");
        let limits = &policy.for_plugin("new-one").limits;
        assert_eq!(limits.memory_mib, Some(32), "{text}");
        assert_eq!(limits.disk_mib, Some(8), "{text}");
        assert_eq!(limits.max_output_kib, Some(64), "{text}");
        assert_eq!(limits.timeout_ms, Some(60000), "{text}");
        // [default] itself is left as it was.
        assert_eq!(policy.default.limits.memory_mib, None, "{text}");
        assert_eq!(policy.default.limits.disk_mib, Some(8), "{text}");
        // The same with [default]'s limits as a table of their own, and a grant beside them.
        std::fs::write(
            &path,
            "[default]\nenv = [\"LANG\"]\n\n[default.limits]\ndisk_mib = 8\n",
        )
        .expect("write");
        let dropped = grant_limits(&path, "new-one", &spec).expect("granted");
        assert_eq!(dropped, ["env"], "told what it does not inherit");
        let text = std::fs::read_to_string(&path).expect("read");
        let policy = crate::runtime::Policy::parse(&text).expect("still a policy");
        let entry = policy.for_plugin("new-one");
        assert_eq!(entry.limits.memory_mib, Some(32), "{text}");
        assert_eq!(entry.limits.disk_mib, Some(8), "{text}");
        assert!(
            entry.env.is_empty(),
            "no grant widened or kept unasked: {text}"
        );
        assert_eq!(policy.default.limits.memory_mib, None, "{text}");
    }
}
