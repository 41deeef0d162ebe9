//! The two detectors of plugins/pii/pii_rules.py, `_EMAIL` and `_CANDIDATE` + `_PHONE`, by hand.
//! Python's `re` works on code points, so these work on `char`s; every class is ASCII
//! (`re.ASCII`: `\d` is `[0-9]`, `\w` is `[A-Za-z0-9_]`).

/// How many e-mail addresses `text` holds: `len(_EMAIL.findall(text))`.
///
/// ```text
/// @(?<=[A-Za-z0-9_%+-]@)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}
/// (?![A-Za-z0-9-]|\.[A-Za-z0-9])
/// ```
///
/// A match holds one `@` and then only `[A-Za-z0-9.-]`, so matches never share an `@` and the
/// count is the number of `@` at which the pattern matches at all. There, since a label is
/// followed by `.` and the top-level domain by neither `[A-Za-z0-9-]` nor `.` and an
/// alphanumeric, each is a whole run of `[A-Za-z0-9-]`: the pattern matches when, after one or
/// more valid labels each ending in `.`, a run is 2 to 63 letters not followed by `.` and an
/// alphanumeric.
pub fn count_emails(t: &[char]) -> usize {
    (1..t.len())
        .filter(|&i| t[i] == '@' && local_end(t[i - 1]) && domain_follows(t, i + 1))
        .count()
}

fn local_end(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '%' | '+' | '-')
}

fn domain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn domain_follows(t: &[char], mut pos: usize) -> bool {
    let mut labels = 0;
    loop {
        let end = pos + t[pos..].iter().take_while(|&&c| domain_char(c)).count();
        let run = &t[pos..end];
        let dot_then_alnum =
            t.get(end) == Some(&'.') && t.get(end + 1).is_some_and(char::is_ascii_alphanumeric);
        if labels > 0
            && (2..=63).contains(&run.len())
            && run.iter().all(char::is_ascii_alphabetic)
            && !dot_then_alnum
        {
            return true;
        }
        let label = (1..=63).contains(&run.len())
            && run[0].is_ascii_alphanumeric()
            && run[run.len() - 1].is_ascii_alphanumeric();
        if !label || t.get(end) != Some(&'.') {
            return false;
        }
        labels += 1;
        pos = end + 1;
    }
}

/// How many phone numbers `text` holds, as `count_phones` counts them: in each run `_CANDIDATE`
/// finds (`[+(0-9][0-9 ().+-]{7,}`, leftmost, greedy, not overlapping), the matches of `_PHONE`
/// searched from the run's start with the text cut one character past its end, each counted when
/// it holds 8 (after a `+`) or 9 to 15 digits.
pub fn count_phones(t: &[char]) -> usize {
    let mut count = 0;
    let mut p = 0;
    while p < t.len() {
        let run = if matches!(t[p], '+' | '(' | '0'..='9') {
            t[p + 1..]
                .iter()
                .take_while(|&&c| candidate_char(c))
                .count()
        } else {
            0
        };
        if run < 7 {
            p += 1;
            continue;
        }
        let end = p + 1 + run;
        let window = &t[..(end + 1).min(t.len())];
        let mut q = p;
        while q < window.len() {
            match phone_at(window, q) {
                Some(e) => {
                    let number = &window[q..e];
                    let digits = number.iter().filter(|c| c.is_ascii_digit()).count();
                    let least = if number[0] == '+' { 8 } else { 9 };
                    if (least..=15).contains(&digits) {
                        count += 1;
                    }
                    q = e;
                }
                None => q += 1,
            }
        }
        p = end;
    }
    count
}

fn candidate_char(c: char) -> bool {
    c.is_ascii_digit() || matches!(c, ' ' | '(' | ')' | '.' | '+' | '-')
}

fn word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Where a `_PHONE` match starting at `p` ends, if one does:
///
/// ```text
/// (?<![\w+.@-]) (?> ALTERNATIVES ) (?![\w+@%]|[.-][\w%+-])
/// ```
///
/// The group is atomic: the first way any alternative matches, in the order of a backtracking
/// engine, is the only one tried against the look-ahead.
fn phone_at(t: &[char], p: usize) -> Option<usize> {
    if p > 0 && (word(t[p - 1]) || matches!(t[p - 1], '+' | '.' | '@' | '-')) {
        return None;
    }
    let e = first_alternative(t, p)?;
    let next = t.get(e).copied();
    let after = t.get(e + 1).copied();
    let refused = next.is_some_and(|c| word(c) || matches!(c, '+' | '@' | '%'))
        || (matches!(next, Some('.' | '-'))
            && after.is_some_and(|c| word(c) || matches!(c, '%' | '+' | '-')));
    (!refused).then_some(e)
}

fn digit(c: char) -> bool {
    c.is_ascii_digit()
}

fn sep(c: char) -> bool {
    matches!(c, ' ' | '.' | '-')
}

fn space_dash(c: char) -> bool {
    matches!(c, ' ' | '-')
}

