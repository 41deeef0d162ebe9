//! How headlines are shown to the model: compact JSON, one object per headline.

use std::borrow::Cow;

use passepartout_sdk::memory::Node;
use serde_json::{Value, json};

/// Most bytes of a title one `memory-query` line shows: a longer one is cut there and marked
/// (`memory-get` shows it whole), so that one huge title cannot fill the tool's output.
pub const MAX_TITLE_BYTES: usize = 512;

/// `title`, or its first [`MAX_TITLE_BYTES`] (on a character boundary) and a mark saying how
/// much more there is.
fn shown_title(title: &str) -> Cow<'_, str> {
    if title.len() <= MAX_TITLE_BYTES {
        return Cow::Borrowed(title);
    }
    let mut at = MAX_TITLE_BYTES;
    while !title.is_char_boundary(at) {
        at -= 1;
    }
    Cow::Owned(format!(
        "{}… [{} more bytes; memory-get shows the whole title]",
        &title[..at],
        title.len() - at
    ))
}

/// One `memory-query` result line:
/// `{"id":…,"todo":…,"title":…,"tags":[…],"at":"file:line"}`, with `"id_missing":true` added
/// when the `:ID:` property is not in the file (the ID shown was derived by the store). A title
/// over [`MAX_TITLE_BYTES`] is cut and marked.
pub fn query_line(node: &Node) -> String {
    // Written by hand so the keys keep this order (serde_json's map sorts them).
    let mut out = format!("{{\"id\":{}", quoted(&node.id));
    if let Some(todo) = &node.todo {
        out.push_str(&format!(",\"todo\":{}", quoted(todo)));
    }
    out.push_str(&format!(",\"title\":{}", quoted(&shown_title(&node.title))));
    if !node.tags.is_empty() {
        out.push_str(&format!(",\"tags\":{}", json!(node.tags)));
    }
    let at = format!("{}:{}", node.file, node.line);
    out.push_str(&format!(",\"at\":{}", quoted(&at)));
    if node.derived_id {
        out.push_str(",\"id_missing\":true");
    }
    out.push('}');
    out
}

/// The `memory-query` output for `nodes`: one [`query_line`] each, joined by line breaks, in at
/// most `max_bytes`; when the next line would not fit, a last line saying how many more
/// matched instead (the whole output then stays within the tool's output cap).
pub fn query_lines(nodes: &[Node], max_bytes: usize) -> String {
    // Room for the last line, whatever the count.
    const MORE: usize = 128;
    let mut out = String::new();
    for (i, node) in nodes.iter().enumerate() {
        let line = query_line(node);
        let rest = nodes.len() - i - 1;
        // The last line needs no room for a count after it.
        let room = if rest == 0 {
            max_bytes
        } else {
            max_bytes.saturating_sub(MORE)
        };
        if out.len() + 1 + line.len() > room {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!(
                "… {} more (the output is at its size limit: ask with a narrower query or a \
                 smaller limit)",
                nodes.len() - i
            ));
            return out;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&line);
    }
    out
}

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// The whole headline for `memory-get`, as one JSON object (properties as an object in file
/// order would need a map type that keeps order, so they are a list of `[key, value]` pairs).
pub fn node_json(node: &Node) -> String {
    json!({
        "id": node.id,
        "id_missing": node.derived_id,
        "parent": node.parent,
        "at": format!("{}:{}", node.file, node.line),
        "level": node.level,
        "todo": node.todo,
        "title": node.title,
        "tags": node.tags,
        "properties": node.properties,
        "body": node.body,
        "hash": node.hash,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Node {
        Node {
            id: "a1b2".into(),
            derived_id: true,
            parent: Some("p0".into()),
            file: "inbox.org".into(),
            line: 12,
            level: 2,
            title: "Pay \"taxes\"".into(),
            todo: Some("TODO".into()),
            tags: vec!["money".into()],
            properties: vec![("EFFORT".into(), "1h".into())],
            body: "before April".into(),
            hash: "ff".into(),
        }
    }

    #[test]
    fn query_lines_are_compact_json() {
        assert_eq!(
            query_line(&node()),
            r#"{"id":"a1b2","todo":"TODO","title":"Pay \"taxes\"","tags":["money"],"at":"inbox.org:12","id_missing":true}"#
        );
    }

    #[test]
    fn absent_fields_are_left_out_of_query_lines() {
        let mut n = node();
        n.todo = None;
        n.tags.clear();
        n.derived_id = false;
        assert_eq!(
            query_line(&n),
            r#"{"id":"a1b2","title":"Pay \"taxes\"","at":"inbox.org:12"}"#
        );
    }

    /// A 2 MB title: the line shows its first 512 bytes and says how much more there is.
    #[test]
    fn a_huge_title_is_cut_in_its_query_line() {
        let mut n = node();
        n.title = "t".repeat(2 << 20);
        let line = query_line(&n);
        assert!(line.len() < 1024, "{}", line.len());
        let v: Value = serde_json::from_str(&line).expect("still one JSON object");
        let title = v["title"].as_str().expect("a title");
        assert!(title.starts_with(&"t".repeat(MAX_TITLE_BYTES)), "{title}");
        assert!(
            title.ends_with(&format!(
                "… [{} more bytes; memory-get shows the whole title]",
                (2 << 20) - MAX_TITLE_BYTES
            )),
            "{title}"
        );
        // Cut on a character boundary.
        n.title = "é".repeat(1000);
        assert!(query_line(&n).contains("more bytes"));
    }

    /// Lines up to the budget, then how many more matched; all of them when they fit.
    #[test]
    fn query_lines_stop_at_their_budget_with_how_many_more() {
        let nodes: Vec<Node> = (0..100).map(|_| node()).collect();
        let one = query_line(&node()).len();
        let all = query_lines(&nodes, usize::MAX);
        assert_eq!(all.lines().count(), 100);
        let cut = query_lines(&nodes, 10 * one + 200);
        assert!(cut.len() <= 10 * one + 200, "{}", cut.len());
        let last = cut.lines().last().expect("a last line");
        let shown = cut.lines().count() - 1;
        assert!(
            last.starts_with(&format!("… {} more", 100 - shown)),
            "{last}"
        );
        assert!(shown >= 9, "{shown}");
    }

    #[test]
    fn get_shows_everything() {
        let v: Value = serde_json::from_str(&node_json(&node())).expect("json");
        assert_eq!(v["at"], "inbox.org:12");
        assert_eq!(v["properties"][0][1], "1h");
        assert_eq!(v["parent"], "p0");
        assert_eq!(v["body"], "before April");
        assert_eq!(v["id_missing"], true);
    }
}
