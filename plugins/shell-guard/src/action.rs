//! From an action to the command lines it would run: the programs among its effects, and, for a
//! tool that declares no effects, whatever command its arguments spell.

use passepartout_sdk::context::{Effects, ProgramRun, ToolIdentity};
use passepartout_sdk::{Action, Verdict};

use crate::check::{Finding, check_command, check_program, gravest};
use crate::wrappers::{self, Input};
use shell_syntax::split::quote;

/// The verdict on `action`, given the tool it names (`None` when the host knows none: a reply,
/// an unknown tool, or a check made without the host) and what it would do.
///
/// Every program run in `effects` is judged by the rules of [`check_command`], whatever the
/// tool and its argument names. A tool that declares its effects is judged by them alone; for
/// any other action the arguments are also read the old way (see [`sniffed_run`]), as defence
/// in depth. A rejection is returned as one; what the gate cannot tell (a program named by an
/// expansion, an option of a wrapper it does not know, a script it cannot read) asks a person.
pub fn check_action(action: &Action, tool: Option<&ToolIdentity>, effects: &Effects) -> Verdict {
    let judged = gravest(effects.programs.iter().map(check_run));
    // The programs a tool declares are judged above; a tool that declares none (it declares
    // other effects, or nothing) may still carry a command under a name it does not declare,
    // so its arguments are read the old way too.
    if judged.is_some() || !effects.programs.is_empty() {
        return verdict(judged);
    }
    // Without the host's word on the tool, a `shell` action is taken at its name.
    let is_shell =
        tool.is_none() && (action.tool.as_deref() == Some("shell") || action.target == "shell");
    match sniffed_run(action, is_shell) {
        Some(run) => verdict(check_run(&run)),
        None if is_shell => Verdict::Reject(
            "a shell action must carry its program in args.program (with args.args)".into(),
        ),
        None => Verdict::Pass,
    }
}

/// A finding as the gate's verdict: a rejection, a question for a person, or a pass.
fn verdict(finding: Option<Finding>) -> Verdict {
    match finding {
        None => Verdict::Pass,
        Some(Finding::Reject(reason)) => Verdict::Reject(reason),
        Some(Finding::Ask(question)) => Verdict::RequireApproval(question),
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

/// What the rules find in `run`. Its words are judged as the words of one command, with its
/// standard input (what a shell given no script runs, and what `xargs` adds to its command). A
/// program name that is itself a command line (`rm -rf /` in place of a name) is also judged as
/// one: a tool may hand it to a shell.
fn check_run(run: &ProgramRun) -> Option<Finding> {
    // A tool that takes a whole command line: judge the line as a shell reads it, and what it
    // feeds a shell it starts with.
    if let Some(line) = &run.line {
        let name = run.program.rsplit('/').next().unwrap_or_default();
        let fed = run
            .stdin
            .as_deref()
            .filter(|_| wrappers::script(name, &[]).is_some())
            .and_then(check_command);
        return gravest([fed, check_command(line)]);
    }
    let input = run.stdin.as_deref().map_or(Input::Nothing, Input::Text);
    let mut words = vec![run.program.clone()];
    words.extend(run.argv.iter().cloned());
    let line_like = run
        .program
        .contains(|c: char| c.is_whitespace() || ";&|`$<>(){}".contains(c));
    gravest([
        check_program(&words, input),
        line_like.then(|| check_command(&run.program)).flatten(),
    ])
}

/// The program an action's arguments spell, read by key: a `command` or `cmd` line, a
/// `program` with its `args` list, or an `argv` list; with the `stdin` text it is given. For
/// tools that declare no effects only.
fn sniffed_run(action: &Action, is_shell: bool) -> Option<ProgramRun> {
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
    let run = |program: &str, argv: Vec<String>, line: Option<&str>| ProgramRun {
        program: program.to_owned(),
        argv,
        line: line.map(str::to_owned),
        stdin: args["stdin"].as_str().map(str::to_owned),
    };
    ["command", "cmd"]
        .iter()
        .find_map(|key| args[*key].as_str())
        .map(|line| run("", Vec::new(), Some(line)))
        .or_else(|| {
            // The shell tool's form: a program and its arguments as a list.
            let program = args["program"].as_str()?;
            Some(run(program, strings(&args["args"]), None))
        })
        .or_else(|| {
            args["argv"].is_array().then(|| {
                let words = strings(&args["argv"]);
                match words.split_first() {
                    Some((program, argv)) => run(program.as_str(), argv.to_vec(), None),
                    None => run("", Vec::new(), None),
                }
            })
        })
}
