//! The memory store on the Org corpus in tests/fixtures/org: ingest, Merkle hashes, queries,
//! snapshots and rollback, bad input, embeddings over a loopback server, and the host
//! interface through real plugins.

use passepartout::blocking::wait;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use passepartout::memory::{IngestOptions, Memory, MemoryConfig, NodeKind, Query};
use passepartout_tests::http::Canned;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/org")
}

/// A copy of the corpus in a temp dir (tests that edit files).
fn corpus_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&corpus(), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

fn store() -> Memory {
    Memory::in_memory(MemoryConfig::default()).expect("store")
}

fn ingest(m: &Memory, path: &Path) -> passepartout::memory::IngestReport {
    m.ingest(path, &IngestOptions::default()).expect("ingest")
}

/// Every node reachable from the head: id → hash.
fn hashes(m: &Memory) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    m.walk(|node, hash, _| {
        all.insert(node.id.clone(), hash.to_owned());
        true
    })
    .expect("walk");
    all
}

fn title_id(m: &Memory, title: &str) -> String {
    let hits = m
        .query(&Query {
            text: Some(title.into()),
            ..Query::default()
        })
        .expect("query");
    hits.into_iter()
        .find(|h| h.title == title)
        .map(|h| h.id)
        .unwrap_or_else(|| panic!("no headline {title:?}"))
}

#[test]
fn the_corpus_is_read_with_ids_states_tags_properties_and_nesting() {
    let m = store();
    let r = ingest(&m, &corpus());
    assert_eq!((r.files, r.headlines), (3, 26));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let shed = m.get("proj-shed").expect("get").expect("the shed");
    assert_eq!(shed.todo.as_deref(), Some("TODO"));
    assert_eq!(shed.tags, ["project", "home"]);
    assert_eq!(shed.line, 6);
    assert!(shed.body.contains("Budget 1 200 €"));
    let foundation = m.get("shed-foundation").expect("get").expect("foundation");
    assert_eq!(foundation.parent.as_deref(), Some("proj-shed"));
    assert_eq!(foundation.todo.as_deref(), Some("NEXT"));
    assert!(
        foundation
            .properties
            .contains(&("EFFORT".into(), "1d".into()))
    );
    // A file-declared keyword (#+TODO: ... WAITING) and unicode titles.
    let waiting = m
        .query(&Query {
            todo: Some("WAITING".into()),
            ..Query::default()
        })
        .expect("query");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].level, 3);
    title_id(&m, "三体 (The Three-Body Problem)");
    title_id(&m, "Prendre rendez-vous 🦷 dentiste");
    let files = m
        .query(&Query {
            kind: Some(NodeKind::File),
            ..Query::default()
        })
        .expect("files");
    assert_eq!(files.len(), 3);
    assert!(files.iter().any(|f| f.title == "Santé et sport"));
}

#[test]
fn queries_match_the_seed_context_api() {
    let m = store();
    ingest(&m, &corpus());
    let active: Vec<String> = m
        .active_projects()
        .expect("projects")
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(
        active,
        ["proj-shed", "proj-release"],
        "DONE kitchen is not active"
    );
    let done: Vec<String> = m
        .recently_completed(3)
        .expect("done")
        .into_iter()
        .map(|h| h.title)
        .collect();
    assert_eq!(
        done,
        [
            "Benchmarks for snapshot and rollback",
            "Buy new shoes — Größe 44",
            "Port the Lisp validator"
        ]
    );
    let owned = m
        .query(&Query {
            property: Some(("owner".into(), "sam".into())),
            ..Query::default()
        })
        .expect("query");
    assert_eq!(owned.len(), 1);
    let health = m
        .query(&Query {
            tag: Some("HEALTH".into()),
            ..Query::default()
        })
        .expect("query");
    assert_eq!(health.len(), 2, "tags match case-insensitively");
    let limited = m
        .query(&Query {
            todo: Some("TODO".into()),
            limit: Some(2),
            ..Query::default()
        })
        .expect("query");
    assert_eq!(limited.len(), 2);

    // Sparse tree: matches and their ancestors, nothing else.
    let sparse = m
        .sparse_tree(&Query {
            text: Some("concrete mixer".into()),
            ..Query::default()
        })
        .expect("sparse");
    let lines: Vec<&str> = sparse.lines().collect();
    assert_eq!(lines.len(), 4, "{sparse}");
    assert!(lines[1].starts_with("* TODO Garden shed"));
    assert!(lines[2].starts_with("** NEXT Pour the foundation"));
    assert!(lines[3].starts_with("*** TODO Rent a concrete mixer"));

    let outline = m.awareness(4000).expect("outline");
    assert!(outline.contains("PROJECT: TODO Garden shed (ID: proj-shed)"));
    assert!(outline.contains("NEXT Pour the foundation"));
    assert!(!outline.contains("Kitchen"));
    let small = m.awareness(120).expect("outline");
    assert!(small.len() <= 120, "{small}");
}

#[test]
fn reingesting_an_unchanged_corpus_changes_nothing_and_hashes_are_stable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("m.db");
    let first = {
        let m = Memory::open(&db, MemoryConfig::default()).expect("open");
        let r = ingest(&m, &corpus());
        assert!(r.new_nodes > 26);
        let again = ingest(&m, &corpus());
        assert_eq!(again.new_nodes, 0);
        assert_eq!(again.root_after, r.root_after);
        assert_eq!(
            m.snapshots().expect("snapshots").len(),
            1,
            "one real change"
        );
        r.root_after
    };
    // Reopened: the same root; a second store built from scratch: the same root.
    let reopened = Memory::open(&db, MemoryConfig::default()).expect("reopen");
    assert_eq!(reopened.root(), first);
    let other = store();
    assert_eq!(ingest(&other, &corpus()).root_after, first);
    assert_eq!(hashes(&other), hashes(&reopened));
}

