//! `passepartout chat`: talk to the daemon line by line.
//!
//! The connection is read on a thread of its own, so what arrives is printed when it arrives:
//! the result of an action a person approved elsewhere (`passepartout approve` in another
//! terminal) shows at once, labelled with the question it answers, not after the next
//! question as if it were part of that answer. Each answer is printed once: the model's reply;
//! a tool's output, which the model answers about, only with `--trace`, as are the gates'
//! traces, labelled (`gates`, then `last mile` when the gates ran again before the tool).

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use passepartout::daemon::answer::{self, AnswerError, Ran};
use passepartout::daemon::client::{ClientError, Reader, Sender};
use passepartout::daemon::request::{Event, Request};
use passepartout::pipeline::StepOutcome;
use passepartout::signal::Told;

use super::Common;
use super::daemon::{connect, start_background};

/// How often an idle chat shows the daemon it is still there (the daemon closes connections
/// silent past its read timeout, 300 s by default).
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// Where lines go: above the prompt while it waits for input (rustyline's external printer),
/// or stdout/stderr when there is no terminal.
type Printer = Arc<Mutex<Option<Box<dyn rustyline::ExternalPrinter + Send>>>>;

/// Print one line, made safe for the terminal (a tool's output must not move the cursor).
fn say(printer: &Printer, line: &str, error: bool) {
    let mut printer = printer.lock().unwrap_or_else(|p| p.into_inner());
    match printer.as_mut() {
        Some(p) => {
            let _ = p.print(format!("{}\n", passepartout::terminal::safe(line)));
        }
        None if error => errln!("{line}"),
        None => outln!("{line}"),
    }
}

/// What the reading thread knows of the requests: which question each id asked, which one the
/// prompt waits for, and how many gate traces each has had.
#[derive(Default)]
struct Asked {
    questions: HashMap<u64, String>,
    waiting: Option<u64>,
    traces: HashMap<u64, u32>,
}

/// What the reading thread tells the prompt.
enum Heard {
    /// The reply to the question the prompt waits for has come.
    Answered,
    /// The connection ended.
    Closed(String),
}

/// One connection's state: its sending half (the prompt and the keep-alive share it), what
/// was asked on it, and what its reading thread tells the prompt.
struct Line {
    sender: Arc<Mutex<Sender>>,
    asked: Arc<Mutex<Asked>>,
    heard: mpsc::Receiver<Heard>,
}

/// Start reading `client` on a thread of its own, and keeping it alive on another.
fn open(
    client: passepartout::daemon::client::Client,
    printer: &Printer,
    trace: bool,
) -> anyhow::Result<Line> {
    let (sender, reader) = client.split()?;
    let sender = Arc::new(Mutex::new(sender));
    let asked = Arc::new(Mutex::new(Asked::default()));
    let (tell, heard) = mpsc::channel();
    {
        let (asked, printer) = (asked.clone(), printer.clone());
        std::thread::Builder::new()
            .name("chat-reader".into())
            .spawn(move || read(reader, &asked, &printer, trace, &tell))?;
    }
    {
        let sender = Arc::downgrade(&sender);
        std::thread::Builder::new()
            .name("chat-keep-alive".into())
            .spawn(move || {
                // Until the line is dropped (a new connection) or the connection breaks.
                while let Some(sender) = sender.upgrade() {
                    std::thread::sleep(KEEP_ALIVE);
                    let mut sender = sender.lock().unwrap_or_else(|p| p.into_inner());
                    if sender.send(&Request::Ping).is_err() {
                        return;
                    }
                }
            })?;
    }
    Ok(Line {
        sender,
        asked,
        heard,
    })
}

