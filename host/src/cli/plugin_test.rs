//! The author's loop: `passepartout plugin new` and `plugin build`
//! ([`passepartout::authoring`]), then `plugin test [PLUGIN] [--cases FILE] [--json]`: a plugin
//! against a table of cases ([`passepartout::cases`]) under the real runtime, beside the
//! operator's other plugins (whose tools give gates the effects the daemon would).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::cases::{self, CaseFile};
use passepartout::runtime::effects::Catalog;
use passepartout::runtime::policy::{FsGrant, PluginPolicy};
use passepartout::runtime::{Plugin, PluginSource};
use passepartout::terminal::one_line;

use super::Setup;

/// What is tested: a plugin folder (plugin.toml and its component), or an installed or built-in
/// plugin by name.
enum Target {
    Folder(PathBuf),
    Named(String),
}

fn target(given: Option<&Path>) -> Target {
    match given {
        None => Target::Folder(PathBuf::from(".")),
        Some(p) if p.exists() => Target::Folder(p.to_owned()),
        Some(p) => Target::Named(p.to_string_lossy().into_owned()),
    }
}

pub fn run(
    setup: Setup,
    given: Option<&Path>,
    cases_file: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let fixtures = tempfile::tempdir().context("a directory for the plugin's mounts")?;
    let (source, cases_path, file, policy) = match target(given) {
        Target::Folder(dir) => {
            let (source, manifest) = match passepartout::install::read_source(&dir) {
                Ok(read) => read,
                Err(e)
                    if ["Cargo.toml", "app.py", "app.js"]
                        .iter()
                        .any(|f| dir.join(f).is_file()) =>
                {
                    anyhow::bail!(
                        "{e}; build it first: passepartout plugin build {}",
                        dir.display()
                    )
                }
                Err(e) => return Err(e.into()),
            };
            let cases_path = cases_file.map_or_else(|| dir.join("cases.json"), Path::to_owned);
            let file = CaseFile::read(&cases_path)?;
            // What the author's plugin asks for, granted: its limits, and for each path it asks
            // for a copy of its fixture (or an empty directory). Nothing else: no variable of
            // the operator's, no network, no program, no memory (install it, and test it by
            // name under the policy, for those).
            // (`--cases cases.json` has the parent "", which `cases::mounts` reads as ".".)
            let base = cases_path.parent().unwrap_or(Path::new("."));
            let guests: Vec<String> = manifest
                .capabilities
                .fs
                .iter()
                .map(|f| f.guest.clone())
                .collect();
            let mounts = cases::mounts(&file, base, &guests, fixtures.path())
                .map_err(|e| anyhow::anyhow!("{}: {e}", cases_path.display()))?;
            for (guest, host) in &mounts {
                errln!(
                    "testing {} with {guest} mounted from a copy at {}",
                    manifest.name,
                    host.display()
                );
            }
            let entry = PluginPolicy {
                fs: mounts
                    .into_iter()
                    .zip(&manifest.capabilities.fs)
                    .map(|((guest, host), asked)| FsGrant {
                        guest,
                        host,
                        access: asked.access,
                    })
                    .collect(),
                limits: manifest.limits.clone(),
                ..PluginPolicy::default()
            };
            let mut policy = setup.policy.clone();
            policy.plugins.insert(manifest.name.clone(), entry);
            (source, cases_path, file, policy)
        }
        Target::Named(name) => {
            let source = named(&setup, &name)?;
            let cases_path = cases_file
                .map(Path::to_owned)
                .with_context(|| format!("give the cases to run {name} against: --cases FILE"))?;
            let file = CaseFile::read(&cases_path)?;
            // Fixtures are copied only for a folder, whose mounts the test grants. A plugin
            // tested by name gets the policy's mounts, the operator's real directories, and a
            // tool case there acts on them (no gate is asked): a case file must not be read as
            // if its fixtures stood in for them.
            anyhow::ensure!(
                file.mounts.is_empty(),
                "{}: mounts apply when testing a folder; a plugin tested by name runs on the \
                 mounts policy.toml grants it (its tool cases act on them for real). Remove \
                 `mounts` from the file, or test the plugin's folder",
                cases_path.display()
            );
            (source, cases_path, file, setup.policy.clone())
        }
    };
    let loaded = setup.load();
    let plugin = loaded
        .runtime
        .load(&source, &policy)
        .with_context(|| format!("{} does not load", source.manifest_path.display()))?;
    // The operator's other plugins give the actions' effects, as in the daemon.
    let others = loaded
        .report
        .plugins
        .iter()
        .filter(|p| p.id.name != plugin.id.name);
    let catalog = Catalog::new(others.chain(std::iter::once(&plugin)));
    let outcomes = cases::run(&plugin, &catalog, &file);
    print(&plugin, &cases_path, &outcomes, json)?;
    Ok(if cases::all_ok(&outcomes) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// An installed or built-in plugin's source, by its name.
fn named(setup: &Setup, name: &str) -> anyhow::Result<PluginSource> {
    setup
        .sources
        .iter()
        .find(|s| {
            passepartout::runtime::manifest::Manifest::parse(&s.manifest)
                .is_ok_and(|m| m.name == name)
        })
        .cloned()
        .with_context(|| {
            format!(
                "no plugin folder {name:?} here, and no installed or built-in plugin of that name \
                 (see `passepartout plugins`)"
            )
        })
}

fn print(
    plugin: &Plugin,
    cases_path: &Path,
    outcomes: &[cases::Outcome],
    json: bool,
) -> anyhow::Result<()> {
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "plugin": plugin.id.name,
                "version": plugin.id.version,
                "cases": cases_path,
                "passed": outcomes.len() - failed,
                "failed": failed,
                "outcomes": outcomes,
            }))?
        );
        return Ok(());
    }
    // A case's name is the file's, and what a plugin said is in `got`: each on one line, so
    // that neither can print a line of its own (a fake `ok` or summary).
    for o in outcomes {
        if o.ok {
            outln!("ok    {}", one_line(&o.name));
        } else {
            outln!(
                "FAIL  {}\n      expected {}\n      got      {}",
                one_line(&o.name),
                one_line(&o.expected),
                one_line(&o.got)
            );
        }
    }
    outln!(
        "{} {}: {} of {} cases passed ({})",
        plugin.id.name,
        plugin.id.version,
        outcomes.len() - failed,
        outcomes.len(),
        cases_path.display()
    );
    Ok(())
}

/// `plugin new NAME`: write the project, say what is next.
pub fn new(
    name: &str,
    kind: passepartout::authoring::Kind,
    lang: passepartout::authoring::Lang,
    dir: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_owned);
    let written = passepartout::authoring::new_project(&dir, name, kind, lang)?;
    outln!("wrote {} files in {}", written.len(), dir.display());
    outln!(
        "next:\n  passepartout plugin build {0}\n  passepartout plugin test {0}\n  passepartout plugin install {0}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `plugin build [DIR]`: the project's toolchain, with one target directory for every project.
pub fn build(dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let dir = dir.unwrap_or(Path::new("."));
    let target = passepartout::dirs::build_dir()
        .context("no cache directory for the shared build target: set XDG_CACHE_HOME")?;
    let component = passepartout::authoring::build(dir, &target, &mut |line| errln!("{line}"))?;
    outln!("built {}", component.display());
    Ok(ExitCode::SUCCESS)
}
