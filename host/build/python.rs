//! Build the first-party plugins written in Python (`plugins/<name>/app.py`) into components
//! with componentize-py, for the build script of `host/`. The result sits beside the Rust guests
//! (`<target>/guests/python/<name>.wasm`) and is rebuilt only when an input changed: the Python
//! sources, the WIT files, the world or componentize-py's version. A rebuild takes 10-20 s, a
//! check that nothing changed a few milliseconds.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The componentize-py release the Python plugins are built (and tested) with.
pub fn componentize_py_version() -> String {
    crate::pins::pin("componentize_py")
}

/// The WIT world every Python first-party plugin targets: they are all gates for now.
const WORLD: &str = "gate-plugin";

/// The module componentize-py loads: `plugins/<name>/app.py`.
const APP: &str = "app";

/// Build each of `plugins` (folders under `plugins/`). Returns, per plugin, the path of its
/// component. Panics with an actionable message when that is impossible (componentize-py
/// missing or of another version, a failed build): a build script has no other way to fail.
pub fn build(workspace: &Path, plugins: &[&str]) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-env-changed=COMPONENTIZE_PY");
    if plugins.is_empty() {
        return Vec::new();
    }
    let mut componentize_py = None;
    let out_dir = out_dir(workspace);
    plugins
        .iter()
        .map(|name| {
            let dir = workspace.join("plugins").join(name);
            let wasm = build_one(workspace, name, &dir, &mut componentize_py, &out_dir);
            ((*name).to_owned(), wasm)
        })
        .collect()
}

/// Build the Python plugin whose sources are in `dir` (an `app.py` and its modules) as
/// `<target>/guests/python/<name>.wasm`; for test plugins whose source is not under `plugins/`
/// (the documentation's example, extracted from the page). Panics as [`build`] does.
#[allow(dead_code)] // used by the tests' build script only
pub fn build_dir(workspace: &Path, name: &str, dir: &Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=COMPONENTIZE_PY");
    build_one(workspace, name, dir, &mut None, &out_dir(workspace))
}

/// `<target>/guests/python`, created.
fn out_dir(workspace: &Path) -> PathBuf {
    let out_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from)
        .join("guests")
        .join("python");
    std::fs::create_dir_all(&out_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", out_dir.display()));
    out_dir
}

/// Build `plugins/<name>/` into `<out_dir>/<name>.wasm` unless the stamp beside it says that
/// nothing changed since the last build. componentize-py is looked for (once, into
/// `componentize_py`) only when something must be built.
fn build_one(
    workspace: &Path,
    name: &str,
    plugin_dir: &Path,
    componentize_py: &mut Option<PathBuf>,
    out_dir: &Path,
) -> PathBuf {
    let wit_dir = workspace.join("wit");
    let sources = python_sources(plugin_dir);
    assert!(
        sources
            .iter()
            .any(|p| p.file_name() == Some(format!("{APP}.py").as_ref())),
        "the Python plugin {name} has no {}",
        plugin_dir.join(format!("{APP}.py")).display()
    );
    let wasm = out_dir.join(format!("{name}.wasm"));
    let stamp = out_dir.join(format!("{name}.wasm.inputs"));
    let inputs = inputs_hash(&sources, &files_in(&wit_dir, "wit"));
    if wasm.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == inputs) {
        return wasm;
    }

    // componentize-py writes `__pycache__` next to the sources it loads: build from a copy, so
    // that plugins/ stays clean and cargo's rerun-if-changed on it does not fire again.
    let stage = out_dir.join(format!("{name}-src"));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", stage.display()));
    for src in &sources {
        let to = stage.join(src.file_name().expect("a source file has a name"));
        std::fs::copy(src, &to)
            .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", src.display(), to.display()));
    }
    // An empty virtual environment: componentize-py adds the active one's site-packages (or the
    // machine's) to the app's path; the component must not depend on what this machine has.
    let no_packages = out_dir.join("no-site-packages");
    std::fs::create_dir_all(no_packages.join("lib").join("site-packages"))
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", no_packages.display()));

    let componentize_py = componentize_py.get_or_insert_with(find_componentize_py);
    let partial = out_dir.join(format!("{name}.wasm.partial"));
    let output = Command::new(&*componentize_py)
        .current_dir(&stage)
        .arg("-d")
        .arg(&wit_dir)
        .args(["-w", WORLD, "componentize"])
        // Every WASI import becomes a trapping stub inside the component, which then imports
        // only passepartout:plugin: a gate gets no WASI from the host, and without this the
        // runtime would read the environment and seed `random` on its first call.
        .arg("--stub-wasi")
        .args(["-p", ".", APP, "-o"])
        .arg(&partial)
        .env("VIRTUAL_ENV", &no_packages)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", componentize_py.display()));
    assert!(
        output.status.success(),
        "\n\nbuilding the Python plugin {name} with componentize-py failed:\n{}{}\n",
        String::from_utf8_lossy(&output.stdout),
        error_text(&String::from_utf8_lossy(&output.stderr)),
    );
    std::fs::rename(&partial, &wasm)
        .unwrap_or_else(|e| panic!("cannot move {} into place: {e}", partial.display()));
    std::fs::write(&stamp, format!("{inputs}\n"))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", stamp.display()));
    wasm
}

