//! `passepartout tui`: the terminal interface (docs/tui.md). A client of the daemon (started
//! like `chat` starts one when none answers) that follows it: each gate's verdict as the walks
//! make it, approvals as they come and go (decided here with a key), plugins and their
//! telemetry, the journal, the daemon's health; and a conversation with the model whose
//! answers show once the gates passed them.
//!
//! The connection is read on a thread of its own; the screen is drawn from [`state::App`] after
//! each key or frame, and at least every 250 ms (the elapsed time of a question). The terminal
//! is restored however the TUI ends: a key, a panic (ratatui's hook), SIGINT, SIGTERM, SIGHUP.

mod state;
mod view;

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as Key, KeyCode, KeyEventKind, KeyModifiers};
use passepartout::daemon::client::Sender;
use passepartout::daemon::request::{Request, Topic};

use super::Common;
use super::daemon::{connect, start_background};
use state::{App, Pane, Sent, Who};

/// What the main loop is told.
enum Told {
    /// A frame from the daemon.
    Frame(serde_json::Value),
    /// The connection ended.
    Closed(String),
    /// A signal asked to stop.
    Stop,
}

/// Run the TUI until the person quits.
///
/// # Errors
/// No daemon could be reached or started, or the terminal cannot be used.
pub fn run(common: &Common) -> anyhow::Result<ExitCode> {
    let client = match connect(common) {
        Ok(c) => c,
        Err(_) => {
            start_background(common)?;
            connect(common)?
        }
    };
    let server = client.hello["server"]
        .as_str()
        .unwrap_or("passepartout")
        .to_owned();
    let approver = client.is_approver();
    let (mut sender, mut reader) = client.split()?;
    let (tell, told) = mpsc::channel();
    {
        let tell = tell.clone();
        std::thread::Builder::new()
            .name("tui-reader".into())
            .spawn(move || {
                loop {
                    match reader.read() {
                        Ok(frame) => {
                            if tell.send(Told::Frame(frame)).is_err() {
                                return;
                            }
                        }
                        Err(e) => {
                            let _ = tell.send(Told::Closed(e.to_string()));
                            return;
                        }
                    }
                }
            })?;
    }
    watch_signals(tell)?;
    let no_color = passepartout::settings::named("NO_COLOR").is_some();
    let mut app = App::new(&server, approver, no_color);
    let mut topics = vec![Topic::Traces, Topic::Health];
    if approver {
        topics.extend([Topic::Approvals, Topic::Journal]);
    }
    // Subscribed first, then listed: an approval asked in between is in one or the other.
    let id = send(
        &mut sender,
        &mut app,
        &Request::Subscribe { topics },
        Sent::Quiet,
    )?;
    app.subscription = Some(id);
    if approver {
        send(&mut sender, &mut app, &Request::Approvals, Sent::Approvals)?;
    }
    app.say(Who::Note, "Enter asks; ? on an empty line: help");

    let mut terminal = ratatui::try_init()?;
    let ended = main_loop(&mut terminal, &mut app, &mut sender, &told);
    ratatui::restore();
    ended?;
    Ok(ExitCode::SUCCESS)
}

/// Send `request` and remember what it was `for`; its id.
fn send(sender: &mut Sender, app: &mut App, request: &Request, sent: Sent) -> anyhow::Result<u64> {
    let id = sender.send(request)?;
    let id = id.as_u64().unwrap_or_default();
    app.sent.insert(id, sent);
    Ok(id)
}