#[test]
fn a_change_deep_in_the_tree_changes_its_ancestors_and_the_root_only() {
    let copy = corpus_copy();
    let m = store();
    let before_root = ingest(&m, copy.path()).root_after;
    let before = hashes(&m);
    let mixer = title_id(&m, "Rent a concrete mixer");
    let file = copy.path().join("projects.org");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(
        &file,
        text.replace(
            "*** TODO Rent a concrete mixer\n",
            "*** TODO Rent a concrete mixer\nThe one from the hardware shop.\n",
        ),
    )
    .expect("write");
    let after_root = ingest(&m, copy.path()).root_after;
    assert_ne!(after_root, before_root);
    let after = hashes(&m);
    let changed: Vec<&String> = before
        .keys()
        .filter(|id| before.get(*id) != after.get(*id))
        .collect();
    let file_id = std::fs::canonicalize(&file)
        .expect("canonical")
        .display()
        .to_string();
    let mut expected = vec![
        &mixer,
        &"shed-foundation".to_owned(),
        &"proj-shed".to_owned(),
        &file_id,
    ]
    .into_iter()
    .cloned()
    .collect::<Vec<String>>();
    expected.sort();
    let mut changed: Vec<String> = changed.into_iter().cloned().collect();
    changed.sort();
    assert_eq!(changed, expected);
}

#[test]
fn write_ids_round_trips_the_derived_ids_into_the_files() {
    let copy = corpus_copy();
    let m = store();
    ingest(&m, copy.path());
    let missing: Vec<(String, String)> = m
        .query(&Query {
            missing_id: true,
            limit: Some(1000),
            ..Query::default()
        })
        .expect("query")
        .into_iter()
        .map(|h| (h.title, h.id))
        .collect();
    assert!(missing.len() > 10);
    let r = m
        .ingest(copy.path(), &IngestOptions { write_ids: true })
        .expect("ingest");
    assert_eq!(r.ids_written, missing.len());
    // The files now carry the very IDs the store derived, and nothing is missing any more.
    for (title, id) in &missing {
        assert_eq!(&title_id(&m, title), id, "{title}");
    }
    let none = m
        .query(&Query {
            missing_id: true,
            ..Query::default()
        })
        .expect("query");
    assert!(none.is_empty());
    let again = m
        .ingest(copy.path(), &IngestOptions { write_ids: true })
        .expect("ingest");
    assert_eq!((again.ids_written, again.new_nodes), (0, 0));
    let text = std::fs::read_to_string(copy.path().join("projects.org")).expect("read");
    assert!(
        text.contains("A 2×3 m shed behind the house."),
        "content kept"
    );
}

/// The corpus ingested into a store that keeps 3 snapshots.
fn corpus_keeping_3_snapshots() -> Memory {
    let m = Memory::in_memory(MemoryConfig {
        keep_snapshots: 3,
        ..MemoryConfig::default()
    })
    .expect("store");
    ingest(&m, &corpus());
    m
}

#[test]
fn snapshots_roll_back_to_the_exact_root_and_old_ones_are_collected() {
    let m = corpus_keeping_3_snapshots();
    let original = m.root();
    let snap = m.snapshot("test").expect("snapshot");
    assert_eq!(snap.root, original);
    let changed = m.set_property("proj-shed", "STATUS", "late").expect("set");
    assert_ne!(changed, original);
    assert_eq!(
        m.get("proj-shed")
            .expect("get")
            .expect("shed")
            .properties
            .last(),
        Some(&("STATUS".to_owned(), "late".to_owned()))
    );
    let back = m.rollback(&snap.seq.to_string()).expect("rollback");
    assert_eq!(back.seq, snap.seq);
    assert_eq!(m.root(), original, "exactly the root of the snapshot");
    // The rollback itself was snapshotted: it can be undone by hash prefix.
    let undo = m.snapshots().expect("list")[0].clone();
    assert_eq!(undo.root, changed);
    m.rollback(&changed[..12]).expect("undo by hash prefix");
    assert_eq!(m.root(), changed);

    for i in 0..5 {
        m.set_property("proj-shed", "STEP", &i.to_string())
            .expect("set");
        m.snapshot(&format!("step {i}")).expect("snapshot");
    }
    let kept = m.snapshots().expect("list");
    assert_eq!(kept.len(), 3, "keep_snapshots = 3");
    assert!(m.rollback(&snap.seq.to_string()).is_err(), "pruned");
    let removed = m.collect_garbage().expect("gc");
    assert!(removed > 0, "unreachable nodes collected");
    m.rollback(&kept[2].seq.to_string())
        .expect("a kept snapshot survives gc");
    assert_eq!(m.root(), kept[2].root);
    assert_eq!(m.active_projects().expect("query").len(), 2);
    let err = m.rollback("nope").expect_err("unknown snapshot");
    assert!(err.to_string().contains("memory snapshots"), "{err}");
}

#[test]
fn undo_points_are_taken_only_on_change_and_pruned_before_a_persons_snapshots() {
    let m = corpus_keeping_3_snapshots();
    // The ingest kept the empty root ("before ingest"); the person keeps this one.
    let mine = m.snapshot("mine").expect("snapshot");
    // 21 tools that changed nothing: no new snapshot pushes the person's out.
    for _ in 0..21 {
        assert_eq!(
            m.undo_point("before tool shell").expect("undo").seq,
            mine.seq
        );
    }
    assert_eq!(m.snapshots().expect("list").len(), 2);
    // Tools that changed something each leave an undo point; past the limit of 3, the oldest
    // undo points go and the person's stays.
    for i in 0..5 {
        m.set_property("proj-shed", "STEP", &i.to_string())
            .expect("set");
        let undo = m.undo_point("before tool write-file").expect("undo");
        assert_eq!(undo.root, m.root());
        assert_ne!(undo.seq, mine.seq);
    }
    let kept: Vec<String> = m
        .snapshots()
        .expect("list")
        .into_iter()
        .map(|s| s.reason)
        .collect();
    assert_eq!(kept, ["before tool write-file", "mine", "before ingest"]);
    // When only kept ones are left, the oldest of them goes.
    for i in 0..3 {
        m.set_property("proj-shed", "STEP", &format!("kept {i}"))
            .expect("set");
        m.snapshot(&format!("kept {i}")).expect("snapshot");
    }
    let kept: Vec<String> = m
        .snapshots()
        .expect("list")
        .into_iter()
        .map(|s| s.reason)
        .collect();
    assert_eq!(kept, ["kept 2", "kept 1", "kept 0"]);
}

