//! Programs whose script may run a command: GNU `sed`'s `e` command and `s///e` flag, `awk`'s
//! `system()` and pipes, `vi`'s `:!`. A script the gate reads and finds harmless reads as the
//! program itself; one that runs something, or that it cannot read (a script file), asks.

use std::collections::BTreeSet;

use crate::launchers::shown;
use crate::options;
use crate::wrappers::Wrapped;

/// GNU sed's options (`bsnrzuEe:f:l:i::` and its long ones); GNU getopt lets them come after
/// the script and the files.
const SED: &[&str] = &[
    "b|binary",
    "s|separate",
    "n|quiet",
    "|silent",
    "r|regexp-extended",
    "E",
    "z|null-data",
    "|zero-terminated",
    "u|unbuffered",
    "e|expression=",
    "f|file=",
    "l|line-length=",
    "i|in-place?",
    "|debug",
    "|posix",
    "|sandbox",
    "|follow-symlinks",
    "|version",
    "|help",
];

/// The options of the awks together: POSIX (`-F`, `-v`, `-f`), gawk's (`-e`, `-E`, `-i`, `-l`,
/// and its flags) and mawk's `-W`. Every awk stops reading options at its program.
const AWK: &[&str] = &[
    "F|field-separator=",
    "f|file=",
    "v|assign=",
    "W=",
    "b|characters-as-bytes",
    "c|traditional",
    "C|copyright",
    "d|dump-variables?",
    "D|debug?",
    "e|source=",
    "E|exec=",
    "g|gen-pot",
    "h|help",
    "i|include=",
    "k|csv",
    "l|load=",
    "L|lint?",
    "M|bignum",
    "n|non-decimal-data",
    "N|use-lc-numeric",
    "o|pretty-print?",
    "O|optimize",
    "p|profile?",
    "P|posix",
    "r|re-interval",
    "s|no-optimize",
    "S|sandbox",
    "t|lint-old",
    "V|version",
];

/// The awk options whose value is a program or code the gate cannot see: a program file
/// (`-f`, `-E`), a source file to include, an extension library to load, the debugger's
/// commands.
const AWK_FROM_FILES: &[&str] = &["file", "exec", "include", "load", "debug"];

/// The vi and vim names whose `-c` and `+` commands are read (`rvim`, restricted, runs no
/// shell).
pub(crate) const VIMS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "ex",
    "view",
    "vimdiff",
    "nvimdiff",
    "gvim",
    "gview",
    "gvimdiff",
    "vimx",
    "vim.basic",
    "vim.tiny",
    "vim.nox",
    "vim.gtk3",
    "evim",
    "rvim",
    "rview",
];

