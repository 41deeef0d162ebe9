//! Where Passepartout keeps things, following the XDG base directories.

use std::path::{Path, PathBuf};

fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "passepartout")
}

/// Third-party plugins: `$XDG_DATA_HOME/passepartout/plugins`.
pub fn plugin_dir() -> Option<PathBuf> {
    project().map(|p| p.data_dir().join("plugins"))
}

/// The operator's policy: `$XDG_CONFIG_HOME/passepartout/policy.toml`.
pub fn policy_file() -> Option<PathBuf> {
    project().map(|p| p.config_dir().join("policy.toml"))
}

/// Compiled components: `$XDG_CACHE_HOME/passepartout/compiled`.
pub fn cache_dir() -> Option<PathBuf> {
    project().map(|p| p.cache_dir().join("compiled"))
}

/// Where `plugin build` compiles every project (so the SDK's dependencies compile once):
/// `$XDG_CACHE_HOME/passepartout/build`.
pub fn build_dir() -> Option<PathBuf> {
    project().map(|p| p.cache_dir().join("build"))
}

/// The database (journal, approvals): `$XDG_DATA_HOME/passepartout/passepartout.db`.
pub fn database() -> Option<PathBuf> {
    project().map(|p| p.data_dir().join("passepartout.db"))
}

/// The pins recorded at install: `$XDG_CONFIG_HOME/passepartout/pins.toml`.
pub fn pins_file() -> Option<PathBuf> {
    project().map(|p| p.config_dir().join("pins.toml"))
}

/// The configuration (providers, budget, prices): `$XDG_CONFIG_HOME/passepartout/passepartout.toml`.
pub fn config_file() -> Option<PathBuf> {
    project().map(|p| p.config_dir().join("passepartout.toml"))
}

/// The directory `passepartout init` grants the first-party tools:
/// `$XDG_DATA_HOME/passepartout/workspace`.
pub fn workspace() -> Option<PathBuf> {
    project().map(|p| p.data_dir().join("workspace"))
}

/// Open `path` to read without following a symbolic link in its last component and without
/// waiting on a FIFO (on Unix; elsewhere, a plain open): a link or a FIFO put in a file's place
/// is refused by the open itself. The caller checks that what it got is a regular file.
///
/// # Errors
/// As [`std::fs::File::open`]; a link is refused (`ELOOP`).
pub(crate) fn open_unfollowed(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::File::options();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    options.open(path)
}

/// Create `dir` and its missing parents, each its owner's alone on Unix (0700); those already
/// there keep their mode.
///
/// # Errors
/// As [`std::fs::DirBuilder::create`].
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Create the database file at `path`, empty (SQLite takes an empty file for a new database)
/// and its owner's alone on Unix (0600), unless something is there already: an existing
/// database keeps its mode. Not for SQLite's special names (`:memory:`, `file:` URIs), which
/// are no file at that path.
pub(crate) fn create_private_file(path: &Path) {
    let special = path.as_os_str().is_empty()
        || path == Path::new(":memory:")
        || path.to_str().is_some_and(|p| p.starts_with("file:"));
    if special {
        return;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    // Already there (or not creatable): `Connection::open` opens it or says why not.
    let _ = options.open(path);
}
