//! `passepartout journal verify | show`.

use std::process::ExitCode;

use passepartout::clock::rfc3339_text;
use passepartout::journal::Journal;

use super::Common;

/// Open the journal database named by `--db` (or the default).
pub fn open(common: &Common) -> anyhow::Result<Journal> {
    Ok(common.places().journal()?)
}

pub fn verify(journal: &Journal) -> anyhow::Result<ExitCode> {
    match journal.verify()? {
        Ok(n) => {
            outln!("journal intact: {n} records, each chained to the one before");
            Ok(ExitCode::SUCCESS)
        }
        Err(broken) => {
            outln!("journal BROKEN: {broken}");
            Ok(ExitCode::FAILURE)
        }
    }
}

pub fn show(journal: &Journal, last: usize, json: bool) -> anyhow::Result<ExitCode> {
    let records = journal.records(Some(last))?;
    if json {
        // `at` as people read it; `at_epoch` as stored and hashed, to check a record's hash.
        let shown: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                let mut v = serde_json::json!(r);
                v["at"] = rfc3339_text(&r.at).into();
                v["at_epoch"] = r.at.clone().into();
                v
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&shown)?);
    } else {
        for r in records {
            outln!(
                "{:>6}  {}  {:<18} {}",
                r.seq,
                rfc3339_text(&r.at),
                r.kind,
                r.body
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
