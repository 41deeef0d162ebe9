//! More programs made to run another command, beside those of [`crate::wrappers`]: namespace
//! and privilege tools (`unshare`, `nsenter`, `setpriv`, `sg`, `newgrp`, `run0`), resource
//! limiters (`prlimit`, `numactl`, `nocache`, `cpulimit`), environment fakers (`faketime`,
//! `fakeroot`, `proxychains`, `torsocks`), sandboxes (`firejail`, `bwrap`), service and session
//! starters (`systemd-run`, `dbus-run-session`, `xvfb-run`, `script`), debuggers (`valgrind`,
//! `catchsegv`), the remote shell (`ssh`, whose command words are a line the remote shell runs)
//! and GNU `parallel`. Each is read by its own option syntax, taken from its source: a
//! getopt table for [`crate::options`] where the program uses getopt, a small reader of its own
//! where it parses its words by hand (`bwrap`'s options take up to three values, `firejail`'s
//! are all `--name` or `--name=value`, `proxychains` looks at two words at most). A word a
//! reader does not know leaves the gate unable to tell where the command starts: that is
//! [`Runs::Unknown`], and the gates ask.
//!

use crate::options::{self, Options};
use crate::wrappers::{Runs, UNSEEN, Wrapped, home, shell, together};

const UNSHARE: &[&str] = &[
    "f|fork",
    "h|help",
    "V|version",
    "m",
    "|mount?",
    "u",
    "|uts?",
    "i",
    "|ipc?",
    "n",
    "|net?",
    "p",
    "|pid?",
    "C",
    "|cgroup?",
    "T",
    "|time?",
    "U",
    "|user?",
    "r|map-root-user",
    "c|map-current-user",
    "R|root=",
    "w|wd=",
    "S|setuid=",
    "G|setgid=",
    "l|load-interp=",
    "|kill-child?",
    "|forward-signals",
    "|mount-proc?",
    "|mount-binfmt?",
    "|map-user=",
    "|map-users=",
    "|map-group=",
    "|map-groups=",
    "|map-auto",
    "|map-subids",
    "|owner=",
    "|propagation=",
    "|setgroups=",
    "|keep-caps",
    "|monotonic=",
    "|boottime=",
    "|clear-env",
    "|whitelist-env=",
];
const NSENTER: &[&str] = &[
    "a|all",
    "h|help",
    "V|version",
    "t|target=",
    "m|mount?",
    "u|uts?",
    "i|ipc?",
    "n|net?",
    "N|net-socket=",
    "p|pid?",
    "C|cgroup?",
    "U|user?",
    "T|time?",
    "S|setuid=",
    "G|setgid=",
    "r|root?",
    "w|wd?",
    "W|wdns?",
    "e|env",
    "c|join-cgroup",
    "F|no-fork",
    "Z|follow-context",
    "|preserve-credentials",
    "|keep-caps",
    "|user-parent",
];
const SETPRIV: &[&str] = &[
    "d|dump",
    "h|help",
    "V|version",
    "|nnp",
    "|no-new-privs",
    "|inh-caps=",
    "|ambient-caps=",
    "|list-caps",
    "|ruid=",
    "|euid=",
    "|rgid=",
    "|egid=",
    "|reuid=",
    "|regid=",
    "|clear-groups",
    "|keep-groups",
    "|init-groups",
    "|groups=",
    "|bounding-set=",
    "|securebits=",
    "|pdeathsig=",
    "|ptracer=",
    "|selinux-label=",
    "|apparmor-profile=",
    "|landlock-access=",
    "|landlock-rule=",
    "|landlock-support",
    "|list-landlock-access",
    "|list-landlock-rights=",
    "|seccomp-filter=",
    "|reset-env",
];
const PRLIMIT: &[&str] = &[
    "c|core?",
    "d|data?",
    "e|nice?",
    "f|fsize?",
    "i|sigpending?",
    "l|memlock?",
    "m|rss?",
    "n|nofile?",
    "q|msgqueue?",
    "r|rtprio?",
    "s|stack?",
    "t|cpu?",
    "u|nproc?",
    "v|as?",
    "x|locks?",
    "y|rttime?",
    "p|pid=",
    "o|output=",
    "V|version",
    "h|help",
    "|noheadings",
    "|raw",
    "|verbose",
];
const NUMACTL: &[&str] = &[
    "a|all",
    "i|interleave=",
    "w|weighted-interleave=",
    "p|preferred=",
    "P|preferred-many=",
    "c|cpubind=",
    "N|cpunodebind=",
    "C|physcpubind=",
    "m|membind=",
    "s|show",
    "l|localalloc",
    "b|balancing",
    "H|hardware",
    "S|shm=",
    "f|file=",
    "o|offset=",
    "L|length=",
    "t|strict",
    "M|shmmode=",
    "d|dump",
    "D|dump-nodes",
    "I|shmid=",
    "u|huge",
    "T|touch",
    "|cpu-compress",
    "V|verify",
    "|version",
];
/// `nocache`, a shell script: `getopts "n:D:f"`.
const NOCACHE: &[&str] = &["n=", "D=", "f"];
/// `cpulimit`: the options of its two lines of versions (opsengine's `-i`, LimitCPU's `-P`,
/// `-c`, `-b`, `-k`, `-r`, `-q`, `-m`) together.
const CPULIMIT: &[&str] = &[
    "p|pid=",
    "e|exe=",
    "P|path=",
    "l|limit=",
    "c|cpu=",
    "b|background",
    "q|quiet",
    "k|kill",
    "r|restore",
    "v|verbose",
    "z|lazy",
    "i|include-children",
    "m|monitor-forks",
    "h|help",
];
/// `fakeroot`, a shell script reading its words with GNU getopt (`+l:f:i:s:ub:vh`).
const FAKEROOT: &[&str] = &[
    "l|lib=",
    "f|faked=",
    "i=",
    "s=",
    "u|unknown-is-real",
    "b|fd-base=",
    "v|version",
    "h|help",
];
/// `xvfb-run`, a shell script reading its words with GNU getopt (`+ae:f:hn:lp:s:w:`; `-d` is
/// Arch's).
const XVFB_RUN: &[&str] = &[
    "a|auto-servernum",
    "d|auto-display",
    "e|error-file=",
    "f|auth-file=",
    "h|help",
    "n|server-num=",
    "l|listen-tcp",
    "p|xauth-protocol=",
    "s|server-args=",
    "w|wait=",
];
const SYSTEMD_RUN: &[&str] = &[
    "h|help",
    "|version",
    "|no-ask-password",
    "|user",
    "|system",
    "C|capsule=",
    "|scope",
    "u|unit=",
    "|description=",
    "|slice=",
    "|slice-inherit",
    "r|remain-after-exit",
    "|expand-environment=",
    "|send-sighup",
    "H|host=",
    "M|machine=",
    "|service-type=",
    "|wait",
    "|uid=",
    "|gid=",
    "|nice=",
    "E|setenv=",
    "p|property=",
    "|tty",
    "t|pty",
    "P|pipe",
    "q|quiet",
    "|json=",
    "|on-active=",
    "|on-boot=",
    "|on-startup=",
    "|on-unit-active=",
    "|on-unit-inactive=",
    "|on-calendar=",
    "|on-timezone-change",
    "|on-clock-change",
    "|timer-property=",
    "|path-property=",
    "|socket-property=",
    "|no-block",
    "G|collect",
    "|working-directory=",
    "d|same-dir",
    "S|shell",
    "|job-mode=",
    "|ignore-failure",
    "|background=",
];
/// `run0`: `systemd-run` started under that name, read the way `sudo` is.
const RUN0: &[&str] = &[
    "h|help",
    "V|version",
    "|no-ask-password",
    "|machine=",
    "|unit=",
    "|property=",
    "|description=",
    "|slice=",
    "|slice-inherit",
    "u|user=",
    "g|group=",
    "|nice=",
    "D|chdir=",
    "|setenv=",
    "|background=",
    "|pty",
    "|pipe",
    "|shell-prompt-prefix=",
    "|lightweight=",
    "a|area=",
];
/// `script` (util-linux): its options, which GNU getopt lets come after its operands.
const SCRIPT: &[&str] = &[
    "a|append",
    "B|log-io=",
    "c|command=",
    "E|echo=",
    "e|return",
    "f|flush",
    "|force",
    "I|log-in=",
    "O|log-out=",
    "T|log-timing=",
    "m|logging-format=",
    "o|output-limit=",
    "q|quiet",
    "t|timing?",
    "V|version",
    "h|help",
];
/// The options of [`SCRIPT`] that take the next word as their value: one given last with no
/// value has taken a `--` that follows it.
const SCRIPT_VALUED: &[&str] = &[
    "log-io",
    "command",
    "echo",
    "log-in",
    "log-out",
    "log-timing",
    "logging-format",
    "output-limit",
];
/// `bwrap`'s options (bubblewrap.c, which compares each word whole) and how many words each
/// takes after it.
const BWRAP: &[(&str, usize)] = &[
    ("--help", 0),
    ("--version", 0),
    ("--argv0", 1),
    ("--level-prefix", 0),
    ("--unshare-all", 0),
    ("--unshare-user", 0),
    ("--unshare-user-try", 0),
    ("--unshare-ipc", 0),
    ("--unshare-pid", 0),
    ("--unshare-net", 0),
    ("--unshare-uts", 0),
    ("--unshare-cgroup", 0),
    ("--unshare-cgroup-try", 0),
    ("--share-net", 0),
    ("--chdir", 1),
    ("--disable-userns", 0),
    ("--assert-userns-disabled", 0),
    ("--remount-ro", 1),
    ("--bind", 2),
    ("--bind-try", 2),
    ("--ro-bind", 2),
    ("--ro-bind-try", 2),
    ("--dev-bind", 2),
    ("--dev-bind-try", 2),
    ("--bind-fd", 2),
    ("--ro-bind-fd", 2),
    ("--overlay-src", 1),
    ("--overlay", 3),
    ("--tmp-overlay", 1),
    ("--ro-overlay", 1),
    ("--proc", 1),
    ("--exec-label", 1),
    ("--file-label", 1),
    ("--dev", 1),
    ("--tmpfs", 1),
    ("--mqueue", 1),
    ("--dir", 1),
    ("--file", 2),
    ("--bind-data", 2),
    ("--ro-bind-data", 2),
    ("--symlink", 2),
    ("--lock-file", 1),
    ("--sync-fd", 1),
    ("--block-fd", 1),
    ("--userns-block-fd", 1),
    ("--info-fd", 1),
    ("--json-status-fd", 1),
    ("--seccomp", 1),
    ("--add-seccomp-fd", 1),
    ("--userns", 1),
    ("--userns2", 1),
    ("--pidns", 1),
    ("--clearenv", 0),
    ("--setenv", 2),
    ("--unsetenv", 1),
    ("--uid", 1),
    ("--gid", 1),
    ("--hostname", 1),
    ("--new-session", 0),
    ("--die-with-parent", 0),
    ("--as-pid-1", 0),
    ("--cap-add", 1),
    ("--cap-drop", 1),
    ("--perms", 1),
    ("--size", 1),
    ("--chmod", 2),
];