#[test]
fn bad_org_is_read_as_far_as_possible_with_warnings_naming_file_and_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::write(
        d.join("drawer.org"),
        "* A\n:PROPERTIES:\n:ID: a\n* B\nbody\n   *  odd indentation *\n\t** tabbed\n",
    )
    .expect("write");
    let mut bytes = b"* Good\n* Bad \xff\xfe bytes\n".to_vec();
    bytes.extend_from_slice(b"* After\n");
    std::fs::write(d.join("latin.org"), bytes).expect("write");
    std::fs::create_dir(d.join("loop")).expect("mkdir");
    std::os::unix::fs::symlink(d, d.join("loop/back")).expect("symlink");
    let many = d.join("many");
    std::fs::create_dir(&many).expect("mkdir");
    for i in 0..2000 {
        std::fs::write(
            many.join(format!("{i}.org")),
            format!("* Note {i} :bulk:\n"),
        )
        .expect("write");
    }
    let m = store();
    let r = ingest(&m, d);
    assert_eq!(r.files, 2002);
    let text: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|w| w.contains("drawer.org:2") && w.contains("never closed")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|w| w.contains("latin.org:2") && w.contains("UTF-8")),
        "{text:?}"
    );
    assert!(text.iter().any(|w| w.contains("not followed")), "{text:?}");
    assert!(
        title_id(&m, "After").starts_with("pp-"),
        "read past the bad bytes"
    );
    let bulk = m
        .query(&Query {
            tag: Some("bulk".into()),
            limit: Some(5000),
            ..Query::default()
        })
        .expect("query");
    assert_eq!(bulk.len(), 2000);

    let missing = m.ingest(&d.join("nope"), &IngestOptions::default());
    let err = missing.expect_err("a missing path is an error");
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn a_50_mb_file_is_ingested_and_one_over_the_limit_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let big = dir.path().join("big.org");
    let mut text = String::with_capacity(51 << 20);
    let line = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.\n";
    let mut n = 0;
    while text.len() < 50 << 20 {
        text.push_str(&format!("* Heading {n}\n"));
        for _ in 0..40 {
            text.push_str(line);
        }
        n += 1;
    }
    std::fs::write(&big, &text).expect("write");
    let m = store();
    let r = ingest(&m, &big);
    assert_eq!(r.headlines, n);
    let small = Memory::in_memory(MemoryConfig {
        max_file_mib: 16,
        ..MemoryConfig::default()
    })
    .expect("store");
    let r = ingest(&small, &big);
    assert_eq!(r.files, 0);
    assert!(
        r.warnings[0].to_string().contains("16 MiB limit"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn embeddings_go_to_the_configured_endpoint_and_rank_by_cosine() {
    use passepartout_tests::http::Server;
    let server = Server::start(vec![
        // Ingest: the two `:EMBED: t` headlines, in file order.
        Canned::json(
            r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.0,1.0,0.0]},{"object":"embedding","index":1,"embedding":[1.0,0.0,0.0]}],"model":"embed-test"}"#,
        ),
        // The question.
        Canned::json(
            r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.9,0.1,0.0]}],"model":"embed-test"}"#,
        ),
    ]);
    let config = MemoryConfig {
        embeddings: Some(passepartout::memory::EmbeddingsConfig {
            base_url: format!("{}/v1", server.url),
            model: "embed-test".into(),
            api_key_env: None,
            timeout_secs: Some(5),
        }),
        ..MemoryConfig::default()
    };
    let m = Memory::in_memory(config).expect("store");
    let r = ingest(&m, &corpus());
    assert_eq!(r.embedded, 2);
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/embeddings");
    assert_eq!(reqs[0].body["model"], "embed-test");
    assert_eq!(reqs[0].body["input"].as_array().map(Vec::len), Some(2));
    let found = m.similar("merkle storage", 2).expect("similar");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].hit.title, "Passepartout release 0.2");
    assert!(found[0].score > found[1].score);
    // Unchanged headlines are not embedded again.
    assert_eq!(ingest(&m, &corpus()).embedded, 0);
    assert_eq!(server.requests().len(), 2);

    let off = store();
    ingest(&off, &corpus());
    let err = off.similar("x", 1).expect_err("off");
    assert!(err.to_string().contains("[memory.embeddings]"), "{err}");
}

