//! `passepartout plugin install | remove | update`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::audit::{self, render};
use passepartout::install::{self, read_source};

use super::{Common, Setup};

fn dirs(setup: &Setup) -> anyhow::Result<(&Path, &Path)> {
    let plugin_dir = setup
        .plugin_dir
        .as_deref()
        .context("no plugin directory: pass --plugins DIR")?;
    let pins = setup
        .pins_file
        .as_deref()
        .context("no configuration directory for pins.toml: set XDG_CONFIG_HOME")?;
    Ok((plugin_dir, pins))
}

/// Ask on the terminal; without one (and without --yes) the answer is no.
fn consent(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        eprintln!("{question} [y/N] (no terminal to ask on: pass --yes to consent)");
        return false;
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

fn asks_anything(a: &audit::PluginAudit) -> bool {
    a.capabilities.iter().any(|row| !row.declared.is_empty())
}

pub fn install(setup: &Setup, common: &Common, path: &Path, yes: bool) -> anyhow::Result<ExitCode> {
    let (plugin_dir, pins) = dirs(setup)?;
    let (source, manifest) = read_source(path)?;
    let report = audit::audit(&setup.runtime, std::slice::from_ref(&source), &setup.policy);
    print!(
        "{}",
        render::table(&report, std::io::stdout().is_terminal())
    );
    if report.worst() == Some(audit::Severity::High) {
        eprintln!("not installed: the audit has a high finding (above)");
        return Ok(ExitCode::FAILURE);
    }
    if report.plugins.first().is_some_and(asks_anything)
        && !yes
        && !consent(&format!(
            "{} asks for the capabilities above. Install it?",
            manifest.name
        ))
    {
        eprintln!("not installed");
        return Ok(ExitCode::FAILURE);
    }
    let target = install::install(&source, &manifest, plugin_dir, pins, false)?;
    println!(
        "installed {} {} at {} (sha256 pinned)",
        manifest.name,
        manifest.version,
        target.display()
    );
    super::reload::tell_daemon(common);
    Ok(ExitCode::SUCCESS)
}

pub fn update(
    setup: &Setup,
    common: &Common,
    name: &str,
    path: &Path,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let (plugin_dir, pins) = dirs(setup)?;
    let (new_source, manifest) = read_source(path)?;
    anyhow::ensure!(
        manifest.name == name,
        "{} holds plugin {:?}, not {name:?}",
        path.display(),
        manifest.name
    );
    let (old_source, _) =
        read_source(&plugin_dir.join(name)).with_context(|| format!("{name} is not installed"))?;
    let old = audit::audit_one(&setup.runtime, &old_source, &setup.policy);
    let new = audit::audit_one(&setup.runtime, &new_source, &setup.policy);
    let d = audit::diff::diff(&old, &new);
    print!("{}", render::diff(&d, std::io::stdout().is_terminal()));
    if new
        .findings
        .iter()
        .any(|f| f.severity == audit::Severity::High)
    {
        eprintln!("not updated: the new build has a high finding");
        return Ok(ExitCode::FAILURE);
    }
    if d.widens()
        && !yes
        && !consent(&format!(
            "The update changes what {name} asks for (above). Update it?"
        ))
    {
        eprintln!("not updated");
        return Ok(ExitCode::FAILURE);
    }
    let target = install::install(&new_source, &manifest, plugin_dir, pins, true)?;
    println!(
        "updated {name} to {} at {} (sha256 pinned)",
        manifest.version,
        target.display()
    );
    super::reload::tell_daemon(common);
    Ok(ExitCode::SUCCESS)
}

pub fn remove(setup: &Setup, common: &Common, name: &str) -> anyhow::Result<ExitCode> {
    let (plugin_dir, pins) = dirs(setup)?;
    install::remove(name, plugin_dir, pins)?;
    println!("removed {name}");
    super::reload::tell_daemon(common);
    Ok(ExitCode::SUCCESS)
}
