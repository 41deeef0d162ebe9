//! What a program writes, for the programs whose job is to write files: the operands of `tee`
//! and `sponge`; the target of `cp`, `mv`, `ln`, `install` and `rsync`; `dd of=`; the files
//! `sed -i` and `perl -i` edit in place; `curl -o` (and its header, cookie and trace files);
//! `wget -O` (and its log, cookies and `-P` directory); the archive `tar -c`/`-r`/`-u` writes
//! and the directory `tar -x -C` or `unzip -d` extracts into. A directory stands for what is
//! written in it: the gate cannot see an archive's members or a URL's file name.
//!
//! Read leniently ([`crate::options::scan`]): an option value given in the next word may be
//! taken for an operand, which only ever names more paths, never fewer.

use crate::options::{Wanted, scan};

/// The paths the program called `name` (a base name) writes, given `args`, as written.
pub fn written(name: &str, args: &[String]) -> Vec<String> {
    match name {
        "tee" | "sponge" => operands(args),
        "cp" | "mv" | "ln" | "install" | "rsync" => target(name, args),
        "dd" => args
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .map(str::to_owned)
            .collect(),
        "sed" | "gsed" => sed(args),
        "perl" => perl(args),
        "curl" => values(args, CURL, CURL_VALUED),
        "wget" => wget(args),
        "tar" | "gtar" | "bsdtar" => tar(args),
        "unzip" => values(args, &[Wanted::new("", 0, Some('d'))], ""),
        _ => Vec::new(),
    }
}

/// The words of `args` that are not options: those without a leading `-` (or `-` alone), and
/// all after `--`.
fn operands(args: &[String]) -> Vec<String> {
    let mut after_dashes = false;
    args.iter()
        .filter(|a| {
            let operand = after_dashes || !a.starts_with('-') || a.as_str() == "-";
            after_dashes |= a.as_str() == "--";
            operand && a.as_str() != "--"
        })
        .cloned()
        .collect()
}

/// The values `scan` finds of any of `specs`.
fn values(args: &[String], specs: &[Wanted], valued: &str) -> Vec<String> {
    scan(args, specs, valued)
        .into_iter()
        .filter_map(|(_, value)| value)
        .collect()
}

/// `cp`, `mv`, `ln`, `install`, `rsync`: the last operand, and coreutils' `-t DIR` (rsync's
/// `-t` keeps times).
fn target(name: &str, args: &[String]) -> Vec<String> {
    let coreutils = name != "rsync";
    let mut targets: Vec<String> = args
        .iter()
        .enumerate()
        .filter_map(|(at, a)| {
            if a == "--target-directory" || (coreutils && a == "-t") {
                args.get(at + 1).map(String::as_str)
            } else {
                a.strip_prefix("--target-directory=").or_else(|| {
                    a.strip_prefix("-t")
                        .filter(|t| coreutils && !t.is_empty() && !a.starts_with("--"))
                })
            }
        })
        .map(str::to_owned)
        .collect();
    if let [_, .., last] = operands(args).as_slice() {
        targets.push(last.clone());
    }
    targets
}

/// `sed -i` (`--in-place`, `-i.bak`, `-ni`): every operand but the script, which is the first
/// operand when no `-e`/`-f` gives one.
fn sed(args: &[String]) -> Vec<String> {
    let specs = [
        Wanted::optional("in-place", 1, Some('i')),
        Wanted::new("expression", 1, Some('e')),
        Wanted::new("file", 1, Some('f')),
        Wanted::new("line-length", 1, Some('l')),
    ];
    let found = scan(args, &specs, "");
    if !found.iter().any(|(which, _)| *which == 0) {
        return Vec::new();
    }
    let given: Vec<&String> = found
        .iter()
        .filter(|(which, _)| *which == 1 || *which == 2)
        .filter_map(|(_, value)| value.as_ref())
        .collect();
    let mut files = operands(args);
    if given.is_empty() {
        files.drain(..files.len().min(1)); // the script
    } else {
        files.retain(|f| !given.contains(&f));
    }
    files
}

/// `perl -i` (`-pi`, `-i.bak`, `-pi.bak`: the rest of a cluster after `i` is the backup
/// suffix): every operand but the code of `-e`/`-E`.
fn perl(args: &[String]) -> Vec<String> {
    let mut in_place = false;
    let mut code: Vec<&String> = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let Some(letters) = word
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && *l != "-")
        else {
            // The script, or after `--` the files: perl's switches end here.
            break;
        };
        for (i, letter) in letters.char_indices() {
            let rest = letters.get(i + 1..).unwrap_or_default();
            match letter {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    if rest.is_empty() {
                        code.extend(args.get(at));
                        at += 1;
                    }
                    break;
                }
                // Switches whose value is the rest of the cluster.
                'I' | 'M' | 'm' | 'F' | 'd' | 'D' | 'x' | 'C' | 'l' | '0' => break,
                _ => {}
            }
        }
    }
    if !in_place {
        return Vec::new();
    }
    let mut files = operands(args);
    files.retain(|f| !code.contains(&f));
    files
}

