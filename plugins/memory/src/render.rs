//! How headlines are shown to the model: compact JSON, one object per headline.

use passepartout_sdk::memory::Node;
use serde_json::{Value, json};

/// One `memory-query` result line:
/// `{"id":…,"todo":…,"title":…,"tags":[…],"at":"file:line"}`, with `"id_missing":true` added
/// when the `:ID:` property is not in the file (the ID shown was derived by the store).
pub fn query_line(node: &Node) -> String {
    // Written by hand so the keys keep this order (serde_json's map sorts them).
    let mut out = format!("{{\"id\":{}", quoted(&node.id));
    if let Some(todo) = &node.todo {
        out.push_str(&format!(",\"todo\":{}", quoted(todo)));
    }
    out.push_str(&format!(",\"title\":{}", quoted(&node.title)));
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
