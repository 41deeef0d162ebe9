//! Splitting a shell command line into simple commands and words, as far as a gate needs:
//! quotes and backslashes (a backslash before a line break joins the lines, outside single
//! quotes and comments), comments, here-documents (each body line read as a line of its own, so
//! a quote in the body cannot hide what follows it), the chain operators (`;`, `&`, `|`,
//! newlines, brackets),
//! redirections (their words are no arguments), here-strings, extglob groups (`@(a|b)` stays
//! in its word), and `$(...)`/backtick command substitutions and `<(...)`/`>(...)` process
//! substitutions, which become commands of their own (so that they are judged too) and leave
//! [`SUBSTITUTION`] in their word (so that a word made by one is seen to be unknown until it
//! runs). Variables are not expanded.
//!
//! shell-guard and approval both read lines through [`split`], so a line is cut the same way
//! by both gates.

use std::iter::Peekable;
use std::str::Chars;

use crate::wrappers::Input;
use crate::{Redirected, is_descriptor, redirection, until_close};

/// What a substitution (`$(...)`, backticks, `<(...)`) leaves in its word: its text cannot be
/// known before the command runs.
pub const SUBSTITUTION: &str = "$(...)";

/// How deep substitutions inside substitutions are split. A deeper one is the command
/// `[SUBSTITUTION]`: a program nobody can name, which the gates ask about. Each level rescans
/// its text, so this also bounds the work to `MAX_NESTING` passes over the line.
pub const MAX_NESTING: u32 = 32;

/// One simple command: its words, the files it writes by redirection, and the here-string it
/// reads on standard input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// Its words, quotes removed and redirections left out.
    pub words: Vec<String>,
    /// The files it writes by redirection (`>`, `>>`, `>|`, `>&FILE`, `<>`).
    pub redirects: Vec<String>,
    /// The text of its here-string (`<<< WORD`) or here-document (its body, read up to its
    /// delimiter line; variables and substitutions in it not expanded), when the last of its
    /// input redirections is one; else what it reads comes from a pipe or a file the gate
    /// cannot see.
    pub here: Option<String>,
}

impl Simple {
    /// What it reads on standard input, as far as the gate knows: its here-string, or what a
    /// pipe or a file gives it, which the gate cannot see.
    pub fn input(&self) -> Input<'_> {
        self.here.as_deref().map_or(Input::Unseen, Input::Text)
    }

    /// Add the finished `word`, which follows the redirection operator `after`, if any.
    fn add(&mut self, word: String, after: Option<Redirected>) {
        match after {
            None => self.words.push(word),
            Some(Redirected::Duplicate) if is_descriptor(&word) => {}
            Some(Redirected::Output | Redirected::Duplicate) => self.redirects.push(word),
            Some(Redirected::ReadWrite) => {
                self.redirects.push(word);
                self.here = None;
            }
            Some(Redirected::Input) => self.here = None,
            Some(Redirected::HereString) => self.here = Some(word),
        }
    }

    /// Whether it holds anything: a command made only of a redirection (`> file`) writes.
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.redirects.is_empty() && self.here.is_none()
    }
}

/// `line` split into simple commands, in order, then those of its substitutions (recursively).
pub fn split(line: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    // The shell drops NUL bytes from what it reads.
    split_into(&line.replace('\0', ""), 0, &mut out);
    out
}

/// Whether `word` is bash's `{name}` before a redirection: a new descriptor, its number put in
/// the variable. Any `{...}` counts (`{a[0]}` names an array element): a word taken for a
/// descriptor is only dropped from the arguments, while text taken for standard input would be
/// trusted.
fn is_named_fd(word: &str) -> bool {
    word.len() > 2 && word.starts_with('{') && word.ends_with('}')
}

/// A here-document whose body is still to be read.
struct Heredoc {
    /// The line that ends it.
    delimiter: String,
    /// Whether its body's leading tabs are stripped (`<<-`).
    tabs: bool,
    /// Whether its delimiter was quoted: the shell then expands nothing in the body.
    quoted: bool,
    /// Whether the gate reads its delimiter as bash does: no backslash (bash keeps some inside
    /// double quotes that the gate drops) and no expansion or substitution in it.
    plain: bool,
    /// The command that reads it: its place in `out` once ended.
    command: usize,
    /// The count of input redirections that command had made with it: a later one replaces
    /// it (0: it is given to another descriptor than standard input).
    nth: usize,
}

