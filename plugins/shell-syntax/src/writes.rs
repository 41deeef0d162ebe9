//! What a program writes, for the programs whose job is to write files: the operands of `tee`
//! and `sponge`; the target of `cp`, `mv`, `ln`, `install`, `rsync` and `scp`; `dd of=`; what
//! `sed` writes (`-i`, its `w` commands); the files `perl -i` edits in place; `curl -o`, `-O`
//! (the URL's name), `-w '%output{FILE}'` and its header, cookie and trace files; `wget`'s
//! file (`-O`, else the URL's name), log, cookies and `-P` directory; the archive `tar
//! -c`/`-r`/`-u` writes, its `--index-file`, and the directory `tar -x -C` (or
//! `--one-top-level`) or `unzip -d` extracts into; what `patch` and `git apply` write
//! ([`crate::patches`]). A directory stands for what is written in
//! it: the gate cannot see an archive's members.
//!
//! Read leniently ([`crate::options::scan`]): an option value given in the next word may be
//! taken for an operand, which only ever names more paths, never fewer. Where the program
//! itself picks the name (`curl -J`, `wget --content-disposition`) or reads it from a file the
//! gate cannot see (`curl -K`, `sed -f`), [`Written::unclear`] says so.

use crate::options::{Wanted, scan};
use crate::wrappers::Input;

/// What a program writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The paths, as written (relative ones from where it runs).
    pub paths: Vec<String>,
    /// Why it may write elsewhere too, where the gate cannot tell.
    pub unclear: Option<String>,
}

impl Written {
    fn paths(paths: Vec<String>) -> Written {
        Written {
            paths,
            unclear: None,
        }
    }
}

/// What the program called `name` (a base name) writes, given `args` and what it reads on
/// standard input (the diff `patch` and `git apply` apply, [`crate::patches`]).
pub fn written(name: &str, args: &[String], input: Input<'_>) -> Written {
    match name {
        "patch" | "gpatch" => crate::patches::patch(args, input),
        "git" => crate::patches::git(args, input),
        "tee" | "sponge" => Written::paths(operands(args)),
        // The second operand: `uniq IN OUT`, `link FILE NEW`, `xxd -r IN OUT`.
        "uniq" | "link" | "xxd" => Written::paths(operands(args).into_iter().skip(1).collect()),
        "sort" => Written::paths(values(args, &[Wanted::new("output", 1, Some('o'))], "kSTt")),
        "cp" | "mv" | "ln" | "install" => Written::paths(target(name, args)),
        "rsync" | "scp" => Written::paths(last_local(args)),
        "dd" => Written::paths(
            args.iter()
                .filter_map(|a| a.strip_prefix("of="))
                .map(str::to_owned)
                .collect(),
        ),
        "sed" | "gsed" => match crate::scripts::sed_writes(args) {
            Ok(paths) => Written::paths(paths),
            Err(why) => Written {
                paths: Vec::new(),
                unclear: Some(format!("`{name}`: {why}")),
            },
        },
        "perl" => Written::paths(perl(args)),
        "curl" => curl(args),
        "wget" | "wget2" => wget(args),
        "tar" | "gtar" | "bsdtar" => Written::paths(tar(args)),
        "unzip" => Written::paths(values(args, &[Wanted::new("", 0, Some('d'))], "")),
        "systemd-run" | "run0" => Written::paths(unit_output(args)),
        "cargo" => cargo(args),
        _ => Written::default(),
    }
}

/// The words of `args` that are not options: those without a leading `-` (or `-` alone), and
/// all after `--`.
fn operands(args: &[String]) -> Vec<String> {
    operands_but(args, &[])
}

/// The same, but for the words at the positions `values` (option values given as the next
/// word, which only the program's own reading tells apart).
fn operands_but(args: &[String], values: &[usize]) -> Vec<String> {
    let mut after_dashes = false;
    args.iter()
        .enumerate()
        .filter(|(at, a)| {
            let operand = after_dashes || !a.starts_with('-') || a.as_str() == "-";
            after_dashes |= a.as_str() == "--";
            operand && a.as_str() != "--" && !values.contains(at)
        })
        .map(|(_, a)| a.clone())
        .collect()
}

