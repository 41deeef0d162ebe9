//! The gate on whole actions: effects first, the old argument reading as a fallback; the
//! verdict table of cases.json; and the reading of options, wrappers, shells and paths.

use passepartout_sdk::context::testing::{self, program, tool};
use passepartout_sdk::context::{Effects, ProgramRun, ToolIdentity};
use passepartout_sdk::{Action, Gate, SignalView, Verdict};
use serde_json::{Value, json};

use crate::paths::{self, Cwd, Dir, Place, Target};
use crate::wrappers::{self, Input, Runs, Script};
use crate::{ShellGuard, check_action, options};

fn action(tool: &str, args: Value) -> Action {
    Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args: args.to_string(),
        text: None,
        explanation: None,
    }
}

fn signal() -> SignalView {
    testing::signal()
}

/// The first-party shell tool running `program` with `argv`, as the host shows it.
fn shell(program_name: &str, argv: &[&str]) -> Verdict {
    let a = action("shell", json!({"program": program_name, "args": argv}));
    check_action(
        &a,
        Some(&tool("shell", "shell", false)),
        &program(program_name, argv),
    )
}

fn rejected(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Reject(_))
}

/// A verdict as text, to compare (`Verdict` has no `PartialEq`).
fn show(verdict: &Verdict) -> String {
    format!("{verdict:?}")
}

const PASS: &str = "Verdict::Pass";

#[test]
fn programs_in_effects_are_judged() {
    assert_eq!(
        show(&shell("rm", &["-rf", "/"])),
        show(&Verdict::Reject(
            "rm -r / deletes a system directory".into()
        ))
    );
    assert!(rejected(&shell("sh", &["-c", "rm -rf /"])));
    assert!(rejected(&shell(
        "/usr/bin/sudo",
        &["dd", "if=/dev/zero", "of=/dev/sda"]
    )));
    assert_eq!(show(&shell("ls", &["-la"])), PASS);
    // An argument is one word: the shell tool runs no shell.
    assert_eq!(show(&shell("echo", &["a; rm -rf /"])), PASS);
    assert_eq!(
        show(&shell("git", &["commit", "-m", "rm -rf / is bad"])),
        PASS
    );
}

#[test]
fn every_program_run_is_judged_and_a_command_line_as_program_too() {
    let mut fx = program("ls", &[]);
    fx.programs.push(ProgramRun {
        program: "chmod".into(),
        argv: vec!["-R".into(), "777".into(), "/".into()],
        line: None,
        stdin: None,
    });
    let runner = tool("evil", "runner", false);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
    let line = program("rm -rf /", &[]);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &line
    )));
}

#[test]
fn a_third_party_tool_is_judged_exactly_like_the_shell_tool() {
    let args = json!({"exe": "sudo", "params": ["rm", "-rf", "/"]});
    let evil = check_action(
        &action("runner", args.clone()),
        Some(&tool("evil", "runner", false)),
        &program("sudo", &["rm", "-rf", "/"]),
    );
    assert_eq!(show(&evil), show(&shell("sudo", &["rm", "-rf", "/"])));
    assert!(rejected(&evil));
    // Through the component's entry point, with the context the host would give.
    let via_gate = testing::with(
        Some(tool("evil", "runner", false)),
        program("sudo", &["rm", "-rf", "/"]),
        || ShellGuard::check(action("runner", args), signal()),
    );
    assert_eq!(show(&via_gate), show(&evil));
}

#[test]
fn a_tool_named_shell_gets_nothing_from_its_name() {
    let impostor = tool("evil", "shell", false);
    let a = action("shell", json!({"program": "ls"}));
    assert!(rejected(&check_action(
        &a,
        Some(&impostor),
        &program("rm", &["-rf", "~"])
    )));
    assert_eq!(
        show(&check_action(&a, Some(&impostor), &program("ls", &[]))),
        PASS
    );
}

