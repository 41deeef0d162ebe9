//! `search-files`: the lines matching a regular expression in the files under a path. It walks
//! only what the mounts show (WASI preopens), never follows a symbolic link, skips binary files
//! and files over 4 MiB, and bounds its output: at most `max_results` matches, each line cut at
//! 300 bytes, and a last line that says when there were more.

use std::io::Read;
use std::path::Path;

use passepartout_sdk::ToolError;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::io_error;

/// Matches reported when `max_results` is not given.
pub const DEFAULT_RESULTS: usize = 200;
/// Most matches one search reports, whatever `max_results` asks.
pub const MAX_RESULTS: usize = 1000;
/// Most bytes of a matching line reported (cut on a character boundary).
pub const LINE_BYTES: usize = 300;
/// Larger files are skipped.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// A NUL byte among a file's first this-many bytes marks it as binary: skipped.
const BINARY_PROBE: usize = 8 * 1024;

/// The tool's description, for the model.
pub const DESCRIPTION: &str = "Find the lines matching `pattern`, a regular expression (Rust \
    regex syntax: no look-around, no backreferences), in the files under `path` (a file or a \
    directory inside a mount). Reports `path:line: text`, at most `max_results` matches \
    (default 200, at most 1000), each line cut at 300 bytes, and says when there were more. \
    Skips binary files, files over 4 MiB and symbolic links. `case_insensitive: true` (or \
    `(?i)` in the pattern) ignores case.";

/// The JSON Schema of its arguments.
pub const PARAMETERS: &str = r#"{"type":"object","properties":{"path":{"type":"string","x-effect":"path-read","description":"a file or directory inside a mount, e.g. /workspace"},"pattern":{"type":"string","description":"a regular expression (Rust regex syntax), matched against each line"},"max_results":{"type":"integer","minimum":1,"maximum":1000,"default":200},"case_insensitive":{"type":"boolean","default":false}},"required":["path","pattern"]}"#;

/// The arguments of `search-files`.
#[derive(Deserialize)]
pub struct SearchArgs {
    path: String,
    pattern: String,
    #[serde(default)]
    max_results: Option<u64>,
    #[serde(default)]
    case_insensitive: bool,
}

/// Run a search.
///
/// # Errors
/// [`ToolError::InvalidArgs`] for an empty or invalid pattern, `max_results: 0`, or a `path`
/// that is a symbolic link or neither a file nor a directory; the I/O error of `path` itself
/// (not found, outside the mounts). Files below it that cannot be read are counted, not fatal.
pub fn search_files(args: &SearchArgs) -> Result<String, ToolError> {
    let re = compile(&args.pattern, args.case_insensitive)?;
    let limit = max_results(args.max_results)?;
    let path = args.path.as_str();
    // symlink_metadata: the root is not followed either.
    let meta = std::fs::symlink_metadata(path).map_err(|e| io_error(path, &e))?;
    if meta.is_symlink() {
        return Err(ToolError::InvalidArgs(format!(
            "{path} is a symbolic link, which search-files does not follow; search the \
             directory it points to"
        )));
    }
    if !meta.is_dir() && !meta.is_file() {
        return Err(ToolError::InvalidArgs(format!(
            "{path} is neither a file nor a directory"
        )));
    }
    let mut search = Search::new(&re, limit);
    search.walk(Path::new(path));
    Ok(search.report(path, &args.pattern))
}

/// Compile `pattern`, or say what is wrong with it.
///
/// # Errors
/// [`ToolError::InvalidArgs`] naming the regex error (with its position in the pattern).
pub fn compile(pattern: &str, case_insensitive: bool) -> Result<Regex, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::InvalidArgs(
            "pattern must not be empty (it would match every line)".into(),
        ));
    }
    RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| {
            ToolError::InvalidArgs(format!(
                "pattern is not a valid regular expression (Rust regex syntax): {e}"
            ))
        })
}

/// The number of matches to report: `requested`, 200 when absent, at most 1000.
///
/// # Errors
/// [`ToolError::InvalidArgs`] for 0.
pub fn max_results(requested: Option<u64>) -> Result<usize, ToolError> {
    match requested {
        None => Ok(DEFAULT_RESULTS),
        Some(0) => Err(ToolError::InvalidArgs(
            "max_results must be at least 1".into(),
        )),
        Some(n) => Ok(usize::try_from(n).unwrap_or(MAX_RESULTS).min(MAX_RESULTS)),
    }
}

/// True when `bytes` looks binary: a NUL among its first 8 KiB.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(BINARY_PROBE).any(|&b| b == 0)
}

