//! `memory`: the model's view of the memory store (Org headlines), through the host's `memory`
//! interface. Three read-only tools (`memory-query`, `memory-get`, `memory-outline`) and one
//! write, `memory-assign-id`, which gives a headline without an `:ID:` property the ID the
//! store already derived for it (the seed's `find-headline-missing-id`, made into a repair).
//! That ID is kept in the store, not in the file: it holds while the titles above the
//! headline stay as they are.

mod render;

use passepartout_sdk::memory::{self as store, NodeQuery as Query};
use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};
use serde::Deserialize;

pub use render::{MAX_TITLE_BYTES, node_json, query_line, query_lines};

/// Most results `memory-query` returns, whatever `limit` asks.
pub const MAX_LIMIT: u32 = 500;
/// Results `memory-query` returns when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 50;
/// Outline size `memory-outline` returns when `max_bytes` is not given.
pub const DEFAULT_OUTLINE_BYTES: u32 = 4000;
/// Largest outline `memory-outline` returns.
pub const MAX_OUTLINE_BYTES: u32 = 256 * 1024;
/// Most bytes `memory-query` returns: below a tool's default output cap (1 MiB), so that many
/// results or long lines end in "… N more" rather than in a failed call.
pub const MAX_QUERY_BYTES: usize = 960 * 1024;

/// The arguments of `memory-query`; unset fields match everything.
#[derive(Debug, Default, Deserialize)]
pub struct QueryArgs {
    /// Has this tag (case-insensitive).
    pub tag: Option<String>,
    /// Has this TODO keyword (exact).
    pub todo: Option<String>,
    /// Has this property with this value: `[key, value]`.
    pub property: Option<(String, String)>,
    /// Title or body contains this text (case-insensitive).
    pub text: Option<String>,
    /// Only headlines whose `:ID:` is missing from the file.
    #[serde(default)]
    pub missing_id: bool,
    /// At most this many results.
    pub limit: Option<u32>,
}

impl QueryArgs {
    /// The host query these arguments ask for, with the limit defaulted and capped.
    pub fn to_query(self) -> Query {
        Query {
            tag: self.tag,
            todo: self.todo,
            property: self.property,
            text: self.text,
            missing_id: self.missing_id,
            limit: Some(self.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)),
        }
    }
}

#[derive(Deserialize)]
struct IdArg {
    id: String,
}

#[derive(Deserialize)]
struct OutlineArgs {
    max_bytes: Option<u32>,
}

/// The tool plugin.
pub struct Memory;

fn info(name: &str, description: &str, parameters: &str, read_only: bool) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        description: description.into(),
        parameters: parameters.into(),
        read_only,
    }
}

const ID_PARAMETERS: &str =
    r#"{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}"#;

impl Tool for Memory {
    fn describe() -> Vec<ToolInfo> {
        vec![
            info(
                "memory-query",
                "Find headlines in memory (Org notes) by tag, TODO keyword, property, text, or a \
                 missing :ID:. One JSON object per line: id, todo, title, tags, at (file:line); \
                 id_missing is true when the :ID: is not in the file yet.",
                r#"{"type":"object","properties":{"tag":{"type":"string"},"todo":{"type":"string"},"property":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":2,"description":"[key, value]"},"text":{"type":"string"},"missing_id":{"type":"boolean"},"limit":{"type":"integer","minimum":1,"maximum":500}}}"#,
                true,
            ),
            info(
                "memory-get",
                "One headline by ID, as JSON with its properties, body, parent and file:line.",
                ID_PARAMETERS,
                true,
            ),
            info(
                "memory-outline",
                "The outline of active projects and their open tasks, at most max_bytes long \
                 (default 4000).",
                r#"{"type":"object","properties":{"max_bytes":{"type":"integer","minimum":1}}}"#,
                true,
            ),
            info(
                "memory-assign-id",
                "Give a headline that lacks an :ID: property the ID memory-query shows for it. \
                 Refused if it already has one. The ID is kept in memory, not written into the \
                 file: it holds while the titles above the headline stay as they are (renaming \
                 a parent loses it, and the next ingest warns); `passepartout memory ingest \
                 --write-ids` writes IDs into the files for good.",
                r#"{"type":"object","properties":{"id":{"type":"string","x-effect":"memory-write"}},"required":["id"]}"#,
                false,
            ),
        ]
    }

