//! Paths of the test-only plugins, built from tests/plugins/ by this crate's build script, and
//! helpers shared by the end-to-end tests.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use passepartout::runtime::{Origin, PluginSource, Runtime, RuntimeConfig};

/// The hostile tool's component.
pub const HOSTILE_TOOL_WASM: &str = env!("HOSTILE_TOOL_WASM");
/// The hostile tool's manifest.
pub const HOSTILE_TOOL_MANIFEST: &str = env!("HOSTILE_TOOL_MANIFEST");
/// The hostile gate's component.
pub const HOSTILE_GATE_WASM: &str = env!("HOSTILE_GATE_WASM");
/// The hostile gate's manifest.
pub const HOSTILE_GATE_MANIFEST: &str = env!("HOSTILE_GATE_MANIFEST");

/// A source for a plugin built by this crate, with its manifest text possibly edited.
///
/// # Panics
/// When the built files are missing (the build script failed).
pub fn source(wasm: &str, manifest: &str, edit: impl FnOnce(String) -> String) -> PluginSource {
    let text = std::fs::read_to_string(manifest).expect("test plugin manifest");
    PluginSource {
        origin: Origin::Dir(
            PathBuf::from(manifest)
                .parent()
                .unwrap_or(Path::new("."))
                .to_owned(),
        ),
        manifest_path: PathBuf::from(manifest),
        manifest: Cow::Owned(edit(text)),
        component: Cow::Owned(std::fs::read(wasm).expect("test plugin component")),
        pin: None,
        problem: None,
    }
}

/// A runtime caching compiled components in `cache`.
///
/// # Panics
/// When the engine cannot be built.
pub fn runtime(cache: &Path) -> Runtime {
    runtime_with(cache, passepartout::runtime::Deadlines::Hard)
}

/// A runtime whose calls are held to their deadlines the way `deadlines` says.
pub fn runtime_with(cache: &Path, deadlines: passepartout::runtime::Deadlines) -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_owned()),
        pooling: true,
        deadlines,
        trampoline: Some(trampoline()),
        ..RuntimeConfig::default()
    })
    .expect("runtime")
}

/// The confinement trampoline the test runtimes start programs through: this package's
/// `passepartout-confine` binary, beside the test binary's `deps/` directory.
pub fn trampoline() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/PROFILE/deps");
    let found = dir.join("passepartout-confine");
    assert!(
        found.exists(),
        "{} is missing: cargo builds it with the tests (`cargo test -p passepartout-tests`)",
        found.display()
    );
    found
}

/// A temporary directory granted programs can work in: when the tests run as root, programs
/// run as the mount's owner, so it is given to `nobody`.
pub fn program_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    give_to_nobody(dir.path());
    dir
}

/// When running as root, make `path` (and what is in it) belong to `nobody`.
pub fn give_to_nobody(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        return;
    }
    let nobody = passepartout::runtime::capabilities::confine::NOBODY;
    let mut stack = vec![path.to_owned()];
    while let Some(p) = stack.pop() {
        std::os::unix::fs::lchown(&p, Some(nobody), Some(nobody)).expect("chown to nobody");
        if p.is_dir() && !p.is_symlink() {
            for entry in std::fs::read_dir(&p).expect("read dir").flatten() {
                stack.push(entry.path());
            }
        }
    }
}
/// The test skill's component.
pub const ECHO_SKILL_WASM: &str = env!("ECHO_SKILL_WASM");
/// The test skill's manifest.
pub const ECHO_SKILL_MANIFEST: &str = env!("ECHO_SKILL_MANIFEST");
/// The future gate's component (exports passepartout:plugin/gate@0.2.0).
pub const FUTURE_GATE_WASM: &str = env!("FUTURE_GATE_WASM");
/// The future gate's manifest.
pub const FUTURE_GATE_MANIFEST: &str = env!("FUTURE_GATE_MANIFEST");
/// The Rust twin of the Python gate plugins/pii: its component.
pub const PII_TWIN_WASM: &str = env!("PII_TWIN_WASM");
/// The Rust twin of the Python gate plugins/pii: its manifest.
pub const PII_TWIN_MANIFEST: &str = env!("PII_TWIN_MANIFEST");
pub mod http;
/// The gate built against `passepartout:plugin@0.1.0`.
pub const OLD_GATE_WASM: &str = env!("OLD_GATE_WASM");
/// Its manifest.
pub const OLD_GATE_MANIFEST: &str = env!("OLD_GATE_MANIFEST");
/// The README's example gate, built from the README's text.
pub const README_GATE_WASM: &str = env!("README_GATE_WASM");
/// Its manifest.
pub const README_GATE_MANIFEST: &str = env!("README_GATE_MANIFEST");
/// The complete Python gate of docs/python-plugins.md, built from the page's text.
pub const PYTHON_DOC_GATE_WASM: &str = env!("PYTHON_DOC_GATE_WASM");
/// Its manifest, as the page shows it.
pub const PYTHON_DOC_GATE_MANIFEST: &str = env!("PYTHON_DOC_GATE_MANIFEST");
/// A tool that brings its own gate (the guarded-tool-plugin world).
pub const GUARDED_TOOL_WASM: &str = env!("GUARDED_TOOL_WASM");
/// Its manifest.
pub const GUARDED_TOOL_MANIFEST: &str = env!("GUARDED_TOOL_MANIFEST");
/// A tool and a skill in one component, asking for a read-write mount its skill exports try
/// to write into.
pub const SKILL_TOOL_WASM: &str = env!("SKILL_TOOL_WASM");
/// Its manifest.
pub const SKILL_TOOL_MANIFEST: &str = env!("SKILL_TOOL_MANIFEST");
/// The JavaScript e-mail gate (componentize-js), built from `tests/plugins/email-gate-js`.
pub const EMAIL_GATE_JS_WASM: &str = env!("EMAIL_GATE_JS_WASM");
/// Its manifest.
pub const EMAIL_GATE_JS_MANIFEST: &str = env!("EMAIL_GATE_JS_MANIFEST");
/// The JavaScript e-mail gate's Rust twin (same pattern, same questions).
pub const EMAIL_TWIN_WASM: &str = env!("EMAIL_TWIN_WASM");
/// Its manifest.
pub const EMAIL_TWIN_MANIFEST: &str = env!("EMAIL_TWIN_MANIFEST");

/// A plugin folder at `dir` as an author or operator has one: the component built at `wasm`
/// (under its own file name) and the manifest at `manifest` as `plugin.toml`. Returns `dir`.
///
/// # Panics
/// When the files cannot be copied.
pub fn plugin_folder_of(dir: &Path, wasm: &str, manifest: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let name = Path::new(wasm).file_name().expect("a file name");
    std::fs::copy(wasm, dir.join(name)).expect("copy the component");
    std::fs::copy(manifest, dir.join("plugin.toml")).expect("copy the manifest");
    dir.to_owned()
}
