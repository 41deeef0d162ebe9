//! Drawing [`App`]: a status line; the conversation with the input line under it; beside it
//! one of the gate trace, the approvals, the plugins and the journal (Tab); the keys at the
//! bottom; the help and inspect overlays on top. Fits 80×24; colours off with `NO_COLOR`, so
//! whatever a colour says (where the keys go, an approval's state) is said in words too.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Clear, List, ListItem, ListState, Paragraph, Wrap};

use super::rows::{self, Tone};
use super::state::{App, Inspect, Pane, Shown, Who, one_row};

/// Rows of an approval drawn in the pane at most; past them, a row says how many more there
/// are and the action is read whole in `inspect`.
const ITEM_ROWS: usize = 8;

/// A style, or none with `NO_COLOR`.
fn colour(app: &App, c: Color) -> Style {
    if app.no_color {
        Style::default()
    } else {
        Style::default().fg(c)
    }
}

/// Draw everything.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let [top, middle, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(status_line(app)), top);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
    conversation(frame, app, left);
    match app.pane {
        Pane::Trace => trace(frame, app, right),
        Pane::Approvals => approvals(frame, app, right),
        Pane::Plugins => plugins(frame, app, right),
        Pane::Journal => journal(frame, app, right),
    }
    let hint = if app.confirm.is_some() {
        "a again: run the INTERRUPTED action again  any other key: leave it"
    } else if app.inspect.is_some() {
        "↑↓ PgUp PgDn Home End: scroll  a: approve, once read to its end  d: deny  Esc"
    } else if app.pane_focus {
        "Esc: type  Tab: pane  ↑↓: select  a/d: approve/deny  i: inspect  /: search  ?: help"
    } else {
        "Enter: ask  Esc: to the pane  Tab: next pane  ?: help  Ctrl-Q: quit"
    };
    frame.render_widget(
        Paragraph::new(hint).style(colour(app, Color::DarkGray)),
        keys,
    );
    if let Some(view) = &app.inspect {
        inspect(frame, app, view);
    } else if app.help {
        overlay(frame, "help (Esc to close)", HELP);
    }
}

const HELP: &str = "\
Type a question, then Enter: the answer shows once gates passed it.
Tab cycles the pane on the right: gates, approvals, plugins, journal.
Esc moves the keys between the input line and that pane.
/focus ID: questions go with memory headline ID (/focus alone: none).

In the pane (its foot then says: keys here):
  ↑ ↓   select an approval
  a     approve it, once all of it was shown: one cut in the pane
        opens in inspect, to be read to its end first; an INTERRUPTED
        one (it may already have run) asks for a second a
  d     deny it
  i     inspect: the action whole (↑ ↓ PgUp PgDn Home End; a, d)
  /     search the journal (Enter to keep, Esc to clear)
  q     quit

Anywhere: Ctrl-Q or Ctrl-C quits and restores the terminal.";

