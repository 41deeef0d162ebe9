//! The JavaScript gate (componentize-js, `tests/plugins/email-gate-js`) under the runtime: its
//! cases as `plugin test` runs them, and the verdicts of its Rust twin
//! (`tests/plugins/email-twin`) on those cases and on generated replies.

use passepartout::cases::{self, CaseFile};
use passepartout::runtime::effects::Catalog;
use passepartout::runtime::types::{Action, Verdict};
use passepartout::runtime::{Plugin, Policy};
use passepartout_tests::{
    EMAIL_GATE_JS_MANIFEST, EMAIL_GATE_JS_WASM, EMAIL_TWIN_MANIFEST, EMAIL_TWIN_WASM, source,
};
use proptest::prelude::*;

use crate::{fresh_runtime, signal};

/// The JavaScript gate and its twin, loaded as an operator would (no grants: gates get none).
fn gates() -> (Plugin, Plugin, tempfile::TempDir) {
    let (rt, scratch) = fresh_runtime();
    let load = |wasm, manifest| {
        rt.load(&source(wasm, manifest, |m| m), &Policy::default())
            .expect("loads")
    };
    (
        load(EMAIL_GATE_JS_WASM, EMAIL_GATE_JS_MANIFEST),
        load(EMAIL_TWIN_WASM, EMAIL_TWIN_MANIFEST),
        scratch,
    )
}

fn case_file() -> CaseFile {
    CaseFile::read(&std::path::Path::new(EMAIL_GATE_JS_MANIFEST).with_file_name("cases.json"))
        .expect("the JavaScript gate's cases.json")
}

fn reply(text: &str) -> Action {
    Action {
        target: "telegram".into(),
        tool: None,
        args: "{}".into(),
        text: Some(text.into()),
        explanation: None,
    }
}

#[test]
fn the_javascript_gate_passes_its_cases_as_plugin_test_runs_them() {
    let (js, twin, _scratch) = gates();
    let file = case_file();
    let catalog = Catalog::new(std::iter::empty());
    for gate in [&js, &twin] {
        let outcomes = cases::run(gate, &catalog, &file);
        assert!(outcomes.len() >= 7);
        assert!(cases::all_ok(&outcomes), "{}: {outcomes:#?}", gate.id.name);
    }
}

#[test]
fn the_javascript_gate_gives_the_verdicts_of_its_rust_twin() {
    let (js, twin, _scratch) = gates();
    let check = |gate: &Plugin, text: &str| gate.check(&reply(text), &signal()).expect("answers");
    // Replies made of words, addresses, near-addresses and other scripts.
    let piece = prop_oneof![
        Just("ada@example.org".to_owned()),
        Just("a.b+c@mail.example.co.uk".to_owned()),
        Just("x@y.z".to_owned()),
        Just("me@localhost".to_owned()),
        Just("@".to_owned()),
        Just(".".to_owned()),
        Just("é@ü.de".to_owned()),
        "[a-z0-9._%+-]{0,6}@[a-z0-9.-]{0,8}",
        "[ a-zA-Z0-9]{0,10}",
        "\\PC{0,4}",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    });
    runner
        .run(&proptest::collection::vec(piece, 0..6), |pieces| {
            let text = pieces.join(" ");
            let (a, b) = (check(&js, &text), check(&twin, &text));
            prop_assert_eq!(&a, &b, "the two disagree on {:?}", text);
            if text.contains("ada@example.org") {
                prop_assert!(matches!(a, Verdict::RequireApproval(_)), "{:?}", text);
            }
            Ok(())
        })
        .expect("the JavaScript gate and its Rust twin agree");
}
