//! `pii-twin`: a test-only gate, the Rust twin of the Python gate `plugins/pii`. It applies
//! exactly the rules of `plugins/pii/pii_rules.py` (and the glue of `app.py`): the same actions
//! and fields scanned, the same detectors of e-mail addresses and phone numbers, the same
//! decoding, the same caps (64 Ki characters scanned, 128 Ki characters of args parsed, 16 Ki
//! characters scanned for what encoded text hides), and the same question, word for word.
//! tests/build.rs builds it for the end-to-end tests (`PII_TWIN_WASM`), which run both through
//! the runtime on `plugins/pii/cases.json` to show that a Python gate passes and asks exactly as
//! its Rust twin does.
//!
//! What an action sends out ([`outgoing`]): a reply's text, or its args when it has none; a tool
//! call's data, found by the tool's and the arguments' names and by the effects the host
//! derives from the tool's declared schema (read through `passepartout_sdk::context`, for tool
//! calls only, as `app.py` does). Each text is scanned as written and as its receiver may
//! decode it ([`decode`]: percent-encoding, `+` for a space in a form body, `\u0040`/`\x40`).
//!
//! Lengths are counted in code points, as Python's `len` counts them, and `args` is read as
//! `json.loads` reads it ([`json`]).
//!
//! The rules are [`check`], a plain function, tested natively against `cases.json`.

pub mod decode;
pub mod json;
pub mod outgoing;
pub mod scan;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

use passepartout_sdk::context::{self, Effects, ToolIdentity};
use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

use outgoing::Source;

/// Most characters one action may carry out before the gate stops looking and simply asks
/// (`pii_rules.MAX_SCAN_CHARS`).
pub const MAX_SCAN_CHARS: usize = 64 * 1024;
/// Longest `args` (JSON text), in characters, that the gate parses at all
/// (`pii_rules.MAX_ARGS_CHARS`).
pub const MAX_ARGS_CHARS: usize = 2 * MAX_SCAN_CHARS;
/// Most characters the gate scans besides the texts as written, for what they may hide (the
/// pieces that may be decoded, as written and in each decoded form: [`decode::count`]); past
/// it, it asks (`pii_rules.MAX_DECODED_CHARS`).
pub const MAX_DECODED_CHARS: usize = MAX_SCAN_CHARS / 4;

/// (e-mail addresses, phone numbers) found in `text` (`pii_rules.count_pii`).
pub fn count_pii(text: &str) -> (usize, usize) {
    let chars: Vec<char> = text.chars().collect();
    (scan::count_emails(&chars), scan::count_phones(&chars))
}

/// The gate's decision (`pii_rules.check`): `None` to pass, or the question a person must answer
/// before the action goes out. It names what kind of personal data was found and how much,
/// never the data. Past [`MAX_SCAN_CHARS`] (or [`MAX_DECODED_CHARS`] of decoded text) it does
/// not look, and asks.
///
/// `target`, `tool`, `args` (JSON text) and `text` are the action's fields; `identity` (the tool
/// behind the name) and `effects` are what the host's `action-context` says of a tool call:
/// `None` and no effects when it says nothing.
pub fn check(
    target: &str,
    tool: Option<&str>,
    args: &str,
    text: Option<&str>,
    identity: Option<&ToolIdentity>,
    effects: &Effects,
) -> Option<String> {
    let reply = target != "tool";
    let (what, sources) = if reply {
        let what = "the reply".to_owned();
        let sent = match text.filter(|t| !t.is_empty()) {
            Some(text) => text.to_owned(),
            None => {
                // A reply without text sends its args, as JSON text: keys and values.
                let len = args.chars().count();
                if len > MAX_ARGS_CHARS {
                    return Some(too_long(&what, len));
                }
                outgoing::reply_args(args)
            }
        };
        (what, vec![Source::new("reply", sent)])
    } else {
        let tool = tool.filter(|t| !t.is_empty())?;
        let what = format!("the {tool} call");
        let len = args.chars().count();
        if len > MAX_ARGS_CHARS {
            return Some(too_long(&what, len));
        }
        let sources = outgoing::tool_call(tool, args, identity, effects);
        (what, sources)
    };
    // One text per source: a newline ends any address or number, so joining loses none.
    let size: usize = sources.iter().map(|s| s.text.chars().count()).sum();
    if size > MAX_SCAN_CHARS {
        return Some(too_long(&what, size));
    }
    let (mut emails, mut phones, mut decoded) = (0, 0, 0);
    let mut fields: Vec<&str> = Vec::new();
    for source in &sources {
        let Some(found) = decode::count(&source.text, MAX_DECODED_CHARS - decoded) else {
            return Some(too_encoded(&what));
        };
        decoded += found.scanned;
        if found.emails > 0 || found.phones > 0 {
            // Several effects may share a place (two runs of one program): named once.
            if !fields.contains(&source.place.as_str()) {
                fields.push(&source.place);
            }
            emails += found.emails;
            phones += found.phones;
        }
    }
    if fields.is_empty() {
        return None;
    }
    let found = what_was_found(emails, phones);
    let them = if emails + phones == 1 { "it" } else { "them" };
    Some(if reply {
        format!("the reply contains {found}; approve sending {them}?")
    } else {
        format!(
            "{what} sends {found} (in {}); approve sending {them}?",
            fields.join(", ")
        )
    })
}

/// "1 e-mail address and 2 phone numbers" (`pii_rules._what`).
fn what_was_found(emails: usize, phones: usize) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if emails > 0 {
        parts.push(plural(emails, "e-mail address", "e-mail addresses"));
    }
    if phones > 0 {
        parts.push(plural(phones, "phone number", "phone numbers"));
    }
    parts.join(" and ")
}

/// The question past a cap (`pii_rules._too_long`): `size` in characters.
fn too_long(what: &str, size: usize) -> String {
    format!(
        "{what} sends {} KiB of text, more than this gate checks for e-mail addresses and phone \
         numbers ({} KiB); approve sending it?",
        size / 1024,
        MAX_SCAN_CHARS / 1024
    )
}

/// The question past [`MAX_DECODED_CHARS`] (`pii_rules._too_encoded`).
fn too_encoded(what: &str) -> String {
    format!(
        "{what} sends encoded text that decodes to more than this gate checks for e-mail \
         addresses and phone numbers ({} KiB); approve sending it?",
        MAX_DECODED_CHARS / 1024
    )
}

/// The gate exported by the component (`app.py`'s `Gate`).
pub struct PiiTwin;

impl Gate for PiiTwin {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Asks before e-mail addresses or phone numbers leave, as written or \
                          percent-encoded or escaped: in a reply (its text, else its args), or \
                          in the data a tool sends (every argument of http-fetch or of a tool \
                          that fetches a URL, a body/content/text argument, a program's \
                          arguments and standard input)."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        // What the host knows of a tool call: the tool behind the name called (an alias of
        // http-fetch is http-fetch) and its effects, whatever the tool calls its arguments.
        let (identity, effects) = if action.target == "tool" {
            (context::tool(), context::effects())
        } else {
            (None, Effects::none())
        };
        match check(
            &action.target,
            action.tool.as_deref(),
            &action.args,
            action.text.as_deref(),
            identity.as_ref(),
            &effects,
        ) {
            Some(question) => Verdict::RequireApproval(question),
            None => Verdict::Pass,
        }
    }
}

passepartout_sdk::export_gate!(PiiTwin);
