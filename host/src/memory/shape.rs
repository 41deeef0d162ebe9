//! What a file's shape costs the Org parser, checked before it runs: one linear pass over the
//! lines bounds how deep the parser recurses and how much it rescans.
//!
//! `orgize` recurses once per headline level and once per level of nested list, and reads an
//! element that spans lines (a block, a drawer, a LaTeX environment) by scanning ahead for its
//! closing line, again from every line that opens one. A 30 KB file can overflow a thread's
//! stack, and half a megabyte of unclosed `#+begin_src` lines took 45 s. Inline objects, which
//! recurse and backtrack too, are not parsed at all (`org::parse` turns them off). A file
//! over these bounds is skipped with a warning naming its line; the rest of the ingest goes on.

use std::collections::HashMap;

/// Deepest headline level read; deeper ones would take the parser past its stack.
pub const MAX_LEVEL: usize = 256;

/// Deepest nesting of lists and of greater blocks (`quote`, `center`, a block of any other
/// name) together: the parser recurses per level (~1,000 levels of either fill a 2 MiB stack,
/// what ingest threads have).
pub const MAX_NESTING: usize = 256;

/// Most bytes the parser may rescan for the closing lines of a file's multi-line elements:
/// each opening line counts the bytes to its closing line, or to the end of its section when
/// none follows. The parser scans ~200 MB/s: about a second. A file whose elements close
/// costs about its own size.
pub const MAX_RESCAN: u64 = 256 << 20;

/// Why a file is not parsed: the line (from 1) and what is wrong there.
#[derive(Debug, PartialEq, Eq)]
pub struct TooCostly {
    /// The line that passes the bound.
    pub line: u32,
    /// What the warning says, ending "file skipped".
    pub why: String,
}

/// Check `text` (lines ending at `\n`, as the parser reads them) against the bounds above.
///
/// Opening and closing lines are read as the parser reads them (vendor/orgize, `block.rs`,
/// `drawer.rs`, `dyn_block.rs`, `latex_environment.rs`): where this reading could differ, it
/// takes a line for an opening one and not for a closing one, so that it never counts less
/// than the parser does.
///
/// # Errors
/// The first bound the file passes, and where.
pub fn check(text: &str) -> Result<(), TooCostly> {
    let at = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
    let count = text.split('\n').count();

    // Where each opening line's scan stops: the next closing line of its kind, else the next
    // headline (its section's end), else the end. Found walking backwards, in one pass; the
    // openers kept (line, line it ends at) for the nesting below.
    let mut next_close: HashMap<Kind<'_>, (usize, u64)> = HashMap::new();
    let mut section_end = (count, text.len() as u64 + 1);
    let mut rescan = 0u64;
    let mut openers: Vec<(usize, usize)> = Vec::new();
    let mut end_of_line = text.len() as u64 + 1;
    for (i, line) in text
        .rsplit('\n')
        .enumerate()
        .map(|(k, l)| (count - 1 - k, l))
    {
        let start = end_of_line - line.len() as u64 - 1;
        end_of_line = start;
        if headline_level(line).is_some() {
            section_end = (i, start);
            next_close.clear();
            continue;
        }
        let trimmed = unindented(line);
        // A line may be both (`:END:` opens a drawer named END): its scan starts below it.
        if let Some(kind) = opening(trimmed) {
            let (end, end_at) = next_close.get(&kind).copied().unwrap_or(section_end);
            rescan += end_at - start;
            if rescan > MAX_RESCAN {
                return Err(TooCostly {
                    line: at(i),
                    why: format!(
                        "blocks, drawers or environments that the parser would rescan for more \
                         than {} MiB before their closing lines (unclosed, or nested too many); \
                         file skipped",
                        MAX_RESCAN >> 20
                    ),
                });
            }
            if kind.nests() && end < section_end.0 {
                openers.push((i, end));
            }
        }
        if let Some(kind) = closing(trimmed) {
            next_close.insert(kind, (i, start));
        }
    }
    openers.reverse();

    // Headline levels, and lists and greater blocks nested, forwards.
    let mut indents: Vec<usize> = Vec::new();
    let mut blocks: Vec<usize> = Vec::new();
    let mut next_opener = openers.iter().peekable();
    for (i, line) in text.split('\n').enumerate() {
        if let Some(level) = headline_level(line) {
            if level > MAX_LEVEL {
                return Err(TooCostly {
                    line: at(i),
                    why: format!(
                        "headlines nested more than {MAX_LEVEL} levels deep; file skipped"
                    ),
                });
            }
            indents.clear();
            blocks.clear();
            continue;
        }
        // A block ends at its closing line; one inside another ends with it at the latest.
        while blocks.last().is_some_and(|end| *end < i) {
            blocks.pop();
        }
        if let Some((_, end)) = next_opener.next_if(|(line, _)| *line == i) {
            let end = blocks.last().map_or(*end, |outer| (*end).min(*outer));
            blocks.push(end);
        }
        let trimmed = unindented(line);
        if !trimmed.is_empty() {
            let indent = line.len() - trimmed.len();
            // A deeper item nests in the ones above it that are less indented; any other line
            // at or left of an item ends those at or right of it.
            while indents.last().is_some_and(|top| *top >= indent) {
                indents.pop();
            }
            if list_item(trimmed) {
                indents.push(indent);
            }
        }
        if indents.len() + blocks.len() > MAX_NESTING {
            return Err(TooCostly {
                line: at(i),
                why: format!(
                    "lists and blocks nested more than {MAX_NESTING} levels deep; file skipped"
                ),
            });
        }
    }
    Ok(())
}

