//! The prompt's LOGS section: recent lines of what the pipeline did (a gate's rejection, a
//! tool that failed, a rollback), kept apart for each client session. A line may quote what a
//! model proposed or a tool answered; shown to another session's model, it would tell that
//! session what this one did, and could steer it. The daemon's own signals (heartbeats, each
//! a token-budget session of its own) share one scope, and one-shot commands theirs.

use std::collections::VecDeque;

use crate::signal::Meta;

/// The scope of the lines about a signal from `whose`: its client session, or `None` for the
/// daemon's own signals (source `daemon`, which only the daemon sets) and one-shot commands.
pub(super) fn scope(whose: &Meta) -> Option<&str> {
    if whose.source.as_deref() == Some("daemon") {
        return None;
    }
    whose.client.as_deref()
}

/// Lines kept for each scope.
pub(super) const LOG_LINES: usize = 20;

/// Scopes kept: past it, the one written longest ago is forgotten, so that clients coming and
/// going cannot grow the daemon.
pub(super) const LOG_SCOPES: usize = 256;

/// Recent lines, by the client session they came from (`None`: no client session).
#[derive(Debug, Default)]
pub(super) struct Logs {
    /// Oldest written first.
    scopes: VecDeque<(Option<String>, VecDeque<String>)>,
}

impl Logs {
    /// Keep `line` for `scope`.
    pub(super) fn push(&mut self, scope: Option<&str>, line: String) {
        let mut lines = match self.scopes.iter().position(|(s, _)| s.as_deref() == scope) {
            Some(at) => self.scopes.remove(at).map(|(_, l)| l).unwrap_or_default(),
            None => VecDeque::new(),
        };
        if lines.len() == LOG_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
        if self.scopes.len() == LOG_SCOPES {
            self.scopes.pop_front();
        }
        self.scopes.push_back((scope.map(str::to_owned), lines));
    }

    /// The lines kept for `scope`, oldest first.
    pub(super) fn recent(&self, scope: Option<&str>) -> Vec<String> {
        self.scopes
            .iter()
            .find(|(s, _)| s.as_deref() == scope)
            .map(|(_, l)| l.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scope_sees_its_own_lines_and_the_scopes_kept_are_bounded() {
        let mut logs = Logs::default();
        logs.push(Some("a"), "gate g rejected SECRET-A".into());
        logs.push(None, "heartbeat".into());
        assert_eq!(logs.recent(Some("a")), ["gate g rejected SECRET-A"]);
        assert!(logs.recent(Some("b")).is_empty(), "b sees nothing of a");
        assert_eq!(logs.recent(None), ["heartbeat"]);
        for n in 0..LOG_LINES + 3 {
            logs.push(Some("a"), format!("{n}"));
        }
        assert_eq!(logs.recent(Some("a")).len(), LOG_LINES);
        for n in 0..LOG_SCOPES {
            logs.push(Some(&format!("client {n}")), "x".into());
        }
        assert_eq!(logs.scopes.len(), LOG_SCOPES);
        assert!(logs.recent(Some("a")).is_empty(), "the oldest is forgotten");
        assert_eq!(logs.recent(Some("client 0")), ["x"]);
    }
}
