//! The keys of `passepartout tui`. A key changes the [`App`] and may ask for a request to be
//! sent, which the main loop sends: the keys are tested without a daemon.
//!
//! One key decides an approval, so `a` approves only what the person was shown whole: an item
//! cut in the pane opens in `inspect`, to be read down to its end first; an approval that may
//! already have run (interrupted) asks for a second `a`; one that may still be running is
//! never approved here.

use crossterm::event::{KeyCode, KeyModifiers};
use passepartout::daemon::request::Request;

use super::state::{App, Inspect, Pane, Sent, Who};
use super::waiting::Standing;

/// One key, `code` with `mods`: the request it asks to send, and what that is for.
pub fn key(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Option<(Request, Sent)> {
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(code, KeyCode::Char('q' | 'c')) {
        app.quit = true;
        return None;
    }
    // Alt- and Ctrl- combinations are neither text nor the keys of a pane.
    let plain = !mods.intersects(KeyModifiers::ALT | KeyModifiers::CONTROL);
    // Only a second `a`, right after the first, confirms an approval that may already have
    // run; any other key leaves it.
    if !(plain && code == KeyCode::Char('a')) {
        app.confirm = None;
    }
    if app.inspect.is_some() {
        return if plain { inspect_key(app, code) } else { None };
    }
    if app.help {
        if matches!(code, KeyCode::Esc | KeyCode::Char('q' | '?')) {
            app.help = false;
        }
        return None;
    }
    if app.searching {
        let search = app.search.get_or_insert_with(String::new);
        match code {
            KeyCode::Enter => app.searching = false,
            KeyCode::Esc => {
                app.search = None;
                app.searching = false;
            }
            KeyCode::Backspace => {
                search.pop();
            }
            KeyCode::Char(c) if plain => search.push(c),
            _ => {}
        }
        return None;
    }
    match code {
        KeyCode::Tab => {
            let i = Pane::ALL.iter().position(|p| *p == app.pane).unwrap_or(0);
            app.pane = Pane::ALL[(i + 1) % Pane::ALL.len()];
        }
        KeyCode::BackTab => {
            let i = Pane::ALL.iter().position(|p| *p == app.pane).unwrap_or(0);
            app.pane = Pane::ALL[(i + Pane::ALL.len() - 1) % Pane::ALL.len()];
        }
        KeyCode::Esc => app.pane_focus = !app.pane_focus,
        _ if app.pane_focus => return if plain { pane_key(app, code) } else { None },
        KeyCode::Char('?') if app.input.is_empty() => app.help = true,
        KeyCode::Enter => {
            let text = app.input.trim().to_owned();
            app.input.clear();
            if !text.is_empty() && app.focus_command(&text).is_none() {
                app.say(Who::You, &text);
                let ask = Request::Ask {
                    text: text.clone(),
                    focus: app.focus.clone(),
                };
                return Some((ask, Sent::Ask(text)));
            }
        }
        KeyCode::Backspace => {
            app.input.pop();
        }
        KeyCode::Char(c) if plain => app.input.push(c),
        _ => {}
    }
    None
}

/// A key for the pane beside the conversation.
fn pane_key(app: &mut App, code: KeyCode) -> Option<(Request, Sent)> {
    match code {
        KeyCode::Char('q') => app.quit = true,
        KeyCode::Char('?') => app.help = true,
        KeyCode::Up if app.pane == Pane::Plugins => {
            app.plugins_scroll = app.plugins_scroll.saturating_sub(1);
        }
        KeyCode::Down if app.pane == Pane::Plugins => {
            app.plugins_scroll = app.plugins_scroll.saturating_add(1);
        }
        KeyCode::Up => app.select(-1),
        KeyCode::Down => app.select(1),
        KeyCode::Char('/') if app.pane == Pane::Journal => {
            app.search = Some(String::new());
            app.searching = true;
        }
        KeyCode::Char('i') if app.pane == Pane::Approvals => {
            if let Some(token) = selected_token(app) {
                app.inspect = Some(Inspect::new(token, None));
            }
        }
        KeyCode::Char(c @ ('a' | 'd')) if app.pane == Pane::Approvals => {
            // Only the approval the person selected (and saw), never one that slid into place.
            let Some(token) = selected_token(app) else {
                app.say(Who::Note, "select an approval first (↑ ↓)");
                return None;
            };
            return decide(app, &token, c == 'a');
        }
        _ => {}
    }
    None
}

/// A key in the inspect overlay: scroll, decide, or close.
fn inspect_key(app: &mut App, code: KeyCode) -> Option<(Request, Sent)> {
    let view = app.inspect.as_mut()?;
    let shown = view.shown.get();
    let page = shown.visible.max(1);
    let end = shown.total.saturating_sub(shown.visible);
    match code {
        KeyCode::Esc | KeyCode::Char('q' | 'i' | '?') => app.inspect = None,
        KeyCode::Up => view.scroll = view.scroll.saturating_sub(1),
        KeyCode::Down => view.scroll = view.scroll.saturating_add(1).min(end),
        KeyCode::PageUp => view.scroll = view.scroll.saturating_sub(page),
        KeyCode::PageDown => view.scroll = view.scroll.saturating_add(page).min(end),
        KeyCode::Home => view.scroll = 0,
        KeyCode::End => view.scroll = end,
        KeyCode::Char(c @ ('a' | 'd')) => {
            let token = view.token.clone();
            return decide(app, &token, c == 'a');
        }
        _ => {}
    }
    None
}

/// The selected approval's token, if one is selected and still waits.
fn selected_token(app: &App) -> Option<String> {
    app.selected_index()
        .and_then(|i| app.approvals.get(i))
        .map(|a| a.token.clone())
}

/// Approve (or deny) the approval `token`: the request, once it may be sent.
///
/// Denying is always allowed. Approving waits until all of the action was drawn (else it
/// opens in `inspect`, or says how much is left to read there), and, for one that may already
/// have run, for a second `a`; one that may still be running is never approved here.
fn decide(app: &mut App, token: &str, approve: bool) -> Option<(Request, Sent)> {
    let confirmed = app.confirm.take().is_some_and(|t| t == token);
    let Some(a) = app.approvals.iter().find(|a| a.token == token) else {
        app.tell("it no longer waits: it was decided elsewhere");
        return None;
    };
    let (standing, seen) = (a.standing.clone(), a.seen.get());
    let (digest, action) = (a.digest.clone(), a.action.clone());
    if approve {
        if standing == Standing::Running {
            app.tell(
                "not approved: it may still be running elsewhere, and is never run again; \
                 d denies it, to clear it",
            );
            return None;
        }
        if !seen {
            unread(app, token);
            return None;
        }
        if standing != Standing::Pending && !confirmed {
            app.confirm = Some(token.to_owned());
            app.tell(
                "INTERRUPTED: it may already have run. Press a again to run it again, \
                 any other key to leave it",
            );
            return None;
        }
    }
    let request = if approve {
        Request::Approve {
            token: token.to_owned(),
            digest,
        }
    } else {
        Request::Deny {
            token: token.to_owned(),
            digest,
        }
    };
    app.inspect = None;
    let doing = if approve { "approving" } else { "denying" };
    app.say(Who::Note, &format!("{doing} {action}"));
    Some((request, Sent::Decide { approve, action }))
}

/// `a` on the approval `token`, not yet drawn whole: it opens in `inspect`, or, open there
/// already, the person is told what is left to read.
fn unread(app: &mut App, token: &str) {
    let open = app.inspect.as_ref().filter(|v| v.token == token);
    let Some(view) = open else {
        app.inspect = Some(Inspect::new(
            token.to_owned(),
            Some(
                "not approved yet: it did not fit in the pane. Read it down to its end \
                 (↓ PgDn), then a approves it",
            ),
        ));
        return;
    };
    let shown = view.shown.get();
    let note = if shown.complete {
        format!(
            "not approved: rows {}–{} were not shown yet. Read down to its end (↓ PgDn), \
             then a approves it",
            shown.read + 1,
            shown.total
        )
    } else {
        "not approved: too long to read here. `passepartout approvals` shows it whole, \
         `passepartout approve TOKEN` decides it"
            .to_owned()
    };
    app.tell(&note);
}

#[cfg(test)]
mod tests {
    use passepartout::approvals::Pending;
    use passepartout::signal::{Action, Signal};
    use serde_json::json;

    use super::super::view::screen;
    use super::*;

    /// An app listing one approval of `action`, standing as `state`, selected in the focused
    /// approvals pane.
    fn listing(action: serde_json::Value, state: &str) -> App {
        let mut app = App::new("d", true, true);
        let action: Action = serde_json::from_value(action).expect("an action");
        let pending = Pending {
            token: "tok-1".into(),
            action,
            digest: "digest-1".into(),
            signal: Signal::event("test", None, None),
            reasons: vec!["the test asks".into()],
            expires_at: 0.0,
            state: state.into(),
            tool: None,
        };
        app.sent.insert(5, Sent::Approvals);
        app.frame(&json!({ "type": "reply", "id": 5, "ok": true,
            "result": [serde_json::to_value(&pending).expect("JSON")] }));
        assert_eq!(app.approvals.len(), 1, "listed");
        app.pane = Pane::Approvals;
        app.pane_focus = true;
        app.select(1);
        app
    }

    /// Press `code`, as the main loop does: drawn first, then the key.
    fn press(app: &mut App, code: KeyCode) -> (String, Option<(Request, Sent)>) {
        let before = screen(app);
        (before, key(app, code, KeyModifiers::NONE))
    }

    fn approves(out: &Option<(Request, Sent)>) -> bool {
        matches!(out, Some((Request::Approve { .. }, _)))
    }

    #[test]
    fn an_action_taller_than_the_pane_is_shown_cut_and_approved_only_once_read_to_its_end() {
        // 5 KB of arguments: some 160 rows in an 80×24 pane, the end far out of view.
        let content = format!("{}END-MARK", "word ".repeat(1000));
        let mut app = listing(
            json!({ "tool": "write-file", "args": { "path": "/tmp/x", "content": content } }),
            "pending",
        );
        let shown = screen(&app);
        // Drawn, not blank: its first rows and how much more there is.
        assert!(shown.contains("> write-file"), "{shown}");
        assert!(shown.contains(r#"content: "word word"#), "{shown}");
        assert!(shown.contains("more rows: press i to"), "{shown}");
        assert!(!shown.contains("END-MARK"), "{shown}");
        // `a` does not approve what was not shown: it opens the action whole.
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(out.is_none(), "approved unread: {out:?}");
        let shown = screen(&app);
        assert!(shown.contains("inspect (Esc to close)"), "{shown}");
        assert!(shown.contains("Read it down to its end"), "{shown}");
        assert!(shown.contains("rows 1–"), "{shown}");
        // Its end, straight away: END-MARK is on screen, but the rows between were not.
        press(&mut app, KeyCode::End);
        let shown = screen(&app);
        assert!(shown.contains("END-MARK"), "{shown}");
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(out.is_none(), "approved with rows unread: {out:?}");
        assert!(screen(&app).contains("were not shown yet"));
        // Read from the top, a page at a time: then `a` approves it, by its digest.
        press(&mut app, KeyCode::Home);
        for _ in 0..100 {
            press(&mut app, KeyCode::PageDown);
        }
        let (shown, out) = press(&mut app, KeyCode::Char('a'));
        assert!(shown.contains("END-MARK"), "{shown}");
        match out {
            Some((Request::Approve { token, digest }, Sent::Decide { approve: true, .. })) => {
                assert_eq!((token.as_str(), digest.as_str()), ("tok-1", "digest-1"));
            }
            other => panic!("not approved once read: {other:?}"),
        }
        assert!(app.inspect.is_none(), "closed once decided");
    }

    #[test]
    fn inspect_scrolls_and_says_which_rows_it_shows() {
        let content = format!("{}END-MARK", "word ".repeat(1000));
        let mut app = listing(
            json!({ "tool": "write-file", "args": { "content": content } }),
            "pending",
        );
        press(&mut app, KeyCode::Char('i'));
        let top = screen(&app);
        assert!(top.contains("rows 1–"), "{top}");
        press(&mut app, KeyCode::Down);
        assert!(screen(&app).contains("rows 2–"));
        press(&mut app, KeyCode::Up);
        press(&mut app, KeyCode::Up);
        assert!(screen(&app).contains("rows 1–"), "no row above the first");
        press(&mut app, KeyCode::Esc);
        assert!(app.inspect.is_none());
    }

    #[test]
    fn an_interrupted_approval_says_so_and_asks_for_a_second_a() {
        let mut app = listing(
            json!({ "tool": "shell", "args": { "cmd": "make release" } }),
            "interrupted",
        );
        let shown = screen(&app);
        assert!(shown.contains("INTERRUPTED: may already have"), "{shown}");
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(!approves(&out), "one key re-ran it: {out:?}");
        assert_eq!(app.confirm.as_deref(), Some("tok-1"));
        let shown = screen(&app);
        assert!(shown.contains("a again"), "{shown}");
        // Any other key leaves it; the next `a` asks again.
        press(&mut app, KeyCode::Down);
        assert!(app.confirm.is_none());
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(!approves(&out), "{out:?}");
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(approves(&out), "a second a runs it again: {out:?}");
    }

    #[test]
    fn an_approval_that_may_still_be_running_is_never_approved_here() {
        let mut app = listing(json!({ "tool": "shell", "args": {} }), "running");
        assert!(screen(&app).contains("RUNNING?"));
        for _ in 0..3 {
            let (_, out) = press(&mut app, KeyCode::Char('a'));
            assert!(!approves(&out), "{out:?}");
        }
        let (_, out) = press(&mut app, KeyCode::Char('d'));
        assert!(matches!(out, Some((Request::Deny { .. }, _))), "{out:?}");
    }

    #[test]
    fn a_fresh_approval_drawn_whole_is_approved_with_one_key_and_only_in_the_pane() {
        let mut app = listing(
            json!({ "tool": "shell", "args": { "cmd": "echo hi\nrm -rf ~" } }),
            "pending",
        );
        let shown = screen(&app);
        // What runs, as it runs: the line break written out, not a space.
        assert!(shown.contains(r#"cmd: "echo hi\nrm -rf ~""#), "{shown}");
        // The keys go to the pane: it says so in words, not only in colour.
        assert!(shown.contains("keys here"), "{shown}");
        let (_, out) = press(&mut app, KeyCode::Char('a'));
        assert!(approves(&out), "{out:?}");
        // Typed in the input line, `a` is text.
        let mut app = listing(json!({ "tool": "shell", "args": {} }), "pending");
        app.pane_focus = false;
        let (shown, out) = press(&mut app, KeyCode::Char('a'));
        assert!(out.is_none());
        assert_eq!(app.input, "a");
        assert!(!shown.contains("keys here: "), "{shown}");
    }
}
