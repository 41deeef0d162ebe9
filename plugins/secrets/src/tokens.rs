//! Secrets recognised by their shape alone: provider tokens with a fixed prefix, private key
//! blocks and JWTs. One pass over the bytes; at each position the first byte picks the few
//! shapes worth trying.
//!
//! A shape is tried where a word starts, and also where it is glued to a letter or digit before
//! it (`k=0ghp_…`: whoever reads the file, or receives it, cuts the `0` off). Glued, it counts
//! only with its provider's full length (see [`Start`]), so that the middle of a word, a hash
//! or a slug does not.
//!
//! A candidate counts only when it looks random (see [`looks_random`]), so that prose, slugs
//! and documentation placeholders (`ghp_xxxx…`, `sk-...`, AWS's own `…EXAMPLE` keys) pass.

/// Where a candidate starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    /// At a word's start: after a byte that is not a letter or digit, or at the text's start.
    Word,
    /// Right after a letter or digit. A prefix alone says less there, so the body must have
    /// the length real tokens have (a GitHub token's 36 characters, not 30), an AWS key id
    /// must mix letters and digits, and a prefix as short as OpenAI's `sk-` needs the marker
    /// all its keys carry. (A Google key's exact length and `aws_secret_access_key` need no
    /// more.)
    Glued,
}

impl Start {
    /// What a candidate needs (a length, a number of character classes): `word` at a word's
    /// start, `glued` glued.
    fn either(self, word: usize, glued: usize) -> usize {
        match self {
            Start::Word => word,
            Start::Glued => glued,
        }
    }
}

/// The kind of the first token-shaped secret in `text`, e.g. `"a GitHub token"`.
pub fn find_token(text: &str) -> Option<&'static str> {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'-' {
            if let Some(kind) = private_key(b, i) {
                return Some(kind);
            }
            continue;
        }
        // Glued to a letter or digit before it, a shape needs its provider's full length.
        let start = if i > 0 && b.get(i - 1).is_some_and(u8::is_ascii_alphanumeric) {
            Start::Glued
        } else {
            Start::Word
        };
        let found = match c {
            b'A' => aws_key_id(b, i, start)
                .or_else(|| google(b, i))
                .or_else(|| aws_secret(b, i)),
            b'a' => aws_secret(b, i),
            b'g' => github(b, i, start),
            b's' => anthropic(b, i, start)
                .or_else(|| openai(b, i, start))
                .or_else(|| stripe(b, i, start)),
            b'r' => stripe(b, i, start),
            b'x' => slack(b, i, start),
            b'e' => jwt(b, i, start),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='
}

/// The bytes from `start` while `pred` holds.
fn run(b: &[u8], start: usize, pred: impl Fn(u8) -> bool) -> &[u8] {
    let rest = b.get(start..).unwrap_or_default();
    let len = rest.iter().take_while(|&&c| pred(c)).count();
    rest.get(..len).unwrap_or_default()
}

fn at(b: &[u8], i: usize, prefix: &[u8]) -> bool {
    b.get(i..).is_some_and(|rest| rest.starts_with(prefix))
}

/// Does `body` look like random key material rather than a word, slug or placeholder?
/// It must mix at least `classes` of (upper case, lower case, digits), hold no run of six
/// identical characters (`XXXXXX`, `000000`), and not spell `example`, `xxxx` or `your`.
pub fn looks_random(body: &[u8], classes: usize) -> bool {
    let upper = body.iter().any(u8::is_ascii_uppercase);
    let lower = body.iter().any(u8::is_ascii_lowercase);
    let digit = body.iter().any(u8::is_ascii_digit);
    let mixed = usize::from(upper) + usize::from(lower) + usize::from(digit) >= classes;
    let repeated = body.windows(6).any(|w| w.iter().all(|&c| c == w[0]));
    mixed && !repeated && !spells_placeholder(body)
}

