//! The commands' output. On stdout, a reader that goes away (`passepartout plugins | head -1`)
//! ends the command quietly with exit code 0, as it would `cat` (`println!` would panic).
//! Everything printed, on stdout and stderr, has its terminal control characters made visible
//! ([`safe`]): a tool's output, a model's text or a plugin's description must not be able to
//! move the cursor, rewrite a line or retitle the terminal of the person reading it.

use std::borrow::Cow;
use std::io::Write;

/// Write one line of output: [`line`] with `format!` arguments.
macro_rules! outln {
    () => {
        $crate::cli::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))
    };
}

/// Write output without a newline.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::text(format_args!($($arg)*))
    };
}

/// Write one line to stderr: [`err_line`] with `format!` arguments.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::out::err_line(format_args!($($arg)*))
    };
}

/// Write `args` and a newline to stdout.
pub fn line(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(safe(&text).as_bytes())
        .and_then(|()| stdout.write_all(b"\n"));
    handle(written);
}

/// Write `args` to stdout, and flush it (a prompt, a progress line).
pub fn text(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(safe(&text).as_bytes())
        .and_then(|()| stdout.flush());
    handle(written);
}

/// Write `args` and a newline to stderr (a failure to write there has nowhere to be told).
pub fn err_line(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(safe(&text).as_bytes())
        .and_then(|()| stderr.write_all(b"\n"));
}

/// `text` with every control character but newline and tab, and every Unicode direction
/// override, shown as an escape (`\x1b`, `\r`, `\u{9b}`): what reaches the terminal is what
/// the text says, never an instruction to the terminal.
pub fn safe(text: &str) -> Cow<'_, str> {
    let control = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_override(c);
    if !text.chars().any(control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if control(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if control(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Unicode's explicit direction controls, which reorder what follows them on screen (the
/// "Trojan Source" trick).
fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn handle(written: std::io::Result<()>) {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("passepartout: cannot write the output: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::safe;

    #[test]
    fn control_sequences_are_shown_not_obeyed() {
        assert_eq!(safe("plain\ttext\nlines"), "plain\ttext\nlines");
        assert_eq!(
            safe("\x1b[2J\x1b]0;owned\x07"),
            "\\x1b[2J\\x1b]0;owned\\x07"
        );
        assert_eq!(safe("ok\rFAKE"), "ok\\rFAKE");
        assert_eq!(safe("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(safe("a\u{202e}gnp.exe"), "a\\u{202e}gnp.exe");
        assert_eq!(safe("café ☕"), "café ☕");
    }
}
