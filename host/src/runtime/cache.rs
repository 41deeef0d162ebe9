//! The on-disk cache of compiled components, so that the second start compiles nothing.
//!
//! An artifact is keyed by the sha256 of the component and a digest of the engine's
//! compatibility hash (wasmtime version, target, every setting that affects code), so a change
//! of either misses the cache instead of loading incompatible code.
//!
//! The cache is kept small ([`Prune`]): every load marks its entry used (its modification
//! time), and after every compile the entries unused for 30 days, those of another engine
//! unused for a day, and then the least recently used beyond 1 GiB are removed; an entry used
//! in the last hour is never removed by size. `passepartout cache prune | clear` does it by hand.
//!
//! A compiled artifact is native code the daemon maps and runs: whoever can write the cache can
//! run code as the daemon, outside every limit. So an entry is used only when the directory
//! and the entry are the daemon user's own with no permission for anyone else, as the cache
//! itself makes them (0700 and 0600, [`private`]); the directory is not a symbolic link and is
//! opened once, and the entry is a regular file opened in that very directory without following
//! a link, checked, and handed to wasmtime through its descriptor. A file the daemon's user
//! made some other way, such as one a plugin wrote through a read-write mount (WASI cannot set
//! a mode: 0644 under the usual umask), is therefore not loaded. A directory that fails these
//! checks is not used at all: every plugin is compiled, and a warning says why. Nothing
//! protects an entry from the daemon's own user (it can rewrite the executable too).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components are kept. `None` disables the cache.
#[derive(Clone)]
pub struct ArtifactCache {
    dir: Option<PathBuf>,
    engine_key: String,
    progress: Option<Progress>,
    /// An untrusted directory was warned about ([`ArtifactCache::trusted_dir`]).
    warned: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// A compile that takes a while (the Python gate: ~15 s on two cores), for a person to see.
#[derive(Clone, Copy, Debug)]
pub enum Compile<'a> {
    /// Compiling `what` (a plugin), `bytes` long, has begun.
    Started {
        /// The plugin.
        what: &'a str,
        /// The component's size.
        bytes: usize,
    },
    /// It is done (or failed).
    Finished {
        /// The plugin.
        what: &'a str,
        /// How long it took.
        took: std::time::Duration,
    },
}

/// Told of every compile (not of loads from the cache).
pub type Progress = std::sync::Arc<dyn Fn(Compile<'_>) + Send + Sync>;

/// A component ready to instantiate, and how it was obtained.
pub struct Compiled {
    /// The component.
    pub component: Component,
    /// True when it was loaded from the cache rather than compiled.
    pub from_cache: bool,
    /// sha256 of the component's bytes, hex.
    pub sha256: String,
}

/// Feeds `Hash` output into sha256: std's `DefaultHasher` is not stable across Rust releases,
/// and the key must be.
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl ArtifactCache {
    /// A cache in `dir` (created 0700 on first write) for `engine`.
    pub fn new(dir: Option<PathBuf>, engine: &Engine) -> ArtifactCache {
        let mut h = ShaHasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut h);
        let engine_key = hex::encode(&h.0.finalize()[..8]);
        ArtifactCache {
            dir,
            engine_key,
            progress: None,
            warned: Default::default(),
        }
    }

    /// Tell `progress` of every compile.
    pub fn with_progress(mut self, progress: Option<Progress>) -> ArtifactCache {
        self.progress = progress;
        self
    }

    /// The cache directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Load the compiled form of `bytes` (whose sha256 is `sha256`, hex) from the cache, or
    /// compile it and store it.
    ///
    /// A corrupt or unreadable cache entry is recompiled and replaced; a cache that cannot be
    /// written only costs a compile next time.
    ///
    /// # Errors
    /// The component does not compile (not a component, invalid WebAssembly).
    pub fn load(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: String,
        what: &str,
    ) -> wasmtime::Result<Compiled> {
        let name = format!("{sha256}-{}.cwasm", self.engine_key);
        let dir = self.trusted_dir();
        if let Some(TrustedDir {
            path,
            handle: Some(handle),
        }) = &dir
        {
            match read_entry(engine, handle, &name) {
                Ok(Some(component)) => {
                    return Ok(Compiled {
                        component,
                        from_cache: true,
                        sha256,
                    });
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    "compiled cache entry {} is unusable ({e}); recompiling",
                    path.join(&name).display()
                ),
            }
        }
        let path = dir.map(|d| d.path.join(&name));
        if let Some(p) = &self.progress {
            p(Compile::Started {
                what,
                bytes: bytes.len(),
            });
        }
        let started = std::time::Instant::now();
        let serialized = engine.precompile_component(bytes);
        if let Some(p) = &self.progress {
            p(Compile::Finished {
                what,
                took: started.elapsed(),
            });
        }
        let serialized = serialized?;
        // SAFETY: `serialized` was produced just now by `engine` itself.
        let component = unsafe { Component::deserialize(engine, &serialized)? };
        // Created now if need be; and checked again, as another may have made it meanwhile.
        let path = path.filter(|p| {
            p.parent().is_some_and(|d| {
                crate::dirs::create_private_dir(d).is_ok()
                    && self.trusted_dir().is_some_and(|t| t.handle.is_some())
            })
        });
        if let Some(path) = &path {
            if let Err(e) = write_atomically(path, &serialized) {
                tracing::warn!(
                    "cannot write the compiled cache entry {}: {e}",
                    path.display()
                );
            }
            // The cache grows only here: keep it within bounds.
            if let Err(e) = self.prune(Prune::default()) {
                tracing::warn!("cannot prune the compiled cache: {e}");
            }
        }
        Ok(Compiled {
            component,
            from_cache: false,
            sha256,
        })
    }
}

