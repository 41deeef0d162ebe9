//! `passepartout audit diff OLD NEW`: what an update adds or removes: declared and imported
//! capabilities, imports, exports and limits.

use std::collections::BTreeSet;

use serde::Serialize;

use super::PluginAudit;

/// One difference.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// `capability`, `import`, `export` or `limit`.
    pub what: &'static str,
    /// The item, e.g. `filesystem: /workspace (ReadWrite)` or `wasi:sockets/tcp@0.2.6`.
    pub item: String,
}

/// Everything that differs between two audits of a plugin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Diff {
    /// `name version` of the old one.
    pub old: String,
    /// `name version` of the new one.
    pub new: String,
    /// In the new, not in the old.
    pub added: Vec<Change>,
    /// In the old, not in the new.
    pub removed: Vec<Change>,
}

impl Diff {
    /// Whether the update widens what the plugin can reach (a capability added).
    pub fn widens(&self) -> bool {
        self.added.iter().any(|c| c.what == "capability")
    }
}

fn items(a: &PluginAudit) -> BTreeSet<Change> {
    let mut set = BTreeSet::new();
    for row in &a.capabilities {
        for d in &row.declared {
            set.insert(Change {
                what: "capability",
                item: format!("{}: declares {d}", row.capability),
            });
        }
        if !row.imported.is_empty() {
            set.insert(Change {
                what: "capability",
                item: format!("{}: imported", row.capability),
            });
        }
    }
    set.extend(a.imports.iter().map(|i| Change {
        what: "import",
        item: i.clone(),
    }));
    set.extend(a.exports.iter().map(|e| Change {
        what: "export",
        item: e.clone(),
    }));
    if let Some(serde_json::Value::Object(limits)) =
        a.limits.as_ref().and_then(|l| serde_json::to_value(l).ok())
    {
        set.extend(limits.into_iter().map(|(k, v)| Change {
            what: "limit",
            item: format!("{k} = {v}"),
        }));
    }
    set
}

/// Compare two audits.
pub fn diff(old: &PluginAudit, new: &PluginAudit) -> Diff {
    let (a, b) = (items(old), items(new));
    Diff {
        old: format!("{} {}", old.name, old.version),
        new: format!("{} {}", new.name, new.version),
        added: b.difference(&a).cloned().collect(),
        removed: a.difference(&b).cloned().collect(),
    }
}
