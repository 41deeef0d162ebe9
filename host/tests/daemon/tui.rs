//! `passepartout tui` driven inside tmux (send-keys, capture-pane) against a real daemon and a
//! loopback model server that streams when the test lets it: the answer's progress builds up
//! token by token, its text lands in the conversation only once the gates passed it, each
//! gate's verdict shows as the walk makes it, an action another client asked for
//! appears in the approvals pane and is approved there with its result in the conversation, the
//! screen fits 80×24 and back, and quitting restores the terminal. Every wait is for something
//! on the screen, never a guessed sleep.

use std::path::Path;
use std::process::Command;

use passepartout_tests::http::{Canned, Release, Server, openai_stream};

use super::*;

/// One tmux session running the TUI; killed when dropped.
struct Tmux {
    name: String,
}

impl Tmux {
    /// Start `passepartout tui` for the daemon of `home` in a `width`×`height` window, in a
    /// session called `name` (with this process's id).
    fn start(home: &Path, name: &str, width: u16, height: u16) -> Tmux {
        Tmux::run(home, name, &["tui"], width, height)
    }

    /// Run `passepartout ARGS` for the daemon of `home` at a terminal, as [`Tmux::start`];
    /// the pane says `EXITED CODE` when it ends.
    fn run(home: &Path, name: &str, args: &[&str], width: u16, height: u16) -> Tmux {
        let name = format!("passepartout-{name}-{}", std::process::id());
        let cmd = command(home, args, &[]);
        let mut line = vec!["env".to_owned(), "-i".to_owned()];
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                line.push(format!("{}={}", k.to_string_lossy(), v.to_string_lossy()));
            }
        }
        line.push("TERM=xterm-256color".into());
        line.push(env!("CARGO_BIN_EXE_passepartout").into());
        line.extend(args.iter().map(|a| (*a).to_owned()));
        let quoted: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
        // The shell stays after the command ends, to say how it ended.
        let script = format!("{}; echo \"EXITED $?\"; sleep 600", quoted.join(" "));
        // Tests that start the first sessions at once race to start tmux's server, and the
        // loser is told the server exited: it tries again.
        let mut tries = 0;
        loop {
            let started = Command::new("tmux")
                .args(["new-session", "-d", "-s", &name])
                .args(["-x", &width.to_string(), "-y", &height.to_string()])
                .args(["sh", "-c", &script])
                .output()
                .expect("tmux (.ci/run installs it)");
            tries += 1;
            if started.status.success() {
                break;
            }
            assert!(tries < 5, "tmux new-session: {started:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
        Tmux { name }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(args).output().expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What the pane shows now.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.name])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Wait (60 s at most) until the screen satisfies `want`; the screen then.
    fn wait(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if want(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "{what}; the screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn resize(&self, width: u16, height: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            &self.name,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

#[test]
fn the_tui_shows_answers_verdicts_and_approvals_live_fits_80x24_and_restores_the_terminal() {
    let home = tempfile::tempdir().expect("temp dir");
    let release = Release::default();
    let model = Server::start(vec![Canned::events(
        vec![
            openai_stream::text("The answer"),
            openai_stream::text(" is") + &openai_stream::text(" 42."),
            openai_stream::end("stop", 40_000, 3),
        ],
        Some(&release),
    )]);
    super::providers::config(home.path(), &super::providers::openai(&model.url));
    let d = start(home.path(), &[], None);
    let tui = Tmux::start(home.path(), "tui", 120, 36);
    tui.wait("the daemon's health", |s| s.contains("[healthy]"));

    // A question: its progress shows as the model streams, never its text; the answer shows
    // once the gates passed it, and their verdicts beside it.
    tui.keys(&["what is six times seven", "Enter"]);
    tui.wait("the question asked", |s| {
        s.contains("waiting for the answer")
    });
    release.allow(1);
    tui.wait("the first token", |s| s.contains("local writing: 1 tokens"));
    release.allow(1);
    let screen = tui.wait("more tokens", |s| s.contains("local writing: 3 tokens"));
    assert!(
        !screen.contains("The answer"),
        "unverified text on screen: {screen}"
    );
    release.allow(1);
    let screen = tui.wait("the answer", |s| s.contains("The answer is 42."));
    assert!(screen.contains("you what is six times seven"), "{screen}");
    let screen = tui.wait("the reply's verdicts", |s| {
        s.contains("a reply to client") && s.contains("pii")
    });
    assert!(screen.contains("pass"), "{screen}");
    // Grouped under their request, each verdict with the time and fuel it took.
    assert!(screen.contains("request "), "{screen}");
    assert!(
        screen.lines().any(|l| l.contains("pii")
            && l.contains("µs")
            && (l.contains("kf") || l.contains("Mf"))),
        "{screen}"
    );
    // What the answer cost, in the status line: the stream's usage (40,000 + 3 tokens), the
    // answer raised to its length's estimate (5), shown rounded.
    tui.wait("the answer's cost", |s| {
        s.contains("$0.0000 today · 40k tokens")
    });

    // Another client's action waits for a person: it shows in the approvals pane at once.
    let (_, reply) = d
        .client()
        .request_raw(
            "act",
            json!({ "action": { "tool": "write-file", "args": { "path": "/etc/tui-test.txt", "content": "x" }, "explanation": "the test asks" } }),
        )
        .expect("act");
    assert_eq!(
        reply["result"]["steps"][0]["outcome"]["outcome"], "suspended",
        "{reply}"
    );
    tui.wait("the approval counted", |s| s.contains("approvals 1"));
    tui.keys(&["Tab"]);
    // Each argument as it runs: a string quoted (its line breaks would show as `\n`).
    tui.wait("the approvals pane", |s| {
        s.contains("[approvals]") && s.contains(r#"path: "/etc/tui-test.txt""#)
    });
    // Nothing is approved before the person selects it. Where the keys go is said in words.
    tui.keys(&["Escape"]);
    tui.wait("the keys in the pane", |s| {
        s.contains("Esc: type") && s.contains("keys here: ")
    });
    tui.keys(&["a"]);
    tui.wait("asked to select", |s| {
        s.contains("select an approval first")
    });
    // Selected and approved here: its result lands in the conversation, and it leaves the pane.
    tui.keys(&["Down"]);
    tui.wait("selected", |s| s.contains("> write-file"));
    tui.keys(&["a"]);
    let screen = tui.wait("the approved action's result", |s| {
        s.contains("approved: write-file") && s.contains("write-file failed")
    });
    assert!(screen.contains("approvals 0"), "{screen}");
    assert!(screen.contains("nothing waits for a person"), "{screen}");

    // The plugins pane: each plugin's roles, limits, grants, fuel, and the last error.
    tui.keys(&["Tab"]);
    let screen = tui.wait("the plugins pane", |s| {
        s.contains("[plugins]") && s.contains("fuel") && s.contains("last error:")
    });
    assert!(
        screen.contains("gate 0.1.0 · fuel 10M per check;"),
        "{screen}"
    );
    assert!(screen.contains("grants: none"), "{screen}");
    assert!(screen.contains("last error: plugin \"files\""), "{screen}");
    // Plugins the policy does not enable are listed, and counted in the status line.
    tui.keys(&["Down"; 60]);
    let screen = tui.wait("the plugins not loaded", |s| s.contains("shell disabled:"));
    assert!(screen.contains("4 disabled"), "{screen}");

    // 80×24: everything still drawn, nothing past the edge; and back.
    tui.resize(80, 24);
    let small = tui.wait("redrawn at 80x24", |s| {
        s.lines().count() <= 24 && s.contains("conversation") && s.contains("approvals 0")
    });
    assert!(small.lines().all(|l| l.chars().count() <= 80), "{small}");
    tui.resize(120, 36);
    tui.wait("redrawn at 120x36", |s| {
        s.lines().any(|l| l.chars().count() > 80)
    });

    // Help, then quit: the terminal is as it was (not in the alternate screen).
    tui.keys(&["Escape"]);
    tui.wait("the keys in the input line", |s| s.contains("Enter: ask"));
    tui.keys(&["?"]);
    tui.wait("the help", |s| s.contains("help (Esc to close)"));
    tui.keys(&["Escape"]);
    tui.keys(&["C-q"]);
    tui.wait("the TUI ended", |s| s.contains("EXITED 0"));
    let alternate = tui.tmux(&["display-message", "-p", "-t", &tui.name, "#{alternate_on}"]);
    assert_eq!(alternate.trim(), "0", "still in the alternate screen");

    // Ended by a signal (a closed terminal, a kill), it restores the terminal too.
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let other = Tmux::start(home.path(), &format!("tui-signal-{signal}"), 100, 30);
        other.wait("the TUI", |s| s.contains("[healthy]"));
        let shell: i32 = other
            .tmux(&["display-message", "-p", "-t", &other.name, "#{pane_pid}"])
            .trim()
            .parse()
            .expect("the pane's pid");
        let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
            .expect("the shell's children");
        let tui_pid: i32 = children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .expect("the TUI's pid");
        // SAFETY: kill(2) only signals.
        unsafe {
            libc::kill(tui_pid, signal);
        }
        other.wait("the TUI ended", |s| s.contains("EXITED 0"));
        let alternate = other.tmux(&[
            "display-message",
            "-p",
            "-t",
            &other.name,
            "#{alternate_on}",
        ]);
        assert_eq!(
            alternate.trim(),
            "0",
            "signal {signal}: still in the alternate screen"
        );
    }
    drop(d);
}

/// Run `passepartout ARGS` (an `approve` of the pending `(+ 1 2)`) at a terminal, answer its
/// question with `answer`, and check it ended as yes or no should: on no, nothing was decided
/// (`pending` still says so).
fn approve_at_a_terminal(
    home: &Path,
    name: &str,
    args: &[&str],
    answer: &str,
    pending: impl Fn() -> bool,
) {
    let term = Tmux::run(home, name, args, 160, 24);
    term.wait("the action and the question", |s| {
        s.contains("(+ 1 2)") && s.contains("approve it? [y/N]")
    });
    if !answer.is_empty() {
        term.keys(&[answer]);
    }
    term.keys(&["Enter"]);
    let screen = term.wait("it ended", |s| s.contains("EXITED"));
    if answer == "y" {
        assert!(screen.contains("EXITED 0"), "{screen}");
        assert!(!pending(), "yes did not approve it");
    } else {
        assert!(screen.contains("EXITED 1"), "{answer:?}: {screen}");
        assert!(
            screen.contains("not approved: nothing was decided"),
            "{screen}"
        );
        assert!(pending(), "{answer:?} decided it");
    }
}

#[test]
fn approve_at_a_terminal_shows_the_action_and_decides_only_on_yes() {
    let home = tempfile::tempdir().expect("temp dir");
    let (d, token) = holding_an_approval(home.path());
    let pending = || is_pending(&d, &token);
    // A token handed to the person (by the agent, say) shows what it would run, and anything
    // but yes decides nothing.
    for answer in ["n", "", "y"] {
        let name = format!("approve-{}", answer.len());
        approve_at_a_terminal(home.path(), &name, &["approve", &token], answer, pending);
    }
}

#[test]
fn approve_without_a_daemon_shows_the_action_and_decides_only_on_yes() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    // The daemon is killed at once: `approve` works on the database itself.
    let (_, token) = holding_an_approval(home.path());
    let pending = || {
        let out = command(home.path(), &["approvals", "--json"], &[])
            .output()
            .expect("approvals");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).contains(token.as_str())
    };
    assert!(pending(), "the action is waiting");
    let dir = plugins.to_str().expect("utf-8");
    for answer in ["n", "y"] {
        let name = format!("local-approve-{answer}");
        let args = ["--plugins", dir, "approve", &token];
        approve_at_a_terminal(home.path(), &name, &args, answer, pending);
    }
}