/// componentize-py at the pinned version: `$COMPONENTIZE_PY`, else on `PATH`, else in pip's
/// `--user` directory (`~/.local/bin`, often not on `PATH`).
fn find_componentize_py() -> PathBuf {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("COMPONENTIZE_PY") {
        candidates.push(p.into());
    }
    candidates.push("componentize-py".into());
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".local/bin/componentize-py"));
    }
    let version = componentize_py_version();
    let wanted = format!("componentize-py {version}");
    let mut found = Vec::new();
    for candidate in candidates {
        let Ok(out) = Command::new(&candidate).arg("--version").output() else {
            continue;
        };
        let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if out.status.success() && version == wanted {
            return candidate;
        }
        found.push(format!("{} says {version:?}", candidate.display()));
    }
    let found = if found.is_empty() {
        "it is not installed".to_owned()
    } else {
        format!("found another version: {}", found.join("; "))
    };
    panic!(
        "\n\nPassepartout's Python plugins are built with componentize-py {version}, \
         and {found}.\nRun:\n\n    python3 -m pip install --user componentize-py=={version}\n\n\
         (on Debian/Ubuntu's own Python add --break-system-packages; `.ci/run` does this), \
         or set COMPONENTIZE_PY to its path, then build again.\n\n"
    );
}

/// The plugin's Python sources, sorted: every `*.py` but the native tests (`test_*.py`).
fn python_sources(plugin_dir: &Path) -> Vec<PathBuf> {
    files_in(plugin_dir, "py")
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("test_"))
        })
        .collect()
}

/// The files directly in `dir` whose extension is `ext`, sorted by name.
fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// A hex digest of everything the component is built from: each source's name and bytes, each
/// WIT file's, the world and componentize-py's version. FNV-1a (128-bit): a change detector, not
/// a security boundary, and stable across Rust releases (std's hasher is not).
fn inputs_hash(sources: &[PathBuf], wit: &[PathBuf]) -> String {
    let mut h = Fnv::new();
    h.write(componentize_py_version().as_bytes());
    h.write(WORLD.as_bytes());
    for (kind, files) in [("py", sources), ("wit", wit)] {
        for f in files {
            let bytes =
                std::fs::read(f).unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
            let file_name = f.file_name().expect("a file has a name").to_string_lossy();
            h.write(kind.as_bytes());
            h.write(file_name.as_bytes());
            h.write(&(bytes.len() as u64).to_le_bytes());
            h.write(&bytes);
        }
    }
    format!("{:032x}", h.0)
}

/// FNV-1a, 128-bit: enough to notice that a build's inputs changed.
pub struct Fnv(pub u128);

impl Fnv {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    /// A fresh hash.
    pub fn new() -> Self {
        Self(Self::OFFSET)
    }

    /// Hash `bytes`, then a separator.
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u128::from(*b)).wrapping_mul(Self::PRIME);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(Self::PRIME);
    }
}

/// What to show of componentize-py's stderr: its errors end with a long Rust backtrace, and the
/// Python traceback that matters comes before it.
fn error_text(stderr: &str) -> &str {
    stderr
        .find("Stack backtrace:")
        .map_or(stderr, |at| &stderr[..at])
}
