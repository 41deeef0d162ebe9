//! The verdicts, table-driven, rule by rule.

use passepartout_sdk::{Action, Verdict};
use serde_json::{Value, json};

use crate::shell::{matches, split};
use crate::{Config, check_action};

fn action(tool: &str, args: Value) -> Action {
    Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args: args.to_string(),
        text: None,
        explanation: Some("the user asked for it".into()),
    }
}

/// The question asked, or `None` when the action passes. Anything else fails the test.
fn asked(action: &Action, config: &Config) -> Option<String> {
    match check_action(action, config) {
        Verdict::Pass => None,
        Verdict::RequireApproval(question) => Some(question),
        other => panic!("an approval gate only passes or asks: {other:?}"),
    }
}

/// Run `table` of (action, `Some(words the question must hold)` or `None` for a pass).
fn run(table: &[(Action, Option<&[&str]>)], config: &Config) {
    for (action, want) in table {
        let question = asked(action, config);
        match (want, &question) {
            (None, None) => {}
            (Some(words), Some(q)) => {
                for word in *words {
                    assert!(
                        q.contains(word),
                        "{q:?} should hold {word:?} ({})",
                        action.args
                    );
                }
            }
            _ => panic!("{}: wanted {want:?}, got {question:?}", action.args),
        }
    }
}

fn cmd(line: &str) -> Action {
    action("shell", json!({"command": line}))
}

#[test]
fn programs_rule() {
    let table: &[(Action, Option<&[&str]>)] = &[
        (
            cmd("sudo apt upgrade"),
            Some(&["runs sudo: approve running `sudo apt upgrade`?"]),
        ),
        (
            action(
                "shell",
                json!({"program": "kill", "args": ["-9", "1234"], "cwd": "/workspace"}),
            ),
            Some(&["runs kill: approve running `kill -9 1234`?"]),
        ),
        (
            action("shell", json!({"program": "/usr/bin/sudo", "args": ["ls"]})),
            Some(&["runs sudo"]),
        ),
        (
            action("shell", json!({"argv": ["bash", "-c", "reboot now"]})),
            Some(&["runs reboot"]),
        ),
        (
            action(
                "shell",
                json!({"program": "bash", "args": ["-lc", "ls; sudo -u root kill 1"]}),
            ),
            Some(&["runs sudo and kill:"]),
        ),
        (cmd("ls && sudo rm -rf build"), Some(&["runs sudo"])),
        (
            cmd("ps aux | grep x | xargs -n 1 kill"),
            Some(&["runs kill"]),
        ),
        (cmd("echo ok; pkill -f server"), Some(&["runs pkill"])),
        (cmd("env FOO=1 nice -n 5 dd if=a of=b"), Some(&["runs dd"])),
        (cmd("timeout 10 shutdown -h now"), Some(&["runs shutdown"])),
        (cmd("FOO=bar doas reboot"), Some(&["runs doas and reboot"])),
        (cmd("mkfs.ext4 /dev/sdb1"), Some(&["runs mkfs"])),
        (cmd("sh -c 'sh -c \"halt\"'"), Some(&["runs halt"])),
        (
            cmd("echo \"$(sudo cat /etc/shadow)\""),
            Some(&["runs sudo"]),
        ),
        (cmd("echo `kill 1`"), Some(&["runs kill"])),
        (cmd("\\sudo ls"), Some(&["runs sudo"])),
        (cmd("if true; then poweroff; fi"), Some(&["runs poweroff"])),
        (
            Action {
                target: "shell".into(),
                tool: None,
                ..cmd("su -c 'id'")
            },
            Some(&["runs su"]),
        ),
        (
            action("other-tool", json!({"cmd": "killall x"})),
            Some(&["runs killall"]),
        ),
        // Not run: named as arguments, quoted, or look-alike names.
        (cmd("ls -la"), None),
        (cmd("echo sudo"), None),
        (cmd("grep 'kill' log.txt"), None),
        (cmd("git commit -m 'fix: kill | reboot logic'"), None),
        (cmd("man sudo"), None),
        (cmd("sudoku --solve"), None),
        (cmd("killer-app"), None),
        (cmd("ddrescue a b"), None),
        (
            action(
                "shell",
                json!({"program": "echo", "args": ["sudo reboot; kill 1"]}),
            ),
            None,
        ),
        (action("shell", json!({})), None),
        (action("shell", json!({"command": 42})), None),
        (
            action(
                "write-file",
                json!({"path": "/workspace/a", "content": "sudo reboot"}),
            ),
            None,
        ),
    ];
    run(table, &Config::default());
}

