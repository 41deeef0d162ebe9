//! The verdicts, table-driven. Each action comes with the effects the host would derive for
//! it. The fake secrets are assembled with `concat!` so that no whole one sits in this file for
//! a secret scanner (or this gate) to trip on.

use passepartout_sdk::context::testing::program;
use passepartout_sdk::context::{Effects, UrlEffect};
use passepartout_sdk::{Action, Verdict};
use serde_json::json;

use crate::{check_action, find_secret};

mod effects;

const AWS_ID: &str = concat!("AKIA", "Q3EGRXZ5T7W2PLMN");
const AWS_STS_ID: &str = concat!("ASIA", "J4KD8SLW2QX9ZR6T");
const AWS_SECRET: &str = concat!("k9Xq2Lm7VbRt5Np8Wz3Hc6", "Jf1Gd4Ys0UeAi7Ko2P");
const GITHUB: &str = concat!("gh", "p_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");
const GITHUB_APP: &str = concat!("gh", "s_", "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNn");
const GITHUB_PAT: &str = concat!(
    "github_",
    "pat_",
    "11AB2CD3EF0_q8w7e6r5t4y3u2i1o0pLkJhGfDsA"
);
const OPENAI: &str = concat!("sk-", "Tq7Lm2Xv9Rb4Nc8Wz1Hy5Pd3Jf6Gk0Ms2Ua7Ve4Yi9Ob5Qc");
const OPENAI_PROJ: &str = concat!(
    "sk-",
    "proj-",
    "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7_a1B-c2"
);
const ANTHROPIC: &str = concat!(
    "sk-",
    "ant-",
    "api03-",
    "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe8Dc7Ba6-Ab12AA"
);
const SLACK: &str = concat!(
    "xo",
    "xb-",
    "1234567890-9876543210",
    "-AbCdEfGhIjKlMnOpQrStUvWx"
);
const GOOGLE: &str = concat!("AI", "za", "SyD4k8Lm2Nq6Rs0Tu4Vw8Xy2Za6Bc0De4Fg");
const STRIPE: &str = concat!("sk_", "live_", "51HqWeRtYuIoPaSdFgHjKlZx");
const JWT: &str = concat!(
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
);
const KEY_BODY: &str = "MIIEpAIBAAKCAQEA7xQz3k9LmNpQrStUvWxYz0123456789abcdefGHIJ\nKLmnOPqrSTuv";

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

fn reply(text: &str) -> Act {
    Act {
        action: Action {
            target: "tui".into(),
            tool: None,
            args: "{}".into(),
            text: Some(text.into()),
            explanation: None,
        },
        effects: Effects::none(),
    }
}

/// One action that must be rejected: the secret in it, the kind and place the reason names,
/// and where it says the secret would go.
struct Case {
    act: Act,
    secret: String,
    kind: &'static str,
    place: &'static str,
    dest: Option<&'static str>,
}

fn case(act: Act, secret: &str, kind: &'static str, place: &'static str) -> Case {
    Case {
        act,
        secret: secret.into(),
        kind,
        place,
        dest: None,
    }
}

impl Case {
    /// The reason must say `would {dest}`.
    fn to(mut self, dest: &'static str) -> Case {
        self.dest = Some(dest);
        self
    }
}

fn pem(label: &str) -> String {
    format!("-----BEGIN {label}-----\n{KEY_BODY}\n-----END {label}-----\n")
}