/// The ends of a greedy `class{min,max}` at `pos`, in the order a backtracking engine tries
/// them: longest first.
fn greedy(
    t: &[char],
    pos: usize,
    class: fn(char) -> bool,
    min: usize,
    max: usize,
) -> impl Iterator<Item = usize> {
    let run = t
        .get(pos..)
        .unwrap_or_default()
        .iter()
        .take(max)
        .take_while(|&&c| class(c))
        .count();
    (pos + min..=pos + run).rev()
}

/// The ends of `class?` at `pos`: with the character first, then without.
fn optional(t: &[char], pos: usize, class: fn(char) -> bool) -> impl Iterator<Item = usize> {
    let with = t.get(pos).is_some_and(|&c| class(c));
    with.then_some(pos + 1).into_iter().chain([pos])
}

/// Exactly `n` characters of `class` at `pos`: where they end.
fn exactly(t: &[char], pos: usize, class: fn(char) -> bool, n: usize) -> Option<usize> {
    let chars = t.get(pos..pos + n)?;
    chars.iter().all(|&c| class(c)).then_some(pos + n)
}

/// The end of the first match, at `q`, of the alternatives of `_PHONE`, in order:
///
/// ```text
///   \+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,7}
/// | \(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}
/// | \d{3}([ .-])\d{3}\1\d{4}
/// | 0\d([ .-]?)\d{2}\2\d{2}\2\d{2}\2\d{2}
/// | 0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}
/// ```
///
/// Each alternative is a sequence; nested loops walk each element's ways of matching in the
/// engine's order (greedy: longest first), so the first complete walk is the engine's first
/// match. Nothing follows inside the atomic group, so that walk ends the search.
pub(crate) fn first_alternative(t: &[char], q: usize) -> Option<usize> {
    match t.get(q)? {
        '+' => plus_number(t, q + 1),
        '(' => area_code_number(t, q + 1),
        '0'..='9' => three_three_four(t, q)
            .or_else(|| national_pairs(t, q))
            .or_else(|| national_groups(t, q)),
        _ => None,
    }
}

/// `\+` matched; `\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,7}`.
fn plus_number(t: &[char], pos: usize) -> Option<usize> {
    greedy(t, pos, digit, 1, 3).find_map(|p| plus_groups(t, p, 0))
}

/// `(?:[ .-]?\(?\d{1,4}\)?){2,7}` with `done` iterations behind: more first, then stop.
fn plus_groups(t: &[char], pos: usize, done: usize) -> Option<usize> {
    if done < 7 {
        for p1 in optional(t, pos, sep) {
            for p2 in optional(t, p1, |c| c == '(') {
                for p3 in greedy(t, p2, digit, 1, 4) {
                    for p4 in optional(t, p3, |c| c == ')') {
                        if let Some(e) = plus_groups(t, p4, done + 1) {
                            return Some(e);
                        }
                    }
                }
            }
        }
    }
    (done >= 2).then_some(pos)
}

/// `\(` matched; `\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}`.
fn area_code_number(t: &[char], pos: usize) -> Option<usize> {
    for p1 in greedy(t, pos, digit, 2, 4) {
        if t.get(p1) != Some(&')') {
            continue;
        }
        for p2 in optional(t, p1 + 1, sep) {
            for p3 in greedy(t, p2, digit, 3, 4) {
                for p4 in optional(t, p3, sep) {
                    if let Some(e) = greedy(t, p4, digit, 3, 4).next() {
                        return Some(e);
                    }
                }
            }
        }
    }
    None
}

/// `\d{3}([ .-])\d{3}\1\d{4}`.
fn three_three_four(t: &[char], q: usize) -> Option<usize> {
    let p = exactly(t, q, digit, 3)?;
    let s = *t.get(p).filter(|&&c| sep(c))?;
    let p = exactly(t, p + 1, digit, 3)?;
    (t.get(p) == Some(&s)).then_some(())?;
    exactly(t, p + 1, digit, 4)
}

/// `0\d([ .-]?)\d{2}\2\d{2}\2\d{2}\2\d{2}`: the separator taken if there is one, else none.
fn national_pairs(t: &[char], q: usize) -> Option<usize> {
    if t[q] != '0' {
        return None;
    }
    let p = exactly(t, q + 1, digit, 1)?;
    optional(t, p, sep).find_map(|after_sep| {
        let group = &t[p..after_sep];
        let mut pos = exactly(t, after_sep, digit, 2)?;
        for _ in 0..3 {
            (t.get(pos..pos + group.len())? == group).then_some(())?;
            pos = exactly(t, pos + group.len(), digit, 2)?;
        }
        Some(pos)
    })
}

/// `0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}`.
fn national_groups(t: &[char], q: usize) -> Option<usize> {
    if t[q] != '0' {
        return None;
    }
    for p1 in greedy(t, q + 1, digit, 2, 4) {
        if !t.get(p1).is_some_and(|&c| space_dash(c)) {
            continue;
        }
        for p2 in greedy(t, p1 + 1, digit, 3, 4) {
            for p3 in optional(t, p2, space_dash) {
                if let Some(e) = greedy(t, p3, digit, 3, 4).next() {
                    return Some(e);
                }
            }
        }
    }
    None
}
