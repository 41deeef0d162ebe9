//! The commands' output. On stdout, a reader that goes away (`passepartout plugins | head -1`)
//! ends the output quietly (`println!` would panic); the command still ends with its own exit
//! code (an audit that fails `--fail-on` fails, piped or not). Everything printed, on stdout
//! and stderr, has its terminal control characters made visible
//! ([`passepartout::terminal::safe`]): a tool's output, a model's text or a plugin's
//! description must not be able to move the cursor, rewrite a line or retitle the terminal of
//! the person reading it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use passepartout::terminal::safe;

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

/// Set once stdout's reader has gone: what is left to print is dropped.
static GONE: AtomicBool = AtomicBool::new(false);

/// Write `args` and a newline to stdout.
pub fn line(args: std::fmt::Arguments<'_>) {
    emit(&safe(&args.to_string()), true);
}

/// Write `args` to stdout, and flush it (a prompt, a progress line).
pub fn text(args: std::fmt::Arguments<'_>) {
    emit(&safe(&args.to_string()), false);
}

/// Write `text` to stdout as it is: only for text whose untrusted parts were made safe
/// already (the audit's table, with its colours).
pub fn raw(text: &str) {
    emit(text, false);
}

/// Write `text` to stdout, then a newline or a flush; nothing once the reader has gone.
fn emit(text: &str, newline: bool) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_all(text.as_bytes()).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            stdout.flush()
        }
    });
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

fn handle(written: std::io::Result<()>) {
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => GONE.store(true, Ordering::Relaxed),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "passepartout: cannot write the output: {e}"
            );
            std::process::exit(1);
        }
    }
}