/// The word being read and the command it goes into.
#[derive(Default)]
struct Reader {
    out: Vec<Simple>,
    cur: Simple,
    word: String,
    in_word: bool,
    /// The redirection operator the next word follows.
    after: Option<Redirected>,
    /// The texts of the substitutions met, split after the line.
    nested: Vec<String>,
    /// The next word is a here-document's delimiter (`<<`; `<<-`: with its body's leading
    /// tabs stripped).
    delimiter_next: Option<bool>,
    /// The here-documents whose bodies start after the current line.
    heredocs: Vec<Heredoc>,
    /// Whether the here-document whose delimiter comes next is standard input (no descriptor
    /// other than 0 before its `<<`).
    delimiter_stdin: bool,
    /// The input redirections of the current command so far.
    inputs: usize,
    /// The current word has quotes or a backslash in it (a here-document delimiter so written
    /// keeps its body as written).
    quoted: bool,
    /// The current word has a backslash inside double quotes (which bash keeps before most
    /// characters, where the gate drops it).
    backslashed: bool,
    /// The current word has an expansion the shell makes (`$`, a substitution) outside single
    /// quotes: a here-string so written reads what the gate cannot see.
    expands: bool,
    /// The next redirection changes standard input whatever its operator (`0>&3`, `0>f`).
    stdin_next: bool,
    /// For each command in `out`, how many input redirections it made.
    inputs_of: Vec<usize>,
}

impl Reader {
    /// End the current word; a word after `>` or `<` is a redirection's, not an argument.
    fn end_word(&mut self) {
        let quoted = std::mem::take(&mut self.quoted);
        let backslashed = std::mem::take(&mut self.backslashed);
        let expands = std::mem::take(&mut self.expands);
        if std::mem::take(&mut self.in_word) {
            let word = std::mem::take(&mut self.word);
            if let Some(tabs) = self.delimiter_next.take() {
                self.heredocs.push(Heredoc {
                    delimiter: word.clone(),
                    tabs,
                    quoted,
                    plain: !backslashed && !expands && !word.contains(['$', '`']),
                    command: self.out.len(),
                    // The count no command reaches when the document is not its standard input.
                    nth: if self.delimiter_stdin {
                        self.inputs + 1
                    } else {
                        0
                    },
                });
            }
            let mut after = self.after.take();
            // A here-string holding an expansion is text the gate cannot see.
            if after == Some(Redirected::HereString) && expands {
                after = Some(Redirected::Input);
            }
            if std::mem::take(&mut self.stdin_next) {
                // `0>&3`, `0>f`: standard input is moved, whatever the operator does besides.
                self.cur.here = None;
                self.inputs += 1;
            } else if let Some(Redirected::Input | Redirected::HereString | Redirected::ReadWrite) =
                after
            {
                self.inputs += 1;
            }
            self.cur.add(word, after);
        }
    }

