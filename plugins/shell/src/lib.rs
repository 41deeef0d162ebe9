//! `shell`: run one program that the operator's policy grants by name, with its arguments as a
//! list, through the host's `process` interface. There is no shell: no globbing, no pipes, no
//! `$VAR` expansion, no `;`. A program that exits non-zero still gives output (the model sees
//! the exit code); only a refusal, a missing program, a deadline or a failure to start is an
//! error.

mod format;

use passepartout_sdk::process::{self, Command, ProcessError};
use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};
use serde::Deserialize;

pub use format::format_output;

/// The arguments of the `shell` tool.
#[derive(Debug, Default, Deserialize)]
pub struct ShellArgs {
    /// The program's name as granted (`git`, `ls`); not a path, not a command line.
    pub program: Option<String>,
    /// Its arguments, passed as they are.
    #[serde(default)]
    pub args: Vec<String>,
    /// The working directory, a path inside a mount (e.g. `/workspace`).
    pub cwd: Option<String>,
    /// Text written to the program's standard input.
    pub stdin: Option<String>,
    /// Give up after this many milliseconds (the host caps it by the tool's deadline).
    pub timeout_ms: Option<u32>,
    /// A shell command line: refused, with a hint to pass `program` and `args` instead.
    #[serde(alias = "cmd")]
    pub command: Option<String>,
}

/// The tool plugin.
pub struct Shell;

const PARAMETERS: &str = r#"{"type":"object","properties":{"program":{"type":"string","x-effect":"program","description":"program name as granted, e.g. git (no path, no arguments)"},"args":{"type":"array","items":{"type":"string"},"x-effect":"argv","description":"arguments, one per item, passed as they are"},"cwd":{"type":"string","description":"working directory inside a mount, e.g. /workspace"},"stdin":{"type":"string","x-effect":"stdin","description":"text for standard input"},"timeout_ms":{"type":"integer","minimum":1}},"required":["program"]}"#;

impl Tool for Shell {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "shell".into(),
            description: "Run one program the operator allows (e.g. git, ls, grep) with a list of \
                arguments. No shell: no pipes, globs, redirections or variables. Returns the exit \
                code, stdout and stderr."
                .into(),
            parameters: PARAMETERS.into(),
            read_only: false,
        }]
    }

    fn call(name: String, args: String) -> Result<String, ToolError> {
        if name != "shell" {
            return Err(ToolError::InvalidArgs(format!(
                "the shell plugin has no tool named {name:?}; it has shell"
            )));
        }
        let cmd = command(parse_args::<ShellArgs>(&args)?)?;
        let program = cmd.program.clone();
        match process::run(&cmd) {
            Ok(out) => Ok(format_output(
                out.exit_code,
                &out.stdout,
                &out.stderr,
                out.truncated,
            )),
            Err(e) => Err(map_error(&program, e)),
        }
    }
}

/// Check the arguments and turn them into the host's [`Command`].
///
/// # Errors
/// [`ToolError::InvalidArgs`] for a `command` string, a missing or empty `program`, a program
/// given with its arguments in one string, or a zero timeout.
pub fn command(a: ShellArgs) -> Result<Command, ToolError> {
    if a.command.is_some() {
        return Err(ToolError::InvalidArgs(
            "the shell tool takes no command string (there is no shell): pass `program` \
             (e.g. \"git\") and `args` as a list (e.g. [\"log\", \"--oneline\", \"-5\"])"
                .into(),
        ));
    }
    let program = a.program.unwrap_or_default();
    // Run exactly what the gates judged: ` rm` is not trimmed into `rm` after a gate read it
    // as another name; it is refused (below) with the name to pass.
    let program = program.as_str();
    if program.trim().is_empty() {
        return Err(ToolError::InvalidArgs(
            "`program` is missing: name the program to run, e.g. \"ls\", and put its arguments \
             in `args`"
                .into(),
        ));
    }
    if program.contains(char::is_whitespace) {
        let mut words = program.split_whitespace();
        let first = words.next().unwrap_or_default();
        let rest: Vec<&str> = words.collect();
        if rest.is_empty() {
            return Err(ToolError::InvalidArgs(format!(
                "`program` has white space around the name: pass {first:?}"
            )));
        }
        return Err(ToolError::InvalidArgs(format!(
            "`program` must be a program name alone, not a command line: pass \
             {{\"program\": {first:?}, \"args\": {rest:?}}}"
        )));
    }
    if a.timeout_ms == Some(0) {
        return Err(ToolError::InvalidArgs(
            "`timeout_ms` must be at least 1".into(),
        ));
    }
    Ok(Command {
        program: program.to_owned(),
        args: a.args,
        cwd: a.cwd,
        stdin: a.stdin,
        timeout_ms: a.timeout_ms,
    })
}