/// What the program called `name` (a base name) runs, given `args`, and the directory it starts
/// it in when it changes it (`unshare -w DIR`, `systemd-run`'s `/`, `ssh`'s remote home);
/// `None` when `name` is none of these programs.
pub fn runs(name: &str, args: &[String]) -> Option<(Runs, Option<String>)> {
    let command = |table: &[&'static str]| -> Result<Wrapped, String> {
        options::read(table, args).map(|read| (Runs::Command(read.rest), None))
    };
    let outcome: Result<Wrapped, String> = match name {
        "unshare" => options::read(UNSHARE, args).map(|read| unshare(&read)),
        "nsenter" => options::read(NSENTER, args).map(|read| nsenter(&read)),
        "setpriv" => command(SETPRIV),
        "prlimit" => options::read(PRLIMIT, args).map(|read| (prlimit(read), None)),
        "numactl" => command(NUMACTL),
        "nocache" => command(NOCACHE),
        "cpulimit" => cpulimit(args).map(|runs| (runs, None)),
        "faketime" => faketime(args).map(|runs| (runs, None)),
        "fakeroot" | "fakeroot-sysv" | "fakeroot-tcp" => {
            options::read(FAKEROOT, args).map(|read| (fakeroot(&read), None))
        }
        "proxychains" | "proxychains4" => proxychains(args).map(|runs| (runs, None)),
        "torsocks" | "torify" => torsocks(args).map(|runs| (runs, None)),
        "firejail" => firejail(args).map(|runs| (runs, None)),
        "bwrap" => bwrap(args),
        "systemd-run" => options::read(SYSTEMD_RUN, args).and_then(|read| systemd_run(&read)),
        "run0" => options::read(RUN0, args).and_then(|read| run0(&read)),
        "valgrind" => valgrind(args).map(|runs| (runs, None)),
        "catchsegv" => Ok((catchsegv(args), None)),
        "dbus-run-session" => dbus_run_session(args).map(|runs| (runs, None)),
        "xvfb-run" => command(XVFB_RUN),
        "sg" => Ok(sg(args)),
        "newgrp" => Ok(newgrp(args)),
        "script" => script(args).map(|runs| (runs, None)),
        "ssh" => crate::ssh::ssh(args),
        "parallel" => crate::parallel::parallel(args).map(|runs| (runs, None)),
        _ => return None,
    };
    Some(outcome.unwrap_or_else(|why| (Runs::Unknown(format!("`{name}`: {why}")), None)))
}

