//! Org-mode files to headline trees, with the `orgize` parser (lossless, so line numbers and
//! write-back offsets are exact). Malformed input is parsed as far as the parser goes; what looks
//! wrong is reported as a [`Warning`] naming the file and line, never as a crash.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use orgize::ParseConfig;
use orgize::ast::Headline;
use sha2::digest::Output;
use sha2::{Digest, Sha256};

/// Something odd in a file, kept going past.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// The file.
    pub file: String,
    /// The line (1-based), or 0 for the whole file.
    pub line: u32,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

/// One headline as parsed, with its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedHeadline {
    /// `:ID:` from the drawer, or a stable ID derived from the file and the title path.
    pub id: String,
    /// True when the ID was derived.
    pub derived_id: bool,
    /// Line of the headline (1-based).
    pub line: u32,
    /// Outline level.
    pub level: u32,
    /// Title without keyword, priority or tags.
    pub title: String,
    /// TODO keyword.
    pub todo: Option<String>,
    /// The keyword is a done one (after `|` in the file's `#+TODO:`, or DONE/CANCELLED).
    pub done: bool,
    /// Own tags.
    pub tags: Vec<String>,
    /// The property drawer, in order.
    pub properties: Vec<(String, String)>,
    /// The CLOSED timestamp, as written.
    pub closed: Option<String>,
    /// Text before the first child.
    pub body: String,
    /// A property drawer follows the headline but Org reads it as text (a line in it is not a
    /// property, or it never closes): an `:ID:` written into it would not count, so
    /// `--write-ids` leaves the headline alone.
    pub drawer_is_text: bool,
    /// Child headlines.
    pub children: Vec<ParsedHeadline>,
}

/// A parsed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedFile {
    /// `#+TITLE:`, or the file name.
    pub title: String,
    /// Text before the first headline.
    pub preamble: String,
    /// Top-level headlines.
    pub headlines: Vec<ParsedHeadline>,
}

/// Most keywords of each kind (to do, done) a file or the configuration declares; those
/// beyond are dropped with a warning. Org has no limit, but a `#+TODO:` line of 80,000
/// keywords is no one's workflow, and the parser matches every headline against the list.
pub const MAX_KEYWORDS: usize = 256;

/// The keywords of each kind (to do, done) a [`TodoKeywords`] holds, as sets.
#[derive(Default)]
struct Known([HashSet<String>; 2]);

/// The TODO keywords of a file: those not done, and the done ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TodoKeywords {
    /// Keywords of things to do (`TODO`).
    pub todo: Vec<String>,
    /// Keywords of things done (`DONE`).
    pub done: Vec<String>,
    /// The line (1-based; 0 outside a file) of the first keyword line that declared more than
    /// [`MAX_KEYWORDS`] of a kind, whose keywords beyond were dropped.
    cut: Option<u32>,
}

impl Default for TodoKeywords {
    /// Org's default: `TODO | DONE`.
    fn default() -> Self {
        TodoKeywords::parse("TODO | DONE")
    }
}

impl TodoKeywords {
    /// Keywords written as in a `#+TODO:` line: `TODO NEXT | DONE CANCELLED`. Fast-access keys
    /// (`WAIT(w@/!)`) are dropped; without `|`, the last keyword is the done one (as in Org).
    /// At most [`MAX_KEYWORDS`] of each kind: those beyond are dropped.
    pub fn parse(line: &str) -> TodoKeywords {
        let mut k = TodoKeywords::none();
        k.add_line(line, 0, &mut Known::default());
        k
    }

    fn none() -> TodoKeywords {
        TodoKeywords {
            todo: Vec::new(),
            done: Vec::new(),
            cut: None,
        }
    }