/// The values `scan` finds of any of `specs`.
fn values(args: &[String], specs: &[Wanted], valued: &str) -> Vec<String> {
    scan(args, specs, valued)
        .into_iter()
        .filter_map(|(_, value)| value)
        .collect()
}

/// `cp`, `mv`, `ln`, `install`: `-t DIR`/`--target-directory=DIR` (also in a cluster, `-rt
/// DIR`, and abbreviated), and the last operand; `ln` given one operand makes a link of that
/// name here.
fn target(name: &str, args: &[String]) -> Vec<String> {
    let specs = [Wanted::new("target-directory", 1, Some('t'))];
    let mut targets = values(args, &specs, "gmoS");
    // With `-t`, every operand is a source.
    match operands(args).as_slice() {
        _ if !targets.is_empty() => {}
        [_, .., last] => targets.push(last.clone()),
        [only] if name == "ln" => {
            let base = only
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(only);
            targets.push(base.to_owned());
        }
        _ => {}
    }
    // What a link leads to is written through it later (`ln -s .git g; tee g/config`).
    if name == "ln" {
        targets.extend(operands(args));
    }
    targets
}

/// `rsync`, `scp`: the last operand, unless it names another host (`host:path`).
fn last_local(args: &[String]) -> Vec<String> {
    let operands = operands(args);
    let Some(last) = operands.last().filter(|_| operands.len() > 1) else {
        return Vec::new();
    };
    let remote = last
        .split_once(':')
        .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
    if remote {
        Vec::new()
    } else {
        vec![last.clone()]
    }
}

/// `perl -i` (`-pi`, `-i.bak`, `-lpi`: perl reads its switches as perl.c does, `-l` and `-0`
/// taking only digits, `-I DIR` the next word when none is attached, `-i` the rest of its word
/// as the backup suffix): every operand but the code of `-e`/`-E` and the directories of `-I`,
/// and each one's backup ([`backups`]).
fn perl(args: &[String]) -> Vec<String> {
    let mut suffix: Option<String> = None;
    let mut values: Vec<usize> = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let Some(letters) = word
            .strip_prefix('-')
            .filter(|l| !l.is_empty() && *l != "-")
        else {
            break; // the script, or after `--` the files: perl's switches end here.
        };
        let chars: Vec<char> = letters.chars().collect();
        let mut i = 0;
        while let Some(&letter) = chars.get(i) {
            i += 1;
            match letter {
                'i' => {
                    suffix = Some(chars.get(i..).unwrap_or_default().iter().collect());
                    break;
                }
                'e' | 'E' | 'I' => {
                    if i >= chars.len() {
                        values.push(at);
                        at += 1;
                    }
                    break;
                }
                'l' | '0' => {
                    // Octal digits, or after `-0x` hexadecimal ones.
                    let hex = letter == '0' && chars.get(i).is_some_and(|c| *c == 'x');
                    i += usize::from(hex);
                    let digit = |c: &char| {
                        if hex {
                            c.is_ascii_hexdigit()
                        } else {
                            ('0'..='7').contains(c)
                        }
                    };
                    while chars.get(i).is_some_and(digit) {
                        i += 1;
                    }
                }
                'd' => {
                    i += usize::from(chars.get(i) == Some(&'t'));
                    if matches!(chars.get(i), Some(':' | '=')) {
                        break;
                    }
                }
                // Switches whose value is the rest of the word.
                'M' | 'm' | 'F' | 'D' | 'x' | 'C' | 'V' => break,
                _ => {}
            }
        }
    }
    let Some(suffix) = suffix else {
        return Vec::new();
    };
    backups(operands_but(args, &values), &suffix)
}

