//! Ordinary programs whose options or scripts run a command (GTFOBins' "command" and "shell"
//! functions): `tar --to-command`, `--checkpoint-action=exec=`, `-I`, `-F`; `rsync -e`,
//! `--rsync-path`; `git -c core.sshCommand=...` and the settings like it, `clone -u`, `push
//! --receive-pack`, `rebase -x`; `zip -TT`; `sed`'s `e` command and `s///e`; `awk`'s `system()`
//! and pipes; `vim -c '!...'`. [`runs`] reads only what makes such a program run a command and
//! answers `None` for every other use (`tar czf x.tgz dir`, `git push`, `sed -i 's/a/b/' f`),
//! so that those read as before: as the program itself. A command given whole is read as the
//! line or command it is; one that would run later, or that the gate cannot see (a script file,
//! a git setting that names a command), is [`Runs::Unknown`], and the gates ask.
//!
//! Most of these programs take long options abbreviated (GNU `getopt_long`, `argp`, git's
//! parse-options): a prefix of an option's name of at least the letters that tell it from the
//! program's other options is read as the option. Values of options that do
//! not run a command are not skipped, so a value that looks like one of these options makes the
//! gate ask rather than pass.
//!

use crate::launchers::shown;
use crate::options::{Wanted, scan};
use crate::scripts;
use crate::wrappers::{Runs, UNSEEN, Wrapped, split_words, together};

/// `tar`'s options that run a command (GNU tar 1.35: `argp`, which takes a prefix that names
/// one option only; `--checkpoint`, a whole option, is no prefix of `--checkpoint-action`).
const TAR: &[Wanted] = &[
    Wanted::new("to-command", 4, None),
    Wanted::new("checkpoint-action", 11, None),
    Wanted::new("use-compress-program", 3, Some('I')),
    Wanted::new("info-script", 3, Some('F')),
    Wanted::new("new-volume-script", 4, None),
    Wanted::new("rsh-command", 2, None),
    Wanted::new("rmt-command", 2, None),
    Wanted::new("set-mtime-command", 11, None),
];

/// `tar`'s letters that take a value: in a cluster the rest of it, else the next word; in the
/// old style (`tar cfI x.tar prog`), the words after the cluster, in order.
const TAR_VALUED: &str = "bCfFgHIKLNTVX";

/// The options of `specs` found among `tar`'s `args`, as [`scan`] finds them, after the old
/// style's first word (a cluster without a `-`, whose letters that take a value take the
/// words after it, in order: `tar xzfC x.tgz dir`).
pub(crate) fn tar_scan(args: &[String], specs: &[Wanted]) -> Vec<(usize, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = args;
    if let Some(first) = args.first().filter(|w| !w.starts_with('-')) {
        let mut used = 1;
        for letter in first.chars() {
            let which = specs.iter().position(|s| s.short == Some(letter));
            let value = TAR_VALUED.contains(letter).then(|| {
                used += 1;
                args.get(used - 1).cloned()
            });
            found.extend(which.map(|w| (w, value.flatten())));
        }
        rest = args.get(used.min(args.len())..).unwrap_or_default();
    }
    found.extend(scan(rest, specs, TAR_VALUED));
    found
}

/// `rsync`'s options that run a command (popt, which takes no abbreviations).
const RSYNC: &[Wanted] = &[
    Wanted::new("rsh", 3, Some('e')),
    Wanted::new("rsync-path", 10, None),
    Wanted::new("remote-option", 13, Some('M')),
];

/// `rsync`'s letters that take a value.
const RSYNC_VALUED: &str = "@fBeTM";

/// `git`'s options before its subcommand that take no value (git.c compares each whole).
const GIT_FLAGS: &[&str] = &[
    "--html-path",
    "--man-path",
    "--info-path",
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-lazy-fetch",
    "--no-replace-objects",
    "--bare",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
];

/// `git`'s options before its subcommand that take the next word (`-c` and `--config-env` are
/// read apart).
const GIT_VALUED: &[&str] = &[
    "--git-dir",
    "--namespace",
    "--work-tree",
    "--shallow-file",
    "-C",
    "--attr-source",
];

/// Why `--git-dir` (as `GIT_DIR`) makes the gates ask.
const GIT_DIR_UNSEEN: &str = "its --git-dir names a repository whose configuration (hooks, core.fsmonitor) may run \
     commands this gate cannot see";

/// `git`'s options before its subcommand given as `--name=value`.
const GIT_ATTACHED: &[&str] = &[
    "--git-dir=",
    "--namespace=",
    "--work-tree=",
    "--attr-source=",
    "--list-cmds=",
];

