//! Embeddings (seed: get-embedding, cosine-similarity, find-most-similar): headlines with
//! `:EMBED: t` get a vector from an OpenAI-compatible `/embeddings` endpoint at ingest, stored
//! by the hash of the embedded text (an unchanged headline is never embedded twice); a
//! similarity query embeds the question and ranks the stored vectors by cosine similarity.
//! Without `[memory.embeddings]` the feature says it is off; nothing else changes.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::ingest::IngestReport;
use super::node::{Node, NodeKind};
use super::org::Warning;
use super::{Memory, MemoryError};
use crate::providers::http::post_json;

/// Most texts per embeddings request.
const BATCH: usize = 64;

/// `[memory.embeddings]` of `passepartout.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1` (Ollama).
    pub base_url: String,
    /// The embedding model, e.g. `text-embedding-3-small` or `nomic-embed-text`.
    pub model: String,
    /// The environment variable holding the key, if the endpoint needs one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds per request (default 30).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// A scored result of a similarity query.
#[derive(Clone, Debug, Serialize)]
pub struct Similar {
    /// Cosine similarity, -1..1.
    pub score: f32,
    /// The headline.
    pub hit: super::Hit,
}

/// Whether a headline asks to be embedded (`:EMBED: t`, as in the seed).
pub fn wants_embedding(node: &Node) -> bool {
    node.kind == NodeKind::Headline && node.property("EMBED").is_some_and(|v| v == "t")
}

/// The text embedded for a headline, and its key.
fn text_of(node: &Node) -> (String, String) {
    let text = format!("{}\n{}", node.title, node.body.trim());
    let key = hex::encode(Sha256::digest(text.as_bytes()));
    (key, text)
}

/// Cosine similarity; 0 when either vector is zero or the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl EmbeddingsConfig {
    /// Embed `texts`, in order.
    ///
    /// # Errors
    /// [`MemoryError::Embeddings`] saying what the endpoint did.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let timeout = Duration::from_secs(self.timeout_secs.unwrap_or(30));
        let client = crate::tls::client_builder()
            .timeout(timeout)
            .build()
            .map_err(|e| MemoryError::Embeddings(format!("building an HTTP client: {e}")))?;
        let mut headers = Vec::new();
        if let Some(var) = &self.api_key_env {
            match crate::settings::named(var) {
                Some(key) => {
                    headers.push(("authorization", format!("Bearer {key}")));
                }
                _ => {
                    return Err(MemoryError::Embeddings(format!(
                        "{var} is not set ([memory.embeddings] api_key_env)"
                    )));
                }
            }
        }
        let url = format!("{}/embeddings", self.base_url.trim_end_matches('/'));
        let body = json!({ "model": self.model, "input": texts });
        // Ingest and `memory similar` are one-shot work: the request is waited for here.
        let answer = crate::blocking::wait(post_json(&client, &url, &headers, &body, timeout))
            .map_err(|e| MemoryError::Embeddings(format!("{url}: {e}")))?;
        let mut data: Vec<(usize, Vec<f32>)> = answer["data"]
            .as_array()
            .ok_or_else(|| MemoryError::Embeddings(format!("{url}: no `data` array")))?
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let index = d["index"]
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(i);
                let v = d["embedding"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_f64())
                            .map(|x| x as f32)
                            .collect()
                    })
                    .unwrap_or_default();
                (index, v)
            })
            .collect();
        data.sort_by_key(|(i, _)| *i);
        if data.len() != texts.len() || data.iter().any(|(_, v)| v.is_empty()) {
            return Err(MemoryError::Embeddings(format!(
                "{url}: asked for {} vectors, got {} usable ones",
                texts.len(),
                data.iter().filter(|(_, v)| !v.is_empty()).count()
            )));
        }
        Ok(data.into_iter().map(|(_, v)| v).collect())
    }
}

impl Memory {
    fn embeddings(&self) -> Result<&EmbeddingsConfig, MemoryError> {
        self.config.embeddings.as_ref().ok_or_else(|| {
            MemoryError::Embeddings(
                "off: no [memory.embeddings] in passepartout.toml (base_url, model)".into(),
            )
        })
    }

    fn stored_vector(&self, key: &str) -> Result<Option<Vec<f32>>, MemoryError> {
        let blob: Option<Vec<u8>> = self
            .db
            .conn()
            .query_row(
                "SELECT vector FROM memory_vectors WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()?;
        Ok(blob.map(|b| from_blob(&b)))
    }

    /// Vectors for the `:EMBED: t` headlines of an ingest that have none yet, as rows to write
    /// in the ingest's transaction. Failures become warnings: ingest goes on without them.
    pub(crate) fn embed_new(
        &self,
        built: &[super::ingest::BuiltNodes<'_>],
        report: &mut IngestReport,
    ) -> Vec<(String, String, Vec<u8>)> {
        let Some(cfg) = self.config.embeddings.as_ref() else {
            return vec![];
        };
        let mut todo: Vec<(String, String)> = Vec::new();
        for (_, node) in built.iter().flat_map(|b| b.iter()) {
            if wants_embedding(node) {
                let (key, text) = text_of(node);
                if !todo.iter().any(|(k, _)| *k == key)
                    && matches!(self.stored_vector(&key), Ok(None))
                {
                    todo.push((key, text));
                }
            }
        }
        let mut rows = Vec::new();
        for chunk in todo.chunks(BATCH) {
            let texts: Vec<String> = chunk.iter().map(|(_, t)| t.clone()).collect();
            match cfg.embed(&texts) {
                Ok(vectors) => {
                    for ((key, _), v) in chunk.iter().zip(vectors) {
                        rows.push((key.clone(), cfg.model.clone(), to_blob(&v)));
                    }
                }
                Err(e) => report.warnings.push(Warning {
                    file: String::new(),
                    line: 0,
                    message: format!("{e}; {} headlines not embedded", chunk.len()),
                }),
            }
        }
        report.embedded = rows.len();
        rows
    }

    /// The `k` embedded headlines most similar to `text` (seed: find-most-similar).
    ///
    /// # Errors
    /// [`MemoryError::Embeddings`] when embeddings are off or the endpoint fails.
    pub fn similar(&self, text: &str, k: usize) -> Result<Vec<Similar>, MemoryError> {
        let cfg = self.embeddings()?;
        let query = cfg
            .embed(&[text.to_owned()])?
            .pop()
            .ok_or_else(|| MemoryError::Embeddings("no vector returned".into()))?;
        let mut scored = Vec::new();
        let mut failure = None;
        self.walk(|node, hash, parent| {
            if wants_embedding(node) {
                let (key, _) = text_of(node);
                match self.stored_vector(&key) {
                    Ok(Some(v)) => scored.push(Similar {
                        score: cosine(&query, &v),
                        hit: self.hit(node, hash, parent),
                    }),
                    Ok(None) => {}
                    Err(e) => {
                        failure = Some(e);
                        return false;
                    }
                }
            }
            true
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        scored.sort_by(|a, b| b.score.total_cmp(&a.score));
        scored.truncate(k);
        Ok(scored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-6);
        assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn blobs_round_trip() {
        let v = vec![0.5, -1.25, 3.0];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }
}
