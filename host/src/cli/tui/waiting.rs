//! One approval waiting, as the approvals pane and `inspect` show it. What is drawn is what
//! runs: each argument as JSON (a string quoted, its line breaks written `\n`), and the state a
//! listed approval is in written out in words (an interrupted one may already have run). Its
//! texts are made once, when the approval arrives, and cut into rows once per width: a
//! megabyte of arguments costs one cut, not one a frame.

use std::cell::Cell;
use std::sync::Arc;

use passepartout::signal::Action;
use serde_json::Value;

use super::rows::{self, Cached, Rows, Tone};
use super::state::{clean, one_row};

/// Characters kept of an action's one-line name (in the notes "approving …").
const NAME_CHARS: usize = 200;

/// Where an approval stands, as the daemon lists it (`Pending::state`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Waiting for its first decision.
    Pending,
    /// Approved, but the daemon stopped before it finished: it may already have taken effect.
    Interrupted,
    /// Approved, and maybe still running in a process no one can name: the daemon never runs
    /// it again; denying it clears it.
    Running,
    /// A state this TUI does not know, as the daemon named it (made safe to draw).
    Other(String),
}

impl Standing {
    /// The standing a listed approval's `state` names.
    pub fn of(state: &str) -> Standing {
        match state {
            "pending" => Standing::Pending,
            "interrupted" => Standing::Interrupted,
            "running" => Standing::Running,
            other => Standing::Other(one_row(other)),
        }
    }

    /// What is written above the action, in words (a colour alone is lost under `NO_COLOR`);
    /// none for an approval waiting for its first decision.
    pub fn label(&self) -> Option<String> {
        match self {
            Standing::Pending => None,
            Standing::Interrupted => Some(
                "INTERRUPTED: may already have run (approved, then the daemon stopped); \
                 a twice runs it again"
                    .into(),
            ),
            Standing::Running => {
                Some("RUNNING? may still be running elsewhere; never run again: d clears it".into())
            }
            Standing::Other(state) => Some(format!(
                "{}: see `passepartout approvals`; a twice approves it",
                state.to_uppercase()
            )),
        }
    }
}

/// One approval waiting.
#[derive(Clone, Debug)]
pub struct Waiting {
    /// Its token.
    pub token: String,
    /// The digest shown (what a decision names).
    pub digest: String,
    /// The action as one line, its first [`NAME_CHARS`] characters, safe to draw.
    pub action: String,
    /// Where it stands.
    pub standing: Standing,
    /// The action as the pane shows it: the tool, then each argument as `name: JSON`.
    pub lines: Vec<String>,
    /// The action as pretty JSON, for `inspect`.
    pub json: String,
    /// Why the gates asked.
    pub reasons: Vec<String>,
    /// Whether all of it has been drawn: its pane item whole (not cut) while selected, or
    /// every row of `inspect` from the first to the last. Only then does `a` approve it. Set
    /// while drawing, the only place that knows what the screen showed.
    pub seen: Cell<bool>,
    /// Its pane item's rows, as last cut.
    item: Cached,
    /// Its `inspect` rows, as last cut.
    whole: Cached,
}

impl Waiting {
    /// The approval `token` of `action`, standing as `standing`, as the pane shows it (text
    /// from outside made safe to draw).
    pub fn new(
        token: String,
        digest: String,
        action: &Action,
        reasons: &[String],
        standing: Standing,
    ) -> Waiting {
        let json = serde_json::to_string_pretty(action).unwrap_or_default();
        Waiting {
            token,
            digest,
            action: one_row(&name(action)),
            standing,
            lines: shown_lines(action),
            json: clean(&json),
            reasons: reasons.iter().map(|r| clean(r)).collect(),
            seen: Cell::new(false),
            item: Cached::default(),
            whole: Cached::default(),
        }
    }

    /// Its pane item at `width` columns: its standing, the action, why the gates asked; up to
    /// [`rows::MAX_ROWS`] rows (the pane draws the first few and counts the rest).
    pub fn item_rows(&self, width: usize) -> Arc<Rows> {
        self.item.get(width, || {
            let label = self.standing.label();
            let why: Vec<String> = self.reasons.iter().map(|r| format!("why: {r}")).collect();
            let lines = label
                .iter()
                .map(|l| (Tone::Warn, l.as_str()))
                .chain(self.lines.iter().map(|l| (Tone::Plain, l.as_str())))
                .chain(why.iter().map(|w| (Tone::Why, w.as_str())));
            rows::wrap(lines, width, rows::MAX_ROWS)
        })
    }

