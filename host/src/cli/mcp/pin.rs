//! `passepartout mcp pin NAME`: the operator approves what an MCP server offers (gateway mode).
//! Shows each tool as the daemon last saw it (`mcp/NAME.json` beside the database): new,
//! changed since approved, or approved; then, with the operator's consent, writes the sha256
//! of each into `mcp-pins.toml`, which the daemon reads before it offers a tool.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::gateway::pins::{Pins, SeenTool, load_seen};

use super::super::Common;

/// `text` on one line: quoted and escaped when it holds anything but printable characters.
fn one_line(text: &str) -> String {
    if text.chars().all(|c| !c.is_control()) {
        text.to_owned()
    } else {
        format!("{text:?}")
    }
}

/// Show server `name`'s tools and pin them with consent (`yes`: without asking).
///
/// # Errors
/// No place for the files, what the daemon saw cannot be read, or the pins cannot be written.
pub fn run(common: &Common, name: &str, yes: bool) -> anyhow::Result<ExitCode> {
    if !passepartout::gateway::valid_server_name(name) {
        anyhow::bail!(
            "{name:?} is not a server's name: the names of [mcp.servers.NAME] are lowercase \
             letters, digits and `-`, starting with a letter"
        );
    }
    let places = common.places();
    let seen_dir = places
        .mcp_seen_dir()
        .context("no data directory (set XDG_DATA_HOME or HOME)")?;
    let pins_file = places
        .mcp_pins_file()
        .context("no configuration directory (set XDG_CONFIG_HOME or HOME)")?;
    let seen = load_seen(&seen_dir, name).with_context(|| {
        format!(
            "the daemon has not listed the tools of MCP server {name:?}: is it in \
             [mcp.servers] of passepartout.toml, and is the daemon running with it \
             (`passepartout status`)?"
        )
    })?;
    let mut pins = Pins::load(&pins_file)?;
    let pinned = pins.servers.get(name).cloned().unwrap_or_default();
    let mut asked = 0;
    for tool in &seen {
        let state = match pinned.get(&tool.name) {
            Some(sha) if *sha == tool.sha256 => "approved",
            Some(_) => "CHANGED since approved",
            None => "NEW",
        };
        if state != "approved" {
            asked += 1;
        }
        // One line per field, whatever the server wrote: a newline in a name or description
        // cannot print a line of its own (a fake "approved").
        outln!("{name} / {} ({state})", one_line(&tool.name));
        outln!(
            "  description: {}",
            tool.description.replace('\n', "\n               ")
        );
        outln!(
            "  arguments:   {}",
            serde_json::to_string(&tool.schema).unwrap_or_default()
        );
    }
    if asked == 0 {
        outln!("nothing to approve: every tool of {name} is approved as it is");
        return Ok(ExitCode::SUCCESS);
    }
    // Up to 256 tools of 4 KiB descriptions have scrolled by: what changed, right above the
    // question.
    errln!("{}", changes(&seen, &pinned));
    let question = format!(
        "Approve these tools of {name}? Their descriptions go into the model's prompt, and their \
         calls through every gate"
    );
    if !yes && !super::super::plugin_cmd::consent(&question) {
        errln!("not approved; nothing changed");
        return Ok(ExitCode::FAILURE);
    }
    pins.servers.insert(
        name.to_owned(),
        seen.iter()
            .map(|t| (t.name.clone(), t.sha256.clone()))
            .collect(),
    );
    pins.save(&pins_file)?;
    outln!(
        "approved {} tool(s) of {name} in {}; the daemon offers them now",
        seen.len(),
        pins_file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// How many names of each kind of change [`changes`] shows.
const CHANGES_SHOWN: usize = 20;

/// What `seen` changes of the tools `pinned` (tool -> sha256) approves, on one line:
/// `new: a, b; changed: c; gone: d`, with the first [`CHANGES_SHOWN`] names of each and how
/// many more. A name of anything but ASCII letters, digits, `_`, `-` and `.` is quoted and
/// escaped, so that no name can pass for a separator or another kind of change.
fn changes(seen: &[SeenTool], pinned: &BTreeMap<String, String>) -> String {
    let shown = |name: &str| {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if plain {
            name.to_owned()
        } else {
            format!("{name:?}")
        }
    };
    let new: Vec<String> = seen
        .iter()
        .filter(|t| !pinned.contains_key(&t.name))
        .map(|t| shown(t.name.as_str()))
        .collect();
    let changed: Vec<String> = seen
        .iter()
        .filter(|t| pinned.get(&t.name).is_some_and(|sha| *sha != t.sha256))
        .map(|t| shown(t.name.as_str()))
        .collect();
    let gone: Vec<String> = pinned
        .keys()
        .filter(|n| !seen.iter().any(|t| t.name == **n))
        .map(|n| shown(n.as_str()))
        .collect();
    [("new", new), ("changed", changed), ("gone", gone)]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| {
            let head = names[..names.len().min(CHANGES_SHOWN)].join(", ");
            match names.len().saturating_sub(CHANGES_SHOWN) {
                0 => format!("{what}: {head}"),
                more => format!("{what}: {head} and {more} more"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> SeenTool {
        SeenTool::new(name.into(), description.into(), serde_json::json!({}))
    }

    #[test]
    fn the_changes_are_one_line_above_the_question() {
        let before = [
            tool("read", "Reads."),
            tool("write", "Writes."),
            tool("old", ""),
        ];
        let pinned: BTreeMap<String, String> = before
            .iter()
            .map(|t| (t.name.clone(), t.sha256.clone()))
            .collect();
        let now = [
            tool("read", "Reads."),
            tool("write", "Writes, and mails them."),
            tool("mail", "Mails."),
            tool("x; gone: read\nok", "Hidden."),
        ];
        assert_eq!(
            changes(&now, &pinned),
            "new: mail, \"x; gone: read\\nok\"; changed: write; gone: old"
        );
        let many: Vec<SeenTool> = (0..25).map(|i| tool(&format!("t{i}"), "")).collect();
        assert_eq!(
            changes(&many, &BTreeMap::new()),
            format!(
                "new: {} and 5 more",
                (0..20)
                    .map(|i| format!("t{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
    }
}
