//! Tables of cases a plugin is tested against under the real runtime (`passepartout plugin
//! test`): a gate's verdicts, a tool's outputs and errors, a skill's triggers and prompts.
//!
//! ```json
//! { "about": "what these cases are",
//!   "mounts": { "/workspace": "fixtures/workspace" },
//!   "cases": [
//!     { "name": "sudo is refused", "action": { "tool": "shell", "args": { "program": "sudo" } },
//!       "expect": "reject", "reason": "sudo" },
//!     { "name": "one plus one", "tool": "eval", "args": { "expression": "(+ 1 1)" },
//!       "output": "2" },
//!     { "name": "a bad expression", "tool": "eval", "args": { "expression": "(" },
//!       "error": "unbalanced" },
//!     { "name": "answers #echo", "signal": { "sensor": "user-input", "text": "hi #echo" },
//!       "triggers": true, "prompt": "hi" } ] }
//! ```
//!
//! A gate case is an `action` (as `passepartout verify` reads one) and an optional `signal`;
//! `expect` is `pass`, `modify`, `reject` or `require-approval`, and `reason` a text the gate's
//! reason must contain; `conceals` a text (a secret the gate found) no piece of which may be in
//! the reason ([`shown_piece`]). A gate is asked as the daemon asks it: with the effects the loaded
//! tools give the action. A tool case names the `tool` and its `args`, and expects its
//! `output` to contain a text, or an `error` (the tool's own) containing one. A skill case
//! gives a `signal` and whether it `triggers`, and a text its `prompt` must contain. `mounts`
//! maps the paths the plugin asks for to directories inside the cases file's folder, which the
//! plugin gets a fresh copy of ([`mounts`]; default: an empty directory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::runtime::effects::Catalog;
use crate::runtime::{Plugin, PluginError};
use crate::signal::{Action, Meta, Signal, TraceVerdict};

/// A file of cases.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// What the cases are about.
    #[serde(default)]
    pub about: Option<String>,
    /// Paths the plugin asks for → directories (relative to the file) mounted there.
    #[serde(default)]
    pub mounts: BTreeMap<String, PathBuf>,
    /// The cases, in order.
    pub cases: Vec<Case>,
}

/// One case.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What it shows.
    pub name: String,
    /// A gate case: the action.
    #[serde(default)]
    pub action: Option<Value>,
    /// The signal (a gate's, a skill's): `sensor`, `text`, `source`.
    #[serde(default)]
    pub signal: Option<SignalSpec>,
    /// A gate case: the verdict expected.
    #[serde(default)]
    pub expect: Option<String>,
    /// A gate case: a text its reason contains.
    #[serde(default)]
    pub reason: Option<String>,
    /// A gate case: a text (a secret the gate found) no piece of which, six characters or
    /// longer, may be in its reason: reasons are shown to people and fed back to the model.
    #[serde(default)]
    pub conceals: Option<String>,
    /// A tool case: the tool.
    #[serde(default)]
    pub tool: Option<String>,
    /// A tool case: its arguments (an object).
    #[serde(default)]
    pub args: Option<Value>,
    /// A tool case: a text its output contains.
    #[serde(default)]
    pub output: Option<String>,
    /// A tool case: a text its error contains (the call is expected to fail).
    #[serde(default)]
    pub error: Option<String>,
    /// A skill case: whether it takes up the signal.
    #[serde(default)]
    pub triggers: Option<bool>,
    /// A skill case: a text its prompt contains.
    #[serde(default)]
    pub prompt: Option<String>,
}

/// A signal, as a case gives it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalSpec {
    /// The sensor (`user-input`, `heartbeat`...).
    #[serde(default)]
    pub sensor: Option<String>,
    /// Its text.
    #[serde(default)]
    pub text: Option<String>,
    /// The client it came from.
    #[serde(default)]
    pub source: Option<String>,
}

/// How one case went.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Outcome {
    /// The case.
    pub name: String,
    /// Whether the plugin did what the case expects.
    pub ok: bool,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub got: String,
}

/// Why a file of cases cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// It cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not a file of cases.
    #[error("{path} is not a file of cases: {source} (see docs/plugins.md, \"Testing a plugin\")")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and why.
        #[source]
        source: serde_json::Error,
    },
}

/// The largest file of cases read.
pub const MAX_CASES_BYTES: u64 = 16 << 20;

