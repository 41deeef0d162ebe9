//! The daemon's plugin set, built at boot and again on every reload (`reload` requests, SIGHUP,
//! changed files), and the `reload` request that `plugin install/update/remove` send.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use passepartout::agent::Agent;
use passepartout::daemon::answer;
use passepartout::daemon::reload::{Reload, Reloaded};
use passepartout::daemon::server::{Router, RouterActuator};
use passepartout::providers::cascade::Carried;

use super::Common;

/// Load the plugins and build the daemon's pipeline around them. Returns it with the problems
/// worth telling the operator (plugins that did not load, gates missing).
///
/// # Errors
/// The journal, the policy or the provider configuration cannot be read.
pub fn build(
    common: &Common,
    router: &Arc<Router>,
    carried: &Carried,
    gateway: Option<&Arc<passepartout::gateway::Gateway>>,
) -> anyhow::Result<(Agent, Vec<String>)> {
    let mut places = common.places();
    if let Some(g) = gateway {
        places.also_protected = g.token_files();
    }
    let journal = places.journal()?;
    // The set is audited as it is loaded (at boot and on every reload): what the audit finds
    // worth a look is said beside what did not load.
    let (loaded, audit) = places.setup()?.load_audited();
    let problems = loaded.problems(&audit);
    let cascade = places.cascade(&loaded.settings)?.carrying(carried);
    let mcp_policy = loaded.policy.mcp.clone();
    let agent = loaded.assemble(
        journal,
        Some(Box::new(cascade)),
        vec![
            ("client", Box::new(RouterActuator(router.clone()))),
            ("cli", Box::new(RouterActuator(router.clone()))),
        ],
    )?;
    let agent = match gateway {
        Some(g) => agent.with_gateway(g.clone(), mcp_policy),
        None => agent,
    }
    .with_gate_events(router.gate_events())
    .with_progress(router.progress());
    Ok((agent, problems))
}

/// Reloads the daemon's plugin set from the plugin directory and the policy it started with.
pub struct DaemonReload {
    /// The options the daemon was started with.
    pub common: Common,
    /// Where replies to clients go.
    pub router: Arc<Router>,
    /// What the last load found worth telling (read once at start, to print).
    pub problems: Arc<std::sync::Mutex<Vec<String>>>,
    /// The providers' breakers and the sessions' spending, kept across reloads.
    pub carried: Carried,
    /// The MCP servers (gateway mode), started once with the daemon and kept across reloads.
    pub gateway: Option<Arc<passepartout::gateway::Gateway>>,
}

impl Reload for DaemonReload {
    fn load(&self) -> anyhow::Result<Agent> {
        // `plugin install`/`update` stage beside the target and swap by renaming: between the
        // two renames the plugin's folder is missing, and a set loaded then would lack it
        // without counting it as missing. Wait for the swap to finish.
        if let Some(dir) = self
            .common
            .plugins
            .clone()
            .or_else(passepartout::dirs::plugin_dir)
        {
            // ambient authority: the operator's plugin directory.
            let busy = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| n.starts_with(".staging-") || n.starts_with(".old-"));
            if let Some(name) = busy {
                anyhow::bail!(
                    "an install or update is in progress in {} ({name}); the set is loaded \
                     when it finishes (remove {name} if no install is running)",
                    dir.display()
                );
            }
        }
        let (pipeline, problems) = build(
            &self.common,
            &self.router,
            &self.carried,
            self.gateway.as_ref(),
        )?;
        for p in &problems {
            tracing::warn!("after loading the plugins: {p}");
        }
        *self.problems.lock().unwrap_or_else(|p| p.into_inner()) = problems;
        Ok(pipeline)
    }

    fn fingerprint(&self) -> String {
        let mut out = String::new();
        let files: [Option<PathBuf>; 3] = [
            self.common
                .policy
                .clone()
                .or_else(passepartout::dirs::policy_file),
            passepartout::dirs::pins_file(),
            self.common
                .config
                .clone()
                .or_else(passepartout::dirs::config_file),
        ];
        for f in files.iter().flatten() {
            stamp(&mut out, f);
        }
        if let Some(dir) = self
            .common
            .plugins
            .clone()
            .or_else(passepartout::dirs::plugin_dir)
        {
            stamp(&mut out, &dir);
            // ambient authority: the operator's plugin directory, one level of folders.
            let mut folders: Vec<PathBuf> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect();
            folders.sort();
            for folder in folders {
                stamp(&mut out, &folder);
                let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .collect();
                files.sort();
                for f in files {
                    stamp(&mut out, &f);
                }
            }
        }
        out
    }
}

/// Append `path`'s name, size and modification time (or that it is missing) to `out`.
fn stamp(out: &mut String, path: &Path) {
    use std::fmt::Write as _;
    match std::fs::metadata(path) {
        Ok(m) => {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let _ = writeln!(out, "{} {} {modified}", path.display(), m.len());
        }
        Err(_) => {
            let _ = writeln!(out, "{} missing", path.display());
        }
    }
}

/// Ask a running daemon to reload its plugin set, and say whether it took the change. No
/// daemon running is not an error: the next start loads the new set.
pub fn tell_daemon(common: &Common) {
    let mut client = match super::daemon::connect(common) {
        Ok(c) => c,
        Err(_) => {
            outln!("no daemon is running; it loads the change when it starts");
            return;
        }
    };
    let reloaded = client
        .call(&passepartout::daemon::request::Request::Reload)
        .map(|(_, reply)| answer::read::<Reloaded>(&reply, "how the reload went"));
    match reloaded {
        Ok(Ok(r)) => outln!(
            "the running daemon took the change: plugin set {}, {} plugin(s){}",
            r.set,
            r.plugins,
            if r.missing_gates.is_empty() {
                String::new()
            } else {
                format!(
                    "; these gates did not load, so it refuses every action: {}",
                    r.missing_gates.join(", ")
                )
            }
        ),
        Ok(Err(e)) => {
            errln!("the running daemon did not take the change (it keeps its running set): {e}")
        }
        Err(e) => errln!("could not ask the running daemon to reload: {e}"),
    }
}
