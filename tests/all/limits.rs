//! Every limit stops a runaway plugin with an error naming the plugin, its version and the
//! limit; the host keeps serving and the plugin's next call succeeds.

use std::time::{Duration, Instant};

use passepartout::runtime::{Limit, PluginError};

use crate::{fresh_runtime, hostile_tool, still_serves};

fn named(err: &PluginError) -> String {
    let text = err.to_string();
    assert!(
        text.contains("plugin \"hostile-tool\" 6.6.6"),
        "error must name the plugin and version: {text}"
    );
    text
}

#[test]
fn infinite_loop_is_stopped_by_the_deadline() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { spin = 200 }\n",
    );
    let start = Instant::now();
    let err = tool.call_tool("spin", "{}").expect_err("must not return");
    assert!(
        matches!(err, PluginError::TimedOut { timeout, .. } if timeout == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "stopped promptly: {:?}",
        start.elapsed()
    );
    assert!(named(&err).contains("timed out after 200 ms"));
    assert_eq!(err.limit(), Some(Limit::Timeout));
    still_serves(&tool);
}

#[test]
fn infinite_loop_is_stopped_by_fuel() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "[plugins.hostile-tool.limits]\nfuel = 50_000_000\n");
    let err = tool.call_tool("spin", "{}").expect_err("must not return");
    assert!(
        matches!(
            err,
            PluginError::OutOfFuel {
                fuel: 50_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(named(&err).contains("ran out of fuel"));
    still_serves(&tool);
}

#[test]
fn memory_growth_stops_at_the_cap() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "[plugins.hostile-tool.limits]\nmemory_mib = 24\n");
    let err = tool.call_tool("grow", "{}").expect_err("must not return");
    assert!(
        matches!(err, PluginError::OutOfMemory { cap_bytes, .. } if cap_bytes == 24 << 20),
        "{err:?}"
    );
    assert!(named(&err).contains("memory cap of 24 MiB"));
    still_serves(&tool);
}

#[test]
fn unbounded_recursion_overflows_the_stack_only() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "");
    let err = tool
        .call_tool("recurse", "{}")
        .expect_err("must not return");
    assert!(matches!(err, PluginError::StackOverflow { .. }), "{err:?}");
    still_serves(&tool);
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "");
    let err = tool.call_tool("panic", "{}").expect_err("must not return");
    match &err {
        PluginError::Panicked { message, .. } => assert!(
            message.contains("hostile plugin panics on purpose"),
            "{message}"
        ),
        other => panic!("expected a panic, got {other:?}"),
    }
    named(&err);
    still_serves(&tool);
}

#[test]
fn a_50_mb_output_or_error_text_is_refused() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "");
    // An error's text is held to the same cap: it reaches the journal and the model too.
    // Refused before the host copied it: a tool may hand the host 16 MiB at once (an
    // action's arguments, passed on), and the error says that bound, not the 50 MB.
    for huge in ["huge", "huge-error"] {
        let err = tool.call_tool(huge, "{}").expect_err("must be refused");
        assert!(
            matches!(err, PluginError::TooMuchAtOnce { budget, cap, .. } if cap == 1 << 20 && budget > 16 << 20 && budget < 50_000_000),
            "{huge}: {:.200}",
            format!("{err:?}")
        );
        assert_eq!(err.limit(), Some(Limit::Output));
    }
    still_serves(&tool);
}

#[test]
fn one_plugin_failing_does_not_disturb_calls_on_other_threads() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { spin = 300 }\n",
    );
    std::thread::scope(|s| {
        let spinner = s.spawn(|| tool.call_tool("spin", "{}"));
        for i in 0..20 {
            let out = tool
                .call_tool("echo", &format!(r#"{{"text":"call {i}"}}"#))
                .expect("echo");
            assert_eq!(out, format!("call {i}"));
        }
        let err = spinner.join().expect("thread").expect_err("spin times out");
        assert!(matches!(err, PluginError::TimedOut { .. }));
    });
}

#[test]
fn deadlines_still_fire_after_the_runtime_is_dropped() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { spin = 100 }\n",
    );
    drop(rt); // the plugin keeps the epoch ticker alive
    let err = tool.call_tool("spin", "{}").expect_err("must not return");
    assert!(matches!(err, PluginError::TimedOut { .. }), "{err:?}");
}

#[test]
fn describe_has_a_short_budget_that_no_manifest_or_policy_raises() {
    let (rt, _cache) = crate::fresh_runtime();
    let src = passepartout_tests::source(
        passepartout_tests::HOSTILE_TOOL_WASM,
        passepartout_tests::HOSTILE_TOOL_MANIFEST,
        |m| {
            format!(
                "{}\n[config]\nspin_in_describe = true\n",
                m.replace("memory_mib = 96", "memory_mib = 96\ntimeout_ms = 3_600_000")
            )
        },
    );
    let policy = passepartout::runtime::Policy::parse(
        "[plugins.hostile-tool]\nlimits = { timeout_ms = 3_600_000 }\n",
    )
    .expect("policy");
    let start = std::time::Instant::now();
    let err = rt.load(&src, &policy).err().expect("refused");
    let took = start.elapsed();
    assert!(
        took < std::time::Duration::from_secs(3),
        "describe ran {took:?}"
    );
    let err = err.to_string();
    assert!(
        err.contains("describe failed") && err.contains("hostile-tool"),
        "{err}"
    );
}

