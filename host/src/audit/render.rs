//! The audit as a table for people (coloured on a terminal, and fitted to its width). What a
//! plugin wrote (its name, version, tool names in findings) is made safe for the terminal
//! ([`crate::terminal::safe`]) before our colours are added.

use std::fmt::Write as _;

use crate::terminal::safe;

use super::diff::Diff;
use super::{AuditReport, Severity};

fn paint(colour: bool, code: &str, text: &str) -> String {
    let text = safe(text);
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
        safe(&v.join(", ")).into_owned()
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
            safe(&p.version),
            kinds.join(", "),
            safe(&p.origin.to_string()),
            safe(p.wit_version.as_deref().unwrap_or("?")),
            safe(
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
                safe(&row.enforced)
            );
        }
        for f in &p.findings {
            let kind = serde_json::to_string(&f.kind).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<6} {}: {}",
                severity(colour, f.severity),
                kind.trim_matches('"'),
                safe(&f.message)
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

/// A diff as text: `+` added, `-` removed.
pub fn diff(d: &Diff, colour: bool, width: Option<usize>) -> String {
    let mut out = format!("{} -> {}\n", safe(&d.old), safe(&d.new));
    for c in &d.added {
        let _ = writeln!(
            out,
            "{}",
            paint(colour, "32", &format!("+ {:<10} {}", c.what, c.item))
        );
    }
    for c in &d.removed {
        let _ = writeln!(
            out,
            "{}",
            paint(colour, "31", &format!("- {:<10} {}", c.what, c.item))
        );
    }
    if d.added.is_empty() && d.removed.is_empty() {
        out.push_str("no difference in capabilities, imports, exports or limits\n");
    }
    match width {
        Some(w) => crate::terminal::fit(&out, w),
        None => out,
    }
}
