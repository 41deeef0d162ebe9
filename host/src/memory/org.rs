//! Org-mode files to headline trees, with the `orgize` parser (lossless, so line numbers and
//! write-back offsets are exact). Malformed input is parsed as far as the parser goes; what looks
//! wrong is reported as a [`Warning`] naming the file and line, never as a crash.

use orgize::ParseConfig;
use orgize::ast::Headline;
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

/// TODO keywords known besides those a file declares with `#+TODO:`.
pub const DEFAULT_TODO: (&[&str], &[&str]) = (
    &["TODO", "NEXT", "STARTED", "WAITING", "HOLD"],
    &["DONE", "CANCELLED", "CANCELED"],
);

/// Parse `text` (the contents of `file`) into headlines, appending warnings.
pub fn parse(file: &str, text: &str, warnings: &mut Vec<Warning>) -> ParsedFile {
    let config = ParseConfig {
        todo_keywords: todo_keywords(text),
        ..ParseConfig::default()
    };
    let org = config.parse(text);
    let lines = LineIndex::new(text);
    let document = org.document();
    let title = org
        .title()
        .unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).to_owned());
    let preamble = document.section().map(|s| s.raw()).unwrap_or_default();
    let mut seen = std::collections::HashMap::new();
    let headlines = document
        .headlines()
        .map(|h| headline(file, &h, &lines, &[], &mut seen, warnings))
        .collect();
    check_drawers(file, text, warnings);
    ParsedFile {
        title,
        preamble,
        headlines,
    }
}

fn headline(
    file: &str,
    h: &Headline,
    lines: &LineIndex,
    path: &[String],
    seen: &mut std::collections::HashMap<String, u32>,
    warnings: &mut Vec<Warning>,
) -> ParsedHeadline {
    let line = lines.line(u32::from(h.start()));
    let title = clean_title(&h.title_raw());
    let properties: Vec<(String, String)> = h
        .properties()
        .map(|d| {
            d.iter()
                .map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().trim().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let mut own_path = path.to_vec();
    own_path.push(title.clone());
    let explicit = properties
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("ID"))
        .map(|(_, v)| v.clone())
        .filter(|v| !v.is_empty());
    let (id, derived_id) = match explicit {
        Some(id) => (id, false),
        None => {
            let key = format!("{file}\n{}", own_path.join("\n"));
            let n = seen.entry(key.clone()).or_insert(0);
            *n += 1;
            (derive_id(&key, *n), true)
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
        .map(|c| headline(file, &c, lines, &own_path, seen, warnings))
        .collect();
    ParsedHeadline {
        id,
        derived_id,
        line,
        level: u32::try_from(h.level()).unwrap_or(u32::MAX),
        title,
        todo: h.todo_keyword().map(|t| t.as_ref().to_owned()),
        done: h.is_done(),
        tags: h.tags().map(|t| t.as_ref().to_owned()).collect(),
        properties,
        closed: h.closed().map(|t| t.raw().trim().to_owned()),
        body: h.section().map(|s| s.raw()).unwrap_or_default(),
        children,
    }
}

/// A stable ID for a headline without one: the same file, title path and occurrence give the
/// same ID on every run and machine.
pub fn derive_id(key: &str, occurrence: u32) -> String {
    let digest = Sha256::digest(format!("{key}\n{occurrence}").as_bytes());
    format!("pp-{}", &hex::encode(digest)[..20])
}

fn clean_title(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The keywords of `#+TODO:` / `#+SEQ_TODO:` / `#+TYP_TODO:` lines, plus the defaults.
fn todo_keywords(text: &str) -> (Vec<String>, Vec<String>) {
    let mut todo: Vec<String> = DEFAULT_TODO.0.iter().map(|s| (*s).to_owned()).collect();
    let mut done: Vec<String> = DEFAULT_TODO.1.iter().map(|s| (*s).to_owned()).collect();
    for line in text.lines().take(200) {
        let upper = line.trim_start().to_ascii_uppercase();
        let Some(rest) = ["#+TODO:", "#+SEQ_TODO:", "#+TYP_TODO:"]
            .iter()
            .find_map(|p| upper.strip_prefix(p).map(|_| &line.trim_start()[p.len()..]))
        else {
            continue;
        };
        let mut after_bar = false;
        for word in rest.split_whitespace() {
            if word == "|" {
                after_bar = true;
                continue;
            }
            let word = word.split('(').next().unwrap_or(word).to_owned();
            let list = if after_bar { &mut done } else { &mut todo };
            if !word.is_empty() && !list.contains(&word) {
                list.push(word);
            }
        }
    }
    (todo, done)
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

/// Byte offset → line number.
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
pub fn write_ids(text: &str, ids: &std::collections::BTreeMap<u32, String>) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + ids.len() * 48);
    let mut i = 0;
    while i < lines.len() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.push_str(lines[i]);
        i += 1;
        let Some(id) = ids.get(&n) else { continue };
        if !out.ends_with('\n') {
            out.push('\n');
        }
        while i < lines.len() && is_planning(lines[i]) {
            out.push_str(lines[i]);
            i += 1;
        }
        if i < lines.len() && lines[i].trim().eq_ignore_ascii_case(":PROPERTIES:") {
            out.push_str(lines[i]);
            i += 1;
            out.push_str(&format!(":ID:       {id}\n"));
        } else {
            out.push_str(&format!(":PROPERTIES:\n:ID:       {id}\n:END:\n"));
        }
    }
    out
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

    const SAMPLE: &str = "#+TITLE: Plans\nintro\n* TODO Build the shed :project:home:\n:PROPERTIES:\n:ID: shed\n:EFFORT: 3d\n:END:\nSome body.\n** DONE Buy wood\nCLOSED: [2026-11-01 Sun 10:00]\n** NEXT Cut planks\n* Notes\n";

    #[test]
    fn headlines_properties_and_tree() {
        let mut w = vec![];
        let f = parse("plans.org", SAMPLE, &mut w);
        assert_eq!(f.title, "Plans");
        assert!(w.is_empty(), "{w:?}");
        let shed = &f.headlines[0];
        assert_eq!(shed.id, "shed");
        assert!(!shed.derived_id);
        assert_eq!(shed.todo.as_deref(), Some("TODO"));
        assert_eq!(shed.title, "Build the shed");
        assert_eq!(shed.tags, ["project", "home"]);
        assert_eq!(shed.line, 3);
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
        let a = parse("x.org", "* A\n* A\n", &mut w);
        let b = parse("x.org", "* A\n* A\n", &mut w);
        assert_eq!(a, b);
        assert_ne!(a.headlines[0].id, a.headlines[1].id);
    }

    #[test]
    fn unclosed_drawer_is_warned_with_its_line() {
        let mut w = vec![];
        parse("bad.org", "* A\n:PROPERTIES:\n:X: 1\n* B\n", &mut w);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].line, 2);
    }

    #[test]
    fn write_ids_adds_to_drawers_and_creates_them() {
        let text = "* A\nSCHEDULED: <2026-01-01>\n* B\n:PROPERTIES:\n:X: 1\n:END:\n";
        let ids = [(1, "a1".to_owned()), (3, "b1".to_owned())].into();
        let out = write_ids(text, &ids);
        let mut w = vec![];
        let f = parse("x.org", &out, &mut w);
        assert_eq!(f.headlines[0].id, "a1");
        assert_eq!(f.headlines[1].id, "b1");
        assert_eq!(f.headlines[1].properties.len(), 2);
        assert!(w.is_empty());
    }
}