/// An Ex command or a vim option: its whole name, and the fewest letters of it vim takes
/// (`:w[rite]` is `("write", 1)`; an option's short name is given as a name of its own).
type ExName = (&'static str, usize);

/// Ex commands that write or quit, which run nothing and may be forced with `!`.
const EX_WRITE_QUIT: &[ExName] = &[
    ("write", 1),
    ("wq", 2),
    ("wall", 2),
    ("wqall", 3),
    ("xit", 1),
    ("exit", 3),
    ("xall", 2),
    ("quit", 1),
    ("qall", 2),
    ("quitall", 5),
    ("update", 2),
];

/// The commands of [`EX_WRITE_QUIT`] that quit the editor.
const EX_QUIT: &[ExName] = &[
    ("wq", 2),
    ("wqall", 3),
    ("xit", 1),
    ("exit", 3),
    ("xall", 2),
    ("quit", 1),
    ("qall", 2),
    ("quitall", 5),
];

/// Ex commands that run nothing when not forced: substitutions (without a `\=` expression),
/// deletions, moves and copies, joins, yanks, sorting, alignment, `:nohlsearch`.
const EX_PLAIN: &[ExName] = &[
    ("substitute", 1),
    ("delete", 1),
    ("move", 1),
    ("t", 1),
    ("copy", 2),
    ("join", 1),
    ("yank", 1),
    ("sort", 3),
    ("retab", 3),
    ("left", 2),
    ("right", 2),
    ("center", 2),
    ("nohlsearch", 3),
];

/// `:set` and `:setlocal`, which run nothing when they set only [`EX_SAFE_SETTINGS`].
const EX_SET: &[ExName] = &[("set", 2), ("setlocal", 4)];

/// Vim options that only change how text is read or written (no expression, program or file),
/// each by its long and its short name.
const EX_SAFE_SETTINGS: &[(&str, &str)] = &[
    ("fileformat", "ff"),
    ("fileencoding", "fenc"),
    ("expandtab", "et"),
    ("tabstop", "ts"),
    ("shiftwidth", "sw"),
    ("softtabstop", "sts"),
    ("textwidth", "tw"),
    ("number", "nu"),
    ("relativenumber", "rnu"),
    ("bomb", "bomb"),
    ("endofline", "eol"),
    ("fixendofline", "fixeol"),
    ("list", "list"),
    ("wrap", "wrap"),
    ("paste", "paste"),
    ("ignorecase", "ic"),
    ("smartcase", "scs"),
    ("hlsearch", "hls"),
    ("incsearch", "is"),
    ("autoindent", "ai"),
    ("readonly", "ro"),
    ("modifiable", "ma"),
    ("more", "more"),
    ("binary", "bin"),
    ("wrapscan", "ws"),
    ("undolevels", "ul"),
];

/// Whether `name` spells one of the commands of `table`.
fn ex_named(name: &str, table: &[ExName]) -> bool {
    table
        .iter()
        .any(|(whole, min)| name.len() >= *min && whole.starts_with(name))
}

/// `sed`: its script (the `-e`s, joined by newlines, else its first operand) read as GNU sed
/// reads it ([`sed_executes`]); a script with an `e` command or an `s///e` flag, one read from
/// a file (`-f`), or one the reading fails on, makes the gate ask. `--sandbox` turns `e` off.
pub(crate) fn sed(args: &[String]) -> Result<Option<Wrapped>, String> {
    let read = options::permuted(SED, args)?;
    if read.has("sandbox") || read.has("version") || read.has("help") {
        return Ok(None);
    }
    if read.has("file") {
        return Err("it reads its script from a file (-f), which this gate cannot see".into());
    }
    let Some(script) = sed_script(&read) else {
        return Ok(None);
    };
    match sed_executes(&script) {
        Some(false) => Ok(None),
        Some(true) => Err("its script runs a command (the `e` command, or `s///e`)".into()),
        None => Err("its script is not one this gate can read".into()),
    }
}

/// The script of `sed` read with [`SED`]: its `-e`s joined by newlines, else its first
/// operand.
fn sed_script(read: &options::Options) -> Option<String> {
    if read.has("expression") {
        return Some(read.values("expression").collect::<Vec<_>>().join("\n"));
    }
    read.rest.first().cloned()
}

/// The files a `sed` run writes by its script's `w` and `W` commands and `s///w` flags
/// (`sed -n 'w out' f`), and, with `-i`, the files it edits: every operand after the script.
/// A script from a file (`-f`) or one this reading fails on: why it cannot be told.
pub(crate) fn sed_writes(args: &[String]) -> Result<Vec<String>, String> {
    let read = options::permuted(SED, args)?;
    // `--sandbox` refuses `w`, `r` and `e`.
    let mut writes = if read.has("sandbox") {
        Vec::new()
    } else if read.has("file") {
        return Err("its script comes from a file (-f), which may write with `w`".into());
    } else {
        match sed_script(&read) {
            Some(script) => {
                sed_read(&script)
                    .ok_or("its script is not one this gate can read")?
                    .writes
            }
            None => return Ok(Vec::new()),
        }
    };
    if read.has("in-place") {
        let script = usize::from(!read.has("expression") && !read.has("file"));
        let files = read.rest.iter().skip(script).cloned().collect();
        let suffix = read.values("in-place").last().unwrap_or_default();
        writes.extend(crate::writes::backups(files, suffix));
    }
    Ok(writes)
}

/// What reading a sed script found.
#[derive(Default)]
struct SedRead {
    /// Whether it runs a command (`e`, `s///e`).
    executes: bool,
    /// The files its `w`, `W` and `s///w` write.
    writes: Vec<String>,
}

/// A sed script being read, one character at a time.
struct SedScript {
    /// The script.
    chars: Vec<char>,
    /// Where the reading is.
    at: usize,
}

impl SedScript {
    /// The character here.
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// The character here, and move past it.
    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }

    /// Skip the characters `skip` says to.
    fn skip(&mut self, skip: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&skip) {
            self.at += 1;
        }
    }

    /// Skip blanks (not newlines).
    fn blanks(&mut self) {
        self.skip(|c| c == ' ' || c == '\t');
    }

    /// Skip to the end of the line, and past it.
    fn line(&mut self) {
        self.skip(|c| c != '\n');
        self.at += 1;
    }

    /// The file name of `w` or `W`: after blanks, the rest of the line; and past it.
    fn file(&mut self) -> String {
        self.blanks();
        let start = self.at;
        self.skip(|c| c != '\n');
        let name = self
            .chars
            .get(start..self.at)
            .unwrap_or_default()
            .iter()
            .collect();
        self.at += 1;
        name
    }

    /// A label (`:a`, `b a`): up to a blank, newline, `;`, `}` or `#`.
    fn label(&mut self) {
        self.blanks();
        self.skip(|c| !c.is_whitespace() && !";}#".contains(c));
    }

    /// The end of a command: blanks, then `;`, a newline, the end, or (left to be read) `}` or
    /// `#`. Anything else is an error, as GNU sed has it.
    fn end(&mut self) -> Option<()> {
        self.blanks();
        match self.peek() {
            None | Some('}' | '#') => Some(()),
            Some(';' | '\n') => {
                self.at += 1;
                Some(())
            }
            Some(_) => None,
        }
    }

    /// Text up to the next `delimiter` not escaped by a backslash: a regular expression or a
    /// replacement. A newline or the end first is an error.
    fn until(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                '\n' => return None,
                c if c == delimiter => return Some(()),
                _ => {}
            }
        }
    }

    /// A regular expression up to the next `delimiter` not escaped by a backslash nor inside a
    /// bracket expression (`s/[/]/x/`: GNU sed reads the `/` in brackets as part of the
    /// regex). A newline or the end first is an error.
    fn regex(&mut self, delimiter: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                '\n' => return None,
                '[' => self.bracket()?,
                c if c == delimiter => return Some(()),
                _ => {}
            }
        }
    }

    /// The rest of a bracket expression after its `[`: a first `^` and a first `]` are part
    /// of it, `[:class:]`, `[.x.]` and `[=x=]` are read whole, and a backslash is itself.
    fn bracket(&mut self) -> Option<()> {
        if self.peek() == Some('^') {
            self.at += 1;
        }
        if self.peek() == Some(']') {
            self.at += 1;
        }
        loop {
            match self.next()? {
                '\n' => return None,
                ']' => return Some(()),
                '[' if matches!(self.peek(), Some(':' | '.' | '=')) => {
                    let kind = self.next()?;
                    while !(self.next()? == kind && self.peek() == Some(']')) {}
                    self.at += 1;
                }
                _ => {}
            }
        }
    }

    /// An address, if one is here: a line number (`first~step`), `$`, `/regex/` or `\cregexc`
    /// with its `I` and `M` flags; after a comma, also `+N` and `~N`.
    fn address(&mut self, second: bool) -> Option<()> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() || (second && (c == '+' || c == '~')) => {
                self.at += 1;
                self.skip(|c| c.is_ascii_digit());
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.skip(|c| c.is_ascii_digit());
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.regex('/')?;
                self.skip(|c| c == 'I' || c == 'M');
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.next()?;
                self.regex(delimiter)?;
                self.skip(|c| c == 'I' || c == 'M');
            }
            _ => {}
        }
        Some(())
    }

    /// The text of `a`, `i` or `c`: GNU's one-liner (`a text`) or the classic form (`a\`, a
    /// newline, then lines each ended by a backslash but the last).
    fn text(&mut self) {
        self.blanks();
        if self.peek() == Some('\\') {
            self.at += 1;
            if self.peek() == Some('\n') {
                self.at += 1;
            }
        }
        while let Some(c) = self.next() {
            match c {
                '\\' => self.at += 1,
                '\n' => return,
                _ => {}
            }
        }
    }
}

