//! Filesystem: WASI preopens, confined by cap-std (`..`, absolute paths and symlinks cannot leave
//! a mount), read-only or read-write per grant.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::GrantRefused;
use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// Access to a mounted directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    ReadOnly,
    /// Also create, write, rename and delete.
    ReadWrite,
}

/// A directory a plugin asks to have mounted.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FsRequest {
    /// The absolute path the plugin sees, e.g. `/workspace`.
    pub guest: String,
    /// The most access it needs.
    pub access: Access,
    /// Why, for the operator and the audit.
    #[serde(default)]
    pub why: Option<String>,
}

/// A directory the operator mounts for a plugin.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FsGrant {
    /// The path the plugin sees; must match a path its manifest asks for.
    pub guest: String,
    /// The directory on this machine (`~/` is the daemon user's home).
    pub host: PathBuf,
    /// The most access granted; the plugin gets the lesser of this and what it asked for.
    pub access: Access,
}

/// A directory mounted for a plugin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mount {
    /// What the plugin sees, e.g. `/workspace`.
    pub guest: String,
    /// The directory on this machine.
    pub host: PathBuf,
    /// The lesser of what was asked and what was granted.
    pub access: Access,
    /// Where `host` led when the grant was checked (at load, links resolved): a call opens the
    /// mount only while it still leads there.
    #[serde(skip)]
    pub resolved: PathBuf,
}

/// The filesystem capability ([`super::Factor`]).
pub struct Filesystem;

fn shown(guest: &str, host: &Path, access: Access) -> String {
    format!("{guest} -> {} ({access:?})", host.display())
}

impl super::Factor for Filesystem {
    fn name(&self) -> &'static str {
        "filesystem"
    }
    fn what(&self) -> &'static str {
        "directories (wasi:filesystem)"
    }
    fn owns(&self, interface: &str) -> bool {
        interface.starts_with("wasi:filesystem/")
    }
    fn asked(&self, asked: &CapabilityRequest) -> bool {
        !asked.fs.is_empty()
    }
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut super::Grants,
    ) -> Result<(), super::GrantRefused> {
        grants.fs = resolve(&asked.fs, &policy.fs)?;
        Ok(())
    }
    fn granted(&self, grants: &super::Grants) -> bool {
        !grants.fs.is_empty()
    }
    fn grant_hint(&self, plugin: &str) -> String {
        format!(
            "grant a directory under [plugins.{plugin}]: fs = [{{ guest = \"/workspace\", host = \"~/notes\", access = \"read-only\" }}]"
        )
    }
    fn sides(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &super::Grants,
    ) -> super::Sides {
        super::Sides {
            declared: asked
                .fs
                .iter()
                .map(|f| format!("{} ({:?})", f.guest, f.access))
                .collect(),
            granted: policy
                .fs
                .iter()
                .map(|f| shown(&f.guest, &f.host, f.access))
                .collect(),
            effective: grants
                .fs
                .iter()
                .map(|m| shown(&m.guest, &m.host, m.access))
                .collect(),
            undeclared: policy
                .fs
                .iter()
                .filter(|g| !asked.fs.iter().any(|r| r.guest == g.guest))
                .map(|f| shown(&f.guest, &f.host, f.access))
                .collect(),
        }
    }
    fn enforced(&self, grants: &super::Grants) -> String {
        if grants.fs.is_empty() {
            return "no preopened directory: every path is NotFound".into();
        }
        format!(
            "WASI preopens confined by cap-std (no `..`, absolute path or symlink leaves a \
             mount): {}",
            grants
                .fs
                .iter()
                .map(|m| shown(&m.guest, &m.host, m.access))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

/// Check a guest path: absolute, no `.` or `..` parts, not `/` itself.
///
/// # Errors
/// A message saying what is wrong with the path.
pub fn check_guest_path(guest: &str) -> Result<(), String> {
    let clean = guest.strip_prefix('/').is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\0'))
    });
    if clean {
        Ok(())
    } else {
        Err(format!(
            "guest path {guest:?}: use an absolute path below / without `.` or `..`, e.g. /workspace"
        ))
    }
}

