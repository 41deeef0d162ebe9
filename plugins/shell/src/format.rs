//! The text the model sees for a finished program: the seed's shell format
//! (`EXIT-CODE: ~a~%~%STDOUT:~%~a~%~%STDERR:~%~a`), plus a note when the host cut the output.

/// Format a finished program's result.
///
/// `exit_code` is `None` when a signal ended the program. `truncated` adds a closing
/// `(output cut)` line, so the model knows it saw only the start.
pub fn format_output(
    exit_code: Option<i32>,
    stdout: &str,
    stderr: &str,
    truncated: bool,
) -> String {
    let code = match exit_code {
        Some(c) => c.to_string(),
        None => "none (ended by a signal)".to_owned(),
    };
    let mut out = format!("EXIT-CODE: {code}\n\nSTDOUT:\n{stdout}\n\nSTDERR:\n{stderr}");
    if truncated {
        out.push_str("\n\n(output cut)");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format_output;

    #[test]
    fn seed_layout() {
        assert_eq!(
            format_output(Some(0), "a\nb\n", "", false),
            "EXIT-CODE: 0\n\nSTDOUT:\na\nb\n\n\nSTDERR:\n"
        );
    }

    #[test]
    fn non_zero_exit_is_plain_output() {
        let s = format_output(Some(2), "", "no such file", false);
        assert!(s.starts_with("EXIT-CODE: 2\n"));
        assert!(s.ends_with("STDERR:\nno such file"));
    }

    #[test]
    fn signal_and_cut_are_said() {
        let s = format_output(None, "x", "", true);
        assert!(s.starts_with("EXIT-CODE: none (ended by a signal)\n"));
        assert!(s.ends_with("\n\n(output cut)"));
    }
}
