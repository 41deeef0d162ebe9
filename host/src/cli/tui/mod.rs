//! `passepartout tui`: the terminal interface (docs/tui.md). A client of the daemon (started
//! like `chat` starts one when none answers) that follows it: each gate's verdict as the walks
//! make it, approvals as they come and go (decided here with a key), plugins and their
//! telemetry, the journal, the daemon's health; and a conversation with the model whose
//! answers show once the gates passed them.
//!
//! The connection is read on a thread of its own; the screen is drawn from [`state::App`] after
//! each key or frame, and at least every 250 ms (the elapsed time of a question). The terminal
//! is restored however the TUI ends: a key, a panic (ratatui's hook), SIGINT, SIGTERM, SIGHUP.

mod keys;
mod rows;
mod state;
mod view;
mod waiting;

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as Key, KeyEventKind};
use passepartout::daemon::client::Sender;
use passepartout::daemon::request::{Request, Topic};

use super::Common;
use super::daemon::{connect, start_background};
use state::{App, Sent, Who};

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
            && let Some((request, sent)) = keys::key(app, k.code, k.modifiers)
        {
            let ask = matches!(sent, Sent::Ask(_));
            let id = send(sender, app, &request, sent)?;
            if ask {
                app.waiting = Some((id, Instant::now()));
                app.streamed = None;
            }
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