/// The mounts a plugin gets: each asked-for guest path that the policy grants.
///
/// # Errors
/// A grant whose host directory does not exist or is not a directory.
pub fn resolve(asked: &[FsRequest], granted: &[FsGrant]) -> Result<Vec<Mount>, GrantRefused> {
    let mut mounts = Vec::new();
    for req in asked {
        let Some(grant) = granted.iter().find(|g| g.guest == req.guest) else {
            continue;
        };
        let host = expand_home(&grant.host);
        // ambient authority: checking the operator's grant on the real filesystem.
        if !host.is_dir() {
            return Err(GrantRefused::NotADirectory {
                host,
                guest: grant.guest.clone(),
            });
        }
        mounts.push(Mount {
            guest: req.guest.clone(),
            resolved: canonical(&host),
            host,
            access: req.access.min(grant.access),
        });
    }
    check_read_only_kept(&mounts)?;
    Ok(mounts)
}

/// Refuse a read-only mount that a read-write one of the same plugin holds (or is): the
/// plugin could write it through the other.
fn check_read_only_kept(mounts: &[Mount]) -> Result<(), GrantRefused> {
    for ro in mounts.iter().filter(|m| m.access == Access::ReadOnly) {
        if let Some(rw) = mounts
            .iter()
            .filter(|m| m.access == Access::ReadWrite)
            .find(|rw| ro.resolved.starts_with(&rw.resolved))
        {
            return Err(GrantRefused::ReadOnlyInsideWritable {
                host: ro.host.clone(),
                guest: ro.guest.clone(),
                outer_host: rw.host.clone(),
                outer: rw.guest.clone(),
            });
        }
    }
    Ok(())
}

