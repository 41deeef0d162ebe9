//! `passepartout status` and `passepartout doctor`.

use std::process::ExitCode;

use passepartout::approvals::Approvals;
use passepartout::providers::breaker::ProviderHealth;
use passepartout::providers::spend::SpendLog;
use serde_json::json;

use super::{Common, Loaded};

pub fn status(loaded: Loaded, common: &Common, json_out: bool) -> anyhow::Result<ExitCode> {
    let journal = super::journal::open(common)?;
    let db = common.db.clone().or_else(passepartout::dirs::database);
    let spend = match &db {
        Some(path) => SpendLog::open(path)?.totals()?,
        None => Vec::new(),
    };
    let pending = Approvals::new(&journal)?.count()?;
    let records = journal.count()?;
    let plugins = loaded.report.plugins.len();
    let reached = super::daemon::reach_status(common);
    let daemon_error = reached.as_ref().err().map(|e| format!("{e:#}"));
    let daemon = reached.ok().flatten();
    let prices = loaded.settings.providers().prices;
    let dollars: Vec<f64> = spend.iter().map(|r| r.dollars(&prices)).collect();
    if json_out {
        let spend: Vec<_> = spend
            .iter()
            .zip(&dollars)
            .map(|(r, d)| {
                let mut row = json!(r);
                row["cost"] = json!(d);
                row
            })
            .collect();
        let mut status = json!({ "daemon": daemon, "spend": spend, "pending_approvals": pending, "journal_records": records, "plugins": plugins });
        if let Some(e) = &daemon_error {
            status["daemon_error"] = json!(e);
        }
        outln!("{}", serde_json::to_string_pretty(&status)?);
        return Ok(ExitCode::SUCCESS);
    }
    match &daemon {
        Some(d) => {
            outln!(
                "daemon: {}, up {} s, plugin set {}",
                d.health,
                d.uptime_secs,
                d.plugin_set
            );
            if let Some(e) = &d.reload.last_error {
                outln!("daemon: the last reload failed, so it runs the previous set: {e}");
            }
            for g in &d.missing_gates {
                outln!("daemon: gate {g} did not load: every action is refused");
            }
            for p in &d.providers {
                outln!("daemon: provider {}: {}", p.provider, health_line(p));
            }
        }
        None => match &daemon_error {
            Some(e) => outln!("daemon: {}", not_answering(e)),
            None => outln!("daemon: not running"),
        },
    }
    outln!(
        "plugins loaded: {plugins}; journal: {records} records; waiting for approval: {pending}"
    );
    if spend.is_empty() {
        outln!("no model has been called yet");
    }
    for (r, d) in spend.iter().zip(&dollars) {
        outln!(
            "{:<12} {:<24} {:>5} calls {:>9} in {:>9} out  ${d:.4}",
            r.provider,
            r.model,
            r.calls,
            r.input_tokens,
            r.output_tokens
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A provider's breaker in words.
fn health_line(p: &ProviderHealth) -> String {
    match (p.state.as_str(), p.retry_in_secs, &p.why) {
        ("open", Some(s), Some(why)) => format!("left alone for {s} s more after: {why}"),
        ("probing", _, Some(why)) => format!("one request is trying it again after: {why}"),
        (state, ..) => state.to_owned(),
    }
}

/// What `status` and `doctor` say of a daemon that listens and does not answer this client.
fn not_answering(why: &str) -> String {
    format!("something listens where the daemon should be, but: {why}")
}

/// One check: ok, or a problem that degrades or breaks the daemon.
fn check(name: &str, result: Result<String, String>, breaks: bool) -> serde_json::Value {
    match result {
        Ok(detail) => json!({ "check": name, "status": "ok", "detail": detail }),
        Err(detail) => {
            json!({ "check": name, "status": if breaks { "unhealthy" } else { "degraded" }, "detail": detail })
        }
    }
}

/// How an MCP server of gateway mode is doing: running with its tools approved, or what is
/// wrong (restarting, with why; tools waiting for the operator's approval).
fn mcp_server_line(
    s: &passepartout::gateway::ServerStatus,
    common: &Common,
) -> Result<String, String> {
    let pins = common
        .places()
        .mcp_pins_file()
        .and_then(|p| passepartout::gateway::pins::Pins::load(&p).ok())
        .unwrap_or_default();
    let waiting = s
        .tools
        .iter()
        .filter(|t| !pins.approves(&s.name, t))
        .count();
    let restarts = if s.restarts > 0 {
        format!(
            "; restarted {} time(s), last because {}",
            s.restarts,
            s.last_error.as_deref().unwrap_or("it stopped")
        )
    } else {
        String::new()
    };
    match s.state {
        passepartout::gateway::server::State::Running if waiting == 0 => Ok(format!(
            "running, {} tool(s) offered{restarts}",
            s.tools.len()
        )),
        passepartout::gateway::server::State::Running => Err(format!(
            "running; {waiting} of its {} tool(s) wait for approval (`passepartout mcp pin {}`){restarts}",
            s.tools.len(),
            s.name
        )),
        _ => Err(format!(
            "not running ({}){restarts}",
            s.last_error.as_deref().unwrap_or("starting")
        )),
    }
}

pub fn doctor(loaded: Loaded, common: &Common, json_out: bool) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let errors: Vec<String> = loaded
        .report
        .errors
        .iter()
        .map(ToString::to_string)
        .collect();
    checks.push(check(
        "plugins",
        if errors.is_empty() {
            Ok(format!("{} loaded", loaded.report.plugins.len()))
        } else {
            Err(errors.join("; "))
        },
        false,
    ));
    let missing: Vec<String> = loaded
        .report
        .missing_gates
        .iter()
        .map(|m| format!("{}: {}", m.name, m.why))
        .collect();
    checks.push(check(
        "gates",
        if missing.is_empty() {
            Ok("every gate loaded".into())
        } else {
            Err(format!(
                "every action is refused until these gates load or are disabled with \
                 `[plugins.NAME] enabled = false` in policy.toml: {}",
                missing.join("; ")
            ))
        },
        true,
    ));
    let reached = super::daemon::reach_status(common);
    if let Ok(Some(d)) = &reached {
        let reload_error = d.reload.last_error.as_ref().map(|e| {
            format!("the last reload failed, so the daemon runs the previous plugin set: {e}")
        });
        checks.push(check(
            "daemon",
            reload_error.map_or_else(|| Ok(format!("running plugin set {}", d.plugin_set)), Err),
            false,
        ));
        for p in &d.providers {
            let line = health_line(p);
            checks.push(check(
                &format!("daemon's provider {}", p.provider),
                if p.state == "closed" {
                    Ok(line)
                } else {
                    Err(line)
                },
                false,
            ));
        }
        for s in &d.mcp_servers {
            checks.push(check(
                &format!("MCP server {}", s.name),
                mcp_server_line(s, common),
                false,
            ));
        }
        for p in &d.mcp_problems {
            checks.push(check("MCP effects", Err(p.clone()), false));
        }
    } else if let Err(e) = &reached {
        checks.push(check(
            "daemon",
            Err(not_answering(&format!("{e:#}"))),
            false,
        ));
    } else if !loaded.settings.mcp.servers.is_empty() {
        checks.push(check(
            "MCP servers",
            Err("no daemon runs them: start it with `passepartout daemon`".into()),
            false,
        ));
    }
    let db = common.db.clone().or_else(passepartout::dirs::database);
    checks.push(check(
        "database",
        match &db {
            Some(path) => passepartout::journal::Journal::open(path)
                .and_then(|j| j.records(Some(1)).map(|_| ()))
                .map(|()| format!("{} is writable", path.display()))
                .map_err(|e| format!("{}: {e}", path.display())),
            None => Err("no data directory: pass --db FILE".into()),
        },
        true,
    ));
    match common.places().cascade(&loaded.settings) {
        Ok(cascade) => {
            for e in cascade.endpoints() {
                let result = match passepartout::blocking::wait(e.probe()) {
                    Ok(code) if code < 400 => Ok(format!(
                        "{} reachable (HTTP {code}), model {}",
                        e.base_url, e.model
                    )),
                    Ok(code) if code == 401 || code == 403 => Err(format!(
                        "{} answers HTTP {code}: check its API key",
                        e.base_url
                    )),
                    Ok(code) => Err(format!("{} answers HTTP {code}", e.base_url)),
                    Err(err) => Err(format!("{}: {err}", e.base_url)),
                };
                checks.push(check(&format!("provider {}", e.name), result, false));
            }
        }
        Err(e) => checks.push(check("providers", Err(format!("{e:#}")), false)),
    }
    let worst = if checks.iter().any(|c| c["status"] == "unhealthy") {
        "unhealthy"
    } else if checks.iter().any(|c| c["status"] == "degraded") {
        "degraded"
    } else {
        "healthy"
    };
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "health": worst, "checks": checks }))?
        );
    } else {
        for c in &checks {
            outln!(
                "{:<10} {:<22} {}",
                c["status"].as_str().unwrap_or(""),
                c["check"].as_str().unwrap_or(""),
                c["detail"].as_str().unwrap_or("")
            );
        }
        outln!("{worst}");
    }
    Ok(if worst == "unhealthy" {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