/// The level of a headline line (`*** x`: 3), if it is one.
fn headline_level(line: &str) -> Option<usize> {
    // Only what surely is one: a section read shorter than the parser reads it would
    // undercount the rescans.
    let stars = line.bytes().take_while(|b| *b == b'*').count();
    (stars > 0 && line.as_bytes().get(stars) == Some(&b' ')).then_some(stars)
}

/// What a multi-line element is closed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind<'a> {
    /// `#+begin_NAME` … `#+end_NAME` (the name as written: the parser compares it so).
    Block(&'a str),
    /// `#+begin: NAME` … `#+end:`.
    Dynamic,
    /// `:NAME:` … `:end:`.
    Drawer,
    /// `\begin{NAME}` … `\end{NAME}`.
    Latex(&'a str),
}

impl Kind<'_> {
    /// Whether its contents are parsed as elements (so nest): a block other than the
    /// verbatim ones, a drawer, a dynamic block. (A drawer or dynamic block ends at the first
    /// `:END:`/`#+END:`, so cannot hold another of its kind.)
    fn nests(self) -> bool {
        match self {
            Kind::Block(name) => !super::org::VERBATIM_BLOCKS
                .iter()
                .any(|v| name.eq_ignore_ascii_case(v)),
            Kind::Dynamic | Kind::Drawer => true,
            Kind::Latex(_) => false,
        }
    }
}

/// The element `line` (without its indentation) opens, if it may open one: `#+BEGIN_` and
/// letters, `#+BEGIN:`, `:NAME:` alone on its line (letters, `-`, `_`), `\begin{NAME}`.
fn opening(line: &str) -> Option<Kind<'_>> {
    if let Some(rest) = strip_prefix_ignore_case(line, "#+begin_") {
        let name = letters(rest);
        return (!name.is_empty()).then_some(Kind::Block(name));
    }
    if strip_prefix_ignore_case(line, "#+begin:").is_some() {
        return Some(Kind::Dynamic);
    }
    if let Some(rest) = line.strip_prefix("\\begin{") {
        let name = rest.split('}').next().filter(|n| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '*')
        })?;
        return rest[name.len()..]
            .starts_with('}')
            .then_some(Kind::Latex(name));
    }
    let (name, rest) = line.strip_prefix(':')?.split_once(':')?;
    let drawer = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_')
        && blank(rest);
    drawer.then_some(Kind::Drawer)
}