fn secret_cases() -> Vec<Case> {
    let mut with_explanation = write("hello");
    with_explanation.action.explanation = Some(format!("uses the key {OPENAI} to call the API"));
    let mut bad_json = write("");
    bad_json.action.args = format!("{{\"content\": \"{GITHUB}\", oops");
    bad_json.effects = Effects::none(); // the host derives nothing from args it cannot read
    vec![
        case(
            write(&format!("id = {AWS_ID}\n")),
            AWS_ID,
            "an AWS access key id",
            "args.content",
        )
        .to("write an AWS access key id to /workspace/notes.txt"),
        case(
            reply(&format!("use {AWS_STS_ID}")),
            AWS_STS_ID,
            "an AWS access key id",
            "text",
        ),
        case(
            write(&format!("aws_secret_access_key = {AWS_SECRET}\n")),
            AWS_SECRET,
            "an AWS secret access key",
            "args.content",
        )
        .to("write an AWS secret access key to /workspace/notes.txt"),
        case(
            write(&pem("RSA PRIVATE KEY")),
            KEY_BODY,
            "a private key block",
            "args.content",
        )
        .to("write a private key block to /workspace/notes.txt"),
        case(
            write(&pem("OPENSSH PRIVATE KEY")),
            KEY_BODY,
            "a private key block",
            "args.content",
        )
        .to("write a private key block to /workspace/notes.txt"),
        case(
            write(&pem("EC PRIVATE KEY")),
            KEY_BODY,
            "a private key block",
            "args.content",
        )
        .to("write a private key block to /workspace/notes.txt"),
        case(
            write(&pem("PRIVATE KEY")),
            KEY_BODY,
            "a private key block",
            "args.content",
        )
        .to("write a private key block to /workspace/notes.txt"),
        case(
            write(&pem("PGP PRIVATE KEY BLOCK")),
            KEY_BODY,
            "a private key block",
            "args.content",
        )
        .to("write a private key block to /workspace/notes.txt"),
        case(write(GITHUB), GITHUB, "a GitHub token", "args.content")
            .to("write a GitHub token to /workspace/notes.txt"),
        case(
            write(GITHUB_APP),
            GITHUB_APP,
            "a GitHub token",
            "args.content",
        )
        .to("write a GitHub token to /workspace/notes.txt"),
        case(
            write(GITHUB_PAT),
            GITHUB_PAT,
            "a GitHub token",
            "args.content",
        )
        .to("write a GitHub token to /workspace/notes.txt"),
        case(
            shell("curl", &["-H", &format!("Authorization: token {GITHUB}")]),
            GITHUB,
            "a GitHub token",
            "args.args[1]",
        )
        .to("pass a GitHub token to the program curl"),
        case(
            write(&format!("OPENAI_API_KEY={OPENAI}")),
            OPENAI,
            "an OpenAI API key",
            "args.content",
        )
        .to("write an OpenAI API key to /workspace/notes.txt"),
        case(
            write(OPENAI_PROJ),
            OPENAI_PROJ,
            "an OpenAI API key",
            "args.content",
        )
        .to("write an OpenAI API key to /workspace/notes.txt"),
        case(with_explanation, OPENAI, "an OpenAI API key", "explanation"),
        case(
            write(ANTHROPIC),
            ANTHROPIC,
            "an Anthropic API key",
            "args.content",
        )
        .to("write an Anthropic API key to /workspace/notes.txt"),
        case(
            reply(&format!("token: {SLACK}")),
            SLACK,
            "a Slack token",
            "text",
        ),
        case(
            fetch(
                &format!("https://maps.googleapis.com/x?key={GOOGLE}"),
                json!({}),
            ),
            GOOGLE,
            "a Google API key",
            "args.url",
        )
        .to("send a Google API key to host maps.googleapis.com"),
        case(write(STRIPE), STRIPE, "a Stripe secret key", "args.content")
            .to("write a Stripe secret key to /workspace/notes.txt"),
        case(
            write(&format!("cookie: {JWT}")),
            JWT,
            "a JWT",
            "args.content",
        )
        .to("write a JWT to /workspace/notes.txt"),
        case(
            write("# db\nDB_PASSWORD=hunter2hunter2\n"),
            "hunter2hunter2",
            "a .env-style assignment of DB_PASSWORD",
            "args.content",
        )
        .to("write a .env-style assignment of DB_PASSWORD to /workspace/notes.txt"),
        case(
            write("export OPENAI_API_KEY=q8w7e6r5t4y3"),
            "q8w7e6r5t4y3",
            "a .env-style assignment of OPENAI_API_KEY",
            "args.content",
        )
        .to("write a .env-style assignment of OPENAI_API_KEY to /workspace/notes.txt"),
        case(
            action(
                "run",
                json!({"command": "MYSQLPASSWD='s3cr3t!pw' mysql -u root"}),
            ),
            "s3cr3t!pw",
            "a .env-style assignment of MYSQLPASSWD",
            "args.command",
        ),
        case(
            write("db:\n  password: \"hunter2hunter2\"\n"),
            "hunter2hunter2",
            "a .env-style assignment of password",
            "args.content",
        )
        .to("write a .env-style assignment of password to /workspace/notes.txt"),
        case(
            write("{\n  \"client_secret\": \"q8w7e6r5t4y3\"\n}"),
            "q8w7e6r5t4y3",
            "a .env-style assignment of client_secret",
            "args.content",
        )
        .to("write a .env-style assignment of client_secret to /workspace/notes.txt"),
        case(
            action(
                "deploy",
                json!({"exe": "deploy", "env": {"GITHUB_TOKEN": "q8w7e6r5t4y3"}}),
            )
            .with(program("deploy", &[])),
            "q8w7e6r5t4y3",
            "a value for the secret-named key GITHUB_TOKEN",
            "args.env.GITHUB_TOKEN",
        )
        .to("pass a value for the secret-named key GITHUB_TOKEN to the program deploy"),
        case(
            fetch(
                "https://api.example.org/",
                json!({"headers": {"Authorization": "Bearer q8w7e6r5t4y3"}}),
            ),
            "q8w7e6r5t4y3",
            "an Authorization header credential",
            "args.headers.Authorization",
        )
        .to("send an Authorization header credential to host api.example.org"),
        case(
            fetch(
                "https://api.example.org/",
                json!({"headers": {"Authorization": format!("Bearer {JWT}")}}),
            ),
            JWT,
            "a JWT",
            "args.headers.Authorization",
        )
        .to("send a JWT to host api.example.org"),
        case(
            fetch("postgres://app:pa55w0rd99@db.internal:5432/x", json!({})),
            "pa55w0rd99",
            "a password in a URL",
            "args.url",
        )
        .to("send a password in a URL to host db.internal"),
        case(
            fetch(
                "https://api.example.org/v1?user=me&access_token=q8w7e6r5t4",
                json!({}),
            ),
            "q8w7e6r5t4",
            "a secret in the URL query parameter access_token",
            "args.url",
        )
        .to("send a secret in the URL query parameter access_token to host api.example.org"),
        case(
            action(
                "write-file",
                json!({"path": "/workspace/creds.json", "content": {GITHUB: 1}}),
            )
            .with(writes("/workspace/creds.json")),
            GITHUB,
            "a GitHub token",
            "a key of args.content",
        )
        .to("write a GitHub token to /workspace/creds.json"),
        case(bad_json, GITHUB, "a GitHub token", "args (not valid JSON)"),
    ]
}

