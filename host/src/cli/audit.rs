//! `passepartout audit [diff OLD NEW]`.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use passepartout::audit::{self, DaemonPorts, Severity, render};
use passepartout::install::read_source;

use super::Setup;

/// Colours and the terminal's width when stdout is a terminal; neither otherwise.
fn looks() -> (bool, Option<usize>) {
    let terminal = std::io::stdout().is_terminal();
    (
        terminal,
        terminal.then(passepartout::terminal::width).flatten(),
    )
}

/// Print the audit's table. Raw: the table made what plugins wrote safe, and adds our colours.
pub fn print_table(report: &audit::AuditReport) {
    let (colour, width) = looks();
    super::out::raw(&render::table(report, colour, width));
}

/// Print an audit diff, as [`print_table`].
pub fn print_diff(d: &audit::diff::Diff) {
    let (colour, width) = looks();
    super::out::raw(&render::diff(d, colour, width));
}

/// Audit every installed plugin; exit 1 when a finding reaches `fail_on`.
pub fn run(
    setup: &Setup,
    places: &passepartout::agent::Places,
    json: bool,
    fail_on: Severity,
) -> anyhow::Result<ExitCode> {
    let pins = match places.mcp_pins_file() {
        Some(p) => passepartout::gateway::pins::Pins::load(&p)?,
        None => Default::default(),
    };
    let daemon = DaemonPorts::of(&setup.settings);
    let servers = audit::mcp::servers(
        &setup.settings.mcp.servers,
        &pins,
        &setup.policy.mcp,
        places.mcp_seen_dir().as_deref(),
        &daemon,
    );
    let report = audit::audit(&setup.runtime, &setup.sources, &setup.policy, &daemon)
        .with_mcp_servers(servers);
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
        super::out::raw(&passepartout::terminal::safe(&audit::mcp::render(
            &report.mcp_servers,
        )));
    }
    Ok(if report.worst().is_some_and(|w| w >= fail_on) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Audit two builds of a plugin and print what the new one changes; exit 1 when `fail_on`
/// is met.
pub fn diff(
    setup: &Setup,
    old: &Path,
    new: &Path,
    json: bool,
    fail_on: audit::diff::FailOn,
) -> anyhow::Result<ExitCode> {
    let (old_source, _) = read_source(old)?;
    let (new_source, _) = read_source(new)?;
    let daemon = DaemonPorts::of(&setup.settings);
    let old_audit = audit::audit_one(&setup.runtime, &old_source, &setup.policy, &daemon);
    let new_audit = audit::audit_one(&setup.runtime, &new_source, &setup.policy, &daemon);
    let d = audit::diff::diff(&old_audit, &new_audit);
    if json {
        outln!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print_diff(&d);
    }
    Ok(if fail_on.met(&d, &new_audit) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
