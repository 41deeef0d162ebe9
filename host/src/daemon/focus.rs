//! An `ask`'s `focus`: the memory headline the question is about (the seeds' foveal focus).
//! Reading it is a read of the memory store like a `memory-get` call, so it is verified as one
//! first: every gate sees it, and its trace is journaled. Only then does the model's CONTEXT
//! hold the headline, and the reply name it.

use serde_json::json;

use super::ops::Refused;
use crate::gates::Outcome;
use crate::pipeline::{Agent, Focus};
use crate::signal::{Action, Meta, Signal};

/// Most characters of a `focus`.
const MAX_FOCUS: usize = 256;

/// The headline `id` an `ask` from `meta` is about, once the gates let it be read; or why not.
///
/// # Errors
/// A request error for an ID that is not one (too long, unknown, several headlines', no memory
/// store); a failure when a gate refuses the read or wants a person to approve it. Each is
/// about the `focus` field ([`Refused::about`]); a store that cannot be read is a failure
/// about none.
pub(super) async fn resolve(pipeline: &Agent, meta: &Meta, id: &str) -> Result<Focus, Refused> {
    if id.is_empty() || id.chars().count() > MAX_FOCUS {
        return Err(Refused::Request(format!(
            "`focus` is the ID of a memory headline: 1 to {MAX_FOCUS} characters, not {}",
            id.chars().count()
        ))
        .about("focus"));
    }
    let read = Action {
        target: "tool".into(),
        tool: Some("memory-get".into()),
        args: json!({ "id": id }).as_object().cloned().unwrap_or_default(),
        explanation: Some("read the memory headline this question is about (its focus)".into()),
        ..Action::default()
    };
    let verified = pipeline
        .verify(&read, &Signal::request(read.clone(), meta.clone()))
        .await;
    // On disk before the headline goes anywhere (a model's prompt): a read whose verdicts
    // cannot be journaled is not made.
    let record = json!({ "id": id, "client": meta.client, "trace": verified.trace });
    if let Err(e) = pipeline
        .journal()
        .append_all_async(&[("focus", &record)])
        .await
    {
        return Err(Refused::Failed(format!(
            "the journal cannot be written ({e}): the focus was not read; check the \
             database's disk and that no other process holds it"
        )));
    }
    match verified.outcome {
        Outcome::Passed(a) if a == read => {}
        Outcome::Passed(_) => {
            return Err(Refused::Failed(format!(
                "`focus`: a gate changed the read of headline {id:?} into another; ask without \
                 a focus"
            ))
            .about("focus"));
        }
        Outcome::Rejected { gate, reason } => {
            return Err(Refused::Failed(format!(
                "`focus`: the gates do not let this headline be read ({gate}: {reason}); ask \
                 without a focus"
            ))
            .about("focus"));
        }
        Outcome::NeedsApproval { reasons, .. } => {
            return Err(Refused::Failed(format!(
                "`focus`: reading headline {id:?} needs a person's approval ({}); ask without \
                 a focus, or read it with `memory-get` and have that approved",
                reasons.join("; ")
            ))
            .about("focus"));
        }
    }
    let Some(memory) = pipeline.memory() else {
        return Err(Refused::Request(
            "`focus` names a memory headline, and this daemon has no memory store: add \
             `[memory] paths = [...]` to passepartout.toml, or ask without a focus"
                .into(),
        )
        .about("focus"));
    };
    match crate::blocking::in_place(|| memory.get(id)) {
        Ok(Some(hit)) => Ok(Focus {
            id: hit.id,
            title: hit.title,
            todo: hit.todo,
        }),
        Ok(None) => Err(Refused::Request(format!(
            "`focus`: no headline has the ID {id:?} in the memory store; \
             `passepartout memory query` lists them"
        ))
        .about("focus")),
        // Several headlines have it: the client must name one another way.
        Err(e @ crate::memory::MemoryError::Ambiguous { .. }) => {
            Err(Refused::Request(format!("`focus`: {e}")).about("focus"))
        }
        // Not the focus's fault (a store busy with an ingest, say): a client keeps it.
        Err(e) => Err(Refused::Failed(format!(
            "the memory store cannot be read: {e}"
        ))),
    }
}
