//! Writing a plugin: `passepartout plugin new` lays out a project that builds as it is (with the
//! WIT beside it, and for Rust the SDK's sources, since the SDK is not published), and `plugin
//! build` runs its toolchain: cargo ([`rust`]), componentize-py ([`python`]) or componentize-js
//! ([`js`]). A project is the author's code on the author's machine: `plugin build` runs its
//! build (cargo with its build scripts, npm) natively; `plugin install` never builds.

mod js;
mod python;
mod rust;

use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));

/// The cases every new gate starts with, whatever its language (the templates agree).
const GATE_CASES: &str = include_str!("templates/gate-cases.json");
/// The cases every new tool starts with.
const TOOL_CASES: &str = include_str!("templates/tool-cases.json");
/// The cases every new skill starts with.
const SKILL_CASES: &str = include_str!("templates/skill-cases.json");

/// What a new plugin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Verifies proposed actions.
    Gate,
    /// Does work the model asks for.
    Tool,
    /// Takes up signals and gives the model a prompt for them.
    Skill,
}

/// The language of a new plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust, built with cargo for wasm32-wasip2.
    Rust,
    /// Python, built with componentize-py (CPython inside the component).
    Python,
    /// JavaScript, built with componentize-js (SpiderMonkey inside the component).
    Js,
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
    let mut files = match lang {
        Lang::Rust => rust::files(name, kind),
        Lang::Python => python::files(name, kind),
        Lang::Js => js::files(name, kind),
    };
    files.push((
        "cases.json".into(),
        match kind {
            Kind::Gate => GATE_CASES,
            Kind::Tool => TOOL_CASES,
            Kind::Skill => SKILL_CASES,
        }
        .to_owned(),
    ));
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

/// Build the project in `dir` with its toolchain, which its files say (Cargo.toml: cargo for
/// wasm32-wasip2, in `build_dir` so that the SDK's dependencies compile once for every project;
/// app.py: componentize-py; app.js: componentize-js, installed once under `build_dir` unless the
/// project has its own), and put the component where its `plugin.toml` says. `say` hears what
/// takes long before it starts (a first install of a toolchain). Returns the component's path.
///
/// # Errors
/// Not a project, a toolchain missing (saying how to install it), or the build failed.
pub fn build(
    dir: &Path,
    build_dir: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<PathBuf, AuthoringError> {
    // The toolchains run in other directories (the project, a staging copy): every path they
    // are given is absolute.
    let dir = &std::path::absolute(dir).map_err(io(dir))?;
    let manifest = manifest_of(dir)?;
    let kind = if manifest.kinds.contains(&crate::runtime::Kind::Gate) {
        Kind::Gate
    } else if manifest.kinds.contains(&crate::runtime::Kind::Tool) {
        Kind::Tool
    } else {
        Kind::Skill
    };
    let component = dir.join(&manifest.component);
    if dir.join("Cargo.toml").is_file() {
        rust::build(dir, build_dir, &manifest.component)?;
    } else if dir.join("app.py").is_file() {
        into_place(&component, |out| {
            python::build(dir, build_dir, &manifest.name, kind, out)
        })?;
    } else if dir.join("app.js").is_file() {
        into_place(&component, |out| js::build(dir, build_dir, kind, out, say))?;
    } else {
        return Err(AuthoringError::NotAProject(format!(
            "{} has no Cargo.toml, app.py or app.js: `plugin build` builds projects `passepartout \
             plugin new` made",
            dir.display()
        )));
    }
    Ok(component)
}

/// Build into a partial file beside `component` with `run`, then move it into place: a failed
/// build leaves the last good component as it was, never a half-written one.
fn into_place(
    component: &Path,
    run: impl FnOnce(&Path) -> Result<(), AuthoringError>,
) -> Result<(), AuthoringError> {
    let mut partial = component.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let _ = std::fs::remove_file(&partial);
    let built = run(&partial).and_then(|()| {
        if partial.is_file() {
            Ok(())
        } else {
            Err(AuthoringError::Build(format!(
                "the toolchain reported success but wrote no {}",
                partial.display()
            )))
        }
    });
    if let Err(e) = built {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, component).map_err(io(component))
}

/// The WIT contract, as the binary carries it: (file name, text).
fn wit_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    SDK_FILES
        .iter()
        .filter_map(|(path, text)| path.strip_prefix("sdk/wit/").map(|name| (name, *text)))
}

