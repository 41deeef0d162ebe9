//! The gate on whole actions: effects first, the old argument reading as a fallback.

use passepartout_sdk::context::testing::{self, program, tool};
use passepartout_sdk::context::{Effects, ProgramRun};
use passepartout_sdk::{Action, Gate, SignalView, Verdict};
use serde_json::{Value, json};

use crate::{ShellGuard, check_action};

fn action(tool: &str, args: Value) -> Action {
    Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args: args.to_string(),
        text: None,
        explanation: None,
    }
}

fn signal() -> SignalView {
    testing::signal()
}

/// The first-party shell tool running `program` with `argv`, as the host shows it.
fn shell(program_name: &str, argv: &[&str]) -> Verdict {
    let a = action("shell", json!({"program": program_name, "args": argv}));
    check_action(
        &a,
        Some(&tool("shell", "shell", false)),
        &program(program_name, argv),
    )
}

fn rejected(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Reject(_))
}

/// A verdict as text, to compare (`Verdict` has no `PartialEq`).
fn show(verdict: &Verdict) -> String {
    format!("{verdict:?}")
}

const PASS: &str = "Verdict::Pass";

#[test]
fn programs_in_effects_are_judged() {
    assert_eq!(
        show(&shell("rm", &["-rf", "/"])),
        show(&Verdict::Reject(
            "rm -r / deletes a system directory".into()
        ))
    );
    assert!(rejected(&shell("sh", &["-c", "rm -rf /"])));
    assert!(rejected(&shell(
        "/usr/bin/sudo",
        &["dd", "if=/dev/zero", "of=/dev/sda"]
    )));
    assert_eq!(show(&shell("ls", &["-la"])), PASS);
    // An argument is one word: the shell tool runs no shell.
    assert_eq!(show(&shell("echo", &["a; rm -rf /"])), PASS);
    assert_eq!(
        show(&shell("git", &["commit", "-m", "rm -rf / is bad"])),
        PASS
    );
}

#[test]
fn every_program_run_is_judged_and_a_command_line_as_program_too() {
    let mut fx = program("ls", &[]);
    fx.programs.push(ProgramRun {
        program: "chmod".into(),
        argv: vec!["-R".into(), "777".into(), "/".into()],
        line: None,
        stdin: None,
    });
    let runner = tool("evil", "runner", false);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
    let line = program("rm -rf /", &[]);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &line
    )));
}

#[test]
fn a_third_party_tool_is_judged_exactly_like_the_shell_tool() {
    let args = json!({"exe": "sudo", "params": ["rm", "-rf", "/"]});
    let evil = check_action(
        &action("runner", args.clone()),
        Some(&tool("evil", "runner", false)),
        &program("sudo", &["rm", "-rf", "/"]),
    );
    assert_eq!(show(&evil), show(&shell("sudo", &["rm", "-rf", "/"])));
    assert!(rejected(&evil));
    // Through the component's entry point, with the context the host would give.
    let via_gate = testing::with(
        Some(tool("evil", "runner", false)),
        program("sudo", &["rm", "-rf", "/"]),
        || ShellGuard::check(action("runner", args), signal()),
    );
    assert_eq!(show(&via_gate), show(&evil));
}

#[test]
fn a_tool_named_shell_gets_nothing_from_its_name() {
    let impostor = tool("evil", "shell", false);
    let a = action("shell", json!({"program": "ls"}));
    assert!(rejected(&check_action(
        &a,
        Some(&impostor),
        &program("rm", &["-rf", "~"])
    )));
    assert_eq!(
        show(&check_action(&a, Some(&impostor), &program("ls", &[]))),
        PASS
    );
}

#[test]
fn a_tool_that_declares_programs_is_judged_by_them_and_others_have_commands_read_too() {
    // The shell tool declares its program: an extra `cmd` key is not what runs.
    let shell = tool("shell", "shell", false);
    let a = action(
        "shell",
        json!({"program": "ls", "args": [], "cmd": "rm -rf /"}),
    );
    assert_eq!(
        show(&check_action(&a, Some(&shell), &program("ls", &[]))),
        PASS
    );
    // A tool that declares no program (only a write) may still carry one under another name.
    let write = tool("files", "write-file", false);
    let a = action(
        "write-file",
        json!({"path": "/workspace/notes.md", "command": "rm -rf /"}),
    );
    assert!(rejected(&check_action(&a, Some(&write), &Effects::none())));
    let a = action(
        "write-file",
        json!({"path": "/workspace/notes.md", "content": "rm -rf /"}),
    );
    assert_eq!(
        show(&check_action(&a, Some(&write), &Effects::none())),
        PASS
    );
}