/// Whether the GNU sed script `script` runs a command: an `e` command, or the `e` flag of an
/// `s` command. `None` when it cannot be read (GNU sed would refuse it too, or it uses what
/// this reading does not know).
fn sed_executes(script: &str) -> Option<bool> {
    sed_read(script).map(|read| read.executes)
}

/// What the GNU sed script `script` does that the gates must see ([`SedRead`]); `None` when it
/// cannot be read.
fn sed_read(script: &str) -> Option<SedRead> {
    let mut read = SedRead::default();
    let mut s = SedScript {
        chars: script.chars().collect(),
        at: 0,
    };
    loop {
        s.skip(|c| c.is_whitespace() || c == ';');
        if s.peek().is_none() {
            return Some(read);
        }
        s.address(false)?;
        s.blanks();
        if s.peek() == Some(',') {
            s.at += 1;
            s.blanks();
            s.address(true)?;
        }
        s.blanks();
        while s.peek() == Some('!') {
            s.at += 1;
            s.blanks();
        }
        match s.next()? {
            '{' => {}
            '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => s.end()?,
            '#' | 'r' | 'R' => s.line(),
            'w' | 'W' => read.writes.push(s.file()),
            ':' | 'b' | 't' | 'T' | 'v' => {
                s.label();
                s.end()?;
            }
            'l' | 'L' | 'q' | 'Q' => {
                s.blanks();
                s.skip(|c| c.is_ascii_digit());
                s.end()?;
            }
            'a' | 'i' | 'c' => s.text(),
            'e' => {
                read.executes = true;
                s.line();
            }
            's' => {
                let delimiter = s.next().filter(|d| *d != '\n' && *d != '\\')?;
                s.regex(delimiter)?;
                s.until(delimiter)?;
                loop {
                    match s.peek() {
                        Some('e') => {
                            read.executes = true;
                            s.at += 1;
                        }
                        Some('w') => {
                            s.at += 1;
                            read.writes.push(s.file());
                            break;
                        }
                        Some(c) if c.is_ascii_digit() || "gpiImM".contains(c) => s.at += 1,
                        _ => {
                            s.end()?;
                            break;
                        }
                    }
                }
            }
            'y' => {
                let delimiter = s.next().filter(|d| *d != '\n' && *d != '\\')?;
                s.until(delimiter)?;
                s.until(delimiter)?;
                s.end()?;
            }
            _ => return None,
        }
    }
}

