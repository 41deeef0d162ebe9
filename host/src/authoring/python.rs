//! Python projects: `app.py` built with componentize-py, which embeds CPython and snapshots the
//! module as it stands once imported.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{AuthoringError, Kind, WORLD, io};

/// The componentize-py release `plugin build` uses: the one Passepartout's own `pii` is built
/// and tested with (`host/build/python.rs` pins it, the build script passes it on).
pub const COMPONENTIZE_PY: &str = env!("COMPONENTIZE_PY_VERSION");

/// The files of a new Python project (all but `cases.json`).
pub(super) fn files(name: &str, kind: Kind) -> Vec<(String, String)> {
    let mut files = super::interpreted_files(name, kind, 32, "*.wasm\n__pycache__/\n");
    let source = match kind {
        Kind::Gate => include_str!("templates/gate.py"),
        Kind::Tool => include_str!("templates/tool.py"),
        Kind::Skill => include_str!("templates/skill.py"),
    };
    files.push(("app.py".into(), source.to_owned()));
    files
}

/// componentize-py at [`COMPONENTIZE_PY`]: on `PATH`, else where `pip install --user` puts it.
fn componentize_py() -> Result<PathBuf, AuthoringError> {
    let mut candidates = vec![PathBuf::from("componentize-py")];
    if let Some(home) = directories::BaseDirs::new() {
        candidates.push(home.home_dir().join(".local/bin/componentize-py"));
    }
    let wanted = format!("componentize-py {COMPONENTIZE_PY}");
    let mut found = Vec::new();
    for candidate in candidates {
        let Ok(out) = Command::new(&candidate).arg("--version").output() else {
            continue;
        };
        let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if out.status.success() && version == wanted {
            return Ok(candidate);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        found.push(if version.is_empty() {
            format!(
                "{}, which does not run: {}",
                candidate.display(),
                stderr.lines().last().unwrap_or("no output")
            )
        } else {
            format!("{} at {}", version, candidate.display())
        });
    }
    Err(AuthoringError::Missing {
        what: if found.is_empty() {
            format!("componentize-py {COMPONENTIZE_PY}")
        } else {
            format!(
                "componentize-py {COMPONENTIZE_PY} (found {})",
                found.join(", ")
            )
        },
        how: format!(
            "python3 -m pip install --user componentize-py=={COMPONENTIZE_PY} (Debian's and \
             Ubuntu's own Python also need --break-system-packages; a --user install changes \
             none of their packages)"
        ),
    })
}

/// componentize-py over the project's `*.py` files. It imports the module at build time and
/// leaves `__pycache__` beside what it imported, so it builds from a copy under `build_dir`:
/// the project stays as the author left it. A gate is built with `--stub-wasi` (a gate gets no
/// WASI from the host: every WASI import becomes a trap inside the component).
pub(super) fn build(
    dir: &Path,
    build_dir: &Path,
    name: &str,
    kind: Kind,
    component: &Path,
) -> Result<(), AuthoringError> {
    let componentize_py = componentize_py()?;
    // A staging copy of its own for each build: two projects of one name never clobber each
    // other's, and the copy is gone with the build.
    let stages = build_dir.join("python");
    std::fs::create_dir_all(&stages).map_err(io(&stages))?;
    let stage = tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(&stages)
        .map_err(io(&stages))?;
    let stage = stage.path();
    let sources = stage.join("src");
    copy_sources(dir, &sources)?;
    // An empty virtual environment: componentize-py adds the active one's site-packages (or
    // the machine's) to the module's path; the component must not depend on this machine.
    let no_packages = stage.join("no-site-packages");
    let site = no_packages.join("lib/site-packages");
    std::fs::create_dir_all(&site).map_err(io(&site))?;
    let mut command = Command::new(&componentize_py);
    command
        .current_dir(&sources)
        .arg("-d")
        .arg(dir.join("wit"))
        .args(["-w", WORLD, "componentize"]);
    if kind == Kind::Gate {
        command.arg("--stub-wasi");
    }
    let output = command
        .args(["-p", ".", "app", "-o"])
        .arg(component)
        .env("VIRTUAL_ENV", &no_packages)
        .output()
        .map_err(|e| AuthoringError::Missing {
            what: format!("{} ({e})", componentize_py.display()),
            how: format!("python3 -m pip install --user componentize-py=={COMPONENTIZE_PY}"),
        })?;
    if !output.status.success() {
        return Err(AuthoringError::Build(format!(
            "componentize-py failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(())
}

/// Copy the project's Python sources and data (packages included) from `from` into `into`,
/// leaving out what is not the plugin: bytecode caches, components, the WIT, version control
/// and virtual environments.
fn copy_sources(from: &Path, into: &Path) -> Result<(), AuthoringError> {
    const SKIP: &[&str] = &[
        "__pycache__",
        "wit",
        ".git",
        ".venv",
        "venv",
        "node_modules",
    ];
    std::fs::create_dir_all(into).map_err(io(into))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let path = entry.path();
        let name = entry.file_name();
        let kind = entry.file_type().map_err(io(&path))?;
        if SKIP.iter().any(|s| name == *s)
            || path
                .extension()
                .is_some_and(|e| e == "wasm" || e == "partial")
        {
            continue;
        }
        let to = into.join(&name);
        if kind.is_dir() {
            copy_sources(&path, &to)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &to).map_err(io(&path))?;
        }
    }
    Ok(())
}