impl CaseFile {
    /// Read the cases in `path`, as the loader reads a plugin's files
    /// ([`crate::runtime::loader::read_plugin_file`]): a regular file of at most
    /// [`MAX_CASES_BYTES`], opened without waiting, since it may come with someone else's
    /// plugin folder (a FIFO or `/dev/zero` there is an error, not a test that never ends).
    ///
    /// # Errors
    /// It cannot be read, is not a regular file, is too large, is not UTF-8, or is not a file
    /// of cases (naming the field that is wrong).
    pub fn read(path: &Path) -> Result<CaseFile, CasesError> {
        let unreadable = |source: std::io::Error| CasesError::Read {
            path: path.to_owned(),
            source,
        };
        let bytes =
            crate::runtime::loader::read_plugin_file(path, MAX_CASES_BYTES).map_err(unreadable)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            unreadable(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 text ({e}): a file of cases is JSON"),
            ))
        })?;
        serde_json::from_str(&text).map_err(|source| CasesError::Parse {
            path: path.to_owned(),
            source,
        })
    }
}

/// Run every case against `plugin`; gates see actions' effects as `catalog` gives them.
pub fn run(plugin: &Plugin, catalog: &Catalog, file: &CaseFile) -> Vec<Outcome> {
    file.cases
        .iter()
        .map(|case| {
            let (expected, got, ok) = if case.action.is_some() {
                gate(plugin, catalog, case)
            } else if case.tool.is_some() {
                tool(plugin, case)
            } else if case.triggers.is_some() || case.prompt.is_some() {
                skill(plugin, case)
            } else {
                (
                    "a case: `action` (gate), `tool` (tool) or `triggers` (skill)".into(),
                    "none of them".into(),
                    false,
                )
            };
            Outcome {
                name: case.name.clone(),
                ok,
                expected,
                got,
            }
        })
        .collect()
}

fn signal_of(spec: Option<&SignalSpec>, action: Option<&Action>) -> Signal {
    let source = spec
        .and_then(|s| s.source.as_deref())
        .unwrap_or("cli")
        .to_owned();
    match (spec, action) {
        (Some(s), _) if s.sensor.is_some() || s.text.is_some() => Signal::event(
            s.sensor.as_deref().unwrap_or("user-input"),
            s.text.as_deref(),
            Some(&source),
        ),
        (_, Some(a)) => Signal::request(a.clone(), Meta::from_source(&source)),
        _ => Signal::event("user-input", None, Some(&source)),
    }
}

/// The verdict names a case may use: the trace's (`require_approval`) or the WIT's
/// (`require-approval`).
fn verdict_matches(expected: &str, got: &TraceVerdict) -> bool {
    expected.replace('-', "_") == got.name()
}

fn gate(plugin: &Plugin, catalog: &Catalog, case: &Case) -> (String, String, bool) {
    let expect = case.expect.clone().unwrap_or_else(|| "pass".into());
    let expected = match &case.reason {
        Some(r) => format!("{expect} ({r:?})"),
        None => expect.clone(),
    };
    let raw = case.action.clone().unwrap_or_default();
    let mut action = match Action::from_json(&raw.to_string()) {
        Ok(a) => a,
        Err(e) => {
            return (
                expected,
                format!("the case's action is not one: {e}"),
                false,
            );
        }
    };
    action.resolve_target(Some("cli"), "cli");
    let signal = signal_of(case.signal.as_ref(), Some(&action));
    let gates: [&dyn crate::gates::GateCheck; 1] = [plugin];
    let walked = crate::blocking::wait(crate::gates::verify(&gates, catalog, &action, &signal));
    let Some(first) = walked.trace.first() else {
        return (expected, "the gate was not asked".into(), false);
    };
    let reason = first.reason.clone().unwrap_or_default();
    let mut got = if reason.is_empty() {
        first.verdict.name().to_owned()
    } else {
        format!("{} ({reason:?})", first.verdict.name())
    };
    let shown = case
        .conceals
        .as_deref()
        .and_then(|c| shown_piece(c, &reason));
    if let Some(piece) = &shown {
        got.push_str(&format!(
            "; the reason shows {piece:?} of what it must conceal"
        ));
    }
    let ok = verdict_matches(&expect, &first.verdict)
        && shown.is_none()
        && case
            .reason
            .as_ref()
            .is_none_or(|r| reason.contains(r.as_str()));
    // A gate judges what the host derives from the tool's schema: with no such tool here it
    // saw no effects, and a failing case would not say why.
    if let Some(tool) = action.tool.as_deref().filter(|_| action.target == "tool")
        && catalog.identity(tool).is_none()
        && !ok
    {
        got.push_str(&format!(
            "; no tool {tool:?} is loaded here, so the gate saw no effects of it: run \
             `passepartout init` (which grants the standard tools) or install the tool"
        ));
    }
    (expected, got, ok)
}

