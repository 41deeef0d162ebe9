//! Writing a plugin: `passepartout plugin new` lays out a project that builds as it is (with the
//! SDK's sources and the WIT beside it, since the SDK is not published), and `plugin build` runs
//! its toolchain. A project is the author's code on the author's machine: `plugin build` runs
//! its build (cargo, with its build scripts) natively; `plugin install` never builds.

use std::path::{Path, PathBuf};
use std::process::Command;

include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));

/// What a new plugin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Verifies proposed actions.
    Gate,
    /// Does work the model asks for.
    Tool,
}

/// The language of a new plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust, built with cargo for wasm32-wasip2.
    Rust,
}

/// Why a project could not be made or built.
#[derive(Debug, thiserror::Error)]
pub enum AuthoringError {
    /// The name is not one a plugin may have.
    #[error(
        "{0:?} is not a plugin name: use lowercase letters, digits and dashes, starting with a letter"
    )]
    Name(String),
    /// The folder is there already.
    #[error("{0} exists already: choose another name or folder")]
    Exists(PathBuf),
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A toolchain is missing.
    #[error("{what} is missing: {how}")]
    Missing {
        /// What.
        what: String,
        /// How to install it.
        how: String,
    },
    /// The build failed (its output was shown).
    #[error("the build failed: {0}")]
    Build(String),
    /// The folder is not a project `plugin new` made.
    #[error("{0}")]
    NotAProject(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AuthoringError + '_ {
    move |source| AuthoringError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Write a new project for plugin `name` in `dir` (which must not exist). Returns the files
/// written.
///
/// # Errors
/// A bad name, an existing folder, or a write that failed.
pub fn new_project(
    dir: &Path,
    name: &str,
    kind: Kind,
    lang: Lang,
) -> Result<Vec<PathBuf>, AuthoringError> {
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.len() <= 64;
    if !valid {
        return Err(AuthoringError::Name(name.to_owned()));
    }
    if dir.exists() {
        return Err(AuthoringError::Exists(dir.to_owned()));
    }
    let Lang::Rust = lang;
    let crate_name = name.replace('-', "_");
    let mut files: Vec<(String, String)> = SDK_FILES
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    files.push((
        "sdk/passepartout-sdk/Cargo.toml".into(),
        format!(
            "[package]\nname = \"passepartout-sdk\"\nversion = \"{}\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n{SDK_DEPENDENCIES}",
            env!("CARGO_PKG_VERSION")
        ),
    ));
    // A tool reads its arguments into a type of its own.
    let serde = match kind {
        Kind::Tool => "serde = { version = \"1\", features = [\"derive\"] }\n",
        Kind::Gate => "",
    };
    files.push((
        "Cargo.toml".into(),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\npassepartout-sdk = {{ path = \"sdk/passepartout-sdk\" }}\n{serde}\n# Its own workspace: it builds wherever the folder sits.\n[workspace]\n"
        ),
    ));
    files.push((".gitignore".into(), "/target\n*.wasm\n".into()));
    let (source, manifest, cases) = match kind {
        Kind::Gate => (
            GATE_RS.to_owned(),
            format!(
                "name = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Rejects sudo; asks a person before git push.\"\nkinds = [\"gate\"]\npriority = 50\ncomponent = \"{crate_name}.wasm\"\n"
            ),
            GATE_CASES.to_owned(),
        ),
        Kind::Tool => (
            TOOL_RS.to_owned(),
            format!(
                "name = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Returns a text in capital letters.\"\nkinds = [\"tool\"]\ncomponent = \"{crate_name}.wasm\"\n"
            ),
            TOOL_CASES.to_owned(),
        ),
    };
    files.push(("src/lib.rs".into(), source));
    files.push(("plugin.toml".into(), manifest));
    files.push(("cases.json".into(), cases));
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// The component a project's `plugin.toml` names.
fn component_of(dir: &Path) -> Result<String, AuthoringError> {
    let manifest_path = dir.join("plugin.toml");
    let text = std::fs::read_to_string(&manifest_path).map_err(io(&manifest_path))?;
    crate::runtime::manifest::Manifest::parse(&text)
        .map(|m| m.component)
        .map_err(|e| AuthoringError::NotAProject(format!("{}: {e}", manifest_path.display())))
}

/// Build the project in `dir` with its toolchain (cargo, for wasm32-wasip2, in `target_dir`
/// so that the SDK's dependencies compile once for every project), and put the component where
/// its `plugin.toml` says. Returns the component's path.
///
/// # Errors
/// Not a project, a toolchain missing (saying how to install it), or the build failed.
pub fn build(dir: &Path, target_dir: &Path) -> Result<PathBuf, AuthoringError> {
    let component = component_of(dir)?;
    if !dir.join("Cargo.toml").is_file() {
        return Err(AuthoringError::NotAProject(format!(
            "{} has no Cargo.toml: `plugin build` builds Rust projects (`passepartout plugin new`)",
            dir.display()
        )));
    }
    // In the project, so that its own rust-toolchain.toml and .cargo/config.toml apply.
    let installed = Command::new("rustup")
        .current_dir(dir)
        .args(["target", "list", "--installed"])
        .output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("wasm32-wasip2") => {}
        Ok(_) => {
            return Err(AuthoringError::Missing {
                what: "the wasm32-wasip2 target".into(),
                how: "rustup target add wasm32-wasip2".into(),
            });
        }
        Err(_) => {
            return Err(AuthoringError::Missing {
                what: "rustup".into(),
                how: "install Rust from https://rustup.rs, then `rustup target add wasm32-wasip2`"
                    .into(),
            });
        }
    }
    let status = Command::new("cargo")
        .current_dir(dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| AuthoringError::Missing {
            what: format!("cargo ({e})"),
            how: "install Rust from https://rustup.rs".into(),
        })?;
    if !status.success() {
        return Err(AuthoringError::Build(format!(
            "cargo exited with {status} (its messages are above)"
        )));
    }
    let built = target_dir.join("wasm32-wasip2/release").join(&component);
    let into = dir.join(&component);
    std::fs::copy(&built, &into).map_err(|source| AuthoringError::Io {
        path: built.clone(),
        source,
    })?;
    Ok(into)
}

const GATE_RS: &str = r#"//! A gate: every action the model (or a person) proposes is shown to it before anything runs.

use passepartout_sdk::{Action, ActionExt, Gate, GateInfo, SignalView, Verdict};

struct Guard;

impl Gate for Guard {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects sudo; asks a person before git push.".into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        // What the action would run, whichever tool runs it (see the SDK's `context`).
        for run in &action.effects().programs {
            let words: Vec<&str> = std::iter::once(run.program.as_str())
                .chain(run.argv.iter().map(String::as_str))
                .collect();
            if words.contains(&"sudo") {
                return Verdict::Reject("sudo is not allowed; run it without".into());
            }
            if words.windows(2).any(|w| w == ["git", "push"]) {
                return Verdict::RequireApproval("git push publishes: approve it?".into());
            }
        }
        Verdict::Pass
    }
}

passepartout_sdk::export_gate!(Guard);
"#;

const GATE_CASES: &str = r#"{
  "about": "Run with `passepartout plugin test`. Each case is an action and the verdict expected. The actions run through the `shell` tool, which `passepartout init` grants: the gate judges the programs it would run.",
  "cases": [
    { "name": "sudo is refused",
      "action": { "tool": "shell", "args": { "program": "sudo", "args": ["ls"] } },
      "expect": "reject", "reason": "sudo" },
    { "name": "git push asks a person",
      "action": { "tool": "shell", "args": { "program": "git", "args": ["push"] } },
      "expect": "require-approval", "reason": "git push" },
    { "name": "git status passes",
      "action": { "tool": "shell", "args": { "program": "git", "args": ["status"] } },
      "expect": "pass" }
  ]
}
"#;

const TOOL_RS: &str = r##"//! A tool: the model calls it by name with JSON arguments; it runs in a fresh sandbox each time.

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};

#[derive(serde::Deserialize)]
struct Shout {
    text: String,
}

struct Upper;

impl Tool for Upper {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "shout".into(),
            description: "Returns the text in capital letters.".into(),
            parameters: r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#.into(),
            read_only: true,
        }]
    }

    fn call(_name: String, args: String) -> Result<String, ToolError> {
        let Shout { text } = parse_args(&args)?;
        Ok(text.to_uppercase())
    }
}

passepartout_sdk::export_tool!(Upper);
"##;

const TOOL_CASES: &str = r#"{
  "about": "Run with `passepartout plugin test`. Each case is a call and what it gives.",
  "cases": [
    { "name": "shouts", "tool": "shout", "args": { "text": "hello" }, "output": "HELLO" },
    { "name": "needs a text", "tool": "shout", "args": {}, "error": "text" }
  ]
}
"#;