/// `curl`'s options that write a file, and `--output-dir`, where `-O` and `-o` write.
const CURL: &[Wanted] = &[
    Wanted::new("output", 6, Some('o')),
    Wanted::new("output-dir", 7, None),
    Wanted::new("dump-header", 2, Some('D')),
    Wanted::new("cookie-jar", 7, Some('c')),
    Wanted::new("trace", 5, None),
    Wanted::new("trace-ascii", 6, None),
    Wanted::new("libcurl", 3, None),
    Wanted::new("etag-save", 6, None),
    Wanted::new("stderr", 3, None),
    Wanted::new("hsts", 4, None),
    Wanted::new("alt-svc", 3, None),
];

/// `curl`'s letters that take a value.
const CURL_VALUED: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";

/// `wget`'s options that write a file, `-P`, the directory it saves into, and `-e`, a
/// `.wgetrc` command, which may set any of them.
const WGET: &[Wanted] = &[
    Wanted::new("output-document", 8, Some('O')),
    Wanted::new("output-file", 8, Some('o')),
    Wanted::new("append-output", 2, Some('a')),
    Wanted::new("directory-prefix", 3, Some('P')),
    Wanted::new("save-cookies", 6, None),
    Wanted::new("execute", 3, Some('e')),
];

/// `wget`'s letters that take a value.
const WGET_VALUED: &str = "aABDeiIlnoOPQRtTUwXY";

/// The `.wgetrc` commands that name a file or directory wget writes (its commands are read
/// without case, `_` or `-`).
const WGETRC_WRITES: &[&str] = &["outputdocument", "logfile", "dirprefix", "savecookies"];

/// `wget`: the values of [`WGET`]; of `-e COMMAND`, the value of a command that names a
/// place it writes.
fn wget(args: &[String]) -> Vec<String> {
    let execute = WGET.len() - 1;
    scan(args, WGET, WGET_VALUED)
        .into_iter()
        .filter_map(|(which, value)| {
            let value = value?;
            if which != execute {
                return Some(value);
            }
            let (command, value) = value.split_once('=')?;
            let command: String = command
                .chars()
                .filter(|c| !matches!(c, '_' | '-') && !c.is_whitespace())
                .collect::<String>()
                .to_ascii_lowercase();
            WGETRC_WRITES
                .contains(&command.as_str())
                .then(|| value.trim().to_owned())
        })
        .collect()
}

/// `tar`'s modes and the options that say where it writes (GNU tar's `argp` takes a prefix
/// that names one option only).
const TAR: &[Wanted] = &[
    Wanted::flag("create", 2, Some('c')),
    Wanted::flag("append", 2, Some('r')),
    Wanted::flag("update", 2, Some('u')),
    Wanted::flag("catenate", 3, Some('A')),
    Wanted::flag("concatenate", 3, None),
    Wanted::flag("delete", 4, None),
    Wanted::flag("extract", 2, Some('x')),
    Wanted::flag("get", 2, None),
    Wanted::new("file", 3, Some('f')),
    Wanted::new("directory", 3, Some('C')),
];

/// Where in [`TAR`] the modes that write the archive end, and the modes end.
const TAR_WRITES_ARCHIVE: usize = 6;
const TAR_MODES: usize = 8;

/// `tar`'s letters that take a value.
const TAR_VALUED: &str = "bCfFgHIKLNTVX";

