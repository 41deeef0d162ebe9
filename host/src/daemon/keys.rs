//! The daemon's two secrets, made per installation (docs/protocol.md, Authentication):
//!
//! - the **client key** (`keys/client.key`): a connection that cannot prove it holds it gets
//!   nothing but the refusal. `PASSEPARTOUT_HMAC_SECRET` (or the seed's `OACP_HMAC_SECRET`)
//!   replaces it, for clients on other accounts.
//! - the **approver key** (`keys/approver.key`): approve, deny, the list of pending approvals
//!   and the approval events need it as well. `PASSEPARTOUT_APPROVER_SECRET` replaces it.
//!
//! Both live in `$XDG_DATA_HOME/passepartout/keys/` (0700, files 0600), a directory no plugin
//! and no granted program may be given (the runtime refuses such a grant).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::protocol::Secret;

/// The keys a daemon checks and a client proves.
#[derive(Clone, Debug)]
pub struct Keys {
    /// Proves a client may talk to the daemon at all.
    pub client: Secret,
    /// Proves a client may decide approvals. `None` on a client that was not given it.
    pub approver: Option<Secret>,
}

/// Why the keys could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// A key file could not be read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A key file others can read.
    #[error(
        "{path} can be read by other users (mode {mode:o}): the daemon refuses a key others can read; run `chmod 600 {path}`"
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its mode.
        mode: u32,
    },
    /// A key file that holds no key.
    #[error(
        "{0} is empty or too short (a key is 64 hex digits); delete it and the daemon makes a new one"
    )]
    Short(PathBuf),
    /// A secret from the environment too short to resist guessing.
    #[error(
        "{0} is shorter than 32 characters: a secret anyone can guess in a few tries lets them act as a client (or approve); set it to 32 or more random characters (`openssl rand -hex 32`), or unset it to use the key files"
    )]
    WeakSecret(&'static str),
    /// `PASSEPARTOUT_ENFORCE_AUTH` with authentication turned off.
    #[error(
        "PASSEPARTOUT_ENFORCE_AUTH (or OACP_ENFORCE_HMAC) is on, and --insecure-no-auth turns authentication off: choose one"
    )]
    Conflict,
    /// The approver key is the client key: every client could decide approvals.
    #[error(
        "the approver key is the client key (from PASSEPARTOUT_APPROVER_SECRET or approver.key, and PASSEPARTOUT_HMAC_SECRET or client.key): every client could approve; give the approver another 32 or more random characters (`openssl rand -hex 32`)"
    )]
    SameKeys,
    /// No directory to keep them in.
    #[error("no data directory for the keys (set XDG_DATA_HOME or HOME)")]
    NoDirectory,
    /// The system has no randomness.
    #[error("cannot make a key: {0}")]
    NoRandomness(String),
}

/// `$XDG_DATA_HOME/passepartout/keys`.
pub fn keys_dir() -> Option<PathBuf> {
    crate::dirs::database().and_then(|db| db.parent().map(|d| d.join("keys")))
}

const CLIENT_FILE: &str = "client.key";
const APPROVER_FILE: &str = "approver.key";

/// The secret `var` holds, if set; as long as a key file's at least (32 characters).
fn env_secret(var: crate::settings::Var) -> Result<Option<Secret>, KeyError> {
    match var.get() {
        Some(v) if v.len() < 32 => Err(KeyError::WeakSecret(var.name)),
        Some(v) => Ok(Some(Secret::new(v.as_bytes()))),
        None => Ok(None),
    }
}

fn client_from_env() -> Result<Option<Secret>, KeyError> {
    env_secret(crate::settings::CLIENT_SECRET)
}

fn approver_from_env() -> Result<Option<Secret>, KeyError> {
    env_secret(crate::settings::APPROVER_SECRET)
}

impl Keys {
    /// These keys, without the approver key unless `approver`: what a connection that must
    /// not decide approvals proves.
    pub fn for_role(mut self, approver: bool) -> Keys {
        if !approver {
            self.approver = None;
        }
        self
    }