/// The memory tool and the gardener with their grants, the gates that matter here, and a
/// pipeline over the store whose model is a loopback server speaking the OpenAI protocol.
fn gardening_pipeline(
    m: std::sync::Arc<Memory>,
    server: &passepartout_tests::http::Server,
) -> (passepartout::pipeline::Agent, tempfile::TempDir) {
    use passepartout::pipeline::{Agent, PipelineConfig};
    let (mut rt, scratch) = crate::fresh_runtime();
    rt.set_memory(m.clone());
    let policy = passepartout::runtime::Policy::parse(
        "[plugins.memory]\nmemory = \"read-write\"\n[plugins.gardener]\nmemory = \"read\"\n",
    )
    .expect("policy");
    let report = rt.load_all(
        &crate::builtins(&["memory", "gardener", "explanation", "shell-guard"]),
        &policy,
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.disabled.is_empty(), "{:?}", report.disabled);
    let p = Agent::new(
        report.plugins,
        passepartout::journal::Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_memory(m)
    .with_provider(Box::new(passepartout::providers::Cascade::new(vec![
        crate::providers::openai(server),
    ])));
    (p, scratch)
}

#[test]
fn the_gardener_proposes_ids_through_the_gates_and_a_rollback_restores_the_exact_root() {
    use passepartout_tests::http::Server;
    let m = std::sync::Arc::new(store());
    ingest(&m, &corpus());
    let before = m.root();
    let target = m
        .query(&Query {
            missing_id: true,
            limit: Some(1),
            ..Query::default()
        })
        .expect("query")
        .remove(0);
    let server = Server::start(vec![
        // First proposal: no explanation; the explanation gate sends it back.
        Canned::tool_call(
            "call_1",
            "memory-assign-id",
            &serde_json::json!({"id": target.id}),
        ),
        Canned::tool_call(
            "call_2",
            "memory-assign-id",
            &serde_json::json!({"id": target.id, "explanation": "give the headline a stable ID"}),
        ),
        Canned::text("Done."),
    ]);
    let (pipeline, _s) = gardening_pipeline(m.clone(), &server);
    wait(pipeline.run(passepartout::signal::Signal::event(
        "heartbeat",
        None,
        Some("daemon"),
    )));
    let requests = server.requests();
    let prompt = requests[0].body["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        prompt.contains(&target.id) && prompt.contains("memory-assign-id"),
        "the gardener's prompt lists the headline: {prompt}"
    );
    let retry = requests[1].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        retry.contains("explanation"),
        "the rejection is fed back: {retry}"
    );
    let now = m.get(&target.id).expect("get").expect("still there");
    assert!(!now.derived_id, "the ID is now the headline's own");
    assert_ne!(m.root(), before);

    // The undo snapshot taken before the (non-read-only) tool brings back the exact root.
    let snap = m
        .snapshots()
        .expect("snapshots")
        .into_iter()
        .find(|s| s.reason == "before tool memory-assign-id")
        .expect("an undo snapshot");
    assert_eq!(snap.root, before);
    m.rollback(&snap.seq.to_string()).expect("rollback");
    assert_eq!(m.root(), before);
    assert!(m.get(&target.id).expect("get").expect("there").derived_id);
}

/// The `memory` plugin loaded on a fresh runtime that shares `m`, its policy granting memory
/// `access` (`read` or `read-write`); the runtime and its scratch folder are kept beside it.
fn memory_plugin(
    m: &std::sync::Arc<Memory>,
    access: &str,
) -> (
    passepartout::runtime::Plugin,
    passepartout::runtime::Runtime,
    tempfile::TempDir,
) {
    let (mut rt, scratch) = crate::fresh_runtime();
    rt.set_memory(m.clone());
    let source = crate::builtins(&["memory"]).pop().expect("memory plugin");
    let policy = format!("[plugins.memory]\nmemory = \"{access}\"\n");
    let plugin = rt
        .load(
            &source,
            &passepartout::runtime::Policy::parse(&policy).expect("policy"),
        )
        .unwrap_or_else(|e| panic!("loads with {access}: {e}"));
    (plugin, rt, scratch)
}

#[test]
fn memory_reads_need_a_read_grant_and_writes_a_read_write_one() {
    let m = std::sync::Arc::new(store());
    ingest(&m, &corpus());
    let (read, _rt, _s) = memory_plugin(&m, "read");
    let out = read
        .call_tool("memory-query", r#"{"tag": "project"}"#)
        .expect("query");
    assert!(
        out.contains("proj-shed") && out.contains("proj-kitchen"),
        "{out}"
    );
    let outline = read.call_tool("memory-outline", "{}").expect("outline");
    assert!(outline.contains("Garden shed"), "{outline}");
    let derived = m
        .query(&Query {
            missing_id: true,
            limit: Some(1),
            ..Query::default()
        })
        .expect("query")
        .remove(0);
    let root = m.root();
    let err = read
        .call_tool(
            "memory-assign-id",
            &serde_json::json!({"id": derived.id}).to_string(),
        )
        .expect_err("a read grant cannot write");
    assert!(err.to_string().contains("may only read memory"), "{err}");
    assert_eq!(m.root(), root, "nothing changed");
}

#[test]
fn a_set_property_survives_reingest_and_write_ids_skips_files_it_would_damage() {
    let copy = corpus_copy();
    let m = store();
    ingest(&m, copy.path());
    let mixer = title_id(&m, "Rent a concrete mixer");
    m.set_property(&mixer, "ID", &mixer).expect("assign");
    m.set_property("proj-shed", "STATUS", "late").expect("set");
    // Auto-save re-ingests the unchanged files: the settings stay.
    ingest(&m, copy.path());
    assert!(!m.get(&mixer).expect("get").expect("there").derived_id);
    let shed = m.get("proj-shed").expect("get").expect("there");
    assert!(shed.properties.contains(&("STATUS".into(), "late".into())));

    // A file that is not UTF-8 is never rewritten; nor is a FIFO read.
    let latin = copy.path().join("latin.org");
    std::fs::write(&latin, b"* Caf\xe9 menu\n").expect("write");
    let before = std::fs::read(&latin).expect("read");
    let r = m
        .ingest(copy.path(), &IngestOptions { write_ids: true })
        .expect("ingest");
    assert_eq!(
        std::fs::read(&latin).expect("read"),
        before,
        "bytes untouched"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.to_string().contains("not valid UTF-8")),
        "{:?}",
        r.warnings
    );
    let fifo = copy.path().join("pipe.org");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let r = ingest(&m, copy.path());
        assert!(
            r.warnings
                .iter()
                .any(|w| w.to_string().contains("not a regular file")),
            "{:?}",
            r.warnings
        );
    }
    let deep = copy.path().join("deep.org");
    std::fs::write(&deep, format!("{} too deep\n", "*".repeat(300))).expect("write");
    let r = ingest(&m, copy.path());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.to_string().contains("nested more than")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn two_stores_on_one_database_never_lose_each_others_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("m.db");
    let a = Memory::open(&db, MemoryConfig::default()).expect("open");
    let b = Memory::open(&db, MemoryConfig::default()).expect("open");
    let one = dir.path().join("one.org");
    let two = dir.path().join("two.org");
    std::fs::write(&one, "* One :project:\n").expect("write");
    std::fs::write(&two, "* Two :project:\n").expect("write");
    ingest(&a, &one);
    // b (the CLI beside a daemon) sees a's write and builds on it.
    ingest(&b, &two);
    assert_eq!(a.root(), b.root(), "a sees b's write");
    assert_eq!(a.active_projects().expect("query").len(), 2);
    std::fs::write(&one, "* One :project:\nmore\n").expect("write");
    ingest(&a, &one);
    assert_eq!(
        b.active_projects().expect("query").len(),
        2,
        "nothing dropped"
    );
}

