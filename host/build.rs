//! Builds the first-party plugins under `plugins/` for wasm32-wasip2 and embeds them, with their
//! `plugin.toml`, in the `passepartout` binary: a fresh machine needs no setup to have them.
#![allow(
    clippy::disallowed_methods,
    reason = "a build script reads cargo's variables (OUT_DIR, PROFILE...), not settings"
)]

#[path = "build/guests.rs"]
mod guests;
#[path = "build/pins.rs"]
mod pins;
#[path = "build/python.rs"]
mod python;

use std::fmt::Write as _;

use sha2::Digest as _;
use std::path::Path;

/// The first-party plugins, by package name (each is `plugins/<name>/`).
const PLUGINS: &[&str] = &[
    "shell-guard",
    "files",
    "eval",
    "shell",
    "http-fetch",
    "memory",
    "chat",
    "gardener",
    "secrets",
    "explanation",
    "approval",
];

/// The first-party plugins written in Python (`plugins/<name>/app.py`), built with componentize-py.
const PYTHON_PLUGINS: &[&str] = &["pii"];

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let workspace = Path::new(&manifest_dir)
        .parent()
        .expect("host/ has a parent")
        .to_path_buf();
    guests::rerun_if_changed(
        &workspace,
        &["plugins", "skills-sdk", "wit", "Cargo.lock", "Cargo.toml"],
    );
    let mut built = guests::build(&workspace, PLUGINS);
    built.extend(python::build(&workspace, PYTHON_PLUGINS));

    let out_dir = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).to_path_buf();
    let mut code = String::from(
        "/// The first-party plugins, built from plugins/ by host/build.rs.\n\
         pub static BUILTIN: &[Builtin] = &[\n",
    );
    for (name, wasm) in &built {
        let manifest = workspace.join("plugins").join(name).join("plugin.toml");
        // The component's sha256 (its compile-cache key), so that a start does not read and
        // hash every embedded component (~23 MiB) to find its cached compiled form. The bytes
        // hashed are the bytes embedded: a copy in OUT_DIR, which no other build writes.
        let bytes = std::fs::read(wasm).expect("reading a built plugin component");
        let sha256: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let embedded = out_dir.join(format!("{name}.wasm"));
        std::fs::write(&embedded, &bytes).expect("copying a built plugin component into OUT_DIR");
        writeln!(
            code,
            "    Builtin {{ dir: {name:?}, manifest: include_str!({:?}), component: include_bytes!({:?}), sha256: {sha256:?} }},",
            manifest.display().to_string(),
            embedded.display().to_string(),
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    let out = out_dir.join("builtin.rs");
    std::fs::write(&out, code).expect("writing builtin.rs into OUT_DIR");
    sdk_files(&workspace, &out_dir);
    // One pin (.ci/toolchains) for the built-in Python plugins, the JavaScript test plugins
    // and `plugin build`'s Python and JavaScript projects.
    println!(
        "cargo:rustc-env=COMPONENTIZE_PY_VERSION={}",
        python::componentize_py_version()
    );
    println!(
        "cargo:rustc-env=COMPONENTIZE_JS_VERSION={}",
        pins::pin("componentize_js")
    );
}

/// The SDK's sources and the WIT, for `passepartout plugin new` to write into a project (the
/// SDK is not published): `sdk_files.rs` in OUT_DIR, each file as (path in the project, text),
/// and the SDK's dependencies as the workspace pins them.
fn sdk_files(workspace: &Path, out_dir: &Path) {
    let mut files = Vec::new();
    for (dir, into) in [
        ("skills-sdk/src", "sdk/passepartout-sdk/src"),
        ("wit", "sdk/wit"),
    ] {
        let mut entries: Vec<_> = std::fs::read_dir(workspace.join(dir))
            .expect("reading the SDK's sources")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        for path in entries {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            files.push((format!("{into}/{name}"), path));
        }
    }
    let manifest: toml::Table = std::fs::read_to_string(workspace.join("Cargo.toml"))
        .expect("reading the workspace's Cargo.toml")
        .parse()
        .expect("the workspace's Cargo.toml parses");
    let deps = &manifest["workspace"]["dependencies"];
    let mut deps_text = String::new();
    for dep in ["wit-bindgen", "serde", "serde_json", "schemars"] {
        writeln!(deps_text, "{dep} = {}", deps[dep]).expect("writing to a String");
    }
    let mut code = String::from(
        "/// The SDK's sources and the WIT, by their path in a new plugin project.\n\
         pub static SDK_FILES: &[(&str, &str)] = &[\n",
    );
    for (into, path) in files {
        writeln!(
            code,
            "    ({into:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    writeln!(
        code,
        "/// The SDK's dependencies, as the workspace pins them (TOML lines).\npub const SDK_DEPENDENCIES: &str = {deps_text:?};"
    )
    .expect("writing to a String");
    writeln!(
        code,
        "/// The workspace's Cargo.lock: a new Rust project starts from the versions this release\n/// was built and tested with.\npub const WORKSPACE_LOCK: &str = include_str!({:?});",
        workspace.join("Cargo.lock").display().to_string()
    )
    .expect("writing to a String");
    std::fs::write(out_dir.join("sdk_files.rs"), code).expect("writing sdk_files.rs into OUT_DIR");
}
