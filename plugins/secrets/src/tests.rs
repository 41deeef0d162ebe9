//! The verdicts: the table in `cases.json` (which `plugin test` also runs under the runtime),
//! natively, each action with the effects the host would derive for it; and what the table
//! cannot hold. The fake secrets here are assembled with `concat!` (in cases.json, written
//! with a JSON escape) so that no whole one sits in a file for a secret scanner to trip on.

use passepartout_sdk::context::testing::program;
use passepartout_sdk::context::{Effects, UrlEffect};
use passepartout_sdk::{Action, Verdict};
use serde_json::json;

use crate::{check_action, find_secret};

mod effects;
mod encoded;

const AWS_ID: &str = concat!("AKIA", "Q3EGRXZ5T7W2PLMN");
const GITHUB: &str = concat!("gh", "p_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");

/// An action with the effects the host would derive for it.
#[derive(Clone)]
struct Act {
    action: Action,
    effects: Effects,
}

impl Act {
    fn with(mut self, effects: Effects) -> Act {
        self.effects = effects;
        self
    }

    fn find(&self) -> Option<crate::Finding> {
        find_secret(&self.action, &self.effects)
    }

    fn check(&self) -> Verdict {
        check_action(&self.action, &self.effects)
    }
}

/// A call of `tool` with `args`, with no effects (a tool that declares none).
fn action(tool: &str, args: serde_json::Value) -> Act {
    Act {
        action: Action {
            target: "tool".into(),
            tool: Some(tool.into()),
            args: args.to_string(),
            text: None,
            explanation: Some("save the notes the user dictated".into()),
        },
        effects: Effects::none(),
    }
}

fn writes(path: &str) -> Effects {
    passepartout_sdk::context::testing::write(path, None)
}

/// The effect of fetching `url`, its host read as the host reads it.
fn fetches(url: &str) -> Effects {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = authority.split(':').next().unwrap_or_default();
    Effects {
        urls: vec![UrlEffect {
            url: url.into(),
            scheme: scheme.to_ascii_lowercase(),
            host: host.to_ascii_lowercase(),
            port: None,
            path: "/".into(),
        }],
        ..Effects::none()
    }
}

/// write-file writing `content` to /workspace/notes.txt.
fn write(content: &str) -> Act {
    action(
        "write-file",
        json!({"path": "/workspace/notes.txt", "content": content}),
    )
    .with(writes("/workspace/notes.txt"))
}

/// http-fetch fetching `url`, with more `args`.
fn fetch(url: &str, mut args: serde_json::Value) -> Act {
    args["url"] = url.into();
    action("http-fetch", args).with(fetches(url))
}

/// The shell tool running `name` with `argv`.
fn shell(name: &str, argv: &[&str]) -> Act {
    action("shell", json!({"program": name, "args": argv})).with(program(name, argv))
}

/// Plugin "evil"'s tool "runner", which runs `{"exe": ..., "params": [...]}`.
fn runner(exe: &str, params: &[&str]) -> Act {
    action("runner", json!({"exe": exe, "params": params})).with(program(exe, params))
}

const CASES: &str = include_str!("../cases.json");

/// A case of cases.json as the crate's functions see it: the action, with the effects the
/// standard tools (write-file, http-fetch, shell) give it, as `plugin test` has the host
/// derive them from their schemas.
fn act_of(case: &serde_json::Value) -> Act {
    let a = &case["action"];
    let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    let args = &a["args"];
    let tool = text(&a["tool"]);
    let arg = |k: &str| args[k].as_str().unwrap_or_default();
    let effects = match tool.as_deref() {
        Some("write-file") => writes(arg("path")),
        Some("http-fetch") => fetches(arg("url")),
        Some("shell") => {
            let argv: Vec<&str> = args["args"]
                .as_array()
                .map(|v| v.iter().filter_map(|s| s.as_str()).collect())
                .unwrap_or_default();
            program(arg("program"), &argv)
        }
        _ => Effects::none(),
    };
    let target = text(&a["target"]).unwrap_or_else(|| "tool".into());
    Act {
        action: Action {
            target,
            tool,
            args: if args.is_null() {
                "{}".into()
            } else {
                args.to_string()
            },
            text: text(&a["text"]),
            explanation: text(&a["explanation"]),
        },
        effects,
    }
}

