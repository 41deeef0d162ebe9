//! The memory store against an independent Org parser on real Org files: tests/fixtures/org-corpus
//! (each folder holds its source's licence; see its README), read by orgparse from PyPI
//! (tests/org-reference/headlines.py; `.ci/run` installs it) and by the store. Every headline's
//! level, title, TODO keyword, own tags, properties, ID and line must agree, except where
//! `ALLOWED.json` says why the store is right; an entry that no longer differs fails too, so
//! the list stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use passepartout::memory::{IngestOptions, Memory, MemoryConfig, Query};
use serde_json::{Value, json};

/// The orgparse release the reference is pinned to (`.ci/toolchains`, which `.ci/run` reads).
const ORGPARSE: &str = env!("ORGPARSE_VERSION");

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/org-corpus")
}

/// (file relative to the corpus, line) → the headline's fields, as orgparse reads them.
#[allow(
    clippy::disallowed_methods,
    reason = "the reference parser is found where pip --user puts it (PYTHONUSERBASE)"
)]
fn reference(corpus: &Path) -> BTreeMap<(String, u64), Value> {
    let version = std::process::Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('orgparse'))",
        ])
        .output()
        .expect("python3 runs");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        ORGPARSE,
        "the reference is orgparse {ORGPARSE}: install it with `python3 -m pip install --user \
         orgparse=={ORGPARSE}` (`.ci/run` does)"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("org-reference/headlines.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(corpus)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the reference parser did not run: {}\ninstall it with `python3 -m pip install --user \
         orgparse=={ORGPARSE}` (`.ci/run` does)",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            let key = (
                v["file"].as_str().unwrap_or_default().to_owned(),
                v["line"].as_u64().unwrap_or_default(),
            );
            (key, v)
        })
        .collect()
}

/// The same fields, as the store reports them.
fn ours(corpus: &Path) -> BTreeMap<(String, u64), Value> {
    let m = Memory::in_memory(MemoryConfig::default()).expect("store");
    let report = m.ingest(corpus, &IngestOptions::default()).expect("ingest");
    let root = format!("{}/", corpus.canonicalize().expect("corpus").display());
    m.query(&Query {
        limit: Some(usize::MAX),
        ..Query::default()
    })
    .expect("query")
    .into_iter()
    .map(|h| {
        let file = h.file.strip_prefix(&root).unwrap_or(&h.file).to_owned();
        // Last wins, as in a map: the reference keeps properties in one.
        let properties: BTreeMap<&str, &str> = h
            .properties
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut tags = h.tags.clone();
        tags.sort();
        let v = json!({
            "level": h.level,
            "title": h.title,
            "todo": h.todo,
            "tags": tags,
            "properties": properties,
            "id": (!h.derived_id).then_some(&h.id),
        });
        ((file, u64::from(h.line)), v)
    })
    .chain(std::iter::once((
        ("(report)".into(), 0),
        json!({ "warnings": report.warnings.len() }),
    )))
    .collect()
}

#[test]
fn the_store_reads_real_org_files_as_an_independent_parser_does() {
    let corpus = corpus();
    let theirs = reference(&corpus);
    let mut ours = ours(&corpus);
    ours.remove(&("(report)".to_owned(), 0));
    assert!(
        theirs.len() >= 700,
        "the corpus has {} headlines",
        theirs.len()
    );
    let fields = ["level", "title", "todo", "tags", "properties", "id"];
    let mut differ: BTreeMap<(String, u64, String), String> = BTreeMap::new();
    for (key, t) in &theirs {
        match ours.get(key) {
            None => {
                differ.insert(
                    (key.0.clone(), key.1, "headline".into()),
                    format!("only orgparse reads a headline here: {}", t["title"]),
                );
            }
            Some(o) => {
                for f in fields {
                    if o[f] != t[f] {
                        differ.insert(
                            (key.0.clone(), key.1, f.into()),
                            format!("store {} / orgparse {}", o[f], t[f]),
                        );
                    }
                }
            }
        }
    }
    for (key, o) in &ours {
        if !theirs.contains_key(key) {
            differ.insert(
                (key.0.clone(), key.1, "headline".into()),
                format!("only the store reads a headline here: {}", o["title"]),
            );
        }
    }
    let allowed_text = std::fs::read_to_string(corpus.join("ALLOWED.json")).expect("ALLOWED.json");
    let allowed: Vec<Value> = serde_json::from_str(&allowed_text).expect("ALLOWED.json is JSON");
    let mut listed = BTreeSet::new();
    for a in &allowed {
        let reason = a["reason"].as_str().unwrap_or_default();
        assert!(reason.len() >= 20, "an entry without its reason: {a}");
        listed.insert((
            a["file"].as_str().unwrap_or_default().to_owned(),
            a["line"].as_u64().unwrap_or_default(),
            a["field"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    let unexplained: Vec<String> = differ
        .iter()
        .filter(|(k, _)| !listed.contains(*k))
        .map(|((file, line, field), what)| format!("{file}:{line} {field}: {what}"))
        .collect();
    let stale: Vec<String> = listed
        .iter()
        .filter(|k| !differ.contains_key(*k))
        .map(|(file, line, field)| format!("{file}:{line} {field}"))
        .collect();
    assert!(
        unexplained.is_empty() && stale.is_empty(),
        "{} headlines compared.\nDifferences not in ALLOWED.json ({}):\n{}\nEntries of ALLOWED.json that no longer differ ({}):\n{}",
        theirs.len(),
        unexplained.len(),
        unexplained.join("\n"),
        stale.len(),
        stale.join("\n")
    );
}