/// Sections of git's configuration any of whose settings may name a command git runs, or
/// more configuration (`alias.x=!cmd`, `credential.helper`, `filter.x.smudge`, `include.path`,
/// `protocol.ext.allow`, `safe.directory`, which lets another user's repository configure it).
const GIT_RISKY_SECTIONS: &[&str] = &[
    "alias",
    "browser",
    "credential",
    "difftool",
    "filter",
    "gpg",
    "help",
    "hook",
    "imap",
    "include",
    "includeif",
    "instaweb",
    "man",
    "mergetool",
    "pager",
    "protocol",
    "safe",
    "sendemail",
    "tar",
    "trailer",
    "uploadpack",
];

/// Git settings, by section and last name, that name a command git runs (or where it finds
/// its hooks or templates).
const GIT_RISKY_KEYS: &[(&str, &str)] = &[
    ("core", "sshcommand"),
    ("core", "pager"),
    ("core", "editor"),
    ("core", "fsmonitor"),
    ("core", "hookspath"),
    ("core", "gitproxy"),
    ("core", "askpass"),
    ("core", "alternaterefscommand"),
    ("diff", "external"),
    ("diff", "command"),
    ("diff", "textconv"),
    ("merge", "driver"),
    ("sequence", "editor"),
    ("interactive", "difffilter"),
    ("init", "templatedir"),
    ("submodule", "update"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
    ("remote", "vcs"),
    ("web", "browser"),
];

// Options of git's subcommands: parse-options takes a prefix that names one option; a prefix
// of two letters that names several is an error to git, and makes the gate ask.

/// `--upload-pack=CMD` (`clone`, `fetch`, `pull`, `ls-remote`, `fetch-pack`).
const GIT_UPLOAD_PACK: Wanted = Wanted::new("upload-pack", 2, None);
/// `--exec=CMD` (`push`, `send-pack`, `archive`, `ls-remote`, `fetch-pack`).
const GIT_EXEC: Wanted = Wanted::new("exec", 2, None);
/// `--receive-pack=CMD` (`push`, `send-pack`).
const GIT_RECEIVE_PACK: Wanted = Wanted::new("receive-pack", 2, None);
/// `--template=DIR` (`clone`, `init`): the hooks it copies in run later.
const GIT_TEMPLATE: Wanted = Wanted::new("template", 2, None);
/// `--ext-diff`, of every command that shows a diff.
const GIT_EXT_DIFF: &[Wanted] = &[Wanted::new("ext-diff", 3, None)];
/// `clone`'s `-u`/`--upload-pack`, `--template` and `-c`/`--config`.
const GIT_CLONE: &[Wanted] = &[
    Wanted::new("upload-pack", 2, Some('u')),
    GIT_TEMPLATE,
    Wanted::new("config", 2, Some('c')),
];
/// `send-email`'s options that name a command, and `--smtp-server`, which may name a program.
const GIT_SEND_EMAIL: &[Wanted] = &[
    Wanted::new("to-cmd", 4, None),
    Wanted::new("cc-cmd", 4, None),
    Wanted::new("header-cmd", 8, None),
    Wanted::new("sendmail-cmd", 10, None),
    Wanted::new("smtp-server", 11, None),
];

/// What the program called `name` (a base name) runs through its options, given `args`, and
/// where; `None` when none of its options here runs a command, so that it reads as the
/// program it is.
pub fn runs(name: &str, args: &[String]) -> Option<(Runs, Option<String>)> {
    let found: Result<Option<Wrapped>, String> = match name {
        "tar" | "gtar" => tar(args),
        "rsync" => rsync(args),
        "git" => git(args),
        "cargo" => cargo(args).map(|()| None),
        "zip" => Ok(zip(args)),
        "scp" | "sftp" => crate::ssh::copy(name, args),
        "sed" | "gsed" => scripts::sed(args),
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => scripts::awk(args),
        n if scripts::VIMS.contains(&n) => scripts::vim(name, args).map(|()| None),
        _ => return None,
    };
    match found {
        Ok(found) => found,
        Err(why) => Some((Runs::Unknown(format!("`{name}`: {why}")), None)),
    }
}

/// cargo's settings that name a program it runs or configuration the gate cannot see, by
/// their dotted keys (`*` any one part): runners, linkers, the compiler and its wrappers,
/// credential providers, the browser of `doc --open`, included files.
const CARGO_RISKY_KEYS: &[&[&str]] = &[
    &["target", "*", "runner"],
    &["target", "*", "linker"],
    &["host", "linker"],
    &["host", "*", "linker"],
    &["build", "rustc"],
    &["build", "rustc-wrapper"],
    &["build", "rustc-workspace-wrapper"],
    &["build", "rustdoc"],
    &["doc", "browser"],
    &["credential-provider"],
    &["registry", "credential-provider"],
    &["registry", "global-credential-providers"],
    &["registries", "*", "credential-provider"],
    &["include"],
];

/// `cargo --config KEY=VALUE` (or `--config=`, anywhere before `--`, as cargo takes it
/// after its subcommand too): a setting among [`CARGO_RISKY_KEYS`] (or a table holding one,
/// `target.x={runner="..."}`), one of `env.NAME` for a variable whose value runs (cargo sets it
/// for what it runs), or a configuration file (a value without `=`) is unclear. Other settings
/// (`profile.release.debug=true`) pass.
fn cargo(args: &[String]) -> Result<(), String> {
    let settings = scan(args, &[Wanted::new("config", 6, None)], "");
    for (_, setting) in settings {
        let setting = setting.unwrap_or_default();
        let Some((key, value)) = toml_setting(&setting) else {
            return Err(format!(
                "its --config `{}` names a configuration file, which this gate cannot see",
                shown(&setting)
            ));
        };
        let parts: Vec<String> = toml_key(key)
            .into_iter()
            .map(|p| p.to_ascii_lowercase().replace('_', "-"))
            .collect();
        // A quoted part may hold escapes (`"\u0072unner"`), which this gate does not decode.
        let escaped = parts.iter().any(|p| p.contains('\\'));
        let table = value.trim_start().starts_with('{');
        let risky = CARGO_RISKY_KEYS.iter().any(|pattern| {
            let matching = pattern.iter().zip(&parts).all(|(p, k)| *p == "*" || p == k);
            matching && (pattern.len() == parts.len() || table && pattern.len() > parts.len())
        });
        let sets_judged = match parts.as_slice() {
            [env] => env == "env" && table,
            [env, name, ..] => {
                env == "env"
                    && crate::environment::runs_value(&format!(
                        "{}=",
                        name.to_ascii_uppercase().replace('-', "_")
                    ))
            }
            _ => false,
        };
        if risky || sets_judged || escaped {
            return Err(format!(
                "its setting `{}` names a program (or configuration) that cargo runs when it \
                 needs it, which this gate does not follow",
                shown(key.trim())
            ));
        }
    }
    Ok(())
}

/// A `--config` setting split at its first `=` outside quotes (`target."cfg(unix)".runner`
/// holds dots and may hold `=`); `None` when it has none (a file's name).
fn toml_setting(setting: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    for (at, c) in setting.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '=') => return Some((setting.get(..at)?, setting.get(at + 1..)?)),
            _ => {}
        }
    }
    None
}

