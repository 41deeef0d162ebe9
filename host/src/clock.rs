//! Times as people read them: RFC 3339 in UTC. What is stored (and hashed, in the journal)
//! stays seconds since the Unix epoch; only how it is shown changes.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `secs` since the Unix epoch as RFC 3339 (UTC), with microseconds when it has a fraction.
/// A value that is not a time (negative, not finite, past year 9999) is shown as it is.
pub fn rfc3339(secs: f64) -> String {
    if !(0.0..253_402_300_800.0).contains(&secs) {
        return format!("{secs}");
    }
    let at = UNIX_EPOCH + Duration::from_secs_f64(secs);
    if secs.fract() == 0.0 {
        humantime::format_rfc3339_seconds(at).to_string()
    } else {
        humantime::format_rfc3339_micros(at).to_string()
    }
}

/// The journal's stored `at` (seconds, as text) as RFC 3339; text that is not a number as it is.
pub fn rfc3339_text(stored: &str) -> String {
    stored
        .parse::<f64>()
        .map_or_else(|_| stored.to_owned(), rfc3339)
}

/// Now, as seconds since the Unix epoch.
pub fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_read_as_rfc_3339() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_393_137.0), "2026-11-23T00:18:57Z");
        assert_eq!(
            rfc3339_text("1795393137.007200"),
            "2026-11-23T00:18:57.007200Z"
        );
        assert_eq!(rfc3339_text("not a time"), "not a time");
        assert_eq!(rfc3339(-1.0), "-1");
        assert_eq!(rfc3339(f64::NAN), "NaN");
    }
}
