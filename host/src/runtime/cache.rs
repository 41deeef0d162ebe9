//! The on-disk cache of compiled components, so that the second start compiles nothing.
//!
//! An artifact is keyed by the sha256 of the component and a digest of the engine's
//! compatibility hash (wasmtime version, target, every setting that affects code), so a change
//! of either misses the cache instead of loading incompatible code.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

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
        if let Some(path) = &path
            && let Err(e) = write_atomically(path, &serialized)
        {
            tracing::warn!(
                "cannot write the compiled cache entry {}: {e}",
                path.display()
            );
        }
        Ok(Compiled {
            component,
            from_cache: false,
            sha256,
        })
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