#[test]
fn a_tool_that_declares_programs_is_judged_by_them_and_others_have_commands_read_too() {
    // The shell tool declares its program: an extra `cmd` key is not what runs.
    let shell = tool("shell", "shell", false);
    let a = action(
        "shell",
        json!({"program": "ls", "args": [], "cmd": "rm -rf /"}),
    );
    assert_eq!(
        show(&check_action(&a, Some(&shell), &program("ls", &[]))),
        PASS
    );
    // A tool that declares no program (only a write) may still carry one under another name.
    let write = tool("files", "write-file", false);
    let a = action(
        "write-file",
        json!({"path": "/workspace/notes.md", "command": "rm -rf /"}),
    );
    assert!(rejected(&check_action(&a, Some(&write), &Effects::none())));
    let a = action(
        "write-file",
        json!({"path": "/workspace/notes.md", "content": "rm -rf /"}),
    );
    assert_eq!(
        show(&check_action(&a, Some(&write), &Effects::none())),
        PASS
    );
}

#[test]
fn tools_that_declare_nothing_have_their_args_read_as_before() {
    let mut opaque = tool("evil", "runner", false);
    opaque.declares_effects = false;
    let none = Effects::none();
    for args in [
        json!({"cmd": "rm -rf /"}),
        json!({"command": "sudo bash -c 'rm -rf /'"}),
        json!({"program": "rm", "args": ["-rf", "/"]}),
        json!({"argv": ["chmod", "-R", "777", "/"]}),
    ] {
        let a = action("runner", args);
        assert!(
            rejected(&check_action(&a, Some(&opaque), &none)),
            "{}",
            a.args
        );
        assert!(rejected(&check_action(&a, None, &none)), "{}", a.args);
    }
    let harmless = action("runner", json!({"cmd": "ls -la"}));
    assert_eq!(show(&check_action(&harmless, Some(&opaque), &none)), PASS);
    // With no tool known, a `shell` action must say what it runs.
    let empty = action("shell", json!({}));
    assert!(rejected(&check_action(&empty, None, &none)));
}

#[test]
fn a_large_body_without_a_command_is_not_parsed_and_an_escaped_key_still_is() {
    let body = json!({"path": "/workspace/a", "content": "x ".repeat(200_000)});
    assert_eq!(
        show(&ShellGuard::check(action("write-file", body), signal())),
        PASS
    );
    let mut escaped = action("run", json!({}));
    escaped.args = r#"{"\u0063md": "rm -rf /"}"#.into();
    assert!(rejected(&ShellGuard::check(escaped, signal())));
    assert!(rejected(&ShellGuard::check(
        action("run", json!({"cmd": "rm -rf /"})),
        signal()
    )));
}

#[test]
fn replies_pass() {
    let reply = Action {
        target: "chat".into(),
        tool: None,
        args: "{}".into(),
        text: Some("rm -rf / is a bad idea".into()),
        explanation: None,
    };
    assert_eq!(show(&check_action(&reply, None, &Effects::none())), PASS);
}