    /// At a line break: the bodies of the here-documents the line opened, up to each one's
    /// delimiter line. Each body line is read as a line of its own (a shell reading the body
    /// runs it; a quote in one cannot reach past it) and, after its delimiter, the line goes
    /// on as commands.
    /// The body becomes the text its command reads when it is that command's last input
    /// redirection and the gate can take it as written: not when its delimiter line never
    /// comes (cut short, as inside a substitution the gate ended at a `)` of the body), when
    /// the gate reads a quoted delimiter otherwise than bash, or when the shell expands the
    /// body (an unquoted delimiter) and it holds `$`, a backquote, `\\` or a backslash-newline.
    fn heredoc_bodies(&mut self, chars: &mut Peekable<Chars<'_>>) {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            let mut ended = false;
            while chars.peek().is_some() {
                let line: String = chars.by_ref().take_while(|&c| c != '\n').collect();
                let bare = if doc.tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if bare == doc.delimiter {
                    ended = true;
                    break;
                }
                body.push_str(bare);
                body.push('\n');
                self.nested.push(line);
            }
            // What the shell changes in an unquoted body: expansions, `\\`, a backslash-newline.
            let expanded = body.contains(['$', '`'])
                || body.contains("\\\\")
                || body.lines().any(|l| l.ends_with('\\'));
            let as_written = (doc.quoted && doc.plain) || !doc.quoted && !expanded;
            if ended
                && as_written
                && self.inputs_of.get(doc.command) == Some(&doc.nth)
                && let Some(reader) = self.out.get_mut(doc.command)
            {
                reader.here = Some(body);
            }
        }
    }

    /// End the current command.
    fn end_command(&mut self) {
        self.end_word();
        let cur = std::mem::take(&mut self.cur);
        let inputs = std::mem::take(&mut self.inputs);
        if cur.is_empty() {
            // Nothing reads a here-document of a command with no words (`<<EOF;`): the place
            // it was given is the next command's.
            let next = self.out.len();
            while self.heredocs.last().is_some_and(|doc| doc.command == next) {
                self.heredocs.pop();
            }
        } else {
            self.out.push(cur);
            self.inputs_of.push(inputs);
        }
        self.after = None;
        // A `<<` with no word before the command ends has no body.
        self.delimiter_next = None;
    }

    /// A substitution whose text is `inner`: judged on its own, unknown in its word.
    fn substitution(&mut self, inner: String) {
        self.expands = true;
        self.nested.push(inner);
        self.word.push_str(SUBSTITUTION);
        self.in_word = true;
    }
}

fn split_into(line: &str, depth: u32, out: &mut Vec<Simple>) {
    if depth > MAX_NESTING {
        out.push(Simple {
            words: vec![SUBSTITUTION.to_owned()],
            ..Simple::default()
        });
        return;
    }
    let mut r = Reader::default();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A backslash before a line break joins the lines (`r\⏎m` is `rm`).
            '\\' if chars.peek() == Some(&'\n') => {
                chars.next();
            }
            '\\' => {
                // A backslash at the very end stands for itself.
                r.word.push(chars.next().unwrap_or('\\'));
                r.in_word = true;
                r.quoted = true;
            }
            // A comment, to the end of its line (a backslash there joins nothing).
            '#' if !r.in_word => while chars.next_if(|&c| c != '\n').is_some() {},
            '\'' => {
                r.in_word = true;
                r.quoted = true;
                r.word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                r.in_word = true;
                r.quoted = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if chars.peek() == Some(&'\n') => {
                            chars.next();
                        }
                        '\\' => {
                            r.backslashed = true;
                            r.word.push(chars.next().unwrap_or('\\'));
                        }
                        '`' => r.substitution(chars.by_ref().take_while(|&c| c != '`').collect()),
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            r.substitution(until_close(&mut chars));
                        }
                        c => {
                            r.expands |= c == '$';
                            r.word.push(c);
                        }
                    }
                }
            }
            // A command substitution, or a process substitution (`<(...)`, `>(...)`): its
            // command runs, and what it leaves in the word cannot be known.
            '$' | '<' | '>' if chars.peek() == Some(&'(') => {
                chars.next();
                r.substitution(until_close(&mut chars));
            }
            '`' => r.substitution(chars.by_ref().take_while(|&c| c != '`').collect()),
            // An extglob group, `!(x)`, `@(a|b)`: part of the word, not a subshell.
            '(' if r.in_word && r.word.ends_with(['?', '*', '+', '@', '!']) => {
                let inner = until_close(&mut chars);
                r.word.push('(');
                r.word.push_str(&inner);
                r.word.push(')');
            }
            '<' | '>' => {
                // `2>x`, `0<x`, `{fd}<x`: the digits (or the `{name}` bash gives a new
                // descriptor) before the operator are a descriptor, not a word.
                let mut fd = None;
                let digits = !r.word.is_empty() && r.word.chars().all(|d| d.is_ascii_digit());
                if r.in_word && (digits || is_named_fd(&r.word)) {
                    fd = Some(std::mem::take(&mut r.word));
                    r.in_word = false;
                    r.quoted = false;
                    r.expands = false;
                }
                r.end_word();
                let zero = fd
                    .as_deref()
                    .is_some_and(|d| !d.is_empty() && d.trim_start_matches('0').is_empty());
                // `<` is standard input's unless another descriptor is named; `>` only when 0 is.
                let stdin = if c == '<' { fd.is_none() || zero } else { zero };
                r.stdin_next = c == '>' && zero;
                let head: String = std::iter::once(c).chain(chars.clone()).take(3).collect();
                let (mut what, len) = redirection(&head);
                for _ in 1..len {
                    chars.next();
                }
                // Text given to another descriptor (`3<<< x`, `3<<EOF`) is not what the command
                // reads on standard input: as far as the gate knows, that is then unseen.
                if what == Redirected::HereString && !stdin {
                    what = Redirected::Input;
                }
                if what == Redirected::Input && head.starts_with("<<") {
                    r.delimiter_next = Some(head.starts_with("<<-"));
                    r.delimiter_stdin = stdin;
                }
                r.after = Some(what);
            }
            '\n' => {
                r.end_command();
                r.heredoc_bodies(&mut chars);
            }
            ';' | '&' | '|' | '(' | ')' => r.end_command(),
            c if c.is_whitespace() => r.end_word(),
            c => {
                r.expands |= c == '$';
                r.word.push(c);
                r.in_word = true;
            }
        }
    }
    r.end_command();
    out.append(&mut r.out);
    for inner in r.nested {
        split_into(&inner, depth + 1, out);
    }
}