#[test]
fn a_files_own_done_keywords_end_a_project() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("custom.org");
    std::fs::write(
        &f,
        "#+TODO: PLAN ACTIVE | FINISHED ABANDONED\n* FINISHED Old thing :project:\n* ACTIVE New thing :project:\n",
    )
    .expect("write");
    let m = store();
    ingest(&m, &f);
    let active: Vec<String> = m
        .active_projects()
        .expect("projects")
        .into_iter()
        .map(|h| h.title)
        .collect();
    assert_eq!(active, ["New thing"]);
    let done = m.recently_completed(5).expect("done");
    assert_eq!(done.len(), 1);
    assert!(done[0].done && done[0].todo.as_deref() == Some("FINISHED"));
}

/// The headline titled `title` at the head: its line, or None when it is not in the store.
fn line_of(m: &Memory, title: &str) -> Option<u32> {
    m.query(&Query {
        text: Some(title.into()),
        ..Query::default()
    })
    .expect("query")
    .into_iter()
    .find(|h| h.title == title)
    .map(|h| h.line)
}

/// Ingest a directory, delete a file, ingest again: the file leaves the store; a rollback
/// brings it back, at its lines. Lines follow the head: a rollback to a version of a file
/// whose headlines were elsewhere shows them where they were.
#[test]
fn a_deleted_file_leaves_on_reingest_and_rollback_brings_it_back_at_its_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).expect("mkdir");
    let keep = notes.join("keep.org");
    let gone = notes.join("gone.org");
    std::fs::write(&keep, "* Kept\n").expect("write");
    std::fs::write(
        &gone,
        "#+title: Gone\n\n\n* Doomed headline\nbody\n** Its child\n",
    )
    .expect("write");
    let m = store();
    ingest(&m, dir.path());
    assert_eq!(line_of(&m, "Doomed headline"), Some(4));
    assert_eq!(line_of(&m, "Its child"), Some(6));
    let before = m.root();
    let stored_as = gone.canonicalize().expect("path").display().to_string();

    std::fs::remove_file(&gone).expect("rm");
    let report = ingest(&m, dir.path());
    assert_eq!(report.removed_files, [stored_as], "{report:?}");
    assert_eq!(line_of(&m, "Doomed headline"), None);
    assert_eq!(line_of(&m, "Kept"), Some(1));
    // Ingesting one file of the directory removes nothing else, even a file gone from disk.
    let other = notes.join("other.org");
    std::fs::write(&other, "* Other\n").expect("write");
    ingest(&m, dir.path());
    std::fs::remove_file(&other).expect("rm");
    let one = ingest(&m, &keep);
    assert!(one.removed_files.is_empty(), "{one:?}");
    assert_eq!(line_of(&m, "Other"), Some(1), "still in the store");

    // The ingest that removed it left a snapshot of the root before it.
    let snap = m
        .snapshots()
        .expect("snapshots")
        .into_iter()
        .find(|s| s.root == before)
        .expect("a snapshot of the root with the file");
    m.rollback(&snap.seq.to_string()).expect("rollback");
    assert_eq!(m.root(), before);
    assert_eq!(
        line_of(&m, "Doomed headline"),
        Some(4),
        "its line comes back with it"
    );
    assert_eq!(line_of(&m, "Its child"), Some(6));

    // The same headlines at other lines in a newer version; a rollback shows the old lines.
    std::fs::write(&gone, "* Doomed headline\nbody\n** Its child\nmore\n").expect("write");
    ingest(&m, dir.path());
    assert_eq!(line_of(&m, "Doomed headline"), Some(1));
    assert_eq!(line_of(&m, "Its child"), Some(3));
    m.rollback(&snap.seq.to_string()).expect("rollback");
    assert_eq!(line_of(&m, "Its child"), Some(6));
    // A property set in the store keeps the lines of its file.
    let id = title_id(&m, "Its child");
    m.set_property(&id, "EFFORT", "1h").expect("set");
    assert_eq!(line_of(&m, "Its child"), Some(6));
    m.set_property(&id, "ID", "child-1").expect("set the ID");
    assert_eq!(m.get("child-1").expect("get").map(|h| h.line), Some(6));
    assert_eq!(m.collect_garbage().map(|_| ()).ok(), Some(()));
    assert_eq!(line_of(&m, "Doomed headline"), Some(4));
}