/// The parts of a dotted TOML key, unquoted (`target."x.y".runner` is three).
fn toml_key(key: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote = None;
    for c in key.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '.') => parts.push(String::new()),
            (None, c) if c.is_whitespace() => {}
            (_, c) => {
                if let Some(last) = parts.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    parts
}

/// `tar`: `--to-command=CMD` (each file extracted is piped to it), `--checkpoint-action=exec=CMD`,
/// `-I`/`--use-compress-program=PROG`, `-F`/`--info-script`/`--new-volume-script=CMD` and tar
/// 1.35's `--set-mtime-command=CMD` are lines tar gives `/bin/sh -c`; `--rmt-command` is a
/// line the remote shell runs; `--rsh-command=PROG` is a program run with the remote host and
/// `/etc/rmt` (whose host the gate does not follow).
fn tar(args: &[String]) -> Result<Option<Wrapped>, String> {
    let found = tar_scan(args, TAR);
    let mut parts = Vec::new();
    for (which, value) in found {
        let option = TAR.get(which).map_or("", |s| s.long);
        let Some(value) = value else {
            return Err(format!("its --{option} has no value"));
        };
        parts.push(match option {
            "checkpoint-action" => match value.strip_prefix("exec") {
                Some(command) => {
                    Runs::Line(tar_unquoted(command.strip_prefix('=').unwrap_or(command))?)
                }
                None => continue, // bell, dot, echo, sleep, totals, ttyout, wait
            },
            "rsh-command" => Runs::Command(vec![value, UNSEEN.into(), "/etc/rmt".into()]),
            _ => Runs::Line(value),
        });
    }
    Ok((!parts.is_empty()).then(|| (together(parts), None)))
}

/// The command of `--checkpoint-action=exec=COMMAND` as tar reads it: tar takes one pair of
/// quotes around it away (`exec="rm -rf ~"` runs `rm -rf ~`) and undoes backslash escapes
/// (`\040` is a space), which the gate does not follow: a command with a quote or a backslash
/// left asks.
fn tar_unquoted(command: &str) -> Result<String, String> {
    let inner = ['"', '\'']
        .iter()
        .find_map(|q| command.strip_prefix(*q).and_then(|c| c.strip_suffix(*q)))
        .unwrap_or(command);
    if inner.contains(['"', '\'', '\\']) {
        return Err(format!(
            "its --checkpoint-action command `{}` is unquoted by tar as this gate does not follow",
            shown(command)
        ));
    }
    Ok(inner.to_owned())
}