#[test]
fn a_command_line_is_judged_as_a_shell_reads_it() {
    // Split on whitespace, `sh -c 'rm -rf /'` is `sh`, `-c`, `'rm`, `-rf`, `/'`: only the line
    // shows what runs.
    let fx = passepartout_sdk::context::testing::command_line("sh -c 'rm -rf /'");
    let runner = tool("evil", "runner", false);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
    let fx = passepartout_sdk::context::testing::command_line("echo 'rm -rf /'");
    assert!(!rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
}

#[test]
fn a_script_fed_to_a_shell_on_stdin_is_judged() {
    let shell = tool("shell", "shell", false);
    let mut fx = program("bash", &[]);
    fx.programs[0].stdin = Some("cd / && rm -rf /".into());
    assert!(rejected(&check_action(
        &action(
            "shell",
            json!({"program": "bash", "stdin": "cd / && rm -rf /"})
        ),
        Some(&shell),
        &fx
    )));
    // Text fed to a program that is not a shell is data.
    let mut fx = program("cat", &[]);
    fx.programs[0].stdin = Some("rm -rf /".into());
    assert!(!rejected(&check_action(
        &action("shell", json!({"program": "cat", "stdin": "rm -rf /"})),
        Some(&shell),
        &fx
    )));
}

#[test]
fn a_tool_that_declares_other_effects_still_has_an_undeclared_command_read() {
    // It declares only a URL, and carries a command under a name it does not declare.
    let fetcher = tool("evil", "fetcher", false);
    let fx = Effects::none();
    assert!(rejected(&check_action(
        &action(
            "fetcher",
            json!({"url": "https://example.org", "command": "rm -rf ~"})
        ),
        Some(&fetcher),
        &fx
    )));
}

/// The verdict table, shared with `passepartout plugin test` (which runs it through the
/// runtime after `init`): each case is checked here natively, with the context the host would
/// give it.
const CASES: &str = include_str!("../cases.json");

/// A case's action with the tool and effects the host would give it: the shell tool's run (its
/// program, args and stdin) for `tool: shell`, nothing for a `shell` target.
fn case_context(case: &Value) -> (Action, Option<ToolIdentity>, Effects) {
    let spec = &case["action"];
    let args = &spec["args"];
    match spec["tool"].as_str() {
        Some(name) => {
            assert_eq!(name, "shell", "the table's tool cases run the shell tool");
            let argv: Vec<&str> = args["args"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut fx = program(args["program"].as_str().unwrap_or_default(), &argv);
            if let Some(run) = fx.programs.first_mut() {
                run.stdin = args["stdin"].as_str().map(str::to_owned);
            }
            (
                action(name, args.clone()),
                Some(tool("shell", name, false)),
                fx,
            )
        }
        None => {
            let target = spec["target"].as_str().unwrap_or("shell");
            let a = Action {
                target: target.into(),
                tool: None,
                args: args.to_string(),
                text: None,
                explanation: None,
            };
            (a, None, Effects::none())
        }
    }
}

#[test]
fn every_case_of_the_table_holds_natively() {
    let doc: Value = serde_json::from_str(CASES).expect("cases.json is JSON");
    let cases = doc["cases"].as_array().expect("a list of cases");
    assert!(cases.len() > 120, "the table is all there");
    let mut failed = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("each case has a name");
        let (a, identity, fx) = case_context(case);
        let verdict = check_action(&a, identity.as_ref(), &fx);
        let said = match (case["expect"].as_str(), &verdict) {
            (Some("pass"), Verdict::Pass) => None,
            (Some("reject"), Verdict::Reject(reason)) => Some(reason),
            (Some("require-approval"), Verdict::RequireApproval(question)) => Some(question),
            (expect, got) => {
                failed.push(format!("{name}: expected {expect:?}, got {got:?}"));
                continue;
            }
        };
        if let Some(said) = said {
            if said.contains('\n') {
                failed.push(format!("{name}: one line: {said:?}"));
            }
            if let Some(want) = case["reason"].as_str().filter(|w| !said.contains(w)) {
                failed.push(format!("{name}: {said:?} lacks {want:?}"));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn what_the_gate_cannot_tell_asks_a_person() {
    let asked = |verdict: &Verdict| matches!(verdict, Verdict::RequireApproval(_));
    assert!(asked(&shell("env", &["--frobnicate", "rm", "-rf", "/"])));
    assert!(asked(&shell("bash", &["/workspace/x.sh"])));
    assert!(asked(&shell("rm", &["-rf", "$TARGET"])));
    // A rejection anywhere in the command wins over a question.
    assert!(rejected(&shell(
        "sh",
        &["-c", "$(echo rm) -rf /etc; rm -rf /"]
    )));
    // A command line that is a tool's whole input, and what it feeds a shell.
    let mut fx = testing::command_line("bash");
    if let Some(run) = fx.programs.first_mut() {
        run.stdin = Some("rm -rf /".into());
    }
    let runner = tool("evil", "runner", false);
    assert!(rejected(&check_action(
        &action("runner", json!({})),
        Some(&runner),
        &fx
    )));
    // Target `shell`, no tool known: `stdin` is read with the program.
    let a = Action {
        target: "shell".into(),
        tool: None,
        args: json!({"program": "xargs", "args": ["rm", "-rf"], "stdin": "/usr"}).to_string(),
        text: None,
        explanation: None,
    };
    assert!(rejected(&check_action(&a, None, &Effects::none())));
}

/// `line` split on blanks.
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn options_are_read_as_getopt_reads_them() {
    let table = &[
        "s|signal=",
        "k|kill-after=",
        "v|verbose",
        "|foreground",
        "|help",
    ];
    let read = options::read(table, &words("-vs KILL --kill=5 10 cmd -x")).expect("reads");
    assert_eq!(read.values("signal").collect::<Vec<_>>(), ["KILL"]);
    assert_eq!(read.values("kill-after").collect::<Vec<_>>(), ["5"]);
    assert!(read.has("verbose"));
    assert_eq!(read.rest, words("10 cmd -x"));
    let read = options::read(table, &words("-sKILL --signal TERM -- -5 cmd")).expect("reads");
    assert_eq!(read.values("signal").collect::<Vec<_>>(), ["KILL", "TERM"]);
    assert_eq!(read.rest, words("-5 cmd"));
    // Any prefix that names one option is that option; others cannot be read.
    assert!(options::read(table, &words("--fore cmd")).is_ok_and(|r| r.has("foreground")));
    assert!(options::read(&["|force", "|foreground"], &words("--fo cmd")).is_err());
    assert!(options::read(table, &words("--frobnicate cmd")).is_err());
    assert!(options::read(table, &words("-q cmd")).is_err());
    assert!(options::read(table, &words("--verbose=yes cmd")).is_err());
    // An optional value is only ever attached.
    let xargs = &["i|replace?", "n|max-args="];
    let read = options::read(xargs, &words("-i echo {}")).expect("reads");
    assert!(read.has("replace") && read.values("replace").next().is_none());
    assert_eq!(read.rest, words("echo {}"));
    let read = options::read(xargs, &words("--replace=X -n1 echo X")).expect("reads");
    assert_eq!(read.values("replace").collect::<Vec<_>>(), ["X"]);
    assert_eq!(read.values("max-args").collect::<Vec<_>>(), ["1"]);
    // Options after operands, as `su` reads them.
    let read = options::permuted(&["c|command="], &words("root -c id more")).expect("reads");
    assert_eq!(read.values("command").collect::<Vec<_>>(), ["id"]);
    assert_eq!(read.rest, words("root more"));
    // `nice -5`.
    let read = options::read(&["#", "n|adjustment="], &words("-5 cmd")).expect("reads");
    assert_eq!(read.rest, words("cmd"));
    assert!(options::abbreviates("rec", "recursive"));
    assert!(options::abbreviates("recursive", "recursive"));
    assert!(options::abbreviates("no", "no-preserve-root"));
    assert!(!options::abbreviates("", "recursive"));
    assert!(!options::abbreviates("reference=x", "recursive"));
    assert!(!options::abbreviates("recursively", "recursive"));
}

#[test]
fn wrappers_name_the_command_they_run() {
    let runs = |line: &str| {
        let w = words(line);
        let (name, args) = w.split_first().expect("a program");
        wrappers::runs(name, args).map(|(runs, _dir)| runs)
    };
    let command = |line: &str| Some(Runs::Command(words(line)));
    let nothing = Some(Runs::Command(Vec::new()));
    assert_eq!(runs("sudo -u root rm -rf /"), command("rm -rf /"));
    assert_eq!(runs("sudo --user root FOO=1 reboot"), command("reboot"));
    assert_eq!(runs("sudo -Eu root reboot"), command("reboot"));
    assert_eq!(runs("sudo -s"), command("sh"));
    assert_eq!(runs("doas -u root reboot"), command("reboot"));
    assert_eq!(runs("timeout --signal KILL 5 reboot"), command("reboot"));
    assert_eq!(runs("timeout -k5 10 reboot"), command("reboot"));
    assert_eq!(runs("nice --adjustment 5 kill -9 1"), command("kill -9 1"));
    assert_eq!(runs("nice -n5 kill"), command("kill"));
    assert_eq!(runs("nice -5 kill"), command("kill"));
    assert_eq!(runs("ionice -c3 reboot"), command("reboot"));
    assert_eq!(runs("ionice --class 3 reboot"), command("reboot"));
    assert_eq!(runs("stdbuf -o0 -eL reboot"), command("reboot"));
    assert_eq!(runs("chrt -f 10 reboot"), command("reboot"));
    assert_eq!(runs("chrt -o reboot"), command("reboot"));
    assert_eq!(runs("taskset -c 0-3 reboot"), command("reboot"));
    assert_eq!(runs("setsid -f reboot"), command("reboot"));
    assert_eq!(runs("nohup reboot"), command("reboot"));
    assert_eq!(runs("busybox reboot"), command("reboot"));
    assert_eq!(runs("busybox --list"), nothing);
    assert_eq!(runs("env -i A=1 B=2 reboot"), command("reboot"));
    assert_eq!(runs("env - reboot"), command("reboot"));
    assert_eq!(runs("command -v reboot"), nothing);
    assert_eq!(runs("chroot /mnt"), command("sh"));
    assert_eq!(runs("runuser -u root -- reboot"), command("reboot"));
    assert_eq!(runs("ls -la"), None);
    assert!(matches!(
        runs("timeout --frobnicate 5 reboot"),
        Some(Runs::Unknown(why)) if why.contains("--frobnicate")
    ));
    assert!(matches!(runs("sudo -Z reboot"), Some(Runs::Unknown(_))));
    // env -S: the string split as env splits it, then read again.
    fn env(args: &[&str]) -> Option<Runs> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        wrappers::runs("env", &args).map(|(runs, _dir)| runs)
    }
    assert_eq!(env(&["-S", "sudo reboot"]), command("sudo reboot"));
    assert_eq!(
        env(&["--split-string=sudo reboot", "now"]),
        command("sudo reboot now")
    );
    assert_eq!(env(&["-S", "-i A=1 'sudo' reboot"]), command("sudo reboot"));
    assert_eq!(env(&["-S", "sudo\\_reboot"]), command("sudo reboot"));
    assert_eq!(env(&["-S", "# a comment", "reboot"]), command("reboot"));
    // Command lines.
    assert_eq!(runs("su root -c id"), Some(Runs::Line("id".into())));
    assert_eq!(runs("su"), command("sh"));
    assert_eq!(runs("watch -n 1 ls -la"), Some(Runs::Line("ls -la".into())));
    assert_eq!(runs("flock /tmp/l -c id"), Some(Runs::Line("id".into())));
    assert_eq!(runs("eval ls -la"), Some(Runs::Line("ls -la".into())));
    assert_eq!(runs("trap id EXIT"), Some(Runs::Line("id".into())));
    // xargs.
    let xargs = |command: &str, replace: Option<&str>, from_file: bool| {
        Some(Runs::Xargs {
            command: words(command),
            replace: replace.map(str::to_owned),
            delimiter: None,
            from_file,
        })
    };
    assert_eq!(
        runs("xargs -n 1 -P4 kill -9"),
        xargs("kill -9", None, false)
    );
    assert_eq!(runs("xargs --max-args 1 kill"), xargs("kill", None, false));
    assert_eq!(
        runs("xargs -I{} sh -c {}"),
        xargs("sh -c {}", Some("{}"), false)
    );
    assert_eq!(runs("xargs -i echo"), xargs("echo", Some("{}"), false));
    assert_eq!(runs("xargs -0"), xargs("echo", None, false));
    assert_eq!(runs("xargs --arg-file=list rm"), xargs("rm", None, true));
    assert!(matches!(
        runs("xargs -d , rm"),
        Some(Runs::Xargs {
            delimiter: Some(','),
            ..
        })
    ));
    assert!(matches!(
        runs("xargs -d \\n rm"),
        Some(Runs::Xargs {
            delimiter: Some('\n'),
            ..
        })
    ));
    assert!(matches!(runs("xargs -d \\x2c rm"), Some(Runs::Unknown(_))));
}

#[test]
fn wrappers_say_where_they_start_their_command() {
    let dir = |line: &str| {
        let w = words(line);
        let (name, args) = w.split_first().expect("a program");
        wrappers::runs(name, args).and_then(|(_runs, dir)| dir)
    };
    assert_eq!(dir("env -C / rm -rf etc"), Some("/".into()));
    let split = ["-S", "-C /tmp", "ls"].map(str::to_owned);
    assert_eq!(
        wrappers::runs("env", &split).and_then(|(_runs, dir)| dir),
        Some("/tmp".into())
    );
    assert_eq!(dir("sudo --chdir=/tmp ls"), Some("/tmp".into()));
    assert_eq!(dir("sudo -i ls"), Some("~".into()));
    assert_eq!(dir("su - root -c ls"), Some("~".into()));
    assert_eq!(dir("chroot / rm"), Some("/".into()));
    assert_eq!(dir("chroot --skip-chdir / rm"), None);
    assert_eq!(dir("nice rm"), None);
}

#[test]
fn shells_are_read_for_their_script() {
    let script = |line: &str| {
        let w = words(line);
        let (name, args) = w.split_first().expect("a program");
        wrappers::script(name, args)
    };
    let lines = |line: &str| Some(Script::Lines(vec![line.to_owned()]));
    assert_eq!(script("sh -c ls"), lines("ls"));
    assert_eq!(script("bash -o pipefail -c ls"), lines("ls"));
    assert_eq!(script("bash -eo pipefail -c ls"), lines("ls"));
    assert_eq!(script("bash --rcfile /dev/null -c ls"), lines("ls"));
    assert_eq!(script("bash --norc --noprofile -xc ls"), lines("ls"));
    assert_eq!(script("bash -O extglob +o posix -c ls"), lines("ls"));
    assert_eq!(script("bash -c -e ls"), lines("ls"));
    assert_eq!(script("zsh --no-rcs -c ls"), lines("ls"));
    assert_eq!(script("fish -c ls"), lines("ls"));
    assert_eq!(script("bash x.sh"), Some(Script::File("x.sh".into())));
    assert_eq!(script("sh -- x.sh"), Some(Script::File("x.sh".into())));
    assert_eq!(script("bash -s x y"), Some(Script::Stdin));
    assert_eq!(script("bash"), Some(Script::Stdin));
    assert_eq!(script("bash -c"), Some(Script::Lines(Vec::new())));
    assert!(matches!(
        script("bash --frobnicate -c ls"),
        Some(Script::Unknown(_))
    ));
    assert_eq!(script("python3 -c ls"), None);
}

#[test]
fn xargs_runs_its_command_on_what_it_reads() {
    let rm = words("rm -rf");
    assert_eq!(
        wrappers::xargs_commands(&rm, None, None, Input::Nothing),
        vec![rm.clone()]
    );
    assert_eq!(
        wrappers::xargs_commands(&rm, None, None, Input::Unseen),
        vec![words("rm -rf $(...)")]
    );
    assert!(
        wrappers::xargs_commands(&rm, None, None, Input::Text("/etc\n/usr"))
            .contains(&words("rm -rf /etc /usr"))
    );
    assert_eq!(
        wrappers::xargs_commands(
            &words("sh -c {}"),
            Some("{}"),
            None,
            Input::Text("ls\nrm -rf /\n")
        ),
        vec![
            vec!["sh".to_owned(), "-c".into(), "ls".into()],
            vec!["sh".to_owned(), "-c".into(), "rm -rf /".into()],
        ]
    );
    // Quotes group, as xargs reads them; a line with blanks is also tried as one item.
    let quoted = wrappers::xargs_commands(&words("sh -c"), None, None, Input::Text("'rm -rf /'"));
    assert!(quoted.iter().any(|run| *run == ["sh", "-c", "rm -rf /"]));
    // Items split on `-d`'s delimiter, each alone too.
    let split = wrappers::xargs_commands(&rm, None, Some(','), Input::Text("/etc,/usr"));
    assert!(split.contains(&words("rm -rf /etc /usr")));
    assert!(split.contains(&words("rm -rf /etc")));
    // More than the gate reads is unseen.
    let long = "a\n".repeat(1000);
    assert_eq!(
        wrappers::xargs_commands(&rm, None, None, Input::Text(&long)),
        vec![words("rm -rf $(...)")]
    );
}

#[test]
fn paths_are_resolved_lexically_and_expansions_are_unknown() {
    let start = Cwd::start();
    let at = |path: &str| Place::At(path.to_owned());
    assert_eq!(paths::place("//etc/", &start), at("/etc"));
    assert_eq!(paths::place("/usr/../etc", &start), at("/etc"));
    assert_eq!(paths::place("/./etc/.", &start), at("/etc"));
    assert_eq!(paths::place("/../../etc", &start), at("/etc"));
    assert_eq!(paths::place("/usr/*", &start), at("/usr"));
    assert_eq!(paths::place("~/..", &start), at("/home"));
    assert_eq!(paths::place("$HOME/x/../", &start), at("/home/~"));
    assert_eq!(
        paths::place("build/../x", &start),
        Place::Below(vec!["x".into()])
    );
    assert_eq!(paths::place("../x", &start), Place::Unknown);
    for unknown in [
        "$D",
        "\"$(...)\"",
        "~root",
        "/{etc,usr}",
        "/x/{1..3}",
        "/!(tmp)",
        "`x`",
    ] {
        assert_eq!(paths::place(unknown, &start), Place::Unknown, "{unknown}");
    }
    // `cd` moves where relative paths lead.
    let root = start.cd(&words("/"), false);
    assert_eq!(root.dir, Dir::At("/".into()));
    assert_eq!(paths::place("etc", &root), at("/etc"));
    assert_eq!(root.cd(&words("tmp"), false).dir, Dir::At("/tmp".into()));
    assert_eq!(start.cd(&words(".."), false).dir, Dir::Unknown);
    assert_eq!(start.cd(&words("-"), false).dir, Dir::Unknown);
    assert_eq!(
        start.cd(&words("build"), false).dir,
        Dir::Below(vec!["build".into()])
    );
    assert_eq!(start.cd(&words("build"), true).dir, Dir::Unknown);
    assert_eq!(start.cd(&[], false).dir, Dir::At("/home/~".into()));
    // Once the line may set HOME, `~` and a bare `cd` lead where the gate cannot tell.
    let homeless = start.homeless();
    assert_eq!(paths::place("~/etc", &homeless), Place::Unknown);
    assert_eq!(paths::place("$HOME", &homeless), Place::Unknown);
    assert_eq!(homeless.cd(&[], false).dir, Dir::Unknown);
    assert_eq!(paths::place("/etc", &homeless), at("/etc"));
    // Targets, globs compared as globs.
    assert_eq!(paths::target("/e*c", &start), Target::System("/etc"));
    assert_eq!(paths::target("/**", &start), Target::System("/"));
    assert_eq!(paths::target("/tmp/b*", &start), Target::Other);
    assert_eq!(paths::target("~/*", &start), Target::Home);
    assert!(paths::glob("e*c", "etc"));
    assert!(paths::glob("[a-z]tc", "etc"));
    assert!(paths::glob("*", ""));
    assert!(!paths::glob("e*x", "etc"));
    assert!(!paths::glob("?", ""));
}

#[test]
fn odd_inputs_never_panic() {
    let odd = [
        "",
        "'",
        "\"",
        "\\",
        "$(",
        "`",
        "-",
        "--",
        "-c",
        "--=",
        "-S",
        "env -S",
        "env -S '",
        "xargs -I",
        "xargs -i",
        "sudo -u",
        "timeout",
        "chrt",
        "flock",
        "su -c",
        "bash -o",
        "bash -c",
        "nice -",
        "nice --",
        "find -D",
        "rm -rf [",
        "rm -rf /[",
        "cd",
        "cd -- ",
        "é ü ☃ 🦀",
        "!(",
        "x!(",
        "((((",
    ];
    for s in odd {
        let _ = crate::check_command(s);
        let w = words(s);
        let _ = shell(s, &w.iter().map(String::as_str).collect::<Vec<_>>());
        let _ = paths::place(s, &Cwd::start());
        let _ = paths::glob(s, "etc");
    }
}
