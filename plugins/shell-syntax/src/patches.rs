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

/// `patch`'s options that make backups, whose names it builds from prefixes and suffixes
/// (`-b -z nvrc` backs `.e` up as `.envrc`; `-B`, `-Y`, `-V`; `SIMPLE_BACKUP_SUFFIX` is judged
/// among the variables).
const PATCH_BACKUPS: &[(&str, &str)] = &[
    ("b", "backup"),
    ("B", "prefix"),
    ("Y", "basename-prefix"),
    ("z", "suffix"),
    ("V", "version-control"),
];

/// `patch`: its `-o`, `-r`, the file it is told to patch, and the files the diff on its
/// standard input names (a git diff's copies and renames are written whatever file is named;
/// unclear when the diff is not seen, or is read with `-i` or from a second operand); all under
/// each `-d` in turn (each is a `chdir`). Backups ask; `--dry-run` writes nothing.
pub fn patch(args: &[String], input: Input<'_>) -> Written {
    let (given, operands) = read(args, PATCH_VALUED, PATCH_VALUED_LONG);
    if flag(&given, "", "dry-run") {
        return Written::default();
    }
    let mut paths: Vec<String> = ["output", "reject-file"]
        .iter()
        .zip(["o", "r"])
        .flat_map(|(long, short)| values(&given, short, long))
        .filter(|v| *v != "-")
        .map(str::to_owned)
        .collect();
    paths.extend(operands.first().cloned());
    let strip = values(&given, "p", "strip")
        .last()
        .and_then(|p| p.parse().ok());
    let mut unclear = None;
    let to_output = !values(&given, "o", "output").is_empty();
    let from_file = !values(&given, "i", "input").is_empty() || operands.len() > 1;
    match seen(input).filter(|_| !from_file) {
        Some(diff) => match named(diff, strip) {
            Ok(names) if !to_output => paths.extend(names),
            Ok(_) => {}
            Err(why) => unclear = Some(format!("`patch`: {why}")),
        },
        None => {
            unclear = Some(
                "`patch` writes the files its diff names, and this gate cannot see the diff"
                    .to_owned(),
            );
        }
    }
    if PATCH_BACKUPS
        .iter()
        .any(|(short, long)| flag(&given, short, long))
    {
        unclear = Some(
            "`patch` names its backups from prefixes and suffixes this gate does not follow"
                .to_owned(),
        );
    }
    let mut dirs = values(&given, "d", "directory");
    dirs.reverse();
    let paths = dirs
        .into_iter()
        .fold(paths, |paths, dir| within(Some(dir), paths));
    Written { paths, unclear }
}

/// Whether the flag with the letter `short` or a long name of which the word given is a prefix
/// is on: given last without `no-` (`--no-check` turns `--check` off).
fn flag(given: &[Given], short: &str, long: &str) -> bool {
    let mut on = false;
    for (name, _) in given {
        if (!short.is_empty() && name == short)
            || (name.len() > 1 && long.starts_with(name.as_str()))
        {
            on = true;
        } else if name
            .strip_prefix("no-")
            .is_some_and(|n| !n.is_empty() && long.starts_with(n))
        {
            on = false;
        }
    }
    on
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
    "--attr-source",
    "--shallow-file",
    "--list-cmds",
];

/// `git apply`'s and `git am`'s long options that take a value, given in the next word.
const GIT_APPLY_VALUED: &[&str] = &[
    "directory",
    "include",
    "exclude",
    "whitespace",
    "build-fake-ancestor",
    "patch-format",
    "resolvemsg",
    "quoted-cr",
    "empty",
];