/// `path:line: text`, with trailing white space dropped and the text cut to [`LINE_BYTES`] on a
/// character boundary (then ending in ` [...]`).
pub fn format_hit(path: &str, line_number: usize, line: &str) -> String {
    let line = line.trim_end();
    if line.len() <= LINE_BYTES {
        format!("{path}:{line_number}: {line}")
    } else {
        let cut = &line[..line.floor_char_boundary(LINE_BYTES)];
        format!("{path}:{line_number}: {cut} [...]")
    }
}

/// Append a hit to `hits` for every line of `text` that `re` matches, until `hits` holds
/// `limit`. Returns true when a matching line was left out (the results are cut).
pub fn match_lines(
    re: &Regex,
    path: &str,
    text: &str,
    limit: usize,
    hits: &mut Vec<String>,
) -> bool {
    for (i, line) in text.lines().enumerate() {
        if re.is_match(line) {
            if hits.len() >= limit {
                return true;
            }
            hits.push(format_hit(path, i + 1, line));
        }
    }
    false
}

/// One search in progress.
struct Search<'a> {
    re: &'a Regex,
    limit: usize,
    hits: Vec<String>,
    /// A match was left out.
    cut: bool,
    binary: usize,
    large: usize,
    unreadable: usize,
    symlinks: usize,
}

impl<'a> Search<'a> {
    fn new(re: &'a Regex, limit: usize) -> Self {
        Self {
            re,
            limit,
            hits: Vec::new(),
            cut: false,
            binary: 0,
            large: 0,
            unreadable: 0,
            symlinks: 0,
        }
    }