/// The element `line` (without its indentation) closes, if it surely closes one: `#+END_NAME`
/// (the name as written), `#+END:`, `:END:` or `\end{NAME}`, then only spaces and tabs.
fn closing(line: &str) -> Option<Kind<'_>> {
    if let Some(rest) = strip_prefix_ignore_case(line, "#+end_") {
        let name = letters(rest);
        return (!name.is_empty() && blank(&rest[name.len()..])).then_some(Kind::Block(name));
    }
    if let Some(rest) = strip_prefix_ignore_case(line, "#+end:") {
        return blank(rest).then_some(Kind::Dynamic);
    }
    if let Some(rest) = line.strip_prefix("\\end{") {
        let (name, after) = rest.split_once('}')?;
        return (!name.is_empty() && blank(after)).then_some(Kind::Latex(name));
    }
    let rest = strip_prefix_ignore_case(line, ":end:")?;
    blank(rest).then_some(Kind::Drawer)
}

/// `line` is a list item: a bullet (`-`, `+`, `*` indented) or a counter (`1.`, `a)`) and a
/// space or the line's end.
fn list_item(line: &str) -> bool {
    let bytes = line.as_bytes();
    let marker = match bytes.first() {
        Some(b'-' | b'+' | b'*') => 1,
        Some(b) if b.is_ascii_alphanumeric() => {
            let n = bytes
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            match bytes.get(n) {
                Some(b'.' | b')') => n + 1,
                _ => return false,
            }
        }
        _ => return false,
    };
    matches!(bytes.get(marker), Some(b' ' | b'\t') | None)
}

/// `line` without its indentation: spaces and tabs, as the parser reads it.
fn unindented(line: &str) -> &str {
    line.trim_start_matches([' ', '\t'])
}

/// Nothing but spaces and tabs.
fn blank(text: &str) -> bool {
    text.bytes().all(|b| b == b' ' || b == b'\t')
}

/// The ASCII letters `text` starts with.
fn letters(text: &str) -> &str {
    let n = text.bytes().take_while(u8::is_ascii_alphabetic).count();
    &text[..n]
}

