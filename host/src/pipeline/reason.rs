//! Reason: for user input and chat messages, ask the model (`think`), parse its answer as data
//! into an action, verify it, and retry with the rejection fed back (up to 3 proposals).
//! Direct requests skip the model and go straight to the gates.

use serde_json::{Map, Value, json};

use super::cycle::Cycle;
use super::error::PipelineError;
use super::provider::{ProviderReply, ProviderRequest, ToolSchema};
use super::{Agent, skills};
use crate::gates::Outcome;
use crate::runtime::Kind;
use crate::signal::{Action, GateTrace, Signal, SignalType};

/// The skill that took a signal up, and the prompt it gave ([`skills::prompt`]).
pub type SkillPrompt = (String, String);

/// Most bytes of memory outline in the prompt's CONTEXT.
const CONTEXT_BYTES: usize = 4000;

/// Most bytes of the focused headline (body and children) in the prompt's CONTEXT.
const FOCUS_BYTES: usize = 4000;

/// What Reason decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Reasoned {
    /// Not a signal Reason handles.
    Nothing,
    /// Every gate passed this action.
    Approved {
        /// The action.
        action: Action,
        /// The trace.
        trace: GateTrace,
        /// What the gates passed on the way: the last mile asks only what this does not hold.
        memo: crate::gates::Memo,
    },
    /// The gates want a person's approval first.
    NeedsApproval {
        /// The action.
        action: Action,
        /// One line per gate that asked.
        reasons: Vec<String>,
        /// The trace.
        trace: GateTrace,
    },
    /// The action cannot be performed as written (no such actuator or tool, bad arguments):
    /// nothing ran and no gate was asked.
    Invalid {
        /// The action.
        action: Action,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// Every proposal was rejected.
    Rejected {
        /// The last action proposed.
        action: Action,
        /// The gate that rejected it.
        gate: String,
        /// Its reason.
        reason: String,
        /// Proposals made.
        attempts: u32,
        /// The trace of the last verification.
        trace: GateTrace,
    },
}

/// The argument every tool schema sent to the model gains: the model's reason for the call,
/// which becomes the action's explanation (the `explanation` gate reads it). The seed filled
/// in a fixed sentence instead, which would satisfy any such gate: we never invent one.
const EXPLANATION_ARG: &str = "explanation";

impl Agent {
    /// The Reason stage for `signal`.
    ///
    /// # Errors
    /// [`PipelineError::Llm`] when the model cannot be asked (no provider configured, all
    /// failing); [`PipelineError::Protocol`] for a direct request without a valid action.
    pub async fn reason(
        &self,
        signal: &Signal,
        cycle: &mut Cycle,
    ) -> Result<Reasoned, PipelineError> {
        match signal.kind {
            SignalType::Request => {
                let action = request_action(signal)?;
                Ok(self.verify_candidate(action, signal, 1, cycle).await)
            }
            SignalType::Event => {
                // The person's words go to the model, and so does the output of a tool the
                // model called (which it answers).
                let for_the_model = matches!(signal.sensor(), Some("user-input" | "chat-message"))
                    || (matches!(signal.sensor(), Some("tool-output" | "tool-error"))
                        && signal.conversation().is_some());
                // The skills are asked once per signal (each call is a fresh instance), and
                // about the signal that began the conversation, if any.
                let origin = signal.conversation().map_or(signal, |c| &*c.origin);
                let skill = skills::prompt(&self.skills, origin).await;
                // Any other event (a heartbeat...) goes to the model when a skill takes it up.
                let taken_up = for_the_model
                    || if std::ptr::eq(origin, signal) {
                        skill.is_some()
                    } else {
                        skills::prompt(&self.skills, signal).await.is_some()
                    };
                if taken_up {
                    self.reason_with_model(signal, skill.as_ref(), cycle).await
                } else {
                    Ok(Reasoned::Nothing)
                }
            }
            _ => Ok(Reasoned::Nothing),
        }
    }