/// The cache directory, when it may be trusted ([`ArtifactCache::trusted_dir`]).
struct TrustedDir<'a> {
    /// Where it is.
    path: &'a Path,
    /// The directory itself, opened without following a symbolic link and checked
    /// [`private`]: entries are opened in it, not by a path looked up again. `None` when it
    /// does not exist yet (nothing to read; it is made private when written).
    handle: Option<std::fs::File>,
}

impl ArtifactCache {
    /// The cache directory when it may be trusted: it does not exist yet, or it is a directory
    /// (not a symbolic link to one) that is [`private`]. Otherwise `None`, with a warning the
    /// first time.
    fn trusted_dir(&self) -> Option<TrustedDir<'_>> {
        let dir = self.dir.as_deref()?;
        let why = match std::fs::symlink_metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(TrustedDir {
                    path: dir,
                    handle: None,
                });
            }
            Err(e) => format!("it cannot be read: {e}"),
            Ok(meta) if meta.file_type().is_symlink() => {
                "it is a symbolic link (name the directory it points to, if that is meant)"
                    .to_owned()
            }
            Ok(meta) if !meta.is_dir() => "it is not a directory".to_owned(),
            // Opened without following a link (one put in its place since is refused), and
            // what was opened is checked.
            Ok(_) => match crate::dirs::open_unfollowed(dir) {
                Err(e) => format!("it cannot be opened: {e}"),
                Ok(handle) => match handle.metadata() {
                    Err(e) => format!("it cannot be read: {e}"),
                    Ok(meta) if !meta.is_dir() => "it is not a directory".to_owned(),
                    Ok(meta) => match private(&meta, DIR_FORBIDDEN) {
                        Ok(()) => {
                            return Some(TrustedDir {
                                path: dir,
                                handle: Some(handle),
                            });
                        }
                        Err(why) => why,
                    },
                },
            },
        };
        if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(
                "the compile cache {} is not used: {why}. Every plugin is compiled at each \
                 start; make it the daemon's user's own (chmod 700), or name another (--cache)",
                dir.display()
            );
        }
        None
    }
}

/// What a cache directory may not allow its group or others: writing (it may be readable, as
/// a directory made by hand under umask 022 is).
const DIR_FORBIDDEN: u32 = 0o022;
/// What a cache entry may not allow its group or others: anything, as the cache writes its
/// entries 0600 whatever the umask (which only takes bits away).
const ENTRY_FORBIDDEN: u32 = 0o077;