/// `rsync`: `-e`/`--rsh=CMD` is the remote shell it runs, its words split by rsync (quotes
/// group), given the host (which the gate does not follow) and the remote rsync's line:
/// `--rsync-path`'s (say `sudo rsync`), else `rsync`, and `--server`. `--rsync-path` alone
/// goes through `ssh`. `-M`/`--remote-option` hands options to the remote rsync, which the
/// gate does not read.
fn rsync(args: &[String]) -> Result<Option<Wrapped>, String> {
    let found = scan(args, RSYNC, RSYNC_VALUED);
    if found.is_empty() {
        return Ok(None);
    }
    let (mut shell, mut path) = (None, None);
    for (which, value) in found {
        let option = RSYNC.get(which).map_or("", |s| s.long);
        let Some(value) = value else {
            return Err(format!("its --{option} has no value"));
        };
        match option {
            "rsh" => {
                shell = Some(split_words(
                    value.strip_prefix('=').unwrap_or(&value),
                    false,
                ))
            }
            "rsync-path" => path = Some(value),
            _ => {
                return Err(
                    "it hands options (-M) to the rsync it starts on the other side, which this \
                     gate does not read"
                        .into(),
                );
            }
        }
    }
    let mut words = shell.unwrap_or_else(|| vec!["ssh".to_owned()]);
    if words.is_empty() {
        return Err("its -e names no program".into());
    }
    words.push(UNSEEN.to_owned());
    words.push(path.unwrap_or_else(|| "rsync".to_owned()));
    words.push("--server".to_owned());
    words.push(".".to_owned());
    Ok(Some((Runs::Command(words), None)))
}

/// Whether the git setting `key` (`section.name` or `section.subsection.name`) may name a
/// command git runs, or more configuration: by [`GIT_RISKY_SECTIONS`] and
/// [`GIT_RISKY_KEYS`], sections and names whatever their case.
fn git_risky_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let name = rest.rsplit('.').next().unwrap_or(rest);
    GIT_RISKY_SECTIONS.contains(&section) || GIT_RISKY_KEYS.contains(&(section, name))
}

/// Values of a pager or editor setting that run nothing but a pager (or nothing at all):
/// `git -c core.pager=cat log`, `-c pager.log=false`, as agents write them.
const HARMLESS_PAGERS: &[&str] = &["", "cat", "true", "false", "less", "less -R", "more"];

/// Whether `key=value` is a pager or editor setting with a [`HARMLESS_PAGERS`] value.
fn harmless_pager(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let pager = matches!(
        key.as_str(),
        "core.pager" | "core.editor" | "sequence.editor"
    ) || key.starts_with("pager.");
    pager && HARMLESS_PAGERS.contains(&value.trim())
}

/// An error when `setting` (`key=value`, or `key`, as `-c` and `--config-env` give one) is a
/// risky one ([`git_risky_key`]): the command it names runs later, when git needs it.
fn git_setting(setting: Option<&str>) -> Result<(), String> {
    let (key, value) = setting
        .unwrap_or_default()
        .split_once('=')
        .unwrap_or((setting.unwrap_or_default(), ""));
    if git_risky_key(key) && !harmless_pager(key, value) {
        return Err(format!(
            "its setting `{}` names a command (or configuration) that git runs when it needs it, \
             which this gate does not follow",
            shown(key)
        ));
    }
    Ok(())
}