    async fn reason_with_model(
        &self,
        signal: &Signal,
        skill: Option<&SkillPrompt>,
        cycle: &mut Cycle,
    ) -> Result<Reasoned, PipelineError> {
        let mut rejection: Option<String> = None;
        let mut last = None;
        for attempt in 1..=self.config.attempts.max(1) {
            // A rejected proposal is on disk before the model is asked again (which may take
            // minutes, and a stop in between must not lose what the gates said).
            self.flush(cycle).await.map_err(|e| {
                PipelineError::pipeline(format!("{e}: the model was not asked (again)"))
            })?;
            let candidate = self.think(signal, rejection.as_deref(), skill).await?;
            match self
                .verify_candidate(candidate, signal, attempt, cycle)
                .await
            {
                Reasoned::Rejected {
                    action,
                    gate,
                    reason,
                    attempts,
                    trace,
                } => {
                    rejection = Some(format!(
                        "gate {gate} rejected {}: {reason}",
                        summary(&action)
                    ));
                    last = Some(Reasoned::Rejected {
                        action,
                        gate,
                        reason,
                        attempts,
                        trace,
                    });
                }
                Reasoned::Invalid { action, reason } => {
                    // The model's mistake, fed back like a rejection.
                    rejection = Some(format!(
                        "{} cannot be performed: {reason}",
                        summary(&action)
                    ));
                    last = Some(Reasoned::Invalid { action, reason });
                }
                other => return Ok(other),
            }
        }
        Ok(last.unwrap_or(Reasoned::Nothing))
    }

    /// Verify one proposal; it and each gate's verdict go into the cycle's next commit.
    pub(crate) async fn verify_candidate(
        &self,
        mut action: Action,
        signal: &Signal,
        attempt: u32,
        cycle: &mut Cycle,
    ) -> Reasoned {
        action.resolve_target(signal.meta.source.as_deref(), &self.config.default_actuator);
        // As the tool will be called: gates, the journal and a person see what it is sent.
        self.catalog().complete(&mut action);
        let memo = crate::gates::Memo::default();
        let tap = self.tap(signal, false);
        let verification = crate::gates::verify_with(
            &self.gates(),
            self.catalog(),
            &action,
            signal,
            Some(&memo),
            tap.as_ref(),
        )
        .await;
        // The proposal and every verdict on it, committed together before anything runs.
        cycle.defer(
            "proposal",
            json!({ "attempt": attempt, "action": action, "signal": signal }),
        );
        for g in &verification.trace {
            let mut record = json!(g);
            record["set"] = json!(self.plugin_set());
            cycle.defer("verdict", record);
        }
        let trace = verification.trace;
        // Gates first (a rejection says more than "no such tool"), then whether the action can
        // be performed at all: nothing that cannot run is run or put to a person.
        let mut check = |action: &Action| {
            let result = self.validate(action).map_err(|e| e.to_string());
            if let Err(reason) = &result {
                cycle.defer("invalid", json!({ "action": action, "reason": reason }));
            }
            result
        };
        match verification.outcome {
            Outcome::Passed(action) => {
                // The tool it names as it was before the check: a change during the check
                // has the last mile check again.
                let tool = self.identity_of(&action);
                match check(&action) {
                    Ok(()) => {
                        memo.validated(&action, tool);
                        Reasoned::Approved {
                            action,
                            trace,
                            memo,
                        }
                    }
                    Err(reason) => Reasoned::Invalid { action, reason },
                }
            }
            Outcome::NeedsApproval { action, reasons } => match check(&action) {
                Ok(()) => Reasoned::NeedsApproval {
                    action,
                    reasons,
                    trace,
                },
                Err(reason) => Reasoned::Invalid { action, reason },
            },
            Outcome::Rejected { gate, reason } => {
                self.log(
                    &signal.meta,
                    format!("gate {gate} rejected {}: {reason}", summary(&action)),
                );
                Reasoned::Rejected {
                    action,
                    gate,
                    reason,
                    attempts: attempt,
                    trace,
                }
            }
        }
    }