/// Nothing runs: the program only prints, or fails on how it was called.
pub(crate) fn nothing() -> Runs {
    Runs::Command(Vec::new())
}

/// `words`, the program first; with none, the shell that the program then starts (`unshare`,
/// `nsenter`, `firejail` and `fakeroot` start `$SHELL`).
fn command_or_shell(words: &[String]) -> Runs {
    if words.is_empty() {
        shell()
    } else {
        Runs::Command(words.to_vec())
    }
}

/// `unshare [OPTIONS] [CMD]`: the command, or `$SHELL`; started in `-w DIR`, else in the new
/// root of `-R DIR` (where `chroot` would start it).
fn unshare(read: &Options) -> Wrapped {
    let dir = read
        .values("wd")
        .chain(read.values("root"))
        .next()
        .map(str::to_owned);
    (command_or_shell(&read.rest), dir)
}

/// `nsenter [OPTIONS] [CMD]`: the command, or `$SHELL`; started in `-w DIR` (`--wd`,
/// `--wdns`), or, when `-w` or `-r` name no directory, in the target process's, which the gate
/// cannot tell.
fn nsenter(read: &Options) -> Wrapped {
    let named = read.values("wd").chain(read.values("wdns")).last();
    let moved = read.has("wd") || read.has("wdns") || read.has("root");
    let dir = named
        .map(str::to_owned)
        .or_else(|| moved.then(|| UNSEEN.to_owned()));
    (command_or_shell(&read.rest), dir)
}

/// `prlimit [OPTIONS] CMD`: the command; `prlimit --pid PID` changes a running process's
/// limits and runs nothing.
fn prlimit(read: Options) -> Runs {
    if read.has("pid") {
        nothing()
    } else {
        Runs::Command(read.rest)
    }
}

/// `cpulimit -l N [--] CMD`. Its two lines of versions find the command differently: opsengine's
/// stops at the first operand; LimitCPU's lets getopt take options from anywhere (a `-r` of the
/// command becomes its own) and counts two words for each valued option and one for each flag,
/// whether given apart or not. So the gate reads only options one to a word, values in the next
/// word, and a command after `--` or holding no word that starts with `-`; `-p PID` limits a
/// running process and runs nothing.
fn cpulimit(args: &[String]) -> Result<Runs, String> {
    let read = options::read(CPULIMIT, args)?;
    let options = args
        .get(..args.len().saturating_sub(read.rest.len()))
        .unwrap_or_default();
    let dashed = options.last().is_some_and(|w| w == "--");
    let mut at = 0;
    while let Some(word) = options.get(at).filter(|w| *w != "--") {
        let long = word.strip_prefix("--");
        if long.is_some_and(|l| l.contains('=')) || (long.is_none() && word.chars().count() > 2) {
            return Err(format!(
                "its versions count the words of options differently; this gate reads `{}` only \
                 given apart",
                shown(word)
            ));
        }
        let valued = match long {
            Some(name) => ["pid", "exe", "path", "limit", "cpu"]
                .iter()
                .any(|v| !name.is_empty() && v.starts_with(name)),
            None => word.chars().nth(1).is_some_and(|c| "pePlc".contains(c)),
        };
        at += 1 + usize::from(valued);
    }
    if read.has("pid") {
        return Ok(nothing());
    }
    if !dashed && read.rest.iter().skip(1).any(|w| w.starts_with('-')) {
        return Err(
            "some of its versions read the command's options as their own; this gate reads the \
             command only after `--`"
                .into(),
        );
    }
    Ok(Runs::Command(read.rest))
}