/// `git`: its own options first (each compared whole, as git.c does; one it does not take is
/// an error), then the subcommand's ([`git_subcommand`]). `-c KEY=VALUE` and `--config-env`
/// with a key that names a command make the gate ask; so does `--exec-path=DIR`, where git
/// then finds its own commands. What the gate cannot read is one part of what runs, beside
/// what it can: `git -c core.pager=P rebase -x CMD` still runs CMD.
fn git(args: &[String]) -> Result<Option<Wrapped>, String> {
    let mut unclear = Vec::new();
    // `ext::CMD` as a remote runs CMD (when `protocol.ext.allow` lets it).
    if let Some(url) = args.iter().find(|a| a.contains("ext::")) {
        unclear.push(format!(
            "`{}` names a remote that runs a command",
            shown(url)
        ));
    }
    let mut at = 0;
    while let Some(word) = args.get(at).filter(|w| w.starts_with('-')) {
        let w = word.as_str();
        match w {
            "--help" | "-h" | "--version" | "-v" | "--exec-path" => return Ok(None),
            "-c" | "--config-env" => {
                unclear.extend(git_setting(args.get(at + 1).map(String::as_str)).err());
                at += 2;
            }
            _ if GIT_FLAGS.contains(&w) => at += 1,
            "--git-dir" => {
                unclear.push(GIT_DIR_UNSEEN.into());
                at += 2;
            }
            _ if w.starts_with("--git-dir=") => {
                unclear.push(GIT_DIR_UNSEEN.into());
                at += 1;
            }
            _ if GIT_VALUED.contains(&w) => at += 2,
            _ if w.starts_with("--config-env=") => {
                let setting = w.split_once('=').map(|(_, setting)| setting);
                unclear.extend(git_setting(setting).err());
                at += 1;
            }
            _ if GIT_ATTACHED.iter().any(|p| w.starts_with(p)) => at += 1,
            _ if w.starts_with("--exec-path=") => {
                unclear.push(
                    "its --exec-path= makes it run its own commands from a directory this gate \
                     cannot see"
                        .into(),
                );
                at += 1;
            }
            _ => return Err(format!("option `{}` is not one this gate knows", shown(w))),
        }
    }
    let found = match args.get(at..).unwrap_or_default().split_first() {
        Some((subcommand, rest)) => git_subcommand(subcommand, rest),
        None => Ok(None),
    };
    if unclear.is_empty() {
        return found;
    }
    let (runs, dir) = match found {
        Ok(found) => found.unwrap_or((Runs::Command(Vec::new()), None)),
        Err(why) => (Runs::Unknown(format!("`git`: {why}")), None),
    };
    let mut parts: Vec<Runs> = unclear
        .into_iter()
        .map(|why| Runs::Unknown(format!("`git`: {why}")))
        .collect();
    parts.push(runs);
    Ok(Some((together(parts), dir)))
}

/// The values `scan` finds of the one option `spec` among `args`.
fn values_of(args: &[String], spec: Wanted, valued: &str) -> Vec<Option<String>> {
    scan(args, &[spec], valued)
        .into_iter()
        .map(|(_, value)| value)
        .collect()
}

/// `value` of `option`, or the error of an option given none.
fn given(value: Option<String>, option: &str) -> Result<String, String> {
    value.ok_or_else(|| format!("its --{option} has no value"))
}

