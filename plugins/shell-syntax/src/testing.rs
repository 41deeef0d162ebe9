//! What the tests of the wrapper readers share: a line's first command read as the gates
//! read it.

use crate::split::split;
pub(crate) use crate::wrappers::Runs;

pub(crate) fn words(line: &str) -> Vec<String> {
    split(line)
        .into_iter()
        .next()
        .map(|s| s.words)
        .unwrap_or_default()
}

/// What the program of `line` runs, and where.
pub(crate) fn read(line: &str) -> Option<(Runs, Option<String>)> {
    let words = words(line);
    let (name, args) = words.split_first()?;
    crate::wrappers::runs(name, args)
}

pub(crate) fn runs(line: &str) -> Option<Runs> {
    read(line).map(|(runs, _dir)| runs)
}

pub(crate) fn dir(line: &str) -> Option<String> {
    read(line).and_then(|(_runs, dir)| dir)
}

pub(crate) fn command(line: &str) -> Option<Runs> {
    Some(Runs::Command(words(line)))
}

pub(crate) fn line(text: &str) -> Option<Runs> {
    Some(Runs::Line(text.to_owned()))
}

pub(crate) fn nothing() -> Option<Runs> {
    Some(Runs::Command(Vec::new()))
}

/// Each of `parts` runs.
pub(crate) fn all(parts: Vec<Option<Runs>>) -> Option<Runs> {
    Some(Runs::All(parts.into_iter().flatten().collect()))
}

/// Whether the gates cannot tell what `line` runs, or a part of it.
pub(crate) fn asks(line: &str) -> bool {
    fn unclear(runs: &Runs) -> bool {
        match runs {
            Runs::Unknown(_) => true,
            Runs::All(parts) => parts.iter().any(unclear),
            _ => false,
        }
    }
    runs(line).as_ref().is_some_and(unclear)
}
