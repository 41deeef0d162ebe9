//! Path words as the rules compare them. A gate cannot look at the filesystem, so paths are
//! resolved lexically (`/usr/../etc`, `//etc/.` and `/./etc` are `/etc`), a relative one against
//! the directory a `cd` earlier in the line went to, and a word the shell changes before a
//! program sees it (a variable, a substitution, `~user`, braces) is told apart: what it names
//! cannot be known here. A glob is kept, and compared as one: `/e*c` may be `/etc`.

use shell_syntax::glob::braces;
pub use shell_syntax::glob::{glob, has_glob};

/// Top-level directories whose recursive removal or re-permissioning wrecks the machine.
const SYSTEM_DIRS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
    "/sbin", "/srv", "/sys", "/usr", "/var",
];

/// Disk device prefixes that writing onto destroys a filesystem.
const DISKS: &[&str] = &[
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/disk",
    "/dev/mapper/",
    "/dev/md",
    "/dev/dm-",
    "/dev/loop",
];

/// A home directory as paths are resolved here: `~`, `$HOME` and `${HOME}` are read as this,
/// so that `~/..` is `/home`, a system directory.
const HOME: &str = "/home/~";

/// Where the commands of one line run, as far as its `cd`s tell, and whether its `~` is the
/// user's home.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cwd {
    /// The directory.
    pub dir: Dir,
    /// Whether `~`, `$HOME` and a bare `cd` lead to the user's home; not once the line may give
    /// `HOME` another value (`HOME=/; rm -rf ~/etc`): they then lead where the gate cannot tell.
    pub home: bool,
}

/// A directory, as far as a line's `cd`s tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Below where the line started, by these components (none: there).
    Below(Vec<String>),
    /// This absolute directory, resolved.
    At(String),
    /// Somewhere the gate cannot tell (`cd "$D"`, `cd -`, `cd ..` from where the line started).
    Unknown,
}

impl Cwd {
    /// Where a line starts: relative paths are below it, as the gate has always read them.
    pub fn start() -> Cwd {
        Cwd {
            dir: Dir::Below(Vec::new()),
            home: true,
        }
    }

    /// Here, moved somewhere the gate cannot tell (`pushd`, `popd`, `eval 'cd ...'`).
    pub fn unknown(&self) -> Cwd {
        Cwd {
            dir: Dir::Unknown,
            home: self.home,
        }
    }

    /// Here, with `HOME` given a value the gate cannot tell.
    pub fn homeless(&self) -> Cwd {
        Cwd {
            dir: self.dir.clone(),
            home: false,
        }
    }

    /// Where `cd ARGS` (or `pushd ARGS`) leads from here. With `cdpath` (the line sets
    /// `CDPATH`), a relative directory not spelled from `.` may be anywhere.
    pub fn cd(&self, args: &[String], cdpath: bool) -> Cwd {
        let mut rest = args;
        while let Some((first, tail)) = rest.split_first() {
            if first == "--" {
                rest = tail;
                break;
            }
            if first.len() > 1 && first.starts_with('-') {
                rest = tail; // -L, -P, -e, -@
            } else {
                break;
            }
        }
        let dir = match rest {
            [] if self.home => HOME,
            [dir] => dir.as_str(),
            _ => return self.unknown(),
        };
        let spelled_from_here = dir.starts_with('/') || dir.starts_with('.');
        if dir == "-" || has_glob(dir) || (cdpath && !spelled_from_here) {
            return self.unknown();
        }
        let dir = match place(dir, self) {
            Place::At(path) => Dir::At(path),
            Place::Below(parts) => Dir::Below(parts),
            Place::Unknown => Dir::Unknown,
        };
        Cwd {
            dir,
            home: self.home,
        }
    }
}

/// Where a path word leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// This absolute path, resolved; it may hold glob characters. A trailing `/*` is left out:
    /// `/usr/*` is everything in `/usr`, judged as `/usr`.
    At(String),
    /// Below where the line started, by these components.
    Below(Vec<String>),
    /// Somewhere the gate cannot tell: the shell changes the word first, or it climbs out of
    /// where the line started, or is relative to a directory the gate cannot tell.
    Unknown,
}

