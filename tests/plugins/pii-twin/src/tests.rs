//! Native tests: every case of plugins/pii/cases.json gives the verdict and the question the
//! Python gate gives (each tool action with the context test_app.py gives it), and the
//! properties `plugins/pii/test_app.py` checks hold here too: the detectors and caps here, what
//! is decoded in [`decoding`], what is read from the action's context in [`effects`].

use passepartout_sdk::context::testing;
use passepartout_sdk::context::{Effects, ProgramRun, ToolIdentity, UrlEffect};

use super::json::{self, Doc, Node};
use super::{MAX_ARGS_CHARS, MAX_SCAN_CHARS, count_pii};

mod decoding;
mod effects;

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../plugins/pii/cases.json"
);

/// `json.dumps(value)` with Python's defaults (`ensure_ascii`, separators `", "` and `": "`), as
/// test_app.py turns a case's `args` into the WIT field. Numbers keep their text.
fn dumps(doc: &Doc<'_>, node: &Node<'_>) -> String {
    fn string(s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                ' '..='~' => out.push(c),
                _ => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            }
        }
        out.push('"');
    }
    fn value(doc: &Doc<'_>, node: &Node<'_>, out: &mut String) {
        match node {
            Node::Scalar(s) => out.push_str(s),
            Node::Str(s) => string(s, out),
            Node::Arr(_) => {
                out.push('[');
                for (i, item) in doc.children(node).iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    value(doc, item, out);
                }
                out.push(']');
            }
            Node::Obj(_) => {
                out.push('{');
                for (i, (k, item)) in doc.entries(node).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    string(k, out);
                    out.push_str(": ");
                    value(doc, item, out);
                }
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    value(doc, node, &mut out);
    out
}

/// `pii_rules.check` with no action context, as test_app.py calls it.
fn check(target: &str, tool: Option<&str>, args: &str, text: Option<&str>) -> Option<String> {
    super::check(target, tool, args, text, None, &Effects::none())
}

/// A URL effect, as test_app.py's `UrlEffect(url)` makes it (the gate reads only the URL).
fn url_effect(url: &str) -> UrlEffect {
    UrlEffect {
        url: url.to_owned(),
        scheme: "https".to_owned(),
        host: String::new(),
        port: Some(443),
        path: "/".to_owned(),
    }
}

fn get<'d, 'a>(doc: &'d Doc<'a>, node: &'d Node<'a>, key: &str) -> Option<&'d Node<'a>> {
    doc.entries(node).find(|(k, _)| *k == key).map(|(_, v)| v)
}

fn str_of<'d>(doc: &'d Doc<'_>, node: &'d Node<'_>, key: &str) -> Option<&'d str> {
    match get(doc, node, key)? {
        Node::Str(s) => Some(s),
        other => panic!("{key} is not a string: {other:?}"),
    }
}

/// The argument `key` of a case's action.
fn arg<'d, 'a>(doc: &'d Doc<'a>, action: &'d Node<'a>, key: &str) -> Option<&'d Node<'a>> {
    get(doc, get(doc, action, "args")?, key)
}

/// The tool identity and effects of a case's action as the host gives them with the standard
/// tools loaded (test_app.py's `context_of`): http-fetch's `url`; shell's program, arguments and
/// standard input; none for a reply or a tool nobody offers.
fn context_of(doc: &Doc<'_>, action: &Node<'_>) -> (Option<ToolIdentity>, Effects) {
    if str_of(doc, action, "target") != Some("tool") {
        return (None, Effects::none());
    }
    let tool = str_of(doc, action, "tool").unwrap_or_default();
    let (plugin, read_only) = match tool {
        "http-fetch" => ("http-fetch", false),
        "shell" => ("shell", false),
        "read-file" => ("files", true),
        "write-file" => ("files", false),
        _ => return (None, Effects::none()),
    };
    let mut effects = Effects::none();
    if tool == "http-fetch"
        && let Some(Node::Str(url)) = arg(doc, action, "url")
    {
        effects.urls.push(url_effect(url));
    }
    if tool == "shell"
        && let Some(Node::Str(program)) = arg(doc, action, "program")
    {
        let stdin = match arg(doc, action, "stdin") {
            Some(Node::Str(stdin)) => Some(stdin.to_string()),
            _ => None,
        };
        let argv: Vec<String> = match arg(doc, action, "args") {
            Some(list) if matches!(list, Node::Arr(_)) => doc
                .children(list)
                .iter()
                .map(|a| match a {
                    Node::Str(a) => a.to_string(),
                    other => dumps(doc, other),
                })
                .collect(),
            _ => Vec::new(),
        };
        effects.programs.push(ProgramRun {
            program: program.to_string(),
            argv,
            line: None,
            stdin,
        });
    }
    (Some(testing::tool(plugin, tool, read_only)), effects)
}

