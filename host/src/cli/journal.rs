//! `passepartout journal verify [--expect SEQ:HASH] | show`.

use std::process::ExitCode;

use passepartout::clock::rfc3339_text;
use passepartout::journal::{Chain, Journal};

use super::Common;

/// Open the journal database named by `--db` (or the default).
pub fn open(common: &Common) -> anyhow::Result<Journal> {
    Ok(common.places().journal()?)
}

/// A record's seq and hash, kept elsewhere from an earlier `journal verify` (its head then):
/// the journal must still hold that record with that hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The record's seq.
    pub seq: i64,
    /// Its hash, lowercase hex.
    pub hash: String,
}

/// `--expect SEQ:HASH` (clap's value parser): a seq from 1 and a sha256 in hex.
///
/// # Errors
/// What is wrong with `s`, for clap to print.
pub fn anchor(s: &str) -> Result<Anchor, String> {
    let (seq, hash) = s
        .split_once(':')
        .ok_or_else(|| "expected SEQ:HASH, as `journal verify` printed the head".to_owned())?;
    let seq = seq
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "SEQ is a record's number, from 1".to_owned())?;
    let hash = hash.trim().to_ascii_lowercase();
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("HASH is a record's sha256: 64 hexadecimal digits".into());
    }
    Ok(Anchor { seq, hash })
}

/// Walk the chain; print whether it is intact and its head (to keep elsewhere), and, with
/// `expect`, whether the record it names still has its hash. Exit 1 when the chain is broken
/// or `expect` is not met.
///
/// # Errors
/// The database could not be read.
pub fn verify(journal: &Journal, expect: Option<&Anchor>) -> anyhow::Result<ExitCode> {
    let chain = match journal.verify_chain(expect.map(|a| a.seq))? {
        Ok(chain) => chain,
        Err(broken) => {
            outln!("journal BROKEN: {broken}");
            return Ok(ExitCode::FAILURE);
        }
    };
    outln!(
        "journal intact: {} records, each chained to the one before",
        chain.count
    );
    if let Some((seq, hash)) = &chain.head {
        outln!("head: record {seq}, hash {hash}");
        outln!(
            "  (keep it elsewhere: `journal verify --expect {seq}:{hash}` later says whether \
             the journal was cut short or rewritten up to it)"
        );
    }
    let Some(anchor) = expect else {
        return Ok(ExitCode::SUCCESS);
    };
    match holds(&chain, anchor) {
        Ok(()) => {
            outln!(
                "record {} has the hash expected: the journal up to it is the one anchored",
                anchor.seq
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            outln!("journal NOT AS EXPECTED: {why}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Whether `chain` (walked for `anchor.seq`) still holds `anchor`; `Err` says how it does not.
fn holds(chain: &Chain, anchor: &Anchor) -> Result<(), String> {
    match &chain.at {
        Some(hash) if *hash == anchor.hash => Ok(()),
        Some(hash) => Err(format!(
            "record {} has hash {hash}, not {}: the journal was rewritten up to it",
            anchor.seq, anchor.hash
        )),
        None => Err(format!(
            "record {} is not there (the newest is {}): the journal was cut short",
            anchor.seq,
            chain.head.as_ref().map_or_else(
                || "none: it is empty".to_owned(),
                |(seq, _)| format!("record {seq}")
            )
        )),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anchor_is_a_seq_and_a_sha256() {
        let hash = "AB".repeat(32);
        assert_eq!(
            anchor(&format!("7:{hash}")),
            Ok(Anchor {
                seq: 7,
                hash: hash.to_ascii_lowercase()
            })
        );
        for bad in [
            "7".to_owned(),
            format!("0:{hash}"),
            format!("-1:{hash}"),
            format!("x:{hash}"),
            "7:abc".to_owned(),
            format!("7:{}", "g".repeat(64)),
        ] {
            assert!(anchor(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_anchor_fails_a_journal_cut_short_or_rewritten_and_holds_otherwise() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("j.db");
        let journal = Journal::open(&path).expect("journal");
        for n in 0..3 {
            journal
                .append("proposal", &serde_json::json!({ "n": n }))
                .expect("append");
        }
        let walked = |seq: i64| {
            journal
                .verify_chain(Some(seq))
                .expect("read")
                .expect("intact")
        };
        let (seq, hash) = walked(3).head.expect("a head");
        let head = Anchor { seq, hash };
        assert_eq!(holds(&walked(3), &head), Ok(()));
        // Records appended since: the anchor still holds.
        journal
            .append("proposal", &serde_json::json!({ "n": 3 }))
            .expect("append");
        assert_eq!(holds(&walked(3), &head), Ok(()));
        // Cut short: the newest records removed, the chain still intact.
        rusqlite::Connection::open(&path)
            .and_then(|c| c.execute("DELETE FROM journal WHERE seq >= 3", []))
            .expect("delete");
        let cut = holds(&walked(3), &head).expect_err("cut short");
        assert!(
            cut.contains("record 3 is not there (the newest is record 2)"),
            "{cut}"
        );
        // Rewritten: another record 3 with a fresh hash.
        journal
            .append("proposal", &serde_json::json!({ "n": "forged" }))
            .expect("append");
        let forged = holds(&walked(3), &head).expect_err("rewritten");
        assert!(forged.contains("was rewritten up to it"), "{forged}");
    }
}