/// `faketime [-m] [-f] [-p PID] [--exclude-monotonic] [--disable-shm] [--date-prog PROG]
/// TIMESTAMP CMD`: options compared whole, then the timestamp, then the command. `--date-prog`
/// names a program it runs besides (`date` when not given).
fn faketime(args: &[String]) -> Result<Runs, String> {
    let mut at = 0;
    let mut date: Option<&String> = None;
    while let Some(word) = args.get(at) {
        let step = match word.as_str() {
            "-m" | "-f" | "--exclude-monotonic" | "--disable-shm" => 1,
            "-p" => 2,
            "--date-prog" => {
                date = args.get(at + 1);
                2
            }
            "-v" | "--version" | "-h" | "-?" | "--help" => return Ok(nothing()),
            _ => break,
        };
        at += step;
    }
    let command = args.get(at + 1..).unwrap_or_default();
    let plain = |p: &String| matches!(p.rsplit('/').next(), Some("date" | "gdate"));
    match date {
        Some(program) if !plain(program) => Ok(together(vec![
            Runs::Command(vec![
                program.clone(),
                "-d".into(),
                UNSEEN.into(),
                "+%s".into(),
            ]),
            Runs::Command(command.to_vec()),
        ])),
        _ => Ok(Runs::Command(command.to_vec())),
    }
}

/// `fakeroot [OPTIONS] [--] [CMD]`: the command, or `$SHELL`. Its script `eval`s what some
/// options give it: `-l LIB` as `echo LIB`, and the `faked` line that `-f FAKED`, `-s FILE`
/// and `-i FILE` make; those lines run too.
fn fakeroot(read: &Options) -> Runs {
    let mut parts: Vec<Runs> = read
        .values("lib")
        .map(|lib| Runs::Line(format!("echo {lib}")))
        .collect();
    if read.has("faked") || read.has("s") || read.has("i") {
        let mut line = read.values("faked").last().unwrap_or("faked").to_owned();
        for saved in read.values("s") {
            line.push_str(" --save-file ");
            line.push_str(saved);
        }
        if let Some(loaded) = read.values("i").last() {
            line.push_str(" --load <");
            line.push_str(loaded);
        }
        parts.push(Runs::Line(line));
    }
    parts.push(command_or_shell(&read.rest));
    together(parts)
}

/// `proxychains [-q] [-f FILE] CMD` (and `proxychains4`): it looks at two words at most, each
/// by its second letter (`-q...`, `-f... FILE`); any other word with a `-` would be run as the
/// program, which the gate does not guess at.
fn proxychains(args: &[String]) -> Result<Runs, String> {
    let mut at = 0;
    for _ in 0..2 {
        let Some(word) = args.get(at).filter(|w| w.starts_with('-')) else {
            break;
        };
        at += match word.chars().nth(1) {
            Some('q') => 1,
            Some('f') => 2,
            _ => {
                return Err(format!(
                    "option `{}` is not one this gate knows",
                    shown(word)
                ));
            }
        };
    }
    let command = args.get(at..).unwrap_or_default();
    if let Some(word) = command.first().filter(|w| w.starts_with('-')) {
        return Err(format!(
            "it would run `{}` as its program, which this gate does not guess at",
            shown(word)
        ));
    }
    Ok(Runs::Command(command.to_vec()))
}

/// `torsocks [OPTIONS] CMD` (a shell script; `torify` runs it): options compared whole;
/// `--shell` starts `$SHELL`; `on`, `off` and `show` change or show the calling shell's
/// environment and run nothing. (`sh`, which it also takes for `show`, is read as the command
/// `sh`, as older scripts may run it.)
fn torsocks(args: &[String]) -> Result<Runs, String> {
    let mut at = 0;
    while let Some(word) = args.get(at) {
        let step = match word.as_str() {
            "-u" | "--user" | "-p" | "--pass" | "-a" | "--address" | "-P" | "--port" => 2,
            "-i" | "--isolate" | "-d" | "--debug" | "-q" | "--quiet" => 1,
            "on" | "off" | "show" | "-h" | "--help" | "--version" => return Ok(nothing()),
            "--shell" => return Ok(shell()),
            w if w.starts_with('-') => {
                return Err(format!("option `{}` is not one this gate knows", shown(w)));
            }
            _ => return Ok(Runs::Command(args.get(at..).unwrap_or_default().to_vec())),
        };
        at += step;
    }
    Ok(nothing())
}

/// `firejail [OPTIONS] [--] [CMD]`: its options are all `--name` or `--name=value`, one word
/// each (and `-c`, `-?`); the program is the first other word, or the user's shell. With `-c`
/// the command's words are a line for the shell.
fn firejail(args: &[String]) -> Result<Runs, String> {
    let settings = args
        .iter()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.strip_prefix("--env="))
        .map(str::to_owned)
        .collect();
    firejail_runs(args).map(|runs| with_settings(settings, runs))
}

/// The file a `firejail` option reads settings from: `--profile=` or `--include=`. Even a
/// bare name (`--profile=git`) is read from the working directory first when a file of that
/// name is there, which may be one the agent wrote.
fn firejail_file(word: &str) -> Option<&str> {
    word.strip_prefix("--profile=")
        .or_else(|| word.strip_prefix("--include="))
}

