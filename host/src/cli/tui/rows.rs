//! Texts cut into the rows a pane draws. Widths are counted as ratatui counts them when it
//! draws (by grapheme: a full-width character takes two columns, a combining accent none), so
//! a row is never wider than its pane and nothing is clipped. Cutting takes time linear in the
//! text, and stops at a bound: an action's arguments can be a megabyte without one space.

use std::cell::RefCell;
use std::sync::Arc;

use ratatui::style::Style;
use ratatui::text::Span;

/// Rows kept of one text. Past them the rest is left off (and the person is told where to read
/// it whole): nobody reads ten thousand rows in a pane, and keeping more costs memory.
pub const MAX_ROWS: usize = 10_000;

/// What a row is part of, for its style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// The action itself.
    Plain,
    /// Why the gates asked.
    Why,
    /// A warning about the approval (its state, a cut).
    Warn,
}

/// A text cut into rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// The rows, each with what it is part of.
    pub rows: Vec<(Tone, String)>,
    /// Whether these are all the text's rows; false when the bound left some off.
    pub complete: bool,
}

/// The columns `text` takes on screen.
pub fn width(text: &str) -> usize {
    Span::raw(text).width()
}

/// `lines` cut into rows of at most `width` columns (at least one), at most `cap` of them.
///
/// Each text's line breaks start new rows. A row ends after its last space when the next
/// grapheme does not fit, else mid-word. Spaces are kept where they were (at a row's end), so
/// the rows together are the text, character for character.
pub fn wrap<'t>(
    lines: impl IntoIterator<Item = (Tone, &'t str)>,
    width: usize,
    cap: usize,
) -> Rows {
    let width = width.max(1);
    let mut rows = Vec::new();
    for (tone, text) in lines {
        for line in text.split('\n') {
            if !cut_line(line, tone, width, cap, &mut rows) {
                return Rows {
                    rows,
                    complete: false,
                };
            }
        }
    }
    Rows {
        rows,
        complete: true,
    }
}

/// Push the rows of `line` (no line break in it) onto `rows`; false when `cap` rows were
/// reached before all of it was pushed.
fn cut_line(
    line: &str,
    tone: Tone,
    width: usize,
    cap: usize,
    rows: &mut Vec<(Tone, String)>,
) -> bool {
    let span = Span::raw(line);
    let mut row = String::new();
    let mut row_width = 0;
    // Just after the row's last space: its byte index in `row`, and the row's width there.
    let mut space: Option<(usize, usize)> = None;
    for grapheme in span.styled_graphemes(Style::default()) {
        let g = grapheme.symbol;
        let w = width_of(g);
        // At most twice: once at the last space, once more when what followed it and this
        // grapheme still do not fit together.
        while row_width + w > width && !row.is_empty() {
            if rows.len() >= cap {
                return false;
            }
            match space.take() {
                Some((at, at_width)) if at < row.len() => {
                    let tail = row.split_off(at);
                    rows.push((tone, std::mem::replace(&mut row, tail)));
                    row_width -= at_width;
                }
                _ => {
                    rows.push((tone, std::mem::take(&mut row)));
                    row_width = 0;
                }
            }
        }
        row.push_str(g);
        row_width += w;
        if g == " " {
            space = Some((row.len(), row_width));
        }
    }
    if rows.len() >= cap {
        return false;
    }
    rows.push((tone, row));
    true
}

/// The columns one grapheme takes.
fn width_of(grapheme: &str) -> usize {
    // One byte: ASCII, one column (control characters were made visible before).
    if grapheme.len() == 1 {
        1
    } else {
        width(grapheme)
    }
}

/// A text's rows at the width they were last cut for: cut again only when the width changes,
/// not on every frame.
#[derive(Clone, Debug, Default)]
pub struct Cached(RefCell<Option<(usize, Arc<Rows>)>>);

impl Cached {
    /// The rows at `width`: those kept when they were cut for it, else what `cut` gives.
    pub fn get(&self, width: usize, cut: impl FnOnce() -> Rows) -> Arc<Rows> {
        let mut slot = self.0.borrow_mut();
        let kept = slot
            .as_ref()
            .filter(|(w, _)| *w == width)
            .map(|(_, rows)| Arc::clone(rows));
        if let Some(rows) = kept {
            return rows;
        }
        let rows = Arc::new(cut());
        *slot = Some((width, Arc::clone(&rows)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &Rows) -> Vec<&str> {
        rows.rows.iter().map(|(_, r)| r.as_str()).collect()
    }

    #[test]
    fn rows_are_cut_at_spaces_and_together_are_the_text() {
        let text = "the quick brown fox  jumps over";
        let rows = wrap([(Tone::Plain, text)], 10, MAX_ROWS);
        assert!(rows.complete);
        assert_eq!(
            texts(&rows),
            ["the quick ", "brown fox ", " jumps ", "over"]
        );
        assert_eq!(texts(&rows).concat(), text, "a character was lost");
        assert!(texts(&rows).iter().all(|r| width(r) <= 10));
    }

    #[test]
    fn full_width_characters_count_two_columns_and_are_never_clipped() {
        // Five columns: two full-width characters fit, a third would be clipped by one.
        let text = "漢字漢字漢";
        let rows = wrap([(Tone::Plain, text)], 5, MAX_ROWS);
        assert_eq!(texts(&rows), ["漢字", "漢字", "漢"]);
        // A combining accent takes no column of its own.
        let rows = wrap([(Tone::Plain, "e\u{301}e\u{301}e\u{301}")], 2, MAX_ROWS);
        assert_eq!(texts(&rows), ["e\u{301}e\u{301}", "e\u{301}"]);
    }

    #[test]
    fn line_breaks_start_rows_and_the_cap_says_it_cut() {
        let rows = wrap([(Tone::Plain, "a\nb"), (Tone::Why, "c")], 10, MAX_ROWS);
        assert_eq!(
            rows.rows,
            [
                (Tone::Plain, "a".to_owned()),
                (Tone::Plain, "b".to_owned()),
                (Tone::Why, "c".to_owned())
            ]
        );
        let rows = wrap([(Tone::Plain, "abcdefgh")], 2, 3);
        assert!(!rows.complete, "four rows were needed");
        assert_eq!(texts(&rows), ["ab", "cd", "ef"]);
        let rows = wrap([(Tone::Plain, "abcdef")], 2, 3);
        assert!(rows.complete, "exactly three rows");
    }

    #[test]
    fn a_megabyte_without_a_space_is_cut_in_linear_time() {
        // Quadratic cutting (counting the row's characters again for each one) would take
        // hours here; linear takes well under a second, even unoptimised.
        let word = "x".repeat(1 << 20);
        let started = std::time::Instant::now();
        let rows = wrap([(Tone::Plain, word.as_str())], 64, usize::MAX);
        assert!(rows.complete);
        assert_eq!(rows.rows.len(), (1 << 20) / 64);
        let bounded = wrap([(Tone::Plain, word.as_str())], 64, MAX_ROWS);
        assert!(!bounded.complete);
        assert_eq!(bounded.rows.len(), MAX_ROWS);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn rows_are_cut_once_per_width() {
        let cached = Cached::default();
        let first = cached.get(10, || wrap([(Tone::Plain, "abc")], 10, MAX_ROWS));
        let again = cached.get(10, || unreachable!("cut again at the same width"));
        assert!(Arc::ptr_eq(&first, &again));
        let other = cached.get(2, || wrap([(Tone::Plain, "abc")], 2, MAX_ROWS));
        assert_eq!(texts(&other), ["ab", "c"]);
    }
}