/// `awk` (and gawk, mawk...): its program texts (`-e`/`--source`, else its first operand) read
/// by [`awk_runs`]; a program from a file (`-f`, `-E`, `-i`, `-l`, `-D`, mawk's `-W exec`)
/// makes the gate ask, as does a program that may run a command.
pub(crate) fn awk(args: &[String]) -> Result<Option<Wrapped>, String> {
    let read = options::read(AWK, args)?;
    if let Some(option) = AWK_FROM_FILES.iter().find(|o| read.has(o)) {
        return Err(format!(
            "its --{option} brings in a program or code from a file this gate cannot see"
        ));
    }
    let w_from_file = read.values("W").any(|w| {
        let name = w.split('=').next().unwrap_or_default();
        !name.is_empty()
            && ["exec", "file", "include", "load", "source"]
                .iter()
                .any(|o| o.starts_with(name))
    });
    if w_from_file {
        return Err("its -W brings in a program or code this gate does not read".into());
    }
    let programs: Vec<&str> = if read.has("source") {
        read.values("source").collect()
    } else {
        read.rest.first().map(String::as_str).into_iter().collect()
    };
    if programs.iter().any(|p| awk_runs(p)) {
        return Err(
            "its program may run a command (`system()`, a pipe to or from a command, or an `@` \
             directive or indirect call)"
                .into(),
        );
    }
    Ok(None)
}

