//! Action effects: what an action would do, normalised, so that gates judge programs, paths,
//! URLs and memory writes instead of each tool's argument names.
//!
//! A tool declares where its effects come from in its parameters schema, with the keyword
//! `x-effect` on a property:
//!
//! | `x-effect` | the property holds | becomes |
//! | --- | --- | --- |
//! | `program` | a program name | a program run, with the `argv` property's items |
//! | `argv` | a list of arguments | the arguments of that program |
//! | `command-line` | a whole command line | a program run, split on whitespace |
//! | `path-read` | a path the tool reads | a path read (guest path and host path) |
//! | `path-write` | a path the tool writes | a path written |
//! | `url` | a URL the tool fetches | a URL (scheme, host, port, path) |
//! | `memory-write` | a memory node the tool changes | a memory write (the ID, trimmed) |
//! | `stdin` | text the program reads on standard input | the program run's `stdin` |
//!
//! The host derives the effects from the action's arguments and the plugin's mounts; a gate
//! reads them through the `action-context` interface (WIT 0.1.1). A tool that declares
//! `memory-write` may write only the headlines its call's effects name ([`memory_binding`]).
//! A tool that is not read-only and declares no effects is opaque: `audit` flags it, and gates
//! may refuse it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::capabilities::fs::Mount;

/// The schema keyword that declares an effect.
pub const KEYWORD: &str = "x-effect";

/// What a property declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectKind {
    /// A program name.
    Program,
    /// The arguments of the program.
    Argv,
    /// A whole command line.
    CommandLine,
    /// A path read.
    PathRead,
    /// A path written.
    PathWrite,
    /// A URL fetched.
    Url,
    /// A memory node changed.
    MemoryWrite,
    /// What the program reads on standard input.
    Stdin,
}

impl EffectKind {
    const ALL: [(&'static str, EffectKind); 8] = [
        ("program", EffectKind::Program),
        ("argv", EffectKind::Argv),
        ("command-line", EffectKind::CommandLine),
        ("path-read", EffectKind::PathRead),
        ("path-write", EffectKind::PathWrite),
        ("url", EffectKind::Url),
        ("memory-write", EffectKind::MemoryWrite),
        ("stdin", EffectKind::Stdin),
    ];

    fn parse(text: &str) -> Option<EffectKind> {
        Self::ALL.iter().find(|(n, _)| *n == text).map(|(_, k)| *k)
    }

    /// Its name, as `x-effect` and `policy.toml` write it.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("", |(n, _)| n)
    }
}

/// Which properties of a tool's arguments carry which effect, read from its schema at load.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EffectSpec {
    /// Property name -> what it declares.
    pub properties: BTreeMap<String, EffectKind>,
}

impl EffectSpec {
    /// Read the `x-effect` keywords of a tool's top-level properties.
    ///
    /// # Errors
    /// A keyword that is not one of the kinds above, or on a property that is not of the
    /// matching JSON type (a path that is not a string, argv that is not an array), or `argv`
    /// without `program`; the message names the property and the rule.
    pub fn from_schema(schema: &Value) -> Result<EffectSpec, String> {
        misplaced(schema, "parameters", 0)?;
        let mut spec = EffectSpec::default();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Ok(spec);
        };
        for (name, prop) in props {
            let Some(declared) = prop.get(KEYWORD) else {
                continue;
            };
            let kind = declared
                .as_str()
                .and_then(EffectKind::parse)
                .ok_or_else(|| {
                    format!(
                        "property {name:?}: {KEYWORD} is {declared}; use one of {}",
                        EffectKind::ALL.map(|(n, _)| n).join(", ")
                    )
                })?;
            let ty = prop.get("type").and_then(Value::as_str);
            let want = if kind == EffectKind::Argv {
                "array"
            } else {
                "string"
            };
            // Exactly that type: a value of another type would carry the effect unseen.
            if ty != Some(want) {
                return Err(format!(
                    "property {name:?} declares {KEYWORD} {:?} but its type is {}; it must be \
                     \"type\": {want:?}",
                    declared.as_str().unwrap_or_default(),
                    prop.get("type")
                        .map_or("missing".to_owned(), ToString::to_string)
                ));
            }
            spec.properties.insert(name.clone(), kind);
        }
        let has = |k| spec.properties.values().any(|v| *v == k);
        for dependent in ["argv", "stdin"] {
            let kind = EffectKind::parse(dependent).unwrap_or(EffectKind::Argv);
            if has(kind) && !has(EffectKind::Program) {
                return Err(format!(
                    "a property declares {KEYWORD} \"{dependent}\" but none declares \"program\""
                ));
            }
        }
        Ok(spec)
    }

    /// The effects the operator maps onto a tool that declares none itself (an MCP server's,
    /// `[mcp.NAME.effects]` in `policy.toml`): `map` names each argument's effect, `schema` is
    /// the tool's own. Only the operator declares a server tool's effects: any `x-effect` in
    /// `schema` is ignored.
    ///
    /// # Errors
    /// An argument `schema` does not have, or of another type than the effect needs; as
    /// [`EffectSpec::from_schema`].
    pub fn mapped(
        schema: &Value,
        map: &BTreeMap<String, EffectKind>,
    ) -> Result<EffectSpec, String> {
        let props = schema.get("properties").and_then(Value::as_object);
        let mut declared = Map::new();
        for (arg, kind) in map {
            let Some(prop) = props.and_then(|p| p.get(arg)) else {
                return Err(format!(
                    "argument {arg:?} is not in the tool's schema (it has: {})",
                    props.map_or_else(String::new, |p| {
                        p.keys().cloned().collect::<Vec<_>>().join(", ")
                    })
                ));
            };
            let mut one = Map::new();
            if let Some(ty) = prop.get("type") {
                one.insert("type".into(), ty.clone());
            }
            one.insert(KEYWORD.into(), Value::from(kind.name()));
            declared.insert(arg.clone(), Value::Object(one));
        }
        let mut schema = Map::new();
        schema.insert("properties".into(), Value::Object(declared));
        EffectSpec::from_schema(&Value::Object(schema))
    }

    /// Whether the tool declares any effect.
    pub fn declares(&self) -> bool {
        !self.properties.is_empty()
    }
}

