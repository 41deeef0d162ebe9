//! Guest paths, compared lexically (a gate cannot look at the filesystem).

use shell_syntax::glob::{extglob, glob, has_glob};

/// `path` with `.`, `..` and repeated `/` resolved, or `None` when it is not absolute.
/// `..` at the root stays at the root, as the kernel has it.
pub fn normalise(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Is the normalised `path` the normalised `dir` or inside it? `/workspace2` is not inside
/// `/workspace`.
pub fn inside(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether the normalised `path` is a place `entry` (a `protected_paths` entry) names, or is
/// inside one. An absolute entry is that place and everything in it; any other is a run of
/// whole path components found anywhere in `path`: `.git/` covers `/workspace/.git/config` and
/// `/workspace/vendor/x/.git/hooks/pre-commit`, `.github/workflows` covers
/// `/workspace/.github/workflows/ci.yml`, and `.env` covers `/workspace/app/.env` but not
/// `/workspace/.env.example`. Compared without regard to ASCII case, for hosts whose
/// filesystems ignore it.
///
/// `path` may hold globs (`.gi?/config`, `*/.envrc`): it is protected when a name it may
/// match is. As bash globs by default, a name starting with `.` is matched only by a pattern
/// that starts with one; with `dotglob` (`shopt -s dotglob`, or `GLOBIGNORE` set) by any.
pub fn protected(path: &str, entry: &str, dotglob: bool) -> bool {
    let path = path.to_ascii_lowercase();
    let entry = entry.to_ascii_lowercase();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if entry.starts_with('/') {
        let Some(place) = normalise(&entry) else {
            return false;
        };
        if !has_glob(&path) && !path.contains(['$', '`']) {
            return inside(&path, &place);
        }
        let names: Vec<&str> = place.split('/').filter(|p| !p.is_empty()).collect();
        return path.starts_with('/')
            && parts.len() >= names.len()
            && parts
                .iter()
                .zip(&names)
                .all(|(p, n)| may_name(p, n, dotglob));
    }
    let wanted: Vec<&str> = entry
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    !wanted.is_empty()
        && parts.windows(wanted.len()).any(|run| {
            run.iter()
                .zip(&wanted)
                .all(|(pattern, name)| may_name(pattern, name, dotglob))
        })
}

/// Whether the path component `pattern` (a glob, or a name) may be `name`. A component the
/// shell expands (`$d`, `$(...)`, a backtick) or an extglob group (`.@(git)`, which `glob`
/// does not read) may be any name.
fn may_name(pattern: &str, name: &str, dotglob: bool) -> bool {
    if pattern.contains(['$', '`']) || extglob(pattern) {
        return true;
    }
    if !has_glob(pattern) {
        return pattern == name;
    }
    (dotglob || pattern.starts_with('.') || !name.starts_with('.')) && glob(pattern, name)
}

#[cfg(test)]
mod tests {
    use super::{inside, normalise, protected};
    use proptest::prelude::*;

    proptest! {
        /// A glob that may name a protected file is judged protected: any character of such a
        /// path but a `/` or a component's leading `.` made `?`, or a run of them `*`.
        #[test]
        fn a_glob_that_may_name_a_protected_path_is_protected(
            entry in prop::sample::select(vec![".git/config", ".envrc", ".github/workflows/ci.yml", ".vscode/tasks.json"]),
            before in "[a-z]{1,6}",
            at in 0usize..40,
            len in 1usize..4,
            star in any::<bool>(),
            dotglob in any::<bool>(),
        ) {
            let path = format!("/workspace/{before}/{entry}");
            let protected_by = entry.split('/').next().unwrap_or(entry);
            prop_assert!(protected(&path, protected_by, false));
            let chars: Vec<char> = path.chars().collect();
            let start = at % chars.len();
            let end = (start + if star { len } else { 1 }).min(chars.len());
            let leading_dot = |i: usize| chars[i] == '.' && i > 0 && chars[i - 1] == '/';
            prop_assume!((start..end).all(|i| chars[i] != '/' && (dotglob || !leading_dot(i))));
            let mut glob: String = chars[..start].iter().collect();
            glob.push(if star { '*' } else { '?' });
            glob.extend(&chars[end..]);
            prop_assert!(protected(&glob, protected_by, dotglob), "{glob} by {protected_by}");
        }
    }

    #[test]
    fn normalise_resolves_dots() {
        let cases = [
            ("/workspace/a.txt", Some("/workspace/a.txt")),
            ("/workspace/./a/../b", Some("/workspace/b")),
            ("/workspace/../etc/passwd", Some("/etc/passwd")),
            ("//workspace//a/", Some("/workspace/a")),
            ("/../../x", Some("/x")),
            ("/", Some("/")),
            ("/workspace/..", Some("/")),
            ("a.txt", None),
            ("./a", None),
            ("~/a", None),
            ("", None),
        ];
        for (path, want) in cases {
            assert_eq!(normalise(path).as_deref(), want, "{path:?}");
        }
    }

    #[test]
    fn inside_means_at_or_below() {
        let cases = [
            ("/workspace", "/workspace", true),
            ("/workspace/a", "/workspace", true),
            ("/workspace2", "/workspace", false),
            ("/workspace2/a", "/workspace", false),
            ("/work", "/workspace", false),
            ("/etc", "/workspace", false),
            ("/etc", "/", true),
        ];
        for (path, dir, want) in cases {
            assert_eq!(inside(path, dir), want, "{path} in {dir}");
        }
    }

    #[test]
    fn protected_entries_are_whole_components_anywhere_or_an_absolute_place() {
        let cases = [
            ("/workspace/.git/config", ".git/", true),
            ("/workspace/.git", ".git/", true),
            ("/workspace/vendor/x/.git/hooks/pre-commit", ".git", true),
            ("/workspace/.GIT/config", ".git/", true),
            ("/workspace/.gitignore", ".git/", false),
            ("/workspace/docs/git/notes.md", ".git/", false),
            (
                "/workspace/.github/workflows/ci.yml",
                ".github/workflows/",
                true,
            ),
            (
                "/workspace/.github/ISSUE_TEMPLATE/bug.md",
                ".github/workflows/",
                false,
            ),
            ("/workspace/app/.env", ".env", true),
            ("/workspace/.env.example", ".env", false),
            ("/workspace/.envrc", "./.envrc", true),
            ("/workspace/secrets/a", "/workspace/secrets", true),
            ("/workspace/secrets2", "/workspace/secrets", false),
            ("/workspace/a", "", false),
            ("/workspace/a", "/", true),
            ("/workspace/.gi?/config", ".git/", true),
            ("/workspace/.[g]it/hooks/x", ".git/", true),
            ("/workspace/*/.envrc", ".envrc", true),
            ("/workspace/.e*", ".env", true),
            ("/workspace/*", ".env", false),
            ("/workspace/*.log", ".git/", false),
            ("/workspace/sec*/a", "/workspace/secrets", true),
            ("/work*", "/workspace/secrets", false),
            ("/workspace/$d/config", ".git/", true),
            ("/workspace/.@(git)/config", ".git/", true),
            ("/workspace/out.log", ".git/", false),
        ];
        for (path, entry, want) in cases {
            assert_eq!(protected(path, entry, false), want, "{path} by {entry:?}");
        }
    }
}