/// Whether a cache file or directory may be trusted: owned by the user this process runs as,
/// with none of the `forbidden` permissions for its group or others ([`DIR_FORBIDDEN`],
/// [`ENTRY_FORBIDDEN`]). Otherwise, what is wrong with it.
///
/// For an entry, write permission alone would not do: a file a plugin creates through a
/// read-write mount is the daemon user's own too, and WASI has no call to set a mode, so it is
/// made 0666 less the daemon's umask (0644 under 022). Such a file, moved or linked where an
/// entry is looked for, must not be loaded as native code.
#[cfg(unix)]
fn private(meta: &std::fs::Metadata, forbidden: u32) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    // SAFETY: geteuid(2) has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "it belongs to user {}, not to the user the daemon runs as ({me})",
            meta.uid()
        ));
    }
    if meta.mode() & forbidden != 0 {
        return Err(format!(
            "its group or others have permissions it may not give them (mode {:o}, none of \
             {forbidden:03o} allowed; the cache makes its directory 0700 and its entries 0600)",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn private(_: &std::fs::Metadata, _: u32) -> Result<(), String> {
    Ok(())
}

/// Why a cache entry was not used.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    /// Opening it failed (it is a symbolic link, or unreadable).
    #[error("it cannot be opened (a symbolic link?): {0}")]
    Open(#[source] std::io::Error),
    /// It is a FIFO, a device or a directory.
    #[error("it is not a regular file")]
    NotFile,
    /// It is another user's, or its group or others have permissions on it.
    #[error("{0}")]
    NotPrivate(String),
    /// Reading it failed.
    #[error("it cannot be read: {0}")]
    Read(#[source] std::io::Error),
    /// wasmtime refused it (corrupt, or from another engine).
    #[error("{0:#}")]
    Refused(wasmtime::Error),
}

/// The compiled component in the cache entry `name` of the directory `dir` (opened and
/// checked: [`TrustedDir`]), or `None` when there is none. The entry is opened once, in that
/// directory, without following a symbolic link and without waiting (a FIFO), checked to be a
/// [`private`] regular file, marked used, and loaded from that descriptor.
///
/// # Errors
/// The entry is not one the daemon may trust, or wasmtime refuses it.
fn read_entry(
    engine: &Engine,
    dir: &std::fs::File,
    name: &str,
) -> Result<Option<Component>, Unusable> {
    let file = match open_in(dir, name) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Unusable::Open(e)),
    };
    let meta = file.metadata().map_err(Unusable::Read)?;
    if !meta.is_file() {
        return Err(Unusable::NotFile);
    }
    private(&meta, ENTRY_FORBIDDEN).map_err(Unusable::NotPrivate)?;
    // Marked used (its modification time) for pruning; the owner may, on a read-only file.
    if let Err(e) = file.set_modified(SystemTime::now()) {
        tracing::debug!("cannot mark the cache entry {name} used: {e}");
    }
    // SAFETY: the file is the daemon user's own with no permission for anyone else (as this
    // cache writes its entries), in the directory checked the same way, named by the
    // component's sha256 and the engine's compatibility key: one this cache wrote. wasmtime
    // further checks that a compatible engine produced it.
    unsafe { deserialize_open(engine, file) }.map(Some)
}

/// Open `name` in the directory `dir` to read, without following a symbolic link and without
/// waiting on a FIFO, as [`crate::dirs::open_unfollowed`] does with a path: the directory is the
/// one that was checked, whatever its path names by now.
///
/// # Errors
/// As `openat(2)`; a link is refused (`ELOOP`).
#[cfg(unix)]
fn open_in(dir: &std::fs::File, name: &str) -> std::io::Result<std::fs::File> {
    use std::os::fd::{AsRawFd as _, FromRawFd as _};
    let name = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: `dir` is an open descriptor for as long as the call, and `name` is a
    // NUL-terminated string that outlives it.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was opened just now and nothing else owns it.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

#[cfg(not(unix))]
fn open_in(_dir: &std::fs::File, _name: &str) -> std::io::Result<std::fs::File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the compiled cache is read on Unix only",
    ))
}