/// `x-effect` anywhere but on a top-level property (nested objects, `items`, `oneOf`...) would
/// be silently ignored: refuse it, naming where it is.
fn misplaced(value: &Value, at: &str, depth: usize) -> Result<(), String> {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let here = format!("{at}.{key}");
                let top_level_property = depth == 2 && at.starts_with("parameters.properties.");
                if key == KEYWORD && !top_level_property {
                    return Err(format!(
                        "{KEYWORD} at {here}: declare effects only on top-level properties"
                    ));
                }
                misplaced(inner, &here, depth + 1)?;
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| misplaced(v, &format!("{at}[{i}]"), depth + 1)),
        _ => Ok(()),
    }
}

/// A program an action would run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProgramRun {
    /// The program, as named.
    pub program: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// The whole command line, for a `command-line` effect (program and argv are then only
    /// its whitespace-split words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// What it reads on standard input (`stdin` effect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
}

/// A path an action would read or write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathEffect {
    /// As the tool sees it (inside its mounts).
    pub guest: String,
    /// The directory or file on this machine it maps to; none outside every mount.
    pub host: Option<String>,
}

/// A URL an action would fetch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UrlEffect {
    /// As given.
    pub url: String,
    /// Lower-case scheme; empty when the text is not a URL.
    pub scheme: String,
    /// Lower-case host.
    pub host: String,
    /// The port, when given or implied by the scheme.
    pub port: Option<u16>,
    /// The path (with query), `/` when none.
    pub path: String,
}

/// Everything an action would do, as the host derives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// Programs run.
    pub programs: Vec<ProgramRun>,
    /// Paths read.
    pub reads: Vec<PathEffect>,
    /// Paths written.
    pub writes: Vec<PathEffect>,
    /// URLs fetched.
    pub urls: Vec<UrlEffect>,
    /// Memory nodes changed (their IDs, without surrounding whitespace: as the memory tool
    /// reads an ID, and as the host holds the tool to).
    pub memory_writes: Vec<String>,
}

/// Derive what `args` would do under `spec`, mapping paths through `mounts`.
pub fn derive(spec: &EffectSpec, args: &Map<String, Value>, mounts: &[Mount]) -> Effects {
    let mut fx = Effects::default();
    let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    let stdin = spec
        .properties
        .iter()
        .find(|(_, k)| **k == EffectKind::Stdin)
        .and_then(|(name, _)| text(name));
    let argv: Vec<String> = spec
        .properties
        .iter()
        .filter(|(_, k)| **k == EffectKind::Argv)
        .filter_map(|(name, _)| args.get(name).and_then(Value::as_array))
        .flatten()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    for (name, kind) in &spec.properties {
        let Some(value) = text(name) else { continue };
        match kind {
            EffectKind::Program => fx.programs.push(ProgramRun {
                program: value,
                argv: argv.clone(),
                line: None,
                stdin: stdin.clone(),
            }),
            EffectKind::CommandLine => {
                let mut words = value.split_whitespace().map(str::to_owned);
                if let Some(program) = words.next() {
                    fx.programs.push(ProgramRun {
                        program,
                        argv: words.collect(),
                        line: Some(value.clone()),
                        stdin: None,
                    });
                }
            }
            EffectKind::Argv | EffectKind::Stdin => {}
            EffectKind::PathRead => fx.reads.push(path(&value, mounts)),
            EffectKind::PathWrite => fx.writes.push(path(&value, mounts)),
            EffectKind::Url => fx.urls.push(url(&value)),
            // As the memory tool reads an ID; the host lets the call write that ID and no
            // other ([`memory_binding`]), so the gate and the write agree exactly.
            EffectKind::MemoryWrite => fx.memory_writes.push(value.trim().to_owned()),
        }
    }
    fx
}