    /// Add the keywords of `line` (line `at` of its file, 0 outside one), each once, at most
    /// [`MAX_KEYWORDS`] of each kind (linear in the line's length: `known`, kept across the
    /// lines of a file, says which are in the lists already).
    fn add_line(&mut self, line: &str, at: u32, known: &mut Known) {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.split('(').next().unwrap_or(w))
            .filter(|w| !w.is_empty())
            .collect();
        let (todo, done): (&[&str], &[&str]) = match words.iter().position(|w| *w == "|") {
            Some(bar) => (&words[..bar], &words[bar + 1..]),
            None => match words.split_last() {
                Some((last, rest)) => (rest, std::slice::from_ref(last)),
                None => (&[], &[]),
            },
        };
        let mut cut = false;
        for ((list, words), known) in [(&mut self.todo, todo), (&mut self.done, done)]
            .into_iter()
            .zip(known.0.iter_mut())
        {
            for w in words.iter().filter(|w| **w != "|") {
                if known.contains(*w) {
                    continue;
                }
                if list.len() >= MAX_KEYWORDS {
                    cut = true;
                    break;
                }
                known.insert((*w).to_owned());
                list.push((*w).to_owned());
            }
        }
        if cut && self.cut.is_none() {
            self.cut = Some(at);
        }
    }

    /// The warning for keywords dropped beyond [`MAX_KEYWORDS`] (`cut`: the field of that
    /// name), if any were, in `file`. Takes the field alone: `parse` has moved the lists.
    fn cut_warning(cut: Option<u32>, file: &str) -> Option<Warning> {
        cut.map(|line| Warning {
            file: file.into(),
            line,
            message: format!(
                "more than {MAX_KEYWORDS} TODO keywords of a kind (to do, or done); those after \
                 the {MAX_KEYWORDS}th are not keywords here"
            ),
        })
    }

    /// The keywords `text` declares with `#+TODO:`, `#+SEQ_TODO:` or `#+TYP_TODO:` lines (not
    /// inside verbatim blocks), all of them together; `default` when it has none (a file's
    /// lines replace the default, as in Org).
    pub fn of_file(text: &str, default: &TodoKeywords) -> TodoKeywords {
        let mut k = TodoKeywords::none();
        let mut known = Known::default();
        let mut any = false;
        let lines: Vec<&str> = text.lines().collect();
        let verbatim = verbatim_lines(&lines);
        for (n, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            // A `#+TODO:` shown in a source or example block is its text.
            if !t.starts_with("#+") || verbatim.contains(&n) {
                continue;
            }
            let Some((name, rest)) = t[2..].split_once(':') else {
                continue;
            };
            if ["TODO", "SEQ_TODO", "TYP_TODO"]
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n))
            {
                any = true;
                k.add_line(rest, u32::try_from(n + 1).unwrap_or(u32::MAX), &mut known);
            }
        }
        if any {
            k
        } else {
            // The configuration's own cut is not this file's to warn of (nor at every file).
            TodoKeywords {
                cut: None,
                ..default.clone()
            }
        }
    }
}

/// The lines inside verbatim blocks (`src`, `example`, `export`, `comment`, `verse`), each from
/// its `#+begin_NAME` to the `#+end_NAME` that closes it; a block that never closes is none
/// (Org reads its first line as a paragraph).
/// The blocks whose contents Org keeps as text (not parsed into elements), by lower-case name.
pub(crate) const VERBATIM_BLOCKS: [&str; 5] = ["src", "example", "export", "comment", "verse"];

fn verbatim_lines(lines: &[&str]) -> std::collections::HashSet<usize> {
    let mut inside = std::collections::HashSet::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in lines.iter().enumerate() {
        let lower = line.trim().to_ascii_lowercase();
        match &open {
            Some((start, name)) if lower == format!("#+end_{name}") => {
                inside.extend(*start..=n);
                open = None;
            }
            Some(_) => {}
            None => {
                let name = lower
                    .strip_prefix("#+begin_")
                    .and_then(|r| r.split_whitespace().next())
                    .filter(|name| VERBATIM_BLOCKS.contains(name));
                if let Some(name) = name {
                    open = Some((n, name.to_owned()));
                }
            }
        }
    }
    inside
}

/// Parse `text` (the contents of `file`) into headlines, appending warnings. `keywords` are
/// the TODO keywords of a file without `#+TODO:` lines (`[memory] todo_keywords`).
pub fn parse(
    file: &str,
    text: &str,
    keywords: &TodoKeywords,
    warnings: &mut Vec<Warning>,
) -> ParsedFile {
    // The one place text enters the parser: from here on a line ends at a `\n`, for the parser,
    // the line index and the line-by-line reads below alike.
    let normalized = normalize_line_breaks(text);
    let text: &str = &normalized;
    let keywords = TodoKeywords::of_file(text, keywords);
    let config = ParseConfig {
        todo_keywords: (keywords.todo, keywords.done),
        // Structure only: the store never reads objects (markup, links, footnotes in text),
        // and parsing them is cubic in a line of unclosed markers and recursive per level of
        // nesting (a 30 KB file of nested footnotes overflowed the stack; vendor/README.md).
        objects: false,
        ..ParseConfig::default()
    };
    let org = config.parse(text);
    warnings.extend(TodoKeywords::cut_warning(keywords.cut, file));
    let lines = LineIndex::new(text);
    let text_lines: Vec<&str> = text.lines().collect();
    let document = org.document();
    let title = org
        .title()
        .unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).to_owned());
    let preamble = document.section().map(|s| s.raw()).unwrap_or_default();
    let mut in_file = Sha256::new();
    in_file.update(file.as_bytes());
    let mut seen = Seen::new();
    let headlines = document
        .headlines()
        .map(|h| {
            let at = (&lines, text_lines.as_slice());
            headline(file, &h, at, &in_file, &mut seen, warnings)
        })
        .collect();
    check_drawers(file, text, warnings);
    ParsedFile {
        title,
        preamble,
        headlines,
    }
}