/// Where the path `word` leads from `cwd`.
pub fn place(word: &str, cwd: &Cwd) -> Place {
    let (mut parts, rest, absolute) = if let Some(rest) = home_rest(word) {
        if !cwd.home {
            return Place::Unknown;
        }
        (components(HOME), rest, true)
    } else if word.starts_with('/') {
        (Vec::new(), word, true)
    } else {
        match &cwd.dir {
            Dir::At(dir) => (components(dir), word, true),
            Dir::Below(parts) => (parts.clone(), word, false),
            Dir::Unknown => return Place::Unknown,
        }
    };
    if expands(rest) {
        return Place::Unknown;
    }
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                // `..` at the root stays there, as the kernel has it; above where the line
                // started is somewhere the gate cannot tell.
                if parts.pop().is_none() && !absolute {
                    return Place::Unknown;
                }
            }
            part => parts.push(part.to_owned()),
        }
    }
    if !absolute {
        return Place::Below(parts);
    }
    while parts
        .last()
        .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c == '*'))
    {
        parts.pop();
    }
    Place::At(format!("/{}", parts.join("/")))
}

/// What the target of a recursive delete or re-permissioning is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A home directory (`~`, `$HOME`, `/root`).
    Home,
    /// `/` or a top-level system directory, or a glob that may match this one.
    System(&'static str),
    /// Something the gate cannot tell before the shell expands it.
    Unknown,
    /// Anything else.
    Other,
}

/// What the path `word`, from `cwd`, is as a target.
pub fn target(word: &str, cwd: &Cwd) -> Target {
    match place(word, cwd) {
        Place::Unknown => Target::Unknown,
        Place::Below(_) => Target::Other,
        Place::At(path) if path == HOME || path == "/root" => Target::Home,
        Place::At(path) => SYSTEM_DIRS
            .iter()
            .copied()
            .find(|dir| may_match(&path, dir))
            .map_or(Target::Other, Target::System),
    }
}

/// What writing onto a path does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Onto {
    /// Harm, and why.
    Harm(&'static str),
    /// Something the gate cannot tell before the shell expands it.
    Unknown,
    /// Nothing these rules object to.
    Fine,
}

/// What writing onto the path `word`, from `cwd`, does: harm when it is a disk device (or,
/// unless `disks_only`, a file in /etc or /boot, or the machine's memory); unknown when the
/// shell expands it first, or a glob in it may lead into /dev, /etc or /boot.
pub fn onto(word: &str, cwd: &Cwd, disks_only: bool) -> Onto {
    let path = match place(word, cwd) {
        Place::Unknown => return Onto::Unknown,
        Place::Below(_) => return Onto::Fine,
        Place::At(path) => path,
    };
    if DISKS.iter().any(|d| path.starts_with(d)) {
        return Onto::Harm("writing onto a disk device destroys its filesystem");
    }
    if !disks_only && (path == "/etc" || path.starts_with("/etc/")) {
        return Onto::Harm("files in /etc configure the whole system");
    }
    if !disks_only
        && (path.starts_with("/boot/") || path.starts_with("/dev/mem") || path == "/dev/port")
    {
        return Onto::Harm("this overwrites what the machine boots or runs from");
    }
    let top = path.split('/').nth(1).unwrap_or_default();
    if has_glob(&path) && ["dev", "etc", "boot"].iter().any(|d| glob(top, d)) {
        return Onto::Unknown;
    }
    Onto::Fine
}

/// Whether the shell changes `word` before a program sees it in a way that decides what it
/// names: a variable or a substitution (`$X`, `$(...)`, backticks), `~user`, braces (`{a,b}`,
/// `{1..3}`), an extglob group (`!(x)`).
pub fn expands(word: &str) -> bool {
    word.contains(['$', '`', '('])
        || (word.starts_with('~') && home_rest(word).is_none())
        || braces(word)
}

/// What follows a home directory at the start of `word` (`~/a` → `/a`, `$HOME` → ``).
fn home_rest(word: &str) -> Option<&str> {
    ["~", "${HOME}", "$HOME"].iter().find_map(|home| {
        word.strip_prefix(home)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether the absolute `path`, which may hold glob characters, is or may match `dir`. A `**`
/// may stand for any number of directories.
fn may_match(path: &str, dir: &str) -> bool {
    if !has_glob(path) {
        return path == dir;
    }
    let pattern: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let names: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    pattern.contains(&"**")
        || (pattern.len() == names.len() && pattern.iter().zip(&names).all(|(p, n)| glob(p, n)))
}
