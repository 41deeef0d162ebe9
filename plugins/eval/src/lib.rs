//! `eval`: evaluates Lisp-style expressions, such as `(+ 1 2)` or `(let ((x 2)) (* x 21))`.
//!
//! This replaces the seed's `eval` of arbitrary Lisp. It can compute, and nothing else: the
//! language has no function that reaches outside, and the component holds no capability (no
//! mounts, no environment, no network), so even a bug in the evaluator could not touch a file.

mod lisp;

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};

pub use lisp::{Value, eval_str};

#[derive(serde::Deserialize)]
struct EvalArgs {
    expression: String,
}

/// The tool plugin.
pub struct Eval;

impl Tool for Eval {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "eval".into(),
            description: "Evaluate a Lisp expression and return its value. Numbers, strings, t/nil, \
                lists; + - * / mod, = /= < > <= >=, not, and, or, if, cond, let, let*, list, car, cdr, \
                cons, length, min, max, abs, concat, quote. No I/O."
                .into(),
            parameters: r#"{"type":"object","properties":{"expression":{"type":"string","description":"e.g. (let ((x 2)) (* x 21))"}},"required":["expression"]}"#.into(),
            read_only: true,
        }]
    }

    fn call(name: String, args: String) -> Result<String, ToolError> {
        if name != "eval" {
            return Err(ToolError::InvalidArgs(format!(
                "the eval plugin has one tool, `eval`, not {name:?}"
            )));
        }
        let args: EvalArgs = parse_args(&args)?;
        eval_str(&args.expression)
            .map(|v| v.to_string())
            .map_err(ToolError::Failed)
    }
}

passepartout_sdk::export_tool!(Eval);