    /// The daemon's keys in `dir`, made there (0600, in a 0700 directory) when missing. The
    /// environment's secrets, when set, take the place of the files.
    ///
    /// # Errors
    /// A key file that cannot be written or read, or that others can read.
    pub fn load_or_create(dir: &Path) -> Result<Keys, KeyError> {
        let client = match client_from_env()? {
            Some(s) => s,
            None => file_key(dir, CLIENT_FILE, true)?,
        };
        let approver = match approver_from_env()? {
            Some(s) => s,
            None => file_key(dir, APPROVER_FILE, true)?,
        };
        if approver.same_as(&client) {
            return Err(KeyError::SameKeys);
        }
        Ok(Keys {
            client,
            approver: Some(approver),
        })
    }

    /// A client's keys: the environment's, else the files in `dir`. The approver key is
    /// optional (a client without it can ask, not decide).
    ///
    /// # Errors
    /// No client key anywhere, with where it was looked for.
    pub fn for_client(dir: &Path) -> Result<Keys, KeyError> {
        let client = match client_from_env()? {
            Some(s) => s,
            None => file_key(dir, CLIENT_FILE, false)?,
        };
        let approver = match approver_from_env()? {
            Some(s) => Some(s),
            None => file_key(dir, APPROVER_FILE, false).ok(),
        };
        Ok(Keys { client, approver })
    }
}

/// `PASSEPARTOUT_ENFORCE_AUTH` (the seed's `OACP_ENFORCE_HMAC`) may not be on when authentication
/// is off.
///
/// # Errors
/// [`KeyError::Conflict`].
pub fn check_enforce(auth_off: bool) -> Result<(), KeyError> {
    let enforce = crate::settings::ENFORCE_AUTH.enabled();
    if enforce && auth_off {
        return Err(KeyError::Conflict);
    }
    Ok(())
}

fn file_key(dir: &Path, name: &str, create: bool) -> Result<Secret, KeyError> {
    let path = dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            check_private(&path)?;
            let key = text.trim();
            if key.len() < 32 {
                return Err(KeyError::Short(path));
            }
            Ok(Secret::new(key.as_bytes()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => make(dir, name),
        Err(source) => Err(KeyError::Io {
            what: "cannot read the key",
            path,
            source,
        }),
    }
}

#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), KeyError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|source| KeyError::Io {
            what: "cannot read the key",
            path: path.into(),
            source,
        })?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(KeyError::Exposed {
            path: path.into(),
            mode: mode & 0o777,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path) -> Result<(), KeyError> {
    Ok(())
}

fn make(dir: &Path, name: &str) -> Result<Secret, KeyError> {
    let path = &dir.join(name);
    let io = |what| {
        move |source| KeyError::Io {
            what,
            path: path.into(),
            source,
        }
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(io("cannot make the directory of"))?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::NoRandomness(e.to_string()))?;
    let key = hex::encode(bytes);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut f) => {
            f.write_all(format!("{key}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(io("cannot write the key"))?;
            Ok(Secret::new(key.as_bytes()))
        }
        // Another daemon made it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => file_key(dir, name, false),
        Err(e) => Err(io("cannot write the key")(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_made_private_once_and_read_back() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("keys");
        let made = Keys::load_or_create(&dir).expect("made");
        let again = Keys::load_or_create(&dir).expect("read");
        let n = crate::daemon::protocol::Nonce::random().expect("nonce");
        let proof = |k: &Keys| {
            k.approver
                .as_ref()
                .expect("approver")
                .approver_proof(&n, &n)
        };
        assert_eq!(proof(&made), proof(&again), "the same key is read back");
        let client = Keys::for_client(&dir).expect("client");
        assert_eq!(proof(&client), proof(&made));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&dir), 0o700);
            assert_eq!(mode(&dir.join(CLIENT_FILE)), 0o600);
            std::fs::set_permissions(
                dir.join(CLIENT_FILE),
                std::fs::Permissions::from_mode(0o644),
            )
            .expect("chmod");
            let e = Keys::load_or_create(&dir).expect_err("exposed");
            assert!(e.to_string().contains("chmod 600"), "{e}");
        }
    }

    #[test]
    fn a_client_without_a_key_is_told_where_it_was_looked_for() {
        let tmp = tempfile::tempdir().expect("tmp");
        let e = Keys::for_client(&tmp.path().join("none")).expect_err("no key");
        assert!(e.to_string().contains("client.key"), "{e}");
    }
}
