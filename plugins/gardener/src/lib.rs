//! `gardener`: on heartbeats, looks in memory for headlines whose `:ID:` property is missing
//! from their file (the seed's `find-headline-missing-id`) and, when there are some, asks the
//! model to propose `memory-assign-id` for each. Those actions go through the gates like any
//! other. With none missing it gives no prompt, so a heartbeat costs no model call.

use passepartout_sdk::memory::{self as store, Node, NodeQuery as Query};
use passepartout_sdk::{LogLevel, SignalView, Skill, SkillInfo};

/// Most headlines one prompt lists.
pub const LIMIT: u32 = 20;

/// Most bytes of a title the prompt shows: a longer one is cut and marked, so that one huge
/// title (a megabyte pasted into a headline) cannot make the prompt huge.
pub const MAX_TITLE_BYTES: usize = 200;

/// `title`, or its first [`MAX_TITLE_BYTES`] (on a character boundary) and a mark saying how
/// much more there is.
fn shown_title(title: &str) -> String {
    if title.len() <= MAX_TITLE_BYTES {
        return title.to_owned();
    }
    let mut at = MAX_TITLE_BYTES;
    while !title.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}… [{} more bytes]", &title[..at], title.len() - at)
}

/// A headline without an `:ID:` in its file, as the prompt shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Missing {
    /// Its title, cut at [`MAX_TITLE_BYTES`].
    pub title: String,
    /// The file it is in.
    pub file: String,
    /// Its line in that file (1-based).
    pub line: u32,
    /// The ID the store derived for it, to be written as its `:ID:`.
    pub id: String,
}

impl From<&Node> for Missing {
    fn from(n: &Node) -> Self {
        Missing {
            title: shown_title(&n.title),
            file: n.file.clone(),
            line: n.line,
            id: n.id.clone(),
        }
    }
}

/// The prompt for `missing`, or none when the list is empty.
pub fn build_prompt(missing: &[Missing]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let mut p = format!(
        "Memory upkeep. {} headline(s) have no :ID: property in their file, so links to them \
         break when they move. Give each the ID memory already derived for it. Memory keeps \
         that ID for the headline (the file is not changed) while the titles above it stay as \
         they are.\n\n",
        missing.len()
    );
    for m in missing {
        p.push_str(&format!(
            "- {:?} at {}:{} (derived id: {})\n",
            m.title, m.file, m.line, m.id
        ));
    }
    p.push_str(
        "\nFor each headline, in this order, propose one tool action: tool \"memory-assign-id\" \
         with args {\"id\": \"<derived id>\"} and an explanation naming the headline, e.g. \
         {\"target\": \"tool\", \"tool\": \"memory-assign-id\", \"args\": {\"id\": \"",
    );
    p.push_str(&missing[0].id);
    p.push_str(
        "\"}, \"explanation\": \"give this headline a stable :ID: so links to it survive\"}. \
         Propose one action at a time; change nothing else.",
    );
    Some(p)
}

/// The skill.
pub struct Gardener;

impl Skill for Gardener {
    fn describe() -> SkillInfo {
        SkillInfo {
            description: "On heartbeats, asks the model to give headlines without an :ID: the \
                          ID memory derived for them."
                .into(),
        }
    }

    fn triggers(signal: SignalView) -> bool {
        signal.sensor.as_deref() == Some("heartbeat")
    }

    fn prompt(_signal: SignalView) -> Option<String> {
        let q = Query {
            tag: None,
            todo: None,
            property: None,
            text: None,
            missing_id: true,
            limit: Some(LIMIT),
        };
        match store::query(&q) {
            Ok(nodes) => build_prompt(&nodes.iter().map(Missing::from).collect::<Vec<_>>()),
            Err(e) => {
                passepartout_sdk::log(LogLevel::Warn, &format!("memory query failed: {e}"));
                None
            }
        }
    }
}

passepartout_sdk::export_skill!(Gardener);

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(title: &str, line: u32, id: &str) -> Missing {
        Missing {
            title: title.into(),
            file: "notes.org".into(),
            line,
            id: id.into(),
        }
    }

    #[test]
    fn nothing_missing_means_no_prompt() {
        assert_eq!(build_prompt(&[]), None);
    }

    #[test]
    fn every_headline_is_listed_with_its_derived_id() {
        let p = build_prompt(&[
            missing("Taxes", 3, "id-a"),
            missing("Car \"MOT\"", 9, "id-b"),
        ])
        .expect("a prompt");
        assert!(p.contains("2 headline(s)"));
        assert!(p.contains("- \"Taxes\" at notes.org:3 (derived id: id-a)\n"));
        assert!(p.contains("- \"Car \\\"MOT\\\"\" at notes.org:9 (derived id: id-b)\n"));
        assert!(p.contains("\"memory-assign-id\""));
        assert!(
            p.contains("{\"id\": \"id-a\"}"),
            "example uses the first id: {p}"
        );
        assert!(p.contains("explanation"));
    }

    #[test]
    fn nodes_convert_to_rows() {
        let n = Node {
            id: "x1".into(),
            derived_id: true,
            parent: None,
            file: "a.org".into(),
            line: 4,
            level: 1,
            title: "T".into(),
            todo: None,
            tags: vec![],
            properties: vec![],
            body: String::new(),
            hash: String::new(),
        };
        assert_eq!(Missing::from(&n), missing("T", 4, "x1").with_file("a.org"));
    }

    /// A 2 MB title: the prompt shows 200 bytes of it and how much more there is.
    #[test]
    fn a_huge_title_is_cut_in_the_prompt() {
        let n = Node {
            id: "x1".into(),
            derived_id: true,
            parent: None,
            file: "a.org".into(),
            line: 4,
            level: 1,
            title: "é".repeat(1 << 20),
            todo: None,
            tags: vec![],
            properties: vec![],
            body: String::new(),
            hash: String::new(),
        };
        let p = build_prompt(&[Missing::from(&n)]).expect("a prompt");
        assert!(p.len() < 4096, "{}", p.len());
        assert!(
            p.contains(&format!("… [{} more bytes]", (2 << 20) - MAX_TITLE_BYTES)),
            "{p}"
        );
    }

    impl Missing {
        fn with_file(mut self, f: &str) -> Self {
            self.file = f.into();
            self
        }
    }
}