/// `files`, edited in place, and the backups of them a `-i` `suffix` makes (sed and perl
/// alike): the file's name with the suffix after it, or, when the suffix holds a `*`, the
/// suffix with each `*` the file's base name (`-i'.git/hooks/*'` moves `x` to
/// `.git/hooks/x`).
pub(crate) fn backups(files: Vec<String>, suffix: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(files.len() * 2);
    for file in files {
        if suffix.contains('*') {
            let base = file.rsplit('/').next().unwrap_or(&file);
            out.push(suffix.replace('*', base));
        } else if !suffix.is_empty() {
            out.push(format!("{file}{suffix}"));
        }
        out.push(file);
    }
    out
}

/// `curl`'s options that write a file, `--output-dir` (where `-O` and `-o` write) and
/// `--write-out` (whose `%output{FILE}` writes the rest of its text to FILE), before those
/// that say where only curl or a file knows.
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
    Wanted::new("write-out", 3, Some('w')),
    Wanted::flag("remote-name", 8, Some('O')),
    Wanted::flag("remote-name-all", 12, None),
    Wanted::flag("remote-header-name", 8, Some('J')),
    Wanted::new("config", 3, Some('K')),
    Wanted::new("url", 3, None),
];

/// `curl`'s letters that take a value.
const CURL_VALUED: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";

/// `curl`: the files of its options; with `-O`, each URL's last path segment.
fn curl(args: &[String]) -> Written {
    // curl 8.3+'s `--expand-OPTION` is OPTION with variables expanded in its value.
    let args: Vec<String> = args
        .iter()
        .map(|a| match a.strip_prefix("--expand-") {
            Some(option) => format!("--{option}"),
            None => a.clone(),
        })
        .collect();
    let mut out = Written::default();
    let mut remote_name = false;
    let mut urls_given = Vec::new();
    for (which, value) in scan(&args, CURL, CURL_VALUED) {
        match CURL.get(which).map_or("", |w| w.long) {
            "write-out" if value.as_deref().is_some_and(|v| v.starts_with('@')) => {
                out.unclear =
                    Some("`curl -w @FILE` reads its format (`%output{}`) from a file".into());
            }
            "url" => urls_given.extend(value),
            "output" if value.as_deref().is_some_and(numbered) => {
                out.unclear = Some("`curl -o` names the file after parts of the URL (`#1`)".into());
            }
            "write-out" => out
                .paths
                .extend(value.as_deref().map(write_out).unwrap_or_default()),
            "remote-name" | "remote-name-all" => remote_name = true,
            "remote-header-name" => {
                out.unclear = Some("`curl -J` names the file as the server says".into());
            }
            "config" => {
                out.unclear = Some("`curl -K` reads options (an output file) from a file".into());
            }
            _ => out.paths.extend(value),
        }
    }
    if remote_name {
        let names = urls(&args).chain(urls_given.iter().map(String::as_str));
        out.paths
            .extend(names.filter_map(|url| url_name(url, false)));
    }
    out
}

/// Whether curl's `-o` value `name` refers to a part of a globbed URL (`#1`).
fn numbered(name: &str) -> bool {
    name.split('#')
        .skip(1)
        .any(|after| after.starts_with(|c: char| c.is_ascii_digit()))
}

/// The files `%output{FILE}` (or `%output{>>FILE}`) in curl's `--write-out` text writes.
fn write_out(text: &str) -> Vec<String> {
    text.split("%output{")
        .skip(1)
        .filter_map(|rest| rest.split_once('}'))
        .map(|(file, _)| file.trim_start_matches(">>").to_owned())
        .collect()
}

/// The operands of `args` that may be URLs: any word without a leading `-` (curl and wget
/// take `host/path` without a scheme). An option's value may be among them, which only names
/// more files.
fn urls(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
}

/// `url`'s host and path (without query or fragment), percent-escapes decoded when `decode`
/// (wget decodes them, curl does not).
fn url_parts(url: &str, decode: bool) -> (String, String) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    if !url.contains("://") && !url.contains('/') {
        // A bare word: a host, or a file name given to an option.
        return (rest.to_owned(), String::new());
    }
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = if decode {
        percent_decoded(path)
    } else {
        path.to_owned()
    };
    (host.to_owned(), path)
}