/// `text` with every lone carriage return (one not followed by a line feed) made a line feed.
/// The parser ends a line at `\n`, `\r\n` and a lone `\r`; [`str::lines`], the line index and
/// the depth check at `\n` only, so without this they disagree on where headlines are (a file
/// of `* a\r** a\r…` would be one line to them and thousands of nested levels to the parser).
/// `\r\n` is kept: it is one line break to all of them, and the text of a file written with
/// them stays as it was (so do its nodes' hashes).
pub fn normalize_line_breaks(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = |i: &usize| bytes.get(i + 1) != Some(&b'\n');
    if !memchr::memchr_iter(b'\r', bytes).any(|i| lone(&i)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for i in memchr::memchr_iter(b'\r', bytes).filter(lone) {
        // A `\r` is one byte and never inside a character: both ends are boundaries.
        out.push_str(&text[from..i]);
        out.push('\n');
        from = i + 1;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// The occurrences of each title path in a file so far, by the digest of the path (a fixed
/// size, however long the titles: the path itself could be a megabyte per headline).
type Seen = HashMap<Output<Sha256>, u32>;

fn headline(
    file: &str,
    h: &Headline,
    (lines, text): (&LineIndex, &[&str]),
    parent: &Sha256,
    seen: &mut Seen,
    warnings: &mut Vec<Warning>,
) -> ParsedHeadline {
    let line = lines.line(u32::from(h.start()));
    // As written: only the space after the keyword and before the tags goes.
    let mut title = h.title_raw().trim().to_owned();
    let mut tags: Vec<String> = h.tags().map(|t| t.as_ref().to_owned()).collect();
    if tags.is_empty() {
        // The parser misses tags after a title that has colons of its own.
        (title, tags) = split_tags(&title);
    }
    // Read here rather than by the parser, which drops a whole drawer over one empty value
    // and the `+` of `header-args+`.
    let mut body = h.section().map(|s| s.raw()).unwrap_or_default();
    let mut drawer_is_text = false;
    let properties = match property_drawer(text, line) {
        Drawer::Read(properties) => {
            body = without_drawer(&body);
            properties
        }
        Drawer::Text { at } => {
            warnings.push(Warning {
                file: file.into(),
                line: at,
                message: "this line of a property drawer is not a `:KEY: value` property, so Org \
                          reads the whole drawer as text: its properties (an :ID: too) are not \
                          used. Remove the line or make it a property"
                    .into(),
            });
            drawer_is_text = true;
            Vec::new()
        }
        // `check_drawers` warns of it.
        Drawer::Unclosed => {
            drawer_is_text = true;
            Vec::new()
        }
        Drawer::Absent => Vec::new(),
    };
    // The title path, hashed as the key `derive_id` takes (the file, then `\n` and a title per
    // level): one hash state per level, each title fed once, instead of a copy of the whole
    // path per headline.
    let mut path = parent.clone();
    path.update(b"\n");
    path.update(title.as_bytes());
    let explicit = properties
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("ID"))
        .map(|(_, v)| v.clone())
        .filter(|v| !v.is_empty());
    let (id, derived_id) = match explicit {
        Some(id) => (id, false),
        None => {
            let n = seen.entry(path.clone().finalize()).or_insert(0);
            *n += 1;
            (id_of(&path, *n), true)
        }
    };
    if h.level() > 64 {
        warnings.push(Warning {
            file: file.into(),
            line,
            message: format!("headline nested {} levels deep", h.level()),
        });
    }
    let children = h
        .headlines()
        .map(|c| headline(file, &c, (lines, text), &path, seen, warnings))
        .collect();
    ParsedHeadline {
        id,
        derived_id,
        line,
        level: u32::try_from(h.level()).unwrap_or(u32::MAX),
        title,
        todo: h.todo_keyword().map(|t| t.as_ref().to_owned()),
        done: h.is_done(),
        tags,
        properties,
        closed: h.closed().map(|t| t.raw().trim().to_owned()),
        body,
        drawer_is_text,
        children,
    }
}

/// A stable ID for a headline without one: the same file, title path and occurrence give the
/// same ID on every run and machine. `key` is the file's name, then a `\n` and a title for each
/// level down to the headline's own; `occurrence` counts the headlines with that key so far.
pub fn derive_id(key: &str, occurrence: u32) -> String {
    let mut path = Sha256::new();
    path.update(key.as_bytes());
    id_of(&path, occurrence)
}

/// What [`derive_id`] gives for the key that `path` has been fed.
fn id_of(path: &Sha256, occurrence: u32) -> String {
    let mut digest = path.clone();
    digest.update(format!("\n{occurrence}").as_bytes());
    format!("pp-{}", &hex::encode(digest.finalize())[..20])
}

/// `title` without the tags it ends with (Org's `:tag1:tag2:` after a space: letters, digits,
/// `_`, `@`, `#`, `%`), and those tags.
fn split_tags(title: &str) -> (String, Vec<String>) {
    let Some((before, last)) = title.rsplit_once([' ', '\t']) else {
        return (title.to_owned(), Vec::new());
    };
    let tag_char = |c: char| c.is_alphanumeric() || "_@#%:".contains(c);
    if last.len() < 3
        || !last.starts_with(':')
        || !last.ends_with(':')
        || !last.chars().all(tag_char)
    {
        return (title.to_owned(), Vec::new());
    }
    let tags = last
        .split(':')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    (before.trim_end().to_owned(), tags)
}

/// What follows a headline and its planning lines.
enum Drawer {
    /// No property drawer.
    Absent,
    /// A property drawer that never closes (the next headline or the end of the file comes
    /// first): Org reads it as text, and [`check_drawers`] warns of it.
    Unclosed,
    /// A property drawer: each `:KEY: value` as written, in order.
    Read(Vec<(String, String)>),
    /// A drawer with a line (`at`, 1-based) that is not a property: Org reads it as text.
    Text {
        /// The first such line.
        at: u32,
    },
}

/// The property drawer right after the headline on `line` (1-based) and its planning lines:
/// each `:KEY: value` as written (a key keeps its `+`; an empty value is a value). The read
/// stops at `:END:` or at the next headline, whichever comes first, so a drawer that never
/// closes is read for its own headline only: each line of a file is read for one headline at
/// most (headlines are on lines of their own once [`parse`] has normalised the line breaks).
fn property_drawer(text: &[&str], line: u32) -> Drawer {
    let Ok(start) = usize::try_from(line) else {
        return Drawer::Absent;
    };
    let mut rest = text.iter().enumerate().skip(start);
    let mut next = rest.next();
    while let Some((_, l)) = next
        && is_planning(l)
    {
        next = rest.next();
    }
    if !next.is_some_and(|(_, l)| l.trim().eq_ignore_ascii_case(":PROPERTIES:")) {
        return Drawer::Absent;
    }
    let mut properties = Vec::new();
    let mut bad = None;
    for (n, l) in rest {
        let t = l.trim();
        if t.eq_ignore_ascii_case(":END:") {
            return match bad {
                None => Drawer::Read(properties),
                Some(at) => Drawer::Text { at },
            };
        }
        if l.starts_with('*') && l.trim_start_matches('*').starts_with([' ', '\t']) {
            return Drawer::Unclosed;
        }
        // Only property lines up to `:END:` make a property drawer (as Org reads one).
        match node_property(t) {
            Some(p) => properties.push(p),
            None => {
                bad.get_or_insert(u32::try_from(n + 1).unwrap_or(u32::MAX));
            }
        }
    }
    Drawer::Unclosed
}

/// `:NAME: VALUE` or `:NAME:`: the name ends at the first `:` followed by a space or the end
/// of the line (so it may hold a `:`), and has no space in it.
fn node_property(line: &str) -> Option<(String, String)> {
    let after = line.strip_prefix(':')?;
    let end = after
        .char_indices()
        .find(|(i, c)| {
            *c == ':'
                && after[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map(|(i, _)| i)?;
    let name = &after[..end];
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    Some((name.to_owned(), after[end + 1..].trim().to_owned()))
}

/// A section's text without the property drawer it starts with (the parser leaves a drawer it
/// could not read in the section).
fn without_drawer(body: &str) -> String {
    let mut lines = body.split_inclusive('\n');
    let mut skipped = 0;
    for l in lines.by_ref() {
        skipped += l.len();
        if l.trim().eq_ignore_ascii_case(":END:") {
            break;
        }
    }
    if body
        .trim_start()
        .to_ascii_uppercase()
        .starts_with(":PROPERTIES:")
    {
        body[skipped.min(body.len())..].to_owned()
    } else {
        body.to_owned()
    }
}

/// Warn about property drawers that never end (the parser then reads them as text).
fn check_drawers(file: &str, text: &str, warnings: &mut Vec<Warning>) {
    let mut open: Option<u32> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        let n = u32::try_from(n + 1).unwrap_or(u32::MAX);
        if t.eq_ignore_ascii_case(":PROPERTIES:") || t.eq_ignore_ascii_case(":LOGBOOK:") {
            if let Some(start) = open {
                warnings.push(unclosed(file, start));
            }
            open = Some(n);
        } else if t.eq_ignore_ascii_case(":END:") {
            open = None;
        } else if t.starts_with('*')
            && t.trim_start_matches('*').starts_with(' ')
            && let Some(start) = open.take()
        {
            warnings.push(unclosed(file, start));
        }
    }
    if let Some(start) = open {
        warnings.push(unclosed(file, start));
    }
}

fn unclosed(file: &str, line: u32) -> Warning {
    Warning {
        file: file.into(),
        line,
        message: "drawer opened here is never closed with :END: (read as plain text)".into(),
    }
}

/// Byte offset → line number, in text whose lines end at `\n` ([`normalize_line_breaks`]).
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        LineIndex { starts }
    }

    fn line(&self, offset: u32) -> u32 {
        let idx = self.starts.partition_point(|s| *s <= offset);
        u32::try_from(idx).unwrap_or(u32::MAX)
    }
}

/// `text` with an `:ID:` property written into every headline whose line is in `ids` (line →
/// ID): added to its property drawer, or a new drawer after the headline and its planning line.
/// Lines are counted as [`parse`] counts them (a lone `\r` ends one too); the rest of the text
/// is kept byte for byte, and the lines added end as the headline's line does. A headline whose
/// drawer Org reads as text ([`ParsedHeadline::drawer_is_text`]) must not be in `ids`: the ID
/// would go into that drawer and not count.
pub fn write_ids(text: &str, ids: &std::collections::BTreeMap<u32, String>) -> String {
    let lines = lines_with_breaks(text);
    let mut out = String::with_capacity(text.len() + ids.len() * 48);
    let mut i = 0;
    while i < lines.len() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.push_str(lines[i]);
        let nl = line_break(lines[i]);
        i += 1;
        let Some(id) = ids.get(&n) else { continue };
        if !out.ends_with(['\n', '\r']) {
            out.push_str(nl);
        }
        while i < lines.len() && is_planning(lines[i]) {
            out.push_str(lines[i]);
            i += 1;
        }
        if i < lines.len() && lines[i].trim().eq_ignore_ascii_case(":PROPERTIES:") {
            out.push_str(lines[i]);
            i += 1;
            out.push_str(&format!(":ID:       {id}{nl}"));
        } else {
            out.push_str(&format!(":PROPERTIES:{nl}:ID:       {id}{nl}:END:{nl}"));
        }
    }
    out
}

/// `text` cut after each line break the parser reads (`\n`, `\r\n` or a lone `\r`), each line
/// with its break; the last line may have none.
fn lines_with_breaks(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut from = 0;
    for (i, b) in bytes.iter().enumerate() {
        let ends = match b {
            b'\n' => true,
            b'\r' => bytes.get(i + 1) != Some(&b'\n'),
            _ => false,
        };
        if ends {
            // Both bytes are ASCII: `i + 1` is a character boundary.
            lines.push(&text[from..=i]);
            from = i + 1;
        }
    }
    if from < text.len() {
        lines.push(&text[from..]);
    }
    lines
}

/// The line break `line` ends with, or `\n` when it has none (the last line).
fn line_break(line: &str) -> &'static str {
    if line.ends_with("\r\n") {
        "\r\n"
    } else if line.ends_with('\r') {
        "\r"
    } else {
        "\n"
    }
}

