//! The audit as a table for people (coloured on a terminal, and fitted to its width). What a
//! plugin wrote (its name, version, tool names in findings) is made safe for the terminal
//! ([`crate::terminal::safe`]) and put on one line ([`one_line`]) before our colours are added.

use std::fmt::Write as _;

use super::diff::{Diff, Direction};
use super::{AuditReport, Severity};
use crate::runtime::manifest::Kind;

pub use crate::terminal::one_line;

fn paint(colour: bool, code: &str, text: &str) -> String {
    let text = one_line(text);
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.into_owned()
    }
}

fn severity(colour: bool, s: Severity) -> String {
    let (code, label) = match s {
        Severity::High => ("1;31", "HIGH"),
        Severity::Medium => ("33", "MEDIUM"),
        Severity::Low => ("36", "low"),
        Severity::Info => ("2", "info"),
    };
    paint(colour, code, label)
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        one_line(&v.join(", ")).into_owned()
    }
}

/// The report as text; with `width`, each line is wrapped to fit it.
pub fn table(report: &AuditReport, colour: bool, width: Option<usize>) -> String {
    let mut out = String::new();
    for p in &report.plugins {
        let kinds: Vec<String> = p
            .kinds
            .iter()
            .map(|k| format!("{k:?}").to_lowercase())
            .collect();
        let _ = writeln!(
            out,
            "{} {} [{}]  {}  wit {}  sha256 {}",
            paint(colour, "1", &p.name),
            one_line(&p.version),
            kinds.join(", "),
            one_line(&p.origin.to_string()),
            one_line(p.wit_version.as_deref().unwrap_or("?")),
            one_line(
                p.sha256
                    .as_deref()
                    .map_or("?", |s| s.get(..12).unwrap_or(s))
            ),
        );
        let _ = writeln!(
            out,
            "  {:<12} {:<22} {:<22} {:<22} {:<28} enforced",
            "capability", "declared", "granted", "effective", "imported"
        );
        for row in &p.capabilities {
            let imported: Vec<String> = row
                .imported
                .iter()
                .map(|i| i.split('@').next().unwrap_or(i).to_owned())
                .collect();
            let _ = writeln!(
                out,
                "  {:<12} {:<22} {:<22} {:<22} {:<28} {}",
                row.capability,
                list(&row.declared),
                list(&row.granted),
                list(&row.effective),
                if imported.len() > 2 {
                    format!("{} interfaces", imported.len())
                } else {
                    list(&imported)
                },
                one_line(&row.enforced)
            );
        }
        told(&mut out, p);
        for f in &p.findings {
            let kind = serde_json::to_string(&f.kind).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<6} {}: {}",
                severity(colour, f.severity),
                kind.trim_matches('"'),
                one_line(&f.message)
            );
        }
        out.push('\n');
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "{} plugin(s): {} high, {} medium, {} low, {} info",
        report.plugins.len(),
        s.high,
        s.medium,
        s.low,
        s.info
    );
    match width {
        Some(w) => crate::terminal::fit(&out, w),
        None => out,
    }
}

/// A diff as text, one change a line: `+` widens, `-` narrows, `~` neither; `[model]` marks
/// a change in what the model is told; a changed text follows, its lines removed and added.
pub fn diff(d: &Diff, colour: bool, width: Option<usize>) -> String {
    let mut out = format!("{} -> {}\n", one_line(&d.old), one_line(&d.new));
    for c in &d.changes {
        let (mark, code, word) = match c.direction {
            Direction::Widening => ('+', "31", "widening"),
            Direction::Narrowing => ('-', "32", "narrowing"),
            Direction::Neutral => ('~', "0", "neutral"),
        };
        let model = if c.told_to_model { " [model]" } else { "" };
        let _ = writeln!(
            out,
            "{}",
            paint(
                colour,
                code,
                &format!(
                    "{mark} {word:<9} {:<10} {}{model}",
                    c.what,
                    one_line(&c.item)
                )
            )
        );
        for line in c.detail.lines() {
            let _ = writeln!(out, "      | {}", one_line(line));
        }
    }
    if d.changes.is_empty() {
        out.push_str(
            "no difference in component, capabilities, limits, tools, priority, sensors, config, imports or exports\n",
        );
    }
    match width {
        Some(w) => crate::terminal::fit(&out, w),
        None => out,
    }
}

