//! The confinement trampoline for the tests: what `passepartout __confine` does (the same
//! library function), in a binary the test runtimes can name, since a test binary cannot start
//! itself as the trampoline.

use passepartout::runtime::capabilities::confine;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == confine::ARG) {
        confine::trampoline(&args[2..]);
    }
    eprintln!("usage: passepartout-confine __confine SPEC (the test runtimes run this)");
    std::process::exit(2);
}
