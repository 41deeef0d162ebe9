//! Exit codes: one table for `act`, `ask`, `send`, `approve` and `deny`, by how the request
//! ended (docs/cli.md, "Exit codes"). `verify` uses the same numbers for its verdicts.

use passepartout::pipeline::StepOutcome;

/// It ran (or there was nothing to do); a rejection the model recovered from counts as ran.
pub const OK: u8 = 0;
/// The request failed on the way: the model could not be asked or failed on any turn, a budget
/// refused, the loop stopped at the depth limit or on an interrupt.
pub const FAILED: u8 = 1;
/// The input was refused before anything ran: malformed JSON, an unknown token, or an action
/// asked for directly that cannot be performed as given (an unknown tool, arguments that do
/// not match its schema, a target with no actuator).
pub const BAD_INPUT: u8 = 2;
/// A gate rejected the action (for the model: after every attempt).
pub const REJECTED: u8 = 3;
/// The action waits for a person's approval (the token is printed).
pub const APPROVAL: u8 = 4;
/// The tool ran and failed, and nothing answered after it.
pub const TOOL_FAILED: u8 = 5;

/// Whose action the request ran: a person's, given directly (`act`, `send --action`,
/// `approve`), or the model's (`ask`, `send TEXT`). An action that cannot be performed is bad
/// input from a person and a failure of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose {
    /// The person gave the action.
    Direct,
    /// The model proposed it.
    Model,
}

/// How a request with these steps (in order) ended: any failed or dropped step fails it, an
/// action that cannot be performed is bad input when it is the person's (`whose`, the first
/// step) and a failure when it is the model's (any later step); otherwise the last step that
/// did something decides.
pub fn of<'a>(outcomes: impl IntoIterator<Item = &'a StepOutcome>, whose: Whose) -> u8 {
    let mut last = None;
    for (i, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            StepOutcome::Invalid { .. } if whose == Whose::Direct && i == 0 => return BAD_INPUT,
            StepOutcome::Failed { .. }
            | StepOutcome::Dropped { .. }
            | StepOutcome::Invalid { .. } => return FAILED,
            StepOutcome::Nothing => {}
            other => last = Some(other),
        }
    }
    match last {
        None | Some(StepOutcome::Ran { .. }) => OK,
        Some(StepOutcome::Rejected { .. }) => REJECTED,
        Some(StepOutcome::Suspended { .. }) => APPROVAL,
        Some(StepOutcome::ToolFailed { .. }) => TOOL_FAILED,
        Some(
            StepOutcome::Nothing
            | StepOutcome::Failed { .. }
            | StepOutcome::Dropped { .. }
            | StepOutcome::Invalid { .. },
        ) => FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran() -> StepOutcome {
        StepOutcome::Ran {
            target: "cli".into(),
            result: "42".into(),
        }
    }
    fn tool_failed() -> StepOutcome {
        StepOutcome::ToolFailed {
            tool: "eval".into(),
            message: "boom".into(),
        }
    }
    fn failed() -> StepOutcome {
        StepOutcome::Failed {
            error: "llm error".into(),
        }
    }

    #[test]
    fn the_table() {
        let dropped = StepOutcome::Dropped {
            why: "depth".into(),
        };
        let rejected = StepOutcome::Rejected {
            gate: "g".into(),
            reason: "no".into(),
            attempts: 3,
        };
        let suspended = StepOutcome::Suspended {
            token: "t".into(),
            reasons: vec![],
        };
        let cases: Vec<(Vec<StepOutcome>, u8)> = vec![
            (vec![], OK),
            (vec![StepOutcome::Nothing], OK),
            (vec![ran(), StepOutcome::Nothing], OK),
            // The model called a tool, then its answer turn failed.
            (vec![ran(), failed(), StepOutcome::Nothing], FAILED),
            (vec![failed()], FAILED),
            // Tools called forever, then the depth limit.
            (vec![ran(), ran(), ran(), dropped], FAILED),
            (vec![rejected], REJECTED),
            (vec![suspended], APPROVAL),
            (vec![tool_failed(), StepOutcome::Nothing], TOOL_FAILED),
            // The tool failed and the model answered with what went wrong.
            (vec![tool_failed(), ran()], OK),
        ];
        for (steps, code) in cases {
            assert_eq!(of(&steps, Whose::Model), code, "{steps:?}");
        }
        let invalid = [StepOutcome::Invalid {
            reason: "unknown tool".into(),
        }];
        assert_eq!(of(&invalid, Whose::Direct), BAD_INPUT);
        assert_eq!(of(&invalid, Whose::Model), FAILED);
        // After an approved action ran, the model proposed something impossible.
        let later = [ran(), invalid[0].clone()];
        assert_eq!(of(&later, Whose::Direct), FAILED);
    }
}