#[test]
fn every_case_of_the_table_holds_natively() {
    let doc: serde_json::Value = serde_json::from_str(CASES).expect("cases.json is JSON");
    let cases = doc["cases"].as_array().expect("a list of cases");
    let rejects = cases.iter().filter(|c| c["expect"] == "reject").count();
    assert!(
        rejects >= 30 && cases.len() - rejects >= 50,
        "{rejects} of {}",
        cases.len()
    );
    for case in cases {
        let name = case["name"].as_str().unwrap_or_default();
        let verdict = act_of(case).check();
        match (case["expect"].as_str(), verdict) {
            (Some("pass"), Verdict::Pass) => {}
            (Some("reject"), Verdict::Reject(reason)) => {
                let want = case["reason"].as_str().unwrap_or_default();
                assert!(reason.contains(want), "{name}: {reason} should say {want}");
                let secret = case["conceals"].as_str().expect("what it conceals");
                // No piece of the secret (six characters or more) is in the reason.
                let chars: Vec<char> = secret.chars().collect();
                for piece in chars.windows(6.min(chars.len())) {
                    let piece: String = piece.iter().collect();
                    assert!(
                        !reason.contains(&piece),
                        "{name}: {reason:?} echoes {piece:?}"
                    );
                }
            }
            (expect, got) => panic!("{name}: expected {expect:?}, got {got:?}"),
        }
    }
}

/// What the host never hands a gate (its args are always a JSON object) still gets a verdict.
#[test]
fn args_that_are_not_json_are_scanned_as_one_string() {
    let mut bad_json = write("");
    bad_json.action.args = format!("{{\"content\": \"{GITHUB}\", oops");
    bad_json.effects = Effects::none();
    let finding = bad_json.find().expect("found");
    assert_eq!(
        (finding.kind.as_str(), finding.place.as_str()),
        ("a GitHub token", "args (not valid JSON)")
    );
}

/// A third-party tool's declared program effect names where a secret-named value would go
/// (no standard tool takes an environment, so this one is not in cases.json).
#[test]
fn a_secret_named_value_for_a_program_names_the_program() {
    let act = action(
        "deploy",
        json!({"exe": "deploy", "env": {"GITHUB_TOKEN": "q8w7e6r5t4y3"}}),
    )
    .with(program("deploy", &[]));
    let Verdict::Reject(reason) = act.check() else {
        panic!("should reject");
    };
    assert!(
        reason.contains(
            "would pass a value for the secret-named key GITHUB_TOKEN to the program deploy \
             (found in args.env.GITHUB_TOKEN)"
        ),
        "{reason}"
    );
    assert!(!reason.contains("q8w7e6"), "{reason}");
}

#[test]
fn odd_inputs_never_panic() {
    let long = "A".repeat(10_000);
    let odd = [
        "",
        "{",
        "null",
        "[]",
        "\"just a string\"",
        "-----BEGIN ",
        "-----BEGIN PRIVATE KEY-----",
        "eyJ",
        "eyJ.",
        "eyJaaaaaaaaaaaa..",
        "sk-",
        "AKIA",
        "aws_secret_access_key",
        "aws_secret_access_key :",
        "=",
        "\"",
        "'a'=",
        "x://",
        "://@:",
        "é=ü ☃://ß@€?%=&",
        "--",
        "--=",
        ":",
        "?",
        "%",
        "%%",
        "%4",
        "%FF%FE",
        "\\",
        "\\u",
        "\\ud800\\udc00",
        "\\x4",
        "{\"a\": \"\\u0",
        "[\"%ZZ\", \"%255F\", \"\\\\u005f\"]",
        "a=&=b&&",
        &long,
    ];
    for s in odd {
        let mut a = write(s);
        a.action.args = s.into();
        a.action.text = Some(s.into());
        a.action.explanation = Some(s.into());
        let _ = a.check();
        let _ = write(s).check();
        let mut fx = program(s, &[s, s, "--token", s]);
        fx.writes = writes(s).writes;
        fx.urls = fetches(s).urls;
        fx.memory_writes = vec![s.into()];
        let _ = a.clone().with(fx.clone()).check();
        let _ = action("x", json!({"a": s})).with(fx).check();
    }
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let mut a = write("");
    a.action.args = deep;
    let _ = a.check();
}
