//! The commands' output on stdout. A reader that goes away (`passepartout plugins | head -1`)
//! ends the command quietly with exit code 0, as it would `cat`: `println!` would panic.

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

/// Write `args` and a newline to stdout.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"));
    handle(written);
}

/// Write `args` to stdout, and flush it (a prompt, a progress line).
pub fn text(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.flush());
    handle(written);
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
