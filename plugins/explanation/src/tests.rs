//! The verdicts, table-driven. Each action comes with the context the host would give it: the
//! tool's identity (with its declared read-only flag) and the action's effects.

use passepartout_sdk::context::testing::{program, tool};
use passepartout_sdk::context::{Effects, ToolIdentity};
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

/// What the host knows of the first-party tools: (name, plugin, read-only). The shell tool
/// runs a program.
const KNOWN: &[(&str, &str, bool)] = &[
    ("read-file", "files", true),
    ("list-directory", "files", true),
    ("search-files", "files", true),
    ("write-file", "files", false),
    ("memory-query", "memory", true),
    ("memory-get", "memory", true),
    ("memory-outline", "memory", true),
    ("memory-assign-id", "memory", false),
    ("eval", "eval", true),
    ("http-fetch", "http-fetch", false),
    ("shell", "shell", false),
];

/// The context the host gives for `action`: none for a reply or an unknown tool.
fn context(action: &Action) -> (Option<ToolIdentity>, Effects) {
    let known = KNOWN
        .iter()
        .find(|(name, _, _)| action.target == "tool" && action.tool.as_deref() == Some(name));
    match known {
        Some(&("shell", plugin, ro)) => (Some(tool(plugin, "shell", ro)), program("ls", &["-la"])),
        Some(&(name, plugin, ro)) => (Some(tool(plugin, name, ro)), Effects::none()),
        None => (None, Effects::none()),
    }
}

/// The verdict on `action` with the context the host would give it.
fn check(action: &Action, config: &Config) -> Verdict {
    let (tool, effects) = context(action);
    check_action(action, tool.as_ref(), &effects, config)
}

fn passes(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Pass)
}

const WHY: Option<&str> = Some("save the notes the user dictated");

/// (target, tool, explanation, passes?)
const CASES: &[(&str, Option<&str>, Option<&str>, bool)] = &[
    // Replies to a person never need one.
    ("tui", None, None, true),
    ("chat", None, Some(""), true),
    ("tui", Some("write-file"), None, true),
    // Tools that declare themselves read-only need none.
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
    ("tool", Some("memory-assign-id"), None, false),
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
    // Unknown tools are not read-only, whatever their name.
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
    for &(target, tool, explanation, want) in CASES {
        let verdict = check(&action(target, tool, explanation), &config);
        assert_eq!(
            passes(&verdict),
            want,
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
        |target, tool, explanation| match check(&action(target, tool, explanation), &config) {
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
    let runs = reason("tool", Some("shell"), None);
    assert!(
        runs.starts_with("calling `shell`, which runs `ls`, can change things"),
        "{runs}"
    );
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
        (action("tool", Some("eval"), None), true),
        (action("tool", Some("memory-assign-id"), None), false),
        (action("tool", Some("write-file"), Some("fix")), true),
        (action("tool", Some("write-file"), Some("x")), false),
    ];
    for (a, want) in cases {
        let verdict = check(&a, &config);
        assert_eq!(passes(&verdict), want, "{a:?}: {verdict:?}");
    }
}

/// A call of `name` from plugin "evil", declaring `read_only`, with `effects`, unexplained.
fn evil(name: &str, read_only: bool, effects: &Effects, config: &Config) -> Verdict {
    let a = action("tool", Some(name), None);
    check_action(&a, Some(&tool("evil", name, read_only)), effects, config)
}

#[test]
fn running_a_program_always_needs_an_explanation() {
    let config = Config::default();
    let sudo = program("sudo", &["rm", "-rf", "/"]);
    // A third-party tool with its own argument names, judged like the shell tool.
    let mut runner = action("tool", Some("runner"), None);
    runner.args = json!({"exe": "sudo", "params": ["rm", "-rf", "/"]}).to_string();
    let verdict = check_action(
        &runner,
        Some(&tool("evil", "runner", false)),
        &sudo,
        &config,
    );
    let Verdict::Reject(reason) = verdict else {
        panic!("should reject: {verdict:?}");
    };
    assert!(reason.contains("which runs `sudo`"), "{reason}");
    assert!(!passes(&check(
        &action("tool", Some("shell"), None),
        &config
    )));
    // Neither a read-only flag nor the override lets a program run unexplained.
    assert!(!passes(&evil("lookup", true, &sudo, &config)));
    let (listed, _) = Config::from_json(&json!({"read_only_tools": ["lookup"]}));
    assert!(!passes(&evil("lookup", false, &sudo, &listed)));
    assert!(passes(&evil("lookup", false, &Effects::none(), &listed)));
    let mut explained = runner;
    explained.explanation = WHY.map(String::from);
    let tool = tool("evil", "runner", false);
    assert!(passes(&check_action(
        &explained,
        Some(&tool),
        &sudo,
        &config
    )));
}

#[test]
fn opaque_and_misnamed_tools_get_no_trust() {
    let config = Config::default();
    let none = Effects::none();
    // Opaque: not read-only, declares no effects.
    let mut opaque = tool("evil", "blob", false);
    opaque.declares_effects = false;
    let a = action("tool", Some("blob"), None);
    assert!(!passes(&check_action(&a, Some(&opaque), &none, &config)));
    // A first-party name from another plugin counts for nothing; its flag does.
    assert!(!passes(&evil("read-file", false, &none, &config)));
    assert!(!passes(&evil("shell", false, &none, &config)));
    assert!(passes(&evil("shell", true, &none, &config)));
    // Unknown to the host: not read-only.
    assert!(!passes(&check_action(
        &action("tool", Some("read-file"), None),
        None,
        &none,
        &config
    )));
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
        let _ = check(&a, &config);
        let _ = check_action(&a, Some(&tool(s, s, true)), &program(s, &[s]), &config);
        let _ = check(&action("tool", Some(s), Some(s)), &config);
    }
}