/// A database made when lines were kept by headline ID alone keeps them, moved to the head's
/// file versions.
#[test]
fn lines_of_an_older_database_are_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("memory.db");
    let file = dir.path().join("a.org");
    std::fs::write(&file, "\n\n* Third line\n").expect("write");
    {
        let m = Memory::open(&db, MemoryConfig::default()).expect("open");
        ingest(&m, &file);
    }
    {
        let conn = rusqlite::Connection::open(&db).expect("sqlite");
        let id: String = conn
            .query_row("SELECT id FROM memory_file_lines", [], |r| r.get(0))
            .expect("one line");
        conn.execute_batch(
            "CREATE TABLE memory_lines (id TEXT PRIMARY KEY, file TEXT NOT NULL, line INTEGER NOT NULL) WITHOUT ROWID; DELETE FROM memory_file_lines;",
        )
        .expect("old schema");
        conn.execute(
            "INSERT INTO memory_lines (id, file, line) VALUES (?1, ?2, 3)",
            rusqlite::params![id, file.canonicalize().expect("path").display().to_string()],
        )
        .expect("old row");
    }
    let m = Memory::open(&db, MemoryConfig::default()).expect("reopen");
    assert_eq!(line_of(&m, "Third line"), Some(3));
}

/// Renaming a parent changes the derived IDs below it: the ingest says so, and how to keep IDs
/// that no edit changes; a change that keeps every derived ID says nothing.
#[test]
fn an_ingest_that_changes_derived_ids_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("plans.org");
    std::fs::write(&file, "* Garden\n** Buy seeds\n** Dig\n").expect("write");
    let m = store();
    assert!(ingest(&m, dir.path()).warnings.is_empty());
    std::fs::write(&file, "* Garden\n** Buy seeds\n** Dig\nmore body\n").expect("write");
    assert!(
        ingest(&m, dir.path()).warnings.is_empty(),
        "same titles, same IDs"
    );
    std::fs::write(
        &file,
        "* Vegetable garden\n** Buy seeds\n** Dig\nmore body\n",
    )
    .expect("write");
    let report = ingest(&m, dir.path());
    let said: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert!(
        said.iter()
            .any(|w| w.contains("3 derived ID(s) are no longer in the file")
                && w.contains("--write-ids")),
        "{said:?}"
    );
    // Writing the derived IDs into the file keeps every one: nothing to say.
    let written = m
        .ingest(dir.path(), &IngestOptions { write_ids: true })
        .expect("ingest");
    assert_eq!(written.ids_written, 3);
    assert!(written.warnings.is_empty(), "{:?}", written.warnings);
}

/// An ID given by `memory-assign-id` is kept under the headline's derived ID, so renaming a
/// parent loses it: the ingest that does names it (it said nothing, and the setting lingered).
#[test]
fn an_ingest_that_loses_an_assigned_id_names_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("plans.org");
    std::fs::write(&file, "* Garden\n** Buy seeds\n").expect("write");
    let m = store();
    ingest(&m, dir.path());
    let seeds = title_id(&m, "Buy seeds");
    m.set_property(&seeds, "ID", "seeds-1").expect("assign");
    let same = ingest(&m, dir.path());
    assert!(same.warnings.is_empty(), "{:?}", same.warnings);
    assert!(
        m.get("seeds-1").expect("get").is_some(),
        "it holds while nothing changes"
    );

    std::fs::write(&file, "* Vegetable garden\n** Buy seeds\n").expect("write");
    let renamed = ingest(&m, dir.path());
    let said: Vec<String> = renamed.warnings.iter().map(ToString::to_string).collect();
    assert!(
        said.iter().any(|w| w.contains("1 ID(s) set in the store")
            && w.contains("\"seeds-1\"")
            && w.contains("--write-ids")),
        "{said:?}"
    );
    assert!(m.get("seeds-1").expect("get").is_none());
}

/// Two headlines with one `:ID:` (here in two files, and two in one file): the ingest names
/// both places; `get`, the focus and a write refuse the ID, naming each place, instead of
/// answering with the first in file order; an ID another headline has is not given to a third.
#[test]
fn a_shared_id_is_warned_of_and_refused_naming_each_place() {
    use passepartout::memory::MemoryError;
    let dir = tempfile::tempdir().expect("temp dir");
    let a = dir.path().join("a.org");
    std::fs::write(&a, "* Mine\n:PROPERTIES:\n:ID: shared\n:END:\n").expect("write");
    std::fs::write(
        dir.path().join("b.org"),
        "\n\n* Theirs\n:PROPERTIES:\n:ID: shared\n:END:\n\
         * Twice\n:PROPERTIES:\n:ID: twice\n:END:\n\
         * Twice again\n:PROPERTIES:\n:ID: twice\n:END:\n\
         * Unique\n:PROPERTIES:\n:ID: unique\n:END:\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("c.org"),
        "* Other\n:PROPERTIES:\n:ID: other\n:END:\n",
    )
    .expect("write");
    let m = store();
    let r = ingest(&m, dir.path());
    let said: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
    assert!(
        said.iter()
            .any(|w| w.contains("a.org:1") && w.contains("\"shared\"") && w.contains("b.org:3")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|w| w.contains("b.org:7") && w.contains("\"twice\"") && w.contains("b.org:11")),
        "{said:?}"
    );

    let err = m.get("shared").expect_err("ambiguous").to_string();
    assert!(
        err.contains("ambiguous ID \"shared\"")
            && err.contains("a.org:1")
            && err.contains("b.org:3")
            && err.contains("give one of them another ID"),
        "{err}"
    );
    let err = m.get("twice").expect_err("ambiguous").to_string();
    assert!(err.contains("b.org:7") && err.contains("b.org:11"), "{err}");
    assert!(
        m.focus("shared", 4000).is_err(),
        "nor is one of them the focus"
    );
    let root = m.root();
    let write = m.set_property("shared", "STATUS", "x");
    assert!(
        matches!(write, Err(MemoryError::Ambiguous { .. })),
        "{write:?}"
    );
    let taken = m
        .set_property("unique", "ID", "other")
        .expect_err("another headline's ID")
        .to_string();
    assert!(
        taken.contains("already the headline's at") && taken.contains("c.org:1"),
        "{taken}"
    );
    assert_eq!(m.root(), root, "nothing written");
    assert_eq!(
        m.get("unique").expect("get").map(|h| h.title),
        Some("Unique".to_owned())
    );

    // Once one of them has another ID, both read again.
    std::fs::write(&a, "* Mine\n:PROPERTIES:\n:ID: mine\n:END:\n").expect("write");
    let r = ingest(&m, dir.path());
    assert!(
        !r.warnings.iter().any(|w| w.message.contains("\"shared\"")),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        m.get("shared").expect("get").map(|h| h.title),
        Some("Theirs".to_owned())
    );
}

