//! Gates are pure functions: any WASI call traps (reported as a denial naming the import), fuel
//! bounds them deterministically, and every failure names the gate. The pipeline counts any
//! error as a rejection (fail closed).

use passepartout::runtime::types::Verdict;
use passepartout::runtime::{Limit, PluginError};
use serde_json::json;

use crate::{action, fresh_runtime, hostile_gate, signal};

fn misbehave(what: &str) -> passepartout::runtime::types::Action {
    action("anything", json!({ "do": what }))
}

fn passes(gate: &passepartout::runtime::Plugin) {
    let v = gate
        .check(&misbehave("pass"), &signal())
        .expect("the next call succeeds");
    assert_eq!(v, Verdict::Pass);
}

#[test]
fn a_gate_that_tries_any_wasi_call_is_stopped_naming_the_import() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    // The environment a gate sees is empty: no capability, nothing learned.
    let verdict = gate.check(&misbehave("env"), &signal()).expect("env");
    assert_eq!(verdict, Verdict::Reject("HOME=Err(NotPresent)".into()));
    for (what, interface) in [
        ("read", "wasi:"),
        ("clock", "wasi:clocks/wall-clock"),
        ("random", "wasi:random"),
    ] {
        let err = gate.check(&misbehave(what), &signal()).expect_err(what);
        match &err {
            PluginError::Denied { plugin, import } => {
                assert_eq!(plugin.name, "hostile-gate");
                assert!(import.starts_with(interface), "{what}: {import}");
            }
            other => panic!("{what}: expected a denial, got {other:?}"),
        }
        assert!(
            err.to_string().contains("which it was not granted"),
            "{err}"
        );
        passes(&gate);
    }
}

/// Fresh instances share nothing: however the runtime resets a reused memory slot (the page scan
/// copies dirtied pages back from the image, also past the 32 regions one scan reports; the rest
/// is unmapped), a gate never sees what its earlier calls wrote, in zeroed memory or in data the
/// image initialised.
#[test]
fn a_gate_never_sees_what_its_earlier_calls_left_in_memory() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    for call in 0..40 {
        let verdict = gate
            .check(&misbehave("remember"), &signal())
            .expect("remember");
        assert_eq!(verdict, Verdict::Pass, "call {call}");
    }
    // The snoop does see a reused instance's memory: the check above can fail.
    let mut live = gate.live_gate().expect("a live instance");
    assert_eq!(
        live.check(&misbehave("remember"), &signal())
            .expect("first"),
        Verdict::Pass
    );
    assert_eq!(
        live.check(&misbehave("remember"), &signal())
            .expect("second"),
        Verdict::Reject("saw 1 earlier calls and 288 marked pages".into())
    );
}

#[test]
fn a_looping_gate_runs_out_of_fuel() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("spin"), &signal())
        .expect_err("loops");
    assert!(
        matches!(
            err,
            PluginError::OutOfFuel {
                fuel: 5_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.limit(), Some(Limit::Fuel));
    assert!(
        err.to_string()
            .starts_with("plugin \"hostile-gate\" 6.6.6: ran out of fuel"),
        "{err}"
    );
    passes(&gate);
}

#[test]
fn a_looping_gate_with_plenty_of_fuel_hits_its_deadline() {
    let (rt, _cache) = fresh_runtime();
    // The operator grants the fuel: a manifest alone cannot raise it.
    let policy = passepartout::runtime::Policy::parse(
        "[plugins.hostile-gate]\nlimits = { fuel = 1_000_000_000_000, timeout_ms = 100 }\n",
    )
    .expect("policy");
    let gate = rt
        .load(
            &passepartout_tests::source(
                passepartout_tests::HOSTILE_GATE_WASM,
                passepartout_tests::HOSTILE_GATE_MANIFEST,
                |m| m,
            ),
            &policy,
        )
        .expect("loads");
    let err = gate
        .check(&misbehave("spin"), &signal())
        .expect_err("loops");
    assert!(matches!(err, PluginError::TimedOut { .. }), "{err:?}");
    passes(&gate);
}

#[test]
fn a_gate_growing_memory_stops_at_its_cap() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("grow"), &signal())
        .expect_err("grows");
    assert!(
        matches!(err, PluginError::OutOfMemory { cap_bytes, .. } if cap_bytes == 16 << 20),
        "{err:?}"
    );
    passes(&gate);
}

#[test]
fn a_panicking_gate_says_what_it_said() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("panic"), &signal())
        .expect_err("panics");
    assert!(
        matches!(&err, PluginError::Panicked { message, .. } if message.contains("hostile gate panics on purpose")),
        "{err:?}"
    );
    passes(&gate);
}

#[test]
fn a_gate_panicking_through_std_s_own_hook_says_what_it_said() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("raw-panic"), &signal())
        .expect_err("panics");
    match &err {
        PluginError::Panicked { message, .. } => assert!(
            message.contains("raw gate panics through std's hook"),
            "{message}"
        ),
        other => panic!("expected the panic message, got {other:?}"),
    }
    passes(&gate);
}

