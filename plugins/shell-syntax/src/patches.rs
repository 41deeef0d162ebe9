//! What applying a diff writes: `patch`, `git apply` and `git am` write the files their diff
//! names. A diff given as the command's here-document or here-string is read for its names
//! (`--- a/x`, `+++ b/x`, `diff --git a/x b/x`, `rename to x`...); one in a file or a pipe, or
//! one holding an expansion, is [`Written::unclear`], unless the command names what it writes itself (`patch
//! FILE`, `patch -o OUT`) or writes nothing (`git apply --check`).
//!
//! A name is written with its leading directories stripped as `-p` says, and with every
//! strip when that is not known (`patch` without `-p` guesses): `a/.git/hooks/x` stands for
//! `.git/hooks/x` too.

use crate::wrappers::Input;
use crate::writes::Written;

/// `patch`'s letters that take a value (GNU patch 2.7), in a cluster the rest of it, else the
/// next word.
const PATCH_VALUED: &str = "BDdFgiopVxYrz";

/// `patch`'s long options that take a value (`--name VALUE` or `--name=VALUE`); GNU getopt
/// takes any prefix, so a word that is a prefix of one is read as it.
const PATCH_VALUED_LONG: &[&str] = &[
    "prefix",
    "ifdef",
    "directory",
    "fuzz",
    "get",
    "input",
    "output",
    "strip",
    "version-control",
    "debug",
    "basename-prefix",
    "reject-file",
    "suffix",
    "quoting-style",
    "reject-format",
    "read-only",
];

/// One option of a command that applies a diff, as read: its name (a letter, or the long name
/// as written) and its value.
type Given = (String, Option<String>);

/// Read `args` as GNU getopt reads them: the options with their values, and the operands.
fn read(args: &[String], valued: &str, valued_long: &[&str]) -> (Vec<Given>, Vec<String>) {
    let mut given = Vec::new();
    let mut operands = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            operands.extend(words.by_ref().cloned());
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let takes = valued_long
                .iter()
                .any(|l| !name.is_empty() && l.starts_with(name));
            let value = attached.or_else(|| takes.then(|| words.next().cloned()).flatten());
            given.push((name.to_owned(), value));
            continue;
        }
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) else {
            operands.push(word.clone());
            continue;
        };
        for (i, letter) in letters.char_indices() {
            if valued.contains(letter) {
                let rest = letters.get(i + letter.len_utf8()..).unwrap_or_default();
                let value = if rest.is_empty() {
                    words.next().cloned()
                } else {
                    Some(rest.to_owned())
                };
                given.push((letter.to_string(), value));
                break;
            }
            given.push((letter.to_string(), None));
        }
    }
    (given, operands)
}

/// The values given to the option with the letter `short` or a long name of which the word
/// given is a prefix.
fn values<'a>(given: &'a [Given], short: &str, long: &str) -> Vec<&'a str> {
    given
        .iter()
        .filter(|(name, _)| {
            (!short.is_empty() && name == short)
                || (name.len() > 1 && long.starts_with(name.as_str()))
        })
        .filter_map(|(_, value)| value.as_deref())
        .collect()
}

/// `patch`: its `-o`, `-r`, `-B`/`-Y` backup prefixes and the file it is told to patch; else
/// the files the diff on its standard input names (unclear when that is not seen, or read with
/// `-i`); all relative to `-d`.
pub fn patch(args: &[String], input: Input<'_>) -> Written {
    let (given, operands) = read(args, PATCH_VALUED, PATCH_VALUED_LONG);
    let mut paths: Vec<String> = ["output", "reject-file", "prefix", "basename-prefix"]
        .iter()
        .zip(["o", "r", "B", "Y"])
        .flat_map(|(long, short)| values(&given, short, long))
        .filter(|v| *v != "-")
        .map(str::to_owned)
        .collect();
    let strip = values(&given, "p", "strip")
        .last()
        .and_then(|p| p.parse().ok());
    let mut unclear = None;
    if let Some(original) = operands.first() {
        paths.push(original.clone());
    } else if values(&given, "o", "output").is_empty() {
        match (values(&given, "i", "input").is_empty(), seen(input)) {
            (true, Some(diff)) => paths.extend(named(diff, strip)),
            _ => {
                unclear = Some(
                    "`patch` writes the files its diff names, and this gate cannot see the diff"
                        .to_owned(),
                );
            }
        }
    }
    let dir = values(&given, "d", "directory")
        .last()
        .map(|d| (*d).to_owned());
    Written {
        paths: within(dir.as_deref(), paths),
        unclear,
    }
}