#[test]
fn program_entries_of_several_words() {
    let (config, warnings) = Config::from_json(&json!({"programs": ["git push", "rm"]}));
    assert!(warnings.is_empty(), "{warnings:?}");
    let table: &[(Action, Option<&[&str]>)] = &[
        (cmd("git push origin main"), Some(&["runs git push:"])),
        (cmd("git -C repo push"), Some(&["runs git push:"])),
        (cmd("git pull && rm -r build"), Some(&["runs rm:"])),
        (cmd("git pull"), None),
        (cmd("sudo reboot"), None),
    ];
    run(table, &config);
}

fn write(path: &str) -> Action {
    action("write-file", json!({"path": path, "content": "hello"}))
}

#[test]
fn workspace_rule() {
    let table: &[(Action, Option<&[&str]>)] = &[
        (write("/workspace/notes.txt"), None),
        (write("/workspace"), None),
        (write("/workspace/./a/../b.txt"), None),
        (
            write("/etc/hosts"),
            Some(&["writes outside /workspace, to /etc/hosts: approve writing `/etc/hosts`?"]),
        ),
        (
            write("/workspace/../etc/passwd"),
            Some(&["to /etc/passwd (`/workspace/../etc/passwd` as written)"]),
        ),
        (
            write("/workspace2/x"),
            Some(&["writes outside /workspace, to /workspace2/x"]),
        ),
        (write("notes.txt"), Some(&["`notes.txt`, a relative path"])),
        (write("~/x"), Some(&["relative path"])),
        (action("read-file", json!({"path": "/etc/passwd"})), None),
        (action("write-file", json!({"content": "no path"})), None),
        (action("write-file", json!({"path": 7})), None),
    ];
    run(table, &Config::default());
    let (config, _) = Config::from_json(
        &json!({"workspace": ["/workspace", "/notes/"], "write_tools": ["write-file", "append"]}),
    );
    let table: &[(Action, Option<&[&str]>)] = &[
        (write("/notes/a.org"), None),
        (
            action("append", json!({"path": "/tmp/x"})),
            Some(&["writes outside /workspace or /notes, to /tmp/x"]),
        ),
    ];
    run(table, &config);
    let (off, _) = Config::from_json(&json!({"workspace": ""}));
    run(&[(write("/etc/hosts"), None)], &off);
}

fn fetch(url: &str) -> Action {
    action("http-fetch", json!({"url": url}))
}

#[test]
fn known_hosts_rule() {
    let (config, warnings) = Config::from_json(
        &json!({"known_hosts": ["API.github.com.", "*.wikipedia.org", "::1", "example.net:8080"]}),
    );
    assert_eq!(warnings.len(), 1, "the port: {warnings:?}");
    let table: &[(Action, Option<&[&str]>)] = &[
        (fetch("https://api.github.com/repos/x/y"), None),
        (fetch("https://API.GitHub.com:443/"), None),
        (fetch("https://en.wikipedia.org/wiki/Rust"), None),
        (fetch("http://[::1]:8080/health"), None),
        (fetch("http://example.net/"), None),
        (
            fetch("https://example.org/page"),
            Some(&[
                "fetches from a host not fetched before: example.org. Approve fetching `https://example.org/page`?",
            ]),
        ),
        (
            fetch("https://api.github.com@evil.com/"),
            Some(&["not fetched before: evil.com."]),
        ),
        (
            fetch("https://wikipedia.org/"),
            Some(&["not fetched before: wikipedia.org."]),
        ),
        (
            fetch("ftp://api.github.com/x"),
            Some(&["cannot tell from which host (it is not an http:// or https:// URL)"]),
        ),
        (
            fetch("api.github.com/x"),
            Some(&["cannot tell from which host"]),
        ),
        (
            fetch("https://evil.com\\@api.github.com/"),
            Some(&["cannot tell from which host"]),
        ),
        (action("http-fetch", json!({})), None),
        (
            action("read-file", json!({"url": "https://evil.com/"})),
            None,
        ),
    ];
    run(table, &config);
    // By default no host is known: every fetch asks.
    run(
        &[(
            fetch("https://api.github.com/"),
            Some(&["not fetched before: api.github.com."]),
        )],
        &Config::default(),
    );
}