/// Where [`awk_runs`] may be in a program: in its code after an operand (where a `/` divides,
/// or starts a regular expression after a name such as `print`) or after an operator (where it
/// can only start one), in a string, a regular expression, just after a backslash in one of
/// those, or between the two bars of `||`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Awk {
    /// Code, after an operand.
    AfterOperand,
    /// Code, after an operator or at the start of a statement.
    AfterOperator,
    /// A string.
    Str,
    /// A string, after a backslash.
    StrEscape,
    /// A regular expression.
    Regex,
    /// A regular expression, after a backslash.
    RegexEscape,
    /// Between the bars of `||`.
    SecondBar,
}

/// Whether a `system(` or `extension(` call (gawk's old loader) starts at `at` in `chars`.
fn awk_calls(chars: &[char], at: usize) -> bool {
    let before = at
        .checked_sub(1)
        .and_then(|i| chars.get(i))
        .is_some_and(|c| c.is_alphanumeric() || *c == '_');
    if before {
        return false;
    }
    ["system", "extension"].iter().any(|name| {
        let len = name.chars().count();
        let here: String = chars.iter().skip(at).take(len).collect();
        here == *name
            && chars
                .iter()
                .skip(at + len)
                .find(|c| !c.is_whitespace())
                .is_some_and(|c| *c == '(')
    })
}

/// Whether the awk program `program` may run a command: a `system(` call, a `|` that pipes to
/// or from a command (`print | "sh"`, `"cmd" | getline`, gawk's `|&`; not `||`), or an `@`
/// (gawk's `@include`, `@load`, and its indirect calls, which may call `system`). Strings and
/// regular expressions are skipped; as a `/` may divide or start a regular expression, every
/// reading is followed at once, and any that finds one of these counts: the one awk makes is
/// among them. A program that continues a line with a backslash counts too: awk does not join
/// a comment to the next line, and this reading does not tell comments apart.
fn awk_runs(program: &str) -> bool {
    if program.contains("\\\n") {
        return true;
    }
    let chars: Vec<char> = program.chars().collect();
    let mut now = BTreeSet::from([Awk::AfterOperator]);
    for (at, &c) in chars.iter().enumerate() {
        let mut then = BTreeSet::new();
        for &state in &now {
            match state {
                Awk::AfterOperand | Awk::AfterOperator => {
                    if c == '@' || awk_calls(&chars, at) {
                        return true;
                    }
                    match c {
                        '|' if chars.get(at + 1) == Some(&'|') => {
                            then.insert(Awk::SecondBar);
                        }
                        '|' => return true,
                        '"' => {
                            then.insert(Awk::Str);
                        }
                        '/' => {
                            then.insert(Awk::Regex);
                            if state == Awk::AfterOperand {
                                then.insert(Awk::AfterOperator);
                            }
                        }
                        '\n' => {
                            then.insert(Awk::AfterOperator);
                        }
                        c if c.is_whitespace() => {
                            then.insert(state);
                        }
                        '+' | '-' => {
                            then.insert(Awk::AfterOperand);
                            then.insert(Awk::AfterOperator);
                        }
                        c if c.is_alphanumeric() || "_)].".contains(c) => {
                            then.insert(Awk::AfterOperand);
                        }
                        _ => {
                            then.insert(Awk::AfterOperator);
                        }
                    }
                }
                Awk::Str => {
                    then.insert(match c {
                        '\\' => Awk::StrEscape,
                        '"' => Awk::AfterOperand,
                        '\n' => Awk::AfterOperator,
                        _ => Awk::Str,
                    });
                }
                Awk::Regex => match c {
                    '\\' => {
                        then.insert(Awk::RegexEscape);
                    }
                    // The end, or a `/` inside a bracket expression: both are followed.
                    '/' => {
                        then.insert(Awk::AfterOperand);
                        then.insert(Awk::Regex);
                    }
                    '\n' => {
                        then.insert(Awk::AfterOperator);
                    }
                    _ => {
                        then.insert(Awk::Regex);
                    }
                },
                Awk::StrEscape => {
                    then.insert(Awk::Str);
                }
                Awk::RegexEscape => {
                    then.insert(Awk::Regex);
                }
                Awk::SecondBar => {
                    then.insert(Awk::AfterOperator);
                }
            }
        }
        now = then;
    }
    false
}