/// The headlines a call of a tool with `spec` and `args` (its JSON arguments) may write, when
/// the tool declares its effects: those the call's `memory-write` effects name, derived as for
/// the gates ([`derive`]; memory writes do not depend on mounts), so that what the tool writes
/// is what the gates judged; none when it declares effects but no memory write (gates read
/// declared effects as all it does). `None` for a tool that declares no effects (opaque to
/// gates: its grant alone says what it may write). Arguments that are not a JSON object name
/// no headline.
pub fn memory_binding(spec: Option<&EffectSpec>, args: &str) -> Option<Vec<String>> {
    let spec = spec.filter(|s| s.declares())?;
    if !writes_memory(spec) {
        return Some(Vec::new());
    }
    let args: Map<String, Value> = serde_json::from_str(args).unwrap_or_default();
    Some(derive(spec, &args, &[]).memory_writes)
}

/// Whether `spec` maps an argument to a memory write.
fn writes_memory(spec: &EffectSpec) -> bool {
    spec.properties
        .values()
        .any(|k| *k == EffectKind::MemoryWrite)
}

/// A guest path and where it lands on this machine: the longest mount that contains it,
/// joined lexically (`..` that would leave the mount maps to nothing; cap-std refuses it at
/// run time anyway).
fn path(guest: &str, mounts: &[Mount]) -> PathEffect {
    let normal = normalise(guest);
    let host = mounts
        .iter()
        .filter_map(|m| {
            let rest = normal.strip_prefix(&m.guest)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((m, rest))
        })
        .max_by_key(|(m, _)| m.guest.len())
        .map(|(m, rest)| {
            m.host
                .join(rest.trim_start_matches('/'))
                .to_string_lossy()
                .into_owned()
        });
    PathEffect {
        guest: guest.to_owned(),
        host: if normal.is_empty() { None } else { host },
    }
}

/// `/a/./b/../c` -> `/a/c`; empty when `..` climbs above `/`. Relative paths are taken from
/// `/`.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return String::new();
                }
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn url(original: &str) -> UrlEffect {
    // As the http-fetch tool reads it: surrounding whitespace dropped.
    let text = original.trim();
    // A URL with a scheme, as a WHATWG parser reads it (browsers, JavaScript's `URL`, the
    // `url` crate under reqwest): `\` is `/` in `https://evil.example\@allowed.example/`,
    // `%65vil.example` and full-width letters are `evil.example`. A gate judges the host such
    // a tool would reach, not the one a looser reading finds.
    if let Ok(u) = url::Url::parse(text)
        && let Some(host) = u.host_str()
    {
        let path = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        };
        return UrlEffect {
            url: original.to_owned(),
            scheme: u.scheme().to_owned(),
            host: host
                .trim_matches(['[', ']'])
                .trim_end_matches('.')
                .to_ascii_lowercase(),
            port: u.port_or_known_default(),
            path: if path.is_empty() { "/".into() } else { path },
        };
    }
    let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    // user:password@host:port
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
            Ok(port) => (h, Some(port)),
            Err(_) => (authority, None),
        },
        _ => (authority, None),
    };
    let port = port.or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    });
    let path = path.split('#').next().unwrap_or("/");
    UrlEffect {
        url: original.to_owned(),
        scheme: if rest.len() == text.len() {
            String::new()
        } else {
            scheme
        },
        // `example.org.` is `example.org`.
        host: host
            .trim_matches(['[', ']'])
            .trim_end_matches('.')
            .to_ascii_lowercase(),
        port,
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
    }
}

/// Remove the `x-effect` keywords from a schema's properties (what model providers are sent).
pub fn strip(schema: &mut Value) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for prop in props.values_mut() {
            if let Some(p) = prop.as_object_mut() {
                p.remove(KEYWORD);
            }
        }
    }
}