/// The first piece of `secret` (six characters, or all of a shorter one) that `reason` shows.
pub fn shown_piece(secret: &str, reason: &str) -> Option<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(6.min(chars.len()).max(1))
        .map(|w| w.iter().collect::<String>())
        .find(|piece| reason.contains(piece.as_str()))
}

fn tool(plugin: &Plugin, case: &Case) -> (String, String, bool) {
    let name = case.tool.as_deref().unwrap_or_default();
    let args = case
        .args
        .clone()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let expected = match (&case.error, &case.output) {
        (Some(e), _) => format!("an error containing {e:?}"),
        (None, Some(o)) => format!("output containing {o:?}"),
        (None, None) => "output".into(),
    };
    let result = plugin.call_tool(name, &args.to_string());
    let (got, ok) = match (&result, &case.error) {
        (Ok(out), None) => (
            short(out),
            case.output
                .as_ref()
                .is_none_or(|o| out.contains(o.as_str())),
        ),
        (Ok(out), Some(_)) => (format!("output {}", short(out)), false),
        // Only the tool's own error counts, and only its own words are matched: a trap, a
        // timeout or an unknown tool is never the error a case expects.
        (Err(PluginError::Tool { error, .. }), Some(want)) => {
            let own = error.to_string();
            (format!("error: {own}"), own.contains(want.as_str()))
        }
        (Err(e), _) => (format!("error: {e}"), false),
    };
    (expected, got, ok)
}

fn skill(plugin: &Plugin, case: &Case) -> (String, String, bool) {
    let mut signal = signal_of(case.signal.as_ref(), None);
    // As the pipeline perceives it, and asked only as the pipeline would ask.
    signal.payload.sensor = signal
        .payload
        .sensor
        .as_deref()
        .map(crate::signal::normal_sensor);
    let view = signal.view();
    let expected = match (&case.triggers, &case.prompt) {
        (Some(false), _) => "does not trigger".to_owned(),
        (_, Some(p)) => format!("triggers, prompt containing {p:?}"),
        (_, None) => "triggers".to_owned(),
    };
    if !plugin.manifest.listens_to(signal.sensor()) {
        return (
            expected,
            "not asked: the sensor is not among its manifest's `sensors`".into(),
            case.triggers == Some(false),
        );
    }
    let triggers = match plugin.skill_triggers(&view) {
        Ok(t) => t,
        Err(e) => return (expected, format!("error: {e}"), false),
    };
    if !triggers {
        return (
            expected,
            "does not trigger".into(),
            case.triggers == Some(false),
        );
    }
    let prompt: Result<Option<String>, PluginError> = plugin.skill_prompt(&view);
    match prompt {
        Ok(p) => {
            let text = p.unwrap_or_default();
            let ok = case.triggers != Some(false)
                && case
                    .prompt
                    .as_ref()
                    .is_none_or(|want| text.contains(want.as_str()));
            (expected, format!("triggers, prompt {}", short(&text)), ok)
        }
        Err(e) => (expected, format!("error: {e}"), false),
    }
}