#[test]
fn tools_that_declare_nothing_have_their_args_read_as_before() {
    let mut opaque = tool("evil", "runner", false);
    opaque.declares_effects = false;
    let none = Effects::none();
    for args in [
        json!({"cmd": "rm -rf /"}),
        json!({"command": "sudo bash -c 'rm -rf /'"}),
        json!({"program": "rm", "args": ["-rf", "/"]}),
        json!({"argv": ["chmod", "-R", "777", "/"]}),
    ] {
        let a = action("runner", args);
        assert!(
            rejected(&check_action(&a, Some(&opaque), &none)),
            "{}",
            a.args
        );
        assert!(rejected(&check_action(&a, None, &none)), "{}", a.args);
    }
    let harmless = action("runner", json!({"cmd": "ls -la"}));
    assert_eq!(show(&check_action(&harmless, Some(&opaque), &none)), PASS);
    // With no tool known, a `shell` action must say what it runs.
    let empty = action("shell", json!({}));
    assert!(rejected(&check_action(&empty, None, &none)));
}

#[test]
fn a_large_body_without_a_command_is_not_parsed_and_an_escaped_key_still_is() {
    let body = json!({"path": "/workspace/a", "content": "x ".repeat(200_000)});
    assert_eq!(
        show(&ShellGuard::check(action("write-file", body), signal())),
        PASS
    );
    let mut escaped = action("run", json!({}));
    escaped.args = r#"{"\u0063md": "rm -rf /"}"#.into();
    assert!(rejected(&ShellGuard::check(escaped, signal())));
    assert!(rejected(&ShellGuard::check(
        action("run", json!({"cmd": "rm -rf /"})),
        signal()
    )));
}

#[test]
fn replies_pass() {
    let reply = Action {
        target: "chat".into(),
        tool: None,
        args: "{}".into(),
        text: Some("rm -rf / is a bad idea".into()),
        explanation: None,
    };
    assert_eq!(show(&check_action(&reply, None, &Effects::none())), PASS);
}

#[test]
fn a_command_line_is_judged_as_a_shell_reads_it() {
    // Split on whitespace, `sh -c 'rm -rf /'` is `sh`, `-c`, `'rm`, `-rf`, `/'`: only the line
    // shows what runs.
    let fx = passepartout_sdk::context::testing::command_line("sh -c 'rm -rf /'");
    let runner = tool("evil", "runner", false);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
    let fx = passepartout_sdk::context::testing::command_line("echo 'rm -rf /'");
    assert!(!rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
}

#[test]
fn a_script_fed_to_a_shell_on_stdin_is_judged() {
    let shell = tool("shell", "shell", false);
    let mut fx = program("bash", &[]);
    fx.programs[0].stdin = Some("cd / && rm -rf /".into());
    assert!(rejected(&check_action(
        &action(
            "shell",
            json!({"program": "bash", "stdin": "cd / && rm -rf /"})
        ),
        Some(&shell),
        &fx
    )));
    // Text fed to a program that is not a shell is data.
    let mut fx = program("cat", &[]);
    fx.programs[0].stdin = Some("rm -rf /".into());
    assert!(!rejected(&check_action(
        &action("shell", json!({"program": "cat", "stdin": "rm -rf /"})),
        Some(&shell),
        &fx
    )));
}

#[test]
fn a_tool_that_declares_other_effects_still_has_an_undeclared_command_read() {
    // It declares only a URL, and carries a command under a name it does not declare.
    let fetcher = tool("evil", "fetcher", false);
    let fx = Effects::none();
    assert!(rejected(&check_action(
        &action(
            "fetcher",
            json!({"url": "https://example.org", "command": "rm -rf ~"})
        ),
        Some(&fetcher),
        &fx
    )));
}