/// `text` past `prefix`, compared ignoring ASCII case.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_on_small_stack(text: String) -> std::time::Duration {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let started = std::time::Instant::now();
                let mut warnings = Vec::new();
                let _ = super::super::org::parse(
                    "f.org",
                    &text,
                    &super::super::org::TodoKeywords::default(),
                    &mut warnings,
                );
                started.elapsed()
            })
            .expect("spawn")
            .join()
            .expect("the parse returns")
    }

    /// Each shape that took the parser seconds or its stack is refused, naming its line,
    /// and one just inside each bound parses in well under a second on a 2 MiB stack.
    #[test]
    fn costly_shapes_are_refused_and_those_inside_the_bounds_parse_quickly() {
        let nested_lists =
            |n: usize| -> String { (0..n).map(|i| format!("{}- a\n", " ".repeat(i))).collect() };
        // Blocks of distinct names nest (one of the same name ends at the first end line).
        let name = |i: usize| -> String {
            (0..4)
                .map(|k| char::from(b'a' + u8::try_from(i / 26usize.pow(k) % 26).unwrap_or(0)))
                .collect()
        };
        let nested_blocks = |n: usize| -> String {
            let open: String = (0..n).map(|i| format!("#+begin_{}\n", name(i))).collect();
            let close: String = (0..n)
                .rev()
                .map(|i| format!("#+end_{}\n", name(i)))
                .collect();
            format!("{open}x\n{close}")
        };
        let refused = [
            (
                "unclosed blocks",
                "* h\n".to_owned() + &"#+begin_src\n".repeat(40_000),
            ),
            (
                "nested quotes",
                "#+begin_quote\n".repeat(20_000) + "x\n" + &"#+end_quote\n".repeat(20_000),
            ),
            (
                "nested drawers",
                ":D:\n".repeat(20_000) + "x\n" + &":END:\n".repeat(20_000),
            ),
            ("unclosed environments", "\\begin{x}\n".repeat(20_000)),
            ("unclosed dynamic blocks", "#+BEGIN: x\n".repeat(20_000)),
            ("nested lists", nested_lists(MAX_NESTING + 1)),
            (
                "nested blocks of distinct names",
                nested_blocks(MAX_NESTING + 1),
            ),
            (
                "closing lines the parser does not take",
                "* h\n".to_owned() + &"#+begin_src\n#+end_SRC\n#+end_src x\n".repeat(40_000),
            ),
            (
                "deep headlines",
                (1..=MAX_LEVEL + 1)
                    .map(|l| "*".repeat(l) + " a\n")
                    .collect(),
            ),
        ];
        for (what, text) in refused {
            let Err(e) = check(&text) else {
                panic!("{what}: passed")
            };
            assert!(
                e.why.ends_with("file skipped") && e.line > 0,
                "{what}: {e:?}"
            );
        }
        let fine = [
            ("lists at the bound", nested_lists(MAX_NESTING)),
            ("blocks at the bound", nested_blocks(MAX_NESTING)),
            (
                "lists and blocks at the bound together",
                nested_lists(MAX_NESTING / 2) + &nested_blocks(MAX_NESTING / 2),
            ),
            (
                "tags that are no drawers, in one long section",
                "* h\n".to_owned() + &":tag: a note\nplain text\n".repeat(200_000),
            ),
            (
                "closed blocks",
                "* h\n".to_owned() + &"#+begin_src sh\necho\n#+end_src\n".repeat(100_000),
            ),
            (
                "unclosed blocks in small sections",
                "* h\n#+begin_src\n".repeat(50_000),
            ),
            (
                "a drawer per headline",
                "* h\n:PROPERTIES:\n:ID: x\n:END:\n".repeat(50_000),
            ),
            (
                "a long line of paths",
                "* h\n".to_owned() + &"/usr/bin /etc/x ".repeat(100_000),
            ),
            (
                "nested footnotes",
                "* h\n".to_owned() + &"[fn::".repeat(50_000) + &"]".repeat(50_000),
            ),
            (
                "nested emphasis",
                "* h\n".to_owned() + &"*/_+".repeat(20_000) + "x" + &"+_/*".repeat(20_000),
            ),
        ];
        for (what, text) in fine {
            assert_eq!(check(&text), Ok(()), "{what}");
            let took = parse_on_small_stack(text);
            assert!(took < std::time::Duration::from_secs(2), "{what}: {took:?}");
        }
    }

    #[test]
    fn openers_and_closers_are_read_as_the_parser_reads_them() {
        assert_eq!(opening("#+BEGIN_SRC rust"), Some(Kind::Block("SRC")));
        assert_eq!(opening("#+begin_a1"), Some(Kind::Block("a")));
        assert_eq!(opening("#+begin_"), None);
        assert_eq!(closing("#+end_SRC"), Some(Kind::Block("SRC")));
        assert_ne!(closing("#+end_SRC"), Some(Kind::Block("src")));
        assert_eq!(closing("#+end_src x"), None);
        assert_eq!(closing("#+end_src \t"), Some(Kind::Block("src")));
        assert_eq!(opening("#+begin: clocktable"), Some(Kind::Dynamic));
        assert_eq!(closing("#+END:x"), None);
        assert_eq!(opening(":PROPERTIES:"), Some(Kind::Drawer));
        assert_eq!(opening(":END:"), Some(Kind::Drawer));
        assert_eq!(closing(":END: "), Some(Kind::Drawer));
        assert_eq!(closing(":END:x"), None);
        assert_eq!(opening(":ID: x"), None);
        assert_eq!(opening(":a1:"), None);
        assert_eq!(opening("\\begin{align*} x"), Some(Kind::Latex("align*")));
        assert_eq!(closing("\\end{align*}junk"), None);
        assert_eq!(unindented("\x0c#+end_src"), "\x0c#+end_src");
        assert!(list_item("- a") && list_item("12. b") && list_item("a) c") && list_item("+"));
        assert!(!list_item("-a") && !list_item("word") && !list_item("1.5"));
        assert_eq!(headline_level("** a"), Some(2));
        assert_eq!(headline_level("**a"), None);
        assert_eq!(headline_level("*"), None);
    }
}