/// Load the artifact in `file` itself, not whatever its path names by now: through
/// `/proc/self/fd` (mapped, not copied), or read from the descriptor without `/proc`.
///
/// # Safety
/// As [`Component::deserialize_file`]: the file must hold an artifact this engine produced.
unsafe fn deserialize_open(
    engine: &Engine,
    mut file: std::fs::File,
) -> Result<Component, Unusable> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        let by_fd = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        if by_fd.exists() {
            // SAFETY: as this function's.
            return unsafe { Component::deserialize_file(engine, &by_fd) }
                .map_err(Unusable::Refused);
        }
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(Unusable::Read)?;
    // SAFETY: as this function's.
    unsafe { Component::deserialize(engine, &bytes) }.map_err(Unusable::Refused)
}

/// How [`ArtifactCache::prune`] keeps the cache small.
#[derive(Clone, Copy, Debug)]
pub struct Prune {
    /// Entries unused this long go.
    pub max_age: Duration,
    /// Entries of another engine (another wasmtime or settings) unused this long go.
    pub other_engine_age: Duration,
    /// Beyond this many bytes, the least recently used entries go...
    pub max_bytes: u64,
    /// ...except those used within this long (a plugin set in use is never evicted by size).
    pub in_use: Duration,
}

impl Default for Prune {
    fn default() -> Self {
        Prune {
            max_age: Duration::from_secs(30 * 86_400),
            other_engine_age: Duration::from_secs(86_400),
            max_bytes: 1 << 30,
            in_use: Duration::from_secs(3600),
        }
    }
}

/// What a prune or clear removed and kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    /// Entries removed.
    pub removed: usize,
    /// Their bytes.
    pub removed_bytes: u64,
    /// Entries kept.
    pub kept: usize,
    /// Their bytes.
    pub kept_bytes: u64,
}

impl ArtifactCache {
    /// Remove what `rules` say is not worth keeping (see the module's doc). Leftovers of
    /// interrupted writes older than an hour go too.
    ///
    /// # Errors
    /// The directory cannot be read. Entries that cannot be removed are kept and counted so.
    pub fn prune(&self, rules: Prune) -> std::io::Result<Pruned> {
        let now = SystemTime::now();
        let age = |modified: SystemTime| now.duration_since(modified).unwrap_or(Duration::ZERO);
        let mut entries = self.entries()?;
        let mut pruned = Pruned::default();
        let suffix = format!("-{}.cwasm", self.engine_key);
        entries.retain(|e| {
            let old = age(e.modified);
            let stale = if e.name.starts_with(".tmp-") {
                old > Duration::from_secs(3600)
            } else if !e.name.ends_with(&suffix) {
                old > rules.other_engine_age
            } else {
                old > rules.max_age
            };
            !(stale && remove(e, &mut pruned))
        });
        // Least recently used first.
        entries.sort_by_key(|e| e.modified);
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        entries.retain(|e| {
            let evict = total > rules.max_bytes && age(e.modified) > rules.in_use;
            if evict && remove(e, &mut pruned) {
                total -= e.bytes;
                return false;
            }
            true
        });
        pruned.kept = entries.len();
        pruned.kept_bytes = entries.iter().map(|e| e.bytes).sum();
        Ok(pruned)
    }