/// A rollback shows a deleted file's headlines again, but the file is still not on disk: the
/// next ingest of its directory removes it again (the daemon's auto-save does within 300 s).
/// `files_not_on_disk` names it (`memory rollback` prints it); written back, it stays.
#[test]
fn a_rolled_back_deleted_file_leaves_again_unless_written_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = dir.path().join("keep.org");
    let gone = dir.path().join("gone.org");
    std::fs::write(&keep, "* Kept\n").expect("write");
    std::fs::write(&gone, "* Doomed\n").expect("write");
    let m = store();
    ingest(&m, dir.path());
    let before = m.root();
    let stored_as = gone.canonicalize().expect("path").display().to_string();
    std::fs::remove_file(&gone).expect("rm");
    assert_eq!(
        ingest(&m, dir.path()).removed_files,
        std::slice::from_ref(&stored_as)
    );
    assert!(m.files_not_on_disk().expect("files").is_empty());

    let snap = m
        .snapshots()
        .expect("snapshots")
        .into_iter()
        .find(|s| s.root == before)
        .expect("the snapshot before the ingest");
    m.rollback(&snap.seq.to_string()).expect("rollback");
    assert_eq!(line_of(&m, "Doomed"), Some(1), "back in memory");
    assert_eq!(
        m.files_not_on_disk().expect("files"),
        std::slice::from_ref(&stored_as)
    );
    let again = ingest(&m, dir.path());
    assert_eq!(again.removed_files, [stored_as], "gone again");
    assert_eq!(line_of(&m, "Doomed"), None);

    m.rollback(&snap.seq.to_string()).expect("rollback");
    std::fs::write(&gone, "* Doomed\n").expect("written back");
    let kept = ingest(&m, dir.path());
    assert!(kept.removed_files.is_empty(), "{kept:?}");
    assert!(m.files_not_on_disk().expect("files").is_empty());
    assert_eq!(line_of(&m, "Doomed"), Some(1));
}

/// A 2 MB title: `memory-query` answered with one 2 MB line, over the tool's 1 MiB output cap,
/// so the whole query failed. Its line now shows the start of the title and how much more
/// there is.
#[test]
fn a_huge_title_does_not_sink_memory_query() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("big.org"),
        format!("* {}\n* Small\n", "t".repeat(2 << 20)),
    )
    .expect("write");
    let m = std::sync::Arc::new(store());
    ingest(&m, dir.path());
    let (plugin, _rt, _s) = memory_plugin(&m, "read");
    let out = plugin
        .call_tool("memory-query", "{}")
        .expect("the query answers");
    assert!(out.len() < 4096, "{}", out.len());
    assert!(
        out.contains("more bytes; memory-get shows the whole title") && out.contains("Small"),
        "{out}"
    );
}

/// `memory-assign-id` with `"  ID  "`: the gates are shown `ID` (as the tool reads it), and
/// the host lets the call write that headline, the one the tool writes.
#[test]
fn a_padded_id_is_the_headline_the_gates_see_and_the_tool_writes() {
    let m = std::sync::Arc::new(store());
    ingest(&m, &corpus());
    let derived = m
        .query(&Query {
            missing_id: true,
            limit: Some(1),
            ..Query::default()
        })
        .expect("query")
        .remove(0);
    let (plugin, _rt, _s) = memory_plugin(&m, "read-write");
    let args = serde_json::json!({ "id": format!("  {}  ", derived.id) });
    let catalog = passepartout::runtime::effects::Catalog::new([&plugin]);
    let action = passepartout::signal::Action {
        target: "tool".into(),
        tool: Some("memory-assign-id".into()),
        args: args.as_object().cloned().unwrap_or_default(),
        ..passepartout::signal::Action::default()
    };
    assert_eq!(
        catalog.context(&action).effects.memory_writes,
        std::slice::from_ref(&derived.id)
    );
    plugin
        .call_tool("memory-assign-id", &args.to_string())
        .expect("the declared headline is written");
    assert!(!m.get(&derived.id).expect("get").expect("there").derived_id);
}