// The action context (tool identity, the catalog, the WIT host side) lives in `context`;
// re-exported here, where the effects it carries are.
pub use super::context::{ActionContext, Catalog, ExternalTools, ToolIdentity};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(schema: Value) -> EffectSpec {
        EffectSpec::from_schema(&schema).expect("valid")
    }

    #[test]
    fn an_operator_maps_effects_onto_a_schema_that_declares_none_of_its_own() {
        let schema = json!({ "properties": {
            "path": { "type": "string" },
            "count": { "type": "integer" },
            // A server's own keyword is never taken: only the operator declares effects.
            "cmd": { "type": "string", "x-effect": "command-line" },
        }});
        let map = |pairs: &[(&str, EffectKind)]| -> BTreeMap<String, EffectKind> {
            pairs.iter().map(|(a, k)| ((*a).to_owned(), *k)).collect()
        };
        let mapped =
            EffectSpec::mapped(&schema, &map(&[("path", EffectKind::PathWrite)])).expect("fits");
        assert_eq!(
            mapped.properties,
            map(&[("path", EffectKind::PathWrite)]),
            "the server's x-effect on cmd is ignored"
        );
        assert!(
            !EffectSpec::mapped(&schema, &BTreeMap::new())
                .expect("fits")
                .declares()
        );
        let missing = EffectSpec::mapped(&schema, &map(&[("nope", EffectKind::Url)]));
        assert!(missing.is_err_and(|e| e.contains("\"nope\" is not in the tool's schema")));
        let mistyped = EffectSpec::mapped(&schema, &map(&[("count", EffectKind::PathRead)]));
        assert!(mistyped.is_err_and(|e| e.contains("\"count\"")));
        let alone = EffectSpec::mapped(&schema, &map(&[("path", EffectKind::Argv)]));
        assert!(alone.is_err(), "argv needs a program, mapped or declared");
    }

    #[test]
    fn programs_with_argv_and_command_lines() {
        let s = spec(json!({"properties": {
            "exe": {"type": "string", "x-effect": "program"},
            "params": {"type": "array", "x-effect": "argv"}
        }}));
        let fx = derive(
            &s,
            json!({"exe": "sudo", "params": ["ls", "-l"]})
                .as_object()
                .expect("obj"),
            &[],
        );
        assert_eq!(
            fx.programs,
            [ProgramRun {
                program: "sudo".into(),
                argv: vec!["ls".into(), "-l".into()],
                line: None,
                stdin: None,
            }]
        );
        let s =
            spec(json!({"properties": {"line": {"type": "string", "x-effect": "command-line"}}}));
        let fx = derive(
            &s,
            json!({"line": " rm  -rf /"}).as_object().expect("obj"),
            &[],
        );
        assert_eq!(fx.programs[0].program, "rm");
        assert_eq!(fx.programs[0].argv, ["-rf", "/"]);
        assert_eq!(fx.programs[0].line.as_deref(), Some(" rm  -rf /"));
    }

    /// `/workspace` read-write, and `/workspace/deep` inside it mounted from elsewhere.
    fn two_mounts() -> [Mount; 2] {
        [
            Mount {
                guest: "/workspace".into(),
                host: "/home/u/notes".into(),
                access: crate::runtime::manifest::Access::ReadWrite,
                resolved: "/home/u/notes".into(),
            },
            Mount {
                guest: "/workspace/deep".into(),
                host: "/srv/deep".into(),
                access: crate::runtime::manifest::Access::ReadOnly,
                resolved: "/srv/deep".into(),
            },
        ]
    }

    #[test]
    fn paths_map_through_the_longest_mount() {
        let mounts = two_mounts();
        let s = spec(json!({"properties": {"path": {"type": "string", "x-effect": "path-write"}}}));
        let host = |p: &str| {
            derive(&s, json!({ "path": p }).as_object().expect("obj"), &mounts).writes[0]
                .host
                .clone()
        };
        assert_eq!(
            host("/workspace/a.txt").as_deref(),
            Some("/home/u/notes/a.txt")
        );
        assert_eq!(host("/workspace/deep/x").as_deref(), Some("/srv/deep/x"));
        assert_eq!(host("/workspace/../etc/passwd"), None);
        assert_eq!(host("/workspacex/a"), None);
        assert_eq!(host("/../../etc"), None);
    }

    proptest::proptest! {
        /// Whatever a model or a client writes as a path, the host path gates are shown is
        /// inside the mount that holds it, with no `..` left: a gate judging host paths can
        /// trust them.
        #[test]
        fn a_mapped_path_never_leaves_its_mount(
            parts in proptest::collection::vec(
                proptest::prop_oneof!["workspace", "deep", "a", "..", ".", "", "b.txt"],
                0..8,
            ),
            leading_slash in proptest::bool::ANY,
        ) {
            let mounts = two_mounts();
            let guest = format!("{}{}", if leading_slash { "/" } else { "" }, parts.join("/"));
            let mapped = path(&guest, &mounts);
            if let Some(host) = mapped.host {
                let host = std::path::Path::new(&host);
                proptest::prop_assert!(
                    host.starts_with("/home/u/notes") || host.starts_with("/srv/deep"),
                    "{guest} -> {}", host.display()
                );
                proptest::prop_assert!(
                    !host.components().any(|c| c == std::path::Component::ParentDir),
                    "{guest} -> {}", host.display()
                );
                // The deeper mount wins for what it holds.
                let normal = normalise(&guest);
                if normal == "/workspace/deep" || normal.starts_with("/workspace/deep/") {
                    proptest::prop_assert!(host.starts_with("/srv/deep"));
                }
            }
        }
    }

    #[test]
    fn urls_are_split() {
        let u = url("HTTPS://user:pw@Example.ORG:8443/a/b?q=1#frag");
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.port, u.path.as_str()),
            ("https", "example.org", Some(8443), "/a/b?q=1")
        );
        let u = url("http://[::1]/x");
        assert_eq!((u.host.as_str(), u.port), ("::1", Some(80)));
        let u = url("example.org");
        assert_eq!((u.scheme.as_str(), u.host.as_str()), ("", "example.org"));
        // What the fetching tool would read: whitespace and a trailing dot change nothing.
        let u = url(" https://Evil.example./x\t");
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.path.as_str()),
            ("https", "evil.example", "/x")
        );
        // Where a WHATWG client goes, whatever a looser reading finds.
        for tricky in [
            "https://evil.example\\@allowed.example/",
            "https://%65vil.example/",
            "https://\u{ff25}\u{ff36}\u{ff29}\u{ff2c}.example/",
            "https://allowed.example@evil.example/",
        ] {
            assert_eq!(url(tricky).host, "evil.example", "{tricky}");
        }
    }

    /// `" X "` is the headline `X` to the gates, as it is to the memory tool, which writes
    /// `X`; the call may write that ID and no other.
    #[test]
    fn memory_writes_are_trimmed_and_bind_the_call() {
        let s = spec(json!({"properties": {
            "id": {"type": "string", "x-effect": "memory-write"},
            "note": {"type": "string"}
        }}));
        let fx = derive(&s, json!({"id": " X \n"}).as_object().expect("obj"), &[]);
        assert_eq!(fx.memory_writes, ["X"]);
        assert_eq!(
            memory_binding(Some(&s), r#"{"id": " X ", "note": "other"}"#),
            Some(vec!["X".to_owned()])
        );
        assert_eq!(memory_binding(Some(&s), "{}"), Some(vec![]), "names none");
        assert_eq!(memory_binding(Some(&s), "not json"), Some(vec![]));
        let none =
            spec(json!({"properties": {"path": {"type": "string", "x-effect": "path-read"}}}));
        // Declared effects are all gates see: one that declares no memory write writes none.
        assert_eq!(
            memory_binding(Some(&none), r#"{"path": "/a"}"#),
            Some(vec![])
        );
        let opaque = spec(json!({"properties": {"path": {"type": "string"}}}));
        assert_eq!(memory_binding(Some(&opaque), r#"{"id": "X"}"#), None);
        assert_eq!(memory_binding(None, r#"{"id": "X"}"#), None);
    }

    #[test]
    fn bad_declarations_are_refused_naming_the_property() {
        for (schema, needle) in [
            (
                json!({"properties": {"p": {"x-effect": "teleport"}}}),
                "\"p\"",
            ),
            (
                json!({"properties": {"p": {"type": "integer", "x-effect": "path-read"}}}),
                "must be",
            ),
            (
                json!({"properties": {"a": {"type": "array", "x-effect": "argv"}}}),
                "program",
            ),
            (json!({"x-effect": "url"}), "only on top-level properties"),
            (json!({"properties": {"p": {"x-effect": "url"}}}), "missing"),
            (
                json!({"properties": {"o": {"type": "object", "properties": {"u": {"type": "string", "x-effect": "url"}}}}}),
                "parameters.properties.o.properties.u.x-effect",
            ),
            (
                json!({"properties": {"l": {"type": "array", "items": {"type": "string", "x-effect": "path-read"}}}}),
                "only on top-level",
            ),
        ] {
            let err = EffectSpec::from_schema(&schema).expect_err("refused");
            assert!(err.contains(needle), "{err}");
        }
    }
}
