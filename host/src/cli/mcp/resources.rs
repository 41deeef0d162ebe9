//! The memory store as MCP resources, read-only: the awareness outline ([`OUTLINE`]) and one
//! headline by its ID ([`HEADLINE`]`{id}`). Each read is the memory plugin's read-only tool
//! (`memory-outline`, `memory-get`) run through the daemon like any call (every gate, the
//! journal, the plugin's own grant of the store), and each is offered only while the daemon has
//! that tool.

use passepartout::pipeline::ToolSchema;
use passepartout::signal::Action;
use rmcp::model::{ErrorCode, ErrorData, JsonObject, Resource, ResourceTemplate};
use serde_json::Value;

/// The outline of the memory store.
pub const OUTLINE: &str = "passepartout://memory/outline";
/// One headline, by its ID: this prefix, then the ID.
pub const HEADLINE: &str = "passepartout://memory/headline/";

fn has(tools: &[ToolSchema], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

/// The resources offered, given the daemon's tools.
pub(super) fn listed(tools: &[ToolSchema]) -> Vec<Resource> {
    if !has(tools, "memory-outline") {
        return Vec::new();
    }
    vec![
        Resource::new(OUTLINE, "memory-outline")
            .with_title("Memory: the outline")
            .with_description(
                "The memory store's awareness outline: its files and headlines, most relevant \
                 first (read through Passepartout's gates).",
            ),
    ]
}

/// The resource templates offered, given the daemon's tools.
pub(super) fn templates(tools: &[ToolSchema]) -> Vec<ResourceTemplate> {
    if !has(tools, "memory-get") {
        return Vec::new();
    }
    let mut headline = ResourceTemplate::new(format!("{HEADLINE}{{id}}"), "memory-headline");
    headline.title = Some("Memory: one headline".into());
    headline.description = Some(
        "One headline of the memory store by its :ID: property, as JSON (read through \
         Passepartout's gates)."
            .into(),
    );
    vec![headline]
}

/// Whether `c` may be part of a headline ID in a resource URI.
fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@')
}

/// The read-only action that reads `uri`.
///
/// # Errors
/// A URI that names no resource of ours, or an ID with other characters than letters, digits
/// and `-_.:@`.
pub(super) fn action(uri: &str) -> Result<Action, ErrorData> {
    let (tool, args) = if uri == OUTLINE {
        ("memory-outline", JsonObject::new())
    } else if let Some(id) = uri.strip_prefix(HEADLINE) {
        if id.is_empty() || id.len() > 256 || !id.chars().all(id_char) {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "{uri:?}: a headline ID is 1-256 letters, digits and -_.:@ (as in {HEADLINE}ID)"
                ),
                None,
            ));
        }
        let mut args = JsonObject::new();
        args.insert("id".into(), Value::from(id));
        ("memory-get", args)
    } else {
        return Err(ErrorData::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("no resource {uri:?}: there are {OUTLINE} and {HEADLINE}ID"),
            None,
        ));
    };
    Ok(Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args,
        text: None,
        explanation: Some("an MCP client reads a memory resource".into()),
        call_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_uris_and_plain_ids_become_actions() {
        assert_eq!(
            action(OUTLINE).ok().and_then(|a| a.tool),
            Some("memory-outline".into())
        );
        let get = action(&format!("{HEADLINE}proj-1")).expect("an ID");
        assert_eq!(get.args["id"], "proj-1");
        for bad in [
            "passepartout://memory/headline/",
            "passepartout://memory/headline/a/../b",
            "passepartout://memory/headline/a b",
            "passepartout://memory/headline/a%20b",
            "file:///etc/passwd",
            "passepartout://memory/outline/x",
        ] {
            assert!(action(bad).is_err(), "{bad}");
        }
    }
}
