//! Hard deadlines: a call ends at its deadline even while the guest is blocked inside a host
//! call (a WASI sleep), where epoch interruption cannot reach it. The hostile parts: a tool
//! that sleeps an hour, a skill whose `triggers` sleeps an hour, a tool sleeping in `describe`.

use std::time::{Duration, Instant};

use passepartout::runtime::{Deadlines, PluginError, Policy};
use passepartout_tests::{ECHO_SKILL_MANIFEST, ECHO_SKILL_WASM, runtime_with, source};

use crate::{fresh_runtime, hostile_tool, signal, still_serves};

/// How far past its deadline a call may end: the issue's bound.
const SLACK: Duration = Duration::from_millis(100);

fn ends_at(deadline: Duration, took: Duration, what: &str) {
    assert!(
        took >= deadline && took <= deadline + SLACK,
        "{what} ended after {took:?}; its deadline was {deadline:?} (allowed {SLACK:?} past it)"
    );
}

#[test]
fn a_tool_sleeping_in_a_host_call_ends_at_its_deadline() {
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { sleep = 300 }\n",
    );
    for _ in 0..3 {
        let start = Instant::now();
        let err = tool
            .call_tool("sleep", r#"{"ms":"3600000"}"#)
            .expect_err("an hour's sleep must not return");
        ends_at(
            Duration::from_millis(300),
            start.elapsed(),
            "the sleeping tool",
        );
        assert!(
            matches!(err, PluginError::TimedOut { timeout, .. } if timeout == Duration::from_millis(300)),
            "{err:?}"
        );
        assert!(err.to_string().contains("timed out after 300 ms"), "{err}");
    }
    // The dropped call left nothing behind: the next call gets a fresh instance.
    still_serves(&tool);
    assert_eq!(
        tool.call_tool("sleep", r#"{"ms":"10"}"#)
            .expect("a short sleep"),
        "slept"
    );
}

#[test]
fn a_sleeping_triggers_ends_at_its_deadline() {
    let (rt, _cache) = fresh_runtime();
    let policy =
        Policy::parse("[plugins.echo-skill]\nlimits = { timeout_ms = 300 }\n").expect("policy");
    let skill = rt
        .load(
            &source(ECHO_SKILL_WASM, ECHO_SKILL_MANIFEST, |m| m),
            &policy,
        )
        .expect("skill loads");
    let mut sleepy = signal();
    sleepy.text = Some("#sleep for an hour".into());
    let start = Instant::now();
    let err = skill
        .skill_triggers(&sleepy)
        .expect_err("an hour's sleep must not return");
    ends_at(
        Duration::from_millis(300),
        start.elapsed(),
        "the sleeping triggers()",
    );
    assert!(matches!(err, PluginError::TimedOut { .. }), "{err:?}");
    // The same skill still answers other signals.
    let mut echo = signal();
    echo.text = Some("#echo hi".into());
    assert!(skill.skill_triggers(&echo).expect("triggers"));
}

/// A describe that waits (it burns no fuel, as a starved one) is tried once more, then refused:
/// the load waits twice the deadline, no longer.
#[test]
fn a_tool_sleeping_in_describe_is_refused_within_the_load_budget() {
    let (rt, _cache) = fresh_runtime();
    let start = Instant::now();
    let err = rt
        .load(
            &source(
                passepartout_tests::HOSTILE_TOOL_WASM,
                passepartout_tests::HOSTILE_TOOL_MANIFEST,
                |m| format!("{m}\n[config]\nsleep_in_describe_ms = 3600000\n"),
            ),
            &Policy::default(),
        )
        .err()
        .expect("a describe that sleeps an hour is refused");
    let took = start.elapsed();
    let deadline = passepartout::runtime::limits::DESCRIBE_TIMEOUT;
    assert!(
        took >= 2 * deadline && took < 2 * deadline + Duration::from_millis(500),
        "refused after {took:?}: one try and one more"
    );
    assert!(err.to_string().contains("timed out"), "{err}");
}

/// Why the hard path exists: the epoch path (kept only to measure the difference) lets a guest
/// blocked in a host call run past its deadline. If this starts failing, epochs reach into host
/// calls and the cost of the hard path should be weighed again.
#[test]
fn epoch_deadlines_alone_do_not_cut_a_host_call() {
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-cache");
    let rt = runtime_with(&cache, Deadlines::Epoch);
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { sleep = 100 }\n",
    );
    let start = Instant::now();
    let result = tool.call_tool("sleep", r#"{"ms":"1500"}"#);
    assert!(
        start.elapsed() >= Duration::from_millis(1500),
        "the epoch path cut a host call after {:?} ({result:?})",
        start.elapsed()
    );
}

#[test]
fn a_guest_computing_hard_gives_its_thread_back() {
    // One thread runs both: a tool spinning in its own code until its deadline, and a timer
    // due in 50 ms. A guest that never yields would keep the thread (and a daemon's worker)
    // to itself until its deadline: the timer would fire a second late.
    let (rt, _cache) = fresh_runtime();
    let tool = hostile_tool(
        &rt,
        "[plugins.hostile-tool.limits]\ntool_timeout_ms = { spin = 1000 }\n",
    );
    let executor = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let start = Instant::now();
    let (timer, spun) = executor.block_on(async {
        let timer = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            start.elapsed()
        };
        let spin = async {
            let result = tool.call_tool_async("spin", "{}").await;
            (result, start.elapsed())
        };
        tokio::join!(timer, spin)
    });
    assert!(
        timer < Duration::from_millis(300),
        "the timer fired after {timer:?}: the spinning guest held the thread"
    );
    let (result, took) = spun;
    assert!(result.is_err(), "a spin does not return: {result:?}");
    ends_at(Duration::from_millis(1000), took, "the spinning tool");
}