/// Does `body` contain, in any case, a word that only placeholders and examples contain?
pub fn spells_placeholder(body: &[u8]) -> bool {
    const WORDS: &[&[u8]] = &[b"example", b"xxxx", b"your", b"placeholder", b"redacted"];
    WORDS.iter().any(|w| {
        body.windows(w.len())
            .any(|window| window.eq_ignore_ascii_case(w))
    })
}

/// `AKIA`/`ASIA` + 16 upper-case letters or digits, ending a word; glued, mixing both.
fn aws_key_id(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if !(at(b, i, b"AKIA") || at(b, i, b"ASIA")) {
        return None;
    }
    let body = run(b, i + 4, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
    let ends = !b
        .get(i + 4 + body.len())
        .is_some_and(u8::is_ascii_alphanumeric);
    let classes = start.either(1, 2);
    (body.len() == 16 && ends && looks_random(body, classes)).then_some("an AWS access key id")
}

/// `aws_secret_access_key` (any case) `=` or `:` a 40-character base64 value.
fn aws_secret(b: &[u8], i: usize) -> Option<&'static str> {
    const NAME: &[u8] = b"aws_secret_access_key";
    let name = b.get(i..i + NAME.len())?;
    if !name.eq_ignore_ascii_case(NAME) {
        return None;
    }
    let mut j = i + NAME.len();
    let skip = |j: &mut usize| {
        while b
            .get(*j)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'"' | b'\''))
        {
            *j += 1;
        }
    };
    skip(&mut j);
    let colon = b.get(j) == Some(&b':');
    if colon {
        j += 1;
    }
    let equals = b.get(j) == Some(&b'=');
    if equals {
        j += 1;
    }
    if !(colon || equals) {
        return None;
    }
    skip(&mut j);
    let value = run(b, j, is_b64);
    (value.len() >= 30 && looks_random(value, 2)).then_some("an AWS secret access key")
}

/// `AIza` + 35 characters of base64url.
fn google(b: &[u8], i: usize) -> Option<&'static str> {
    if !at(b, i, b"AIza") {
        return None;
    }
    let body = run(b, i + 4, is_b64url);
    (body.len() == 35 && looks_random(body, 2)).then_some("a Google API key")
}

