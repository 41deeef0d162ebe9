//! kill -9 at random moments while approvals are being decided: every approved action either
//! ran, with its result journaled, or is listed (pending, or interrupted) for a person; never
//! spent and silent, never both.

use super::*;
use passepartout::approvals::Approvals;
use passepartout::journal::Journal;

/// Check every token against the database; the interrupted ones, and how many ran.
fn check(db: &Path, tokens: &[String]) -> (Vec<String>, usize) {
    let journal = Journal::open(db).expect("journal");
    assert!(
        matches!(journal.verify(), Ok(Ok(_))),
        "the journal's chain holds"
    );
    let records = journal.records(None).expect("records");
    let listed = Approvals::new(&journal)
        .expect("approvals")
        .pending()
        .expect("pending");
    let mut interrupted = Vec::new();
    let mut ran_total = 0;
    for t in tokens {
        let requested = records
            .iter()
            .any(|r| r.kind == "approval-requested" && r.body["token"] == t.as_str());
        assert!(requested, "{t}: pending without its journal record");
        let ran = records
            .iter()
            .filter(|r| r.kind == "tool-result" && r.body["approval"] == t.as_str())
            .count();
        let state = listed
            .iter()
            .find(|p| &p.token == t)
            .map(|p| p.state.clone());
        match (ran, state.as_deref()) {
            (1, None) => ran_total += 1,
            (0, Some("pending")) => {}
            (0, Some("interrupted")) => interrupted.push(t.clone()),
            (ran, state) => panic!("{t}: ran {ran} time(s), listed as {state:?}"),
        }
    }
    (interrupted, ran_total)
}

#[test]
fn kill_9_during_approvals_never_spends_one_silently() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let db = home.path().join("data/passepartout/passepartout.db");
    let mut tokens: Vec<String> = Vec::new();
    let mut seed = u64::from(std::process::id()) | 1;
    let mut kills_mid_run = 0;
    for _ in 0..50 {
        let mut d = start(home.path(), &[], Some(&plugins));
        let mut c = d.client();
        let mut fresh: Vec<String> = (0..4).map(|_| needs_approval(&mut c)).collect();
        tokens.extend(fresh.iter().cloned());
        // What an earlier kill interrupted is approved again, alongside the new ones.
        fresh.extend(check(&db, &tokens).0);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % 30_000);
        let keys = d.keys();
        std::thread::scope(|s| {
            for t in &fresh {
                let (addr, keys) = (&d.addr, &keys);
                s.spawn(move || {
                    // Any of these may fail: the daemon is killed under them.
                    let Ok(mut c) = Client::connect(addr, Some(keys)) else {
                        return;
                    };
                    let Ok((_, list)) = c.request_raw("approvals", json!({})) else {
                        return;
                    };
                    let digest = list["result"]
                        .as_array()
                        .and_then(|a| a.iter().find(|p| p["token"] == t.as_str()))
                        .map(|p| p["digest"].clone());
                    let _ = c.request_raw("approve", json!({ "token": t, "digest": digest }));
                });
            }
            std::thread::sleep(delay);
            d.child.kill().expect("kill -9");
            let _ = d.child.wait();
        });
        drop(c);
        let d = start(home.path(), &[], Some(&plugins));
        kills_mid_run += usize::from(!check(&db, &tokens).0.is_empty());
        drop(d);
    }
    // Whatever is still interrupted runs when approved again, once.
    let d = start(home.path(), &[], Some(&plugins));
    let mut c = d.client();
    let (interrupted, ran) = check(&db, &tokens);
    for t in &interrupted {
        assert_eq!(result(&decide(&mut c, "approve", t)), "3");
    }
    let (left, ran_after) = check(&db, &tokens);
    assert!(left.is_empty());
    assert_eq!(ran_after, ran + interrupted.len());
    assert!(
        ran > 0 && kills_mid_run > 0,
        "the kills fell both before and after runs"
    );
    eprintln!(
        "{} approvals: {ran} ran before a kill; {kills_mid_run} of 50 kills left one interrupted",
        tokens.len()
    );
}
