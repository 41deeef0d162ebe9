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

pub(crate) fn asks(line: &str) -> bool {
    matches!(runs(line), Some(Runs::Unknown(_)))
}
