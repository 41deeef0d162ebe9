//! Filesystem: WASI preopens, confined by cap-std (`..`, absolute paths and symlinks cannot leave
//! a mount), read-only or read-write per grant.

use std::path::{Path, PathBuf};

use serde::Serialize;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::runtime::manifest::{Access, FsRequest};
use crate::runtime::policy::FsGrant;

/// A directory mounted for a plugin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mount {
    /// What the plugin sees, e.g. `/workspace`.
    pub guest: String,
    /// The directory on this machine.
    pub host: PathBuf,
    /// The lesser of what was asked and what was granted.
    pub access: Access,
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
pub fn resolve(asked: &[FsRequest], granted: &[FsGrant]) -> Result<Vec<Mount>, String> {
    let mut mounts = Vec::new();
    for req in asked {
        let Some(grant) = granted.iter().find(|g| g.guest == req.guest) else {
            continue;
        };
        let host = expand_home(&grant.host);
        // ambient authority: checking the operator's grant on the real filesystem.
        if !host.is_dir() {
            return Err(format!(
                "the policy mounts {} at {}, but that is not a directory on this machine",
                host.display(),
                grant.guest
            ));
        }
        mounts.push(Mount {
            guest: req.guest.clone(),
            host,
            access: req.access.min(grant.access),
        });
    }
    Ok(mounts)
}

fn expand_home(path: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => directories::BaseDirs::new()
            .map(|b| b.home_dir().join(rest))
            .unwrap_or_else(|| path.to_owned()),
        Err(_) => path.to_owned(),
    }
}

/// Preopen the mounts in a call's WASI context.
///
/// # Errors
/// A mount's directory could not be opened (removed since load, permissions changed).
pub fn preopen(builder: &mut WasiCtxBuilder, mounts: &[Mount]) -> Result<(), String> {
    for m in mounts {
        let perms = match m.access {
            Access::ReadOnly => FsPerms::ReadOnly,
            Access::ReadWrite => FsPerms::ReadWrite,
        };
        // ambient authority: opening the granted directory; cap-std confines the plugin to it.
        builder
            .preopened_dir(&m.host, &m.guest, perms)
            .map_err(|e| format!("cannot open mount {} ({}): {e}", m.guest, m.host.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_paths_must_be_clean_and_absolute() {
        assert!(check_guest_path("/workspace").is_ok());
        assert!(check_guest_path("/data/sub").is_ok());
        for bad in ["workspace", "/", "/data/../etc", "/./x", ""] {
            assert!(check_guest_path(bad).is_err(), "{bad:?} should be refused");
        }
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
                host: dir,
                access: Access::ReadOnly
            }]
        );
        assert!(resolve(&asked, &[]).expect("nothing granted").is_empty());
    }
}