/// `vi`, `vim`, `nvim`, `ex`...: the commands of `-c CMD`, `--cmd CMD` and `+CMD` must each be
/// one [`ex_safe`] knows to run nothing; `-S FILE` and a `-u` vimrc other than `NONE`, `NORC`
/// or `DEFAULTS` source a script, `-s FILE` (outside Ex mode) types keys from a file,
/// `--remote-send`/`--remote-expr` drive another editor, `nvim -l` runs a Lua script: all ask.
/// In Ex mode (`ex`, `-e`, `-es`) the editor runs the commands it reads on standard input
/// unless one of its commands quits first: the gate asks then too.
pub(crate) fn vim(name: &str, args: &[String]) -> Result<(), String> {
    let ex_mode = name == "ex"
        || args
            .iter()
            .take_while(|w| *w != "--")
            .any(|w| !w.starts_with("--") && w.starts_with('-') && w.contains(['e', 'E']));
    let mut commands: Vec<&str> = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        if word == "--" {
            break;
        }
        if let Some(command) = word.strip_prefix('+') {
            commands.push(command);
            continue;
        }
        match word.as_str() {
            "-c" | "--cmd" => {
                commands.extend(args.get(at).map(String::as_str));
                at += 1;
            }
            "-S" => return Err("it sources a script file (-S)".into()),
            "-u" | "-U" => {
                let rc = args.get(at).map_or("", String::as_str);
                if !["NONE", "NORC", "DEFAULTS"].contains(&rc) {
                    return Err("it sources a vimrc file (-u)".into());
                }
                at += 1;
            }
            "-s" if !ex_mode => {
                return Err("it types the keys of a script file (-s)".into());
            }
            "--remote-send" | "--remote-expr" => {
                return Err("it sends keys or an expression to another editor".into());
            }
            "-l" if name.starts_with("nvim") => {
                return Err("it runs a Lua script (-l)".into());
            }
            "-T" | "-i" | "-t" | "-q" | "-w" | "-W" | "--servername" | "--startuptime"
            | "--log" | "--listen" => at += 1,
            w if w.starts_with("-c") && w.len() > 2 => commands.extend(w.get(2..)),
            _ => {}
        }
    }
    if let Some(command) = commands.iter().find(|c| !ex_safe(c)) {
        return Err(format!(
            "its command `{}` may run a shell command or an expression, which this gate does \
             not read",
            shown(command)
        ));
    }
    let quits = commands.iter().any(|c| ex_quits(c));
    if ex_mode && !quits {
        return Err(
            "in Ex mode it runs the commands it reads on standard input, which this gate does \
             not read"
                .into(),
        );
    }
    Ok(())
}

/// The Ex commands of `command`, cut at each `|` not escaped by a backslash and at each line
/// break (vim separates commands at both).
fn ex_pieces(command: &str) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(piece) = pieces.last_mut() {
                    piece.push(c);
                    piece.extend(chars.next());
                }
            }
            '|' | '\n' | '\r' => pieces.push(String::new()),
            c => {
                if let Some(piece) = pieces.last_mut() {
                    piece.push(c);
                }
            }
        }
    }
    pieces
}