/// A git subcommand's options that run a command: `--upload-pack` (`clone -u`; `fetch`, `pull`,
/// `ls-remote`, `fetch-pack`), `--receive-pack`/`--exec` (`push`, `send-pack`), `--exec`
/// (`archive`): lines git gives a shell here (or the remote shell), with the repository's path
/// after them. `rebase -x CMD`, `difftool -x CMD`, `grep -O CMD`, `bisect run CMD`, `submodule
/// foreach CMD` run their command. `clone --template`, `init --template`, a risky `clone -c`,
/// `config` setting a risky key, `--ext-diff`, `filter-branch`'s filters, `send-email`'s
/// `--*-cmd` and the like make the gate ask.
fn git_subcommand(subcommand: &str, rest: &[String]) -> Result<Option<Wrapped>, String> {
    let line_with_path = |command: String| Runs::Line(format!("{command} {UNSEEN}"));
    let mut parts = Vec::new();
    if !scan(rest, GIT_EXT_DIFF, "").is_empty() {
        parts.push(Runs::Unknown(
            "`git`: its --ext-diff runs the diff command its configuration names".into(),
        ));
    }
    match subcommand {
        "clone" => {
            let unclear = |why: String| Runs::Unknown(format!("`git`: {why}"));
            for (which, value) in scan(rest, GIT_CLONE, "objc") {
                match which {
                    0 => parts.push(line_with_path(given(value, "upload-pack")?)),
                    1 => parts.push(unclear(
                        "its --template copies in hooks, which run later".into(),
                    )),
                    _ => parts.extend(git_setting(value.as_deref()).err().map(unclear)),
                }
            }
        }
        "fetch" | "pull" | "ls-remote" | "fetch-pack" => {
            for value in values_of(rest, GIT_UPLOAD_PACK, "") {
                parts.push(line_with_path(given(value, "upload-pack")?));
            }
            if subcommand == "ls-remote" || subcommand == "fetch-pack" {
                for value in values_of(rest, GIT_EXEC, "") {
                    parts.push(line_with_path(given(value, "exec")?));
                }
            }
        }
        "push" | "send-pack" => {
            for spec in [GIT_RECEIVE_PACK, GIT_EXEC] {
                for value in values_of(rest, spec, "") {
                    parts.push(line_with_path(given(value, "receive-pack")?));
                }
            }
        }
        "archive" => {
            for value in values_of(rest, GIT_EXEC, "o") {
                parts.push(line_with_path(given(value, "exec")?));
            }
        }
        "rebase" => {
            let exec = Wanted::new("exec", 2, Some('x'));
            for value in values_of(rest, exec, "sX") {
                parts.push(Runs::Line(given(value, "exec")?));
            }
        }
        "difftool" => {
            let extcmd = Wanted::new("extcmd", 2, Some('x'));
            for value in values_of(rest, extcmd, "t") {
                let command = given(value, "extcmd")?;
                parts.push(Runs::Line(format!("{command} {UNSEEN} {UNSEEN}")));
            }
        }
        "grep" => {
            // `-O[PAGER]`, `--open-files-in-pager[=PAGER]`: the value only attached.
            let opens = |name: &str| name.len() >= 2 && "open-files-in-pager".starts_with(name);
            for word in rest.iter().take_while(|w| *w != "--") {
                let pager = match word.strip_prefix("--") {
                    Some(long) => long
                        .split_once('=')
                        .filter(|(name, _)| opens(name))
                        .map(|(_, pager)| pager),
                    None => word.strip_prefix("-O").filter(|p| !p.is_empty()),
                };
                parts.extend(pager.map(|p| line_with_path(p.to_owned())));
            }
        }
        "bisect" => {
            if let Some((_, command)) = rest.split_first().filter(|(w, _)| *w == "run") {
                return Ok(Some((Runs::Command(command.to_vec()), None)));
            }
        }
        "submodule" => {
            let mut words = rest.iter().skip_while(|w| w.starts_with('-'));
            if words.next().is_some_and(|w| w == "foreach") {
                let flags = ["--recursive", "-q", "--quiet", "--"];
                let command: Vec<&str> = words
                    .skip_while(|w| flags.contains(&w.as_str()))
                    .map(String::as_str)
                    .collect();
                // Each submodule's directory: the gate cannot tell where that is.
                return Ok(Some((
                    Runs::Line(command.join(" ")),
                    Some(UNSEEN.to_owned()),
                )));
            }
        }
        // `--setup`, the filters and `--` options it evals: shell commands.
        "filter-branch" => {
            return Err(
                "it runs shell commands (its filters, --setup) this gate does not follow".into(),
            );
        }
        "config" => {
            // The operands that look like keys (`section.name`): a value (`alias.me@x.org`)
            // is none.
            let looks_like_key = |w: &&String| {
                !w.starts_with('-') && !w.contains(['@', '/', ' ', '=']) && w.contains('.')
            };
            if let Some(key) = rest
                .iter()
                .filter(looks_like_key)
                .find(|w| git_risky_key(w))
            {
                return Err(format!(
                    "it sets or reads `{}`, which names a command git runs when it needs it",
                    shown(key)
                ));
            }
        }
        "init" if !values_of(rest, GIT_TEMPLATE, "b").is_empty() => {
            return Err("its --template copies in hooks, which run later".into());
        }
        "send-email" => {
            for (which, value) in scan(rest, GIT_SEND_EMAIL, "") {
                let program = which == 4 && value.as_deref().is_some_and(|v| v.starts_with('/'));
                if which < 4 || program {
                    return Err("it runs the command its option names to find addresses or \
                                send mail"
                        .into());
                }
            }
        }
        "daemon" | "instaweb" => {
            let hooks = [
                Wanted::new("access-hook", 2, None),
                Wanted::new("httpd", 2, Some('d')),
                Wanted::new("browser", 2, Some('b')),
            ];
            if !scan(rest, &hooks, "lp").is_empty() {
                return Err("it runs the program its option names".into());
            }
        }
        _ => {}
    }
    Ok((!parts.is_empty()).then(|| (together(parts), None)))
}

