//! The model behind Reason, as a trait: the HTTP providers (OpenAI-compatible, Anthropic, the
//! cascade) implement it in their own module.

use serde::Serialize;

use super::error::PipelineError;

/// A tool as offered to the model for function calling (and to MCP clients).
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

pub use crate::signal::ToolTurn;

/// One request to the model.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProviderRequest {
    /// The system prompt (IDENTITY, TOOLS, CONTEXT, LOGS).
    pub system: String,
    /// The user prompt (the skill's prompt or the raw text).
    pub prompt: String,
    /// The tools, as function-calling schemas.
    pub tools: Vec<ToolSchema>,
    /// Tool calls made so far in this conversation, oldest first.
    pub turns: Vec<ToolTurn>,
    /// The skill whose prompt this is, if any (a model selector may route by it).
    pub skill: Option<String>,
    /// Whose token budget pays: the daemon client's session ([`crate::signal::Meta::client`]);
    /// `None` for a one-shot command, whose invocation is its session.
    #[serde(skip)]
    pub session: Option<String>,
}

/// The model's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ProviderReply {
    /// Text (a reply, or a JSON action to parse).
    Text(String),
    /// A function call.
    ToolCall {
        /// The model's id for this call (echoed back with the result).
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: serde_json::Value,
    },
}

/// How far a streamed answer got: what the asking client is shown while the model writes
/// (never the text, which only the gates may let through).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Progress {
    /// The provider writing it.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// Tokens received so far (one per streamed piece; the provider's own count at the end).
    pub tokens: u64,
    /// Milliseconds since the request was sent.
    pub elapsed_ms: u64,
}

/// Where a provider reports a streamed answer's [`Progress`].
pub type OnProgress<'a> = &'a (dyn Fn(&Progress) + Send + Sync);

/// A language model.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Its name, for errors and the journal.
    fn name(&self) -> &str;
    /// Ask the model, for an answer whole.
    ///
    /// # Errors
    /// [`PipelineError::Llm`] (unreachable, error status, malformed answer),
    /// [`PipelineError::Budget`] or [`PipelineError::DailySpend`].
    async fn complete(&self, request: &ProviderRequest) -> Result<ProviderReply, PipelineError> {
        self.complete_with(request, None).await
    }
    /// Ask the model; with `progress`, the answer is streamed where the provider can and its
    /// progress reported as it comes (the reply is still the whole answer).
    ///
    /// # Errors
    /// As [`Provider::complete`].
    async fn complete_with(
        &self,
        request: &ProviderRequest,
        progress: Option<OnProgress<'_>>,
    ) -> Result<ProviderReply, PipelineError>;
    /// Each provider behind it and its circuit breaker's state, for `status` and `doctor`.
    fn health(&self) -> Vec<crate::providers::breaker::ProviderHealth> {
        Vec::new()
    }
    /// What was spent against its budgets, with `session`'s tokens when `Some` (for
    /// `status`); `None` when it keeps no budget. May read the spend log (SQLite).
    fn spend(
        &self,
        session: Option<Option<&str>>,
    ) -> Option<crate::providers::budget::SpendStatus> {
        let _ = session;
        None
    }
}
