//! `passepartout mcp pin NAME`: the operator approves what an MCP server offers (gateway mode).
//! Shows each tool as the daemon last saw it (`mcp/NAME.json` beside the database): new,
//! changed since approved, or approved; then, with the operator's consent, writes the sha256
//! of each into `mcp-pins.toml`, which the daemon reads before it offers a tool.

use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::gateway::pins::{Pins, load_seen};

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
