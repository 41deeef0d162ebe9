//! `passepartout journal verify | show`.

use std::process::ExitCode;

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
        outln!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        for r in records {
            outln!("{:>6}  {}  {:<18} {}", r.seq, r.at, r.kind, r.body);
        }
    }
    Ok(ExitCode::SUCCESS)
}
