//! What a person at a terminal sees while plugins compile (a first start, a new plugin): which
//! plugin, how big, and how long it has taken, every few seconds while it goes on. Nothing when
//! stderr is not a terminal (a pipe, a file, a test).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use passepartout::runtime::cache::{Compile, Progress};

/// How often a compile still running is mentioned again.
const EVERY: Duration = Duration::from_secs(5);

/// One line on stderr; a stderr that is gone (a terminal hung up) is no reason to fail a load.
fn say(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// Progress on stderr when it is a terminal; `None` otherwise.
pub fn at_a_terminal() -> Option<Progress> {
    std::io::stderr().is_terminal().then(on_stderr)
}

/// Progress on stderr, terminal or not.
pub fn on_stderr() -> Progress {
    let running: Arc<Mutex<BTreeMap<String, Instant>>> = Arc::default();
    let ticker = running.clone();
    // One thread for the process: it names what is still compiling, every few seconds.
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(EVERY);
            let now = Instant::now();
            let still: Vec<String> = ticker
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|(what, since)| format!("{what} ({} s)", now.duration_since(*since).as_secs()))
                .collect();
            if !still.is_empty() {
                say(format_args!(
                    "passepartout: still compiling {}",
                    still.join(", ")
                ));
            }
        }
    });
    Arc::new(move |event: Compile<'_>| {
        let mut running = running.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Compile::Started { what, bytes } => {
                say(format_args!(
                    "passepartout: compiling plugin {what} ({:.1} MiB; once, then it is cached)",
                    bytes as f64 / (1 << 20) as f64
                ));
                running.insert(what.to_owned(), Instant::now());
            }
            Compile::Finished { what, took } => {
                running.remove(what);
                say(format_args!(
                    "passepartout: compiled {what} in {:.1} s",
                    took.as_secs_f64()
                ));
            }
        }
    })
}
