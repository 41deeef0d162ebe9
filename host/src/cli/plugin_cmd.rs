//! `passepartout plugin install | remove | update`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::audit;
use passepartout::install::{self, read_source};
use passepartout::runtime::PluginSource;
use passepartout::runtime::limits;
use passepartout::runtime::manifest::{LimitSpec, Manifest};
use passepartout::terminal::one_line;

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
pub(super) fn consent(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        errln!("{question} [y/N] (no terminal to ask on: pass --yes to consent)");
        return false;
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

/// The limits `manifest` asks above the defaults that the policy does not grant yet.
fn asked_limits(setup: &Setup, manifest: &Manifest) -> LimitSpec {
    let granted = &setup.policy.for_plugin(&manifest.name).limits;
    limits::ungranted_asks(&manifest.kinds, &manifest.limits, granted)
}

/// Write the limits the operator consented to into policy.toml, or say how.
fn grant(setup: &Setup, name: &str, limits: &LimitSpec, shown: &[String]) {
    if shown.is_empty() {
        return;
    }
    match &setup.policy_file {
        Some(path) => match passepartout::policy_edit::grant_limits(path, name, limits) {
            Ok(not_inherited) => {
                outln!(
                    "granted in {}: [plugins.{name}.limits] {}",
                    path.display(),
                    shown.join(", ")
                );
                if !not_inherited.is_empty() {
                    outln!(
                        "note: [plugins.{name}] replaces [default] for it, so it no longer gets \
                         [default]'s {}; grant under [plugins.{name}] what it needs of them",
                        not_inherited.join(", ")
                    );
                }
            }
            Err(e) => errln!(
                "could not write the grant ({e}); add it by hand: [plugins.{name}.limits] {}",
                shown.join(", ")
            ),
        },
        None => errln!(
            "no policy.toml to write the grant to: add [plugins.{name}.limits] {} to yours",
            shown.join(", ")
        ),
    }
}

fn asks_anything(a: &audit::PluginAudit) -> bool {
    a.capabilities.iter().any(|row| !row.declared.is_empty())
}

/// Why `candidate` (read from `source`) cannot join the installed plugins: a tool it offers
/// (as offered, after the policy's aliases) that another installed plugin offers already. The
/// load would refuse both (see `Runtime::load_all`), so that installing a plugin could take a
/// tool over from one the operator trusted with it, or at least take it away.
///
/// A candidate that does not load yet (it waits for a grant, or the policy turns it off) has
/// no tools in its audit: they are read without the grant ([`Runtime::offered_tools`]), since
/// granting it later would otherwise let it take the tool unseen. If they cannot be read even
/// so, it is refused: what it would take is unknown.
///
/// [`Runtime::offered_tools`]: passepartout::runtime::Runtime::offered_tools
fn taken_tool(
    setup: &Setup,
    candidate: &audit::PluginAudit,
    source: &PluginSource,
) -> Option<String> {
    let offered: Vec<String> = match &candidate.tools_unread {
        None => candidate.tools.iter().map(|t| t.name.clone()).collect(),
        Some(_) => match setup.runtime.offered_tools(source, &setup.policy) {
            Ok(names) => names,
            Err(e) => {
                return Some(format!(
                    "the tools {} offers cannot be read ({}), so whether one would take a tool \
                     an installed plugin offers is unknown; fix what the error says (`passepartout \
                     audit` lists what it needs granted), then install it again",
                    candidate.name,
                    one_line(&passepartout::runtime::chain(&e))
                ));
            }
        },
    };
    let installed = setup.runtime.load_all(&setup.sources, &setup.policy);
    offered.iter().find_map(|t| {
        installed
            .plugins
            .iter()
            .filter(|p| p.id.name != candidate.name)
            .find(|p| p.tools.iter().any(|o| o.name == *t))
            .map(|p| {
                format!(
                    "{} offers the tool {:?}, which the installed plugin {:?} offers already; \
                     rename it, offer it under another name in policy.toml \
                     ([plugins.{}.tool_aliases] {} = \"{}-{}\"), or remove {:?} first",
                    candidate.name, t, p.id.name, candidate.name, t, candidate.name, t, p.id.name
                )
            })
    })
}

pub fn install(setup: &Setup, common: &Common, path: &Path, yes: bool) -> anyhow::Result<ExitCode> {
    let (plugin_dir, pins) = dirs(setup)?;
    let (source, manifest) = read_source(path)?;
    let report = audit::audit(
        &setup.runtime,
        std::slice::from_ref(&source),
        &setup.policy,
        &audit::DaemonPorts::of(&setup.settings),
    );
    super::audit::print_table(&report);
    if report.worst() == Some(audit::Severity::High) {
        errln!("not installed: the audit has a high finding (above)");
        return Ok(ExitCode::FAILURE);
    }
    if let Some(plugin) = report.plugins.first()
        && let Some(why) = taken_tool(setup, plugin, &source)
    {
        errln!("not installed: {why}");
        return Ok(ExitCode::FAILURE);
    }
    let limits = asked_limits(setup, &manifest);
    let shown = limits::describe(&limits);
    let capabilities = report.plugins.first().is_some_and(asks_anything);
    if !shown.is_empty() {
        outln!(
            "{} asks for limits above the defaults: {} (without a grant it runs at the defaults)",
            manifest.name,
            one_line(&shown.join(", "))
        );
    }
    let question = match (capabilities, shown.is_empty()) {
        (true, true) => "asks for the capabilities above",
        (true, false) => "asks for the capabilities and limits above",
        (false, false) => "asks for the limits above",
        (false, true) => "",
    };
    if !question.is_empty()
        && !yes
        && !consent(&format!(
            "{} {question}. Install it{}?",
            manifest.name,
            if shown.is_empty() {
                ""
            } else {
                ", granting the limits in policy.toml"
            }
        ))
    {
        errln!("not installed");
        return Ok(ExitCode::FAILURE);
    }
    let target = install::install(&source, &manifest, plugin_dir, pins, false)?;
    outln!(
        "installed {} {} at {} (sha256 pinned)",
        manifest.name,
        manifest.version,
        target.display()
    );
    grant(setup, &manifest.name, &limits, &shown);
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
    // The diff starts from the build the operator consented to. An installed build changed
    // since (its pin no longer matches) or that can no longer be read is none: the update is
    // then asked for as an install.
    let pinned = passepartout::runtime::pins::Pins::load(pins)?;
    let base = match read_source(&plugin_dir.join(name)) {
        Ok((old_source, _)) => match pinned.plugins.get(name).map(|pin| {
            passepartout::runtime::pins::check(pin, &old_source.manifest, &old_source.component)
        }) {
            Some(Err((what, _))) => Err(format!("its {what} changed after install")),
            _ => Ok(old_source),
        },
        Err(e) if pinned.plugins.contains_key(name) => Err(format!(
            "it can no longer be read ({})",
            passepartout::runtime::chain(&e)
        )),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("{name} is not installed"))),
    };
    let daemon = audit::DaemonPorts::of(&setup.settings);
    let new = audit::audit_one(&setup.runtime, &new_source, &setup.policy, &daemon);
    let d = match &base {
        Ok(old_source) => {
            let old = audit::audit_one(&setup.runtime, old_source, &setup.policy, &daemon);
            let d = audit::diff::diff(&old, &new);
            super::audit::print_diff(&d);
            Some(d)
        }
        Err(why) => {
            errln!(
                "the installed {name}: {why}. No diff can start from a build nobody consented \
                 to, so the update is asked for as a new install (the new build's audit follows)"
            );
            let report = audit::audit(
                &setup.runtime,
                std::slice::from_ref(&new_source),
                &setup.policy,
                &daemon,
            );
            super::audit::print_table(&report);
            None
        }
    };
    if new
        .findings
        .iter()
        .any(|f| f.severity == audit::Severity::High)
    {
        errln!("not updated: the new build has a high finding");
        return Ok(ExitCode::FAILURE);
    }
    if let Some(why) = taken_tool(setup, &new, &new_source) {
        errln!("not updated: {why}");
        return Ok(ExitCode::FAILURE);
    }
    let limits = asked_limits(setup, &manifest);
    let shown = limits::describe(&limits);
    if !shown.is_empty() {
        outln!(
            "the new {name} asks for limits above the defaults: {} (without a grant it runs at \
             the defaults)",
            one_line(&shown.join(", "))
        );
    }
    // Consent for every widening (a gate's new component or config among them: its code and
    // config are its rules) and every change in what the model is told; a narrowing alone is
    // applied without asking.
    let question = match &d {
        Some(_) => format!(
            "The update widens what {name} can do (for a gate, a new component or config: its \
             rules), changes what the model is told (+ and [model] above) or asks for limits. \
             Update it?"
        ),
        None => format!("Install the new {name} (above) in place of the installed one?"),
    };
    if (d.as_ref().is_none_or(audit::diff::Diff::needs_consent) || !shown.is_empty())
        && !yes
        && !consent(&question)
    {
        errln!("not updated");
        return Ok(ExitCode::FAILURE);
    }
    let target = install::install(&new_source, &manifest, plugin_dir, pins, true)?;
    outln!(
        "updated {name} to {} at {} (sha256 pinned)",
        manifest.version,
        target.display()
    );
    grant(setup, name, &limits, &shown);
    super::reload::tell_daemon(common);
    Ok(ExitCode::SUCCESS)
}

pub fn remove(setup: &Setup, common: &Common, name: &str) -> anyhow::Result<ExitCode> {
    let (plugin_dir, pins) = dirs(setup)?;
    install::remove(name, plugin_dir, pins)?;
    outln!("removed {name}");
    super::reload::tell_daemon(common);
    Ok(ExitCode::SUCCESS)
}
