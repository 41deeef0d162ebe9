//! Guest paths, compared lexically (a gate cannot look at the filesystem).

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
pub fn protected(path: &str, entry: &str) -> bool {
    let path = path.to_ascii_lowercase();
    let entry = entry.to_ascii_lowercase();
    if entry.starts_with('/') {
        return normalise(&entry).is_some_and(|place| inside(&path, &place));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let wanted: Vec<&str> = entry
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    !wanted.is_empty()
        && parts
            .windows(wanted.len())
            .any(|run| run == wanted.as_slice())
}

#[cfg(test)]
mod tests {
    use super::{inside, normalise, protected};

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
        ];
        for (path, entry, want) in cases {
            assert_eq!(protected(path, entry), want, "{path} by {entry:?}");
        }
    }
}