/// The limits, priority, config and tools of a plugin, a line each.
fn told(out: &mut String, p: &super::PluginAudit) {
    if let Some(l) = &p.limits {
        let ms = |d: std::time::Duration| d.as_millis();
        let mut fuel = Vec::new();
        if p.kinds.contains(&Kind::Gate) {
            fuel.push(format!("fuel {} per gate call", l.gate_fuel));
        }
        if p.kinds.iter().any(|k| *k != Kind::Gate) {
            fuel.push(match l.tool_fuel {
                Some(f) => format!("fuel {f} per tool/skill call"),
                None => "no fuel bound on tool/skill calls".into(),
            });
        }
        let mut deadlines = Vec::new();
        if p.kinds.iter().any(|k| *k != Kind::Tool) {
            deadlines.push(format!("deadline {} ms per gate/skill call", ms(l.timeout)));
        }
        if p.kinds.contains(&Kind::Tool) {
            deadlines.push(match l.tool_default_timeout {
                Some(t) => format!("deadline {} ms per tool call", ms(t)),
                None => {
                    "tool deadlines by tool (first-party: the seed's table; others 120 s)".into()
                }
            });
        }
        let _ = writeln!(
            out,
            "  {:<12} {}; {}; memory {} MiB; output {} KiB; disk {} MiB; {} call(s) at once",
            "limits",
            fuel.join(", "),
            deadlines.join(", "),
            l.memory_bytes >> 20,
            l.max_output_bytes >> 10,
            l.disk_bytes >> 20,
            l.concurrency
        );
    }
    if let Some(priority) = p.priority {
        let place = p
            .walk_position
            .map_or_else(String::new, |n| format!(" (walk: gate {n})"));
        let _ = writeln!(out, "  {:<12} {priority}{place}", "priority");
    }
    if let Some(sensors) = &p.sensors {
        let _ = writeln!(out, "  {:<12} {}", "sensors", one_line(&sensors.join(", ")));
    }
    if let Some(config) = p.config.as_object().filter(|o| !o.is_empty()) {
        let keys: Vec<String> = config
            .iter()
            .map(|(k, v)| format!("{k} = {}", spaced(v)))
            .collect();
        let _ = writeln!(out, "  {:<12} {}", "config", one_line(&keys.join("; ")));
    }
    for t in &p.tools {
        let effects: Vec<String> = t.effects.iter().map(|(a, k)| format!("{a}={k}")).collect();
        let _ = writeln!(
            out,
            "  {:<12} {}{}  effects {}  description {}  schema {}",
            "tool",
            one_line(&t.name),
            if t.read_only { " (read-only)" } else { "" },
            list(&effects),
            t.description_sha256.get(..12).unwrap_or(""),
            t.schema_sha256.get(..12).unwrap_or("")
        );
    }
    if let Some(why) = &p.tools_unread {
        let _ = writeln!(out, "  {:<12} not read: {}", "tools", one_line(why));
    }
}

/// A JSON value with spaces after its commas, so that a long one wraps at a terminal.
fn spaced(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(spaced).collect::<Vec<_>>().join(", ")
            )
        }
        serde_json::Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k}: {}", spaced(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::diff::Change;

    #[test]
    fn a_tab_in_a_one_line_field_is_shown_not_obeyed() {
        assert_eq!(one_line("a\tb\nc"), "a\\tb\\nc");
        assert_eq!(one_line("plain"), "plain");
        let d = Diff {
            old: "x\t1.0".into(),
            new: "x 2.0".into(),
            changes: vec![Change {
                what: "config",
                item: "mode:\t\t\t\"strict\" -> \"lenient\"".into(),
                direction: Direction::Neutral,
                told_to_model: false,
                detail: "- old\tline".into(),
            }],
        };
        let shown = diff(&d, false, Some(40));
        assert!(!shown.contains('\t'), "{shown}");
        assert!(shown.contains("mode:\\t\\t\\t"), "{shown}");
        assert!(shown.contains("| - old\\tline"), "{shown}");
    }
}
