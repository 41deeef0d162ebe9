//! Text for a person's terminal: control characters made visible, and lines fitted to its
//! width. A tool's output, a model's text or a plugin's description must not be able to move
//! the cursor, rewrite a line or retitle the terminal of the person reading it.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and every Unicode direction
/// override, shown as an escape (`\x1b`, `\r`, `\u009b`, `\u202e`): what reaches the terminal
/// is what the text says, never an instruction to the terminal. DEL, the C1 controls and the
/// overrides (which serde_json leaves as they are) are escaped as JSON escapes them, so JSON
/// output stays JSON; the C0 controls never reach here in JSON (serde_json escapes them).
pub fn safe(text: &str) -> Cow<'_, str> {
    let control = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_override(c);
    if !text.chars().any(control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if control(c) && (c as u32) < 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if control(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// As [`safe`], on one line: a line break is shown as `\n`, so that text from a plugin (a
/// grant, a tool name, a version) cannot start a line of its own in a table or a diff.
pub fn one_line(text: &str) -> Cow<'_, str> {
    match safe(text) {
        Cow::Borrowed(t) if !t.contains('\n') => Cow::Borrowed(t),
        shown => Cow::Owned(shown.replace('\n', "\\n")),
    }
}

/// Unicode's explicit direction controls, which reorder what follows them on screen (the
/// "Trojan Source" trick).
fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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
    }

    #[test]
    fn one_line_text_cannot_start_a_line() {
        assert_eq!(
            one_line("a.com\n- narrowing capability x\x1b[1A"),
            "a.com\\n- narrowing capability x\\x1b[1A"
        );
        assert_eq!(one_line("plain"), "plain");
    }

    #[test]
    fn json_stays_json_and_means_the_same() {
        let text = "a\u{7f}\u{85}\u{9b}\u{202e}\u{2066}\u{1b}[2J\r\nb";
        let json = serde_json::to_string(&serde_json::json!({ "text": text })).expect("JSON");
        let shown = safe(&json);
        assert!(
            !shown.chars().any(|c| c.is_control() || is_bidi_override(c)),
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
