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
        let path = self
            .dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.engine_key)));
        if let Some(path) = path.as_ref().filter(|p| p.is_file()) {
            // SAFETY: the file is one this cache wrote (named by the component's sha256 and the
            // engine's compatibility key) in a 0700 directory of the daemon's user; wasmtime
            // further checks that it was produced by a compatible engine.
            match unsafe { Component::deserialize_file(engine, path) } {
                Ok(component) => {
                    mark_used(path);
                    return Ok(Compiled {
                        component,
                        from_cache: true,
                        sha256,
                    });
                }
                Err(e) => tracing::warn!(
                    "compiled cache entry {} is unusable ({e}); recompiling",
                    path.display()
                ),
            }
        }
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

/// Mark a cache entry used now (its modification time), so that pruning keeps what is in use.
fn mark_used(path: &Path) {
    let touched = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
    if let Err(e) = touched {
        tracing::debug!("cannot mark {} used: {e}", path.display());
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), fastrand_suffix()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn fastrand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
