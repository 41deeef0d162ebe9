//! Builds the test-only plugins under tests/plugins/ for wasm32-wasip2 and tells the tests
//! where they are (as wasmtime's test-programs-artifacts does).

#[path = "../host/build/guests.rs"]
mod guests;
#[path = "build/js.rs"]
mod js;
#[path = "../host/build/pins.rs"]
mod pins;
#[path = "../host/build/python.rs"]
#[allow(dead_code)] // `build` is for the host's own Python plugins
mod python;

use std::path::Path;

const TEST_PLUGINS: &[&str] = &[
    "hostile-tool",
    "hostile-gate",
    "echo-skill",
    "skill-tool",
    "future-gate",
    "pii-twin",
    "old-gate",
    "readme-gate",
    "guarded-tool",
    "email-twin",
];

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let workspace = Path::new(&manifest_dir)
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf();
    guests::rerun_if_changed(
        &workspace,
        &[
            "tests/plugins",
            "skills-sdk",
            "wit",
            "Cargo.lock",
            "Cargo.toml",
        ],
    );
    // The reference Org parser's release, for the differential test's hint.
    println!("cargo:rustc-env=ORGPARSE_VERSION={}", pins::pin("orgparse"));
    python_doc_gate(&workspace);
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let email = js::build_gate(&workspace, "email-gate-js", "email-gate", &out_dir);
    println!("cargo:rustc-env=EMAIL_GATE_JS_WASM={}", email.display());
    println!(
        "cargo:rustc-env=EMAIL_GATE_JS_MANIFEST={}",
        workspace
            .join("tests/plugins/email-gate-js/plugin.toml")
            .display()
    );
    for (name, wasm) in guests::build(&workspace, TEST_PLUGINS) {
        let var = name.to_uppercase().replace('-', "_");
        println!("cargo:rustc-env={var}_WASM={}", wasm.display());
        println!(
            "cargo:rustc-env={var}_MANIFEST={}",
            workspace
                .join("tests/plugins")
                .join(&name)
                .join("plugin.toml")
                .display()
        );
    }
}

/// The complete gate of docs/python-plugins.md, built from the page's own text (its first
/// ```python block and the ```toml manifest after it), so that the example cannot rot.
fn python_doc_gate(workspace: &Path) {
    let page = workspace.join("docs/python-plugins.md");
    println!("cargo:rerun-if-changed={}", page.display());
    let text = std::fs::read_to_string(&page).expect("docs/python-plugins.md is readable");
    let section = text
        .split("## A complete gate")
        .nth(1)
        .expect("docs/python-plugins.md has a \"## A complete gate\" section");
    let block = |fence: &str| {
        section
            .split(fence)
            .nth(1)
            .and_then(|rest| rest.split("\n```").next())
            .unwrap_or_else(|| panic!("the section has a {fence} block"))
            .to_owned()
    };
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("python-doc-gate");
    std::fs::create_dir_all(&out).expect("create the example's folder");
    let app = out.join("app.py");
    let manifest = out.join("plugin.toml");
    // Written only when changed: the Python build is skipped when its inputs are unchanged.
    for (path, body) in [
        (&app, block("```python\n")),
        (&manifest, block("```toml\n")),
    ] {
        if std::fs::read_to_string(path).ok().as_deref() != Some(body.as_str()) {
            std::fs::write(path, body).expect("write the extracted example");
        }
    }
    let wasm = python::build_dir(workspace, "python-doc-gate", &out);
    println!("cargo:rustc-env=PYTHON_DOC_GATE_WASM={}", wasm.display());
    println!(
        "cargo:rustc-env=PYTHON_DOC_GATE_MANIFEST={}",
        manifest.display()
    );
}
