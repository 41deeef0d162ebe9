//! The content-addressed node and its Merkle hash (the seed's compute-merkle-hash: a node's own
//! fields and its children's hashes, in order).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// The store's root: its children are the files, by path.
    Root,
    /// One ingested file: its children are the top-level headlines.
    File,
    /// One headline.
    Headline,
}

impl NodeKind {
    /// The name used in queries and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Root => "root",
            NodeKind::File => "file",
            NodeKind::Headline => "headline",
        }
    }
}

/// One immutable node. Changing anything makes a new node with a new hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Root, file or headline.
    pub kind: NodeKind,
    /// Headline: its ID. File: its path. Root: empty.
    pub id: String,
    /// Headline: the ID was derived, the file has no `:ID:`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub derived_id: bool,
    /// The file the node belongs to.
    #[serde(default)]
    pub file: String,
    /// Outline level (0 for files and the root).
    #[serde(default)]
    pub level: u32,
    /// Title (files: `#+TITLE:` or the file name).
    #[serde(default)]
    pub title: String,
    /// TODO keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo: Option<String>,
    /// The TODO keyword is a done one in its file (`#+TODO: ... | FINISHED` counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
    /// Own tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Property drawer, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<(String, String)>,
    /// CLOSED timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<String>,
    /// Body text (files: the preamble).
    #[serde(default)]
    pub body: String,
    /// Children's hashes, in order.
    #[serde(default)]
    pub children: Vec<String>,
}

impl Node {
    /// The Merkle hash: SHA-256 over every field (length-prefixed, so no two nodes collide by
    /// shifting text between fields; properties sorted by key as the seed sorted its
    /// attributes) and the children's hashes in order. Line numbers are not part of it: a line
    /// added above a headline does not change the headline.
    pub fn hash(&self) -> String {
        let mut h = Sha256::new();
        let mut field = |name: &str, value: &str| {
            h.update(name.as_bytes());
            h.update((value.len() as u64).to_le_bytes());
            h.update(value.as_bytes());
        };
        field("kind", self.kind.as_str());
        field("id", &self.id);
        field("derived", if self.derived_id { "1" } else { "0" });
        field("file", &self.file);
        field("level", &self.level.to_string());
        field("title", &self.title);
        field("todo", self.todo.as_deref().unwrap_or(""));
        field("done", if self.done { "1" } else { "0" });
        field("tags", &self.tags.join(":"));
        let mut props: Vec<&(String, String)> = self.properties.iter().collect();
        props.sort();
        for (k, v) in props {
            field("prop", k);
            field("val", v);
        }
        field("closed", self.closed.as_deref().unwrap_or(""));
        field("body", &self.body);
        for c in &self.children {
            field("child", c);
        }
        hex::encode(h.finalize())
    }

    /// The value of property `key` (case-insensitive).
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the node has `tag` (case-insensitive).
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t.eq_ignore_ascii_case(tag))
    }

    /// Whether the TODO keyword is a done one.
    pub fn is_done(&self) -> bool {
        self.done
    }
}
