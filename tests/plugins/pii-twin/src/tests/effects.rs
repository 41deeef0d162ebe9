//! What a call sends is read from the host's effects and the tool behind the name, not only from
//! the names the model used (test_app.py's `ByEffects`); and a reply with no text sends its args.

use passepartout_sdk::context::testing::{self, command_line, program};
use passepartout_sdk::context::{Effects, ProgramRun, ToolIdentity};

use super::{check, url_effect};
use crate::MAX_ARGS_CHARS;

/// `crate::check` on a tool call named `tool`, with its context.
fn call(
    tool: &str,
    args: &str,
    identity: Option<&ToolIdentity>,
    effects: &Effects,
) -> Option<String> {
    crate::check("tool", Some(tool), args, None, identity, effects)
}

/// Effects that fetch `urls`.
fn fetching(urls: &[&str]) -> Effects {
    Effects {
        urls: urls.iter().copied().map(url_effect).collect(),
        ..Effects::none()
    }
}

/// A run of `program` with `argv`, reading `stdin`.
fn run(program: &str, argv: &[&str], stdin: &str) -> ProgramRun {
    ProgramRun {
        program: program.to_owned(),
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        line: None,
        stdin: Some(stdin.to_owned()),
    }
}

/// Effects of the runs `programs`.
fn running(programs: Vec<ProgramRun>) -> Effects {
    Effects {
        programs,
        ..Effects::none()
    }
}