/// Saying "panicked" is not a panic: a gate that logs and prints what a panic would, then
/// calls an import it was not granted, is reported as denied, naming the import.
#[test]
fn a_gate_that_only_says_it_panicked_is_reported_for_what_it_did() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("fake-panic"), &signal())
        .expect_err("denied");
    match &err {
        PluginError::Denied { import, .. } => assert!(import.starts_with("wasi:"), "{import}"),
        other => panic!("expected the denial, got {other:?}"),
    }
    passes(&gate);
}

#[test]
fn a_verdict_past_the_output_cap_is_refused() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let err = gate
        .check(&misbehave("huge"), &signal())
        .expect_err("too big");
    // Refused before the host copied the 1 MiB reason: the call may hand the host its 64 KiB
    // cap and little more, and the error says that bound, not a size it never read.
    assert!(
        matches!(err, PluginError::TooMuchAtOnce { budget, cap, .. } if cap == 64 << 10 && budget > cap && budget < 1 << 20),
        "{err:?}"
    );
    assert_eq!(err.limit(), Some(Limit::Output));
    passes(&gate);
}

#[test]
fn fuel_use_is_the_same_for_the_same_input_on_any_engine() {
    let (rt1, _c1) = fresh_runtime();
    let (rt2, _c2) = fresh_runtime();
    let a = misbehave("reject");
    let (v1, fuel1) = hostile_gate(&rt1, |m| m)
        .check_metered(&a, &signal())
        .expect("check");
    let (v2, fuel2) = hostile_gate(&rt1, |m| m)
        .check_metered(&a, &signal())
        .expect("check");
    let (v3, fuel3) = hostile_gate(&rt2, |m| m)
        .check_metered(&a, &signal())
        .expect("check");
    assert!(matches!(&v1, Verdict::Reject(r) if r.starts_with("rejected")));
    assert_eq!((&v1, fuel1), (&v2, fuel2));
    assert_eq!((&v1, fuel1), (&v3, fuel3));
    assert!(fuel1 > 0 && fuel1 < 5_000_000, "{fuel1}");
}

#[test]
fn a_reused_instance_gives_the_same_verdicts_and_recovers_from_a_trap() {
    let (rt, _cache) = fresh_runtime();
    let gate = hostile_gate(&rt, |m| m);
    let mut live = gate.live_gate().expect("instance");
    for _ in 0..3 {
        assert_eq!(
            live.check(&misbehave("pass"), &signal()).expect("pass"),
            Verdict::Pass
        );
    }
    assert!(matches!(
        live.check(&misbehave("spin"), &signal()),
        Err(PluginError::OutOfFuel { .. })
    ));
    assert_eq!(
        live.check(&misbehave("pass"), &signal())
            .expect("recovered"),
        Verdict::Pass
    );
}

#[test]
fn a_manifest_cannot_raise_its_own_limits() {
    let (rt, _cache) = fresh_runtime();
    let greedy = |m: String| {
        m.replace("fuel = 5_000_000", "fuel = 9_223_372_036_854_775_807")
            .replace("timeout_ms = 2000", "timeout_ms = 3_600_000")
            .replace("memory_mib = 16", "memory_mib = 1024")
            .replace("max_output_kib = 64", "max_output_kib = 65536")
    };
    let gate = hostile_gate(&rt, greedy);
    let l = &gate.limits;
    assert_eq!(
        l.gate_fuel,
        passepartout::runtime::limits::DEFAULT_GATE_FUEL
    );
    assert_eq!(
        l.timeout,
        passepartout::runtime::limits::DEFAULT_GATE_TIMEOUT
    );
    assert_eq!(l.memory_bytes, 16 << 20);
    assert_eq!(l.max_output_bytes, 1024 << 10);
    assert_eq!(l.capped.len(), 4, "{:?}", l.capped);
    // Spinning under the asked budget stops at the default one.
    let err = gate
        .check(&misbehave("spin"), &signal())
        .expect_err("loops");
    assert!(
        matches!(err, PluginError::OutOfFuel { fuel, .. } if fuel == passepartout::runtime::limits::DEFAULT_GATE_FUEL),
        "{err:?}"
    );
    // The operator's policy grants what it asks.
    let policy = passepartout::runtime::Policy::parse(
        "[plugins.hostile-gate]\nlimits = { memory_mib = 1024 }\n",
    )
    .expect("policy");
    let granted = rt
        .load(
            &passepartout_tests::source(
                passepartout_tests::HOSTILE_GATE_WASM,
                passepartout_tests::HOSTILE_GATE_MANIFEST,
                greedy,
            ),
            &policy,
        )
        .expect("loads");
    assert_eq!(granted.limits.memory_bytes, 1024 << 20);
    assert_eq!(granted.limits.capped.len(), 3);
}
