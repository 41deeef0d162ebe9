//! Text for a person's terminal: control characters made visible, and lines fitted to its
//! width. A tool's output, a model's text or a plugin's description must not be able to move
//! the cursor, rewrite a line or retitle the terminal of the person reading it.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and every invisible Unicode
/// format character (direction overrides and marks, zero-width characters, tag characters,
/// the soft hyphen, the line and paragraph separators: `FORMAT` below), shown as an escape
/// (`\x1b`, `\r`, `\u009b`, `\u202e`, `\u200b`): what reaches the terminal is what the text
/// says, never an instruction to the terminal, and nothing in it is hidden from the reader
/// ("All good" followed by instructions in tag characters shows the instructions). DEL, the C1
/// controls and the format characters (which serde_json leaves as they are) are escaped as
/// JSON escapes them, so JSON output stays JSON and means the same: one beyond U+FFFF as its
/// UTF-16 surrogate pair (U+E0041, a tag `A`, as `\udb40\udc41`). The C0 controls never reach
/// here in JSON (serde_json escapes them).
///
/// The zero-width joiner and non-joiner (U+200D, U+200C) stay as they are between two visible
/// characters beyond ASCII, where emoji sequences and scripts such as Persian need them;
/// anywhere else (beside ASCII, at an end, in a run) they are escaped too, so that they cannot
/// carry hidden bits through ASCII text.
pub fn safe(text: &str) -> Cow<'_, str> {
    let plain = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_format(c);
    let visible = |c: Option<char>| {
        c.is_some_and(|c| !c.is_ascii() && !c.is_whitespace() && !c.is_control() && !is_format(c))
    };
    if !text.chars().any(plain) {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let control = |i: usize| {
        let c = chars[i];
        plain(c)
            && !(matches!(c, '\u{200c}' | '\u{200d}')
                && visible(i.checked_sub(1).map(|p| chars[p]))
                && visible(chars.get(i + 1).copied()))
    };
    if !(0..chars.len()).any(control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, &c) in chars.iter().enumerate() {
        let control = |_: char| control(i);
        match c {
            '\r' => out.push_str("\\r"),
            c if control(c) && (c as u32) < 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if control(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units).iter() {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// As [`safe`], on one line: a line break is shown as `\n`, so that text from a plugin (a
/// grant, a tool name, a version) cannot start a line of its own in a table or a diff; and a
/// tab as `\t`: it moves the cursor to the next tab stop, a column count no fitting can know,
/// so such text could push what follows it out of its column or off the line.
pub fn one_line(text: &str) -> Cow<'_, str> {
    match safe(text) {
        Cow::Borrowed(t) if !t.contains(['\n', '\t']) => Cow::Borrowed(t),
        shown => Cow::Owned(shown.replace('\n', "\\n").replace('\t', "\\t")),
    }
}

/// Unicode's format characters (general category Cf, Unicode 15) and its line and paragraph
/// separators (Zl, Zp, U+2028 and U+2029), as inclusive ranges in order. They take no column
/// or break a line where no `\n` is, so a terminal shows none of what they carry: the
/// direction controls reorder what follows them (the "Trojan Source" trick), zero-width
/// characters split or join words unseen, and the tag characters (U+E0020-U+E007F) spell out
/// ASCII that no one sees but a model reads ("ASCII smuggling").
const FORMAT: &[(u32, u32)] = &[
    (0x00ad, 0x00ad),
    (0x0600, 0x0605),
    (0x061c, 0x061c),
    (0x06dd, 0x06dd),
    (0x070f, 0x070f),
    (0x0890, 0x0891),
    (0x08e2, 0x08e2),
    (0x180e, 0x180e),
    (0x200b, 0x200f),
    (0x2028, 0x202e),
    (0x2060, 0x2064),
    (0x2066, 0x206f),
    (0xfeff, 0xfeff),
    (0xfff9, 0xfffb),
    (0x110bd, 0x110bd),
    (0x110cd, 0x110cd),
    (0x13430, 0x1343f),
    (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a),
    (0xe0001, 0xe0001),
    (0xe0020, 0xe007f),
];

/// Whether `c` is one of [`FORMAT`]'s characters.
fn is_format(c: char) -> bool {
    let c = c as u32;
    c >= 0xad
        && FORMAT
            .binary_search_by(|&(first, last)| {
                if last < c {
                    std::cmp::Ordering::Less
                } else if first > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// The width of the terminal on stdout, if stdout is one.
pub fn width() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; it fails (and we return
    // None) when stdout is not a terminal.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// Each line of `text` wrapped at `width` columns, at spaces where it can: a continuation
/// line is indented four columns more than the line it continues. Colour escapes (ours, `ESC [
/// ... m`) take no column.
pub fn fit(text: &str, width: usize) -> String {
    let width = width.max(20);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (line, newline) = match line.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (line, ""),
        };
        let indent = line.len() - line.trim_start_matches(' ').len();
        let pad = " ".repeat((indent + 4).min(width / 2));
        let mut column = 0;
        let mut first = true;
        for word in line.split(' ') {
            let w = visible(word);
            if !first && column + 1 + w > width && column > pad.len() {
                out.push('\n');
                out.push_str(&pad);
                column = pad.len();
            } else if !first {
                out.push(' ');
                column += 1;
            }
            out.push_str(word);
            column += w;
            first = false;
        }
        out.push_str(newline);
    }
    out
}

/// Columns `s` takes: characters, less our colour escapes.
fn visible(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_shown_not_obeyed() {
        assert_eq!(safe("plain\ttext\nlines"), "plain\ttext\nlines");
        assert_eq!(
            safe("\x1b[2J\x1b]0;owned\x07"),
            "\\x1b[2J\\x1b]0;owned\\x07"
        );
        assert_eq!(safe("ok\rFAKE"), "ok\\rFAKE");
        assert_eq!(safe("\u{9b}31m"), "\\u009b31m");
        assert_eq!(safe("a\u{202e}gnp.exe"), "a\\u202egnp.exe");
        assert_eq!(safe("café ☕"), "café ☕");
        assert_eq!(safe("rm\u{200b}-rf"), "rm\\u200b-rf");
        assert_eq!(safe("\u{feff}x\u{ad}y"), "\\ufeffx\\u00ady");
        assert_eq!(safe("a\u{2028}b\u{2029}c"), "a\\u2028b\\u2029c");
        assert_eq!(safe("\u{200e}\u{200f}\u{61c}"), "\\u200e\\u200f\\u061c");
        // Joiners stay where emoji and scripts need them, and nowhere else.
        assert_eq!(
            safe("👨\u{200d}👩 می\u{200c}خواهم"),
            "👨\u{200d}👩 می\u{200c}خواهم"
        );
        assert_eq!(
            safe("ok\u{200d}\u{200c}ok é\u{200d}\u{200c}é \u{200d}é"),
            "ok\\u200d\\u200cok é\\u200d\\u200cé \\u200dé"
        );
        // "All good", then "A" in tag characters (ASCII smuggling): the tag is shown.
        assert_eq!(
            safe("All good\u{e0041}\u{e007f}"),
            "All good\\udb40\\udc41\\udb40\\udc7f"
        );
    }

    #[test]
    fn every_format_character_is_escaped_and_no_other() {
        assert!(FORMAT.windows(2).all(|w| w[0].1 < w[1].0), "sorted, apart");
        for &(first, last) in FORMAT {
            assert!(first <= last);
            for c in (first..=last).filter_map(char::from_u32) {
                assert!(is_format(c), "{c:?}");
                let shown = safe(&c.to_string()).into_owned();
                assert!(
                    shown.starts_with("\\u") && shown.is_ascii(),
                    "{c:?}: {shown}"
                );
            }
            // The neighbours of each range: escaped only when in another range.
            for outside in [first - 1, last + 1] {
                let inside = FORMAT.iter().any(|&(f, l)| (f..=l).contains(&outside));
                let c = char::from_u32(outside).expect("no range borders a surrogate");
                assert_eq!(is_format(c), inside, "{c:?}");
            }
        }
        assert!(!is_format('a') && !is_format('é') && !is_format('\u{2027}'));
    }

    #[test]
    fn one_line_text_cannot_start_a_line() {
        assert_eq!(
            one_line("a.com\n- narrowing capability x\x1b[1A"),
            "a.com\\n- narrowing capability x\\x1b[1A"
        );
        assert_eq!(one_line("plain"), "plain");
        assert_eq!(one_line("ok\u{2028}approved"), "ok\\u2028approved");
    }

    #[test]
    fn json_stays_json_and_means_the_same() {
        let text = "a\u{7f}\u{85}\u{9b}\u{202e}\u{2066}\u{1b}[2J\r\nb\u{200b}\u{ad}\u{2028}\u{feff}\u{e0041}";
        let json = serde_json::to_string(&serde_json::json!({ "text": text })).expect("JSON");
        let shown = safe(&json);
        assert!(
            !shown.chars().any(|c| c.is_control() || is_format(c)),
            "{shown}"
        );
        let back: serde_json::Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(back["text"], text);
    }

    #[test]
    fn lines_fit_the_width_and_colours_take_no_room() {
        let text = "  capability   a b c d e f g h i j k l m n o p q r s t u v w x y z\nshort\n";
        let fitted = fit(text, 24);
        for line in fitted.lines() {
            assert!(visible(line) <= 24, "{line:?}");
        }
        assert!(fitted.ends_with("short\n"));
        assert_eq!(fitted.replace("\n      ", " "), text, "only wrapped");
        assert_eq!(visible("\x1b[1;31mHIGH\x1b[0m"), 4);
    }
}
