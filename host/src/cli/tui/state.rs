//! What `passepartout tui` shows, as plain data: updated by the frames the daemon sends and
//! by the keys pressed, drawn by [`super::view`]. Every text that came from a model, a tool, a
//! plugin or the journal is made safe for the terminal when it is kept here, so nothing drawn
//! can move the cursor or paint over another pane.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use passepartout::daemon::answer::{self, Ran};
use passepartout::daemon::ops::Status;
use passepartout::daemon::request::Event;
use passepartout::pipeline::Focus;
use passepartout::pipeline::{Progress, StepOutcome};
use passepartout::signal::{Action, Told};
use serde_json::Value;

use super::waiting::{Standing, Waiting};

/// Lines kept in the conversation, the trace and the journal panes.
const KEPT: usize = 1000;

/// A text from outside, safe to draw: no control sequences, tabs as spaces (a tab would move
/// the terminal's cursor past what the screen buffer thinks); line breaks are kept and drawn
/// as separate lines.
pub fn clean(text: &str) -> String {
    passepartout::terminal::safe(text).replace('\t', "    ")
}

/// A text from outside as one row of a pane: [`clean`], its line breaks as spaces.
pub fn one_row(text: &str) -> String {
    clean(text).replace(['\n', '\r'], " ")
}

/// Who said a line of the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The person at the keyboard.
    You,
    /// The model, its answer passed by the gates.
    Answer,
    /// A tool's output.
    Tool,
    /// A rejection, a failure, a refusal.
    Refused,
    /// Passepartout itself (approvals asked, connection news).
    Note,
}

/// One line of the conversation.
#[derive(Clone, Debug)]
pub struct Said {
    /// Who.
    pub who: Who,
    /// What, safe to draw.
    pub text: String,
}

/// One gate verdict in the trace pane.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The action it was on (its summary), safe to draw.
    pub action: String,
    /// The gate.
    pub gate: String,
    /// `pass`, `reject`, ...
    pub verdict: String,
    /// Why, when it said.
    pub reason: Option<String>,
    /// How long it took, µs.
    pub micros: u64,
    /// Fuel it used, when metered.
    pub fuel: Option<u64>,
    /// The action as a `modify` verdict rewrote it, safe to draw.
    pub rewritten: Option<String>,
    /// Whether it was the last-mile check.
    pub last_mile: bool,
    /// The request it was for.
    pub session: Option<String>,
}

/// The inspect overlay: one approval shown whole, a screen of rows at a time.
#[derive(Debug)]
pub struct Inspect {
    /// The approval's token.
    pub token: String,
    /// The first row shown (drawing keeps it within the rows).
    pub scroll: usize,
    /// What the last key here was told, written over the rows (the overlay hides the
    /// conversation, where it would otherwise go).
    pub note: Option<String>,
    /// What the last draw showed. Set while drawing, the only place that knows the overlay's
    /// size: the keys page by it, and `a` asks whether every row was on screen.
    pub shown: Cell<Shown>,
}

impl Inspect {
    /// The overlay for the approval `token`, at its first row, telling `note`.
    pub fn new(token: String, note: Option<&str>) -> Inspect {
        Inspect {
            token,
            scroll: 0,
            note: note.map(clean),
            shown: Cell::new(Shown::default()),
        }
    }
}

/// What the inspect overlay showed at its last draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// Rows shown at once.
    pub visible: usize,
    /// Rows in all.
    pub total: usize,
    /// Whether those are all the action's rows (else it is too long to approve here).
    pub complete: bool,
    /// The width its rows were cut for.
    pub width: usize,
    /// How many of its first rows have all been on screen, at that width.
    pub read: usize,
}

/// The panes beside the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The gate trace.
    Trace,
    /// Approvals waiting.
    Approvals,
    /// Plugins and their telemetry.
    Plugins,
    /// The journal.
    Journal,
}

impl Pane {
    /// Every pane, in Tab order.
    pub const ALL: [Pane; 4] = [Pane::Trace, Pane::Approvals, Pane::Plugins, Pane::Journal];

    /// Its title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Trace => "gates",
            Pane::Approvals => "approvals",
            Pane::Plugins => "plugins",
            Pane::Journal => "journal",
        }
    }
}

/// What a request the TUI sent was for.
#[derive(Clone, Debug)]
pub enum Sent {
    /// A question.
    Ask(String),
    /// An approval decided here.
    Decide { approve: bool, action: String },
    /// The approvals listed at start.
    Approvals,
    /// A `status` asked for (after each answer: what it cost).
    Status,
    /// Anything whose reply is not shown.
    Quiet,
}

