//! The files an ingest reads and writes: which `.org` files a path holds (links not followed),
//! a file's bytes read only when it is a regular file under the size limit, and the write of
//! IDs back into a file, atomic, durable and only when the file is still as it was read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::MemoryError;
use super::org::Warning;

/// Most files one ingest reads.
const MAX_FILES: usize = 100_000;

/// What a file was when it was read: its size, its modification time and the SHA-256 of its
/// bytes. Compared again just before `--write-ids` replaces the file, so that an edit made
/// meanwhile (the embeddings of a large ingest take minutes) is never overwritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fingerprint {
    len: u64,
    modified: Option<SystemTime>,
    sha256: Vec<u8>,
}

impl Fingerprint {
    /// The fingerprint of `bytes`, read from a file last modified at `modified`.
    pub(super) fn of(bytes: &[u8], modified: Option<SystemTime>) -> Fingerprint {
        Fingerprint {
            len: bytes.len() as u64,
            modified,
            sha256: Sha256::digest(bytes).to_vec(),
        }
    }

    /// What about `file` is no longer as it was read, if anything: its size, its modification
    /// time or its bytes (read again, not through a link), or that it is gone.
    ///
    /// # Errors
    /// The file cannot be opened or read (for a reason other than being gone).
    pub(super) fn changed(&self, file: &Path) -> std::io::Result<Option<&'static str>> {
        let f = match crate::dirs::open_unfollowed(file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some("it is gone")),
            Err(e) => return Err(e),
        };
        let meta = f.metadata()?;
        if meta.len() != self.len {
            return Ok(Some("its size changed"));
        }
        if meta.modified().ok() != self.modified {
            return Ok(Some("it was modified"));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, self.len + 1), &mut bytes)?;
        if Sha256::digest(&bytes).as_slice() != self.sha256.as_slice() {
            return Ok(Some("its contents changed"));
        }
        Ok(None)
    }
}

/// What writing the IDs back into a file did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum WriteBack {
    /// The file holds the IDs now.
    Written,
    /// The file changed since it was read (how): it was left as it is.
    Changed(&'static str),
}

/// The bytes of `file`, a regular file of at most `max_mib` MiB, and when it was last modified
/// (as the file opened said); or why it is skipped. A symbolic link is not followed: it could
/// lead anywhere outside the notes (to a key, say), whose contents would then go to the model.
pub(super) fn read_regular(
    file: &Path,
    max_mib: u64,
) -> Result<(Vec<u8>, Option<SystemTime>), String> {
    let max = max_mib.saturating_mul(1 << 20);
    match std::fs::symlink_metadata(file) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err("a symbolic link: not followed; skipped".into());
        }
        // A FIFO or a device named *.org would block the read or never end.
        Ok(m) if !m.is_file() => return Err("not a regular file; skipped".into()),
        Ok(m) if m.len() > max => {
            return Err(format!(
                "{} MiB is over the {max_mib} MiB limit ([memory] max_file_mib); skipped",
                m.len() >> 20,
            ));
        }
        Ok(_) => {}
        Err(e) => return Err(format!("cannot read: {e}; skipped")),
    }
    // A link or a FIFO put in its place since is refused by the open itself.
    let mut bytes = Vec::new();
    let mut modified = None;
    let read = crate::dirs::open_unfollowed(file).and_then(|f| {
        let meta = f.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        modified = meta.modified().ok();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, max + 1), &mut bytes)
    });
    if let Err(e) = read {
        return Err(format!("cannot read: {e}; skipped"));
    }
    if bytes.len() as u64 > max {
        return Err("grew past the size limit while being read; skipped".into());
    }
    Ok((bytes, modified))
}