/// Draw, read keys and frames, until the person quits or the daemon goes away.
fn main_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    sender: &mut Sender,
    told: &mpsc::Receiver<Told>,
) -> anyhow::Result<()> {
    let mut last_ping = Instant::now();
    while !app.quit {
        terminal.draw(|f| view::draw(f, app))?;
        if event::poll(Duration::from_millis(50))?
            && let Key::Key(k) = event::read()?
            && k.kind != KeyEventKind::Release
        {
            key(app, sender, k.code, k.modifiers)?;
        }
        // Everything the daemon sent meanwhile.
        let deadline = Instant::now() + Duration::from_millis(200);
        while let Ok(t) = told.try_recv() {
            match t {
                Told::Frame(frame) => app.frame(&frame),
                Told::Closed(why) => {
                    app.say(Who::Refused, &format!("the daemon went away: {why}"));
                    app.say(Who::Note, "quit (Ctrl-Q) and start the TUI again");
                }
                Told::Stop => app.quit = true,
            }
            if Instant::now() > deadline {
                break;
            }
        }
        if std::mem::take(&mut app.want_status) {
            send(sender, app, &Request::Status, Sent::Status)?;
        }
        if std::mem::take(&mut app.want_approvals) {
            send(sender, app, &Request::Approvals, Sent::Approvals)?;
        }
        // The daemon closes connections silent past its read timeout.
        if last_ping.elapsed() > Duration::from_secs(1) {
            last_ping = Instant::now();
            let _ = send(sender, app, &Request::Ping, Sent::Quiet);
        }
    }
    Ok(())
}

/// One key.
fn key(
    app: &mut App,
    sender: &mut Sender,
    code: KeyCode,
    mods: KeyModifiers,
) -> anyhow::Result<()> {
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(code, KeyCode::Char('q' | 'c')) {
        app.quit = true;
        return Ok(());
    }
    if app.inspect.is_some() || app.help {
        if matches!(code, KeyCode::Esc | KeyCode::Char('q' | '?')) {
            app.inspect = None;
            app.help = false;
        }
        return Ok(());
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
            KeyCode::Char(c) => search.push(c),
            _ => {}
        }
        return Ok(());
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
        _ if app.pane_focus => pane_key(app, sender, code)?,
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
                let id = send(sender, app, &ask, Sent::Ask(text))?;
                app.waiting = Some((id, Instant::now()));
                app.streamed = None;
            }
        }
        KeyCode::Backspace => {
            app.input.pop();
        }
        // Alt- and Ctrl- combinations are not text.
        KeyCode::Char(c) if !mods.intersects(KeyModifiers::ALT | KeyModifiers::CONTROL) => {
            app.input.push(c);
        }
        _ => {}
    }
    Ok(())
}

/// A key for the pane beside the conversation.
fn pane_key(app: &mut App, sender: &mut Sender, code: KeyCode) -> anyhow::Result<()> {
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
            app.inspect = app
                .selected_index()
                .and_then(|i| app.approvals.get(i))
                .map(|a| {
                    format!(
                        "{}\n\nwhy:\n{}\n\ndigest {}\ntoken {}",
                        a.detail,
                        a.reasons.join("\n"),
                        a.digest,
                        a.token
                    )
                });
        }
        KeyCode::Char(c @ ('a' | 'd')) if app.pane == Pane::Approvals => {
            // Only the approval the person selected (and saw), never one that slid into place.
            let Some(a) = app
                .selected_index()
                .and_then(|i| app.approvals.get(i))
                .cloned()
            else {
                app.say(Who::Note, "select an approval first (↑ ↓)");
                return Ok(());
            };
            let approve = c == 'a';
            let request = if approve {
                Request::Approve {
                    token: a.token.clone(),
                    digest: a.digest.clone(),
                }
            } else {
                Request::Deny {
                    token: a.token.clone(),
                    digest: a.digest.clone(),
                }
            };
            app.say(
                Who::Note,
                &format!(
                    "{} {}",
                    if approve { "approving" } else { "denying" },
                    a.action
                ),
            );
            send(
                sender,
                app,
                &request,
                Sent::Decide {
                    approve,
                    action: a.action,
                },
            )?;
        }
        _ => {}
    }
    Ok(())
}

/// SIGINT, SIGTERM and SIGHUP end the TUI the way a key does (the terminal is restored).
fn watch_signals(tell: mpsc::Sender<Told>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("tui-signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                    _ = hup.recv() => {}
                }
                let _ = tell.send(Told::Stop);
            });
        })?;
    Ok(())
}