    /// Depth first, in name order, so that the same tree gives the same report.
    fn walk(&mut self, root: &Path) {
        let mut stack = vec![root.to_path_buf()];
        while let Some(p) = stack.pop() {
            if self.cut {
                break;
            }
            // symlink_metadata: a link is seen as a link, never as what it points to.
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                self.unreadable += 1;
                continue;
            };
            if meta.is_dir() {
                let Ok(entries) = std::fs::read_dir(&p) else {
                    self.unreadable += 1;
                    continue;
                };
                let mut children: Vec<_> = entries.flatten().map(|e| e.path()).collect();
                children.sort();
                stack.extend(children.into_iter().rev());
            } else if meta.is_file() {
                self.file(&p, meta.len());
            } else if meta.is_symlink() {
                self.symlinks += 1;
            }
        }
    }

    fn file(&mut self, path: &Path, len: u64) {
        if len > MAX_FILE_BYTES {
            self.large += 1;
            return;
        }
        let mut bytes = Vec::new();
        let read = std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes));
        if read.is_err() {
            self.unreadable += 1;
            return;
        }
        if bytes.len() as u64 > MAX_FILE_BYTES {
            self.large += 1;
            return;
        }
        if is_binary(&bytes) {
            self.binary += 1;
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        let shown = path.display().to_string();
        self.cut = match_lines(self.re, &shown, &text, self.limit, &mut self.hits);
    }

    fn report(self, path: &str, pattern: &str) -> String {
        let mut out = if self.hits.is_empty() {
            format!("no line under {path} matches {pattern:?}")
        } else {
            self.hits.join("\n")
        };
        if self.cut {
            out.push_str(&format!(
                "\n[cut: more than {} matches; narrow the pattern or the path{}]",
                self.limit,
                if self.limit < MAX_RESULTS {
                    ", or raise max_results (at most 1000)"
                } else {
                    ""
                }
            ));
        }
        let skipped: Vec<String> = [
            (self.binary, "binary file"),
            (self.large, "file over 4 MiB"),
            (self.symlinks, "symbolic link"),
            (self.unreadable, "unreadable entry"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
        .collect();
        if !skipped.is_empty() {
            out.push_str(&format!("\n[skipped: {}]", skipped.join(", ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(pattern: &str, text: &str, limit: usize) -> (Vec<String>, bool) {
        let re = compile(pattern, false).expect("a valid pattern");
        let mut hits = Vec::new();
        let cut = match_lines(&re, "/w/a.txt", text, limit, &mut hits);
        (hits, cut)
    }

    #[test]
    fn lines_match_as_regular_expressions() {
        let text = "fn main() {\n    let x = 42;\r\n}\nfn helper(a: u8) {}\n";
        let (found, cut) = hits(r"^fn \w+\(", text, 10);
        assert_eq!(
            found,
            ["/w/a.txt:1: fn main() {", "/w/a.txt:4: fn helper(a: u8) {}"]
        );
        assert!(!cut);
        // `$` is the end of the line, CRLF or not.
        let (found, _) = hits(r"\d+;$", text, 10);
        assert_eq!(found, ["/w/a.txt:2:     let x = 42;"]);
    }

    #[test]
    fn case_insensitive() {
        let re = compile("error", true).expect("valid");
        let mut found = Vec::new();
        match_lines(&re, "f", "ERROR one\nError two\nfine\n", 10, &mut found);
        assert_eq!(found, ["f:1: ERROR one", "f:2: Error two"]);
        let (found, _) = hits("(?i)érror", "ÉRROR\n", 10);
        assert_eq!(found.len(), 1);
    }

    #[test]
    fn the_limit_cuts_and_says_so() {
        let text = "a\na\na\n";
        let (found, cut) = hits("a", text, 2);
        assert_eq!(found.len(), 2);
        assert!(cut);
        let (found, cut) = hits("a", text, 3);
        assert_eq!(found.len(), 3);
        assert!(!cut, "exactly the limit is not a cut");
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let line = "é".repeat(400); // 800 bytes
        let hit = format_hit("p", 7, &line);
        let text = hit
            .strip_prefix("p:7: ")
            .and_then(|h| h.strip_suffix(" [...]"))
            .expect("prefix and cut marker");
        assert_eq!(text.len(), LINE_BYTES);
        assert!(text.chars().all(|c| c == 'é'));
        let odd = format!("a{line}");
        let hit = format_hit("p", 1, &odd);
        assert!(hit.len() <= "p:1: ".len() + LINE_BYTES + " [...]".len());
        assert_eq!(format_hit("p", 1, "short  \t"), "p:1: short");
    }

    #[test]
    fn invalid_patterns_name_the_error() {
        for bad in ["a(b", "[z-a]", "x{2,1}", r"(?<=a)b", r"(a)\1"] {
            match compile(bad, false) {
                Err(ToolError::InvalidArgs(m)) => {
                    assert!(m.contains("not a valid regular expression"), "{bad}: {m}");
                    assert!(m.contains("error"), "{bad}: {m}");
                }
                Err(e) => panic!("{bad}: wrong error {e:?}"),
                Ok(_) => panic!("{bad} compiled"),
            }
        }
        assert!(matches!(compile("", false), Err(ToolError::InvalidArgs(_))));
    }

    #[test]
    fn max_results_defaults_and_caps() {
        assert_eq!(max_results(None).ok(), Some(DEFAULT_RESULTS));
        assert_eq!(max_results(Some(5)).ok(), Some(5));
        assert_eq!(max_results(Some(1_000_000)).ok(), Some(MAX_RESULTS));
        assert!(matches!(
            max_results(Some(0)),
            Err(ToolError::InvalidArgs(_))
        ));
    }

    #[test]
    fn binary_is_a_nul_in_the_first_8_kib() {
        assert!(!is_binary(b"plain text\n"));
        assert!(is_binary(b"ELF\0\x01"));
        let mut late = vec![b'a'; BINARY_PROBE];
        late.push(0);
        assert!(!is_binary(&late));
    }

    /// The walk, natively: a real directory with a binary file, a big file, a symlink.
    #[test]
    fn walk_skips_binaries_big_files_and_symlinks() {
        let root = std::env::temp_dir().join(format!("files-search-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(root.join("a.txt"), "needle one\nhay\n").expect("write");
        std::fs::write(sub.join("b.txt"), "hay\nNEEDLE two\nneedle three\n").expect("write");
        std::fs::write(root.join("bin.dat"), b"needle\0binary").expect("write");
        let big = "needle\n".repeat((MAX_FILE_BYTES as usize) / 7 + 1);
        std::fs::write(root.join("big.txt"), big).expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("link.txt")).expect("symlink");

        let args = |extra: &str| -> SearchArgs {
            let json = format!(
                r#"{{"path": {:?}, "pattern": "needle"{extra}}}"#,
                root.display().to_string()
            );
            serde_json::from_str(&json).expect("args")
        };
        let out = search_files(&args("")).expect("search");
        let r = root.display();
        assert!(out.starts_with(&format!(
            "{r}/a.txt:1: needle one\n{r}/sub/b.txt:3: needle three"
        )));
        assert!(out.contains("1 binary file"), "{out}");
        assert!(out.contains("1 file over 4 MiB"), "{out}");
        #[cfg(unix)]
        assert!(out.contains("1 symbolic link"), "{out}");
        assert!(!out.contains("cut"), "{out}");

        let out =
            search_files(&args(r#", "case_insensitive": true, "max_results": 2"#)).expect("search");
        assert!(out.contains("[cut: more than 2 matches"), "{out}");
        assert!(out.contains("b.txt:2: NEEDLE two"), "{out}");

        #[cfg(unix)]
        {
            let link: SearchArgs = serde_json::from_str(&format!(
                r#"{{"path": {:?}, "pattern": "x"}}"#,
                root.join("link.txt").display().to_string()
            ))
            .expect("args");
            assert!(matches!(
                search_files(&link),
                Err(ToolError::InvalidArgs(_))
            ));
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
