//! The Rust twin of the JavaScript e-mail gate (`tests/plugins/email-gate-js/app.js`): the same
//! pattern, the same count, the same question, so that the tests can hold the two to the same
//! verdicts. The pattern is matched by hand as JavaScript's backtracking RegExp matches it (a
//! regex crate would bring hashing seeded from `wasi:random`, which a gate is never given).

use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

struct EmailTwin;

impl Gate for EmailTwin {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Asks before e-mail addresses leave in a reply.".into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        let Some(text) = action
            .text
            .filter(|t| action.target != "tool" && !t.is_empty())
        else {
            return Verdict::Pass;
        };
        match count(text.as_bytes()) {
            0 => Verdict::Pass,
            n => Verdict::RequireApproval(format!(
                "the reply contains {n} e-mail address(es); approve?"
            )),
        }
    }
}

/// `[A-Za-z0-9._%+-]`
fn local(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._%+-".contains(&b)
}

/// `[A-Za-z0-9-]`
fn label(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// How many times `/[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}/g` matches in `text`.
fn count(text: &[u8]) -> usize {
    let mut n = 0;
    let mut at = 0;
    while at < text.len() {
        match match_at(text, at) {
            Some(end) => {
                n += 1;
                at = end;
            }
            None => at += 1,
        }
    }
    n
}

/// The end of the match starting at `start`, if one does.
fn match_at(text: &[u8], start: usize) -> Option<usize> {
    let run =
        |from: usize, class: fn(u8) -> bool| text[from..].iter().take_while(|b| class(**b)).count();
    // The local part is greedy, and `@` is not in its class: it must end right before one.
    let at = start + run(start, local);
    if at == start || text.get(at) != Some(&b'@') {
        return None;
    }
    // Each `label.` as far as they go; then the top-level domain after the last that leaves
    // one of at least two letters (backtracking gives up a label at a time).
    let mut after_dots = Vec::new();
    let mut p = at + 1;
    loop {
        let len = run(p, label);
        if len == 0 || text.get(p + len) != Some(&b'.') {
            break;
        }
        p += len + 1;
        after_dots.push(p);
    }
    after_dots.iter().rev().find_map(|&p| {
        let letters = text[p..]
            .iter()
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        (letters >= 2).then_some(p + letters)
    })
}

passepartout_sdk::export_gate!(EmailTwin);

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_as_the_javascript_pattern_does() {
        // Each count as node (v20) gives for `text.match(EMAIL).length`.
        for (text, n) in [
            ("write to ada@example.org", 1),
            ("a.b+c@mail.example.co.uk and x_y@host.io, thanks", 2),
            ("meet @ 5, or at me@localhost", 0),
            ("x@y.z", 0),
            ("a@b.cd.x", 1),
            ("a@b.c1d.ef", 1),
            ("@@a@b.cd", 1),
            ("é@ü.de a@b.ccc@d.ee", 1),
        ] {
            assert_eq!(count(text.as_bytes()), n, "{text}");
        }
    }
}
