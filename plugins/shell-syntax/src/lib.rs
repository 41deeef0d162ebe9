//! How the standard gates read a command line's words: a program's options as getopt reads
//! them ([`options`]) and the wrappers that run another command with its own options
//! ([`wrappers`]: `sudo`, `env -S`, `timeout`, `xargs`, the shells). `shell-guard` and
//! `approval` read a command the same way through this one crate, so a fix lands in both.

pub mod options;
pub mod wrappers;

use std::borrow::Cow;

/// `line` as the shell reads it before it splits words: a backslash before a line break joins
/// the two lines (`r\⏎m -rf ~` runs `rm`), and NUL bytes, which the shell drops from what it
/// reads, are gone. Joined inside single quotes too, where the shell keeps both: reading a
/// command there errs on the side of asking.
pub fn joined(line: &str) -> Cow<'_, str> {
    if !line.contains(['\\', '\0']) {
        return Cow::Borrowed(line);
    }
    Cow::Owned(line.replace("\\\n", "").replace('\0', ""))
}

/// `NAME=value` (also `NAME+=value`, `NAME[i]=value`), as in `FOO=1 cmd`: an assignment, not
/// a program.
pub fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = match name.split_once('[') {
        Some((name, index)) if index.ends_with(']') => name,
        Some(_) => return false,
        None => name,
    };
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    #[test]
    fn continued_lines_are_joined_and_nuls_dropped() {
        assert_eq!(super::joined("r\\\nm -rf ~"), "rm -rf ~");
        assert_eq!(super::joined("r\0m"), "rm");
        assert_eq!(super::joined("a\\ b"), "a\\ b");
        assert!(matches!(
            super::joined("ls -la"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