/// `git apply` and `git am`: the files the diff on standard input names (`-p`, default 1;
/// under `--directory` and each `git -C`); with diff files as operands, unclear. `git apply
/// --check`, `--stat`, `--numstat`, `--summary` (without `--apply`) and `--cached` write no
/// file of the work tree, nor does `git am --abort`. Any other subcommand: nothing here.
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
    let (given, operands) = read(rest, "pC", GIT_APPLY_VALUED);
    let on = |long: &str| flag(&given, "", long);
    // A fake ancestor index is written whatever else the command does.
    let ancestor: Vec<String> = values(&given, "", "build-fake-ancestor")
        .into_iter()
        .map(str::to_owned)
        .collect();
    let written = |paths: Vec<String>, unclear: Option<String>| {
        let mut paths = paths;
        paths.extend(ancestor.iter().cloned());
        Written { paths, unclear }
    };
    let reports_only = ["check", "stat", "numstat", "summary"]
        .iter()
        .any(|l| on(l));
    if subcommand == Some("apply") && (on("cached") || reports_only && !on("apply")) {
        return written(Vec::new(), None);
    }
    // Ending a series (`--abort` puts back what was there before it) applies no new diff.
    if subcommand == Some("am")
        && ["abort", "quit", "show-current-patch"]
            .iter()
            .any(|l| on(l))
    {
        return Written::default();
    }
    let unseen = |why: &str| {
        written(
            Vec::new(),
            Some(format!(
                "`git {}` writes the files its diff names, and {why}",
                subcommand.unwrap_or_default()
            )),
        )
    };
    let Some(diff) = seen(input).filter(|_| operands.is_empty()) else {
        return unseen("this gate cannot see the diff");
    };
    // A mail's body may be encoded (quoted-printable, base64) or flowed (lines joined):
    // `git am` decodes the names.
    let mail = diff.to_ascii_lowercase();
    if subcommand == Some("am")
        && (mail.contains("content-transfer-encoding") || mail.contains("format=flowed"))
    {
        return unseen("the mail's encoding hides them from this gate");
    }
    // git strips `-p` parts from most names, one fewer from `rename to`, and guesses 0 for a
    // name without a slash: every strip is judged.
    let mut paths = match named(diff, None) {
        Ok(paths) => paths,
        Err(why) => return unseen(&why),
    };
    if let Some(root) = values(&given, "", "directory").last() {
        paths = within(Some(root), paths);
    }
    for dir in dirs.iter().rev() {
        paths = within(Some(dir), paths);
    }
    written(paths, None)
}

/// The diff `input` gives, when the gate sees it ([`crate::split`] gives no text for a
/// here-string or an unquoted here-document the shell would expand).
fn seen(input: Input<'_>) -> Option<&str> {
    match input {
        Input::Text(text) => Some(text),
        _ => None,
    }
}