/// The `.org` files under `path`, sorted; symbolic links under it are not followed (a link
/// to a directory could loop, one to a file lead out of the notes), each with a warning.
pub(super) fn collect_files(
    path: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<PathBuf>, MemoryError> {
    let io = |e: std::io::Error| MemoryError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let path = std::fs::canonicalize(path).map_err(io)?;
    if !path.is_dir() {
        if path.to_str().is_none() {
            warnings.push(not_utf8(&path));
            return Ok(vec![]);
        }
        return Ok(vec![path]);
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![path];
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(Warning {
                    file: dir.display().to_string(),
                    line: 0,
                    message: format!("cannot list: {e}; skipped"),
                });
                continue;
            }
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_org = p.extension().is_some_and(|e| e == "org");
            // The store names files by their path as text: two names that differ only in
            // bytes that are not UTF-8 would be one file to it, and one would vanish.
            if (kind.is_dir() || is_org) && p.to_str().is_none() {
                warnings.push(not_utf8(&p));
                continue;
            }
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_symlink() {
                // Not followed: a linked directory could loop, and a linked file could be
                // anything outside the notes (a key, say) that would go to the model.
                let what = if p.is_dir() {
                    "symlinked directory not followed"
                } else if is_org {
                    "symlinked file not followed (it may lead outside the notes); skipped"
                } else {
                    continue;
                };
                warnings.push(Warning {
                    file: p.display().to_string(),
                    line: 0,
                    message: what.into(),
                });
            } else if is_org {
                if files.len() >= MAX_FILES {
                    warnings.push(Warning {
                        file: p.display().to_string(),
                        line: 0,
                        message: format!("more than {MAX_FILES} files; the rest are skipped"),
                    });
                    stack.clear();
                    break;
                }
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The warning for a file or directory whose path is not UTF-8, naming it with the bad bytes
/// escaped (`a\xFF.org`).
pub(super) fn not_utf8(path: &Path) -> Warning {
    Warning {
        file: format!("{:?}", path.as_os_str()),
        line: 0,
        message: "its name is not UTF-8, and memory names files by their path as text (two \
                  such names could read the same); skipped. Rename it to read it"
            .into(),
    }
}

/// A stored file that is gone from disk, or is now a symbolic link: the walk no longer reads
/// it (links are not followed), so what was read through one before leaves the store too.
pub(super) fn gone_or_linked(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// As [`write_atomically_if`], whatever the file holds now (the tests of the write itself).
#[cfg(test)]
pub(super) fn write_atomically(file: &Path, bytes: &[u8]) -> Result<(), MemoryError> {
    write_atomically_if(file, bytes, None).map(|_| ())
}

/// Replace `file` by `bytes` with a rename, durably: the new text is on disk before it takes
/// the file's place, and the rename is on disk before this returns. A link is never written
/// through: one found at `file` is an error, and the rename would replace a link put there
/// since rather than its target. When `read` is given, only if `file` still is as it was
/// read: that is checked again once the new text is on disk, right before the rename, and a
/// file that changed is left as it is ([`WriteBack::Changed`]).
///
/// # Errors
/// [`MemoryError::Io`] when `file` is a link, or cannot be read again, or a write, a sync or
/// the rename failed.
pub(super) fn write_atomically_if(
    file: &Path,
    bytes: &[u8],
    read: Option<&Fingerprint>,
) -> Result<WriteBack, MemoryError> {
    let fail = |message: String| MemoryError::Io {
        path: file.display().to_string(),
        message,
    };
    let io = |e: std::io::Error| fail(format!("cannot write the IDs back: {e}"));
    let meta = std::fs::symlink_metadata(file).map_err(io)?;
    if meta.file_type().is_symlink() {
        return Err(fail(
            "became a symbolic link after it was read; the IDs are not written (nothing is \
             written through a link)"
                .into(),
        ));
    }
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(io)?;
    let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    // On disk before the rename: a crash leaves the old text or the new one, never an empty file.
    tmp.as_file().sync_all().map_err(io)?;
    // As late as can be: an edit saved since the file was read is kept (the temporary file
    // goes with `tmp`).
    if let Some(read) = read
        && let Some(how) = read.changed(file).map_err(io)?
    {
        return Ok(WriteBack::Changed(how));
    }
    tmp.persist(file).map_err(|e| io(e.error))?;
    sync_dir(dir).map_err(|e| {
        fail(format!(
            "the IDs were written, but the directory could not be synced (a crash now may lose \
             them): {e}"
        ))
    })?;
    Ok(WriteBack::Written)
}

/// Sync `dir`, so that a rename in it survives a crash. A file system that cannot sync a
/// directory (EINVAL, ENOTSUP) has nothing to do.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    use std::io::ErrorKind;
    match std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::Unsupported) => Ok(()),
        other => other,
    }
}

/// Where a directory cannot be opened to sync it (not Unix), there is nothing to do.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomically_replaces_the_file_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("n.org");
        std::fs::write(&file, "* A\n").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        write_atomically(&file, b"* B\n").expect("write back");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "* B\n");
        let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "no temp file left: {left:?}");
    }
}