/// An Ex command cut into its name (after `:`s, blanks and a range of numbers, marks and
/// patterns), whether it is forced (`!` right after the name) and its arguments.
fn ex_parts(piece: &str) -> (String, bool, String) {
    let chars: Vec<char> = piece
        .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
        .chars()
        .collect();
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        match c {
            c if c.is_ascii_digit() || ".$%,;+- \t".contains(c) => at += 1,
            '\'' => at += 2, // a mark
            '/' | '?' => {
                // A pattern, up to the same character not escaped.
                at += 1;
                while let Some(&p) = chars.get(at) {
                    at += 1;
                    if p == '\\' {
                        at += 1;
                    } else if p == c {
                        break;
                    }
                }
            }
            _ => break,
        }
    }
    let rest: String = chars.iter().skip(at).collect();
    let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    let after = rest.get(name.len()..).unwrap_or_default();
    match after.strip_prefix('!') {
        Some(args) => (name, true, args.to_owned()),
        None => (name, false, after.to_owned()),
    }
}

/// Whether the Ex command line `command` (a `-c` or `+` argument) runs nothing but editing,
/// writing and quitting: each of its `|`-separated commands is a range alone (a line number, a
/// search), a write or quit of [`EX_WRITE_QUIT`] (forced or not), a command of [`EX_PLAIN`]
/// not forced, or `:set` of [`EX_SAFE_SETTINGS`]; and nothing in it has a `!` but a forced
/// write or quit, nor a `\=` expression. Anything else (`:!`, `:r !`, `:w !`, `:call
/// system()`, `:py`, `:lua`, `:source`, `:normal`...) may run a command.
fn ex_safe(command: &str) -> bool {
    ex_pieces(command).iter().all(|piece| {
        let (name, forced, args) = ex_parts(piece);
        if args.contains('!') || args.contains("\\=") {
            return false;
        }
        let name = name.as_str();
        if name.is_empty() {
            return !forced && args.trim().is_empty();
        }
        if ex_named(name, EX_WRITE_QUIT) {
            return true;
        }
        if forced {
            return false;
        }
        if ex_named(name, EX_SET) {
            return args.split_whitespace().all(safe_setting);
        }
        ex_named(name, EX_PLAIN)
    })
}

/// Whether the Ex command line `command` quits the editor.
fn ex_quits(command: &str) -> bool {
    ex_pieces(command)
        .iter()
        .any(|piece| ex_named(&ex_parts(piece).0, EX_QUIT))
}

/// Whether `:set`'s argument `setting` sets one of [`EX_SAFE_SETTINGS`] (also as `no...` or
/// `inv...`, with `!`, `&`, `?`) to a plain value.
fn safe_setting(setting: &str) -> bool {
    let (name, value) = match setting.split_once(['=', ':']) {
        Some((name, value)) => (name, Some(value)),
        None => (setting, None),
    };
    let name = name.trim_end_matches(['+', '-', '^', '!', '&', '?']);
    let known = |n: &str| {
        EX_SAFE_SETTINGS
            .iter()
            .any(|(long, short)| n == *long || n == *short)
    };
    let base = ["no", "inv"]
        .iter()
        .find_map(|p| name.strip_prefix(*p).filter(|b| known(b)))
        .unwrap_or(name);
    known(base)
        && value.is_none_or(|v| {
            v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.,".contains(c))
        })
}

#[cfg(test)]
mod tests {
    use super::{awk_runs, ex_safe, sed_executes};
    use crate::testing::*;