/// The world a Python or JavaScript project builds against, in `wit/world.wit` beside the
/// contract: exactly what the plugin imports (their toolchains import every interface of the
/// world they build, and a tool importing `process` or `memory` without a grant is disabled).
fn world_wit(kind: Kind) -> String {
    let body = match kind {
        Kind::Gate => "    import host;\n    import action-context;\n    export gate;\n",
        Kind::Tool => {
            "    import host;\n    // To run granted programs or read the memory store, import them here (and\n    // ask for the grant in plugin.toml): `import process;`, `import memory;`.\n    export tool;\n"
        }
        Kind::Skill => {
            "    import host;\n    // To read the memory store, import it here (and ask for the grant in\n    // plugin.toml): `import memory;`.\n    export skill;\n"
        }
    };
    format!(
        "package passepartout:plugin@0.1.1;\n\n/// This plugin's world: what it imports from the host and what it exports.\nworld {WORLD} {{\n{body}}}\n"
    )
}

/// The name of the world in [`world_wit`].
const WORLD: &str = "this-plugin";

/// The files of a Python or JavaScript project besides its source: the WIT (the contract and
/// its world), `plugin.toml` (with the memory their runtimes need) and `.gitignore`.
fn interpreted_files(
    name: &str,
    kind: Kind,
    memory_mib: u32,
    ignore: &str,
) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = wit_files()
        .map(|(file, text)| (format!("wit/{file}"), text.to_owned()))
        .collect();
    files.push(("wit/world.wit".into(), world_wit(kind)));
    files.push(("plugin.toml".into(), manifest(name, kind, "plugin.wasm")));
    let limits = format!(
        "\n[limits]\n# The interpreter's heap, snapshotted at build time, needs more than the default.\nmemory_mib = {memory_mib}\nfuel = 100_000_000\n"
    );
    if let Some((_, text)) = files.iter_mut().find(|(path, _)| path == "plugin.toml") {
        text.push_str(&limits);
    }
    files.push((".gitignore".into(), ignore.to_owned()));
    files
}

/// A new plugin's `plugin.toml`.
fn manifest(name: &str, kind: Kind, component: &str) -> String {
    match kind {
        Kind::Gate => format!(
            "name = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Rejects sudo; asks a person before git push.\"\nkinds = [\"gate\"]\npriority = 50\ncomponent = \"{component}\"\n"
        ),
        Kind::Tool => format!(
            "name = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Returns a text in capital letters.\"\nkinds = [\"tool\"]\ncomponent = \"{component}\"\n"
        ),
        Kind::Skill => format!(
            "name = \"{name}\"\nversion = \"0.1.0\"\ndescription = \"Turns '#standup notes' into a request for a stand-up summary.\"\nkinds = [\"skill\"]\npriority = 10\nsensors = [\"user-input\", \"chat-message\"]\ncomponent = \"{component}\"\n"
        ),
    }
}

/// A project's `plugin.toml`, read as the loader reads one (a regular file, 1 MiB at most, not
/// waiting on a FIFO): the project may be someone else's.
fn manifest_of(dir: &Path) -> Result<crate::runtime::manifest::Manifest, AuthoringError> {
    let manifest_path = dir.join("plugin.toml");
    let text = crate::runtime::loader::read_manifest(&manifest_path).map_err(io(&manifest_path))?;
    crate::runtime::manifest::Manifest::parse(&text)
        .map_err(|e| AuthoringError::NotAProject(format!("{}: {e}", manifest_path.display())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_language_page_shows_the_gate_plugin_new_writes() {
        for (page, name, template) in [
            (
                include_str!("../../../docs/authoring/rust.md"),
                "rust.md",
                include_str!("templates/gate.rs"),
            ),
            (
                include_str!("../../../docs/authoring/python.md"),
                "python.md",
                include_str!("templates/gate.py"),
            ),
            (
                include_str!("../../../docs/authoring/javascript.md"),
                "javascript.md",
                include_str!("templates/gate.js"),
            ),
        ] {
            assert!(
                page.contains(template),
                "docs/authoring/{name} does not show the gate as plugin new writes it"
            );
        }
        // The toolchain releases the pages ask for are the pinned ones (.ci/toolchains).
        let python = include_str!("../../../docs/authoring/python.md");
        let js = include_str!("../../../docs/authoring/javascript.md");
        let pin = format!("componentize-py=={}", super::python::COMPONENTIZE_PY);
        for page in [
            python,
            include_str!("../../../README.md"),
            include_str!("../../../docs/python-plugins.md"),
        ] {
            assert!(
                page.contains(&pin),
                "a page asks for another componentize-py than {pin}"
            );
        }
        assert!(js.contains(&format!("componentize-js {}", super::js::COMPONENTIZE_JS)));
    }
}