/// The canonical ABI lets a guest return many strings that are all the same bytes of its
/// memory: a list of 100,000 tools whose description and schema are one 32 MiB string asks the
/// host for 6 TiB of copies while the guest holds 32 MiB. wasmtime's hostcall fuel (what a host
/// reads from a guest at a time: for a tool plugin's describe, its 64 tools at every cap of
/// `tools::check`, ~4.4 MiB) refuses it; the load fails, naming the plugin, and nothing else is
/// taken down.
#[test]
fn a_describe_whose_strings_all_alias_one_buffer_is_refused_not_copied() {
    let (rt, _cache) = crate::fresh_runtime();
    let src = passepartout_tests::source(
        passepartout_tests::HOSTILE_TOOL_WASM,
        passepartout_tests::HOSTILE_TOOL_MANIFEST,
        |m| format!("{m}\n[config]\naliased = 100_000\n"),
    );
    let err = rt
        .load(&src, &passepartout::runtime::Policy::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("describe failed")
            && err.contains("hostile-tool")
            && err.contains("too much data is being copied"),
        "{err}"
    );
    // The runtime goes on: the same plugin loads without that configuration.
    crate::still_serves(&crate::hostile_tool(&rt, ""));
}

#[test]
fn a_flood_of_one_tool_leaves_gates_and_other_tools_working() {
    let (rt, _cache) = crate::fresh_runtime();
    let flood = rt
        .load(
            &passepartout_tests::source(
                passepartout_tests::HOSTILE_TOOL_WASM,
                passepartout_tests::HOSTILE_TOOL_MANIFEST,
                |m| m,
            ),
            &passepartout::runtime::Policy::parse(
                "[plugins.hostile-tool]\nlimits = { timeout_ms = 2000 }\n",
            )
            .expect("policy"),
        )
        .expect("loads");
    let report = rt.load_all(
        &crate::builtins(&["eval", "shell-guard"]),
        &passepartout::runtime::Policy::default(),
    );
    let (eval, guard) = (&report.plugins[1], &report.plugins[0]);
    let busy = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..20 {
            s.spawn(|| match flood.call_tool("spin", "{}") {
                Err(PluginError::Busy { plugin, why }) => {
                    assert_eq!(plugin.name, "hostile-tool");
                    assert!(why.contains("hostile-tool (16 calls"), "{why}");
                    busy.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                Err(PluginError::TimedOut { .. }) => {}
                other => panic!("a spinning call ends at its deadline or waits: {other:?}"),
            });
        }
        // While the flood spins, a gate and another tool still run, without waiting.
        std::thread::sleep(Duration::from_millis(300));
        let start = std::time::Instant::now();
        let verdict = guard
            .check(
                &crate::action("shell", serde_json::json!({"cmd": "ls"})),
                &crate::signal(),
            )
            .expect("the gate runs");
        assert_eq!(verdict, passepartout::runtime::types::Verdict::Pass);
        let out = eval
            .call_tool("eval", r#"{"expression":"(+ 1 2)"}"#)
            .expect("another tool runs");
        assert!(out.contains('3'), "{out}");
        assert!(
            start.elapsed() < Duration::from_millis(1000),
            "the others waited {:?} for room",
            start.elapsed()
        );
    });
    // Calls past the plugin's cap waited for room (up to their deadline) and, if none came,
    // were refused naming the holder; they never ran more than 16 at once.
    assert!(
        busy.load(std::sync::atomic::Ordering::SeqCst)
            <= 20 - passepartout::runtime::share::PER_PLUGIN
    );
}

#[test]
fn a_plugin_filling_its_stderr_is_told_so_in_one_line() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(&rt, "");
    let err = tool.call_tool("shout", "{}").expect_err("stderr is capped");
    let text = named(&err);
    assert!(text.contains("more than 64 KiB to stderr"), "{text}");
    assert!(
        !text.contains("backtrace") && !text.contains('\n'),
        "{text}"
    );
    still_serves(&tool);
}

#[test]
fn the_policy_s_concurrency_serialises_a_plugin_s_calls() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\nconcurrency = 1\ntool_timeout_ms = { sleep = 3000 }\n",
    );
    assert_eq!(tool.limits.concurrency, 1);
    std::thread::scope(|s| {
        s.spawn(|| tool.call_tool("sleep", r#"{"ms":"400"}"#).expect("sleeps"));
        std::thread::sleep(Duration::from_millis(50));
        let start = Instant::now();
        still_serves(&tool);
        assert!(
            start.elapsed() >= Duration::from_millis(250),
            "the second call waited for the first: {:?}",
            start.elapsed()
        );
    });
}