/// What `firejail` runs, its `--env=` aside.
fn firejail_runs(args: &[String]) -> Result<Runs, String> {
    let mut line = false;
    for (at, word) in args.iter().enumerate() {
        let command = match word.as_str() {
            "--" => args.get(at + 1..).unwrap_or_default(),
            "-c" => {
                line = true;
                continue;
            }
            "-?" => return Ok(nothing()),
            w if firejail_file(w).is_some() => {
                return Err(format!(
                    "`{}` reads settings from a file this gate cannot see (`env`, `join`...)",
                    shown(w)
                ));
            }
            w if w.starts_with("--") => continue,
            w if w.starts_with('-') => {
                return Err(format!("option `{}` is not one this gate knows", shown(w)));
            }
            _ => args.get(at..).unwrap_or_default(),
        };
        return Ok(if line {
            Runs::Line(command.join(" "))
        } else {
            Runs::Command(command.to_vec())
        });
    }
    Ok(shell())
}

/// `bwrap [OPTIONS] [--] CMD`: each option takes the number of words [`BWRAP`] gives it;
/// started in `--chdir DIR`. `--args FD` reads more options from a descriptor the gate cannot
/// see.
fn bwrap(args: &[String]) -> Result<Wrapped, String> {
    let mut at = 0;
    let mut dir = None;
    let mut settings = Vec::new();
    while let Some(word) = args.get(at) {
        if word == "--" {
            at += 1;
            break;
        }
        if word == "--help" || word == "--version" {
            return Ok((nothing(), None));
        }
        if word == "--args" {
            return Err("`--args` reads more of its options from a file descriptor".into());
        }
        if !word.starts_with('-') {
            break;
        }
        let Some((_, takes)) = BWRAP.iter().find(|(name, _)| *name == word.as_str()) else {
            return Err(format!(
                "option `{}` is not one this gate knows",
                shown(word)
            ));
        };
        if word == "--chdir" {
            dir = args.get(at + 1).cloned();
        }
        if let ("--setenv", Some(name), Some(value)) =
            (word.as_str(), args.get(at + 1), args.get(at + 2))
        {
            settings.push(format!("{name}={value}"));
        }
        // A mount of one place at another (`--bind ~ /tmp/t`): the command's paths are then
        // not the host's, which the gates judge.
        if word.contains("bind")
            && *takes == 2
            && let (Some(source), Some(dest)) = (args.get(at + 1), args.get(at + 2))
            && source.trim_end_matches('/') != dest.trim_end_matches('/')
        {
            return Err(format!(
                "it mounts `{}` at `{}`, so the paths its command names are not the ones this \
                 gate judges",
                shown(source),
                shown(dest)
            ));
        }
        at += 1 + takes;
    }
    if at > args.len() {
        return Err("its last option lacks its values".into());
    }
    let command = Runs::Command(args.get(at..).unwrap_or_default().to_vec());
    Ok((with_settings(settings, command), dir))
}

/// `systemd-run [OPTIONS] [--] CMD`: the command, or with `--shell` `$SHELL`. A service starts
/// in `--working-directory`, or with `-d` here; else in `/`, or the user's home with `--user`
/// (a `--scope` or `--shell` runs here). A unit property that runs a command of its own
/// (`-p ExecStartPre=...`) makes the gate ask.
fn systemd_run(read: &Options) -> Result<Wrapped, String> {
    let properties = [
        "property",
        "path-property",
        "socket-property",
        "timer-property",
    ];
    let mut settings = setenv(read);
    for property in properties.iter().flat_map(|p| read.values(p)) {
        settings.extend(unit_environment(property)?);
    }
    let runs = if !read.rest.is_empty() {
        Runs::Command(read.rest.clone())
    } else if read.has("shell") {
        shell()
    } else {
        nothing()
    };
    let mut chosen: Option<Option<String>> = None;
    for given in &read.given {
        match given.name {
            "working-directory" => chosen = Some(given.value.clone()),
            "same-dir" => chosen = Some(None),
            _ => {}
        }
    }
    let dir = match chosen {
        Some(dir) => dir,
        None if read.has("scope") || read.has("shell") => None,
        None if read.has("user") => Some("~".into()),
        None => Some("/".into()),
    };
    Ok((with_settings(settings, runs), dir))
}

/// What the unit property `property` (`-p NAME=VALUE`) sets in the environment of the command:
/// the assignments of `Environment=` (split as systemd splits them, quotes grouping). An
/// `Exec...=` property runs a command of its own, and `EnvironmentFile=` reads assignments
/// from a file: the gate cannot tell those.
fn unit_environment(property: &str) -> Result<Vec<String>, String> {
    let (name, value) = property.split_once('=').unwrap_or((property, ""));
    let name = name.trim().to_ascii_lowercase();
    if name.starts_with("exec") {
        return Err("a unit property it sets (`Exec...=`) runs a command of its own".into());
    }
    if name == "environmentfile" {
        return Err(
            "its `EnvironmentFile=` sets variables from a file this gate cannot see".into(),
        );
    }
    if name == "environment" {
        return Ok(crate::wrappers::split_words(value, false));
    }
    Ok(Vec::new())
}

/// The `NAME=VALUE` settings of `-E`/`--setenv` (systemd-run, run0); `NAME` alone passes on
/// the caller's value, which the gate judged where it was set.
fn setenv(read: &Options) -> Vec<String> {
    read.values("setenv").map(str::to_owned).collect()
}

