//! JavaScript test plugins (`tests/plugins/<name>-js/app.js`), built with componentize-js for
//! the tests' build script (never the host's: a clean build of Passepartout needs no Node.js).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The componentize-js release the JavaScript plugins are built with (`plugin build` installs
/// the same one for authors): `.ci/toolchains`.
fn componentize_js() -> String {
    crate::pins::pin("componentize_js")
}

/// Where componentize-js is installed for the tests: `.ci/run` puts it there, and the first
/// build does when it is missing (`npm install`, from the npm registry).
fn toolchain(workspace: &Path) -> PathBuf {
    let version = componentize_js();
    let prefix = workspace.join("target/componentize-js");
    let bin = prefix.join("node_modules/.bin/componentize-js");
    let installed = prefix.join("node_modules/@bytecodealliance/componentize-js/package.json");
    let pinned = std::fs::read_to_string(&installed)
        .is_ok_and(|p| p.contains(&format!("\"version\": \"{version}\"")));
    if bin.is_file() && pinned {
        return bin;
    }
    std::fs::create_dir_all(&prefix)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", prefix.display()));
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg(format!("@bytecodealliance/componentize-js@{version}"))
        .output();
    match installed {
        Ok(out) if out.status.success() && bin.is_file() => bin,
        Ok(out) => panic!(
            "\n\nthe JavaScript test plugins are built with componentize-js {version}, and \
             npm could not install it into {}:\n{}\n",
            prefix.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "\n\nthe JavaScript test plugins are built with componentize-js {version} \
             from npm, and npm does not run ({e}): install Node.js 18 or later with npm \
             (Debian/Ubuntu: apt-get install nodejs npm; `.ci/run` does this)\n"
        ),
    }
}

/// Build `tests/plugins/<dir>/app.js` as a gate into `out_dir/<name>.wasm`, unless it is
/// there from the same sources. Returns the component.
pub fn build_gate(workspace: &Path, dir: &str, name: &str, out_dir: &Path) -> PathBuf {
    let source = workspace.join("tests/plugins").join(dir).join("app.js");
    let wit = workspace.join("wit");
    let wasm = out_dir.join(format!("{name}.wasm"));
    let stamp = out_dir.join(format!("{name}.wasm.inputs"));
    let mut hash = crate::python::Fnv::new();
    for file in [&source, &wit.join("plugin.wit")] {
        let bytes =
            std::fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        hash.write(&bytes);
    }
    hash.write(componentize_js().as_bytes());
    let digest = format!("{:032x}", hash.0);
    if wasm.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == digest) {
        return wasm;
    }
    let componentize_js = toolchain(workspace);
    let partial = out_dir.join(format!("{name}.wasm.partial"));
    // A gate gets no WASI from the host: every feature is left out.
    let output = Command::new(&componentize_js)
        .arg(&source)
        .arg("--wit")
        .arg(&wit)
        .args([
            "-n",
            "gate-plugin",
            "-d",
            "stdio",
            "random",
            "clocks",
            "http",
            "fetch-event",
            "-o",
        ])
        .arg(&partial)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", componentize_js.display()));
    assert!(
        output.status.success() && partial.is_file(),
        "\n\nbuilding the JavaScript plugin {name} with componentize-js failed:\n{}{}\n",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::rename(&partial, &wasm)
        .unwrap_or_else(|e| panic!("cannot move {} into place: {e}", partial.display()));
    std::fs::write(&stamp, format!("{digest}\n"))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", stamp.display()));
    wasm
}
