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

#[cfg(test)]
mod tests {
    use super::{inside, normalise};

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
}