/// Everything the TUI shows.
pub struct App {
    /// The conversation, oldest first.
    pub said: VecDeque<Said>,
    /// What is being typed.
    pub input: String,
    /// The question waiting for its answer, and since when.
    pub waiting: Option<(u64, Instant)>,
    /// How far the model got with that answer, as it streams (never its text).
    pub streamed: Option<Progress>,
    /// Gate verdicts, oldest first.
    pub trace: VecDeque<Verdict>,
    /// Approvals waiting, oldest first.
    pub approvals: Vec<Waiting>,
    /// The selected approval, by token (an index would move to another action when one above
    /// it is decided elsewhere).
    pub selected: Option<String>,
    /// The daemon's last status.
    pub status: Option<Status>,
    /// Tokens this connection's session spent, from the last `status` it asked for.
    pub session_tokens: Option<u64>,
    /// Ask for `status` (an answer came: what it cost).
    pub want_status: bool,
    /// Ask for the pending approvals again (an event's action came cut).
    pub want_approvals: bool,
    /// Journal records as lines, oldest first.
    pub journal: VecDeque<String>,
    /// The journal pane's search (`/`), while typed or applied.
    pub search: Option<String>,
    /// Whether the search is being typed.
    pub searching: bool,
    /// The pane beside the conversation.
    pub pane: Pane,
    /// Rows the plugins pane is scrolled down.
    pub plugins_scroll: u16,
    /// Whether keys go to that pane (else to the input line).
    pub pane_focus: bool,
    /// The help overlay.
    pub help: bool,
    /// An approval's action shown whole.
    pub inspect: Option<Inspect>,
    /// The approval (its token) whose `a` asked to be pressed again: it may already have run.
    pub confirm: Option<String>,
    /// What each request id was for.
    pub sent: HashMap<u64, Sent>,
    /// The subscription's request id.
    pub subscription: Option<u64>,
    /// The daemon, as it named itself.
    pub server: String,
    /// Whether this connection may decide approvals.
    pub approver: bool,
    /// Whether colours are off (`NO_COLOR`).
    pub no_color: bool,
    /// The memory headline (its ID) every question goes with (`/focus ID`).
    pub focus: Option<String>,
    /// That headline as the daemon named it in the last answer about it.
    pub focused: Option<Focus>,
    /// Set to leave.
    pub quit: bool,
}

impl App {
    /// An empty screen for `server`.
    pub fn new(server: &str, approver: bool, no_color: bool) -> App {
        App {
            said: VecDeque::new(),
            input: String::new(),
            waiting: None,
            streamed: None,
            trace: VecDeque::new(),
            approvals: Vec::new(),
            selected: None,
            status: None,
            session_tokens: None,
            want_status: true,
            want_approvals: false,
            journal: VecDeque::new(),
            search: None,
            searching: false,
            pane: Pane::Trace,
            plugins_scroll: 0,
            pane_focus: false,
            help: false,
            inspect: None,
            confirm: None,
            sent: HashMap::new(),
            subscription: None,
            server: clean(server),
            approver,
            no_color,
            focus: None,
            focused: None,
            quit: false,
        }
    }

    /// `/focus ID` (or `/focus` alone, to clear it): the memory headline the next questions
    /// are about. `None` when `text` is not that command.
    pub fn focus_command(&mut self, text: &str) -> Option<()> {
        let rest = text.strip_prefix("/focus")?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        let id = rest.trim();
        self.focused = None;
        if id.is_empty() {
            self.focus = None;
            self.say(
                Who::Note,
                "no focus: questions go without a memory headline",
            );
        } else {
            self.focus = Some(id.to_owned());
            self.say(
                Who::Note,
                &format!(
                    "focus {id}: the model is shown that memory headline with every question \
                     (/focus alone clears it)"
                ),
            );
        }
        Some(())
    }

    /// Tell the person `text`: over the inspect overlay while it is open (it hides the
    /// conversation), else in the conversation.
    pub fn tell(&mut self, text: &str) {
        match &mut self.inspect {
            Some(view) => view.note = Some(clean(text)),
            None => self.say(Who::Note, text),
        }
    }

    /// Add a line to the conversation.
    pub fn say(&mut self, who: Who, text: &str) {
        push(
            &mut self.said,
            Said {
                who,
                text: clean(text),
            },
        );
    }