    #[test]
    fn sed_scripts_that_execute_are_read() {
        assert!(asks("sed '1e rm -rf ~' f"));
        assert!(asks("sed 's/.*/rm -rf ~/e' f"));
        assert!(asks("sed -n -e 'p' -e 'e id' f"));
        assert!(asks("sed --expression='s/x/y/ge' f"));
        assert!(asks("sed -f script.sed f"));
        assert!(asks("sed 's/a/b' f"), "an unclosed s cannot be read");
        assert!(
            asks("sed 's/[//#]*/rm -rf ~/e' f"),
            "the / in brackets is the regex's"
        );
        assert!(asks("sed '/[/#]*/e rm -rf ~' f"));
        assert!(
            asks("sed '#\\\ne rm -rf ~' f"),
            "a comment ends at the line's end"
        );
        assert_eq!(runs("sed 's/[^/]*$//' f"), None);
        assert_eq!(runs("sed -E 's/[[:space:]]+$//; s/[]x]/y/g' f"), None);
        assert!(asks("sed --frobnicate 's/a/b/' f"));
        assert_eq!(runs("sed -i 's/a/b/' f"), None);
        assert_eq!(runs("sed -n '/start/,/end/{/x/d;p}' f"), None);
        assert_eq!(runs("sed --sandbox 'e id' f"), None);
        assert_eq!(sed_executes("s|/usr|/opt|g;y/abc/xyz/"), Some(false));
        assert_eq!(sed_executes(":a;N;$!ba;s/\\n/ /g"), Some(false));
        assert_eq!(sed_executes("$a\\\nlast line\n1i header"), Some(false));
        assert_eq!(sed_executes("/^#/!s/foo/bar/2w out.txt"), Some(false));
        assert_eq!(sed_executes("s/e/E/g; 2q"), Some(false));
        assert_eq!(sed_executes("a text with e in it\ne"), Some(true));
        assert_eq!(sed_executes("s/x/y/;e"), Some(true));
        assert_eq!(sed_executes("0,/re/{s/a/b/M}"), Some(false));
    }

    #[test]
    fn awk_programs_that_run_commands_are_read() {
        assert!(asks("awk 'BEGIN { system(\"rm -rf ~\") }'"));
        assert!(
            awk_runs("# \"\\\nBEGIN{system(\"rm -rf ~\")}"),
            "a joined comment"
        );
        assert!(asks("awk '{ print | \"sh\" }' f"));
        assert!(asks("gawk 'BEGIN { \"id\" | getline x }'"));
        assert!(asks("awk -f prog.awk f"));
        assert!(asks("mawk -W exec prog.awk"));
        assert!(asks("gawk -e 'BEGIN{ f=\"system\"; @f(\"id\") }'"));
        assert!(asks("awk -Z '{print}'"));
        assert_eq!(runs("awk '{print $1}' f"), None);
        assert_eq!(
            runs("awk -F: -v OFS=, '$3 > 1000 || /x|y/ {print $1}' /etc/passwd"),
            None
        );
        assert!(!awk_runs("{ x = \"a|b\"; y = $1 / 2; print x, y }"));
        assert!(!awk_runs("$1 ~ /a|b/ && NR > 1"));
        assert!(awk_runs("{ a = b / c; print | \"sh\" }"));
        assert!(awk_runs("/\"/ { print | \"sh\" }"));
        assert!(awk_runs("BEGIN { system (\"id\") }"));
        assert!(!awk_runs("{ mysystem(1) }"));
    }

    #[test]
    fn vim_commands_that_run_a_shell_are_read() {
        assert!(asks("vim -c '!rm -rf ~' f"));
        assert!(
            asks("vim -c 'd\ncall system(\"id\")' -c q f"),
            "a line break ends a command"
        );
        assert!(asks("vim.basic -c '!id' f"));
        assert!(asks("vim -c ':call system(\"id\")' f"));
        assert!(asks("vi '+r !id' f"));
        assert!(asks("nvim --cmd 'lua os.execute(\"id\")' f"));
        assert!(asks("vim -S evil.vim f"));
        assert!(
            asks("vim -es f"),
            "Ex mode reads its commands on standard input"
        );
        assert!(asks("vim -c 'w !sh' f"));
        assert_eq!(runs("vim f"), None);
        assert_eq!(runs("vim +10 f"), None);
        assert_eq!(runs("vim -es -c '%s/a/b/g' -c 'wq' f"), None);
        assert_eq!(runs("vim -c 'set ff=unix' -c 'wq!' f"), None);
        assert_eq!(runs("ex -c '1,$d|x' f"), None);
        assert!(ex_safe("%s/a/b/g | w"));
        assert!(!ex_safe("%s/a/\\=system('id')/"));
        assert!(!ex_safe("set shell=/bin/sh"));
    }
}
