//! `secrets`: a Passepartout gate that rejects actions carrying a secret.
//!
//! It scans every string of an action: each string anywhere in its JSON `args` (values, and keys
//! too), its `text` and its `explanation`; args that are not valid JSON are scanned as one
//! string. It recognises, by shape: AWS access key ids and secret access keys, private key
//! blocks, GitHub, OpenAI, Anthropic, Slack, Google and Stripe keys, and JWTs, where a word
//! starts or, with their providers' full length, glued to what comes before (`k=0ghp_…`; see
//! `tokens`); by name: `.env`-style assignments such as `DB_PASSWORD=...`, values of
//! secret-named JSON keys and `Authorization` headers, secret-named URL query parameters and
//! form fields, and passwords in URLs (see `names`).
//!
//! Each string is scanned as written and as its receiver would read it (see `decode`): a JSON
//! object or array (a request body, a file) as JSON, its strings and secret-named keys in turn;
//! other text with its percent-encoding (`ghp%5F…` in a URL or a form body) and its `\u005f` and
//! `\x5f` escapes undone; two layers deep (a percent-encoded URL in a JSON body).
//!
//! It also uses the action's effects, which the host derives from the tool's declared schema
//! (see `effects`): the arguments of every program it would run are scanned on their own
//! (catching `--password VALUE` as two arguments and header arguments such as
//! `Authorization: Bearer ...`), and so is every URL it would fetch (query strings carry
//! tokens, with or without a scheme); and the reason names where the secret would go: "would
//! write an AWS access key id to /workspace/creds.txt", "would send ... to host example.org",
//! "would pass ... to the program curl". This holds for any tool, whatever it calls its
//! arguments.
//!
//! The reason says which kind was found and where (`in args.content`), and never any part of
//! the secret: it is shown to people and fed back to the model.
//!
//! What it does not catch: a secret split across strings, encoded otherwise (base64 of a key,
//! HTML entities, more than two layers), glued inside a word without its full length, or with
//! no recognisable shape or name. Placeholders and examples pass on purpose (`<your key>`,
//! `${TOKEN}`, `changeme`, `xxxx`, AWS's documented `...EXAMPLE` keys).
//!
//! The checks are plain functions, so they run natively in tests: [`find_secret`] and
//! [`check_action`], given the action and its effects.

mod decode;
mod effects;
mod names;
mod tokens;
mod walk;

#[cfg(test)]
mod tests;

pub use walk::{Destination, Finding, scan_text};

use passepartout_sdk::context::Effects;
use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

/// The first secret `action` carries, given what it would do: in its args, then in the
/// arguments of the programs it would run and the URLs it would fetch, then in its text, then
/// in its explanation. A secret in the args or the effects is named with where it would go.
pub fn find_secret(action: &Action, effects: &Effects) -> Option<Finding> {
    let in_args = match serde_json::from_str::<serde_json::Value>(&action.args) {
        Ok(args) => walk::scan_json(&args, "args").map(|hit| Finding {
            dest: effects::destination(effects, hit.text),
            ..hit.finding
        }),
        Err(_) => scan_text(&action.args).map(|kind| Finding {
            dest: effects::destination(effects, &action.args),
            ..Finding::new(kind, "args (not valid JSON)")
        }),
    };
    in_args
        .or_else(|| effects::scan_programs(effects))
        .or_else(|| effects::scan_urls(effects))
        .or_else(|| {
            [("text", &action.text), ("explanation", &action.explanation)]
                .into_iter()
                .find_map(|(place, field)| Some(Finding::new(scan_text(field.as_deref()?)?, place)))
        })
}

/// The verdict on `action` given its effects: rejected, with a reason that names the kind and
/// place of the secret and where it would go, when it carries one.
pub fn check_action(action: &Action, effects: &Effects) -> Verdict {
    let Some(Finding { kind, place, dest }) = find_secret(action, effects) else {
        return Verdict::Pass;
    };
    let what = match dest {
        Some(Destination { verb, to }) => format!("would {verb} {kind} {to} (found in {place})"),
        None => format!("carries {kind} in {place}"),
    };
    Verdict::Reject(format!(
        "this action {what}. Never send a secret's value: remove it and refer to it instead (by \
         the name of the environment variable or file that holds it, or a placeholder such as \
         <API_KEY>), then propose the action again."
    ))
}

/// The gate exported by the component.
pub struct Secrets;

impl Gate for Secrets {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects actions whose args, text, explanation, program arguments or \
                          fetched URLs carry a secret (API keys, tokens, private keys, JWTs, \
                          passwords), as written or as its receiver decodes it (a JSON body, \
                          percent-encoding, escapes), naming its kind, its place and where it \
                          would go, but never the secret."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        check_action(&action, &passepartout_sdk::context::effects())
    }
}

passepartout_sdk::export_gate!(Secrets);