/// `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 letters or digits (30 or more at a word's
/// start); `github_pat_` + 82 letters, digits or `_` (22 or more at a word's start).
fn github(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if at(b, i, b"github_pat_") {
        let body = run(b, i + 11, |c| c.is_ascii_alphanumeric() || c == b'_');
        let long = body.len() >= start.either(22, 82);
        return (long && looks_random(body, 2)).then_some("a GitHub token");
    }
    let prefixed = [b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"]
        .iter()
        .any(|p| at(b, i, *p));
    if !prefixed {
        return None;
    }
    let body = run(b, i + 4, |c| c.is_ascii_alphanumeric());
    (body.len() >= start.either(30, 36) && looks_random(body, 2)).then_some("a GitHub token")
}

/// `sk-ant-` + 32 or more characters of base64url (80 or more glued: real keys have ~100).
fn anthropic(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if !at(b, i, b"sk-ant-") {
        return None;
    }
    let body = run(b, i + 7, is_b64url);
    (body.len() >= start.either(32, 80) && looks_random(body, 2)).then_some("an Anthropic API key")
}

/// The marker in every OpenAI key, legacy or scoped: `OpenAI` in base64.
const OPENAI_MARKER: &[u8] = b"T3BlbkFJ";

/// `sk-` (or `sk-proj-`, `sk-svcacct-`, `sk-admin-`) + 32 or more characters of base64url
/// mixing upper case, lower case and digits (a long slug such as `sk-learn-...` does not).
/// Glued (`task-…` ends in `sk-`), the body must also hold the marker every OpenAI key holds.
fn openai(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if !at(b, i, b"sk-") || at(b, i, b"sk-ant-") {
        return None;
    }
    let mut from = i + 3;
    for scope in [&b"proj-"[..], b"svcacct-", b"admin-"] {
        if at(b, from, scope) {
            from += scope.len();
            break;
        }
    }
    let body = run(b, from, is_b64url);
    let marked = start == Start::Word
        || body
            .windows(OPENAI_MARKER.len())
            .any(|w| w == OPENAI_MARKER);
    (body.len() >= 32 && marked && looks_random(body, 3)).then_some("an OpenAI API key")
}

/// `sk_live_` or `rk_live_` + 20 or more letters or digits (24 or more glued).
fn stripe(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if !(at(b, i, b"sk_live_") || at(b, i, b"rk_live_")) {
        return None;
    }
    let body = run(b, i + 8, |c| c.is_ascii_alphanumeric());
    (body.len() >= start.either(20, 24) && looks_random(body, 2)).then_some("a Stripe secret key")
}

/// `xoxa-`, `xoxb-`, `xoxp-`, `xoxo-`, `xoxs-`, `xoxr-` + 20 or more letters, digits or `-`
/// (40 or more glued), with digits in them.
fn slack(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    let prefixed = at(b, i, b"xox")
        && b.get(i + 3).is_some_and(|c| b"abposr".contains(c))
        && b.get(i + 4) == Some(&b'-');
    if !prefixed {
        return None;
    }
    let body = run(b, i + 5, |c| c.is_ascii_alphanumeric() || c == b'-');
    let digits = body.iter().filter(|c| c.is_ascii_digit()).count();
    let long = body.len() >= start.either(20, 40);
    (long && digits >= 6 && looks_random(body, 2)).then_some("a Slack token")
}

/// Three base64url segments joined by dots, the first starting `eyJ` (`{"` encoded): header
/// and payload of 10 characters or more, a signature of 16 or more (glued: 16, 16 and 32, an
/// HMAC-SHA256 signature being 43). Unsigned tokens pass.
fn jwt(b: &[u8], i: usize, start: Start) -> Option<&'static str> {
    if !at(b, i, b"eyJ") {
        return None;
    }
    let header = run(b, i, is_b64url).len();
    let payload_at = i + header + 1;
    let payload = run(b, payload_at, is_b64url).len();
    let signature_at = payload_at + payload + 1;
    let signature = run(b, signature_at, is_b64url);
    let dots = b.get(i + header) == Some(&b'.') && b.get(payload_at + payload) == Some(&b'.');
    let (parts, signed) = (start.either(10, 16), start.either(16, 32));
    let long = header >= parts && payload >= parts && signature.len() >= signed;
    (dots && long && looks_random(signature, 2)).then_some("a JWT")
}

/// `-----BEGIN <label> PRIVATE KEY-----` (RSA, EC, DSA, OPENSSH, ENCRYPTED, none) or
/// `-----BEGIN PGP PRIVATE KEY BLOCK-----`, followed (before the next `-----`) by key
/// material: a run of 40 or more base64 characters that looks random. A header alone, or one
/// with `...` or prose for its body, passes.
fn private_key(b: &[u8], i: usize) -> Option<&'static str> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    if !at(b, i, BEGIN) {
        return None;
    }
    let label_at = i + BEGIN.len();
    let label = run(b, label_at, |c| c.is_ascii_uppercase() || c == b' ');
    let close = label_at + label.len();
    if label.len() > 40 || !at(b, close, b"-----") {
        return None;
    }
    let label = label.trim_ascii_end();
    if !(label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK")) {
        return None;
    }
    let body = b.get(close + 5..).unwrap_or_default();
    let body = body.get(..body.len().min(4096)).unwrap_or_default();
    let end = body
        .windows(5)
        .position(|w| w == b"-----")
        .unwrap_or(body.len());
    // Key material is lines of base64; prose, `...` or a code line after a header is not.
    let material = body
        .get(..end)
        .unwrap_or_default()
        .split(|&c| !is_b64(c))
        .any(|run| run.len() >= 40 && looks_random(run, 3));
    material.then_some("a private key block")
}