/// The value of property `key` of headline `id` at the head.
fn property(m: &Memory, id: &str, key: &str) -> Option<String> {
    m.get(id)
        .expect("get")
        .unwrap_or_else(|| panic!("no headline {id}"))
        .properties
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// A plugin with read-write memory sets a property and gives a headline an ID of its own (not
/// another headline's: that is refused); a rollback to before takes both back for good: the
/// next auto-save ingest lays neither over the files again. The rollback's own snapshot brings
/// them back, and a setting the operator forgets stays forgotten.
#[test]
fn a_rollback_takes_set_properties_back_from_later_ingests_too() {
    let copy = corpus_copy();
    let m = store();
    ingest(&m, copy.path());
    let before = m.snapshot("before the plugin").expect("snapshot");
    let mixer = title_id(&m, "Rent a concrete mixer");
    m.set_property("proj-shed", "STATUS", "late").expect("set");
    let taken = m
        .set_property(&mixer, "ID", "shed-timber")
        .expect_err("the timber's ID is the timber's");
    assert!(
        taken.to_string().contains("already the headline's at")
            && taken.to_string().contains("projects.org:"),
        "{taken}"
    );
    m.set_property(&mixer, "ID", "mixer-1")
        .expect("an ID of its own");
    m.rollback(&before.seq.to_string()).expect("rollback");
    ingest(&m, copy.path());
    assert_eq!(
        m.root(),
        before.root,
        "the files, with nothing laid over them"
    );
    assert_eq!(property(&m, "proj-shed", "STATUS"), None);
    assert!(m.get(&mixer).expect("get").expect("its own ID").derived_id);
    assert!(m.property_settings().expect("settings").is_empty());

    // Undoing the rollback brings the settings back with the root.
    let undo = m
        .snapshots()
        .expect("list")
        .into_iter()
        .find(|s| s.reason.starts_with("before rollback"))
        .expect("the rollback's snapshot");
    m.rollback(&undo.seq.to_string())
        .expect("undo the rollback");
    ingest(&m, copy.path());
    assert_eq!(property(&m, "proj-shed", "STATUS").as_deref(), Some("late"));
    assert!(m.get(&mixer).expect("get").is_none(), "moved again");
    assert_eq!(m.property_settings().expect("settings").len(), 2);

    // The operator forgets one: later ingests read the file as it is.
    assert!(m.forget_property("proj-shed", "status").expect("forget"));
    assert!(!m.forget_property("proj-shed", "status").expect("forget"));
    ingest(&m, copy.path());
    assert_eq!(property(&m, "proj-shed", "STATUS"), None);
    assert_eq!(
        m.property_settings().expect("settings"),
        [(mixer, "ID".to_owned(), "mixer-1".to_owned())]
    );
}

/// The pipeline's undo of a failing tool (`rollback_after` calls `restore_if` with the root
/// the tool left) takes back the tool's write, and nothing written by anyone else meanwhile:
/// another handle on the database (the CLI), another session's tool on this handle, or a
/// write after the tool.
#[test]
fn the_undo_of_a_failed_tool_keeps_what_others_wrote_meanwhile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("memory.db");
    let daemon = Memory::open(&db, MemoryConfig::default()).expect("open");
    ingest(&daemon, &corpus());
    let cli = Memory::open(&db, MemoryConfig::default()).expect("a second handle");

    // The tool alone wrote: undone.
    let undo = daemon.undo_point("before tool t").expect("undo point");
    daemon
        .set_property("proj-shed", "STATUS", "tool")
        .expect("the tool writes");
    let left = daemon.root();
    assert!(daemon.restore_if(&undo, &left).expect("restore"));
    assert_eq!(daemon.root(), undo.root);
    assert_eq!(property(&daemon, "proj-shed", "STATUS"), None);
    drop(undo);

    // Another handle wrote while the tool ran: the head is the root the tool left, and
    // moving it back would lose the other write.
    let undo = daemon.undo_point("before tool t").expect("undo point");
    daemon
        .set_property("proj-shed", "STATUS", "tool")
        .expect("the tool writes");
    cli.set_property("shed-foundation", "NOTE", "other")
        .expect("the CLI writes");
    let left = daemon.root();
    assert!(!daemon.restore_if(&undo, &left).expect("restore_if"));
    assert_eq!(
        property(&daemon, "shed-foundation", "NOTE").as_deref(),
        Some("other")
    );
    drop(undo);

    // Another session's tool wrote through this handle while this one's ran.
    let mine = daemon.undo_point("before tool a").expect("undo point");
    let theirs = daemon.undo_point("before tool b").expect("undo point");
    daemon
        .set_property("proj-shed", "OWNER", "b")
        .expect("their tool writes");
    drop(theirs);
    let left = daemon.root();
    assert!(!daemon.restore_if(&mine, &left).expect("restore_if"));
    assert_eq!(
        property(&daemon, "proj-shed", "OWNER").as_deref(),
        Some("b")
    );
    drop(mine);

    // A write after the tool: the head is no longer the root the tool left.
    let undo = daemon.undo_point("before tool t").expect("undo point");
    daemon
        .set_property("proj-shed", "STATUS", "tool again")
        .expect("the tool writes");
    let left = daemon.root();
    cli.set_property("shed-foundation", "NOTE", "later")
        .expect("the CLI writes");
    assert!(!daemon.restore_if(&undo, &left).expect("restore_if"));
    assert_eq!(
        property(&daemon, "shed-foundation", "NOTE").as_deref(),
        Some("later")
    );
    assert_eq!(
        property(&daemon, "proj-shed", "STATUS").as_deref(),
        Some("tool again")
    );
}

/// A database whose settings were kept unversioned (`memory_overrides`) keeps them, in force
/// at the head and at every older snapshot.
#[test]
fn settings_of_an_older_database_are_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("memory.db");
    let seq = {
        let m = Memory::open(&db, MemoryConfig::default()).expect("open");
        ingest(&m, &corpus());
        m.snapshot("old").expect("snapshot").seq
    };
    {
        let conn = rusqlite::Connection::open(&db).expect("sqlite");
        conn.execute_batch(
            "CREATE TABLE memory_overrides (id TEXT NOT NULL, key TEXT NOT NULL,
                 value TEXT NOT NULL, PRIMARY KEY (id, key)) WITHOUT ROWID;
             INSERT INTO memory_overrides VALUES ('proj-shed', 'STATUS', 'late');",
        )
        .expect("old table");
    }
    let m = Memory::open(&db, MemoryConfig::default()).expect("reopen");
    m.rollback(&seq.to_string()).expect("rollback");
    ingest(&m, &corpus());
    assert_eq!(property(&m, "proj-shed", "STATUS").as_deref(), Some("late"));
}

#[test]
fn the_store_and_the_spend_log_it_creates_are_their_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("data/passepartout");
    let db = dir.join("memory.db");
    drop(Memory::open(&db, MemoryConfig::default()).expect("open"));
    assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
    let spend = tmp.path().join("other/spend.db");
    drop(passepartout::providers::spend::SpendLog::open(&spend).expect("spend log"));
    assert_eq!(mode(&spend), 0o600);
    assert_eq!(mode(&tmp.path().join("other")), 0o700);
}
