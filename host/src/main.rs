//! The `passepartout` command.

mod cli;

use passepartout::runtime::capabilities::confine;

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Started by the daemon to confine a granted program: nothing else runs first.
    if args.get(1).is_some_and(|a| a == confine::ARG) {
        confine::trampoline(&args[2..]);
    }
    // Same-user processes (a granted program among them) cannot read this process's memory or
    // its /proc/PID/environ, where the providers' API keys live.
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    cli::main()
}