    /// Take in one frame from the daemon.
    pub fn frame(&mut self, frame: &Value) {
        let id = frame["id"].as_u64();
        if id.is_some() && id == self.subscription {
            if let Ok(event) = serde_json::from_value::<Event>(frame.clone()) {
                self.event(event);
            }
            return;
        }
        let Some(id) = id else {
            // About the connection as a whole: events it lost.
            if let Ok(event @ Event::Dropped { .. }) =
                serde_json::from_value::<Event>(frame.clone())
            {
                self.event(event);
            }
            return;
        };
        let sent = self.sent.get(&id).cloned().unwrap_or(Sent::Quiet);
        match frame["type"].as_str() {
            Some("event") => {
                // An answer to an earlier question (approved since) says which.
                let label = match &sent {
                    Sent::Ask(q) if self.waiting.is_none_or(|(w, _)| w != id) => {
                        format!("[answer to {q:?}] ")
                    }
                    _ => String::new(),
                };
                for event in answer::events(std::slice::from_ref(frame)) {
                    match event {
                        Event::Message { text, told } => {
                            self.message(&format!("{label}{text}"), told);
                        }
                        Event::Model { progress } if self.waiting.is_some_and(|(w, _)| w == id) => {
                            self.streamed = Some(Progress {
                                provider: one_row(&progress.provider),
                                model: one_row(&progress.model),
                                ..progress
                            });
                        }
                        _ => {}
                    }
                }
            }
            Some("reply" | "error") => {
                self.sent.remove(&id);
                if self.waiting.is_some_and(|(w, _)| w == id) {
                    self.waiting = None;
                    self.streamed = None;
                }
                self.reply(frame, &sent);
            }
            _ => {}
        }
    }

    /// A `message` event about a request of ours.
    fn message(&mut self, text: &str, told: Option<Told>) {
        let who = match told {
            None => Who::Answer,
            Some(Told::Ran) => Who::Tool,
            Some(Told::Suspended) => Who::Note,
            Some(_) => Who::Refused,
        };
        self.say(who, text);
    }

    /// The reply to a request of ours.
    fn reply(&mut self, frame: &Value, sent: &Sent) {
        // What it cost shows in the status line.
        self.want_status |= matches!(sent, Sent::Ask(_) | Sent::Decide { .. });
        match sent {
            Sent::Approvals => {
                // Merged: what the subscription said meanwhile stays.
                let listed = frame["result"].as_array().cloned().unwrap_or_default();
                for w in listed.iter().filter_map(waiting_of) {
                    if !self.approvals.iter().any(|a| a.token == w.token) {
                        self.approvals.push(w);
                    }
                }
            }
            Sent::Ask(_) | Sent::Decide { .. } => match answer::read::<Ran>(frame, "a run") {
                Err(e) => {
                    self.say(Who::Refused, &format!("error: {e}"));
                    // The daemon refused the focus itself: questions go without it until the
                    // person sets another.
                    let about_focus = matches!(
                        &e,
                        answer::AnswerError::Refused(r) if r.field.as_deref() == Some("focus")
                    );
                    if matches!(sent, Sent::Ask(_)) && about_focus && self.focus.is_some() {
                        self.focus = None;
                        self.focused = None;
                        self.say(Who::Note, "no focus now: /focus ID sets another");
                    }
                }
                Ok(ran) => {
                    if ran.focus.is_some() {
                        self.focused = ran.focus;
                    }
                    if let Sent::Decide { approve, action } = sent {
                        let what = if *approve { "approved" } else { "denied" };
                        self.say(Who::Note, &format!("{what}: {action}"));
                    }
                    // A question's answer came as `message` events; an approval decided here
                    // has only its steps to say what happened.
                    let decided = matches!(sent, Sent::Decide { .. });
                    for step in ran.steps.0.iter().flatten() {
                        self.outcome(&step.outcome, decided);
                    }
                }
            },
            Sent::Status => {
                if let Ok(status) = answer::read::<Status>(frame, "a status") {
                    self.session_tokens = status.spend.as_ref().and_then(|s| s.session_tokens);
                    self.status = Some(status);
                }
            }
            Sent::Quiet => {}
        }
    }

    /// What a step's `outcome` says that no event said: failures always; the rest only for an
    /// approval `decided` here.
    fn outcome(&mut self, outcome: &StepOutcome, decided: bool) {
        match outcome {
            StepOutcome::Failed { error } => self.say(Who::Refused, &format!("error: {error}")),
            StepOutcome::Dropped { why } => self.say(Who::Refused, &format!("stopped: {why}")),
            _ if !decided => {}
            StepOutcome::Ran { result, .. } => self.say(Who::Tool, result),
            StepOutcome::ToolFailed { tool, message } => {
                self.say(Who::Refused, &format!("{tool} failed: {message}"));
            }
            StepOutcome::Rejected { gate, reason, .. } => {
                self.say(Who::Refused, &format!("rejected by gate {gate}: {reason}"));
            }
            StepOutcome::Suspended { reasons, .. } => {
                self.say(Who::Note, &format!("waits again: {}", reasons.join("; ")));
            }
            StepOutcome::Invalid { reason } => self.say(Who::Refused, reason),
            _ => {}
        }
    }