#[test]
fn dangerous_tools_rule() {
    let (config, _) = Config::from_json(&json!({"dangerous_tools": ["memory-set-property"]}));
    let table: &[(Action, Option<&[&str]>)] = &[
        (
            action(
                "memory-set-property",
                json!({"id": "x", "key": "TODO", "value": "DONE"}),
            ),
            Some(&[
                "`memory-set-property` is on the operator's list of tools that always need approval",
                "\"value\":\"DONE\"",
            ]),
        ),
        (action("memory-get", json!({"id": "x"})), None),
    ];
    run(table, &config);
    run(
        &[(action("memory-set-property", json!({})), None)],
        &Config::default(),
    );
}

#[test]
fn replies_and_malformed_args_pass() {
    let config = Config::default();
    let reply = Action {
        target: "tui".into(),
        tool: None,
        args: json!({"command": "sudo reboot"}).to_string(),
        text: Some("run sudo reboot yourself".into()),
        explanation: None,
    };
    assert_eq!(asked(&reply, &config), None);
    let mut bad = cmd("");
    bad.args = "{\"command\": \"sudo reboot\"".into();
    assert_eq!(
        asked(&bad, &config),
        None,
        "malformed args are read as {{}}"
    );
}

#[test]
fn questions_are_one_bounded_line() {
    let long = format!("sudo {}\n{}", "a".repeat(1000), "b".repeat(1000));
    let question = asked(&cmd(&long), &Config::default()).unwrap_or_default();
    assert!(
        !question.contains('\n') && question.chars().count() < 300,
        "{question}"
    );
}

#[test]
fn bad_configuration_keeps_the_defaults_and_says_so() {
    let (config, warnings) = Config::from_json(&json!({
        "programs": "sudo",
        "workspace": 3,
        "known_hosts": [1, "", "ok.org"],
        "write_tools": null,
    }));
    let defaults = Config::default();
    assert_eq!(config.programs, defaults.programs);
    assert_eq!(config.workspace, defaults.workspace);
    assert_eq!(config.write_tools, defaults.write_tools);
    assert_eq!(config.known_hosts, ["ok.org"]);
    assert_eq!(warnings.len(), 5, "{warnings:?}");
    let (config, warnings) = Config::from_json(&json!({"workspace": ["relative", "/w/../ws/"]}));
    assert_eq!(config.workspace, ["/ws"]);
    assert_eq!(warnings.len(), 1);
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
    let programs = config.programs.clone();
    let odd = [
        "",
        "'",
        "\"",
        "\\",
        "$(",
        "$((",
        "`",
        "\"$(",
        "\"`",
        "sudo '",
        "sh -c",
        "bash -c",
        "watch",
        "timeout",
        "sudo -u",
        "env -u",
        "((((((((",
        "))))",
        "é ü ☃ 🦀",
        "a=b",
        "--",
        "su -c 'su -c \"su -c 'su -c kill'\"'",
        "https://[",
        "http://:@/",
        "/..",
    ];
    for s in odd {
        for words in split(s) {
            let mut found = Vec::new();
            matches(&words, &programs, &mut found);
        }
        for args in [
            json!({"command": s}),
            json!({"program": s, "args": [s, s]}),
            json!({"argv": [s]}),
            json!({"path": s, "url": s}),
        ] {
            for tool in ["shell", "write-file", "http-fetch"] {
                let _ = check_action(&action(tool, args.clone()), &config);
            }
        }
        let mut raw = action("shell", json!({}));
        raw.args = s.into();
        let _ = check_action(&raw, &config);
    }
}