    /// Remove every entry: the next load compiles everything again.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn clear(&self) -> std::io::Result<Pruned> {
        let mut pruned = Pruned::default();
        for e in self.entries()? {
            if !remove(&e, &mut pruned) {
                pruned.kept += 1;
                pruned.kept_bytes += e.bytes;
            }
        }
        Ok(pruned)
    }

    /// The cache's files (entries and leftovers), with their size and last use.
    fn entries(&self) -> std::io::Result<Vec<Entry>> {
        let Some(dir) = &self.dir else {
            return Ok(Vec::new());
        };
        let read = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for item in read.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let ours = name.ends_with(".cwasm") || name.starts_with(".tmp-");
            let Ok(meta) = item.metadata() else { continue };
            if !ours || !meta.is_file() {
                continue;
            }
            out.push(Entry {
                path: item.path(),
                name,
                bytes: meta.len(),
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
        Ok(out)
    }
}

/// One file of the cache.
struct Entry {
    path: PathBuf,
    name: String,
    bytes: u64,
    modified: SystemTime,
}

/// Remove `e`, counting it in `pruned`; whether it went.
fn remove(e: &Entry, pruned: &mut Pruned) -> bool {
    match std::fs::remove_file(&e.path) {
        Ok(()) => {
            pruned.removed += 1;
            pruned.removed_bytes += e.bytes;
            true
        }
        Err(err) => {
            tracing::warn!("cannot remove {}: {err}", e.path.display());
            false
        }
    }
}

/// Write `bytes` to `path` by a rename, private (0600) whatever the umask, so that a reader
/// never sees half an entry and the next load trusts it.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), fastrand_suffix()));
    let mut options = std::fs::File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

fn fastrand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// `cache.load` of `bytes`, and what it logged.
    fn load_logged(cache: &ArtifactCache, engine: &Engine, bytes: &[u8]) -> (bool, String) {
        let (compiled, log) = crate::logged::logged(|| {
            cache.load(engine, bytes, crate::runtime::pins::sha256(bytes), "test")
        });
        (compiled.expect("compiles").from_cache, log)
    }

    fn mode(path: &Path) -> u32 {
        std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(path).expect("metadata")) & 0o777
    }

    /// A fresh cache in `dir` with one entry for `bytes`; the entry's path.
    fn one_entry(dir: &Path, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let cache = ArtifactCache::new(Some(dir.to_owned()), engine);
        let (from_cache, _) = load_logged(&cache, engine, bytes);
        assert!(!from_cache, "the first load compiles");
        let entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the cache was made")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        entries[0].clone()
    }

    #[test]
    fn an_entry_its_group_or_others_may_read_is_recompiled_with_a_warning_never_loaded() {
        // A file a plugin wrote through a read-write mount is the daemon user's own, 0644 under
        // the usual umask (WASI cannot set a mode): before the fix only group and other *write*
        // bits were refused, so such a file, where an entry is looked for, was deserialized.
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join("compiled");
        let engine = Engine::default();
        let bytes = wat::parse_str("(component)").expect("the text parses");
        let entry = one_entry(&dir, &engine, &bytes);
        assert_eq!(mode(&dir), 0o700, "the cache makes its directory 0700");
        assert_eq!(mode(&entry), 0o600, "the cache writes its entries 0600");
        let (from_cache, _) = load_logged(
            &ArtifactCache::new(Some(dir.clone()), &engine),
            &engine,
            &bytes,
        );
        assert!(from_cache, "premise: its own entry is loaded");

        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let cache = ArtifactCache::new(Some(dir.clone()), &engine);
        let (from_cache, log) = load_logged(&cache, &engine, &bytes);
        assert!(!from_cache, "a 0644 entry is not loaded");
        assert!(
            log.contains("WARN") && log.contains("unusable") && log.contains("mode 644"),
            "{log}"
        );
        assert_eq!(mode(&entry), 0o600, "replaced by a compiled one of its own");
        let (from_cache, _) = load_logged(&cache, &engine, &bytes);
        assert!(from_cache, "the replacement is trusted");
    }

    #[test]
    fn a_cache_directory_that_is_a_symbolic_link_is_not_used_with_a_warning() {
        // Before the fix the directory was checked through the link (its target's metadata)
        // and each entry opened by a path looked up again: a link to a directory of the
        // daemon user's (a plugin's mount, say) had its files loaded as native code.
        let tmp = tempfile::tempdir().expect("temp dir");
        let real = tmp.path().join("real");
        let engine = Engine::default();
        let bytes = wat::parse_str("(component)").expect("the text parses");
        let entry = one_entry(&real, &engine, &bytes);
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let before = std::fs::read(&entry).expect("entry");

        let cache = ArtifactCache::new(Some(link.clone()), &engine);
        let (from_cache, log) = load_logged(&cache, &engine, &bytes);
        assert!(!from_cache, "nothing is loaded through the link");
        assert!(
            log.contains("WARN") && log.contains("is not used") && log.contains("symbolic link"),
            "{log}"
        );
        assert_eq!(
            std::fs::read_dir(&real).expect("dir").count(),
            1,
            "nothing is written through the link"
        );
        assert_eq!(std::fs::read(&entry).expect("entry"), before);
    }
}