#[test]
fn every_case_gets_the_python_gates_verdict_and_question() {
    let text = std::fs::read_to_string(CASES).expect("plugins/pii/cases.json");
    let doc = json::parse(&text).expect("cases.json is JSON");
    let cases = get(&doc, &doc.root, "cases").expect("cases.json has a `cases` list");
    let cases = doc.children(cases);
    assert!(cases.len() >= 16, "only {} cases", cases.len());
    let (mut passes, mut asks) = (0, 0);
    for case in cases {
        let name = str_of(&doc, case, "name").expect("a case has a name");
        let action = get(&doc, case, "action").expect("a case has an action");
        let target = str_of(&doc, action, "target").expect("an action has a target");
        let args = get(&doc, action, "args").map_or_else(|| "{}".to_owned(), |a| dumps(&doc, a));
        let (identity, effects) = context_of(&doc, action);
        let question = super::check(
            target,
            str_of(&doc, action, "tool"),
            &args,
            str_of(&doc, action, "text"),
            identity.as_ref(),
            &effects,
        );
        match str_of(&doc, case, "expect").expect("a case has an expected verdict") {
            "pass" => {
                passes += 1;
                assert_eq!(question, None, "{name}");
            }
            "require-approval" => {
                asks += 1;
                let question = question.unwrap_or_else(|| panic!("{name}: passed"));
                if let Some(reason) = str_of(&doc, case, "reason") {
                    assert_eq!(question, reason, "{name}");
                }
            }
            other => panic!("{name}: unknown verdict {other}"),
        }
    }
    assert!(passes > 0 && asks > 0);
}

#[test]
fn the_question_never_echoes_the_data() {
    for text in [
        "bob@example.com and +33 6 12 34 56 78",
        "(555) 123-4567, 06 12 34 56 78",
    ] {
        let question = check("tui", None, "{}", Some(text)).expect("asks");
        for word in ["@", "555", "+33", "06 12", "example"] {
            assert!(!question.contains(word), "{question}");
        }
    }
}

#[test]
fn phone_formats() {
    for number in [
        "+33 6 12 34 56 78",
        "+33612345678",
        "+1 (555) 123-4567",
        "+1-555-123-4567",
        "+44 20 7946 0958",
        "(555) 123-4567",
        "(555)123-4567",
        "555-123-4567",
        "555.123.4567",
        "555 123 4567",
        "06 12 34 56 78",
        "06.12.34.56.78",
        "06-12-34-56-78",
        "0612345678",
        "020 7946 0958",
        "030 12345678",
    ] {
        assert_eq!(
            count_pii(&format!("call {number}, thanks")),
            (0, 1),
            "{number}"
        );
    }
}

#[test]
fn not_phones() {
    for text in [
        "1.2.3.4",
        "10.0.0.1",
        "192.168.100.200",
        "2026-11-22",
        "22-11-2026",
        "2026/11/22",
        "14:30:05",
        "$1,234.56",
        "1732233600",
        "978-3-16-148410-0",
        "4111 1111 1111 1111",
        "1555-123-45678",
        "555-123-4567-8",
        "v555-123-4567",
        "+1 2",
        "12345",
    ] {
        assert_eq!(count_pii(&format!("see {text} here")), (0, 0), "{text}");
    }
}

#[test]
fn addresses() {
    for (text, n) in [
        ("a@b.co", 1),
        ("first.last+tag@sub.example.co.uk.", 1),
        ("x@example.com,y@example.org", 2),
        ("bob@localhost", 0),
        ("bob@-bad.com", 0),
        ("bob@example.c0m", 0),
        ("@example.com", 0),
        ("...@example.com", 0),
        ("user at example dot com", 0),
    ] {
        assert_eq!(count_pii(text).0, n, "{text}");
    }
}