    /// An event of the subscription.
    fn event(&mut self, event: Event) {
        match event {
            Event::Gate { verdict } => push(
                &mut self.trace,
                Verdict {
                    action: clean(&verdict.action),
                    gate: clean(&verdict.record.gate),
                    verdict: verdict.record.verdict.name().to_owned(),
                    reason: verdict.record.reason.as_deref().map(one_row),
                    micros: verdict.record.micros,
                    fuel: verdict.record.fuel,
                    rewritten: verdict.rewritten.as_deref().map(one_row),
                    last_mile: verdict.last_mile,
                    session: verdict.session,
                },
            ),
            Event::ApprovalRequested {
                token,
                action,
                digest,
                reasons,
                ..
            } => {
                let known = self.approvals.iter().any(|a| a.token == token);
                if !known && whole(&action, &digest) {
                    self.approvals.push(Waiting::new(
                        token,
                        digest,
                        &action,
                        &reasons,
                        Standing::Pending,
                    ));
                } else if !known {
                    // The journal keeps long texts cut, and the event comes from the journal:
                    // this action is not the one the digest names (approving it would approve
                    // what nobody saw). The listing has it whole.
                    self.want_approvals = true;
                }
            }
            Event::ApprovalDecided {
                token, decision, ..
            } => {
                self.approvals.retain(|a| a.token != token);
                if self.selected.as_deref() == Some(token.as_str()) {
                    self.selected = None;
                }
                if self.confirm.as_deref() == Some(token.as_str()) {
                    self.confirm = None;
                }
                // Interrupted (its daemon stopped mid-action), it waits for a person again:
                // the listing has it, as it stands now.
                if decision == "interrupted" {
                    self.want_approvals = true;
                }
            }
            Event::Journal { record } => push(&mut self.journal, one_row(&journal_line(&record))),
            Event::Health { status } => self.status = Some(*status),
            Event::Lagged { topic, missed } => {
                self.say(Who::Note, &format!("{missed} {topic:?} events were missed"));
            }
            Event::Dropped { count, why } => {
                self.say(Who::Note, &format!("{count} events were dropped ({why})"));
            }
            Event::Subscribed { .. }
            | Event::GateTrace { .. }
            | Event::Message { .. }
            | Event::Model { .. } => {}
        }
    }

    /// The index of the selected approval, if one is selected and still waits.
    pub fn selected_index(&self) -> Option<usize> {
        let token = self.selected.as_deref()?;
        self.approvals.iter().position(|a| a.token == token)
    }

    /// Select the approval `by` places after (or before) the selected one; the first when none
    /// is.
    pub fn select(&mut self, by: isize) {
        let i = match self.selected_index() {
            Some(i) => i
                .saturating_add_signed(by)
                .min(self.approvals.len().saturating_sub(1)),
            None => 0,
        };
        self.selected = self.approvals.get(i).map(|a| a.token.clone());
    }

    /// The journal lines the search keeps.
    pub fn journal_shown(&self) -> Vec<&String> {
        let needle = self.search.as_deref().unwrap_or("").to_lowercase();
        self.journal
            .iter()
            .filter(|l| needle.is_empty() || l.to_lowercase().contains(&needle))
            .collect()
    }
}

/// Keep `item` at the end of `list`, dropping the oldest past [`KEPT`].
fn push<T>(list: &mut VecDeque<T>, item: T) {
    if list.len() == KEPT {
        list.pop_front();
    }
    list.push_back(item);
}

/// A journal record as one line: its seq, kind, and what matters of its body.
fn journal_line(record: &passepartout::journal::Record) -> String {
    let b = &record.body;
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let what = match record.kind.as_str() {
        "verdict" => format!(
            "{} {} {}",
            text(&b["gate"]),
            text(&b["verdict"]),
            text(&b["reason"])
        ),
        "proposal" => {
            let a = &b["action"];
            match a["tool"].as_str() {
                Some(tool) => format!("{tool} {}", a["args"]),
                None => format!("to {}: {}", text(&a["target"]), text(&a["text"])),
            }
        }
        "tool-result" => format!(
            "{} {} {}",
            text(&b["tool"]),
            if b["ok"] == true { "ok" } else { "failed" },
            text(&b["result"])
        ),
        "approval-requested" | "approval" | "approval-interrupted" => format!(
            "{} {} {}",
            text(&b["token"]),
            text(&b["decision"]),
            text(&b["by"])
        ),
        _ => b.to_string(),
    };
    format!("{:>5} {:<12} {}", record.seq, record.kind, what.trim())
}

