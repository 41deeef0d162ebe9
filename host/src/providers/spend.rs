//! What the models cost: every call's tokens (and dollars, when the model has a price) kept in
//! the database, for `passepartout status`.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, params};
use serde::Serialize;

use super::cascade::UsageRecord;

/// Totals for one provider and model.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SpendRow {
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Calls that answered.
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Dollars, for calls whose model had a price when they were made.
    pub cost: f64,
    /// Prompt tokens of calls made when their model had no price.
    pub unpriced_input_tokens: u64,
    /// Answer tokens of those calls.
    pub unpriced_output_tokens: u64,
}

impl SpendRow {
    /// Dollars: the recorded cost, plus the calls recorded without a price priced by `prices`
    /// ([`super::prices::price`]) when it knows the model now.
    pub fn dollars(
        &self,
        prices: &std::collections::BTreeMap<String, super::config::Price>,
    ) -> f64 {
        let later = super::prices::price(prices, &self.model).map_or(0.0, |p| {
            super::prices::cost(p, self.unpriced_input_tokens, self.unpriced_output_tokens)
        });
        self.cost + later
    }
}

/// The spend table.
pub struct SpendLog {
    conn: Mutex<Connection>,
}

impl SpendLog {
    /// Open (creating) the spend table in the database at `path`.
    ///
    /// # Errors
    /// The database cannot be opened.
    pub fn open(path: &Path) -> rusqlite::Result<SpendLog> {
        if let Some(dir) = path.parent() {
            let _ = crate::dirs::create_private_dir(dir);
        }
        crate::dirs::create_private_file(path);
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS spend (
                at REAL NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
                input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost REAL
            );",
        )?;
        Ok(SpendLog {
            conn: Mutex::new(conn),
        })
    }

    /// Record one call.
    ///
    /// # Errors
    /// The write failed.
    pub fn record(&self, r: &UsageRecord) -> rusqlite::Result<()> {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT INTO spend (at, provider, model, input_tokens, output_tokens, cost) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![at, r.provider, r.model, i64::try_from(r.usage.input_tokens).unwrap_or(i64::MAX), i64::try_from(r.usage.output_tokens).unwrap_or(i64::MAX), r.cost],
        )?;
        Ok(())
    }

    /// Dollars spent since the start of today (UTC).
    ///
    /// # Errors
    /// The read failed.
    pub fn spent_today(&self) -> rusqlite::Result<f64> {
        let midnight = super::budget::day() * 86_400;
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.query_row(
            "SELECT COALESCE(SUM(cost), 0) FROM spend WHERE at >= ?1",
            params![midnight as f64],
            |r| r.get(0),
        )
    }

    /// Totals per provider and model.
    ///
    /// # Errors
    /// The read failed.
    pub fn totals(&self) -> rusqlite::Result<Vec<SpendRow>> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn.prepare(
            // TOTAL, not SUM: a sum past i64 (rows from before counts were bounded) is read
            // as a float, never an "integer overflow" that would fail `status`.
            "SELECT provider, model, COUNT(*), TOTAL(input_tokens), TOTAL(output_tokens), TOTAL(cost),
                    TOTAL(CASE WHEN cost IS NULL THEN input_tokens END),
                    TOTAL(CASE WHEN cost IS NULL THEN output_tokens END)
             FROM spend GROUP BY provider, model ORDER BY provider, model",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SpendRow {
                provider: r.get(0)?,
                model: r.get(1)?,
                calls: r.get::<_, i64>(2)? as u64,
                input_tokens: r.get::<_, f64>(3)? as u64,
                output_tokens: r.get::<_, f64>(4)? as u64,
                cost: r.get(5)?,
                unpriced_input_tokens: r.get::<_, f64>(6)? as u64,
                unpriced_output_tokens: r.get::<_, f64>(7)? as u64,
            })
        })?;
        rows.collect()
    }
}
