//! `secrets`: a Passepartout gate that rejects actions carrying a secret.
//!
//! It scans every string of an action: each string anywhere in its JSON `args` (values, and keys
//! too), its `text` and its `explanation`; args that are not valid JSON are scanned as one
//! string. It recognises, by shape: AWS access key ids and secret access keys, private key
//! blocks, GitHub, OpenAI, Anthropic, Slack, Google and Stripe keys, and JWTs (see `tokens`);
//! by name: `.env`-style assignments such as `DB_PASSWORD=...`, values of secret-named JSON keys
//! and `Authorization` headers, secret-named URL query parameters and passwords in URLs (see
//! `names`).
//!
//! The reason says which kind was found and where (`in args.content`), and never any part of
//! the secret: it is shown to people and fed back to the model.
//!
//! What it does not catch: a secret split across strings, encoded (base64 of a key), or with
//! no recognisable shape or name. Placeholders and examples pass on purpose (`<your key>`,
//! `${TOKEN}`, `changeme`, `xxxx`, AWS's documented `...EXAMPLE` keys).
//!
//! The check itself is [`find_secret`], a plain function, so it runs natively in tests.

mod names;
mod tokens;
mod walk;

#[cfg(test)]
mod tests;

pub use walk::{Finding, scan_text};

use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

/// The first secret `action` carries, looking at its args, then its text, then its explanation.
pub fn find_secret(action: &Action) -> Option<Finding> {
    let in_args = match serde_json::from_str::<serde_json::Value>(&action.args) {
        Ok(args) => walk::scan_json(&args, "args"),
        Err(_) => scan_text(&action.args).map(|kind| Finding {
            kind,
            place: "args (not valid JSON)".into(),
        }),
    };
    in_args.or_else(|| {
        [("text", &action.text), ("explanation", &action.explanation)]
            .into_iter()
            .find_map(|(place, field)| {
                let kind = scan_text(field.as_deref()?)?;
                Some(Finding {
                    kind,
                    place: place.into(),
                })
            })
    })
}

/// The verdict on `action`: rejected, with a reason that names the kind and place of the
/// secret, when it carries one.
pub fn check_action(action: &Action) -> Verdict {
    match find_secret(action) {
        Some(Finding { kind, place }) => Verdict::Reject(format!(
            "this action carries {kind} in {place}. Never send a secret's value: remove it and \
             refer to it instead (by the name of the environment variable or file that holds it, \
             or a placeholder such as <API_KEY>), then propose the action again."
        )),
        None => Verdict::Pass,
    }
}

/// The gate exported by the component.
pub struct Secrets;

impl Gate for Secrets {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects actions whose args, text or explanation carry a secret (API \
                          keys, tokens, private keys, JWTs, passwords), naming its kind and \
                          place but never the secret."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        check_action(&action)
    }
}

passepartout_sdk::export_gate!(Secrets);
