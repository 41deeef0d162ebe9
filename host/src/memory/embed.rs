//! Embeddings (seed: get-embedding, cosine-similarity, find-most-similar): headlines with
//! `:EMBED: t` get a vector from an OpenAI-compatible `/embeddings` endpoint at ingest, stored
//! by the hash of the model and the embedded text (an unchanged headline is never embedded
//! twice by one model, and a vector of another model is never compared with this one's); a
//! similarity query embeds the question and ranks the stored vectors by cosine similarity.
//! Without `[memory.embeddings]` the feature says it is off; nothing else changes.
//!
//! Vectors stored before the key named the model are under keys no lookup makes: the next
//! ingest embeds those headlines again, and until then a similarity query skips them.

use std::collections::HashSet;
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
use crate::providers::lenient::{AtMost, Lenient};

/// Most texts per embeddings request.
const BATCH: usize = 64;

/// An `/embeddings` answer, as far as it is read: no more vectors than one request asks for
/// (the answer is refused as it is read past them), each a list of numbers or nothing usable.
#[derive(Deserialize)]
struct Embedded {
    data: AtMost<Datum, BATCH>,
}

#[derive(Deserialize)]
struct Datum {
    #[serde(default)]
    index: Lenient<usize>,
    #[serde(default)]
    embedding: Lenient<Vec<f32>>,
}

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

/// The text `model` embeds for a headline, and the key of its vector: the model's name and
/// the text, hashed (the name is length-prefixed, so no two pairs give one key).
fn text_of(model: &str, node: &Node) -> (String, String) {
    let text = format!("{}\n{}", node.title, node.body.trim());
    let mut h = Sha256::new();
    h.update((model.len() as u64).to_le_bytes());
    h.update(model.as_bytes());
    h.update(text.as_bytes());
    (hex::encode(h.finalize()), text)
}

/// The `:EMBED: t` headlines among `nodes` that `model` has no vector for, by key, each text
/// once however many headlines share it; `stored` is asked once per distinct key. Linear in
/// the number of nodes.
fn to_embed<'a>(
    model: &str,
    nodes: impl IntoIterator<Item = &'a Node>,
    mut stored: impl FnMut(&str) -> bool,
) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    let mut todo = Vec::new();
    for node in nodes {
        if !wants_embedding(node) {
            continue;
        }
        let (key, text) = text_of(model, node);
        if seen.insert(key.clone()) && !stored(&key) {
            todo.push((key, text));
        }
    }
    todo
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
        if texts.len() > BATCH {
            return Err(MemoryError::Embeddings(format!(
                "{} texts in one request, at most {BATCH}",
                texts.len()
            )));
        }
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
        let answer: Embedded =
            crate::blocking::wait(post_json(&client, &url, &headers, &body, timeout))
                .map_err(|e| MemoryError::Embeddings(format!("{url}: {e}")))?;
        let mut data: Vec<(usize, Vec<f32>)> = answer
            .data
            .0
            .into_iter()
            .enumerate()
            .map(|(i, d)| (d.index.0.unwrap_or(i), d.embedding.0.unwrap_or_default()))
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

    /// The vector `model` gave for `key`, if stored (a vector of another model never is one).
    fn stored_vector(&self, model: &str, key: &str) -> Result<Option<Vec<f32>>, MemoryError> {
        let blob: Option<Vec<u8>> = self
            .db
            .conn()
            .query_row(
                "SELECT vector FROM memory_vectors WHERE key = ?1 AND model = ?2",
                params![key, model],
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
        // A lookup that fails counts as stored: that headline waits for the next ingest.
        let nodes = built.iter().flat_map(|b| b.iter()).map(|(_, node)| node);
        let todo = to_embed(&cfg.model, nodes, |key| {
            !matches!(self.stored_vector(&cfg.model, key), Ok(None))
        });
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
                let (key, _) = text_of(&cfg.model, node);
                match self.stored_vector(&cfg.model, &key) {
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

    fn embedded(title: String) -> Node {
        Node {
            kind: NodeKind::Headline,
            id: title.clone(),
            derived_id: true,
            file: "notes.org".into(),
            level: 1,
            title,
            todo: None,
            done: false,
            tags: vec![],
            properties: vec![("EMBED".into(), "t".into())],
            closed: None,
            body: String::new(),
            children: vec![],
        }
    }

    /// 50,000 texts, each in two headlines: each is asked for once, and the lookup of what is
    /// already asked for is a set. A search of the list so far (as before) made some 2.5·10^9
    /// comparisons of keys here: seconds, even optimised.
    #[test]
    fn many_duplicates_are_embedded_once_in_linear_time() {
        let nodes: Vec<Node> = (0..50_000)
            .flat_map(|i| {
                let n = embedded(format!("headline {i}"));
                [n.clone(), n]
            })
            .collect();
        let mut looked_up = 0;
        let started = std::time::Instant::now();
        let todo = to_embed("m", &nodes, |_| {
            looked_up += 1;
            false
        });
        let took = started.elapsed();
        assert_eq!(todo.len(), 50_000);
        assert_eq!(looked_up, 50_000, "one lookup per distinct text");
        assert!(took < Duration::from_secs(2), "took {took:?}");
    }

    /// A vector is found only by the model that made it; one stored under the key of the text
    /// alone (before the key named the model) is not read as this model's.
    #[test]
    fn a_vector_of_another_model_is_never_read() {
        let m = Memory::in_memory(crate::memory::MemoryConfig::default()).expect("store");
        let node = embedded("Shed".into());
        let (key_a, text) = text_of("model-a", &node);
        let (key_b, _) = text_of("model-b", &node);
        assert_ne!(key_a, key_b);
        let old_key = hex::encode(Sha256::digest(text.as_bytes()));
        for (key, model) in [(&key_a, "model-a"), (&old_key, "model-b")] {
            m.db.conn()
                .execute(
                    "INSERT INTO memory_vectors (key, model, vector) VALUES (?1, ?2, ?3)",
                    params![key, model, to_blob(&[1.0, 0.0])],
                )
                .expect("insert");
        }
        assert_eq!(
            m.stored_vector("model-a", &key_a).expect("read"),
            Some(vec![1.0, 0.0])
        );
        assert_eq!(m.stored_vector("model-b", &key_b).expect("read"), None);
        assert_eq!(m.stored_vector("model-b", &key_a).expect("read"), None);
        let todo = to_embed("model-b", [&node], |key| {
            m.stored_vector("model-b", key).expect("read").is_some()
        });
        assert_eq!(todo, [(key_b, text)], "embedded again by the new model");
    }
}