#[test]
fn digits_of_an_address_are_not_a_phone() {
    for text in [
        "0612345678@sms.example.com",
        "0612345678+tag@example.com",
        "first.0612345678@example.com",
        "555-123-4567.x@example.com",
        "x@06-12-34-56-78.example.com",
        "x@mail.555.123.4567.example.com",
    ] {
        assert_eq!(count_pii(text), (1, 0), "{text}");
    }
}

#[test]
fn args_that_are_not_json() {
    assert!(check("tool", Some("http-fetch"), "to bob@example.com", None).is_some());
    assert_eq!(
        check("tool", Some("webhook"), "to bob@example.com", None),
        None
    );
    assert_eq!(
        check("tool", None, r#"{"body": "bob@example.com"}"#, None),
        None
    );
}

#[test]
fn past_the_scan_limit_it_asks_without_looking() {
    let big = "nothing personal here. ".repeat(MAX_SCAN_CHARS / 23 + 1);
    let question = check("tui", None, "{}", Some(&big)).expect("asks");
    assert_eq!(
        question,
        "the reply sends 64 KiB of text, more than this gate checks for e-mail addresses and \
         phone numbers (64 KiB); approve sending it?"
    );
    let args = format!(r#"{{"body": "{big}"}}"#);
    let question = check("tool", Some("webhook"), &args, None).expect("asks");
    assert!(
        question.starts_with("the webhook call sends 64 KiB"),
        "{question}"
    );
    assert_eq!(check("tui", None, "{}", Some(&big[..MAX_SCAN_CHARS])), None);
    let huge = format!(r#"{{"command": "{}"}}"#, "x".repeat(MAX_ARGS_CHARS));
    let question = check("tool", Some("shell"), &huge, None).expect("asks");
    assert!(
        question.starts_with("the shell call sends 128 KiB"),
        "{question}"
    );
    // Characters, not bytes: 40 000 three-byte characters are 39 KiB of text.
    let wide = "€".repeat(40_000);
    assert_eq!(check("tui", None, "{}", Some(&wide)), None);
}

#[test]
fn many_small_strings_count_as_one_text() {
    let mut body = vec![r#""bob@example.com""#, r#""555-123-4567""#];
    body.extend(std::iter::repeat_n(r#""x""#, 1000));
    let args = format!(r#"{{"body": [{}]}}"#, body.join(", "));
    let question = check("tool", Some("webhook"), &args, None).expect("asks");
    assert!(
        question.contains("1 e-mail address and 1 phone number (in body)"),
        "{question}"
    );
    // Joined with newlines, two strings never make one number.
    let split = r#"{"body": ["555-123", "4567"]}"#;
    assert_eq!(check("tool", Some("webhook"), split, None), None);
}

#[test]
fn strings_come_in_order_at_any_depth() {
    let question = check(
        "tool",
        Some("http-fetch"),
        r#"{"url": "x", "z": {"a": ["+33 6 12 34 56 78"]}, "body": "bob@example.com"}"#,
        None,
    );
    assert_eq!(
        question.as_deref(),
        Some(
            "the http-fetch call sends 1 e-mail address and 1 phone number (in z, body); \
             approve sending them?"
        )
    );
    let deep = format!(
        "{{\"body\": {}\"x@example.com\"{}}}",
        "[".repeat(500),
        "]".repeat(500)
    );
    assert!(check("tool", Some("webhook"), &deep, None).is_some());
    assert_eq!(
        check("tool", Some("webhook"), &"[".repeat(100_000), None),
        None
    );
}

#[test]
fn json_as_python_reads_it() {
    // Accepted: NaN and infinities, lone surrogates; a repeated key keeps its first place and
    // its last value.
    let q = check(
        "tool",
        Some("webhook"),
        r#"{"n": NaN, "body": "a@b.co \ud800", "m": -Infinity}"#,
        None,
    );
    assert!(q.is_some());
    let repeated = r#"{"body": "bob@example.com", "body": "nothing"}"#;
    assert_eq!(check("tool", Some("webhook"), repeated, None), None);
    let order = r#"{"text": "a@b.co", "content": "c@d.co", "text": "e@f.co"}"#;
    assert_eq!(
        check("tool", Some("webhook"), order, None).as_deref(),
        Some("the webhook call sends 2 e-mail addresses (in text, content); approve sending them?")
    );
    // Refused: an integer Python will not convert, control characters in strings, trailing
    // commas, nesting past the limit.
    let big_int = format!(
        r#"{{"body": "bob@example.com", "n": {}}}"#,
        "1".repeat(4301)
    );
    assert_eq!(check("tool", Some("webhook"), &big_int, None), None);
    let ok_int = format!(
        r#"{{"body": "bob@example.com", "n": {}}}"#,
        "1".repeat(4300)
    );
    assert!(check("tool", Some("webhook"), &ok_int, None).is_some());
    let big_float = format!(
        r#"{{"body": "bob@example.com", "n": {}.5}}"#,
        "1".repeat(5000)
    );
    assert!(check("tool", Some("webhook"), &big_float, None).is_some());
    for bad in [
        "{\"body\": \"bob@example.com\tx\"}",
        r#"{"body": "bob@example.com",}"#,
        r#"{"body": "bob@example.com"} x"#,
        r#"{"body": "bob@example.com", "n": 01}"#,
        r#"{"body": "bob@example.com", "n": 1.}"#,
        r#"{"body": "bob@example.com", "n": .5}"#,
        r#"{"body": "bob@example.com\x"}"#,
    ] {
        assert_eq!(check("tool", Some("webhook"), bad, None), None, "{bad}");
    }
    let depth = |n: usize| {
        format!(
            "{{\"body\": \"bob@example.com\", \"deep\": {}{}}}",
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    assert!(check("tool", Some("webhook"), &depth(json::MAX_DEPTH - 1), None).is_some());
    assert_eq!(
        check("tool", Some("webhook"), &depth(json::MAX_DEPTH), None),
        None
    );
}

#[test]
fn which_actions_and_fields_are_scanned() {
    // The text of a tool action and the args of a reply with text are never scanned; nor is an
    // empty tool name, or an empty reply whose args hold nothing.
    assert_eq!(
        check("tool", Some("shell"), "{}", Some("bob@example.com")),
        None
    );
    assert_eq!(
        check("tui", None, r#"{"body": "bob@example.com"}"#, Some("hi")),
        None
    );
    assert_eq!(
        check("tool", Some(""), r#"{"body": "bob@example.com"}"#, None),
        None
    );
    assert_eq!(check("tui", None, "{}", Some("")), None);
    // Any target but "tool" is a reply.
    assert_eq!(
        check("shell", Some("shell"), "{}", Some("bob@example.com")).as_deref(),
        Some("the reply contains 1 e-mail address; approve sending it?")
    );
    // A sending tool's args that are JSON but not an object are scanned whole.
    assert_eq!(
        check("tool", Some("http-fetch"), r#"["bob@example.com"]"#, None).as_deref(),
        Some("the http-fetch call sends 1 e-mail address (in arguments); approve sending it?")
    );
}

#[test]
fn the_unrolled_phone_alternatives_match_as_a_backtracking_engine_does() {
    // Deterministic pseudo-random strings shaped like phone numbers (groups of digits, some in
    // parentheses, between separators, after a `+`, a `(` or a `0`) and mangled a little; every
    // start position compared with the generic matcher.
    const NOISE: &[char] = &['0', '5', ' ', '.', '-', '+', '(', ')', 'x'];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(state >> 33).expect("31 bits") % n
    };
    let mut matched = 0;
    for _ in 0..40_000 {
        let mut t: Vec<char> = ["", "+", "(", "0", "0", "+", ""][next(7)].chars().collect();
        for _ in 0..=next(8) {
            let paren = next(8) == 0;
            if paren {
                t.push('(');
            }
            for _ in 0..=next(5) {
                t.push(char::from(b'0' + u8::try_from(next(10)).expect("a digit")));
            }
            if paren {
                t.push(')');
            }
            if next(7) > 0 {
                t.push([' ', '.', '-', ' ', '-'][next(5)]);
            }
        }
        for _ in 0..next(3) {
            let at = next(t.len() + 1);
            t.insert(at, NOISE[next(NOISE.len())]);
        }
        for q in 0..=t.len() {
            let fast = super::scan::first_alternative(&t, q);
            assert_eq!(
                fast,
                super::oracle::first_alternative(&t, q),
                "{t:?} at {q}"
            );
            matched += usize::from(fast.is_some());
        }
    }
    assert!(
        matched > 10_000,
        "only {matched} matches: the strings test too little"
    );
}