/// The name a download of `url` is saved under: its last path segment, `None` when it has
/// none.
fn url_name(url: &str, decode: bool) -> Option<String> {
    let (_, path) = url_parts(url, decode);
    path.rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

/// `text` with its `%XX` escapes decoded (an escape that is not one is kept).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(decoded) if b == b'%' => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `wget`'s options that write a file, `-P`, the directory it saves into, and `-e`, a
/// `.wgetrc` command, which may set any of them; then those that change the name a URL is
/// saved under, or hand it to the server.
const WGET: &[Wanted] = &[
    Wanted::new("output-document", 8, Some('O')),
    Wanted::new("output-file", 8, Some('o')),
    Wanted::new("append-output", 2, Some('a')),
    Wanted::new("directory-prefix", 3, Some('P')),
    Wanted::new("save-cookies", 6, None),
    Wanted::new("execute", 3, Some('e')),
    Wanted::new("default-page", 3, None),
    Wanted::flag("force-directories", 7, Some('x')),
    Wanted::flag("no-host-directories", 4, None),
    Wanted::flag("content-disposition", 3, None),
    Wanted::flag("trust-server-names", 3, None),
    Wanted::new("config", 4, None),
    Wanted::flag("recursive", 3, Some('r')),
    Wanted::flag("mirror", 2, Some('m')),
    Wanted::flag("page-requisites", 2, Some('p')),
    Wanted::new("input-file", 2, Some('i')),
];

/// `wget`'s letters that take a value (`-nH` is `n` with the value `H`).
const WGET_VALUED: &str = "aABDeiIlnoOPQRtTUwXY";

/// The `.wgetrc` commands that name a file or directory wget writes (its commands are read
/// without case, `_` or `-`).
const WGETRC_WRITES: &[&str] = &["outputdocument", "logfile", "dirprefix", "savecookies"];

/// `wget`: the values of [`WGET`]'s file options; of `-e COMMAND`, the value of a command that
/// names a place it writes; without `-O`, each URL's name (its path with `-x`, after its host
/// unless `-nH`), in `-P`'s directory.
fn wget(args: &[String]) -> Written {
    let mut out = Written::default();
    let (mut document, mut prefix, mut page) = (false, None, None);
    let (mut directories, mut no_host) = (false, false);
    let found = scan(args, WGET, WGET_VALUED);
    // The values of its options are no URLs.
    let taken: Vec<String> = found.iter().filter_map(|(_, v)| v.clone()).collect();
    for (which, value) in found {
        match WGET.get(which).map_or("", |w| w.long) {
            "execute" => {
                let Some((command, value)) = value.as_deref().and_then(|v| v.split_once('='))
                else {
                    continue;
                };
                let command: String = command
                    .chars()
                    .filter(|c| !matches!(c, '_' | '-') && !c.is_whitespace())
                    .collect::<String>()
                    .to_ascii_lowercase();
                let value = value.trim();
                let on = ["on", "1", "yes"].contains(&value.to_ascii_lowercase().as_str());
                match command.as_str() {
                    c if WGETRC_WRITES.contains(&c) => out.paths.push(value.to_owned()),
                    "defaultpage" => page = Some(value.to_owned()),
                    "dirstruct" => directories = on,
                    "addhostdir" => no_host = !on,
                    "contentdisposition" | "trustservernames" | "recursive" | "mirror"
                    | "inputfile" | "pagerequisites" => {
                        out.unclear = Some(format!(
                            "`wget -e {command}=...` has the server or a file name what it saves"
                        ));
                    }
                    _ => {}
                }
            }
            "default-page" => page = value,
            "force-directories" => directories = true,
            "no-host-directories" => no_host = true,
            "content-disposition"
            | "trust-server-names"
            | "recursive"
            | "mirror"
            | "page-requisites" => {
                out.unclear = Some("this `wget` names the files as the server says".into());
            }
            "input-file" => {
                out.unclear = Some("`wget -i` reads the URLs it saves from a file".into());
            }
            "config" => {
                out.unclear = Some("`wget --config` reads its settings from a file".into());
            }
            long => {
                document |= long == "output-document";
                if long == "directory-prefix" {
                    prefix.clone_from(&value);
                }
                out.paths.extend(value);
            }
        }
    }
    // `-nH` as wget reads it: `-n` with `H` among its letters.
    no_host |= args.iter().any(|a| {
        a.strip_prefix("-n")
            .is_some_and(|flags| !a.starts_with("--") && flags.contains('H'))
    });
    if !document {
        for url in urls(args).filter(|u| !taken.iter().any(|t| t == u)) {
            // A bare word is a host (saved as the default page) or an option's value.
            if !url.contains('/') && page.is_none() {
                continue;
            }
            let (host, path) = url_parts(url, true);
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            let name = match path.rsplit('/').next().filter(|n| !n.is_empty()) {
                Some(name) => name.to_owned(),
                None => page.clone().unwrap_or_else(|| "index.html".into()),
            };
            let mut saved = String::new();
            for part in [
                prefix.as_deref(),
                (directories && !no_host).then_some(host.as_str()),
            ]
            .into_iter()
            .flatten()
            .chain(directories.then_some(dir))
            {
                if !part.is_empty() {
                    saved.push_str(part.trim_end_matches('/'));
                    saved.push('/');
                }
            }
            saved.push_str(&name);
            out.paths.push(saved);
        }
    }
    out
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
    Wanted::optional("one-top-level", 3, None),
    Wanted::new("index-file", 3, None),
    Wanted::flag("list", 2, Some('t')),
    Wanted::flag("diff", 2, Some('d')),
];

/// `tar`: the archive (`-f`) when it creates, appends to, updates or deletes from one; the
/// directory (`-C`, `--one-top-level=DIR`) when it extracts; its `--index-file`. The old style
/// (`tar xzfC x.tgz dir`) gives a cluster first, its values in the words after it.
fn tar(args: &[String]) -> Vec<String> {
    let found = crate::smuggled::tar_scan(args, TAR);
    let named = |which: &usize| TAR.get(*which).map_or("", |s| s.long);
    let has = |modes: &[&str]| found.iter().any(|(w, _)| modes.contains(&named(w)));
    let writes_archive = has(&[
        "create",
        "append",
        "update",
        "catenate",
        "concatenate",
        "delete",
    ]);
    let extracts = has(&["extract", "get"]);
    // No mode at all: options given apart from a command (`TAR_OPTIONS`, judged as a line of
    // its own) that may apply to any tar that follows.
    let unknown = !has(&[
        "create",
        "append",
        "update",
        "catenate",
        "concatenate",
        "delete",
        "extract",
        "get",
        "list",
        "diff",
    ]);
    let writes_archive = writes_archive || unknown;
    let extracts = extracts || unknown;
    found
        .iter()
        .filter(|(which, _)| match named(which) {
            "file" => writes_archive,
            "directory" | "one-top-level" => extracts,
            "index-file" => true,
            _ => false,
        })
        .filter_map(|(_, value)| value.clone())
        .filter(|value| value != "-")
        .collect()
}

/// `systemd-run`, `run0`: the files a unit's output goes to (`-p StandardOutput=file:PATH`,
/// `append:`, `truncate:`, and the same for `StandardError=`).
fn unit_output(args: &[String]) -> Vec<String> {
    values(args, &[Wanted::new("property", 8, Some('p'))], "")
        .iter()
        .filter_map(|p| {
            p.strip_prefix("StandardOutput=")
                .or_else(|| p.strip_prefix("StandardError="))
        })
        .filter_map(|to| {
            ["file:", "append:", "truncate:"]
                .iter()
                .find_map(|kind| to.strip_prefix(kind))
        })
        .map(str::to_owned)
        .collect()
}

/// cargo's options whose value is a directory it writes (build output, an install's root).
const CARGO: &[Wanted] = &[
    Wanted::new("target-dir", 10, None),
    Wanted::new("artifact-dir", 12, None),
    Wanted::new("out-dir", 7, None),
    Wanted::new("root", 4, None),
];

/// cargo's settings naming where it builds.
const BUILD_DIRS: &[&str] = &["build.target-dir", "build.build-dir", "build.artifact-dir"];

/// `cargo`: where it builds (`--target-dir`, `--artifact-dir`, `--out-dir`, `--root`, and
/// `--config build.target-dir=`), and the crate `new` or `init` makes; all under `-C DIR`. A
/// setting naming `target-dir` otherwise (`build={target-dir="..."}`) is unclear.
fn cargo(args: &[String]) -> Written {
    let mut paths = values(args, CARGO, "");
    let mut unclear = None;
    for setting in values(args, &[Wanted::new("config", 6, None)], "") {
        match setting.split_once('=') {
            Some((key, value))
                if BUILD_DIRS.contains(&key.replace(['"', '\'', ' '], "").as_str())
                    && !value.contains('\\') =>
            {
                paths.push(value.trim().trim_matches(['"', '\'']).to_owned());
            }
            // `build={target-dir=...}`, `build={"target\u002ddir"=...}`: a table or an escape.
            _ if BUILD_DIRS
                .iter()
                .filter_map(|k| k.strip_prefix("build."))
                .any(|k| setting.contains(k) || setting.contains(&k.replace('-', "_")))
                || setting.trim_start().starts_with("build") && setting.contains(['{', '\\']) =>
            {
                unclear = Some(format!(
                    "`cargo`: its setting `{}` names where it builds as this gate does not read",
                    crate::launchers::shown(&setting)
                ));
            }
            _ => {}
        }
    }
    // Its subcommand: the first word that is no option, past the values of its global options.
    let valued = [
        "--vcs",
        "--name",
        "--edition",
        "--registry",
        "--color",
        "--config",
        "-Z",
        "-C",
    ];
    let mut words = args.iter().take_while(|w| *w != "--");
    let mut subcommand = None;
    while let Some(word) = words.next() {
        if valued.contains(&word.as_str()) {
            words.next();
        } else if subcommand.is_none() && !word.starts_with(['-', '+']) {
            subcommand = Some(word.as_str());
        } else if matches!(subcommand, Some("new" | "init")) && !word.starts_with('-') {
            paths.push(word.clone());
        }
    }
    // `cargo init` with no path makes its crate here.
    if subcommand == Some("init") && !paths.iter().any(|p| !p.starts_with('-')) {
        paths.push(".".into());
    }
    let dir = values(args, &[Wanted::new("", 0, Some('C'))], "").pop();
    Written {
        paths: crate::patches::within(dir.as_deref(), paths),
        unclear,
    }
}

#[cfg(test)]
mod tests {
    use super::written;
    use crate::testing::words;
    use crate::wrappers::Input;

    fn writes(line: &str) -> Vec<String> {
        let words = words(line);
        let (name, args) = words.split_first().expect("a command");
        written(name, args, Input::Unseen).paths
    }

    fn unclear(line: &str) -> bool {
        let words = words(line);
        let (name, args) = words.split_first().expect("a command");
        written(name, args, Input::Unseen).unclear.is_some()
    }

    #[test]
    fn options_apart_from_a_tar_command_may_extract_or_create() {
        assert_eq!(writes("tar --directory=.git/hooks"), [".git/hooks"]);
        assert_eq!(writes("tar -f.git/config"), [".git/config"]);
        assert!(writes("tar -tf x.tar -C .git").is_empty());
        assert!(writes("tar -C .git -cf /tmp/x.tar .").contains(&"/tmp/x.tar".to_owned()));
        assert!(!writes("tar -C .git -cf /tmp/x.tar .").contains(&".git".to_owned()));
    }

    #[test]
    fn cargo_and_unit_outputs_are_written() {
        assert_eq!(writes("cargo build --target-dir=.git/t"), [".git/t"]);
        assert_eq!(writes("cargo install x --root .git"), [".git"]);
        assert_eq!(
            writes("cargo build --config 'build.target-dir=\".git\"'"),
            [".git"]
        );
        assert_eq!(writes("cargo +nightly new --vcs none .git/x"), [".git/x"]);
        assert_eq!(writes("cargo init"), ["."]);
        assert!(writes("cargo build --features new --bin x").is_empty());
        assert!(writes("cargo run -- new x").is_empty());
        assert_eq!(writes("cargo -C .git new x"), [".git/x"]);
        assert!(unclear(
            "cargo build --config 'build={target-dir=\".git\"}'"
        ));
        assert!(!unclear(
            "cargo build --config 'target.x86_64-unknown-linux-gnu.rustflags=[]'"
        ));
        assert!(!unclear("cargo build --config build.target=wasm32-wasip2"));
        assert!(unclear(
            "cargo build --config 'build.target-dir=\"\\u002egit/x\"'"
        ));
        assert_eq!(
            writes("cargo build --config build.artifact-dir=.git/h"),
            [".git/h"]
        );
        assert_eq!(writes("cargo -C .git init"), [".git/."]);
        assert_eq!(
            writes("systemd-run -p StandardError=truncate:/w/.envrc -pStandardOutput=file:/o x"),
            ["/w/.envrc", "/o"]
        );
        assert!(writes("systemd-run -p StandardOutput=journal x").is_empty());
    }

    #[test]
    fn copies_and_tees_write_their_target() {
        assert_eq!(writes("tee -a a b"), ["a", "b"]);
        assert_eq!(writes("cp -r src dst"), ["dst"]);
        assert_eq!(writes("cp -t dir a b"), ["dir"]);
        assert_eq!(writes("cp -rt .git/hooks pre-commit"), [".git/hooks"]);
        assert_eq!(writes("mv --target=.git/hooks x"), [".git/hooks"]);
        assert_eq!(writes("install -Dt .git/hooks x"), [".git/hooks"]);
        assert_eq!(writes("ln -s /tmp/p/.envrc"), [".envrc", "/tmp/p/.envrc"]);
        assert_eq!(
            writes("ln -s .git g"),
            ["g", ".git", "g"],
            "what the link leads to"
        );
        assert_eq!(writes("rsync -t a b"), ["b"]);
        assert!(writes("rsync -a a host:b").is_empty());
        assert_eq!(
            writes("scp h:payload .git/hooks/pre-commit"),
            [".git/hooks/pre-commit"]
        );
        assert!(writes("scp dist/app host:/srv").is_empty());
        assert_eq!(writes("dd if=x of=/dev/sda"), ["/dev/sda"]);
        assert_eq!(writes("sponge .envrc"), [".envrc"]);
    }

    #[test]
    fn editors_write_their_files() {
        assert_eq!(writes("sed -i 's/a/b/' .git/config"), [".git/config"]);
        assert_eq!(writes("sed -ni.bak -e p a b"), ["a.bak", "a", "b.bak", "b"]);
        assert_eq!(
            writes("sed -i'.git/hooks/*' 's/^$//' pre-commit"),
            [".git/hooks/pre-commit", "pre-commit"],
            "a backup suffix with `*` names the backup"
        );
        assert_eq!(writes("perl -i'.envr*' -pe1 c"), [".envrc", "c"]);
        assert_eq!(
            writes("perl -I .envrc -pi -e 's/y/z/' .envrc"),
            [".envrc"],
            "by position"
        );
        assert!(writes("sed --sandbox -n p f").is_empty() && !unclear("sed --sandbox -f x.sed f"));
        assert_eq!(writes("sort -o .envrc a"), [".envrc"]);
        assert_eq!(writes("uniq a .envrc"), [".envrc"]);
        assert_eq!(writes("cp --t .git/hooks x"), [".git/hooks"]);
        assert_eq!(writes("sed --in-place=.bak 's/a/b/' f"), ["f.bak", "f"]);
        assert!(writes("sed 's/a/b/' .git/config").is_empty());
        assert!(
            writes("sed -n -e '/i/p' f").is_empty(),
            "-e's value is no -i"
        );
        assert_eq!(writes("sed -n 'w .git/hooks/x' /tmp/p"), [".git/hooks/x"]);
        assert_eq!(writes("sed 's/a/b/w .envrc' f"), [".envrc"]);
        assert!(unclear("sed -i -f s.sed f"), "a script from a file");
        assert_eq!(writes("perl -pi -e 's/a/b/' .envrc"), [".envrc"]);
        assert_eq!(
            writes("perl -i.bak -pe 's/a/b/' a b"),
            ["a.bak", "a", "b.bak", "b"]
        );
        assert_eq!(
            writes("perl -pie 's/a/b/' f"),
            ["s/a/b/e", "s/a/b/", "fe", "f"],
            "-i's suffix is e"
        );
        assert_eq!(writes("perl -lpi -e 's/a/b/' .git/config"), [".git/config"]);
        assert_eq!(writes("perl -0777 -pi -e 's/a/b/' .envrc"), [".envrc"]);
        assert_eq!(writes("perl -0pi -e 's/a/b/' .envrc"), [".envrc"]);
        assert!(
            writes("perl -0e 'print 1' -- .envrc").is_empty(),
            "-0 then -e"
        );
        assert_eq!(writes("perl -I lib -pi -e 's/x/y/' ci.yml"), ["ci.yml"]);
        assert_eq!(writes("perl -dt -pi -e 1 f"), ["f"]);
        assert!(writes("perl -ne 'print if /i/' .git/config").is_empty());
        assert_eq!(
            writes("perl -e 'print 1' -i f"),
            ["f"],
            "switches go on after -e"
        );
        assert!(
            writes("perl -e 'print 1' -- -i").is_empty(),
            "after --: its @ARGV"
        );
        assert!(writes("perl -Mstrict -e 1 .envrc").is_empty());
    }

    #[test]
    fn downloads_write_where_they_are_told() {
        assert_eq!(
            writes("curl -sSLo .git/hooks/x https://e.x"),
            [".git/hooks/x"]
        );
        assert_eq!(writes("curl -o.envrc https://e.x"), [".envrc"]);
        assert_eq!(writes("curl --output=a --output-dir d u"), ["a", "d"]);
        assert_eq!(writes("curl -c jar -D h u"), ["jar", "h"]);
        assert!(writes("curl -sSL -H 'o: x' https://e.x").is_empty());
        assert_eq!(writes("curl -O https://e.x/a/.npmrc?x=1"), [".npmrc"]);
        assert_eq!(
            writes("curl -s -o /dev/null -w '%output{>>.git/config}x' https://e.x"),
            ["/dev/null", ".git/config"]
        );
        assert!(unclear("curl -OJ https://e.x/a"));
        assert!(unclear("curl -K cfg https://e.x/a"));
        assert_eq!(writes("wget -qO .npmrc u"), [".npmrc"]);
        assert_eq!(writes("wget --output-document=f u"), ["f"]);
        assert_eq!(
            writes("wget -P .git/hooks https://e.x/p"),
            [".git/hooks", ".git/hooks/p"]
        );
        assert_eq!(writes("wget -e output_document=.env u"), [".env"]);
        assert_eq!(writes("wget -e robots=off https://e.x/a.tgz"), ["a.tgz"]);
        assert_eq!(writes("wget https://e.x/%2enpmrc"), [".npmrc"]);
        assert_eq!(
            writes("wget -x -nH https://e.x/.git/hooks/pre-commit"),
            [".git/hooks/pre-commit"]
        );
        assert_eq!(writes("wget -x https://e.x/a/b"), ["e.x/a/b"]);
        assert_eq!(
            writes("wget --default-page=.envrc https://e.x/"),
            [".envrc"]
        );
        assert_eq!(writes("wget https://e.x"), ["index.html"]);
        assert!(unclear("wget --content-disposition https://e.x/a"));
    }

    #[test]
    fn archives_write_their_archive_or_where_they_extract() {
        assert_eq!(writes("tar -xzf x.tgz -C .git/hooks"), [".git/hooks"]);
        assert_eq!(writes("tar xzfC x.tgz .git/hooks"), [".git/hooks"]);
        assert_eq!(writes("tar --extract --file=x --directory=d"), ["d"]);
        assert_eq!(
            writes("tar -xf x.tgz --one-top-level=.git/hooks"),
            [".git/hooks"]
        );
        assert_eq!(writes("tar -tf x.tar --index-file=.envrc"), [".envrc"]);
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
