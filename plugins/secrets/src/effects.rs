//! What the action's effects add: where a secret would go (a path written, a host sent to, a
//! program run), and the programs' arguments and the URLs scanned on their own, for what no
//! single string of the args shows (`--password VALUE` as two arguments, a header argument, a
//! URL with no scheme, percent-encoded or not).

use passepartout_sdk::context::{Effects, ProgramRun, UrlEffect};

use crate::decode::unescaped;
use crate::names::{find_in_query, is_placeholder, is_secret_name};
use crate::tokens::looks_random;
use crate::walk::{Destination, Finding, keyed, scan_text};

/// Longest name (path, host, program) quoted in a reason.
const NAME_MAX: usize = 100;

/// Where a secret found in the args' string `text` would go: to the program or the URL that
/// string is part of; otherwise, as the tool's arguments go, to the first host it sends to,
/// the first path it writes, the first program it runs, or the first memory headline it
/// changes.
pub fn destination(effects: &Effects, text: &str) -> Option<Destination> {
    if let Some(url) = effects.urls.iter().find(|u| u.url == text) {
        return Some(send(url));
    }
    let runs_it = |p: &&ProgramRun| p.program == text || p.argv.iter().any(|a| a == text);
    if let Some(run) = effects.programs.iter().find(runs_it) {
        return Some(pass(run));
    }
    let written = effects.writes.first();
    let changed = effects.memory_writes.first();
    effects
        .urls
        .first()
        .map(send)
        .or_else(|| written.map(|p| dest("write", format!("to {}", shown(&p.guest, "a path")))))
        .or_else(|| effects.programs.first().map(pass))
        .or_else(|| {
            changed.map(|id| {
                dest(
                    "write",
                    format!("to the memory headline {}", shown(id, "an ID")),
                )
            })
        })
}

/// The first secret in the arguments of a program the action runs, or in its name.
pub fn scan_programs(effects: &Effects) -> Option<Finding> {
    effects.programs.iter().find_map(|run| {
        let program = shown(&run.program, "a program");
        let (place, kind) = match scan_text(&run.program) {
            Some(kind) => ("the name of the program it runs".to_owned(), kind),
            None => {
                let (i, kind) = in_argv(&run.argv)?;
                (format!("argument {} of {program}", i + 1), kind)
            }
        };
        Some(Finding {
            dest: Some(pass(run)),
            ..Finding::new(kind, place)
        })
    })
}

/// The first secret in a URL the action fetches: by shape, a password in it, or a secret-named
/// query parameter (with or without a scheme), as written or percent-decoded.
pub fn scan_urls(effects: &Effects) -> Option<Finding> {
    effects.urls.iter().find_map(|url| {
        let query = url.url.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let kind = scan_text(&url.url)
            .or_else(|| find_in_query(query))
            .or_else(|| find_in_query(&unescaped(query)?))?;
        Some(Finding {
            dest: Some(send(url)),
            ..Finding::new(kind, "the URL it fetches")
        })
    })
}

/// The index and kind of the first secret in `argv`: in one argument by itself, in a header
/// argument (`Authorization: Bearer ...`, `X-Api-Key: ...`), or as the value of a
/// secret-named option (`--password VALUE`, `--token=VALUE`).
fn in_argv(argv: &[String]) -> Option<(usize, String)> {
    argv.iter().enumerate().find_map(|(i, arg)| {
        if let Some(kind) = scan_text(arg) {
            return Some((i, kind));
        }
        if let Some((name, value)) = arg.split_once(':')
            && is_token(name)
        {
            let value = value.trim();
            let auth = name.eq_ignore_ascii_case("authorization")
                || name.eq_ignore_ascii_case("proxy-authorization");
            let kind = if auth {
                keyed(name, value)
            } else {
                (is_secret_name(name) && is_credential(value))
                    .then(|| format!("a value for the secret-named header {name}"))
            };
            return kind.map(|kind| (i, kind));
        }
        let option = arg.strip_prefix("--").filter(|o| !o.is_empty())?;
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, argv.get(i + 1).map(String::as_str)),
        };
        (is_secret_name(name) && value.is_some_and(is_credential))
            .then(|| (i, format!("a value for the secret-named option --{name}")))
    })
}

/// Does `value` look like a credential: one word of 8 characters or more, not a placeholder,
/// mixing letters and digits or cases, without `=` inside (`id=x,src=y` is a setting)?
fn is_credential(value: &str) -> bool {
    value.chars().count() >= 8
        && !value.contains(char::is_whitespace)
        && !value.trim_end_matches('=').contains('=')
        && !value.starts_with('-')
        && !is_placeholder(value)
        && looks_random(value.as_bytes(), 2)
}

/// A header or option name: letters, digits, `-` and `_`.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

fn dest(verb: &'static str, to: String) -> Destination {
    Destination { verb, to }
}

fn send(url: &UrlEffect) -> Destination {
    if url.host.is_empty() {
        dest("send", "out in a URL with no host".into())
    } else {
        dest("send", format!("to host {}", shown(&url.host, "a host")))
    }
}

fn pass(run: &ProgramRun) -> Destination {
    dest(
        "pass",
        format!("to the program {}", shown(&run.program, "a program")),
    )
}

/// A name fit to quote in a reason: one line, at most [`NAME_MAX`] characters; `a` (`a path`,
/// `a host`...) with a note when the name itself holds a secret, which is never echoed.
fn shown(name: &str, a: &str) -> String {
    if scan_text(name).is_some() {
        return format!("{a} whose name holds a secret too");
    }
    let mut out: String = name
        .chars()
        .take(NAME_MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if name.chars().nth(NAME_MAX).is_some() {
        out.push('…');
    }
    out
}
