//! `pii-twin`: a test-only gate, the Rust twin of the Python gate `plugins/pii`. It applies
//! exactly the rules of `plugins/pii/pii_rules.py` (and the glue of `app.py`): the same actions
//! and fields scanned, the same detectors of e-mail addresses and phone numbers, the same caps
//! (64 Ki characters scanned, 128 Ki characters of args parsed), and the same question, word for
//! word. tests/build.rs builds it for the end-to-end tests (`PII_TWIN_WASM`), which run both
//! through the runtime on `plugins/pii/cases.json` to show that a Python gate passes and asks
//! exactly as its Rust twin does.
//!
//! Lengths are counted in code points, as Python's `len` counts them, and `args` is read as
//! `json.loads` reads it ([`json`]).
//!
//! The rules are [`check`], a plain function, tested natively against `cases.json`.

pub mod json;
pub mod scan;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;

use json::{Doc, Node};
use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

/// Most characters one action may carry out before the gate stops looking and simply asks
/// (`pii_rules.MAX_SCAN_CHARS`).
pub const MAX_SCAN_CHARS: usize = 64 * 1024;
/// Longest `args` (JSON text), in characters, that the gate parses at all
/// (`pii_rules.MAX_ARGS_CHARS`).
pub const MAX_ARGS_CHARS: usize = 2 * MAX_SCAN_CHARS;

/// Tools whose every argument leaves the machine.
const SENDING_TOOLS: &[&str] = &["http-fetch"];
/// Arguments that carry data out, whatever the tool.
const OUTGOING_KEYS: &[&str] = &["body", "content", "text"];

/// (e-mail addresses, phone numbers) found in `text` (`pii_rules.count_pii`).
pub fn count_pii(text: &str) -> (usize, usize) {
    let chars: Vec<char> = text.chars().collect();
    (scan::count_emails(&chars), scan::count_phones(&chars))
}

/// The gate's decision (`pii_rules.check`): `None` to pass, or the question a person must answer
/// before the action goes out. `target`, `tool`, `args` (JSON text) and `text` are the action's
/// fields.
pub fn check(target: &str, tool: Option<&str>, args: &str, text: Option<&str>) -> Option<String> {
    let reply = target != "tool";
    let (what, sources) = if reply {
        let text = text.filter(|t| !t.is_empty())?;
        (
            "the reply".to_owned(),
            vec![("reply".to_owned(), text.to_owned())],
        )
    } else {
        let tool = tool.filter(|t| !t.is_empty())?;
        let what = format!("the {tool} call");
        let len = args.chars().count();
        if len > MAX_ARGS_CHARS {
            return Some(too_long(&what, len));
        }
        let sources = outgoing(tool, args);
        (what, sources)
    };
    // One text per source: a newline ends any address or number, so joining loses none.
    let size: usize = sources.iter().map(|(_, t)| t.chars().count()).sum();
    if size > MAX_SCAN_CHARS {
        return Some(too_long(&what, size));
    }
    let (mut emails, mut phones) = (0, 0);
    let mut fields = Vec::new();
    for (where_, t) in &sources {
        let (e, p) = count_pii(t);
        if e > 0 || p > 0 {
            fields.push(where_.as_str());
            emails += e;
            phones += p;
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

/// The text a tool action sends out, one joined text per source (`pii_rules.outgoing`, each list
/// joined by newlines): every string of `http-fetch`'s arguments, or the `body`, `content` and
/// `text` arguments of any other tool; args that are not a JSON object are scanned whole for a
/// sending tool and ignored for the others.
fn outgoing(tool: &str, args: &str) -> Vec<(String, String)> {
    let sending = SENDING_TOOLS.contains(&tool);
    match json::parse(args) {
        Some(doc) if matches!(doc.root, Node::Obj(_)) => doc
            .entries(&doc.root)
            .filter(|(key, _)| sending || OUTGOING_KEYS.contains(key))
            .map(|(key, value)| (key.to_owned(), strings(&doc, value).join("\n")))
            .collect(),
        _ if sending => vec![("arguments".to_owned(), args.to_owned())],
        _ => Vec::new(),
    }
}

/// Every string in a JSON value (object keys included), depth first, in order
/// (`pii_rules._strings`).
fn strings<'d>(doc: &'d Doc<'_>, value: &'d Node<'_>) -> Vec<&'d str> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Node::Str(s) => out.push(s.as_ref()),
            Node::Scalar(_) => {}
            // An object's children are its keys and values, alternately: in order too.
            Node::Arr(_) | Node::Obj(_) => stack.extend(doc.children(node).iter().rev()),
        }
    }
    out
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

/// The gate exported by the component (`app.py`'s `Gate`).
pub struct PiiTwin;

impl Gate for PiiTwin {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Asks before e-mail addresses or phone numbers leave in a reply or in \
                          the data a tool sends (http-fetch, or a body/content/text argument)."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        match check(
            &action.target,
            action.tool.as_deref(),
            &action.args,
            action.text.as_deref(),
        ) {
            Some(question) => Verdict::RequireApproval(question),
            None => Verdict::Pass,
        }
    }
}

passepartout_sdk::export_gate!(PiiTwin);