fn is_planning(line: &str) -> bool {
    let t = line.trim_start();
    ["SCHEDULED:", "DEADLINE:", "CLOSED:"]
        .iter()
        .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "#+TITLE: Plans\n#+TODO: TODO NEXT | DONE\nintro\n* TODO Build the shed :project:home:\n:PROPERTIES:\n:ID: shed\n:EFFORT: 3d\n:END:\nSome body.\n** DONE Buy wood\nCLOSED: [2026-11-01 Sun 10:00]\n** NEXT Cut planks\n* Notes\n";

    #[test]
    fn headlines_properties_and_tree() {
        let mut w = vec![];
        let f = parse("plans.org", SAMPLE, &TodoKeywords::default(), &mut w);
        assert_eq!(f.title, "Plans");
        assert!(w.is_empty(), "{w:?}");
        let shed = &f.headlines[0];
        assert_eq!(shed.id, "shed");
        assert!(!shed.derived_id);
        assert_eq!(shed.todo.as_deref(), Some("TODO"));
        assert_eq!(shed.title, "Build the shed");
        assert_eq!(shed.tags, ["project", "home"]);
        assert_eq!(shed.line, 4);
        assert_eq!(shed.properties[1], ("EFFORT".into(), "3d".into()));
        assert!(shed.body.contains("Some body."));
        assert_eq!(shed.children.len(), 2);
        assert_eq!(shed.children[0].todo.as_deref(), Some("DONE"));
        assert!(shed.children[0].closed.is_some());
        assert_eq!(shed.children[1].todo.as_deref(), Some("NEXT"));
        assert!(f.headlines[1].derived_id);
    }

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let mut w = vec![];
        let a = parse("x.org", "* A\n* A\n", &TodoKeywords::default(), &mut w);
        let b = parse("x.org", "* A\n* A\n", &TodoKeywords::default(), &mut w);
        assert_eq!(a, b);
        assert_ne!(a.headlines[0].id, a.headlines[1].id);
    }

    #[test]
    fn unclosed_drawer_is_warned_with_its_line() {
        let mut w = vec![];
        parse(
            "bad.org",
            "* A\n:PROPERTIES:\n:X: 1\n* B\n",
            &TodoKeywords::default(),
            &mut w,
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].line, 2);
    }

    #[test]
    fn write_ids_adds_to_drawers_and_creates_them() {
        let text = "* A\nSCHEDULED: <2026-01-01>\n* B\n:PROPERTIES:\n:X: 1\n:END:\n";
        let ids = [(1, "a1".to_owned()), (3, "b1".to_owned())].into();
        let out = write_ids(text, &ids);
        let mut w = vec![];
        let f = parse("x.org", &out, &TodoKeywords::default(), &mut w);
        assert_eq!(f.headlines[0].id, "a1");
        assert_eq!(f.headlines[1].id, "b1");
        assert_eq!(f.headlines[1].properties.len(), 2);
        assert!(w.is_empty());
    }

    /// org-roam's `roam-exclude.org` shape: a property with no value beside the `:ID:`.
    #[test]
    fn an_empty_property_value_keeps_the_drawer_and_its_id() {
        let text = "* Excluded\n:PROPERTIES:\n:ID:       a0b1c2d3-0000-4000-8000-000000000001\n:ROAM_EXCLUDE:\n:END:\nBody.\n";
        let mut w = vec![];
        let f = parse("roam.org", text, &TodoKeywords::default(), &mut w);
        let h = &f.headlines[0];
        assert_eq!(h.id, "a0b1c2d3-0000-4000-8000-000000000001");
        assert!(!h.derived_id);
        assert_eq!(
            h.properties,
            [
                ("ID".into(), "a0b1c2d3-0000-4000-8000-000000000001".into()),
                ("ROAM_EXCLUDE".into(), String::new())
            ]
        );
        assert_eq!(h.body, "Body.\n", "the drawer is not body text");
        assert!(w.is_empty(), "{w:?}");
    }

    /// Literate configurations: `:header-args+:` appends, and says so only with its `+`; a
    /// key may hold a `:`; a drawer inside a block is text, not the headline's.
    #[test]
    fn keys_are_kept_as_written_and_drawers_in_blocks_stay_text() {
        let text = "* Config\nSCHEDULED: <2026-01-01 Thu>\n:PROPERTIES:\n:header-args:    :tangle yes\n:header-args+:   :comments both\n:a:b: c\n:END:\n* Example\n#+begin_src org\n:PROPERTIES:\n:ID: not-mine\n:END:\n#+end_src\n";
        let mut w = vec![];
        let f = parse("init.org", text, &TodoKeywords::default(), &mut w);
        assert_eq!(
            f.headlines[0].properties,
            [
                ("header-args".into(), ":tangle yes".into()),
                ("header-args+".into(), ":comments both".into()),
                ("a:b".into(), "c".into())
            ]
        );
        let example = &f.headlines[1];
        assert!(example.properties.is_empty());
        assert!(example.derived_id, "{}", example.id);
    }

    /// org-roam's `title-transformations.org` shape: a file's `#+todo:` replaces the default.
    #[test]
    fn a_files_keyword_lines_replace_the_default_ones() {
        let text =
            "#+todo: IDEA | DONE\n* TODO not a keyword here\n* IDEA A thought\n* DONE Finished\n";
        let mut w = vec![];
        let f = parse("t.org", text, &TodoKeywords::default(), &mut w);
        let h = &f.headlines;
        assert_eq!(
            (h[0].todo.as_deref(), h[0].title.as_str()),
            (None, "TODO not a keyword here")
        );
        assert_eq!(h[1].todo.as_deref(), Some("IDEA"));
        assert!(h[2].done);
        // Org's default is TODO | DONE: NEXT is a word of the title unless configured.
        let text = "* NEXT Call Bob\n* TODO Write\n";
        let f = parse("n.org", text, &TodoKeywords::default(), &mut w);
        assert_eq!(f.headlines[0].todo, None);
        assert_eq!(f.headlines[0].title, "NEXT Call Bob");
        let gtd = TodoKeywords::parse("TODO NEXT | DONE CANCELLED");
        let f = parse("n.org", text, &gtd, &mut w);
        assert_eq!(f.headlines[0].todo.as_deref(), Some("NEXT"));
        // Several lines add up; fast-access keys go; without `|`, the last one is done.
        let k = TodoKeywords::of_file(
            "#+SEQ_TODO: REPORT(r) BUG(b) | FIXED(f)\n#+TYP_TODO: Fred Sara Lucy\n",
            &TodoKeywords::default(),
        );
        assert_eq!(k.todo, ["REPORT", "BUG", "Fred", "Sara"]);
        assert_eq!(k.done, ["FIXED", "Lucy"]);
        // A line shown in a source or example block is text, up to the end that closes it; in
        // a quote block, or after a block that never closes, it is a keyword line.
        let shown = "#+begin_example\n#+begin_src org\n#+end_src\n#+TODO: IDEA | DONE\n#+end_example\n* TODO Real\n";
        let f = parse("b.org", shown, &TodoKeywords::default(), &mut w);
        assert_eq!(f.headlines[0].todo.as_deref(), Some("TODO"));
        for counted in [
            "#+begin_quote\n#+TODO: IDEA | DONE\n#+end_quote\n* TODO Real\n",
            "#+begin_src org\nnever closed\n#+TODO: IDEA | DONE\n* TODO Real\n",
        ] {
            let f = parse("b.org", counted, &TodoKeywords::default(), &mut w);
            assert_eq!(f.headlines[0].todo, None, "{counted}");
        }
    }

    /// A drawer with a line that is not a property is text, as Org reads it: no ID or property
    /// from it, and none of the text after it is lost.
    #[test]
    fn a_drawer_with_text_in_it_is_text() {
        let text = "* A\n:PROPERTIES:\n:ID: a\nSome text.\n:LOGBOOK:\n- note\n:END:\nAfter.\n";
        let mut w = vec![];
        let f = parse("t.org", text, &TodoKeywords::default(), &mut w);
        let h = &f.headlines[0];
        assert!(h.properties.is_empty(), "{:?}", h.properties);
        assert!(h.derived_id);
        assert!(
            h.body.contains("Some text.") && h.body.contains("After."),
            "{:?}",
            h.body
        );
        assert!(
            w.iter()
                .any(|w| w.line == 4 && w.message.contains("not a `:KEY: value`")),
            "{w:?}"
        );
    }

    /// Tables of links padded with spaces: the title is kept as written.
    #[test]
    fn titles_keep_their_inner_spaces() {
        let text = "* TODO [[https://orgmode.org][Org]]    |   the manual    :docs:\n";
        let mut w = vec![];
        let f = parse("links.org", text, &TodoKeywords::default(), &mut w);
        assert_eq!(
            f.headlines[0].title,
            "[[https://orgmode.org][Org]]    |   the manual"
        );
        assert_eq!(f.headlines[0].tags, ["docs"]);
    }

    /// The derived ID as it was first defined (sha256 of the joined title path), which the
    /// store, the journal and `--write-ids` files keep: it must not change.
    fn joined_path_id(key: &str, occurrence: u32) -> String {
        let digest = Sha256::digest(format!("{key}\n{occurrence}").as_bytes());
        format!("pp-{}", &hex::encode(digest)[..20])
    }

    #[test]
    fn derived_ids_are_those_of_the_joined_title_path_whatever_the_line_breaks() {
        let id = joined_path_id;
        for text in [
            "* A\n** B\n** B\n* A\n** B\n*** C\n",
            "* A\r\n** B\r\n** B\r\n* A\r\n** B\r\n*** C\r\n",
            "* A\r** B\r** B\r* A\r** B\r*** C\r",
        ] {
            let mut w = vec![];
            let f = parse("notes/x.org", text, &TodoKeywords::default(), &mut w);
            let [a1, a2] = f.headlines.as_slice() else {
                panic!("two top headlines in {text:?}: {f:?}");
            };
            assert_eq!(a1.id, id("notes/x.org\nA", 1), "{text:?}");
            assert_eq!(a1.children[0].id, id("notes/x.org\nA\nB", 1));
            assert_eq!(a1.children[1].id, id("notes/x.org\nA\nB", 2));
            assert_eq!(a2.id, id("notes/x.org\nA", 2));
            assert_eq!(a2.children[0].id, id("notes/x.org\nA\nB", 3));
            assert_eq!(a2.children[0].children[0].id, id("notes/x.org\nA\nB\nC", 1));
            assert_eq!(a2.children[0].children[0].line, 6, "{text:?}");
            assert_eq!(derive_id("notes/x.org\nA", 2), a2.id);
        }
    }

    /// A megabyte title over 20,000 children with one title: the old key (the whole path as a
    /// string, copied, hashed and digested per child) made this some 80 GB of copying and
    /// hashing, minutes; now each title is hashed once. The bound is a hundred times what it
    /// takes, so that only the old cost can cross it.
    #[test]
    fn identical_children_of_a_megabyte_title_get_distinct_ids_quickly() {
        let big = "x".repeat(1 << 20);
        let mut text = format!("* {big}\n");
        for _ in 0..20_000 {
            text.push_str("** c\n");
        }
        let mut w = vec![];
        let started = std::time::Instant::now();
        let f = parse("w.org", &text, &TodoKeywords::default(), &mut w);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
        let children = &f.headlines[0].children;
        assert_eq!(children.len(), 20_000);
        let ids: std::collections::HashSet<&str> = children.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), 20_000);
        let key = format!("w.org\n{big}\nc");
        assert_eq!(children[0].id, joined_path_id(&key, 1));
        assert_eq!(children[19_999].id, joined_path_id(&key, 20_000));
    }

    /// A lone `\r` ends a line for the parser: it does for the line numbers and the property
    /// drawers too.
    #[test]
    fn a_lone_cr_ends_a_line_everywhere() {
        let text = "* A\r:PROPERTIES:\r:ID: a\r:END:\rBody.\r* B\r";
        let mut w = vec![];
        let f = parse("cr.org", text, &TodoKeywords::default(), &mut w);
        let (a, b) = (&f.headlines[0], &f.headlines[1]);
        assert_eq!((a.id.as_str(), a.derived_id, a.line), ("a", false, 1));
        assert_eq!(a.body, "Body.\n");
        assert_eq!(b.line, 6);
        assert!(w.is_empty(), "{w:?}");
    }

    /// 1,000 headlines joined by lone CRs, then a drawer of 100,000 properties: with every
    /// headline on line 1, each read the same drawer (10^8 properties). Each line is read for
    /// one headline at most, drawer closed or not.
    #[test]
    fn a_drawer_is_read_for_its_own_headline_only() {
        for (end, expected) in [(":END:\n", 100_000), ("", 0)] {
            let mut text = "* a\r".repeat(999);
            text.push_str("* a\r\n:PROPERTIES:\n");
            for i in 0..100_000 {
                text.push_str(&format!(":P{i}: v\n"));
            }
            text.push_str(end);
            let mut w = vec![];
            let f = parse("cr.org", &text, &TodoKeywords::default(), &mut w);
            assert_eq!(f.headlines.len(), 1000);
            let total: usize = f.headlines.iter().map(|h| h.properties.len()).sum();
            assert_eq!(total, expected, "closed: {}", !end.is_empty());
            assert!(f.headlines[..999].iter().all(|h| h.properties.is_empty()));
            assert_eq!(f.headlines[999].line, 1000);
        }
    }

    /// IDs go in with the headline's own line break, and every other byte stays.
    #[test]
    fn write_ids_keeps_the_line_breaks_as_written() {
        let text = "* A\r\n* B\r* C\nSCHEDULED: <2026-01-01>\n* D";
        // D is on line 5: the SCHEDULED line is 4.
        let ids = [1, 2, 3, 5]
            .into_iter()
            .map(|n| (n, format!("i{n}")))
            .collect();
        let out = write_ids(text, &ids);
        assert_eq!(
            out,
            "* A\r\n:PROPERTIES:\r\n:ID:       i1\r\n:END:\r\n\
             * B\r:PROPERTIES:\r:ID:       i2\r:END:\r\
             * C\nSCHEDULED: <2026-01-01>\n:PROPERTIES:\n:ID:       i3\n:END:\n\
             * D\n:PROPERTIES:\n:ID:       i5\n:END:\n"
        );
        let mut w = vec![];
        let f = parse("x.org", &out, &TodoKeywords::default(), &mut w);
        let read: Vec<&str> = f.headlines.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(read, ["i1", "i2", "i3", "i5"]);
    }

    /// 100,000 keywords on one `#+TODO:` line: each was checked against the whole list so
    /// far (8.9 s at 80,000). Now a set says which are known and the list stops at
    /// [`MAX_KEYWORDS`] of each kind, with a warning at the line; the done ones after `|`
    /// still count.
    #[test]
    fn a_keyword_line_of_100000_keywords_is_cut_with_a_warning_and_read_quickly() {
        let words: Vec<String> = (0..100_000).map(|i| format!("K{i}")).collect();
        let text = format!(
            "\n#+TODO: {} | FINISHED\n* K7 Seven\n* K9999 Far\n",
            words.join(" ")
        );
        let mut w = vec![];
        let started = std::time::Instant::now();
        let f = parse("k.org", &text, &TodoKeywords::default(), &mut w);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
        assert!(
            w.iter()
                .any(|w| w.line == 2 && w.message.contains("more than 256 TODO keywords")),
            "{w:?}"
        );
        assert_eq!(f.headlines[0].todo.as_deref(), Some("K7"));
        assert_eq!(
            f.headlines[1].todo, None,
            "beyond the cap: a word of the title"
        );
        let k = TodoKeywords::of_file(&text, &TodoKeywords::default());
        assert_eq!(
            (k.todo.len(), k.done.as_slice()),
            (MAX_KEYWORDS, ["FINISHED".to_owned()].as_slice())
        );
        // Repeats are kept once, and do not count towards the cap.
        let k = TodoKeywords::parse(&format!("{} | DONE DONE", "A B A ".repeat(1000)));
        assert_eq!(
            (k.todo, k.done, k.cut),
            (
                vec!["A".to_owned(), "B".to_owned()],
                vec!["DONE".to_owned()],
                None
            )
        );
    }

    /// A drawer Org reads as text (a note in it, or no `:END:`) says so: an `:ID:` written into
    /// it would not count either.
    #[test]
    fn a_drawer_read_as_text_is_marked_so() {
        let text = "* C\n:PROPERTIES:\nnote\n:END:\n* D\n:PROPERTIES:\n:X: 1\n* E\n:PROPERTIES:\n:X: 1\n:END:\n* F\n";
        let mut w = vec![];
        let f = parse("t.org", text, &TodoKeywords::default(), &mut w);
        let text_drawers: Vec<bool> = f.headlines.iter().map(|h| h.drawer_is_text).collect();
        assert_eq!(text_drawers, [true, true, false, false]);
    }
}
