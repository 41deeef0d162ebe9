//! What an action sends out, as the texts the gate scans, each with where it was found
//! (`pii_rules.outgoing`, `effect_sources` and the reply's args in `check`): a reply's args when
//! it has no text; a tool call's data, found both by the tool's and the arguments' names and by
//! the effects the host derives from the tool's declared schema (the URLs it fetches, the
//! programs it runs with their arguments and standard input).

use std::collections::BTreeSet;

use passepartout_sdk::context::{Effects, ToolIdentity};

use crate::count_pii;
use crate::json::{self, Doc, Node};

/// Tools whose every argument leaves the machine (by the name called, or by the tool behind an
/// alias); so does every argument of a tool whose effects fetch a URL.
const SENDING_TOOLS: &[&str] = &["http-fetch"];
/// Arguments that carry data out, whatever the tool.
const OUTGOING_KEYS: &[&str] = &["body", "content", "text"];
/// Longest program name quoted in a question (`pii_rules._PLAIN_NAME`).
const PLAIN_NAME_MAX: usize = 40;

/// One text an action sends: its strings joined by newlines, which end any address or number,
/// so joining loses none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Where it was found, as the question names it: an argument's name, `reply`,
    /// `the URL it fetches`, `the arguments of curl`...
    pub place: String,
    /// The text.
    pub text: String,
}

impl Source {
    /// A source: `text`, found at `place`.
    pub fn new(place: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            place: place.into(),
            text: text.into(),
        }
    }
}

/// What a reply with no text sends: its args, as JSON text, keys and values (every string of the
/// JSON value, joined); the args as written when they are not JSON, or are `null` (which
/// `json.loads` gives as `None`, as it gives a failure).
pub fn reply_args(args: &str) -> String {
    match json::parse(args) {
        Some(doc) if !matches!(doc.root, Node::Scalar("null")) => {
            strings(&doc, &doc.root).join("\n")
        }
        _ => args.to_owned(),
    }
}

/// Does a call of `tool` send every argument out (`pii_rules.sends_everything`)? Yes for a
/// sending tool called by its name or through an alias (`identity`, the tool behind the name, as
/// the host knows it), and for any tool whose effects fetch a URL (a third-party tool, an MCP
/// tool the operator mapped).
pub fn sends_everything(tool: &str, identity: Option<&ToolIdentity>, effects: &Effects) -> bool {
    SENDING_TOOLS.contains(&tool)
        || identity.is_some_and(|id| SENDING_TOOLS.contains(&id.tool.as_str()))
        || !effects.urls.is_empty()
}

/// The texts a tool call sends out (`pii_rules.outgoing`): every string of the arguments of a
/// tool that sends everything ([`sends_everything`]), or the `body`, `content` and `text`
/// arguments of any other tool, one source per argument; then what its effects send that those
/// strings do not already hold ([`effect_sources`]). `args` is the JSON text of the arguments;
/// text that is not a JSON object is scanned whole for a tool that sends everything and ignored
/// for the others.
pub fn tool_call(
    tool: &str,
    args: &str,
    identity: Option<&ToolIdentity>,
    effects: &Effects,
) -> Vec<Source> {
    let everything = sends_everything(tool, identity, effects);
    let doc = json::parse(args);
    let found: Vec<(&str, Vec<&str>)> = match &doc {
        Some(doc) if matches!(doc.root, Node::Obj(_)) => doc
            .entries(&doc.root)
            .filter(|(key, _)| everything || OUTGOING_KEYS.contains(key))
            .map(|(key, value)| (key, strings(doc, value)))
            .collect(),
        _ if everything => vec![("arguments", vec![args])],
        _ => Vec::new(),
    };
    let scanned: BTreeSet<&str> = found
        .iter()
        .flat_map(|(_, texts)| texts.iter().copied())
        .collect();
    let mut sources: Vec<Source> = found
        .iter()
        .map(|(key, texts)| Source::new(*key, texts.join("\n")))
        .collect();
    sources.extend(effect_sources(effects, &scanned));
    sources
}

/// What an action's effects send out, leaving out any text already in `scanned`
/// (`pii_rules.effect_sources`): each URL it fetches (path and query included), and for each
/// program it runs, its command line (the line as given, else its name and arguments joined by
/// spaces, as `echo` prints them, so a number split over arguments is one number) and its
/// standard input. Any program may send what it is given (curl, ssh, mail, git push).
///
/// `scanned` is not added to as effects are read: a URL listed twice is scanned twice, as in
/// Python (the question names its place once).
pub fn effect_sources(effects: &Effects, scanned: &BTreeSet<&str>) -> Vec<Source> {
    let mut found = Vec::new();
    for url in &effects.urls {
        if !scanned.contains(url.url.as_str()) {
            found.push(Source::new("the URL it fetches", url.url.as_str()));
        }
    }
    for run in &effects.programs {
        let name = program_name(&run.program);
        let line = run.line.clone().unwrap_or_else(|| run.words().join(" "));
        if !scanned.contains(line.as_str()) {
            found.push(Source::new(format!("the arguments of {name}"), line));
        }
        if let Some(stdin) = run.stdin.as_deref()
            && !stdin.is_empty()
            && !scanned.contains(stdin)
        {
            found.push(Source::new(format!("the standard input of {name}"), stdin));
        }
    }
    found
}

/// A program's name for the question (`pii_rules._program`): the name when it is a plain word
/// (`[A-Za-z0-9._+-]{1,40}`) holding no personal data itself, else `a program` (the question
/// never quotes any).
fn program_name(name: &str) -> &str {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
        && (1..=PLAIN_NAME_MAX).contains(&name.len());
    if plain && count_pii(name) == (0, 0) {
        name
    } else {
        "a program"
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