    fn call(name: String, args: String) -> Result<String, ToolError> {
        match name.as_str() {
            "memory-query" => query(parse_args::<QueryArgs>(&args)?),
            "memory-get" => get(&parse_args::<IdArg>(&args)?.id),
            "memory-outline" => outline(parse_args::<OutlineArgs>(&args)?.max_bytes),
            "memory-assign-id" => assign_id(&parse_args::<IdArg>(&args)?.id),
            other => Err(ToolError::InvalidArgs(format!(
                "the memory plugin has no tool named {other:?}; it has memory-query, memory-get, \
                 memory-outline, memory-assign-id"
            ))),
        }
    }
}

/// A store error, as the model should read it.
fn store_error(e: String) -> ToolError {
    ToolError::Failed(format!("memory store: {e}"))
}

fn query(a: QueryArgs) -> Result<String, ToolError> {
    let nodes = store::query(&a.to_query()).map_err(store_error)?;
    if nodes.is_empty() {
        return Ok("no headline matches".into());
    }
    Ok(query_lines(&nodes, MAX_QUERY_BYTES))
}

fn get(id: &str) -> Result<String, ToolError> {
    let id = checked_id(id)?;
    match store::get(id).map_err(store_error)? {
        Some(node) => Ok(node_json(&node)),
        None => Err(ToolError::Failed(format!(
            "no headline has the ID {id:?}; memory-query lists the IDs"
        ))),
    }
}

fn outline(max_bytes: Option<u32>) -> Result<String, ToolError> {
    let max = max_bytes
        .unwrap_or(DEFAULT_OUTLINE_BYTES)
        .clamp(1, MAX_OUTLINE_BYTES);
    let text = store::awareness(max).map_err(store_error)?;
    if text.trim().is_empty() {
        Ok("(no active projects or open tasks)".into())
    } else {
        Ok(text)
    }
}

fn assign_id(id: &str) -> Result<String, ToolError> {
    let id = checked_id(id)?;
    let Some(node) = store::get(id).map_err(store_error)? else {
        return Err(ToolError::Failed(format!(
            "no headline has the ID {id:?}; memory-query with missing_id lists the ones to fix"
        )));
    };
    if !node.derived_id {
        return Err(ToolError::InvalidArgs(format!(
            "{:?} ({}:{}) already has :ID: {id} in its file; nothing to do",
            node.title, node.file, node.line
        )));
    }
    let root = store::set_property(id, "ID", id).map_err(store_error)?;
    Ok(format!(
        "set :ID: {id} on {:?} ({}:{}); memory root is now {root}",
        node.title, node.file, node.line
    ))
}

/// The ID, trimmed; an empty one is refused.
fn checked_id(id: &str) -> Result<&str, ToolError> {
    let id = id.trim();
    if id.is_empty() {
        Err(ToolError::InvalidArgs("`id` must not be empty".into()))
    } else {
        Ok(id)
    }
}

passepartout_sdk::export_tool!(Memory);

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(json: &str) -> QueryArgs {
        match parse_args::<QueryArgs>(json) {
            Ok(a) => a,
            Err(e) => panic!("{json}: {e:?}"),
        }
    }

    #[test]
    fn query_args_default_and_cap_the_limit() {
        let q = parsed("{}").to_query();
        assert_eq!(q.limit, Some(DEFAULT_LIMIT));
        assert!(!q.missing_id);
        assert_eq!(
            parsed(r#"{"limit":100000}"#).to_query().limit,
            Some(MAX_LIMIT)
        );
        assert_eq!(parsed(r#"{"limit":0}"#).to_query().limit, Some(1));
    }

    #[test]
    fn query_args_carry_every_filter() {
        let q = parsed(
            r#"{"tag":"work","todo":"NEXT","property":["owner","me"],"text":"tax","missing_id":true,"limit":3}"#,
        )
        .to_query();
        assert_eq!(q.tag.as_deref(), Some("work"));
        assert_eq!(q.todo.as_deref(), Some("NEXT"));
        assert_eq!(q.property, Some(("owner".into(), "me".into())));
        assert_eq!(q.text.as_deref(), Some("tax"));
        assert!(q.missing_id);
        assert_eq!(q.limit, Some(3));
    }

    #[test]
    fn a_property_must_be_a_pair() {
        assert!(parse_args::<QueryArgs>(r#"{"property":["owner"]}"#).is_err());
    }

    #[test]
    fn empty_ids_are_refused() {
        assert!(matches!(checked_id("  "), Err(ToolError::InvalidArgs(_))));
        assert!(matches!(checked_id(" a1 "), Ok("a1")));
    }
}