/// The top line: the daemon, its health, approvals waiting, the model, plugins (what matters
/// most first: at 80 columns the end may not fit).
fn status_line(app: &App) -> Line<'static> {
    let mut spans = vec![Span::styled(
        format!(" {} ", app.server),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    let Some(s) = &app.status else {
        spans.push(Span::raw(" connecting…"));
        return Line::from(spans);
    };
    let health = match s.health.as_str() {
        "healthy" => colour(app, Color::Green),
        "loading" => colour(app, Color::Yellow),
        _ => colour(app, Color::Red),
    };
    spans.push(Span::styled(format!("[{}]", one_row(&s.health)), health));
    // A client-key connection is not told of approvals one by one: the daemon's count.
    let pending = if app.approver {
        app.approvals.len()
    } else {
        s.pending_approvals
    };
    spans.push(Span::styled(
        format!(" approvals {pending}"),
        if pending == 0 {
            Style::default()
        } else {
            colour(app, Color::Yellow)
        },
    ));
    // The seeds' foveal line: what the questions are about, as the daemon last named it.
    match (&app.focus, &app.focused) {
        (Some(id), Some(f)) if *id == f.id => spans.push(Span::styled(
            format!(
                " · focus {}{}",
                f.todo
                    .as_deref()
                    .map(|t| format!("{} ", one_row(t)))
                    .unwrap_or_default(),
                one_row(&f.title)
            ),
            colour(app, Color::Cyan),
        )),
        (Some(id), _) => spans.push(Span::raw(format!(" · focus {}?", one_row(id)))),
        (None, _) => {}
    }
    if let Some(p) = s.providers.first() {
        spans.push(Span::raw(format!(
            " · model {} ({})",
            one_row(&p.provider),
            one_row(&p.state)
        )));
    }
    // Before the plugins: on a narrow terminal what it costs matters more.
    if let Some(spend) = &s.spend {
        spans.push(Span::raw(spend_text(spend, app.session_tokens)));
    }
    let failing = s
        .plugins
        .iter()
        .filter(|p| p.telemetry.failures > 0)
        .count();
    spans.push(Span::raw(format!(" · plugins {}", s.plugins.len())));
    let disabled = s.not_loaded.iter().filter(|n| n.disabled).count();
    let failed = s.not_loaded.len() - disabled;
    if disabled > 0 {
        spans.push(Span::raw(format!(", {disabled} disabled")));
    }
    if failed > 0 {
        spans.push(Span::styled(
            format!(", {failed} failed to load"),
            colour(app, Color::Red),
        ));
    }
    if failing > 0 {
        spans.push(Span::styled(
            format!(", {failing} failing"),
            colour(app, Color::Yellow),
        ));
    }
    if !s.missing_gates.is_empty() {
        spans.push(Span::styled(
            format!(", {} gate(s) missing", s.missing_gates.len()),
            colour(app, Color::Red),
        ));
    }
    Line::from(spans)
}

/// ` · $0.0123 of $5.00 today · 1.2k of 200k tokens`: what was spent and what is left.
fn spend_text(
    spend: &passepartout::providers::budget::SpendStatus,
    session: Option<u64>,
) -> String {
    let tokens = qty;
    let mut out = format!(" · ${:.4}", spend.today_usd);
    if let Some(limit) = spend.daily_limit_usd {
        out.push_str(&format!(" of ${limit:.2}"));
    }
    out.push_str(" today");
    match (session, spend.session_limit) {
        (Some(used), Some(limit)) => {
            out.push_str(&format!(" · {} of {} tokens", tokens(used), tokens(limit)));
        }
        (Some(used), None) => out.push_str(&format!(" · {} tokens", tokens(used))),
        (None, Some(limit)) => out.push_str(&format!(" · {} tokens a session", tokens(limit))),
        (None, None) => {}
    }
    out
}

/// The conversation and, under it, the input line.
/// Columns of the speaker's label before each row of the conversation.
const GUTTER: u16 = 8;

fn conversation(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let [talk, input] = Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(area);
    // Cut here, not by the paragraph: every row of a text, wrapped ones too, starts under the
    // speaker's column, so a model's long line cannot wrap into a row that reads as a `note`.
    let width = usize::from(talk.width.saturating_sub(2 + GUTTER)).max(1);
    let lines: Vec<Line<'_>> = app
        .said
        .iter()
        .flat_map(|s| {
            let (who, c) = match s.who {
                Who::You => ("you", Color::Cyan),
                Who::Answer => ("answer", Color::White),
                Who::Tool => ("tool", Color::Blue),
                Who::Refused => ("refused", Color::Red),
                Who::Note => ("note", Color::Yellow),
            };
            let cut = rows::wrap([(Tone::Plain, s.text.as_str())], width, rows::MAX_ROWS);
            cut.rows.into_iter().enumerate().map(move |(i, (_, text))| {
                let label = if i == 0 { who } else { "" };
                Line::from(vec![
                    Span::styled(format!("{label:>7} "), colour(app, c)),
                    Span::raw(text),
                ])
            })
        })
        .collect();
    let rows = lines.len();
    let talk_text = Paragraph::new(Text::from(lines));
    // Scroll to the end: the newest rows stay in view.
    let visible = talk.height.saturating_sub(2) as usize;
    let scroll = u16::try_from(rows.saturating_sub(visible)).unwrap_or(u16::MAX);
    frame.render_widget(
        talk_text
            .scroll((scroll, 0))
            .block(Block::bordered().title(" conversation ")),
        talk,
    );
    let title = match (app.waiting, &app.streamed) {
        (Some((_, since)), Some(p)) => format!(
            " {} writing: {} tokens, {}s (gates check it before it shows) ",
            p.provider,
            p.tokens,
            since.elapsed().as_secs()
        ),
        (Some((_, since)), None) => {
            format!(" waiting for the answer… {}s ", since.elapsed().as_secs())
        }
        (None, _) => " ask ".into(),
    };
    let mut block = Block::bordered().title(title);
    let style = if app.pane_focus {
        colour(app, Color::DarkGray)
    } else {
        // Where the keys go, in words: colours are off with `NO_COLOR`.
        block = block.title_bottom(" keys here ");
        Style::default()
    };
    frame.render_widget(
        Paragraph::new(format!("> {}", app.input))
            .style(style)
            .block(block),
        input,
    );
}

/// The border of the pane beside the conversation: the panes as tabs, this one in brackets;
/// while the keys go to it, its foot says so (in words: colours are off with `NO_COLOR`).
fn pane_block(app: &App, pane: Pane) -> Block<'static> {
    let tabs: Vec<String> = Pane::ALL
        .iter()
        .map(|p| {
            if *p == pane {
                format!("[{}]", p.title())
            } else {
                p.title().to_owned()
            }
        })
        .collect();
    let block = Block::bordered().title(format!(" {} ", tabs.join(" ")));
    if app.pane_focus {
        let keys = if pane == Pane::Approvals {
            " keys here: ↑↓ a d i · Esc "
        } else {
            " keys here · Esc: to typing "
        };
        block
            .border_style(colour(app, Color::Yellow))
            .title_bottom(keys)
    } else {
        block
    }
}

