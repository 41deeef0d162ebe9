//! JavaScript projects: `app.js` built with componentize-js (SpiderMonkey, snapshotted with the
//! module evaluated), from npm.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{AuthoringError, Kind, WORLD};

/// The componentize-js release `plugin build` installs and a new project's `package.json` asks
/// for.
pub const COMPONENTIZE_JS: &str = env!("COMPONENTIZE_JS_VERSION");

/// The npm package.
const PACKAGE: &str = "@bytecodealliance/componentize-js";

/// The files of a new JavaScript project (all but `cases.json`).
pub(super) fn files(name: &str, kind: Kind) -> Vec<(String, String)> {
    let mut files = super::interpreted_files(name, kind, 64, "*.wasm\nnode_modules/\n");
    let source = match kind {
        Kind::Gate => include_str!("templates/gate.js"),
        Kind::Tool => include_str!("templates/tool.js"),
        Kind::Skill => include_str!("templates/skill.js"),
    };
    files.push(("app.js".into(), source.to_owned()));
    files.push((
        "package.json".into(),
        format!(
            "{{\n  \"name\": \"{name}\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \"type\": \"module\",\n  \"description\": \"A Passepartout plugin: `passepartout plugin build` builds it.\",\n  \"devDependencies\": {{\n    \"{PACKAGE}\": \"{COMPONENTIZE_JS}\"\n  }}\n}}\n"
        ),
    ));
    files
}