/// What no plugin and no program it runs may see, at their default places: the daemon's keys
/// directory (a tool that could read the approver key could approve its own actions), the
/// database (approvals and the journal), the configuration directory (the policy and the pins:
/// a plugin that could write them would grant itself more at the next load), the plugin
/// directory (other plugins' code), the compile cache (native code the daemon loads) and where
/// the daemon says where it listens (a plugin could point clients at a daemon of its own).
/// Places given elsewhere (`--db`, `--cache`, `--plugins`, `--policy`, `--config`) are added
/// by whoever assembles the runtime ([`crate::agent::Places`]): see
/// [`crate::runtime::RuntimeConfig::protected`].
pub fn default_protected() -> Vec<PathBuf> {
    let config = crate::dirs::policy_file().and_then(|p| p.parent().map(Path::to_owned));
    let cache = crate::dirs::cache_dir().and_then(|p| p.parent().map(Path::to_owned));
    [
        crate::daemon::keys::keys_dir(),
        crate::dirs::database(),
        config,
        crate::dirs::plugin_dir(),
        cache,
        crate::daemon::rendezvous_file(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The daemon's own places no grant may expose.
#[derive(Clone, Debug, Default)]
pub struct Protected {
    /// What no mount may hold or be inside, read-only or read-write: keys, database,
    /// configuration, plugins, compile cache ([`default_protected`] and the places given).
    pub hidden: Vec<PathBuf>,
    /// What no read-write mount may hold or be inside: the trampoline every granted program
    /// starts through (harmless to read, fatal to replace).
    pub unwritable: Vec<PathBuf>,
}

/// A protected place a directory would expose, and whether only because it is writable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exposed {
    /// The place.
    pub place: PathBuf,
    /// An [`Protected::unwritable`] place: reading it would be allowed.
    pub unwritable: bool,
}

impl Protected {
    /// The place a directory granted at `host` (`writable`, or read-only) would expose: one
    /// of [`Protected::hidden`] whatever the access, one of [`Protected::unwritable`] when it
    /// is writable. The one rule for plugins' mounts and MCP servers' directories.
    pub fn exposed(&self, host: &Path, writable: bool) -> Option<Exposed> {
        self.exposed_resolved(&canonical(host), writable)
    }

    /// [`Protected::exposed`] for a directory already resolved (links followed, made
    /// absolute): what is checked is that path, not wherever `host` leads by the time it is
    /// resolved again.
    pub fn exposed_resolved(&self, resolved: &Path, writable: bool) -> Option<Exposed> {
        let hidden = || exposes_resolved(resolved, &self.hidden).map(|place| (place, false));
        let unwritable = || {
            writable
                .then(|| exposes_resolved(resolved, &self.unwritable))
                .flatten()
                .map(|place| (place, true))
        };
        hidden()
            .or_else(unwritable)
            .map(|(place, unwritable)| Exposed { place, unwritable })
    }
}

/// Refuse any of `mounts` that holds, or is inside, a protected place.
///
/// # Errors
/// The first mount that would expose one, naming both.
pub fn check_mounts_not_protected(
    mounts: &[Mount],
    protected: &Protected,
) -> Result<(), GrantRefused> {
    for m in mounts {
        // The path `resolved` pins each call to: checked as it is, not resolved again.
        let Some(exposed) = protected.exposed_resolved(&m.resolved, m.access == Access::ReadWrite)
        else {
            continue;
        };
        let (host, guest, protected) = (m.resolved.clone(), m.guest.clone(), exposed.place);
        return Err(if exposed.unwritable {
            GrantRefused::Unwritable {
                host,
                guest,
                protected,
            }
        } else {
            GrantRefused::Protected {
                host,
                guest,
                protected,
            }
        });
    }
    Ok(())
}

fn canonical(p: &Path) -> PathBuf {
    // ambient authority: resolving the operator's grant and our own paths on this machine.
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// The forms of a protected path to compare a grant with: made absolute (a relative `--config`
/// names a file in the working directory), and resolved: the whole path when it
/// exists, else its longest existing ancestor with the rest appended (a database not created
/// yet below a symlinked data directory is where the link leads).
fn protected_forms(p: &Path) -> Vec<PathBuf> {
    let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut resolved = None;
    let mut tail = Vec::new();
    let mut at = absolute.as_path();
    loop {
        // ambient authority: resolving our own paths on this machine.
        if let Ok(real) = std::fs::canonicalize(at) {
            resolved = Some(tail.iter().rev().fold(real, |path, part| path.join(part)));
            break;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                at = parent;
            }
            _ => break,
        }
    }
    // Made absolute, `..` stays as written (`~/proj/../state/p.db` would seem to be inside
    // `~/proj`): such a form is left to the resolved one.
    let literal = !absolute
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    let mut forms: Vec<PathBuf> = literal.then_some(absolute).into_iter().collect();
    forms.extend(resolved);
    forms.dedup();
    forms
}

/// The protected path a directory of this machine holds or is inside, if any.
pub fn exposes(host: &Path, protected: &[PathBuf]) -> Option<PathBuf> {
    exposes_resolved(&canonical(host), protected)
}

/// [`exposes`] for a directory already resolved.
fn exposes_resolved(host: &Path, protected: &[PathBuf]) -> Option<PathBuf> {
    protected.iter().find_map(|p| {
        protected_forms(p)
            .into_iter()
            .find(|p| p.starts_with(host) || host.starts_with(p))
    })
}

/// Refuse a mount of `host` that holds, or is inside, a protected path.
///
/// # Errors
/// Which protected path the grant would expose, and what to grant instead.
pub fn check_not_protected(
    host: &Path,
    guest: &str,
    protected: &[PathBuf],
) -> Result<(), GrantRefused> {
    match exposes(host, protected) {
        Some(p) => Err(GrantRefused::Protected {
            host: canonical(host),
            guest: guest.to_owned(),
            protected: p,
        }),
        None => Ok(()),
    }
}

fn expand_home(path: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => directories::BaseDirs::new()
            .map(|b| b.home_dir().join(rest))
            .unwrap_or_else(|| path.to_owned()),
        Err(_) => path.to_owned(),
    }
}

/// A granted directory that could not be opened for a call.
#[derive(Debug, thiserror::Error)]
#[error("cannot open mount {guest} ({}): {source}", host.display())]
pub struct MountError {
    /// What the plugin sees.
    pub guest: String,
    /// The directory on this machine.
    pub host: PathBuf,
    /// Why it could not be opened.
    #[source]
    pub source: wasmtime::Error,
}

/// Preopen the mounts in a call's WASI context. Each directory is opened once, checked to be
/// where its path led when the grant was checked at load, and that very directory is handed
/// to the plugin (through `/proc/self/fd`): a directory replaced since by a link to somewhere
/// else (the daemon's keys, say) is refused, and one replaced between the check and the
/// preopen cannot be slipped in.
///
/// # Errors
/// A mount's directory could not be opened (removed since load, permissions changed), or it
/// now leads somewhere else.
pub fn preopen(builder: &mut WasiCtxBuilder, mounts: &[Mount]) -> Result<(), MountError> {
    for m in mounts {
        let dir = m.open_where_checked()?;
        let perms = match m.access {
            Access::ReadOnly => FsPerms::ReadOnly,
            Access::ReadWrite => FsPerms::ReadWrite,
        };
        // ambient authority: the directory just checked, by its descriptor; cap-std confines
        // the plugin to it.
        builder
            .preopened_dir(descriptor_path(dir.as_fd()), &m.guest, perms)
            .map_err(|source| m.error(source))?;
    }
    Ok(())
}

impl Mount {
    /// The mount's directory, opened (`O_PATH`: only to name it), if it is still where its
    /// path led when the grant was checked at load: a call's preopen and a program's start
    /// both hold the mount to that place.
    ///
    /// # Errors
    /// It could not be opened (removed since load, permissions changed), where it is cannot
    /// be read (no `/proc`), or it now leads somewhere else.
    pub fn open_where_checked(&self) -> Result<std::fs::File, MountError> {
        open_checked(&self.host, &self.resolved, libc::O_DIRECTORY).map_err(|e| match e {
            Misplaced::Open { source, .. } => self.error(source.into()),
            Misplaced::Proc { source, .. } => self.error(wasmtime::Error::new(source).context(
                "cannot tell where the directory is: /proc/self/fd must be readable (is /proc \
                 mounted?)",
            )),
            Misplaced::Moved { now, .. } => self.error(wasmtime::Error::msg(format!(
                "it led to {} when the plugin was loaded and leads to {} now (a directory or \
                 link on the way was replaced); send the daemon SIGHUP, or restart it, to check \
                 the grant again",
                self.resolved.display(),
                now.display()
            ))),
        })
    }

    /// A [`MountError`] for this mount.
    fn error(&self, source: wasmtime::Error) -> MountError {
        MountError {
            guest: self.guest.clone(),
            host: self.host.clone(),
            source,
        }
    }
}

/// Why a granted path could not be opened where its grant was checked.
#[derive(Debug, thiserror::Error)]
pub enum Misplaced {
    /// It could not be opened (removed, or this user may not reach it).
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Where it is could not be read.
    #[error(
        "cannot tell where {} is: /proc/self/fd must be readable (is /proc mounted?): {source}",
        path.display()
    )]
    Proc {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It leads elsewhere now: a directory or link on the way was replaced since.
    #[error(
        "{} now leads to {}, not where its grant was checked; nothing runs (send the daemon \
         SIGHUP, or restart it, to check the grant again)",
        path.display(),
        now.display()
    )]
    Moved {
        /// The path.
        path: PathBuf,
        /// Where it leads now.
        now: PathBuf,
    },
}