/// The reading thread: print what arrives, as it arrives; tell the prompt when its question
/// is answered or the connection ends.
fn read(
    mut reader: Reader,
    asked: &Mutex<Asked>,
    printer: &Printer,
    trace: bool,
    tell: &mpsc::Sender<Heard>,
) {
    loop {
        let frame = match reader.read() {
            Ok(frame) => frame,
            Err(e) => {
                let _ = tell.send(Heard::Closed(e.to_string()));
                return;
            }
        };
        let mut asked = asked.lock().unwrap_or_else(|p| p.into_inner());
        let id = frame["id"].as_u64();
        let question = id.and_then(|i| asked.questions.get(&i).cloned());
        // Pongs to the keep-alive are nobody's question.
        let Some(question) = question else { continue };
        let late = id != asked.waiting;
        let label = |text: &str| {
            if late {
                format!("[answer to {question:?}] {text}")
            } else {
                text.to_owned()
            }
        };
        match frame["type"].as_str() {
            Some("event") => {
                for event in answer::events(std::slice::from_ref(&frame)) {
                    match event {
                        // A tool's output is what the model answers about: its reply says it
                        // once. Late (approved elsewhere), nothing else will.
                        Event::Message {
                            told: Some(Told::Ran),
                            ..
                        } if !late && !trace => {}
                        Event::Message {
                            text,
                            told: Some(Told::Ran),
                        } => say(printer, &label(&format!("tool output: {text}")), false),
                        Event::Message { text, told: None } => say(printer, &label(&text), false),
                        Event::Message { text, .. } => say(printer, &label(&text), true),
                        Event::GateTrace { trace: gates } => {
                            let n = id.map_or(0, |i| {
                                let n = asked.traces.entry(i).or_default();
                                *n += 1;
                                *n
                            });
                            if trace {
                                let walk = if n == 1 { "gates" } else { "last mile" };
                                for g in gates {
                                    say(
                                        printer,
                                        &format!(
                                            "  {walk}: {:<16} {:<16} {}",
                                            g.gate,
                                            g.verdict.name(),
                                            g.reason.unwrap_or_default()
                                        ),
                                        true,
                                    );
                                }
                            }
                        }
                        // Only on a subscription, which chat does not make.
                        _ => {}
                    }
                }
            }
            Some("reply" | "error") => {
                // What no event said: the daemon's refusal, or a run that failed or stopped.
                match answer::read::<Ran>(&frame, "the steps of a run") {
                    Err(AnswerError::Refused(r)) => {
                        say(printer, &label(&format!("error: {r}")), true)
                    }
                    Err(e) => say(printer, &label(&format!("error: {e}")), true),
                    Ok(ran) => {
                        for step in ran.steps.0.iter().flatten() {
                            match &step.outcome {
                                StepOutcome::Failed { error } => {
                                    say(printer, &label(&format!("error: {error}")), true);
                                }
                                StepOutcome::Dropped { why } => {
                                    say(printer, &label(&format!("stopped: {why}")), true);
                                }
                                _ => {}
                            }
                        }
                    }
                }
                if !late {
                    asked.waiting = None;
                    let _ = tell.send(Heard::Answered);
                }
            }
            _ => {}
        }
    }
}

/// Send `ask` (the question `text`) on `line`. The question is registered before it is sent,
/// and without holding the registry while writing (the reading thread takes it for every
/// frame, and a write can wait on a full socket).
fn ask_on(line: &Line, ask: &Request, text: &str) -> Result<(), ClientError> {
    let mut sender = line.sender.lock().unwrap_or_else(|p| p.into_inner());
    {
        let mut asked = line.asked.lock().unwrap_or_else(|p| p.into_inner());
        let id = sender.next_id();
        asked.questions.insert(id, text.to_owned());
        asked.waiting = Some(id);
    }
    sender.send(ask).map(|_| ())
}

/// Run the chat until end of input (Ctrl-D).
///
/// # Errors
/// No daemon could be reached or started, or the terminal failed.
pub fn run(common: &Common, trace: bool) -> anyhow::Result<ExitCode> {
    let client = match connect(common) {
        Ok(c) => c,
        Err(_) => {
            start_background(common)?;
            connect(common)?
        }
    };
    errln!(
        "connected to {}; type a message, Ctrl-D to leave",
        client.hello["server"].as_str().unwrap_or("the daemon")
    );
    let mut editor = rustyline::DefaultEditor::new()?;
    // Only on a terminal: otherwise (piped) lines go to stdout and stderr as they come.
    let printer: Printer = Arc::new(Mutex::new(
        std::io::IsTerminal::is_terminal(&std::io::stdin())
            .then(|| editor.create_external_printer().ok())
            .flatten()
            .map(|p| Box::new(p) as Box<dyn rustyline::ExternalPrinter + Send>),
    ));
    let history = passepartout::dirs::database().map(|d| d.with_file_name("chat_history"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let mut line = open(client, &printer, trace)?;
    loop {
        let text = match editor.readline("> ") {
            Ok(text) => text,
            Err(
                rustyline::error::ReadlineError::Eof | rustyline::error::ReadlineError::Interrupted,
            ) => break,
            Err(e) => return Err(e.into()),
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(text);
        let ask = Request::Ask {
            text: text.into(),
            focus: None,
        };
        // A connection that broke while the prompt waited (a daemon restart) is replaced
        // before the question goes; a question that could not be sent is sent again, once,
        // on a new connection. One sent and not answered is not: the daemon may have acted
        // on it before it went away.
        if matches!(line.heard.try_recv(), Ok(Heard::Closed(_))) {
            line = open(connect(common)?, &printer, trace)?;
        }
        let mut sent = ask_on(&line, &ask, text);
        if let Err(why) = &sent {
            errln!("(the connection to the daemon broke: {why}; connecting again)");
            line = open(connect(common)?, &printer, trace)?;
            sent = ask_on(&line, &ask, text);
        }
        let broke = match sent {
            Err(e) => Some(e.to_string()),
            Ok(()) => match line.heard.recv() {
                Ok(Heard::Answered) => None,
                Ok(Heard::Closed(why)) => Some(why),
                Err(mpsc::RecvError) => Some("its reader stopped".into()),
            },
        };
        if let Some(why) = broke {
            errln!(
                "(the connection to the daemon broke before it answered: {why}; connecting \
                 again. Ask again if the question still needs an answer)"
            );
            line = open(connect(common)?, &printer, trace)?;
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
    Ok(ExitCode::SUCCESS)
}
