//! From an action to the command lines it would run: the programs among its effects, and, for a
//! tool that declares no effects, whatever command its arguments spell.

use passepartout_sdk::context::{Effects, ProgramRun, ToolIdentity};
use passepartout_sdk::{Action, Verdict};

use crate::check::check_command;
use crate::words::quote;

/// The verdict on `action`, given the tool it names (`None` when the host knows none: a reply,
/// an unknown tool, or a check made without the host) and what it would do.
///
/// Every program run in `effects` is judged by [`check_command`], whatever the tool and its
/// argument names. A tool that declares its effects is judged by them alone; for any other
/// action the arguments are also read the old way (see [`sniffed_command`]), as defence in depth.
pub fn check_action(action: &Action, tool: Option<&ToolIdentity>, effects: &Effects) -> Verdict {
    if let Some(reason) = effects.programs.iter().find_map(check_run) {
        return Verdict::Reject(reason);
    }
    // The programs a tool declares are judged above; a tool that declares none (it declares
    // other effects, or nothing) may still carry a command under a name it does not declare,
    // so its arguments are read the old way too.
    if !effects.programs.is_empty() {
        return Verdict::Pass;
    }
    // Without the host's word on the tool, a `shell` action is taken at its name.
    let is_shell =
        tool.is_none() && (action.tool.as_deref() == Some("shell") || action.target == "shell");
    match sniffed_command(action, is_shell) {
        Some(command) => check_command(&command).map_or(Verdict::Pass, Verdict::Reject),
        None if is_shell => Verdict::Reject(
            "a shell action must carry its program in args.program (with args.args)".into(),
        ),
        None => Verdict::Pass,
    }
}

/// A program run as one command line, each word quoted as a shell would need it, so that
/// `echo "a; rm -rf /"` stays one argument.
pub fn command_line(program: &str, argv: &[&str]) -> String {
    std::iter::once(program)
        .chain(argv.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why `run` must not run, if it must not. A program name that is itself a command line
/// (`rm -rf /` in place of a name) is also judged as one: a tool may hand it to a shell.
/// Programs that run what they read on standard input as shell code.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
];

fn check_run(run: &ProgramRun) -> Option<String> {
    // A shell fed its script on standard input runs that script.
    let name = run.program.rsplit('/').next().unwrap_or_default();
    if SHELLS.contains(&name)
        && let Some(script) = &run.stdin
        && let Some(reason) = check_command(script)
    {
        return Some(reason);
    }
    // A tool that takes a whole command line: judge the line as a shell reads it.
    if let Some(line) = &run.line {
        return check_command(line);
    }
    let argv: Vec<&str> = run.argv.iter().map(String::as_str).collect();
    check_command(&command_line(&run.program, &argv)).or_else(|| {
        let line_like = run
            .program
            .contains(|c: char| c.is_whitespace() || ";&|`$<>(){}".contains(c));
        line_like.then(|| check_command(&run.program)).flatten()
    })
}

/// The command an action's arguments spell, read by key: a `command` or `cmd` line, a
/// `program` with its `args` list, or an `argv` list. For tools that declare no effects only.
fn sniffed_command(action: &Action, is_shell: bool) -> Option<String> {
    // Parsing a large body (a file being written, a POST) costs fuel; an action that names
    // none of the keys read below cannot carry a command, so it is not parsed at all.
    // (A key spelled with a \u escape is parsed, so it cannot hide a command.)
    let keys = ["\"command\"", "\"cmd\"", "\"program\"", "\"argv\""];
    if !is_shell && !action.args.contains("\\u") && !keys.iter().any(|k| action.args.contains(k)) {
        return None;
    }
    let args = action.args_json();
    let strings = |value: &serde_json::Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect()
    };
    let as_line = |words: &[String]| {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        words
            .split_first()
            .map(|(program, argv)| command_line(program, argv))
            .unwrap_or_default()
    };
    ["command", "cmd"]
        .iter()
        .find_map(|key| args[*key].as_str().map(str::to_owned))
        .or_else(|| {
            // The shell tool's form: a program and its arguments as a list.
            let program = args["program"].as_str()?.to_owned();
            let mut words = vec![program];
            words.extend(strings(&args["args"]));
            Some(as_line(&words))
        })
        .or_else(|| {
            args["argv"]
                .is_array()
                .then(|| as_line(&strings(&args["argv"])))
        })
}