    /// The seed's `think`: assemble the system prompt (identity with standing mandates, tools,
    /// context, logs, and the previous rejection), ask the model with the tools as function
    /// schemas, and turn the answer into an action. The answer is data; nothing in it runs.
    ///
    /// `skill`: the prompt the skills gave for the signal that began the conversation
    /// ([`skills::prompt`]), if one did.
    ///
    /// # Errors
    /// [`PipelineError::Llm`] when no provider is configured or it fails.
    pub async fn think(
        &self,
        signal: &Signal,
        rejection: Option<&str>,
        skill: Option<&SkillPrompt>,
    ) -> Result<Action, PipelineError> {
        let Some(provider) = &self.provider else {
            return Err(PipelineError::Llm {
                message:
                    "no language model is configured: set OPENAI_API_KEY, ANTHROPIC_API_KEY or \
                          another provider key (direct actions keep working without one)"
                        .into(),
                provider: None,
                cascade: Vec::new(),
                attempt_count: 0,
            });
        };
        let (origin, turns) = match signal.conversation() {
            Some(c) => (&*c.origin, c.turns.clone()),
            None => (signal, Vec::new()),
        };
        let mut request = self.prompt(origin, rejection, skill);
        request.turns = turns;
        // Streamed when the progress has somewhere to go (a client's request); the text itself
        // goes nowhere before the gates have passed it.
        let asked = signal.meta.session.is_some();
        let report = self.progress.as_ref().filter(|_| asked).map(|sink| {
            let meta = &signal.meta;
            move |p: &crate::pipeline::Progress| sink(meta, p)
        });
        let progress = report
            .as_ref()
            .map(|f| f as crate::pipeline::OnProgress<'_>);
        let reply = provider.complete_with(&request, progress).await?;
        Ok(parse_reply(reply))
    }

    /// The CONTEXT section: the headline `focus` names, if any (the seeds' foveal focus), then
    /// the memory's awareness outline (their peripheral vision), each bounded.
    fn context(&self, focus: Option<&str>) -> String {
        let Some(m) = &self.memory else {
            return "(no memory store)".to_owned();
        };
        let unavailable = |e: crate::memory::MemoryError| {
            tracing::warn!("memory context unavailable: {e}");
            format!("(memory unavailable: {e})")
        };
        let outline =
            crate::blocking::in_place(|| m.awareness(CONTEXT_BYTES)).unwrap_or_else(unavailable);
        let Some(id) = focus else {
            return outline;
        };
        let foveal = match crate::blocking::in_place(|| m.focus(id, FOCUS_BYTES)) {
            Ok(Some(text)) => text,
            Ok(None) => format!("(no headline with ID {id} any more)\n"),
            Err(e) => unavailable(e),
        };
        format!("FOCUS: the headline this request is about:\n{foveal}\n{outline}")
    }

    /// The request `think` sends: system prompt, user prompt (the skill's, else the
    /// signal's text) and tool schemas.
    pub fn prompt(
        &self,
        signal: &Signal,
        rejection: Option<&str>,
        skill: Option<&SkillPrompt>,
    ) -> ProviderRequest {
        let tools = self.tool_schemas();
        let mut identity = format!("IDENTITY: {}", self.config.assistant_name);
        if let Some(r) = rejection {
            identity.push_str(&format!("\n\nPREVIOUS PROPOSAL REJECTED: {r}"));
        }
        if !self.config.mandates.is_empty() {
            identity.push('\n');
            for m in &self.config.mandates {
                identity.push_str(m);
                identity.push('\n');
            }
        }
        let belt = if tools.is_empty() {
            "(no tools)".to_owned()
        } else {
            tools
                .iter()
                .map(|t| format!("- {}: {}", t.name, t.description))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let logs = self.recent_logs(&signal.meta);
        let system = format!(
            "{identity}\n\nTOOLS:\n{belt}\n\nCONTEXT:\n{}\n\nLOGS:\n{}",
            self.context(signal.meta.focus.as_deref()),
            if logs.is_empty() {
                "(none)".to_owned()
            } else {
                logs.join("\n")
            }
        );
        let (skill, prompt) = match skill {
            Some((skill, p)) => (Some(skill.clone()), p.clone()),
            None => {
                let text = signal.payload.text.clone().filter(|t| !t.is_empty());
                (
                    None,
                    text.unwrap_or_else(|| "Maintain metabolic stasis.".into()),
                )
            }
        };
        ProviderRequest {
            system,
            prompt,
            tools,
            turns: Vec::new(),
            skill,
            session: signal.meta.client.clone(),
        }
    }

    /// Every tool of every tool plugin, and of the MCP servers the gateway offers, as a
    /// function-calling schema.
    pub fn tool_schemas(&self) -> Vec<ToolSchema> {
        let plugins = self
            .plugins
            .iter()
            .filter(|p| p.is(Kind::Tool))
            .flat_map(|p| p.tools.iter())
            .map(|t| {
                let parameters: Value = serde_json::from_str(&t.parameters)
                    .unwrap_or_else(|_| json!({"type": "object"}));
                (t.name.clone(), t.description.clone(), parameters)
            });
        let servers = self
            .gateway
            .iter()
            .flat_map(|g| g.tools())
            .map(|t| (t.name, t.description, t.schema));
        plugins
            .chain(servers)
            .map(|(name, description, mut parameters)| {
                // Effect declarations are for the host and its gates, not the model.
                crate::runtime::effects::strip(&mut parameters);
                if let Some(props) = parameters
                    .as_object_mut()
                    .map(|o| o.entry("properties").or_insert_with(|| json!({})))
                    .and_then(Value::as_object_mut)
                {
                    props.entry(EXPLANATION_ARG).or_insert_with(|| {
                        json!({"type": "string", "description": "Why you make this call, in one sentence. Required for tools that change something."})
                    });
                }
                ToolSchema {
                    name,
                    description,
                    parameters,
                }
            })
            .collect()
    }
}

/// The most of a tool's name a [`summary`] shows, in bytes.
const SUMMARY_TOOL_BYTES: usize = 128;
/// The most of an action's arguments a [`summary`] shows, in bytes.
const SUMMARY_ARGS_BYTES: usize = 200;

/// One line about `action` for logs and questions: its tool and arguments (the name cut at
/// 128 bytes, the arguments at 200, each cut marked `…`), or what kind of reply it is.
pub(crate) fn summary(action: &Action) -> String {
    match &action.tool {
        Some(tool) => {
            let args = Value::Object(action.args.clone()).to_string();
            format!(
                "tool {} with {}",
                super::clip(tool, SUMMARY_TOOL_BYTES),
                super::clip(&args, SUMMARY_ARGS_BYTES)
            )
        }
        None => format!(
            "{} to {}",
            action.text.as_deref().map_or("an action", |_| "a reply"),
            action.target
        ),
    }
}

pub use crate::signal::Conversation;

/// The action a direct request carries in `payload.action` (typed since the wire: nothing is
/// parsed here).
fn request_action(signal: &Signal) -> Result<Action, PipelineError> {
    let mut action = signal
        .payload
        .action
        .clone()
        .ok_or_else(|| PipelineError::Protocol {
            message: "a request must carry its action in payload.action".into(),
            raw_message: None,
        })?;
    // Only the model's own function calls carry a call id: a client cannot start a
    // conversation with the model through a direct request ([`Signal::request`] drops it too).
    action.call_id = None;
    Ok(action)
}

/// Turn the model's answer into an action: a function call becomes a tool action; a JSON
/// action in the text (bare or in ``` fences) becomes that action, keys normalised; anything
/// else is a reply.
pub fn parse_reply(reply: ProviderReply) -> Action {
    match reply {
        ProviderReply::ToolCall {
            id,
            name,
            arguments,
        } => {
            let mut args: Map<String, Value> = match arguments {
                Value::Object(m) => m,
                Value::String(s) => serde_json::from_str(&s).unwrap_or_default(),
                _ => Map::new(),
            };
            let explanation = match args.remove(EXPLANATION_ARG) {
                Some(Value::String(e)) if !e.trim().is_empty() => Some(e),
                _ => None,
            };
            Action {
                call_id: Some(id),
                target: "tool".into(),
                tool: Some(name),
                args,
                text: None,
                explanation,
            }
        }
        ProviderReply::Text(text) => {
            let cleaned = strip_fences(&text);
            json_action(&cleaned).unwrap_or_else(|| Action {
                text: Some(if cleaned.is_empty() {
                    "No response".into()
                } else {
                    cleaned
                }),
                ..Action::default()
            })
        }
    }
}

/// The seed's markdown-strip: drop ``` fences (with a language tag) and trim.
pub fn strip_fences(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let body = rest.split_once('\n').map_or("", |(_, b)| b);
        let body = body.trim_end();
        return body.strip_suffix("```").unwrap_or(body).trim().to_owned();
    }
    t.to_owned()
}

/// A JSON object in the text, read as an action with keys normalised (case, `-`/`_`, an inner
/// `payload` object merged up, `cmd`-style args left to the tool).
fn json_action(text: &str) -> Option<Action> {
    if !text.starts_with('{') {
        return None;
    }
    let Value::Object(obj) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let mut flat = Map::new();
    for (k, v) in obj {
        let key = k.to_lowercase().replace('-', "_");
        if key == "payload" {
            if let Value::Object(inner) = v {
                for (ik, iv) in inner {
                    flat.insert(ik.to_lowercase().replace('-', "_"), iv);
                }
            }
        } else {
            flat.insert(key, v);
        }
    }
    let string = |key: &str| flat.get(key).and_then(Value::as_str).map(str::to_owned);
    let tool = string("tool").or_else(|| string("name"));
    let mut args = match flat.get("args").or_else(|| flat.get("arguments")) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    // The tool schemas offer `explanation` as an argument: one given there is the action's.
    let in_args = match args.remove(EXPLANATION_ARG) {
        Some(Value::String(e)) if !e.trim().is_empty() => Some(e),
        _ => None,
    };
    let text_field = string("text");
    if tool.is_none() && text_field.is_none() {
        return None;
    }
    Some(Action {
        target: string("target").unwrap_or_default(),
        tool,
        args,
        text: text_field,
        explanation: string("explanation").or(in_args),
        call_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_call_becomes_a_tool_action() {
        let a = parse_reply(ProviderReply::ToolCall {
            id: "c1".into(),
            name: "eval".into(),
            arguments: json!({"expression": "(+ 1 2)"}),
        });
        assert_eq!(a.call_id.as_deref(), Some("c1"));
        assert_eq!(a.tool.as_deref(), Some("eval"));
        assert_eq!(a.target, "tool");
        assert_eq!(a.args["expression"], "(+ 1 2)");
        assert_eq!(a.explanation, None, "none invented");
        let a = parse_reply(ProviderReply::ToolCall {
            id: "c2".into(),
            name: "write-file".into(),
            arguments: json!({"path": "/workspace/a", "content": "x", "explanation": "save the draft"}),
        });
        assert_eq!(a.explanation.as_deref(), Some("save the draft"));
        assert!(
            !a.args.contains_key("explanation"),
            "moved out of the tool's args"
        );
    }

    #[test]
    fn a_json_action_in_fences_is_read_with_keys_normalised() {
        let text = "```json\n{\"TOOL\": \"shell\", \"Args\": {\"cmd\": \"ls\"}}\n```";
        let a = parse_reply(ProviderReply::Text(text.into()));
        assert_eq!(a.tool.as_deref(), Some("shell"));
        assert_eq!(a.args["cmd"], "ls");
        assert_eq!(a.explanation, None, "none invented");
        let inside = parse_reply(ProviderReply::Text(
            "{\"tool\": \"write-file\", \"args\": {\"path\": \"/w/a\", \"explanation\": \"keep the note\"}}".into(),
        ));
        assert_eq!(inside.explanation.as_deref(), Some("keep the note"));
        assert!(!inside.args.contains_key("explanation"));
        let nested = parse_reply(ProviderReply::Text(
            "{\"payload\": {\"tool\": \"eval\", \"args\": {}}}".into(),
        ));
        assert_eq!(nested.tool.as_deref(), Some("eval"));
    }

    #[test]
    fn anything_else_is_a_reply_and_is_never_evaluated() {
        let a = parse_reply(ProviderReply::Text("Hello there".into()));
        assert_eq!(a.text.as_deref(), Some("Hello there"));
        assert!(a.tool.is_none());
        // The seed's read-eval RCE test: a reader macro is just text here.
        let evil = parse_reply(ProviderReply::Text("(#.(setf *pwned* t))".into()));
        assert_eq!(evil.text.as_deref(), Some("(#.(setf *pwned* t))"));
        assert!(evil.tool.is_none());
        let broken = parse_reply(ProviderReply::Text("{not json".into()));
        assert_eq!(broken.text.as_deref(), Some("{not json"));
        assert_eq!(
            parse_reply(ProviderReply::Text(String::new()))
                .text
                .as_deref(),
            Some("No response")
        );
    }

    #[test]
    fn a_summary_cuts_a_long_tool_name_and_long_arguments() {
        let mut action = parse_reply(ProviderReply::ToolCall {
            id: "c1".into(),
            name: "é".repeat(1 << 20),
            arguments: json!({"text": "a".repeat(1 << 20)}),
        });
        let line = summary(&action);
        assert!(
            line.len() <= "tool … with …".len() + SUMMARY_TOOL_BYTES + SUMMARY_ARGS_BYTES,
            "{} bytes",
            line.len()
        );
        assert!(
            line.starts_with("tool éé") && line.contains("… with {"),
            "{line}"
        );
        action.tool = Some("eval".into());
        action.args = serde_json::Map::new();
        assert_eq!(summary(&action), "tool eval with {}");
    }

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fences("```\nhi\n```"), "hi");
        assert_eq!(strip_fences("```lisp\n(+ 1 2)\n```"), "(+ 1 2)");
        assert_eq!(strip_fences("  plain  "), "plain");
    }
}