#[test]
fn secrets_are_rejected_with_their_kind_and_place_but_not_their_value() {
    let cases = secret_cases();
    assert!(cases.len() >= 25);
    for Case {
        act,
        secret,
        kind,
        place,
        dest,
    } in cases
    {
        let finding = act.find();
        let found = finding
            .as_ref()
            .map(|f| (f.kind.as_str(), f.place.as_str()));
        assert_eq!(found, Some((kind, place)), "for {:?}", act.action.args);
        let Verdict::Reject(reason) = act.check() else {
            panic!("should reject: {:?}", act.action);
        };
        match dest {
            Some(to) => {
                let would = format!("would {to} (found in {place})");
                assert!(reason.contains(&would), "{reason} should say {would}");
                assert!(reason.contains(kind), "{reason}");
            }
            None => assert!(
                reason.contains(&format!("carries {kind} in {place}")),
                "{reason}"
            ),
        }
        // No piece of the secret (six characters or more) is in the reason.
        let chars: Vec<char> = secret.chars().collect();
        for piece in chars.windows(6.min(chars.len())) {
            let piece: String = piece.iter().collect();
            assert!(!reason.contains(&piece), "{reason:?} echoes {piece:?}");
        }
    }
}

const HARMLESS: &[&str] = &[
    "Please explain how the AKIA prefix of AWS key ids is chosen.",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "aGVsbG8gd29ybGQ= is hello world in base64",
    "AWS's own example: AKIAIOSFODNN7EXAMPLE",
    "OPENAI_API_KEY=<your key here>",
    "OPENAI_API_KEY=${OPENAI_API_KEY}",
    "OPENAI_API_KEY=\nANTHROPIC_API_KEY=sk-ant-...\n",
    "DB_PASSWORD=changeme",
    "export GITHUB_TOKEN=$(gh auth token)",
    "api_token = get_token()\nTOKEN=args[1]\npassword: str = config.password",
    "pip install sk-learn-is-a-python-library-for-machine-learning-2024",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "unsigned: eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0.",
    "The password is stored in the vault; ask Alice for it.",
    "https://github.com/org/repo?tab=readme#token and alice@example.org",
    "task-force-1234567890abcdefghijABCDEFGHIJ",
    "stripe test mode: sk_test_51HqWeRtYuIoPaSdFgHjKlZx",
    "max_tokens=4096\nNEXT_PAGE_TOKEN=CAUQAAxyz\nif PASSWORD == expected:",
    "https://user@example.org/ and https://user:@example.org/",
    "Url::parse(\"ftp://rms:secret123@example.com\") and postgres://u:pw123456@db.test/x",
    "    Token:   \"#cccccc\",\n    passphrase: 'top secret',\n    private_key: \"_RSAPrivateKey\",",
    "    _token=_token, key_password=None,\n    client_secret=self.consumer.secret,\n",
    "consistent!(click_1, r\"-----BEGIN PRIVATE KEY-----\");\nconsistent!(click_2, r\"-----END PRIVATE KEY-----\");",
    "xoxb-your-token-here",
];

#[test]
fn harmless_look_alikes_pass() {
    for text in HARMLESS {
        assert_eq!(write(text).find(), None, "should pass: {text:?}");
        assert_eq!(reply(text).find(), None, "should pass: {text:?}");
    }
    let fine = [
        json!({"max_tokens": 4096, "page_token": "CAUQAAxyz", "next_token": "abcd1234efgh"}),
        json!({"headers": {"Authorization": "Bearer ${TOKEN}"}, "password": "<ask the user>"}),
        json!({"path": "/workspace/x", "secret_santa": "Bob"}),
    ];
    for args in fine {
        let act = fetch("https://api.example.org/", args.clone());
        assert_eq!(act.find(), None, "{args}");
    }
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