/// `paths`, the relative ones put under `dir`.
pub(crate) fn within(dir: Option<&str>, paths: Vec<String>) -> Vec<String> {
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

/// The most names of a diff, and components of one name, read; past them the diff asks
/// (reading every strip of every name costs their product).
const MAX_NAMES: usize = 4096;
const MAX_COMPONENTS: usize = 64;

/// The files the diff `text` names, each with `strip` leading directories taken away, or with
/// every number of them when `strip` is not known. Headers are read as GNU patch reads them:
/// after leading blanks (and a mail's `X`), the name up to a tab, and up to its first blank
/// too. A name in C quotes with an escape, or past the bounds above, is an error.
fn named(text: &str, strip: Option<usize>) -> Result<Vec<String>, String> {
    let mut names = std::collections::BTreeSet::new();
    for line in text.lines() {
        // GNU patch skips any run of blanks and a mail's `X` before a header.
        let line = line.trim_start_matches(|c: char| c.is_whitespace() || c == 'X');
        let header = [
            "diff --git",
            "---",
            "+++",
            "***",
            "Index:",
            "rename to",
            "copy to",
            "rename new",
            "rename old",
        ]
        .iter()
        .find_map(|h| line.strip_prefix(h));
        if let Some(rest) = header {
            // Every word after the header is taken for a name (a name ends at any blank, or
            // at its closing quote; a timestamp or a hunk header such as `*** 1,3 ****` only
            // adds names). The whole rest up to a tab is one too (a name with spaces).
            let rest = rest.trim_start();
            names.insert(unquoted(rest.split('\t').next().unwrap_or(rest)));
            for word in rest.split(char::is_whitespace) {
                names.insert(unquoted(word));
            }
        }
        if names.len() > MAX_NAMES {
            return Err(format!("its diff names more than {MAX_NAMES} files"));
        }
    }
    let mut paths = std::collections::BTreeSet::new();
    for name in &names {
        let name = name.as_ref().map_err(Clone::clone)?;
        if name.is_empty() || name == "/dev/null" {
            continue;
        }
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() > MAX_COMPONENTS {
            return Err(format!(
                "a name in its diff has more than {MAX_COMPONENTS} parts"
            ));
        }
        let strips: Vec<usize> = match strip {
            Some(n) => vec![n],
            None => (0..parts.len()).collect(),
        };
        for n in strips {
            let kept = parts.get(n..).unwrap_or_default().join("/");
            if !kept.is_empty() {
                paths.insert(kept);
            }
        }
    }
    Ok(paths.into_iter().collect())
}

/// A name as a diff writes it, its quotes taken away (`"a/x y"`). git and GNU patch decode C
/// escapes in a quoted name (`\056` is `.`), which this gate does not: such a name is an error.
fn unquoted(name: &str) -> Result<String, String> {
    let name = name.trim();
    let Some(quoted) = name.strip_prefix('"') else {
        return Ok(name.to_owned());
    };
    // The name ends at its closing quote (`"b/.envrc"x` is `b/.envrc`).
    let inner = quoted.split('"').next().unwrap_or(quoted);
    if inner.contains('\\') {
        return Err(format!(
            "its diff names `{}` with escapes this gate does not decode",
            crate::launchers::shown(name)
        ));
    }
    Ok(inner.to_owned())
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

    fn applied(line: &str, input: Input<'_>) -> (Vec<String>, bool) {
        let w = git(&words(line), input);
        (w.paths, w.unclear.is_some())
    }

    /// Whether `paths` holds `path`.
    fn has(paths: &[String], path: &str) -> bool {
        paths.iter().any(|p| p == path)
    }

    #[test]
    fn patch_writes_what_its_diff_names_or_asks() {
        let (paths, unclear) = patched("-p1", Input::Text(DIFF));
        assert!(has(&paths, ".envrc") && !unclear, "{paths:?}");
        let (paths, _) = patched(
            "",
            Input::Text("--- x/.git/hooks/a\t2020\n+++ y/.git/hooks/a\n"),
        );
        assert!(has(&paths, ".git/hooks/a"), "{paths:?}");
        assert!(patched("-p1", Input::Unseen).1);
        assert!(patched("-p1 -i fix.diff", Input::Text(DIFF)).1);
        // A file named to patch still leaves a git diff's copies and renames written; the
        // diff in a second operand is not seen.
        assert_eq!(
            patched("src/a.c fix.diff", Input::Unseen),
            (vec!["src/a.c".into()], true)
        );
        let copy = "diff --git a/src/a.c b/.envrc\ncopy from src/a.c\ncopy to .envrc\n";
        assert!(has(&patched("-p1 src/a.c", Input::Text(copy)).0, ".envrc"));
        assert_eq!(
            patched("-o out.c", Input::Text(DIFF)),
            (vec!["out.c".into()], false)
        );
        assert!(patched("-o out.c", Input::Unseen).1);
        let (paths, _) = patched("-d sub -p1 -r .git/r", Input::Text(DIFF));
        assert!(
            has(&paths, "sub/.git/r") && has(&paths, "sub/.envrc"),
            "{paths:?}"
        );
        let (paths, _) = patched("--dir=.git --strip 0", Input::Text("+++ config\n"));
        assert_eq!(paths, [".git/config"]);
        // Each -d is a chdir.
        let (paths, _) = patched("-d .git -d hooks -p1", Input::Text("+++ b/pre-commit\n"));
        assert_eq!(paths, [".git/hooks/pre-commit"]);
        // Headers as GNU patch reads them: a tab after +++, a blank or a vertical tab ending
        // the name, indented, a mail's X (any run), a quoted name with more after it; C-quoted
        // names with escapes ask.
        for header in [
            "+++\t.envrc",
            "+++ .envrc x",
            "+++ .envrc\u{b}x",
            "  +++ .envrc",
            "XX+++ .envrc",
            "+++ \".envrc\"x",
            "Index:.envrc",
        ] {
            let (paths, _) = patched("-p0", Input::Text(header));
            assert!(has(&paths, ".envrc"), "{header}: {paths:?}");
        }
        assert!(patched("-p1", Input::Text("+++ \"b/.e\\156vrc\"\n")).1);
        // Backups ask; a dry run writes nothing.
        assert!(patched("-b -z nvrc -p0", Input::Text("+++ .e\n")).1);
        assert!(patched("--backup -p0", Input::Text("+++ .e\n")).1);
        assert_eq!(patched("--dry-run -p1", Input::Unseen), (vec![], false));
        // Bounded work: too many names, or too deep a name, asks.
        let deep = format!("+++ {}x\n", "a/".repeat(100));
        assert!(patched("", Input::Text(&deep)).1);
        let many = "+++ x\n".repeat(5000);
        assert!(!patched("", Input::Text(&many)).1, "one name, many times");
        let many: String = (0..5000).map(|i| format!("+++ f{i}\n")).collect();
        assert!(patched("", Input::Text(&many)).1);
    }

    #[test]
    fn git_apply_writes_what_its_diff_names_or_asks() {
        assert!(has(&applied("apply", Input::Text(DIFF)).0, ".envrc"));
        assert!(has(
            &applied("-C sub am -p2", Input::Text("+++ a/b/.envrc\n")).0,
            "sub/.envrc"
        ));
        assert!(has(
            &applied(
                "apply --directory=.github",
                Input::Text("+++ b/workflows/ci.yml\n")
            )
            .0,
            ".github/workflows/ci.yml"
        ));
        assert!(applied("apply fix.diff", Input::Text(DIFF)).1);
        assert!(applied("apply", Input::Unseen).1);
        assert_eq!(
            applied("apply --check fix.diff", Input::Unseen),
            (vec![], false)
        );
        assert!(has(
            &applied("apply --stat --apply", Input::Text(DIFF)).0,
            ".envrc"
        ));
        assert_eq!(
            applied("apply --cached x.diff", Input::Unseen),
            (vec![], false)
        );
        assert_eq!(applied("log -p", Input::Unseen), (vec![], false));
        assert_eq!(applied("am --abort", Input::Unseen), (vec![], false));
        assert!(applied("am --continue", Input::Unseen).1);
        // Global options with a value; a negated --check or --cached applies.
        for line in [
            "--attr-source HEAD apply",
            "apply --check --no-check",
            "apply --cached --no-cached",
            "apply --whitespace fix",
        ] {
            let (paths, unclear) = applied(line, Input::Text(DIFF));
            assert!(has(&paths, ".envrc") && !unclear, "{line}: {paths:?}");
        }
        assert!(applied("am", Input::Text("Content-Transfer-Encoding: base64\n")).1);
        assert!(
            applied(
                "am",
                Input::Text("Content-Type: text/plain; format=flowed\n")
            )
            .1
        );
        assert!(applied("apply", Input::Text("diff --git \"a/\\056git/x\" b/y\n")).1);
        // git strips one part fewer from `rename to`, and none from a name without a slash.
        let rename = "diff --git a/n b/n\nrename from n\nrename to .envrc\n";
        assert!(has(&applied("apply", Input::Text(rename)).0, ".envrc"));
        assert!(has(
            &applied("apply", Input::Text("+++ .envrc\n")).0,
            ".envrc"
        ));
        assert!(has(
            &applied("apply -p0", Input::Text("rename new .envrc\n")).0,
            ".envrc"
        ));
        // A fake ancestor index is written even by --check.
        assert!(has(
            &applied(
                "apply --check --build-fake-ancestor=.git/config",
                Input::Unseen
            )
            .0,
            ".git/config"
        ));
    }
}