/// `tar`: the archive (`-f`) when it creates, appends to, updates or deletes from one; the
/// directory (`-C`) when it extracts. The old style (`tar xzfC x.tgz dir`) gives a cluster
/// first, its values in the words after it.
fn tar(args: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = args;
    if let Some(first) = args.first().filter(|w| !w.starts_with('-')) {
        let mut used = 1;
        for letter in first.chars() {
            let which = TAR.iter().position(|s| s.short == Some(letter));
            if TAR_VALUED.contains(letter) {
                let value = args.get(used).cloned();
                used += 1;
                found.extend(which.map(|w| (w, value)));
            } else {
                found.extend(which.map(|w| (w, None)));
            }
        }
        rest = args.get(used.min(args.len())..).unwrap_or_default();
    }
    found.extend(scan(rest, TAR, TAR_VALUED));
    let writes_archive = found.iter().any(|(w, _)| *w < TAR_WRITES_ARCHIVE);
    let extracts = found
        .iter()
        .any(|(w, _)| (TAR_WRITES_ARCHIVE..TAR_MODES).contains(w));
    let wanted = |which: usize| {
        let option = TAR.get(which).map_or("", |s| s.long);
        (option == "file" && writes_archive) || (option == "directory" && extracts)
    };
    found
        .into_iter()
        .filter(|(which, _)| wanted(*which))
        .filter_map(|(_, value)| value)
        .filter(|value| value != "-")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::written;
    use crate::testing::words;

    fn writes(line: &str) -> Vec<String> {
        let words = words(line);
        let (name, args) = words.split_first().expect("a command");
        written(name, args)
    }

    #[test]
    fn copies_and_tees_write_their_target() {
        assert_eq!(writes("tee -a a b"), ["a", "b"]);
        assert_eq!(writes("cp -r src dst"), ["dst"]);
        assert_eq!(writes("cp -t dir a b"), ["dir", "b"]);
        assert_eq!(writes("rsync -t a b"), ["b"]);
        assert_eq!(writes("dd if=x of=/dev/sda"), ["/dev/sda"]);
        assert_eq!(writes("sponge .envrc"), [".envrc"]);
    }

    #[test]
    fn editors_in_place_write_their_files() {
        assert_eq!(writes("sed -i 's/a/b/' .git/config"), [".git/config"]);
        assert_eq!(writes("sed -ni.bak -e p a b"), ["a", "b"]);
        assert_eq!(writes("sed --in-place=.bak 's/a/b/' f"), ["f"]);
        assert_eq!(writes("sed -E -i -f s.sed f"), ["f"]);
        assert!(writes("sed 's/a/b/' .git/config").is_empty());
        assert!(
            writes("sed -n -e '/i/p' f").is_empty(),
            "-e's value is no -i"
        );
        assert_eq!(writes("perl -pi -e 's/a/b/' .envrc"), [".envrc"]);
        assert_eq!(writes("perl -i.bak -pe 's/a/b/' a b"), ["a", "b"]);
        assert_eq!(
            writes("perl -pie 's/a/b/' f"),
            ["s/a/b/", "f"],
            "-i's suffix is e"
        );
        assert!(writes("perl -ne 'print if /i/' .git/config").is_empty());
        assert_eq!(
            writes("perl -e 'print 1' -i f"),
            ["f"],
            "switches go on after -e's code"
        );
        assert!(
            writes("perl -e 'print 1' -- -i").is_empty(),
            "after --: its @ARGV"
        );
    }

    #[test]
    fn downloads_write_where_they_are_told() {
        assert_eq!(
            writes("curl -sSLo .git/hooks/x https://e.x"),
            [".git/hooks/x"]
        );
        assert_eq!(writes("curl -o.envrc https://e.x"), [".envrc"]);
        assert_eq!(writes("curl --output=a --output-dir d -O u"), ["a", "d"]);
        assert_eq!(writes("curl -c jar -D h u"), ["jar", "h"]);
        assert!(writes("curl -sSL -H 'o: x' https://e.x").is_empty());
        assert_eq!(writes("wget -qO .npmrc u"), [".npmrc"]);
        assert_eq!(writes("wget --output-document=f u"), ["f"]);
        assert_eq!(writes("wget -P .git/hooks u"), [".git/hooks"]);
        assert_eq!(writes("wget -e output_document=.env u"), [".env"]);
        assert!(writes("wget -e robots=off -r u").is_empty());
    }

    #[test]
    fn archives_write_their_archive_or_where_they_extract() {
        assert_eq!(writes("tar -xzf x.tgz -C .git/hooks"), [".git/hooks"]);
        assert_eq!(writes("tar xzfC x.tgz .git/hooks"), [".git/hooks"]);
        assert_eq!(writes("tar --extract --file=x --directory=d"), ["d"]);
        assert_eq!(writes("tar -czf .git/x.tgz src"), [".git/x.tgz"]);
        assert_eq!(writes("tar czf out.tgz dir"), ["out.tgz"]);
        assert_eq!(writes("tar -rf a.tar b"), ["a.tar"]);
        assert!(
            writes("tar -tzf .git/x.tgz").is_empty(),
            "listing writes nothing"
        );
        assert!(
            writes("tar -xzf .git/x.tgz").is_empty(),
            "into the directory it runs in"
        );
        assert!(writes("tar -czf - src").is_empty());
        assert_eq!(writes("unzip x.zip -d .vscode"), [".vscode"]);
    }
}