#[test]
fn an_alias_of_http_fetch_sends_every_argument() {
    // `fetch`, the operator's alias of http-fetch.
    let identity = testing::tool("http-fetch", "http-fetch", false);
    let fetch = |args: &str| call("fetch", args, Some(&identity), &Effects::none());
    let args =
        r#"{"url": "https://api.example.org/x", "headers": {"X-Contact": "alice@example.com"}}"#;
    assert_eq!(
        fetch(args).as_deref(),
        Some("the fetch call sends 1 e-mail address (in headers); approve sending it?")
    );
    assert_eq!(fetch(r#"{"url": "https://api.example.org/x"}"#), None);
}

#[test]
fn a_tool_that_fetches_a_url_sends_every_argument() {
    // An MCP tool the operator mapped to a `url` effect, and a third-party tool declaring one.
    let mcp = ToolIdentity {
        plugin: "crm".to_owned(),
        version: "mcp".to_owned(),
        tool: "create_contact".to_owned(),
        read_only: false,
        declares_effects: true,
    };
    let args =
        r#"{"endpoint": "https://crm.example.org/c", "payload": {"tel": "+33 6 12 34 56 78"}}"#;
    let effects = fetching(&["https://crm.example.org/c"]);
    assert_eq!(
        call("crm-create", args, Some(&mcp), &effects).as_deref(),
        Some("the crm-create call sends 1 phone number (in payload); approve sending it?")
    );
    let beacon = testing::tool("beacons", "beacon", false);
    let target = "https://t.example.org/b?m=alice%40example.com";
    let args = format!(r#"{{"to": "{target}"}}"#);
    assert_eq!(
        call("beacon", &args, Some(&beacon), &fetching(&[target])).as_deref(),
        Some("the beacon call sends 1 e-mail address (in to); approve sending it?")
    );
    // Without the effect the same call is judged by its argument names only.
    assert_eq!(check("tool", Some("beacon"), &args, None), None);
}

#[test]
fn a_url_the_args_do_not_hold_is_scanned_on_its_own() {
    let effects = fetching(&["https://t.example.org/?m=bob@example.com"]);
    assert_eq!(
        call("ping", "{}", None, &effects).as_deref(),
        Some("the ping call sends 1 e-mail address (in the URL it fetches); approve sending it?")
    );
}

#[test]
fn a_program_sends_its_arguments_and_its_standard_input() {
    let runner = testing::tool("runners", "runner", false);
    let line = "curl -d email=alice@example.com https://api.example.org/x";
    let args = format!(r#"{{"command": "{line}"}}"#);
    assert_eq!(
        call("runner", &args, Some(&runner), &command_line(line)).as_deref(),
        Some(
            "the runner call sends 1 e-mail address (in the arguments of curl); approve sending \
             it?"
        )
    );
    let mail = running(vec![run("mail", &["-s", "hi"], "ring 555-123-4567")]);
    assert_eq!(
        call("runner", "{}", Some(&runner), &mail).as_deref(),
        Some(
            "the runner call sends 1 phone number (in the standard input of mail); approve \
             sending it?"
        )
    );
    // Arguments are joined by spaces, as `echo` prints them.
    let split = program("echo", &["+33", "6", "12", "34", "56", "78"]);
    let question = call("x", "{}", None, &split).expect("asks");
    assert!(question.contains("1 phone number"), "{question}");
    let harmless = running(vec![run("git", &["log", "-n", "5"], "")]);
    assert_eq!(call("x", "{}", None, &harmless), None);
}

#[test]
fn a_program_name_is_quoted_only_when_it_holds_nothing_personal() {
    let long = "x".repeat(41);
    for name in ["bob@example.com", "0612345678", "a b", long.as_str()] {
        let question = call("x", "{}", None, &program(name, &["alice@example.com"])).expect("asks");
        assert!(
            question.contains("(in the arguments of a program)"),
            "{name}: {question}"
        );
    }
    let plain = "x".repeat(40);
    let question = call("x", "{}", None, &program(&plain, &["alice@example.com"])).expect("asks");
    assert!(
        question.contains(&format!("(in the arguments of {plain})")),
        "{question}"
    );
}

#[test]
fn what_the_args_already_hold_is_not_counted_twice() {
    let url = "https://api.example.org/x?m=alice@example.com";
    let args = format!(r#"{{"url": "{url}"}}"#);
    assert_eq!(
        call("http-fetch", &args, None, &fetching(&[url])).as_deref(),
        Some("the http-fetch call sends 1 e-mail address (in url); approve sending it?")
    );
    // A body that is also the program's standard input, two runs of one program.
    let body = "call 555-123-4567";
    let runs = running(vec![run("curl", &["-d", "@-"], body); 2]);
    let args = format!(r#"{{"body": "{body}"}}"#);
    assert_eq!(
        call("post", &args, None, &runs).as_deref(),
        Some("the post call sends 1 phone number (in body); approve sending it?")
    );
    // Two runs the args do not hold count twice, under one place.
    let runs = running(vec![run("mail", &[], body); 2]);
    assert_eq!(
        call("post", "{}", None, &runs).as_deref(),
        Some(
            "the post call sends 2 phone numbers (in the standard input of mail); approve \
             sending them?"
        )
    );
}

#[test]
fn a_reply_without_text_sends_its_args() {
    assert_eq!(
        check("tui", None, "to bob@example.com", None).as_deref(),
        Some("the reply contains 1 e-mail address; approve sending it?")
    );
    assert_eq!(
        check(
            "chat",
            None,
            r#"{"bob@example.com": [1, "555-123-4567"]}"#,
            Some("")
        )
        .as_deref(),
        Some("the reply contains 1 e-mail address and 1 phone number; approve sending them?")
    );
    // Its text, when it has one, is what is sent.
    assert_eq!(
        check("tui", None, r#"{"m": "bob@example.com"}"#, Some("hi")),
        None
    );
    let huge = format!(r#"{{"m": "{}"}}"#, "x".repeat(MAX_ARGS_CHARS));
    let question = check("tui", None, &huge, None).expect("asks");
    assert!(
        question.contains("more than this gate checks"),
        "{question}"
    );
    // Args that `json.loads` gives as `None` (`null`) are scanned as written: nothing here.
    assert_eq!(check("tui", None, "null", None), None);
}