/// `zip`: `-TT CMD` / `--unzip-command CMD` is the line it runs (through `system()`) to test
/// the archive, with the archive's name in place of `{}` or after it.
fn zip(args: &[String]) -> Option<Wrapped> {
    let mut command: Option<Option<String>> = None;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        if word == "--" {
            break;
        }
        let mut next = || {
            at += 1;
            args.get(at - 1).cloned()
        };
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            if name.len() >= 3 && "unzip-command".starts_with(name) {
                command = Some(attached.or_else(next));
            }
        } else if let Some(letters) = word.strip_prefix('-')
            && let Some(i) = letters.find("TT")
        {
            let rest = letters.get(i + 2..).unwrap_or_default();
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            command = Some(if rest.is_empty() {
                next()
            } else {
                Some(rest.to_owned())
            });
        }
    }
    let command = command?;
    let runs = match command {
        Some(line) if line.contains("{}") => Runs::Line(line.replace("{}", UNSEEN)),
        Some(line) => Runs::Line(format!("{line} {UNSEEN}")),
        None => Runs::Unknown("`zip`: its -TT has no command".into()),
    };
    Some((runs, None))
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn cargo_settings_that_name_a_program_ask() {
        assert!(asks(
            "cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"sudo\"' run"
        ));
        assert!(asks(
            "cargo run --config 'target.\"cfg(target_os=\\\"linux\\\")\".runner=\"x\"'"
        ));
        assert!(asks(
            "cargo build --config 'target.x86_64-unknown-linux-gnu={runner=\"x\"}'"
        ));
        assert!(asks("cargo build --config 'target={x={runner=\"x\"}}'"));
        assert!(asks("cargo build --config host.linker=./ld"));
        assert!(asks("cargo build --config build.rustc_wrapper=./w"));
        assert!(asks(
            "cargo publish --config 'registries.x.credential-provider=\"sh\"'"
        ));
        assert!(asks("cargo doc --open --config doc.browser=x"));
        assert!(asks("cargo build --config include=x.toml"));
        assert!(asks(
            "cargo build --config 'env.GIT_SSH_COMMAND={value=\"x\",force=true}'"
        ));
        assert!(asks("cargo build --config env.git_ssh_command=x"));
        assert!(asks("cargo build --config ../c.toml"));
        assert!(asks(
            "cargo run --config 'target.x86_64-unknown-linux-gnu.\"\\u0072unner\"=\"sudo\"'"
        ));
        assert_eq!(runs("cargo build --config env.RUST_LOG=debug"), None);
        assert_eq!(runs("cargo build --config 'profile.dev.opt-level=3'"), None);
        assert_eq!(runs("cargo run -- --config x"), None);
        assert_eq!(runs("cargo build"), None);
    }

    #[test]
    fn tar_options_that_run_a_command_are_read() {
        assert_eq!(
            runs("tar -xf x.tar --to-command='rm -rf ~'"),
            line("rm -rf ~")
        );
        assert_eq!(runs("tar xf x.tar --to-c 'sudo sh'"), line("sudo sh"));
        assert_eq!(
            runs("tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec='rm -rf ~'"),
            line("rm -rf ~")
        );
        assert_eq!(runs("tar -cf x.tar -I 'rm -rf ~' dir"), line("rm -rf ~"));
        assert_eq!(runs("tar -cIgzip -f x.tar dir"), line("gzip"));
        assert_eq!(runs("tar cIf 'rm -rf ~' x.tar dir"), line("rm -rf ~"));
        assert_eq!(
            runs("tar --use-compress-program=zstd -cf x.tar d"),
            line("zstd")
        );
        assert_eq!(
            runs("tar -cML 1 -F 'rm -rf ~' -f x.tar d"),
            line("rm -rf ~")
        );
        assert_eq!(
            runs("tar -I gzip --to-command=cat -xf x"),
            all(vec![line("gzip"), line("cat")])
        );
        assert!(asks("tar -xf x --to-command"));
        // Ordinary use reads as tar.
        assert_eq!(runs("tar czf x.tgz dir"), None);
        assert_eq!(runs("tar -xzf x.tgz -C /tmp"), None);
        assert_eq!(runs("tar --checkpoint=1000 -cf x.tar d"), None);
        assert_eq!(runs("tar -cf x.tar --checkpoint-action=dot d"), None);
        assert_eq!(
            runs("tar -cf x d --checkpoint-action='exec=\"rm -rf ~\"'"),
            line("rm -rf ~")
        );
        assert!(asks(
            "tar -cf x d --checkpoint-action='exec=rm\\040-rf\\040~'"
        ));
        assert_eq!(runs("tar -xfInstall.tar"), None);
    }

    #[test]
    fn rsync_remote_shells_are_read() {
        assert_eq!(
            runs("rsync -e 'sh -c \"rm -rf ~\"' x:/a b"),
            Some(Runs::Command(words(
                "sh -c 'rm -rf ~' '$(...)' rsync --server ."
            )))
        );
        assert_eq!(
            runs("rsync -avze ssh a/ host:b/"),
            Some(Runs::Command(words("ssh '$(...)' rsync --server .")))
        );
        assert_eq!(
            runs("rsync --rsync-path='sudo rsync' a/ host:b/"),
            Some(Runs::Command(words("ssh '$(...)' 'sudo rsync' --server .")))
        );
        assert!(asks("rsync -M--log-file=x a/ host:b/"));
        assert_eq!(runs("rsync -av a/ b/"), None);
        assert_eq!(runs("rsync -av --exclude=.git --delete a/ b/"), None);
    }

    #[test]
    fn git_settings_and_options_that_run_a_command_are_read() {
        assert!(asks("git -c core.sshCommand='rm -rf ~' fetch"));
        assert!(asks("git -c core.pager=evil log"));
        assert!(asks("git -c alias.x='!rm -rf ~' x"));
        assert!(asks("git -c core.fsmonitor=./x status"));
        assert!(asks("git -c diff.x.textconv=./x diff"));
        assert!(asks("git --config-env=core.editor=EDITOR commit"));
        assert!(asks("git --exec-path=/tmp/x status"));
        assert!(asks("git --frobnicate status"));
        assert!(asks("git config core.hooksPath /tmp/h"));
        assert!(asks("git clone --template=/tmp/t repo"));
        assert!(asks("git clone -c core.fsmonitor=x repo"));
        assert!(asks("git log --ext-diff"));
        assert!(asks("git filter-branch --tree-filter 'rm -rf ~' HEAD"));
        assert!(asks("git filter-branch --setup 'rm -rf ~' HEAD"));
        assert!(asks(
            "git -c tar.tgz.command='rm -rf ~;cat' archive --format=tgz HEAD"
        ));
        assert!(asks(
            "git -c help.autocorrect=immediate rebse -x 'rm -rf ~' HEAD~1"
        ));
        assert!(asks("git ls-remote 'ext::sh -c rm% -rf% ~'"));
        let rm = |p: &Runs| matches!(p, Runs::Line(l) if l.starts_with("rm -rf ~"));
        for line in [
            "git --exec-path=/tmp rebase -x 'rm -rf ~' @~1",
            "git difftool --ext-diff -x 'rm -rf ~'",
            "git --git-dir=./x rebase -x 'rm -rf ~' @~1",
        ] {
            assert!(
                matches!(runs(line), Some(Runs::All(parts)) if parts.iter().any(rm)),
                "{line}"
            );
        }
        // What the gate cannot read sits beside what it can, which is still judged.
        assert_eq!(
            runs("git -c core.pager=x rebase -x 'rm -rf ~' HEAD~1"),
            all(vec![
                Some(Runs::Unknown(
                    "`git`: its setting `core.pager` names a command (or configuration) that git \
                     runs when it needs it, which this gate does not follow"
                        .into()
                )),
                line("rm -rf ~"),
            ])
        );
        assert!(matches!(
            runs("git clone --template=t -u 'rm -rf ~' r"),
            Some(Runs::All(parts)) if parts.contains(&Runs::Line("rm -rf ~ $(...)".into()))
        ));
        assert_eq!(runs("git -c core.pager=cat -c pager.log=false log"), None);
        assert_eq!(runs("git config user.email alias.me@x.org"), None);
        assert!(asks("git config --file .git/config core.fsmonitor ./x"));
        assert_eq!(
            runs("git clone -u 'rm -rf ~;' repo"),
            line("rm -rf ~; $(...)")
        );
        assert_eq!(
            runs("git clone --upload-pack='touch x;' . y"),
            line("touch x; $(...)")
        );
        assert_eq!(
            runs("git fetch --upload-pack 'sudo sh' origin"),
            line("sudo sh $(...)")
        );
        assert_eq!(
            runs("git push --receive-pack='rm -rf ~;' origin"),
            line("rm -rf ~; $(...)")
        );
        assert_eq!(
            runs("git archive --exec='sudo x' --remote=r HEAD"),
            line("sudo x $(...)")
        );
        assert_eq!(runs("git rebase -x 'rm -rf ~' HEAD~2"), line("rm -rf ~"));
        assert_eq!(
            runs("git rebase --exec='make test' main"),
            line("make test")
        );
        assert_eq!(
            runs("git bisect run rm -rf ~"),
            Some(Runs::Command(words("rm -rf ~")))
        );
        assert_eq!(runs("git submodule foreach 'rm -rf ~'"), line("rm -rf ~"));
        assert_eq!(runs("git grep -O'rm -rf' x"), line("rm -rf $(...)"));
        // Ordinary use reads as git.
        assert_eq!(runs("git push"), None);
        assert_eq!(runs("git -c user.name=x commit -m 'rm -rf / is bad'"), None);
        assert_eq!(runs("git -C repo push origin main"), None);
        assert_eq!(runs("git fetch -u origin"), None);
        assert_eq!(runs("git rebase -i HEAD~3"), None);
        assert_eq!(runs("git rebase -Xtheirs main"), None);
        assert_eq!(runs("git log --exclude=x --all"), None);
        assert_eq!(runs("git config user.email a@b"), None);
        assert_eq!(runs("git --version"), None);
    }

    #[test]
    fn zip_test_commands_are_read() {
        assert_eq!(
            runs("zip x.zip f -T -TT 'rm -rf ~ #'"),
            line("rm -rf ~ # $(...)")
        );
        assert_eq!(
            runs("zip x.zip f -T --unzip-command='unzip -t {}'"),
            line("unzip -t $(...)")
        );
        assert_eq!(runs("zip -r a.zip dir"), None);
    }
}