/// `word` as a shell line would need it written, so that an argv list can be read (or shown)
/// as a command line: as is when it is plain, else in single quotes.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=~:,+@%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_NESTING, SUBSTITUTION, Simple, quote, split};

    fn words(line: &str) -> Vec<Vec<String>> {
        split(line).into_iter().map(|s| s.words).collect()
    }

    #[test]
    fn quotes_chains_and_substitutions_are_read_as_a_shell_reads_them() {
        assert_eq!(
            words(r#"a 'b c' "d $(e f) g" h\ i; j && k | l"#),
            [
                vec!["a", "b c", "d $(...) g", "h i"],
                vec!["j"],
                vec!["k"],
                vec!["l"],
                vec!["e", "f"],
            ]
        );
        assert_eq!(words("ls @(a|b) !(c)"), [vec!["ls", "@(a|b)", "!(c)"]]);
        assert_eq!(
            words("x `rm -rf ~`"),
            [vec!["x", SUBSTITUTION], vec!["rm", "-rf", "~"]]
        );
        assert_eq!(words("trailing\\"), [vec!["trailing\\"]]);
    }

    /// A quote in a comment or in a here-document's body hid the commands after it; a
    /// backslash ending a comment joined the next line to it.
    #[test]
    fn comments_and_here_documents_end_where_the_shell_ends_them() {
        assert_eq!(
            words("echo hi # don't\nrm -rf ~"),
            [vec!["echo", "hi"], vec!["rm", "-rf", "~"]]
        );
        assert_eq!(words("#\\\nrm -rf ~"), [vec!["rm", "-rf", "~"]]);
        assert_eq!(words("r\\\nm -rf ~"), [vec!["rm", "-rf", "~"]]);
        assert_eq!(words("echo a#b 'x # y'"), [vec!["echo", "a#b", "x # y"]]);
        let got = words("cat <<EOF >n.txt\nit's\nEOF\nrm -rf ~");
        assert_eq!(got, [vec!["cat"], vec!["rm", "-rf", "~"], vec!["its"]]);
        let got = words("bash <<-'END'\n\trm -rf ~\n\tEND\nls");
        assert_eq!(got, [vec!["bash"], vec!["ls"], vec!["rm", "-rf", "~"]]);
    }

    #[test]
    fn a_here_document_is_what_its_command_reads() {
        let here = |line: &str| -> Vec<Option<String>> {
            split(line).into_iter().map(|s| s.here).collect()
        };
        let body = Some("a\n$x\n".to_owned());
        assert_eq!(
            here("patch -p1 <<'EOF'\na\n$x\nEOF"),
            [body.clone(), None, None]
        );
        assert_eq!(here("patch <<-'E' | tee l\n\ta\n\t$x\n\tE")[0], body);
        // The last input redirection wins; another descriptor's text is not standard input.
        assert_eq!(here("patch <<E < x.diff\na\nE")[0], None);
        assert_eq!(here("patch < x.diff <<E\na\nE")[0], Some("a\n".into()));
        assert_eq!(here("patch 3<<E\na\nE")[0], None);
        assert_eq!(here("patch 0<<E\na\nE")[0], Some("a\n".into()));
        assert_eq!(here("cat x | xargs rm 3<<< '/tmp/a'")[1], None);
        // A document given to no command is nobody's: not the next command's.
        assert_eq!(here("<<E; patch < x.diff\na\nE")[0], None);
        assert_eq!(
            here("cat <<A; patch <<B\n1\nA\n2\nB")[..2],
            [Some("1\n".into()), Some("2\n".into())]
        );
        // Named descriptors and a moved standard input.
        assert_eq!(here("cat x | xargs rm -rf {fd}<<< /tmp/a")[1], None);
        assert_eq!(split("patch {fd}</dev/null")[0].words, ["patch"]);
        assert_eq!(here("xargs rm 3<&0 <<< /tmp/a 0>&3")[0], None);
        assert_eq!(here("patch 3<e.diff <<'E' 0>&3\na\nE")[0], None);
        assert_eq!(here("xargs rm <<< /tmp/a 2>&1")[0], Some("/tmp/a".into()));
        // What the shell expands in an unquoted document, or a here-string, is not seen.
        assert_eq!(here("bash <<E\necho $x\nE")[0], None);
        assert_eq!(here("xargs rm -rf <<E\n/ro\\\not\nE")[0], None);
        assert_eq!(here("bash <<'E'\necho $x\nE")[0], Some("echo $x\n".into()));
        assert_eq!(here("bash <<\\E\necho $x\nE")[0], Some("echo $x\n".into()));
        assert_eq!(here("bash <<< \"echo $x\"")[0], None);
        assert_eq!(here("bash <<< 'echo $x'")[0], Some("echo $x".into()));
        // A body whose delimiter never comes is not taken (a `)` in it ended a substitution).
        assert_eq!(here("echo $(xargs rm -rf <<'E'\n)\n/usr\nE\n)")[1], None);
        // A delimiter the gate reads otherwise than bash; {a[0]} is a descriptor.
        assert_eq!(
            here("xargs rm -rf <<\"E\\F\"\n/tmp/x\nEF\n/home\nE\\F")[0],
            None
        );
        assert_eq!(here("xargs rm <<`E`\n/tmp/x\n`E`")[0], None);
        assert_eq!(here("cat x | xargs rm -rf {a[0]}<<< /tmp/x")[1], None);
        // A backslash the shell keeps in an unquoted body; an empty word is no descriptor.
        assert_eq!(
            here("patch <<E\nprintf \"a\\n\"\nE")[0],
            Some("printf \"a\\n\"\n".into())
        );
        assert_eq!(split("echo ''<<< x")[0].words, ["echo", ""]);
    }

    #[test]
    fn redirections_are_not_arguments() {
        let got = split("cat <in 2>/dev/null >out >&2 >&file <<<'rm -rf ~'; > lone");
        assert_eq!(
            got,
            [
                Simple {
                    words: vec!["cat".into()],
                    redirects: vec!["/dev/null".into(), "out".into(), "file".into()],
                    here: Some("rm -rf ~".into()),
                },
                Simple {
                    redirects: vec!["lone".into()],
                    ..Simple::default()
                },
            ]
        );
    }

    /// Substitutions nested past the bound leave a program nobody can name (the gates ask),
    /// and cost a bounded number of passes: 20,000 levels once overflowed shell-guard's stack
    /// and took quadratic time.
    #[test]
    fn deep_nesting_is_cut_into_an_unknown_command() {
        let depth = 20_000;
        let line = format!("{}rm -rf ~{}", "echo $(".repeat(depth), ")".repeat(depth));
        let got = words(&line);
        assert_eq!(got.len(), MAX_NESTING as usize + 2, "{:?}", &got[..3]);
        assert_eq!(got.last(), Some(&vec![SUBSTITUTION.to_owned()]));
    }

    #[test]
    fn plain_words_are_not_quoted() {
        assert_eq!(quote("/tmp/a-b_c.txt"), "/tmp/a-b_c.txt");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
