//! The verdicts, table-driven.

use passepartout_sdk::{Action, Verdict};
use serde_json::json;

use crate::{Config, check_action};

fn action(target: &str, tool: Option<&str>, explanation: Option<&str>) -> Action {
    Action {
        target: target.into(),
        tool: tool.map(String::from),
        args: r#"{"path": "/workspace/notes.txt"}"#.into(),
        text: None,
        explanation: explanation.map(String::from),
    }
}

const WHY: Option<&str> = Some("save the notes the user dictated");

/// (target, tool, explanation, passes?)
const CASES: &[(&str, Option<&str>, Option<&str>, bool)] = &[
    // Replies to a person never need one.
    ("tui", None, None, true),
    ("chat", None, Some(""), true),
    ("tui", Some("write-file"), None, true),
    // Read-only tools need none.
    ("tool", Some("read-file"), None, true),
    ("tool", Some("list-directory"), Some(""), true),
    ("tool", Some("search-files"), None, true),
    ("tool", Some("memory-query"), None, true),
    ("tool", Some("eval"), None, true),
    // Everything else does.
    ("tool", Some("write-file"), None, false),
    ("tool", Some("write-file"), Some(""), false),
    ("tool", Some("write-file"), Some("   \n "), false),
    ("tool", Some("write-file"), Some("because"), false),
    ("tool", Some("write-file"), Some("save notes"), false),
    ("tool", Some("write-file"), Some("a b c"), false),
    ("tool", Some("write-file"), Some("- - - - - - - -"), false),
    ("tool", Some("write-file"), WHY, true),
    ("tool", Some("http-fetch"), None, false),
    (
        "tool",
        Some("http-fetch"),
        Some("get the weather forecast"),
        true,
    ),
    ("tool", Some("shell"), Some("ls"), false),
    (
        "tool",
        Some("shell"),
        Some("list the files in the workspace"),
        true,
    ),
    ("shell", None, None, false),
    ("shell", Some("read-file"), None, false),
    ("shell", None, Some("clean the build directory"), true),
    ("tool", None, None, false),
    ("tool", None, WHY, true),
    ("tool", Some("Read-File"), None, false),
    (
        "tool",
        Some("memory-set-property"),
        Some("mark the task as done"),
        true,
    ),
];

#[test]
fn verdicts_follow_the_table() {
    let config = Config::default();
    for &(target, tool, explanation, passes) in CASES {
        let verdict = check_action(&action(target, tool, explanation), &config);
        let passed = matches!(verdict, Verdict::Pass);
        assert_eq!(
            passed, passes,
            "{target} {tool:?} {explanation:?}: {verdict:?}"
        );
        if let Verdict::Reject(reason) = verdict {
            assert!(reason.contains("Add an `explanation`"), "{reason}");
            assert!(
                reason.contains("at least 3 words and 12 characters"),
                "{reason}"
            );
        }
    }
}

#[test]
fn reasons_say_what_is_missing() {
    let config = Config::default();
    let reason =
        |target, tool, explanation| match check_action(&action(target, tool, explanation), &config)
        {
            Verdict::Reject(reason) => reason,
            other => panic!("should reject: {other:?}"),
        };
    let none = reason("tool", Some("write-file"), None);
    assert!(
        none.starts_with("calling `write-file` can change things"),
        "{none}"
    );
    assert!(none.contains("this one has none"), "{none}");
    let short = reason("tool", Some("write-file"), Some("save it"));
    assert!(
        short.contains("too short (7 characters, 2 words)"),
        "{short}"
    );
    let shell = reason("shell", None, None);
    assert!(shell.starts_with("running a shell command"), "{shell}");
    let long_name = "x".repeat(500);
    let long = reason("tool", Some(long_name.as_str()), None);
    assert!(long.len() < 400, "{long}");
}

#[test]
fn configuration_changes_the_verdicts() {
    let (config, warnings) = Config::from_json(&json!({
        "read_only_tools": ["read-file", "http-fetch"],
        "min_chars": 3,
        "min_words": 1,
    }));
    assert!(warnings.is_empty(), "{warnings:?}");
    let cases = [
        (action("tool", Some("http-fetch"), None), true),
        (action("tool", Some("eval"), None), false),
        (action("tool", Some("write-file"), Some("fix")), true),
        (action("tool", Some("write-file"), Some("x")), false),
    ];
    for (a, passes) in cases {
        let verdict = check_action(&a, &config);
        assert_eq!(
            matches!(verdict, Verdict::Pass),
            passes,
            "{a:?}: {verdict:?}"
        );
    }
}

#[test]
fn bad_configuration_keeps_the_defaults_and_says_so() {
    let (config, warnings) = Config::from_json(&json!({
        "read_only_tools": "read-file",
        "min_chars": -1,
        "min_words": "three",
    }));
    assert_eq!(config, Config::default());
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    let (config, warnings) = Config::from_json(&json!({"read_only_tools": ["eval", 3]}));
    assert_eq!(config.read_only_tools, ["eval"]);
    assert_eq!(warnings.len(), 1);
    for odd in [json!(null), json!([]), json!("x"), json!({})] {
        assert_eq!(Config::from_json(&odd), (Config::default(), vec![]));
    }
}

#[test]
fn defaults_match_plugin_toml() {
    let manifest: toml::Table =
        toml::from_str(include_str!("../plugin.toml")).expect("plugin.toml parses");
    let json = serde_json::to_value(&manifest["config"]).expect("config converts to JSON");
    assert_eq!(Config::from_json(&json), (Config::default(), vec![]));
}

#[test]
fn odd_inputs_never_panic() {
    let config = Config::default();
    for s in ["", "\u{0}", "é", "🦀🦀🦀", "   ", "tool", "shell", "\n\n\n"] {
        let a = Action {
            target: s.into(),
            tool: Some(s.into()),
            args: s.into(),
            text: Some(s.into()),
            explanation: Some(s.into()),
        };
        let _ = check_action(&a, &config);
        let _ = check_action(&action("tool", Some(s), Some(s)), &config);
    }
}