/// git's options before its subcommand that take the next word as their value.
const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

/// `git apply` and `git am`: the files the diff on standard input names (`-p`, default 1;
/// under `--directory` and `git -C`); with diff files as operands, unclear. `git apply
/// --check`, `--stat`, `--numstat`, `--summary` (without `--apply`) and `--cached` write no
/// file of the work tree. Any other subcommand: nothing here.
pub fn git(args: &[String], input: Input<'_>) -> Written {
    let mut dirs = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at).filter(|w| w.starts_with('-')) {
        at += 1;
        if GIT_VALUED.contains(&word.as_str()) {
            if word == "-C" {
                dirs.extend(args.get(at).cloned());
            }
            at += 1;
        }
    }
    let subcommand = args.get(at).map(String::as_str);
    if !matches!(subcommand, Some("apply" | "am")) {
        return Written::default();
    }
    let rest = args.get(at + 1..).unwrap_or_default();
    let (given, operands) = read(rest, "pC", &["directory", "include", "exclude"]);
    let has = |long: &str| {
        given
            .iter()
            .any(|(name, _)| name.len() > 1 && long.starts_with(name))
    };
    let reports_only = ["check", "stat", "numstat", "summary"]
        .iter()
        .any(|l| has(l));
    if subcommand == Some("apply") && (has("cached") || reports_only && !has("apply")) {
        return Written::default();
    }
    // Ending a series (`--abort` puts back what was there before it) applies no new diff.
    if subcommand == Some("am")
        && ["abort", "quit", "show-current-patch"]
            .iter()
            .any(|l| has(l))
    {
        return Written::default();
    }
    let strip = values(&given, "p", "").last().and_then(|p| p.parse().ok());
    let mut paths = match seen(input) {
        Some(diff) if operands.is_empty() => named(diff, Some(strip.unwrap_or(1))),
        _ => {
            return Written {
                paths: Vec::new(),
                unclear: Some(format!(
                    "`git {}` writes the files its diff names, and this gate cannot see the diff",
                    subcommand.unwrap_or_default()
                )),
            };
        }
    };
    if let Some(root) = values(&given, "", "directory").last() {
        paths = within(Some(root), paths);
    }
    for dir in dirs.iter().rev() {
        paths = within(Some(dir), paths);
    }
    Written {
        paths,
        unclear: None,
    }
}

/// The diff `input` gives, when the gate sees all of it: a variable or a substitution in it
/// (`<<< "$DIFF"`) may stand for any diff.
fn seen(input: Input<'_>) -> Option<&str> {
    match input {
        Input::Text(text) if !text.contains(['$', '`']) => Some(text),
        _ => None,
    }
}

/// `paths`, the relative ones put under `dir`.
fn within(dir: Option<&str>, paths: Vec<String>) -> Vec<String> {
    let Some(dir) = dir else {
        return paths;
    };
    paths
        .into_iter()
        .map(|p| {
            if p.starts_with('/') {
                p
            } else {
                format!("{}/{p}", dir.trim_end_matches('/'))
            }
        })
        .collect()
}

/// The files the diff `text` names, each with `strip` leading directories taken away, or with
/// every number of them when `strip` is not known.
fn named(text: &str, strip: Option<usize>) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(pair) = line.strip_prefix("diff --git ") {
            names.extend(pair.split(' ').map(unquoted));
            continue;
        }
        let header = ["--- ", "+++ ", "*** ", "Index: ", "rename to ", "copy to "]
            .iter()
            .find_map(|h| line.strip_prefix(h));
        if let Some(name) = header {
            // A timestamp follows a tab; a context diff's hunk header (`*** 1,3 ****`) is
            // read as a name, which only adds one.
            names.push(unquoted(name.split('\t').next().unwrap_or(name)));
        }
    }
    let mut paths = Vec::new();
    for name in names.iter().filter(|n| !n.is_empty() && *n != "/dev/null") {
        let parts: Vec<&str> = name.split('/').collect();
        let strips: Vec<usize> = match strip {
            Some(n) => vec![n],
            None => (0..parts.len()).collect(),
        };
        for n in strips {
            let kept = parts.get(n..).unwrap_or_default().join("/");
            if !kept.is_empty() && !paths.contains(&kept) {
                paths.push(kept);
            }
        }
    }
    paths
}