/// `runs`, run with the environment variables `settings` (`NAME=value`, as a launcher's
/// option gives them) set: those whose value runs ([`crate::environment`]) put in front of
/// its command as shell assignments are, so that the gates judge them as they judge `NAME=value
/// CMD` (a `true` carries them when what runs is no plain command).
fn with_settings(settings: Vec<String>, runs: Runs) -> Runs {
    let mut risky: Vec<String> = settings
        .into_iter()
        .filter(|s| crate::environment::runs_value(s))
        .collect();
    match runs {
        _ if risky.is_empty() => runs,
        Runs::Command(words) if words.is_empty() => Runs::Command(words),
        Runs::Command(words) => {
            risky.extend(words);
            Runs::Command(risky)
        }
        other => {
            risky.push("true".to_owned());
            together(vec![Runs::Command(risky), other])
        }
    }
}

/// `run0 [OPTIONS] [CMD]`, systemd's `sudo`: the command, or a login shell; started in
/// `--chdir DIR`, else in the user's home when `-u` names one, else here.
fn run0(read: &Options) -> Result<Wrapped, String> {
    let mut settings = setenv(read);
    for property in read.values("property") {
        settings.extend(unit_environment(property)?);
    }
    let dir = read
        .values("chdir")
        .last()
        .map(str::to_owned)
        .or_else(|| home(read.has("user") || read.has("area")));
    Ok((with_settings(settings, command_or_shell(&read.rest)), dir))
}

/// `valgrind [OPTIONS] PROG ARGS`: as its launcher reads them, the program is the first word
/// without a `-` (or the one after `--`); its options are `--name=value` words and the flags
/// `-q`, `-v`, `-d`, `-h`.
fn valgrind(args: &[String]) -> Result<Runs, String> {
    for (at, word) in args.iter().enumerate() {
        match word.as_str() {
            "--" => {
                return Ok(Runs::Command(
                    args.get(at + 1..).unwrap_or_default().to_vec(),
                ));
            }
            "-q" | "-v" | "-d" | "-h" => {}
            w if w.starts_with("--") => {}
            w if w.starts_with('-') => {
                return Err(format!("option `{}` is not one this gate knows", shown(w)));
            }
            _ => return Ok(Runs::Command(args.get(at..).unwrap_or_default().to_vec())),
        }
    }
    Ok(nothing())
}

/// `catchsegv PROG ARGS` (a glibc script): the program; `--help` and `--version` (or a prefix
/// of them) run nothing.
fn catchsegv(args: &[String]) -> Runs {
    let asks = |w: &String| {
        w.len() > 2 && ("--help".starts_with(w.as_str()) || "--version".starts_with(w.as_str()))
    };
    if args.first().is_some_and(asks) {
        return nothing();
    }
    Runs::Command(args.to_vec())
}

/// `dbus-run-session [--config-file=F] [--dbus-daemon=BIN] [--] PROG ARGS`: options compared
/// whole (their value after `=` or in the next word). It starts the bus daemon first: a
/// `--dbus-daemon` program runs too.
fn dbus_run_session(args: &[String]) -> Result<Runs, String> {
    let mut at = 0;
    let mut daemon: Option<String> = None;
    while let Some(word) = args.get(at) {
        match word.as_str() {
            "--" => {
                at += 1;
                break;
            }
            "--help" | "-h" | "-?" | "--version" => return Ok(nothing()),
            "--config-file" => at += 2,
            "--dbus-daemon" => {
                daemon = args.get(at + 1).cloned();
                at += 2;
            }
            w if w.starts_with("--config-file=") => at += 1,
            w if w.starts_with("--dbus-daemon=") => {
                daemon = w.split_once('=').map(|(_, bin)| bin.to_owned());
                at += 1;
            }
            w if w.starts_with('-') => {
                return Err(format!("option `{}` is not one this gate knows", shown(w)));
            }
            _ => break,
        }
    }
    let command = args.get(at..).unwrap_or_default().to_vec();
    if command.is_empty() {
        return Ok(nothing());
    }
    let bus = daemon.map(|bin| {
        let flags = ["--nofork", "--print-address=3", "--session"];
        let mut words = vec![bin];
        words.extend(flags.iter().map(|f| (*f).to_owned()));
        Runs::Command(words)
    });
    Ok(together(
        bus.into_iter().chain([Runs::Command(command)]).collect(),
    ))
}

/// Whether `args` start with `sg`'s and `newgrp`'s `-` or `-l` (a login's environment, in the
/// user's home), and the words after it.
fn login(args: &[String]) -> (bool, &[String]) {
    match args.split_first() {
        Some((first, rest)) if first == "-" || first == "-l" => (true, rest),
        _ => (false, args),
    }
}

/// `sg [-] GROUP [-c] CMD`: shadow's `sg` gives its command word to `sh -c` (words after it are
/// dropped; the gate reads them all, joined); with no command it starts the user's shell.
fn sg(args: &[String]) -> Wrapped {
    let (login, args) = login(args);
    let Some((_group, after)) = args.split_first().filter(|(g, _)| !g.starts_with('-')) else {
        return (nothing(), None); // its usage message
    };
    let after = match after {
        [flag, rest @ ..] if flag == "-c" && !rest.is_empty() => rest,
        _ => after,
    };
    let runs = if after.is_empty() {
        shell()
    } else {
        Runs::Line(after.join(" "))
    };
    (runs, home(login))
}

/// `newgrp [-] [GROUP]`: a new shell, with the group.
fn newgrp(args: &[String]) -> Wrapped {
    let (login, args) = login(args);
    if args.first().is_some_and(|g| g.starts_with('-')) {
        return (nothing(), None);
    }
    (shell(), home(login))
}

