//! A warm start as users run it: the agent assembled by [`passepartout::agent`] from the
//! built-in plugins under the policy `passepartout init` writes, with a warm compile cache, on
//! an on-disk database; beside its baseline in the same run, the plugin runtime alone (engine, pooling
//! allocator, cache: what every start pays before any plugin). Prints the ratio, and the
//! process's resident memory once the set is loaded (what an idle daemon holds, less the
//! daemon's own listener and tasks).
//!
//! Then the daemon as users start it (`passepartout init`'s policy and `passepartout.toml`,
//! then `passepartout daemon` with the warm cache, authentication on, none of the caller's
//! environment): the time from spawning the process to its line saying the plugins
//! loaded, beside a process that only prints its version; and an idle daemon's resident
//! memory, read from /proc after it has served nothing for two seconds.
//!
//! Run: `cargo bench -p passepartout --bench startup`

#[path = "common/estimates.rs"]
mod estimates;

use criterion::Criterion;
use passepartout::agent::Places;
use passepartout::runtime::{Runtime, RuntimeConfig};

/// A process's resident memory, in MiB, from /proc (Linux): `self` or a pid.
fn rss_mib(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = std::env::temp_dir().join("passepartout-bench-cache");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    // The plugin directory named below must exist (an explicit one that does not is an error).
    std::fs::create_dir_all(dir.path().join("plugins")).expect("plugin directory");
    std::fs::write(
        dir.path().join("policy.toml"),
        passepartout::policy_edit::starter(&workspace),
    )
    .expect("policy");
    let places = Places {
        plugins: Some(dir.path().join("plugins")),
        policy: Some(dir.path().join("policy.toml")),
        cache: Some(cache.clone()),
        no_cache: false,
        config: Some(dir.path().join("passepartout.toml")),
        db: Some(dir.path().join("passepartout.db")),
        progress: None,
        also_protected: Vec::new(),
    };
    places.journal().expect("the database");
    // Warm the cache (a first start compiles every plugin), then measure a fresh process's
    // memory after one load.
    let loaded = places.setup().expect("setup").load();
    assert!(
        loaded.report.errors.is_empty(),
        "{:?}",
        loaded.report.errors
    );
    let plugins = loaded.report.plugins.len();
    drop(loaded);
    let rss_loaded = rss_mib("self");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.bench_function("runtime-only", |b| {
        b.iter(|| {
            Runtime::new(RuntimeConfig {
                cache_dir: Some(cache.clone()),
                pooling: true,
                ..RuntimeConfig::default()
            })
            .expect("runtime")
        })
    });
    group.bench_function("load-every-built-in-plugin", |b| {
        b.iter(|| {
            let loaded = places.setup().expect("setup").load();
            loaded.assemble(places.journal().expect("journal"), None, Vec::new())
        })
    });
    group.finish();

    let daemon = Daemon {
        cache: &cache,
        home: &dir.path().join("home"),
    };
    daemon.run("init");
    let mut group = c.benchmark_group("startup-process");
    group.sample_size(10);
    group.bench_function("version-only", |b| {
        b.iter_custom(|n| (0..n).map(|_| daemon.run("--version")).sum())
    });
    group.bench_function("daemon-until-loaded", |b| {
        b.iter_custom(|n| (0..n).map(|_| daemon.start().0).sum())
    });
    group.finish();
    c.final_summary();

    let base = estimates::median_ns("startup", "runtime-only");
    let load = estimates::median_ns("startup", "load-every-built-in-plugin");
    println!("\nwarm start, {plugins} built-in plugins, compile cache warm:");
    if let (Some(base), Some(load)) = (base, load) {
        println!(
            "  runtime alone {:>8.1} ms   every plugin loaded and the agent assembled {:>8.1} ms   = {:.1}x",
            base / 1e6,
            load / 1e6,
            load / base
        );
    }
    let process = estimates::median_ns("startup-process", "version-only");
    let ready = estimates::median_ns("startup-process", "daemon-until-loaded");
    if let (Some(process), Some(ready)) = (process, ready) {
        println!(
            "  a process printing its version {:>6.1} ms   passepartout daemon until its plugins loaded {:>6.1} ms   = {:.1}x",
            process / 1e6,
            ready / 1e6,
            ready / process
        );
    }
    let (_, running) = daemon.start();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let idle = rss_mib(&running.0.id().to_string());
    drop(running);
    if let Some(rss) = idle {
        println!(
            "  an idle daemon's resident memory: {rss:.0} MiB (every plugin the init policy loads)"
        );
    }
    if let Some(rss) = rss_loaded {
        println!(
            "  resident memory after one load: {rss:.0} MiB (this bench process, criterion included)"
        );
    }
}

/// `passepartout daemon` started as a user starts it, in the bench's own directories.
struct Daemon<'a> {
    cache: &'a std::path::Path,
    home: &'a std::path::Path,
}

impl Daemon<'_> {
    #[allow(
        clippy::disallowed_methods,
        reason = "the caller's PATH, passed on to the daemon in a bench"
    )]
    fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_passepartout"));
        // Nothing of the caller's environment (its PASSEPARTOUT_* paths, its providers' keys):
        // the bench's own directories only.
        cmd.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        for (var, sub) in [
            ("XDG_RUNTIME_DIR", "run"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_STATE_HOME", "state"),
        ] {
            let path = self.home.join(sub);
            std::fs::create_dir_all(&path).expect("bench directory");
            cmd.env(var, path);
        }
        cmd.env("HOME", self.home)
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// Run `passepartout ARG` to its end; how long it took. `init` writes the policy and
    /// configuration a new user starts with; `--version` is a process that only prints.
    fn run(&self, arg: &str) -> std::time::Duration {
        let started = std::time::Instant::now();
        let out = self.command().arg(arg).output().expect("passepartout");
        assert!(out.status.success(), "passepartout {arg}: {out:?}");
        started.elapsed()
    }

    /// Start the daemon; return the time until it said its plugins loaded (its health line,
    /// printed once the providers were probed), and the process, killed when dropped.
    ///
    /// # Panics
    /// The daemon stops, says it is unhealthy, or says nothing of its plugins within 60 s.
    fn start(&self) -> (std::time::Duration, Running) {
        use std::io::BufRead;
        let started = std::time::Instant::now();
        let mut child = self
            .command()
            .args(["daemon", "--port", "0", "--cache"])
            .arg(self.cache)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("passepartout daemon");
        let stderr = child.stderr.take().expect("stderr");
        let running = Running(child);
        // Read on a thread of its own, to the end, so that the daemon never blocks on a full
        // pipe and this side can stop waiting.
        let (lines, said) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = lines.send(line);
            }
        });
        let deadline = started + std::time::Duration::from_secs(60);
        loop {
            let line = said
                .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
                .expect("the daemon stopped, or said nothing of its plugins within 60 s");
            assert!(!line.contains("unhealthy"), "the daemon: {line}");
            if line.contains("plugin(s) loaded") {
                return (started.elapsed(), running);
            }
        }
    }
}

/// A started daemon, killed and reaped when dropped (a failed assertion included).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