/// A name as a diff writes it, its quotes taken away (`"a/x y"`; git quotes names with
/// unusual characters and escapes them, which only the escapes' letters are kept of).
fn unquoted(name: &str) -> String {
    let name = name.trim();
    name.strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .map_or_else(|| name.to_owned(), |n| n.replace('\\', ""))
}

#[cfg(test)]
mod tests {
    use super::{git, patch};
    use crate::testing::words;
    use crate::wrappers::Input;

    const DIFF: &str =
        "diff --git a/.envrc b/.envrc\n--- a/.envrc\n+++ b/.envrc\n@@ -1 +1 @@\n-x\n+y\n";

    fn patched(line: &str, input: Input<'_>) -> (Vec<String>, bool) {
        let words = words(line);
        let written = patch(&words, input);
        (written.paths, written.unclear.is_some())
    }

    #[test]
    fn patch_writes_what_its_diff_names_or_asks() {
        let (paths, unclear) = patched("-p1", Input::Text(DIFF));
        assert_eq!(paths, [".envrc"]);
        assert!(!unclear);
        assert!(patched("-p1", Input::Text("$DIFF")).1);
        assert!(patched("-p1", Input::Text(crate::split::SUBSTITUTION)).1);
        let (paths, _) = patched(
            "",
            Input::Text("--- x/.git/hooks/a\t2020\n+++ y/.git/hooks/a\n"),
        );
        assert!(paths.contains(&".git/hooks/a".to_owned()), "{paths:?}");
        assert!(patched("-p1", Input::Unseen).1);
        assert!(patched("-p1 -i fix.diff", Input::Text(DIFF)).1);
        assert_eq!(
            patched("src/a.c fix.diff", Input::Unseen),
            (vec!["src/a.c".into()], false)
        );
        assert_eq!(
            patched("-o out.c", Input::Unseen),
            (vec!["out.c".into()], false)
        );
        let (paths, _) = patched("-d sub -p1 -r .git/r", Input::Text(DIFF));
        assert_eq!(paths, ["sub/.git/r", "sub/.envrc"]);
        let (paths, _) = patched("--dir=.git --strip 0", Input::Text("+++ config\n"));
        assert_eq!(paths, [".git/config"]);
    }

    #[test]
    fn git_apply_writes_what_its_diff_names_or_asks() {
        let applied = |line: &str, input| {
            let w = git(&words(line), input);
            (w.paths, w.unclear.is_some())
        };
        assert_eq!(applied("apply", Input::Text(DIFF)).0, [".envrc"]);
        assert_eq!(
            applied("-C sub am -p2", Input::Text("+++ a/b/.envrc\n")).0,
            ["sub/.envrc"]
        );
        assert_eq!(
            applied(
                "apply --directory=.github",
                Input::Text("+++ b/workflows/ci.yml\n")
            )
            .0,
            [".github/workflows/ci.yml"]
        );
        assert!(applied("apply fix.diff", Input::Text(DIFF)).1);
        assert!(applied("apply", Input::Unseen).1);
        assert_eq!(
            applied("apply --check fix.diff", Input::Unseen),
            (vec![], false)
        );
        assert_eq!(
            applied("apply --stat --apply", Input::Text(DIFF)).0,
            [".envrc"]
        );
        assert_eq!(
            applied("apply --cached x.diff", Input::Unseen),
            (vec![], false)
        );
        assert_eq!(applied("log -p", Input::Unseen), (vec![], false));
        assert_eq!(applied("am --abort", Input::Unseen), (vec![], false));
        assert!(applied("am --continue", Input::Unseen).1);
    }
}