/// `script [OPTIONS] [FILE] [-- CMD...]`: the line of `-c`, and the words after `--` joined
/// into a line (util-linux 2.40); else the interactive shell it starts, which reads what it is
/// given on standard input. Its options may come after its file; a `--` that is the value of
/// the option before it makes the gate ask.
fn script(args: &[String]) -> Result<Runs, String> {
    let dashes = args.iter().position(|w| w == "--");
    let before = args.get(..dashes.unwrap_or(args.len())).unwrap_or_default();
    let read = options::permuted(SCRIPT, before)?;
    let taken = read
        .given
        .last()
        .is_some_and(|g| g.value.is_none() && SCRIPT_VALUED.contains(&g.name));
    if taken && dashes.is_some() {
        return Err("a `--` is the value of its last option, or ends its options".into());
    }
    let mut lines: Vec<Runs> = read
        .values("command")
        .map(|line| Runs::Line(line.to_owned()))
        .collect();
    if let Some(at) = dashes {
        let words = args.get(at + 1..).unwrap_or_default();
        lines.push(Runs::Line(words.join(" ")));
    }
    if lines.is_empty() {
        return Ok(shell());
    }
    Ok(together(lines))
}

/// `text` as a reason may quote it: on one line, at most 60 characters.
pub(crate) fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(60)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(60).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn namespace_and_privilege_tools_run_their_command() {
        assert_eq!(runs("unshare -r rm -rf ~"), command("rm -rf ~"));
        assert_eq!(
            runs("unshare --map-root-user --mount-proc -fp rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("unshare -U"), command("sh"));
        assert_eq!(dir("unshare -w /etc rm -rf x"), Some("/etc".into()));
        assert!(asks("unshare --frobnicate rm -rf ~"));
        assert_eq!(runs("unshare -n ls"), command("ls"));

        assert_eq!(
            runs("nsenter -t 1 -m -u -i -n -p rm -rf /"),
            command("rm -rf /")
        );
        assert_eq!(runs("nsenter --target=1 --mount"), command("sh"));
        assert_eq!(dir("nsenter -t 1 -w rm -rf x"), Some(super::UNSEEN.into()));
        assert!(asks("nsenter -t 1 -x sh"));

        assert_eq!(
            runs("setpriv --reuid=0 --regid=0 --init-groups rm -rf ~"),
            command("rm -rf ~")
        );
        assert!(asks("setpriv --frob rm"));
        assert_eq!(runs("setpriv --no-new-privs ls"), command("ls"));

        assert_eq!(runs("sg wheel -c 'rm -rf ~'"), line("rm -rf ~"));
        assert_eq!(runs("sg wheel rm -rf ~"), line("rm -rf ~"));
        assert_eq!(runs("sg wheel"), command("sh"));
        assert_eq!(dir("sg - wheel id"), Some("~".into()));
        assert_eq!(runs("sg -x wheel"), nothing());
        assert_eq!(runs("newgrp docker"), command("sh"));

        assert_eq!(runs("run0 rm -rf /etc"), command("rm -rf /etc"));
        assert_eq!(runs("run0 -u bob"), command("sh"));
        assert_eq!(dir("run0 -u bob ls"), Some("~".into()));
        assert_eq!(dir("run0 -D /srv ls"), Some("/srv".into()));
        assert!(asks("run0 --frob ls"));
    }

    #[test]
    fn resource_limiters_run_their_command() {
        assert_eq!(runs("prlimit --nofile=1024 rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("prlimit -n1024 -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("prlimit --pid 1 --nofile=10"), nothing());
        assert!(asks("prlimit --frob rm"));

        assert_eq!(
            runs("numactl --interleave=all rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("numactl -N 0 -m 0 make"), command("make"));
        assert!(asks("numactl -Q 0 rm"));

        assert_eq!(runs("nocache -n 2 rm -rf ~"), command("rm -rf ~"));
        assert!(asks("nocache -x rm"));
        assert_eq!(runs("nocache cp a b"), command("cp a b"));

        assert_eq!(runs("cpulimit -l 50 -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("cpulimit -l 50 reboot"), command("reboot"));
        assert_eq!(runs("cpulimit --limit 50 -- make -j4"), command("make -j4"));
        assert_eq!(runs("cpulimit -p 1234 -l 50"), nothing());
        assert!(
            asks("cpulimit -l 50 rm -rf ~"),
            "without --, its options may be taken"
        );
        assert!(
            asks("cpulimit -l50 -- rm -rf ~"),
            "a value attached is counted apart"
        );
        assert!(asks("cpulimit -x -- rm"));
    }

    #[test]
    fn environment_fakers_run_their_command() {
        assert_eq!(
            runs("faketime '2020-01-01 00:00:00' rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("faketime -f '+2d' make"), command("make"));
        assert_eq!(runs("faketime -m -p 12 @1 date"), command("date"));
        assert_eq!(runs("faketime --version"), nothing());
        assert_eq!(
            runs("faketime --date-prog ./d now ls"),
            all(vec![command("./d -d '$(...)' +%s"), command("ls")])
        );

        assert_eq!(runs("fakeroot -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(
            runs("fakeroot -u dpkg-deb -b pkg"),
            command("dpkg-deb -b pkg")
        );
        assert_eq!(runs("fakeroot"), command("sh"));
        assert_eq!(
            runs("fakeroot -f 'rm -rf ~;' true"),
            all(vec![line("rm -rf ~;"), command("true")])
        );
        assert!(asks("fakeroot -z make"));

        assert_eq!(
            runs("proxychains4 -q -f /etc/p.conf rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("proxychains curl x"), command("curl x"));
        assert!(asks("proxychains4 -x curl"));
        assert!(asks("proxychains4 -q -q -q curl"));

        assert_eq!(runs("torsocks -i rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("torsocks --user u --pass p curl x"), command("curl x"));
        assert_eq!(runs("torsocks on"), nothing());
        assert_eq!(runs("torsocks --shell"), command("sh"));
        assert!(asks("torsocks --user=u curl"));
    }

    #[test]
    fn sandboxes_run_their_command() {
        // Variables whose value runs, set by the launcher's options, are judged too.
        assert_eq!(
            runs("firejail --env=PAGER='rm -rf ~' --quiet git log"),
            command("PAGER='rm -rf ~' git log")
        );
        assert_eq!(
            runs("firejail --env=LANG=C -c 'git log'"),
            line("git log"),
            "a variable that runs nothing is not kept"
        );
        assert_eq!(
            runs("firejail --env=BASH_ENV=./x -c 'true'"),
            all(vec![command("BASH_ENV=./x true"), line("true")])
        );
        assert_eq!(
            runs("bwrap --setenv GIT_SSH_COMMAND 'rm -rf ~' --ro-bind / / git fetch"),
            command("GIT_SSH_COMMAND='rm -rf ~' git fetch")
        );
        assert!(asks("bwrap --dev-bind / / --bind ~ /tmp/t rm -rf /tmp/t"));
        assert!(
            !asks("bwrap --ro-bind /usr /usr --bind /work /work/ ls"),
            "same places"
        );
        assert_eq!(
            runs("firejail --noprofile --private=/tmp/x rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("firejail --net=none -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("firejail -c 'rm -rf ~'"), line("rm -rf ~"));
        assert_eq!(runs("firejail --private"), command("sh"));
        assert!(asks("firejail --profile=/tmp/p git log"));
        assert!(asks("firejail --include=x.inc git log"));
        assert!(asks("firejail --profile=$P git log"));
        assert!(asks("firejail --profile=git git log"));
        assert_eq!(runs("firejail --noprofile git log"), command("git log"));
        assert!(asks("firejail -x ls"));

        assert_eq!(
            runs("bwrap --bind / / --setenv A B --chmod 0700 /x --dev /dev rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(
            runs("bwrap --ro-bind /usr /usr --overlay a b /c -- rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(
            dir("bwrap --bind / / --chdir /etc rm -rf x"),
            Some("/etc".into())
        );
        assert!(asks("bwrap --args 3 ls"));
        assert!(asks("bwrap --frob ls"));
        assert!(asks("bwrap --bind /"));
        assert_eq!(runs("bwrap --ro-bind / / ls -la"), command("ls -la"));
    }

    #[test]
    fn service_and_session_starters_run_their_command() {
        assert_eq!(
            runs("systemd-run -E EDITOR='rm -rf ~' --scope git commit"),
            command("EDITOR='rm -rf ~' git commit")
        );
        assert_eq!(
            runs("systemd-run --user -p 'Environment=\"GIT_SSH_COMMAND=rm -rf ~\" A=1' git fetch"),
            command("GIT_SSH_COMMAND='rm -rf ~' git fetch")
        );
        assert!(asks("systemd-run -p EnvironmentFile=./e git log"));
        assert!(asks("run0 --property=ExecStartPre=/bin/x ls"));
        assert_eq!(
            runs("run0 --setenv=HOME=/tmp/h git status"),
            command("HOME=/tmp/h git status")
        );
        assert_eq!(
            runs("systemd-run --setenv=PAGER --scope git log"),
            command("git log"),
            "the caller's value"
        );
        assert_eq!(
            runs("systemd-run --user -p MemoryMax=1G rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("systemd-run --scope -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("systemd-run --shell"), command("sh"));
        assert_eq!(dir("systemd-run rm -rf etc"), Some("/".into()));
        assert_eq!(dir("systemd-run --user rm -rf x"), Some("~".into()));
        assert_eq!(dir("systemd-run -d rm -rf x"), None);
        assert_eq!(
            dir("systemd-run --working-directory=/srv rm x"),
            Some("/srv".into())
        );
        assert!(asks("systemd-run -p 'ExecStartPre=/bin/rm -rf /' true"));
        assert!(asks("run0 --property=ExecStartPost='/bin/rm -rf /' true"));
        assert!(asks("systemd-run --frob ls"));

        assert_eq!(runs("dbus-run-session -- rm -rf ~"), command("rm -rf ~"));
        assert_eq!(
            runs("dbus-run-session --config-file=x.conf gnome-shell"),
            command("gnome-shell")
        );
        assert_eq!(
            runs("dbus-run-session --dbus-daemon=./d ls"),
            all(vec![
                command("./d --nofork --print-address=3 --session"),
                command("ls")
            ])
        );
        assert!(asks("dbus-run-session --frob ls"));

        assert_eq!(
            runs("xvfb-run -a -s '-screen 0 1x1x8' rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(runs("xvfb-run --server-num=5 -- pytest"), command("pytest"));
        assert!(asks("xvfb-run -Z pytest"));

        assert_eq!(runs("script -qc 'rm -rf ~' /dev/null"), line("rm -rf ~"));
        assert_eq!(runs("script --command='rm -rf ~' log"), line("rm -rf ~"));
        assert_eq!(runs("script log -- rm -rf ~"), line("rm -rf ~"));
        assert_eq!(runs("script -q log"), command("sh"));
        assert!(asks("script -c -- rm"));
        assert!(asks("script -Z"));
    }

    #[test]
    fn debuggers_run_their_program() {
        assert_eq!(
            runs("valgrind --tool=memcheck -q rm -rf ~"),
            command("rm -rf ~")
        );
        assert_eq!(
            runs("valgrind --leak-check=full ./a.out x"),
            command("./a.out x")
        );
        assert_eq!(runs("valgrind -- rm -rf ~"), command("rm -rf ~"));
        assert!(asks("valgrind -z ls"));
        assert_eq!(runs("catchsegv rm -rf ~"), command("rm -rf ~"));
        assert_eq!(runs("catchsegv --help"), nothing());
    }
}