/// `path` opened (`O_PATH`: only to name it; `flags` added, such as `O_DIRECTORY`), if it still
/// leads to `checked`, where it led when its grant was checked: the one check that a mount, a
/// program's Landlock rule and its read-write view are on the place granted.
///
/// # Errors
/// [`Misplaced`]: it cannot be opened, where it is cannot be read, or it leads elsewhere.
pub fn open_checked(
    path: &Path,
    checked: &Path,
    flags: libc::c_int,
) -> Result<std::fs::File, Misplaced> {
    // ambient authority: a granted path, opened to name it (O_PATH reads nothing).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC | flags)
        .open(path)
        .map_err(|source| Misplaced::Open {
            path: path.to_owned(),
            source,
        })?;
    let now = location(file.as_fd()).map_err(|source| Misplaced::Proc {
        path: path.to_owned(),
        source,
    })?;
    if now != checked {
        return Err(Misplaced::Moved {
            path: path.to_owned(),
            now,
        });
    }
    Ok(file)
}

/// The path that names the open file `fd` (`/proc/self/fd/N`).
pub(crate) fn descriptor_path(fd: BorrowedFd<'_>) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Where the open file `fd` is now, links resolved (read from `/proc/self/fd`): how a
/// directory opened by path is checked to be the one its grant was checked on.
///
/// # Errors
/// `/proc` cannot be read.
pub fn location(fd: BorrowedFd<'_>) -> std::io::Result<PathBuf> {
    // ambient authority: this process's own descriptor table.
    std::fs::read_link(descriptor_path(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_that_holds_the_keys_or_the_database_is_refused() {
        let tmp = tempfile::tempdir().expect("tmp");
        let data = tmp.path().join("data/passepartout");
        let keys = data.join("keys");
        let workspace = data.join("workspace");
        std::fs::create_dir_all(&keys).expect("mkdir");
        std::fs::create_dir_all(&workspace).expect("mkdir");
        let protected = [keys.clone(), data.join("passepartout.db")];
        for host in [tmp.path(), &data, &keys] {
            let e = check_not_protected(host, "/w", &protected).expect_err("refused");
            assert!(matches!(e, GrantRefused::Protected { .. }), "{e}");
            assert!(e.to_string().contains("no plugin may see them"), "{e}");
        }
        // Through a symlink, too.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&data, &link).expect("symlink");
        assert!(check_not_protected(&link, "/w", &protected).is_err());
        assert!(check_not_protected(&workspace, "/w", &protected).is_ok());
    }

    #[test]
    fn a_read_only_mount_that_a_read_write_one_holds_is_refused() {
        let tmp = tempfile::tempdir().expect("tmp");
        let outer = tmp.path().join("work");
        let inner = outer.join("reference");
        let beside = tmp.path().join("beside");
        for d in [&inner, &beside] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let mount = |guest: &str, host: &Path, access| Mount {
            guest: guest.into(),
            host: host.to_owned(),
            access,
            resolved: canonical(host),
        };
        for ro in [&inner, &outer] {
            let e = check_read_only_kept(&[
                mount("/work", &outer, Access::ReadWrite),
                mount("/ref", ro, Access::ReadOnly),
            ])
            .expect_err("writable through /work");
            assert!(e.to_string().contains("could write it there"), "{e}");
        }
        // Beside it, or a read-write directory inside a read-only one: each keeps its access.
        assert!(
            check_read_only_kept(&[
                mount("/work", &outer, Access::ReadWrite),
                mount("/ref", &beside, Access::ReadOnly),
            ])
            .is_ok()
        );
        assert!(
            check_read_only_kept(&[
                mount("/all", tmp.path(), Access::ReadOnly),
                mount("/work", &outer, Access::ReadWrite),
            ])
            .is_ok()
        );
    }

    #[test]
    fn guest_paths_must_be_clean_and_absolute() {
        assert!(check_guest_path("/workspace").is_ok());
        assert!(check_guest_path("/data/sub").is_ok());
        for bad in ["workspace", "/", "/data/../etc", "/./x", ""] {
            assert!(check_guest_path(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn a_protected_place_not_made_yet_is_found_through_a_symlink_and_relative_to_here() {
        // The database of `--db ~/link/data/p.db` (not created yet), where ~/link leads to
        // ~/real: a grant of ~/real/data holds it.
        let tmp = tempfile::tempdir().expect("tmp");
        let data = tmp.path().join("real/data");
        std::fs::create_dir_all(&data).expect("mkdir");
        std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("link"))
            .expect("symlink");
        let db = tmp.path().join("link/data/not-yet/p.db");
        let e = check_not_protected(&data, "/w", std::slice::from_ref(&db)).expect_err("refused");
        assert!(e.to_string().contains("not-yet/p.db"), "{e}");
        assert!(
            check_not_protected(&tmp.path().join("real"), "/w", std::slice::from_ref(&db)).is_err()
        );
        // A relative `--config passepartout.toml`, not there: the file in the working
        // directory, which a grant of that directory holds.
        let here = std::env::current_dir().expect("cwd");
        let relative = PathBuf::from("no-such-passepartout.toml");
        assert!(check_not_protected(&here, "/w", &[relative]).is_err());
        // Beside them, a directory that holds neither.
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).expect("mkdir");
        assert!(check_not_protected(&ws, "/w", &[db]).is_ok());
        // `ws/../state/p.db` is not inside `ws`.
        let beside = ws.join("../state/p.db");
        assert!(check_not_protected(&ws, "/w", std::slice::from_ref(&beside)).is_ok());
        assert!(check_not_protected(tmp.path(), "/w", &[beside]).is_err());
    }

    #[test]
    fn access_is_the_lesser_of_asked_and_granted() {
        let dir = std::env::temp_dir();
        let asked = vec![FsRequest {
            guest: "/w".into(),
            access: Access::ReadWrite,
            why: None,
        }];
        let granted = vec![FsGrant {
            guest: "/w".into(),
            host: dir.clone(),
            access: Access::ReadOnly,
        }];
        let mounts = resolve(&asked, &granted).expect("temp dir exists");
        assert_eq!(
            mounts,
            vec![Mount {
                guest: "/w".into(),
                resolved: canonical(&dir),
                host: dir,
                access: Access::ReadOnly
            }]
        );
        assert!(resolve(&asked, &[]).expect("nothing granted").is_empty());
    }
}
