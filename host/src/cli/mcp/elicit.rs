//! A call a gate flags, put to the person behind an MCP client the operator marked as an
//! approver (`passepartout mcp --approver`, or the approver key as the HTTP bearer): an MCP
//! elicitation shows the action as the daemon holds it and the gates' reasons, and asks to
//! approve or deny. The person's answer is decided in the daemon with the approver key, bound
//! to the action shown (its digest) and journaled with the client's name. No answer, a
//! cancelled form or a client error decides nothing: the approval stays pending for
//! `passepartout approve`, which may come first.

use passepartout::approvals::Pending;
use passepartout::daemon::answer;
use passepartout::daemon::request::Request;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, RoleServer};

use super::{Bridge, Door};

/// How long before the call stops waiting its form closes.
const FORM_MARGIN: std::time::Duration = std::time::Duration::from_secs(3);

/// What to ask about.
pub(super) struct Question {
    /// What the bridge calls itself to the daemon (the approval record's `by`).
    pub name: String,
    /// The approval's token.
    pub token: String,
    /// The gates' reasons, joined.
    pub reasons: String,
    /// When the call stops waiting (`None`: never): the form closes before, so that no
    /// answer decides an action after the client was told none came.
    pub until: Option<std::time::Instant>,
}

/// Ask `peer`'s person about `question` and decide it as they answer. Errors are logged: the
/// call keeps waiting for another decision.
pub(super) async fn ask(bridge: Bridge, peer: Peer<RoleServer>, question: Question) {
    if let Err(e) = try_ask(&bridge, &peer, question).await {
        tracing::warn!("MCP elicitation: {e:#}");
    }
}

async fn try_ask(
    bridge: &Bridge,
    peer: &Peer<RoleServer>,
    question: Question,
) -> anyhow::Result<()> {
    let Question {
        name,
        token,
        reasons,
        until,
    } = question;
    // The action as the daemon holds it (not as the client sent it), and its digest.
    let (n, t) = (name.clone(), token.clone());
    let pending = bridge
        .daemon(super::Lane::Quick, move |door| pending(door, &n, &t))
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let Some(pending) = pending else {
        // Decided or expired already.
        return Ok(());
    };
    let message = format!(
        "A gate asks a person before this runs:\n\n{}\n\nWhy: {reasons}\n\nApprove it \
         (approve = true), or deny it (approve = false)? Token {token}.",
        serde_json::to_string_pretty(&pending.action)?
    );
    let schema = ElicitationSchema::builder()
        .required_bool_property("approve", |b| {
            b.title("Approve")
                .description("true runs the action; false denies it")
        })
        .build()
        .map_err(|e| anyhow::anyhow!("the approval form: {e}"))?;
    let answer = peer
        .create_elicitation_with_timeout(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            },
            until.map(|until| {
                until
                    .saturating_duration_since(std::time::Instant::now())
                    .saturating_sub(FORM_MARGIN)
                    .max(std::time::Duration::from_secs(1))
            }),
        )
        .await?;
    let approve = match answer.action {
        ElicitationAction::Accept => answer
            .content
            .as_ref()
            .and_then(|c| c.get("approve"))
            .and_then(serde_json::Value::as_bool),
        ElicitationAction::Decline => Some(false),
        // Cancelled (dismissed), or an action this version does not know: nothing decided.
        _ => None,
    };
    let Some(approve) = approve else {
        return Ok(());
    };
    let digest = pending.digest;
    bridge
        .daemon(super::Lane::Quick, move |door| {
            let mut client = door.connect_with(&name, true)?;
            let request = if approve {
                Request::Approve { token, digest }
            } else {
                Request::Deny { token, digest }
            };
            let (_, reply) = client.call(&request)?;
            // The outcome reaches the waiting call as its event; a refusal (decided elsewhere
            // first) is only logged.
            if let Err(answer::AnswerError::Refused(refused)) =
                answer::read::<serde_json::Value>(&reply, "the decision")
            {
                tracing::info!("MCP elicitation: the decision was refused: {refused}");
            }
            Ok(())
        })
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))
}

/// The pending approval `token`, as the daemon lists it (with the approver key).
fn pending(door: &Door, name: &str, token: &str) -> anyhow::Result<Option<Pending>> {
    let mut client = door.connect_with(name, true)?;
    let (_, list) = client.call(&Request::Approvals)?;
    Ok(answer::pending(&list, token)?)
}