/// At most 200 characters of `text`, for the table.
fn short(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

/// The directories a plugin asking for `guests` gets for a case file in `dir`: for each, a
/// fresh directory under `scratch` holding a copy of the file's fixture for it (a directory
/// inside `dir`, named relative to it), else empty. The plugin works on copies: a read-write
/// mount never changes the fixtures, and no case file can mount anything outside its folder.
///
/// # Errors
/// A fixture that is absolute, climbs out with `..`, leaves `dir` through a link, is not a
/// directory, or names a path the plugin does not ask for; a copy that failed.
pub fn mounts(
    file: &CaseFile,
    dir: &Path,
    guests: &[String],
    scratch: &Path,
) -> Result<Vec<(String, PathBuf)>, MountsError> {
    if let Some(stray) = file.mounts.keys().find(|k| !guests.contains(k)) {
        return Err(MountsError::NotAsked {
            guest: stray.clone(),
            asked: if guests.is_empty() {
                "nothing".to_owned()
            } else {
                guests.join(", ")
            },
        });
    }
    // A bare file name's folder is "" (`Path::parent`): the current directory.
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let root = dir.canonicalize().map_err(at(dir))?;
    let mut out = Vec::new();
    for (i, guest) in guests.iter().enumerate() {
        let host = scratch.join(format!("mount-{i}"));
        std::fs::create_dir_all(&host).map_err(at(&host))?;
        if let Some(fixture) = file.mounts.get(guest) {
            let inside = fixture
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            let source =
                root.join(fixture)
                    .canonicalize()
                    .map_err(|source| MountsError::Fixture {
                        guest: guest.clone(),
                        fixture: fixture.clone(),
                        source,
                    })?;
            if !inside || !source.starts_with(&root) || !source.is_dir() {
                return Err(MountsError::Outside {
                    guest: guest.clone(),
                    fixture: fixture.clone(),
                    root,
                });
            }
            copy_tree(&source, &host)?;
        }
        out.push((guest.clone(), host));
    }
    Ok(out)
}

/// Why a file of cases' `mounts` cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum MountsError {
    /// A mount the plugin's manifest does not ask for.
    #[error("`mounts` names {guest:?}, which the plugin does not ask for (it asks for: {asked})")]
    NotAsked {
        /// The guest path named.
        guest: String,
        /// What the plugin asks for.
        asked: String,
    },
    /// A fixture that cannot be found.
    #[error("`mounts` {guest:?}: {}: {source}", fixture.display())]
    Fixture {
        /// The guest path.
        guest: String,
        /// The fixture, as the file names it.
        fixture: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A fixture outside the cases' folder, or not a directory.
    #[error(
        "`mounts` {guest:?}: {} must be a directory inside {} (named relative to it, without \
         `..`)",
        fixture.display(),
        root.display()
    )]
    Outside {
        /// The guest path.
        guest: String,
        /// The fixture, as the file names it.
        fixture: PathBuf,
        /// The cases' folder.
        root: PathBuf,
    },
    /// A folder or a copy failed.
    #[error(transparent)]
    Copy(#[from] CopyError),
}

/// A fixture file or directory that could not be copied into a case's mount.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct CopyError {
    /// The path that failed: the one read, or the copy being made.
    path: PathBuf,
    /// Why.
    #[source]
    source: std::io::Error,
}

/// The error of an operation on `path`.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> CopyError {
    let path = path.to_owned();
    move |source| CopyError { path, source }
}

/// Copy the files and directories under `from` into `to`; links are left out.
fn copy_tree(from: &Path, to: &Path) -> Result<(), CopyError> {
    let entries = std::fs::read_dir(from).map_err(at(from))?;
    for entry in entries.flatten() {
        let kind = entry.file_type().map_err(at(&entry.path()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(at(&target))?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(at(&target))?;
        }
    }
    Ok(())
}

/// Whether every outcome is ok.
pub fn all_ok(outcomes: &[Outcome]) -> bool {
    outcomes.iter().all(|o| o.ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_cases_file_that_is_a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        let fifo = dir.path().join("cases.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success(), "mkfifo");
        // Read on another thread: a read that waits for a writer fails the test instead of
        // hanging it (the thread is left blocked; the test process ends anyway).
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(CaseFile::read(&path).map(|_| ()).map_err(|e| e.to_string()));
        });
        let read = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("reading a FIFO returns at once, without waiting for a writer");
        let err = read.expect_err("a FIFO is no file of cases");
        assert!(
            err.contains("regular file") && err.contains("cases.json"),
            "{err}"
        );
    }

    #[test]
    fn a_cases_file_named_without_a_folder_is_in_the_current_one() {
        let file = CaseFile {
            about: None,
            mounts: BTreeMap::new(),
            cases: Vec::new(),
        };
        let scratch = tempfile::tempdir().expect("dir");
        // `Path::new("cases.json").parent()` is `Some("")`.
        let mounts = mounts(
            &file,
            Path::new(""),
            &["/workspace".to_owned()],
            scratch.path(),
        );
        assert!(mounts.is_ok(), "{mounts:?}");
    }
}
