//! The rules. Each returns the reason for rejecting, or `None`.

use crate::words::{Simple, split};

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

/// Wrappers that run the rest of their arguments as a command.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "nohup", "nice", "ionice", "time", "command", "exec", "builtin", "stdbuf",
    "timeout", "chroot", "unbuffer", "watch", "strace", "ltrace", "su",
];

/// Shells whose `-c STRING` is a command line of its own.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"];

/// Check a shell command line. Returns why it must not run, or `None` when nothing in it is
/// destructive by these rules.
pub fn check_command(line: &str) -> Option<String> {
    check_line(line, 0)
}

fn check_line(line: &str, depth: u32) -> Option<String> {
    if depth > 8 {
        return Some("the command nests shells more than 8 deep; refusing to guess".into());
    }
    if let Some(reason) = fork_bomb(line) {
        return Some(reason);
    }
    split(line)
        .into_iter()
        .find_map(|simple| check_simple(&simple, depth))
}

fn check_simple(simple: &Simple, depth: u32) -> Option<String> {
    for target in &simple.redirects {
        if let Some(reason) = dangerous_write_target(target) {
            return Some(format!("redirecting output to {target}: {reason}"));
        }
    }
    let words = unwrap(&simple.words);
    let (program, args) = words.split_first()?;
    let program = basename(program);
    match program {
        p if SHELLS.contains(&p) => shell_c(args, depth),
        "xargs" => {
            // Everything after xargs' own options is the command it runs on each input.
            let rest: Vec<String> = args
                .iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect();
            check_simple(
                &Simple {
                    words: rest,
                    redirects: vec![],
                },
                depth,
            )
        }
        "find" => find(args, depth),
        "rm" => rm(args),
        "mkfs" | "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "parted" => Some(format!(
            "{program} rewrites a disk or partition table; do that by hand, not through an agent"
        )),
        p if p.starts_with("mkfs.") => Some(format!(
            "{p} formats a filesystem and destroys what was on the device"
        )),
        "dd" => dd(args),
        "shred" => args
            .iter()
            .find(|a| is_disk(a))
            .map(|a| format!("shred onto {a} destroys the disk")),
        "chmod" | "chown" | "chgrp" => recursive_on_system(program, args),
        "tee" => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .find_map(|a| dangerous_write_target(a).map(|r| format!("tee into {a}: {r}"))),
        _ => None,
    }
}

/// Drop wrappers (`sudo`, `env A=b`, `time -p`, `/usr/bin/time`, ...) and return the command they
/// run.
fn unwrap(words: &[String]) -> Vec<String> {
    let mut rest = words;
    loop {
        let Some((first, tail)) = rest.split_first() else {
            return Vec::new();
        };
        let name = basename(first);
        if [
            "{", "}", "!", "if", "then", "else", "elif", "do", "while", "until",
        ]
        .contains(&first.as_str())
        {
            rest = tail; // shell grammar around a command
        } else if first.contains('=') && !first.starts_with('=') && !first.starts_with('-') {
            rest = tail; // VAR=value prefix
        } else if name == "env" {
            rest = skip_options(
                tail,
                &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            );
            if let Some(split_string) = tail.iter().position(|a| a == "-S" || a == "--split-string")
                && let Some(s) = tail.get(split_string + 1)
            {
                let mut joined: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
                joined.extend(tail[split_string + 2..].iter().cloned());
                return unwrap(&joined);
            }
        } else if WRAPPERS.contains(&name) {
            let skip_value: &[&str] = match name {
                "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
                "nice" => &["-n", "--adjustment"],
                "ionice" => &["-c", "-n", "-p"],
                "stdbuf" => &["-i", "-o", "-e"],
                "time" => &["-f", "--format", "-o", "--output"],
                "timeout" => &["-s", "--signal", "-k", "--kill-after"],
                "watch" => &["-n", "--interval", "-d"],
                "strace" | "ltrace" => &["-e", "-o", "-p", "-s"],
                "su" => &["-s", "--shell", "-g", "-G"],
                _ => &[],
            };
            let mut after = skip_options(tail, skip_value);
            if name == "timeout" {
                after = after.get(1..).unwrap_or_default(); // the duration
            }
            if name == "chroot" {
                after = after.get(1..).unwrap_or_default(); // the new root
            }
            if name == "su" {
                // `su -c CMD [user]`: the command is a shell line.
                if let Some(p) = tail.iter().position(|a| a == "-c" || a == "--command") {
                    let mut v = vec!["sh".to_owned(), "-c".to_owned()];
                    v.extend(tail.get(p + 1).cloned());
                    return v;
                }
            }
            rest = after;
        } else {
            return rest.to_vec();
        }
    }
}

/// Skip leading options; those in `with_value` also take the next word.
fn skip_options<'a>(mut words: &'a [String], with_value: &[&str]) -> &'a [String] {
    while let Some((first, tail)) = words.split_first() {
        if first == "--" {
            return tail;
        }
        if !first.starts_with('-') || first == "-" {
            break;
        }
        words = if with_value.contains(&first.as_str()) {
            tail.get(1..).unwrap_or_default()
        } else {
            tail
        };
    }
    words
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `sh -c 'line'`, `bash -lc 'line'`, `busybox sh -c ...`: check the line itself.
fn shell_c(args: &[String], depth: u32) -> Option<String> {
    let mut iter = args.iter().peekable();
    while let Some(a) = iter.next() {
        if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
            return iter.next().and_then(|line| check_line(line, depth + 1));
        }
        if !a.starts_with('-') && !SHELLS.contains(&basename(a)) {
            return None; // `sh script.sh`: a script we cannot see
        }
    }
    None
}