    /// All of it at `width` columns, for `inspect`: its standing, the action as pretty JSON,
    /// why the gates asked, its digest and token. Past [`rows::MAX_ROWS`] the rest is left off
    /// and the last rows say where to read it whole (it cannot be approved here then).
    pub fn whole_rows(&self, width: usize) -> Arc<Rows> {
        self.whole.get(width, || {
            let label = self.standing.label();
            let foot = format!(
                "digest {}\ntoken {}",
                one_row(&self.digest),
                one_row(&self.token)
            );
            let mut parts: Vec<(Tone, &str)> = Vec::new();
            if let Some(label) = &label {
                parts.push((Tone::Warn, label.as_str()));
                parts.push((Tone::Plain, ""));
            }
            parts.push((Tone::Plain, self.json.as_str()));
            parts.push((Tone::Plain, ""));
            parts.push((Tone::Plain, "why:"));
            parts.extend(self.reasons.iter().map(|r| (Tone::Why, r.as_str())));
            parts.push((Tone::Plain, ""));
            parts.push((Tone::Plain, foot.as_str()));
            let mut cut = rows::wrap(parts, width, rows::MAX_ROWS);
            if !cut.complete {
                let note = format!(
                    "… cut here: it is longer than {} rows, too long to approve here. \
                     `passepartout approvals` shows it whole; `passepartout approve {}` \
                     (or `deny`) decides it.",
                    rows::MAX_ROWS,
                    one_row(&self.token)
                );
                let note = rows::wrap([(Tone::Warn, note.as_str())], width, 20);
                cut.rows.extend(note.rows);
            }
            cut
        })
    }
}

/// An action as one line (`tool ARGS`, or its text), cut to [`NAME_CHARS`] characters.
fn name(action: &Action) -> String {
    let whole = match &action.tool {
        Some(tool) => format!("{tool} {}", Value::Object(action.args.clone())),
        None => action.text.clone().unwrap_or_default(),
    };
    match whole.char_indices().nth(NAME_CHARS) {
        Some((at, _)) => format!("{}…", &whole[..at]),
        None => whole,
    }
}

/// An action as the approvals pane lists it: the tool, then `name: value` for each argument,
/// the value as JSON (a string quoted and escaped: a line break shows as `\n`, as it runs);
/// an action without a tool as its target and its text, quoted the same way.
fn shown_lines(action: &Action) -> Vec<String> {
    use passepartout::terminal::one_line;
    let Some(tool) = &action.tool else {
        let text = Value::String(action.text.clone().unwrap_or_default());
        let line = if action.target.is_empty() {
            text.to_string()
        } else {
            format!("to {}: {text}", one_line(&action.target))
        };
        return vec![one_row(&line)];
    };
    let mut lines = vec![one_row(&one_line(tool))];
    for (name, value) in &action.args {
        lines.push(one_row(&format!("  {}: {value}", one_line(name))));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn action(v: Value) -> Action {
        serde_json::from_value(v).expect("an action")
    }

    #[test]
    fn a_string_argument_shows_quoted_with_its_line_breaks_written_out() {
        let a = action(json!({ "tool": "shell", "args": { "cmd": "echo hi\nrm -rf ~" } }));
        let w = Waiting::new("t".into(), "d".into(), &a, &[], Standing::Pending);
        assert_eq!(w.lines, ["shell", r#"  cmd: "echo hi\nrm -rf ~""#]);
        assert!(w.standing.label().is_none());
    }

    #[test]
    fn a_megabyte_argument_is_made_once_and_cut_once_per_width() {
        let a = action(json!({ "tool": "write-file", "args": { "content": "x".repeat(1 << 20) } }));
        let started = std::time::Instant::now();
        let w = Waiting::new("t".into(), "d".into(), &a, &[], Standing::Pending);
        assert!(
            w.action.chars().count() <= NAME_CHARS + 1,
            "the name is cut"
        );
        let item = w.item_rows(32);
        assert!(!item.complete, "past the bound: left off");
        assert_eq!(item.rows.len(), rows::MAX_ROWS);
        let whole = w.whole_rows(70);
        assert!(!whole.complete);
        let tail: Vec<&str> = whole
            .rows
            .iter()
            .rev()
            .take(8)
            .map(|(_, r)| r.as_str())
            .collect();
        let tail: String = tail.into_iter().rev().collect();
        assert!(tail.contains("too long to approve here"), "{tail}");
        // The next frame reuses the cut.
        assert!(Arc::ptr_eq(&item, &w.item_rows(32)));
        assert!(Arc::ptr_eq(&whole, &w.whole_rows(70)));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }
}