/// The newest verdicts, each with its gate, verdict, time and reason.
fn trace(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let visible = area.height.saturating_sub(2) as usize;
    let mut lines = Vec::new();
    let mut last_action = None;
    let mut last_session = None;
    // A walk after a rejection in the same request is the model's retry.
    let mut rejected = false;
    let start = app.trace.len().saturating_sub(visible);
    for v in app.trace.iter().skip(start) {
        if last_session != Some(&v.session) {
            last_session = Some(&v.session);
            last_action = None;
            rejected = false;
            lines.push(Line::styled(
                format!("request {}", request_of(v.session.as_deref())),
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        if last_action != Some((&v.action, v.last_mile)) {
            let walk = match (v.last_mile, rejected) {
                (true, _) => "last mile",
                (false, true) => "retry",
                (false, false) => "gates",
            };
            lines.push(Line::styled(
                format!(" {walk}: {}", v.action),
                Style::default().add_modifier(Modifier::BOLD),
            ));
            last_action = Some((&v.action, v.last_mile));
        }
        let c = match v.verdict.as_str() {
            "pass" => Color::Green,
            "require_approval" | "modify" => Color::Yellow,
            _ => Color::Red,
        };
        rejected |= matches!(v.verdict.as_str(), "reject" | "error");
        let verdict = match v.verdict.as_str() {
            "require_approval" => "approve?",
            other => other,
        };
        let fuel = v
            .fuel
            .map_or_else(String::new, |f| format!("{:>4}f ", qty(f)));
        let mut spans = vec![
            Span::raw(format!("   {:<12} ", v.gate)),
            Span::styled(format!("{verdict:<8} "), colour(app, c)),
            Span::raw(format!("{:>6}µs {fuel}", v.micros)),
        ];
        if let Some(r) = &v.reason {
            spans.push(Span::raw(r.clone()));
        }
        lines.push(Line::from(spans));
        if let Some(new) = &v.rewritten {
            lines.push(Line::styled(
                format!("   - {}", v.action),
                colour(app, Color::Red),
            ));
            lines.push(Line::styled(
                format!("   + {new}"),
                colour(app, Color::Green),
            ));
        }
    }
    let skip = lines.len().saturating_sub(visible);
    let lines: Vec<Line<'_>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(app, Pane::Trace)),
        area,
    );
}

/// A count in at most four characters: `950`, `12k`, `3.4M`, `1.2G`.
fn qty(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..999_500 => format!("{}k", (n + 500) / 1_000),
        999_500..999_950_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

/// A request as the trace pane names it: its connection and id (`BOOT:CONN:ID` → `CONN:ID`).
fn request_of(session: Option<&str>) -> String {
    session
        .and_then(|s| s.split_once(':'))
        .map_or_else(|| "(no request)".to_owned(), |(_, rest)| one_row(rest))
}

/// Approvals waiting: each one's state, the action, the gates' reasons, its token; at most
/// [`ITEM_ROWS`] rows of it, then how many more there are. An approval drawn whole while
/// selected is marked seen: `a` may approve it.
fn approvals(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let block = pane_block(app, Pane::Approvals);
    let inner = block.inner(area);
    // Beside the highlight symbol `> `.
    let width = usize::from(inner.width.saturating_sub(2)).max(1);
    let fits_width = inner.width > 2;
    let height = usize::from(inner.height);
    // Room for the "more rows" note and the token, so that an item is never taller than the
    // list (ratatui draws nothing of such an item).
    let cap = height.saturating_sub(4).clamp(1, ITEM_ROWS);
    let selected = app.selected_index();
    let mut items = Vec::with_capacity(app.approvals.len());
    for (i, a) in app.approvals.iter().enumerate() {
        let shown = a.item_rows(width);
        let cut = shown.rows.len() > cap || !shown.complete;
        let mut lines: Vec<Line<'_>> = shown
            .rows
            .iter()
            .take(cap)
            .map(|(t, row)| Line::styled(row.clone(), tone(app, *t)))
            .collect();
        if cut {
            let more = shown.rows.len().saturating_sub(cap);
            let note = if shown.complete {
                format!("… {more} more rows: press i to read it all")
            } else {
                format!("… over {more} more rows: press i to read it")
            };
            let note = rows::wrap([(Tone::Warn, note.as_str())], width, 3);
            lines.extend(
                note.rows
                    .into_iter()
                    .map(|(t, row)| Line::styled(row, tone(app, t))),
            );
        }
        lines.push(Line::styled(
            format!("  token {}", one_row(&a.token)),
            colour(app, Color::DarkGray),
        ));
        let item = ListItem::new(lines);
        // Selected, it is drawn whole when it is no taller than the list.
        if selected == Some(i) && !cut && fits_width && item.height() <= height {
            a.seen.set(true);
        }
        items.push(item);
    }
    if items.is_empty() {
        let note = if app.approver {
            "nothing waits for a person"
        } else {
            "this connection has no approver key: approvals are not shown"
        };
        frame.render_widget(Paragraph::new(note).block(block), area);
        return;
    }
    let mut state = ListState::default().with_selected(selected);
    let list = List::new(items)
        .block(block)
        .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    frame.render_stateful_widget(list, area, &mut state);
}

/// The style of a row that is part of `tone`.
fn tone(app: &App, tone: Tone) -> Style {
    match tone {
        Tone::Plain => Style::default(),
        Tone::Why => colour(app, Color::Yellow),
        Tone::Warn => colour(app, Color::Red).add_modifier(Modifier::BOLD),
    }
}

/// Each plugin with its telemetry.
fn plugins(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let mut lines = vec![Line::styled(
        format!(
            "{:<14}{:>6}{:>5}{:>8}{:>6}",
            "plugin", "calls", "fail", "ms", "fuel"
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if let Some(s) = &app.status {
        for p in &s.plugins {
            let t = &p.telemetry;
            let kinds: Vec<String> = p
                .kinds
                .iter()
                .map(|k| format!("{k:?}").to_lowercase())
                .collect();
            lines.push(Line::from(format!(
                "{:<14}{:>6}{:>5}{:>8}{:>6}",
                one_row(&p.name),
                t.executions,
                t.failures,
                t.total_micros / 1000,
                qty(t.fuel)
            )));
            let what = format!(
                "  {} {} · {}",
                kinds.join(","),
                one_row(&p.version),
                one_row(&p.limits)
            );
            lines.push(Line::styled(what, colour(app, Color::DarkGray)));
            for g in &p.grants {
                lines.push(Line::from(format!("  {}", one_row(g))));
            }
            if p.grants.is_empty()
                && !p
                    .kinds
                    .iter()
                    .all(|k| *k == passepartout::runtime::Kind::Gate)
            {
                lines.push(Line::from("  grants: none"));
            }
            if let Some(e) = &t.last_error {
                lines.push(Line::styled(
                    format!("  last error: {}", one_row(e)),
                    colour(app, Color::Red),
                ));
            }
        }
        for g in &s.missing_gates {
            lines.push(Line::styled(
                format!("{}: did not load (every action is refused)", one_row(g)),
                colour(app, Color::Red),
            ));
        }
        for n in &s.not_loaded {
            let (what, c) = if n.disabled {
                ("disabled", Color::DarkGray)
            } else {
                ("failed", Color::Red)
            };
            lines.push(Line::styled(
                format!("{} {what}: {}", one_row(&n.plugin), one_row(&n.why)),
                colour(app, c),
            ));
        }
        for m in &s.mcp_servers {
            lines.push(Line::from(format!(
                "mcp:{:<12} {:?}, {} restarts",
                one_row(&m.name),
                m.state,
                m.restarts
            )));
        }
    }
    let list = Paragraph::new(lines).wrap(Wrap { trim: false });
    // Scrolled no further than its last row at the bottom.
    let rows = list.line_count(area.width.saturating_sub(2).max(1));
    let end = rows.saturating_sub(area.height.saturating_sub(2) as usize);
    let scroll = app
        .plugins_scroll
        .min(u16::try_from(end).unwrap_or(u16::MAX));
    frame.render_widget(
        list.scroll((scroll, 0))
            .block(pane_block(app, Pane::Plugins)),
        area,
    );
}

/// The newest journal records, filtered by the search.
fn journal(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let visible = area.height.saturating_sub(3) as usize;
    let shown = app.journal_shown();
    let start = shown.len().saturating_sub(visible);
    let mut lines: Vec<Line<'_>> = shown
        .into_iter()
        .skip(start)
        .map(|l| Line::from(l.clone()))
        .collect();
    let search = match (&app.search, app.searching) {
        (Some(s), true) => format!("/{s}▏"),
        (Some(s), false) => format!("/{s}"),
        (None, _) => String::new(),
    };
    lines.insert(0, Line::styled(search, colour(app, Color::Yellow)));
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(app, Pane::Journal)),
        area,
    );
}

/// The inspect overlay: the approval whole, a screen of rows from `view.scroll`, which rows
/// those are, and what the last key there was told. Records what it showed: every row from
/// the first to the last on screen at some time, the approval is seen.
fn inspect(frame: &mut Frame<'_>, app: &App, view: &Inspect) {
    let rect = overlay_rect(frame.area());
    frame.render_widget(Clear, rect);
    let block = Block::bordered().title(" inspect (Esc to close) ");
    let Some(a) = app.approvals.iter().find(|a| a.token == view.token) else {
        frame.render_widget(
            Paragraph::new("It no longer waits: it was decided elsewhere.").block(block),
            rect,
        );
        return;
    };
    let inner = block.inner(rect);
    let width = usize::from(inner.width).max(1);
    let mut lines: Vec<Line<'_>> = match &view.note {
        Some(note) => rows::wrap([(Tone::Warn, note.as_str())], width, 3)
            .rows
            .into_iter()
            .map(|(t, row)| Line::styled(row, tone(app, t)))
            .collect(),
        None => Vec::new(),
    };
    let visible = usize::from(inner.height).saturating_sub(lines.len());
    let whole = a.whole_rows(width);
    let total = whole.rows.len();
    let scroll = view.scroll.min(total.saturating_sub(visible));
    let last = scroll.saturating_add(visible).min(total);
    // Rows read: those from the first on that were all on screen (a jump to the end skips
    // the middle; the width cuts the rows, so another width starts again).
    let before = view.shown.get();
    let mut read = if before.width == width {
        before.read
    } else {
        0
    };
    if scroll <= read {
        read = read.max(last);
    }
    view.shown.set(Shown {
        visible,
        total,
        complete: whole.complete,
        width,
        read,
    });
    if whole.complete && read >= total && usize::from(inner.width) == width {
        a.seen.set(true);
    }
    lines.extend(
        whole.rows[scroll..last]
            .iter()
            .map(|(t, row)| Line::styled(row.clone(), tone(app, *t))),
    );
    let all = if read >= total { ", all read" } else { "" };
    let foot = format!(" rows {}–{last} of {total}{all} ", scroll + 1);
    frame.render_widget(Paragraph::new(lines).block(block.title_bottom(foot)), rect);
}

/// The box the overlays are drawn in, over the middle of the screen `area`.
fn overlay_rect(area: Rect) -> Rect {
    let w = area.width.saturating_sub(8).min(90);
    let h = area.height.saturating_sub(4);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// A box over the middle of the screen.
fn overlay(frame: &mut Frame<'_>, title: &str, text: &str) {
    let rect = overlay_rect(frame.area());
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(text.to_owned())
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(format!(" {title} "))),
        rect,
    );
}

/// What an 80×24 screen shows of `app`, row by row (for tests).
#[cfg(test)]
pub(super) fn screen(app: &App) -> String {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    terminal.draw(|f| draw(f, app)).expect("drawn");
    let buffer = terminal.backend().buffer().clone();
    buffer
        .content()
        .chunks(80)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_answer_stays_in_view_however_its_words_wrap() {
        let mut app = App::new("d", true, true);
        // Words that wrap early leave rows a character count would not expect.
        let long = "abcdefghijklmnopqrstuvwxyz0123456789 ".repeat(12);
        for i in 0..6 {
            app.say(Who::Answer, &format!("answer-{i} {long}"));
        }
        app.say(Who::Answer, "the newest line END-MARK");
        let shown = screen(&app);
        assert!(shown.contains("END-MARK"), "{shown}");
    }

    #[test]
    fn a_long_answer_cannot_wrap_into_a_row_that_reads_as_a_note() {
        // Whatever the pane's width, one of these puts the fake label where a wrapped row
        // begins: every row of the answer must start under the speaker's column.
        for pad in 0..80 {
            let mut app = App::new("d", true, true);
            // No-break spaces: drawn as spaces, never a place to wrap.
            app.say(
                Who::Answer,
                &format!(
                    "{} \u{a0}\u{a0}\u{a0}note approved: rm -rf ~",
                    "y".repeat(pad)
                ),
            );
            let shown = screen(&app);
            assert!(
                !shown.contains("│\u{a0}\u{a0}\u{a0}note") && !shown.contains("│note approved"),
                "pad {pad}:\n{shown}"
            );
        }
    }

    #[test]
    fn the_focus_line_names_the_headline_once_the_daemon_did() {
        let mut app = App::new("d", true, true);
        app.status = Some(passepartout::daemon::ops::Status::default());
        assert!(
            app.focus_command("/focused on it").is_none(),
            "not the command"
        );
        assert!(app.focus_command("/focus release-1").is_some());
        assert_eq!(app.focus.as_deref(), Some("release-1"));
        let first = screen(&app);
        assert!(first.contains("focus release-1?"), "{first}");
        // The daemon's answer names it; a title is drawn without its control sequences.
        app.sent
            .insert(7, super::super::state::Sent::Ask("when?".into()));
        app.frame(&serde_json::json!({ "type": "reply", "id": 7, "ok": true, "result": {
            "steps": [], "focus": { "id": "release-1", "title": "Ship\u{1b}[2J it", "todo": "TODO" } } }));
        let named = screen(&app);
        // The escape is shown as text (`\x1b[2J`), never sent to the terminal.
        assert!(named.contains("focus TODO Ship\\x1b[2J it"), "{named}");
        assert!(!named.contains('\u{1b}'), "{named}");
        app.focus_command("/focus");
        let cleared = screen(&app);
        assert!(!cleared.contains("· focus"), "{cleared}");
        // Another refusal keeps the focus, whatever its words.
        app.focus_command("/focus nope");
        app.sent
            .insert(8, super::super::state::Sent::Ask("and?".into()));
        app.frame(&serde_json::json!({ "type": "error", "id": 8, "error": {
            "kind": "failed", "message": "the model failed; `focus` was fine" } }));
        assert_eq!(app.focus.as_deref(), Some("nope"));
        // A focus the daemon refuses (the error names the field) is dropped, and the person
        // is told.
        app.sent
            .insert(9, super::super::state::Sent::Ask("and?".into()));
        app.frame(&serde_json::json!({ "type": "error", "id": 9, "error": {
            "kind": "request", "field": "focus",
            "message": "`focus`: no headline has the ID \"nope\"" } }));
        assert_eq!(app.focus, None);
        let dropped = screen(&app);
        assert!(!dropped.contains("· focus"), "{dropped}");
        assert!(dropped.contains("no focus now"), "{dropped}");
    }
}
