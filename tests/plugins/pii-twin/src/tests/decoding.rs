//! What a receiver decodes is scanned too: the helpers of [`crate::decode`], then the verdicts
//! they give (test_app.py's `Decoding`).

use std::collections::BTreeSet;

use super::check;
use crate::MAX_DECODED_CHARS;
use crate::decode::{decode, decodings, pieces};

/// `texts` as a set, to compare with `decodings`, a set in Python.
fn set<S: AsRef<str>>(texts: &[S]) -> BTreeSet<String> {
    texts.iter().map(|t| t.as_ref().to_owned()).collect()
}

/// `decodings` without a limit, as a set.
fn all_decodings(text: &str, plus: bool) -> BTreeSet<String> {
    set(&decodings(text, plus, usize::MAX))
}

#[test]
fn decode_undoes_each_encoding() {
    let untouched = r"50% off, %zz, \u12, \q \\ \N{DIGIT ONE} \101 é€";
    for (encoded, plain) in [
        ("alice%40example.com", "alice@example.com"),
        ("%2B33%206%2012", "+33 6 12"),
        // A byte is read as Latin-1: what matters here is ASCII.
        ("caf%E9 caf%C3%A9", "café cafÃ©"),
        (r"dan\u0040example.net", "dan@example.net"),
        (r"dan\x40example.net", "dan@example.net"),
        // A lone surrogate is U+FFFD here (Python keeps it): one code point either way.
        (r"caf\u00e9 \u20ac \ud800", "café € \u{fffd}"),
        // One layer per call: the escapes spell an escape.
        (r"\u0025\u0034\u0030", "%40"),
        // What escapes nothing stays as it is, backslashes and all.
        (untouched, untouched),
        // A backslash before an escape is kept, and the escape undone.
        (r"\\x40 \%41", r"\@ \A"),
    ] {
        assert_eq!(decode(encoded, false), plain, "{encoded}");
    }
    // In a form body `+` is a space and `%2B` a `+`.
    assert_eq!(decode("a+b%2Bc", true), "a b+c");
    assert_eq!(decode("a+b%2Bc", false), "a+b+c");
}

#[test]
fn decodings_go_several_rounds() {
    assert_eq!(all_decodings("x%2540y", false), set(&["x%40y", "x@y"]));
    assert_eq!(all_decodings("%252540", false), set(&["%2540", "%40", "@"]));
    assert_eq!(
        all_decodings(r"\u0025\u0034\u0030", false),
        set(&["%40", "@"])
    );
    assert_eq!(all_decodings("plain", false), set::<&str>(&[]));
    assert_eq!(all_decodings("06+12+34+56+78", false), set::<&str>(&[]));
    // In a form, `+` is a space; a `+` that was `%2B` is one to a receiver decoding twice.
    assert_eq!(
        all_decodings("06+12+34+56+78", true),
        set(&["06 12 34 56 78"])
    );
    assert_eq!(
        all_decodings("q=%2B1+555", true),
        set(&["q=+1+555", "q=+1 555", "q= 1 555"])
    );
    // Past its limit, no further round.
    assert_eq!(decodings("x%2540y", false, 0), ["x%40y"]);
}

#[test]
fn pieces_are_whole_runs_of_what_an_address_or_number_is_made_of() {
    let none: (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let form = "email=alice%40example.com&phone=%2B33%206%2012%2034%2056%2078&n=06+12+34";
    assert_eq!(
        pieces(form),
        (
            vec!["alice%40example.com", "%2B33%206%2012%2034%2056%2078"],
            vec!["06+12+34"]
        )
    );
    assert_eq!(
        pieces(r#"{"m": "write to dan\u0040example.net today"}"#),
        (vec![r"write to dan\u0040example.net today"], Vec::new())
    );
    // A `+` beside a space is not a form's space; with no `+` between digits, none is.
    assert_eq!(
        pieces("tel=06+12+34, C++ is +33 6, i++"),
        (Vec::new(), vec!["06+12+34"])
    );
    assert_eq!(
        pieces("tel=06+12+34;i++"),
        (Vec::new(), vec!["06+12+34", "i++"])
    );
    assert_eq!(pieces("a=2+2&c=C++ 2+2"), (Vec::new(), vec!["2+2"]));
    for text in [
        "50% off, i++ and a + b",
        "+33 6 12 34 56 78",
        "C++ 2+2",
        r"%zz \q",
    ] {
        assert_eq!(pieces(text), none, "{text}");
    }
}

#[test]
fn a_number_half_escaped_is_one_number() {
    // A raw space beside an escaped digit: the piece, not the word, is decoded.
    let reply = r"+33 6 12 34 56 7\u0038";
    let question = check("tui", None, "{}", Some(reply)).expect("asks");
    assert!(question.contains("1 phone number"), "{question}");
    let question = check("tui", None, "{}", Some("bob%40example.com")).expect("asks");
    assert!(question.contains("1 e-mail address"), "{question}");
}

#[test]
fn what_is_found_both_as_written_and_decoded_counts_once() {
    // As written the piece holds one address; decoded, two: it counts for two.
    let text = "a@example.com%2Cb%40example.com, and c@example.org";
    assert_eq!(
        check("tui", None, "{}", Some(text)).as_deref(),
        Some("the reply contains 3 e-mail addresses; approve sending them?")
    );
    let url = "see https://example.com/a%20b?x=bob@example.com";
    assert_eq!(
        check("tui", None, "{}", Some(url)).as_deref(),
        Some("the reply contains 1 e-mail address; approve sending it?")
    );
}

#[test]
fn decoded_text_past_its_cap_asks() {
    // 12 KiB of `%41` as written (scanned again, on its own) and 4 KiB of `A` decoded.
    let body = |n: usize| format!(r#"{{"body": "{}"}}"#, "%41".repeat(n));
    let question = check(
        "tool",
        Some("webhook"),
        &body(MAX_DECODED_CHARS / 4 + 1),
        None,
    );
    assert_eq!(
        question.as_deref(),
        Some(
            "the webhook call sends encoded text that decodes to more than this gate checks \
             for e-mail addresses and phone numbers (16 KiB); approve sending it?"
        )
    );
    assert_eq!(
        check("tool", Some("webhook"), &body(MAX_DECODED_CHARS / 4), None),
        None
    );
    // The cap holds for all the texts of an action together: two of 8 KiB each fit.
    let two = |n: usize| {
        let piece = "%41".repeat(n);
        format!(r#"{{"body": "{piece}", "text": "{piece}"}}"#)
    };
    assert_eq!(
        check("tool", Some("webhook"), &two(MAX_DECODED_CHARS / 8), None),
        None
    );
    let question = check(
        "tool",
        Some("webhook"),
        &two(MAX_DECODED_CHARS / 8 + 1),
        None,
    );
    assert!(question.is_some_and(|q| q.contains("encoded text")));
}