/// `find ... -exec CMD {} ;`, `-execdir`, `-ok`, and `find / -delete`.
fn find(args: &[String], depth: u32) -> Option<String> {
    let roots: Vec<&String> = args.iter().take_while(|a| !a.starts_with('-')).collect();
    if args.iter().any(|a| a == "-delete")
        && let Some(root) = roots.iter().find(|r| is_system_dir(r))
    {
        return Some(format!("find {root} -delete removes system files"));
    }
    let mut i = 0;
    while i < args.len() {
        if ["-exec", "-execdir", "-ok", "-okdir"].contains(&args[i].as_str()) {
            let cmd: Vec<String> = args[i + 1..]
                .iter()
                .take_while(|a| *a != ";" && *a != "+")
                .map(|a| {
                    if a == "{}" {
                        roots
                            .first()
                            .map_or_else(|| ".".to_owned(), |r| (*r).clone())
                    } else {
                        a.clone()
                    }
                })
                .collect();
            if let Some(reason) = check_simple(
                &Simple {
                    words: cmd,
                    redirects: vec![],
                },
                depth,
            ) {
                return Some(format!("find -exec: {reason}"));
            }
        }
        i += 1;
    }
    None
}

fn rm(args: &[String]) -> Option<String> {
    let mut recursive = false;
    let mut no_preserve = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for a in args {
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && a.starts_with("--") {
            recursive |= a == "--recursive";
            no_preserve |= a == "--no-preserve-root";
        } else if !options_done && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains('r') || a.contains('R');
        } else {
            targets.push(a.as_str());
        }
    }
    if no_preserve {
        return Some("rm --no-preserve-root exists only to delete /".into());
    }
    if !recursive {
        return None;
    }
    targets.into_iter().find_map(|t| {
        if is_home(t) {
            Some(format!("rm -r {t} deletes the home directory"))
        } else if is_system_dir(t) {
            Some(format!("rm -r {t} deletes a system directory"))
        } else {
            None
        }
    })
}

fn dd(args: &[String]) -> Option<String> {
    args.iter()
        .filter_map(|a| a.strip_prefix("of="))
        .find(|target| is_disk(target))
        .map(|target| format!("dd onto {target} overwrites the disk"))
}

fn recursive_on_system(program: &str, args: &[String]) -> Option<String> {
    let recursive = args.iter().any(|a| {
        a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
    });
    if !recursive {
        return None;
    }
    args.iter()
        .filter(|a| !a.starts_with('-'))
        .find(|a| is_system_dir(a) || is_home(a))
        .map(|t| format!("{program} -R on {t} changes the whole system's permissions"))
}

fn dangerous_write_target(target: &str) -> Option<&'static str> {
    if is_disk(target) {
        Some("writing onto a disk device destroys its filesystem")
    } else if target == "/etc" || target.starts_with("/etc/") {
        Some("files in /etc configure the whole system")
    } else if target.starts_with("/boot/")
        || target.starts_with("/dev/mem")
        || target == "/dev/port"
    {
        Some("this overwrites what the machine boots or runs from")
    } else {
        None
    }
}

/// Normalise a path word: drop trailing `/`, `/*`, `/.` so that `/usr/` and `/usr/*` are `/usr`.
fn normalise(path: &str) -> &str {
    let mut p = path;
    loop {
        let before = p;
        for suffix in ["/*", "/.", "/"] {
            if p.len() > 1
                && let Some(stripped) = p.strip_suffix(suffix)
            {
                p = if stripped.is_empty() { "/" } else { stripped };
            }
        }
        if p == before {
            return p;
        }
    }
}

fn is_system_dir(path: &str) -> bool {
    let p = normalise(path);
    p == "*" && path.starts_with('/') || SYSTEM_DIRS.contains(&p) || p == "/*"
}

fn is_home(path: &str) -> bool {
    let p = normalise(path);
    ["~", "$HOME", "${HOME}", "~/*", "/home/*", "/root"].contains(&p)
}

fn is_disk(path: &str) -> bool {
    DISKS.iter().any(|d| path.starts_with(d))
}

/// `:(){ :|:& };:` and its renamings: a function that pipes itself into itself in background.
fn fork_bomb(line: &str) -> Option<String> {
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = squeezed.as_str();
    while let Some(pos) = search.find("(){") {
        let name_start = search[..pos]
            .rfind(|c: char| ";&|\n(){}".contains(c))
            .map_or(0, |p| p + 1);
        let name = search[name_start..pos].trim_start_matches("function");
        let body = &search[pos + 3..];
        if !name.is_empty() && body.contains(&format!("{name}|{name}&")) {
            return Some(format!(
                "this defines `{name}` to start two copies of itself forever: a fork bomb"
            ));
        }
        search = &search[pos + 3..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::check_command;

    /// The verdict table, shared with `passepartout plugin test` (which runs it through the
    /// runtime): each case's `command` is checked here natively.
    const CASES: &str = include_str!("../cases.json");

    #[test]
    fn every_case_of_the_table_holds_natively() {
        let doc: serde_json::Value = serde_json::from_str(CASES).expect("cases.json is JSON");
        let cases = doc["cases"].as_array().expect("a list of cases");
        assert!(cases.len() > 60, "the table is all there");
        for case in cases {
            let command = case["action"]["args"]["command"]
                .as_str()
                .expect("each case has a command");
            let verdict = check_command(command);
            match case["expect"].as_str() {
                Some("reject") => {
                    let reason = verdict.unwrap_or_else(|| panic!("should reject: {command:?}"));
                    if let Some(want) = case["reason"].as_str() {
                        assert!(
                            reason.contains(want),
                            "{command:?}: {reason:?} lacks {want:?}"
                        );
                    }
                }
                Some("pass") => assert_eq!(verdict, None, "should pass: {command:?}"),
                other => panic!("{command:?}: unexpected expect {other:?}"),
            }
        }
    }
}
