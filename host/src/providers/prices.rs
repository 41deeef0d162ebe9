//! What well-known models cost, so that `status` shows dollars and `[budget] daily_usd` can be
//! kept without a `[prices]` table. Prices are the vendors' list prices per million tokens as
//! published in 2025; `[prices."MODEL"]` in `passepartout.toml` overrides any of them (and adds
//! others, such as a local model at 0).

use std::collections::BTreeMap;

use super::config::Price;

/// `(model, input, output)`: dollars per million tokens. A model name matches an entry when it
/// is the entry or starts with it followed by `-` (dated versions: `claude-3-5-haiku-20241022`).
const KNOWN: &[(&str, f64, f64)] = &[
    // OpenAI
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5", 1.25, 10.00),
    ("o4-mini", 1.10, 4.40),
    ("o3-mini", 1.10, 4.40),
    ("o3", 2.00, 8.00),
    // Anthropic
    ("claude-opus-4-5", 5.00, 25.00),
    ("claude-opus-4-1", 15.00, 75.00),
    ("claude-opus-4", 15.00, 75.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-3-5-sonnet", 3.00, 15.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-haiku", 0.25, 1.25),
    // Google
    ("gemini-2.5-pro", 1.25, 10.00),
    ("gemini-2.5-flash-lite", 0.10, 0.40),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.0-flash-lite", 0.075, 0.30),
    ("gemini-2.0-flash", 0.10, 0.40),
];

/// The price of `model`: the configured one, else the well-known one. A router's prefix
/// (`anthropic/claude-sonnet-4`) is looked through.
pub fn price(configured: &BTreeMap<String, Price>, model: &str) -> Option<Price> {
    if let Some(p) = configured.get(model) {
        return Some(*p);
    }
    let bare = model.rsplit('/').next().unwrap_or(model);
    if let Some(p) = configured.get(bare) {
        return Some(*p);
    }
    KNOWN
        .iter()
        .filter(|(name, ..)| {
            bare == *name
                || bare
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('-') && !is_variant(rest))
        })
        // The longest name that matches: `gpt-4o-mini` before `gpt-4o`.
        .max_by_key(|(name, ..)| name.len())
        .map(|&(_, input, output)| Price { input, output })
}

/// A suffix that names another model (`-mini`, `-nano`, `-lite`...) rather than a date or a
/// version of this one.
fn is_variant(rest: &str) -> bool {
    let first = rest.trim_start_matches('-').split('-').next().unwrap_or("");
    !first.is_empty() && !first.bytes().all(|b| b.is_ascii_digit()) && first != "latest"
}

/// Dollars for `input` and `output` tokens at `price`.
pub fn cost(price: Price, input: u64, output: u64) -> f64 {
    (input as f64 * price.input + output as f64 * price.output) / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_models_dated_versions_and_router_prefixes() {
        let none = BTreeMap::new();
        let p = |m: &str| price(&none, m).map(|p| (p.input, p.output));
        assert_eq!(p("gpt-4o-mini"), Some((0.15, 0.60)));
        assert_eq!(p("gpt-4o"), Some((2.50, 10.00)));
        assert_eq!(p("gpt-4o-2024-08-06"), Some((2.50, 10.00)));
        assert_eq!(p("claude-3-5-haiku-20241022"), Some((0.80, 4.00)));
        assert_eq!(p("claude-sonnet-4-5"), Some((3.00, 15.00)));
        assert_eq!(p("claude-sonnet-4-5-20250929"), Some((3.00, 15.00)));
        assert_eq!(p("anthropic/claude-sonnet-4"), Some((3.00, 15.00)));
        assert_eq!(p("gemini-2.0-flash"), Some((0.10, 0.40)));
        assert_eq!(p("gemini-2.0-flash-lite"), Some((0.075, 0.30)));
        // A variant this table does not know is not priced as its base model.
        assert_eq!(p("gpt-4o-turbo-preview"), None);
        assert_eq!(p("llama3.2"), None);
        assert_eq!(p("openrouter/auto"), None);
    }

    #[test]
    fn the_configured_price_wins() {
        let mut mine = BTreeMap::new();
        mine.insert(
            "gpt-4o".to_owned(),
            Price {
                input: 1.0,
                output: 2.0,
            },
        );
        mine.insert("llama3.2".to_owned(), Price::default());
        assert_eq!(price(&mine, "gpt-4o").map(|p| p.input), Some(1.0));
        assert_eq!(price(&mine, "llama3.2").map(|p| p.output), Some(0.0));
        assert!(
            (cost(
                Price {
                    input: 3.0,
                    output: 15.0
                },
                1000,
                100
            ) - 0.0045)
                .abs()
                < 1e-12
        );
    }
}