/// An entry of the `approvals` reply.
fn waiting_of(v: &Value) -> Option<Waiting> {
    let p: passepartout::approvals::Pending = serde_json::from_value(v.clone()).ok()?;
    Some(Waiting::new(
        p.token,
        p.digest,
        &p.action,
        &p.reasons,
        Standing::of(&p.state),
    ))
}

/// Whether `action` is, whole, the one `digest` names (sha256 of its JSON, as the daemon
/// stores and binds it).
fn whole(action: &Action, digest: &str) -> bool {
    use sha2::{Digest as _, Sha256};
    serde_json::to_string(action)
        .is_ok_and(|json| hex::encode(Sha256::digest(json.as_bytes())) == digest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The digest the daemon binds `action` to.
    fn digest(action: &serde_json::Value) -> String {
        use sha2::{Digest as _, Sha256};
        let action: Action = serde_json::from_value(action.clone()).expect("an action");
        let json = serde_json::to_string(&action).expect("JSON");
        hex::encode(Sha256::digest(json.as_bytes()))
    }

    #[test]
    fn an_action_the_journal_cut_is_not_shown_as_the_one_its_digest_names() {
        // The event comes from the journal, which keeps texts of up to 16 KiB whole: the
        // tail of a longer one (where a harmful part could hide) is not in it, though the
        // digest names the whole action. One key would approve what nobody saw.
        let mut app = App::new("d", true, true);
        app.subscription = Some(1);
        let whole = json!({ "tool": "write-file", "args": { "content": "x".repeat(20_000) } });
        let cut = json!({ "tool": "write-file", "args": { "content": "x".repeat(16_384) } });
        app.frame(
            &json!({ "type": "event", "id": 1, "event": "approval-requested", "seq": 3,
            "token": "t", "digest": digest(&whole), "reasons": [], "action": cut }),
        );
        assert!(
            app.approvals.is_empty(),
            "the cut action was offered for a decision"
        );
        assert!(
            app.want_approvals,
            "the listing is asked for the whole action"
        );
        app.frame(
            &json!({ "type": "event", "id": 1, "event": "approval-requested", "seq": 4,
            "token": "u", "digest": digest(&whole), "reasons": [], "action": whole }),
        );
        assert_eq!(app.approvals.len(), 1, "a whole action is offered");
    }

    #[test]
    fn text_from_outside_cannot_move_the_cursor() {
        let mut app = App::new("d", true, true);
        app.subscription = Some(1);
        let action = json!({ "tool": "x\u{1b}[31m", "args": {} });
        app.frame(
            &json!({ "type": "event", "id": 1, "event": "approval-requested", "seq": 3,
            "token": "t", "digest": digest(&action), "reasons": ["\u{1b}[2J\u{1b}[Hfake approval"],
            "action": action }),
        );
        let drawn = format!(
            "{:?}{:?}",
            app.approvals[0].reasons, app.approvals[0].action
        );
        assert!(!drawn.contains('\u{1b}'), "{drawn}");
        app.frame(
            &json!({ "type": "event", "id": 1, "event": "approval-decided", "seq": 4,
            "token": "t", "decision": "approved" }),
        );
        assert!(app.approvals.is_empty(), "decided elsewhere: gone");
        assert!(!app.want_approvals, "nothing more to list");
        app.frame(
            &json!({ "type": "event", "id": 1, "event": "approval-decided", "seq": 5,
            "token": "t", "decision": "interrupted" }),
        );
        assert!(
            app.want_approvals,
            "an interrupted approval waits again: the listing is asked for"
        );
        assert_eq!(clean("a\tb"), "a    b", "a tab would move the cursor");
    }

    #[test]
    fn events_the_daemon_dropped_are_said() {
        let mut app = App::new("d", true, true);
        let notice = Event::Dropped {
            count: 7,
            why: "slow\u{1b}[2J".into(),
        }
        .notice();
        assert!(notice.get("id").is_none(), "{notice}");
        app.frame(&notice);
        let said: Vec<&str> = app.said.iter().map(|s| s.text.as_str()).collect();
        assert!(
            said.iter().any(|t| t.contains("7 events were dropped")),
            "{said:?}"
        );
        assert!(said.iter().all(|t| !t.contains('\u{1b}')), "{said:?}");
    }
}