/// What a [`ProcessError`] means to the model.
pub fn map_error(program: &str, e: ProcessError) -> ToolError {
    match e {
        ProcessError::Denied(m) => ToolError::Denied(m),
        // The host's message names the program already ("`git` is not on the PATH").
        ProcessError::NotFound(m) if m.contains(program) => ToolError::Failed(m),
        ProcessError::NotFound(m) if m.is_empty() => {
            ToolError::Failed(format!("{program}: no such program on the daemon's PATH"))
        }
        ProcessError::NotFound(m) => ToolError::Failed(format!(
            "{program}: no such program on the daemon's PATH ({m})"
        )),
        ProcessError::TimedOut(ms) => {
            passepartout_sdk::log(
                passepartout_sdk::LogLevel::Info,
                &format!("{program} timed out after {ms} ms and was killed"),
            );
            ToolError::TimedOut
        }
        ProcessError::Failed(m) => ToolError::Failed(format!("{program}: {m}")),
    }
}

passepartout_sdk::export_tool!(Shell);

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> ShellArgs {
        match parse_args::<ShellArgs>(json) {
            Ok(a) => a,
            Err(e) => panic!("{json} should parse: {e:?}"),
        }
    }

    fn invalid(json: &str) -> String {
        match command(args(json)) {
            Err(ToolError::InvalidArgs(m)) => m,
            other => panic!("{json}: expected InvalidArgs, got {other:?}"),
        }
    }

    #[test]
    fn program_and_args_become_a_command() {
        let c = command(args(
            r#"{"program":"git","args":["status","--short"],"cwd":"/workspace","stdin":"x","timeout_ms":5}"#,
        ))
        .expect("valid");
        assert_eq!(c.program, "git");
        assert_eq!(c.args, ["status", "--short"]);
        assert_eq!(c.cwd.as_deref(), Some("/workspace"));
        assert_eq!(c.stdin.as_deref(), Some("x"));
        assert_eq!(c.timeout_ms, Some(5));
    }

    #[test]
    fn args_default_to_none() {
        let c = command(args(r#"{"program":"ls"}"#)).expect("valid");
        assert!(c.args.is_empty());
        assert_eq!(c.cwd, None);
    }

    #[test]
    fn a_command_string_is_refused_with_a_hint() {
        assert!(invalid(r#"{"command":"ls -la"}"#).contains("`args` as a list"));
        assert!(invalid(r#"{"cmd":"ls -la"}"#).contains("no command string"));
    }

    #[test]
    fn a_command_line_in_program_is_refused_with_the_split() {
        let m = invalid(r#"{"program":"ls -la /workspace"}"#);
        assert!(m.contains(r#""program": "ls""#), "{m}");
        assert!(m.contains(r#"["-la", "/workspace"]"#), "{m}");
    }

    /// Gates read the program as written; ` rm` must not run as `rm`.
    #[test]
    fn a_name_with_white_space_around_it_is_refused_not_trimmed() {
        for padded in [
            r#"{"program":"rm "}"#,
            r#"{"program":" rm"}"#,
            r#"{"program":"rm\t"}"#,
        ] {
            let e = invalid(padded);
            assert!(
                e.contains("white space around the name: pass \"rm\""),
                "{e}"
            );
        }
    }

    #[test]
    fn missing_program_and_zero_timeout_are_refused() {
        assert!(invalid("{}").contains("`program` is missing"));
        assert!(invalid(r#"{"program":"  "}"#).contains("`program` is missing"));
        assert!(invalid(r#"{"program":"ls","timeout_ms":0}"#).contains("timeout_ms"));
    }

    #[test]
    fn process_errors_map_to_tool_errors() {
        assert!(matches!(
            map_error("rm", ProcessError::Denied("rm is not granted".into())),
            ToolError::Denied(m) if m == "rm is not granted"
        ));
        assert!(matches!(
            map_error("nope", ProcessError::NotFound("`nope` is not on the PATH".into())),
            ToolError::Failed(m) if m == "`nope` is not on the PATH"
        ));
        assert!(matches!(
            map_error("nope", ProcessError::NotFound(String::new())),
            ToolError::Failed(m) if m == "nope: no such program on the daemon's PATH"
        ));
        assert!(matches!(
            map_error("nope", ProcessError::NotFound("PATH=/usr/bin".into())),
            ToolError::Failed(m) if m.ends_with("(PATH=/usr/bin)")
        ));
        assert!(matches!(
            map_error("git", ProcessError::Failed("spawn failed".into())),
            ToolError::Failed(m) if m == "git: spawn failed"
        ));
    }
}