/// The componentize-js command: the project's own (after `npm install` in it), else the one
/// `plugin build` keeps under `build_dir` for every project, installed from npm the first time.
fn componentize_js(
    dir: &Path,
    build_dir: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<PathBuf, AuthoringError> {
    let own = dir.join("node_modules/.bin/componentize-js");
    if own.is_file() {
        return Ok(own);
    }
    let shared = build_dir.join(format!("componentize-js-{COMPONENTIZE_JS}"));
    let bin = shared.join(INSTALLED_BIN);
    if bin.is_file() {
        return Ok(bin);
    }
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err(AuthoringError::Missing {
            what: "Node.js (node and npm)".into(),
            how: "install Node.js 18 or later (Debian/Ubuntu: apt-get install nodejs npm)".into(),
        });
    }
    // One install at a time (two terminals, parallel tests): the others wait for it, then use
    // it, rather than fetch 400 MB each or clear a leftover another build just replaced.
    std::fs::create_dir_all(build_dir).map_err(super::io(build_dir))?;
    let lock_path = build_dir.join(format!("componentize-js-{COMPONENTIZE_JS}.lock"));
    let lock = std::fs::File::create(&lock_path).map_err(super::io(&lock_path))?;
    lock.lock().map_err(super::io(&lock_path))?;
    if bin.is_file() {
        return Ok(bin);
    }
    say(&format!(
        "installing {PACKAGE} {COMPONENTIZE_JS} from npm into {} (once for every project; about \
         400 MB)",
        shared.display()
    ));
    // npm installs into a staging directory of this build's own, renamed into place whole: a
    // build that does not take the lock (an older release) never sees a half-written tree,
    // and an interrupted install leaves nothing that looks installed.
    let staging = tempfile::Builder::new()
        .prefix(&format!("componentize-js-{COMPONENTIZE_JS}.partial-"))
        .tempdir_in(build_dir)
        .map_err(super::io(build_dir))?;
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(staging.path())
        .arg(format!("{PACKAGE}@{COMPONENTIZE_JS}"))
        .output()
        .map_err(|e| AuthoringError::Missing {
            what: format!("npm ({e})"),
            how: "install Node.js 18 or later with npm (Debian/Ubuntu: apt-get install npm)".into(),
        })?;
    if !output.status.success() || !staging.path().join(INSTALLED_BIN).is_file() {
        return Err(AuthoringError::Build(format!(
            "npm could not install {PACKAGE} {COMPONENTIZE_JS}:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    into_shared(staging, &shared)?;
    drop(lock);
    Ok(bin)
}

/// Where npm puts the command, below the directory it installs into (a relative link, so the
/// installed tree can be moved).
const INSTALLED_BIN: &str = "node_modules/.bin/componentize-js";

/// Rename a finished install to `shared`. If another build got there first, its install is
/// kept and this one removed; a tree left at `shared` without the command (an install made by
/// an older release, interrupted) is replaced.
fn into_shared(staging: tempfile::TempDir, shared: &Path) -> Result<(), AuthoringError> {
    if std::fs::rename(staging.path(), shared).is_ok() {
        // Moved: nothing is left at the staging path for the guard to remove.
        let _ = staging.keep();
        return Ok(());
    }
    if shared.join(INSTALLED_BIN).is_file() {
        return Ok(());
    }
    if shared.exists() {
        std::fs::remove_dir_all(shared).map_err(super::io(shared))?;
    }
    std::fs::rename(staging.path(), shared).map_err(super::io(shared))?;
    let _ = staging.keep();
    Ok(())
}

/// componentize-js over `app.js` against the project's world. WASI features the plugin cannot
/// use are left out: all of them for a gate (which gets no WASI from the host), HTTP for a tool
/// (outbound HTTP is a grant, and its own interface).
pub(super) fn build(
    dir: &Path,
    build_dir: &Path,
    kind: Kind,
    component: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<(), AuthoringError> {
    let componentize_js = componentize_js(dir, build_dir, say)?;
    let disabled: &[&str] = match kind {
        Kind::Gate => &["stdio", "random", "clocks", "http", "fetch-event"],
        Kind::Tool | Kind::Skill => &["http", "fetch-event"],
    };
    let output = Command::new(&componentize_js)
        .current_dir(dir)
        .args(["app.js", "--wit", "wit", "-n", WORLD, "-d"])
        .args(disabled)
        .arg("-o")
        .arg(component)
        .output()
        .map_err(|e| AuthoringError::Missing {
            what: format!("{} ({e})", componentize_js.display()),
            how: format!("npm install {PACKAGE}@{COMPONENTIZE_JS}"),
        })?;
    if !output.status.success() {
        return Err(AuthoringError::Build(format!(
            "componentize-js failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finished install in a fresh staging directory under `build_dir`.
    fn finished(build_dir: &Path, marker: &str) -> tempfile::TempDir {
        let staging = tempfile::tempdir_in(build_dir).expect("staging");
        let bin = staging.path().join(INSTALLED_BIN);
        std::fs::create_dir_all(bin.parent().expect("parent")).expect("bin dir");
        std::fs::write(&bin, marker).expect("bin");
        staging
    }

    #[test]
    fn the_first_finished_install_is_kept_and_a_later_one_leaves_nothing_behind() {
        let build = tempfile::tempdir().expect("build dir");
        let shared = build.path().join("componentize-js");
        let first = finished(build.path(), "first");
        into_shared(first, &shared).expect("first install");
        let second = finished(build.path(), "second");
        let second_path = second.path().to_owned();
        into_shared(second, &shared).expect("second install");
        let kept = std::fs::read_to_string(shared.join(INSTALLED_BIN)).expect("installed");
        assert_eq!(
            kept, "first",
            "a finished install is never replaced under its users"
        );
        assert!(!second_path.exists(), "the losing install is removed");
        let left: Vec<_> = std::fs::read_dir(build.path()).expect("list").collect();
        assert_eq!(left.len(), 1, "only the shared install is left: {left:?}");
    }

    #[test]
    fn an_interrupted_install_left_at_the_shared_place_is_replaced() {
        let build = tempfile::tempdir().expect("build dir");
        let shared = build.path().join("componentize-js");
        std::fs::create_dir_all(shared.join("node_modules/half")).expect("leftover");
        into_shared(finished(build.path(), "whole"), &shared).expect("install");
        let kept = std::fs::read_to_string(shared.join(INSTALLED_BIN)).expect("installed");
        assert_eq!(kept, "whole");
        assert!(!shared.join("node_modules/half").exists());
    }
}
