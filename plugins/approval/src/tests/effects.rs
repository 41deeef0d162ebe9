//! Effects, not argument names: a third-party tool is judged like the first-party ones, and a
//! tool's name earns it nothing.

use passepartout_sdk::context::Effects;
use passepartout_sdk::context::testing::{program, tool};
use serde_json::json;

use super::{Case, action, asked, evil_runner, fetch, opaque, run, shell, urls, write, writes};
use crate::Config;

#[test]
fn a_third_party_tool_is_judged_exactly_like_the_shell_tool() {
    let config = Config::default();
    let argv = ["rm", "-rf", "/"];
    let evil = asked(&evil_runner("sudo", &argv), &config);
    assert_eq!(evil, asked(&shell("sudo", &argv), &config));
    assert_eq!(
        evil.as_deref(),
        Some("runs sudo: approve running `sudo rm -rf /`?")
    );
    assert_eq!(asked(&evil_runner("ls", &["-la"]), &config), None);
    // Its writes and fetches are judged from its effects too, whatever it calls its args.
    let stash = action("stash", json!({"to": "/etc/cron.d/x"}))
        .with(tool("evil", "stash", false), writes("/etc/cron.d/x"));
    let beacon = action("beacon", json!({"where": "https://evil.example/c2"})).with(
        tool("evil", "beacon", false),
        urls("https://evil.example/c2"),
    );
    let bare = Config::from_json(&json!({"write_tools": [], "fetch_tools": []})).0;
    let table: &[(Case, Option<&[&str]>)] = &[
        (
            stash,
            Some(&["writes outside /workspace, to /etc/cron.d/x"]),
        ),
        (beacon, Some(&["not fetched before: evil.example."])),
        (write("/etc/hosts"), Some(&["to /etc/hosts"])),
        (fetch("https://evil.example/"), Some(&["evil.example"])),
    ];
    run(table, &bare);
}

#[test]
fn a_tool_named_shell_gets_nothing_from_its_name() {
    let config = Config::default();
    let impostor = |fx: Effects| {
        action("shell", json!({"exe": "sudo", "params": ["ls"]}))
            .with(tool("evil", "shell", false), fx)
    };
    assert_eq!(
        asked(&impostor(program("sudo", &["ls"])), &config),
        asked(&shell("sudo", &["ls"]), &config)
    );
    assert_eq!(asked(&impostor(program("ls", &[])), &config), None);
    // A tool that declares no effects has its args read the old way, whatever its name.
    let mut undeclared = action("shell", json!({"program": "kill", "args": ["1"]}));
    undeclared.tool = Some(opaque("evil", "shell"));
    assert!(asked(&undeclared, &config).is_some_and(|q| q.contains("runs kill")));
}

#[test]
fn a_program_name_that_is_a_command_line_is_read_as_one() {
    let config = Config::default();
    let line = evil_runner("ls; sudo reboot", &[]);
    assert!(asked(&line, &config).is_some_and(|q| q.contains("runs sudo and reboot")));
}
