//! JSON text read as CPython's `json.loads` reads it (its C scanner), because what the twin scans
//! depends on what Python accepts and how it builds the value:
//!
//! - accepted beyond RFC 8259: `NaN`, `Infinity`, `-Infinity`, and `\u` escapes of lone
//!   surrogates (kept as one code point each: here U+FFFD, which no rule of the gate matches and
//!   which counts as one character, as the surrogate does in Python);
//! - refused like Python: control characters inside strings, an integer of more than 4300 digits
//!   (CPython's `int` conversion limit raises `ValueError`), and nesting deeper than
//!   [`MAX_DEPTH`] (Python's `RecursionError`);
//! - an object with a repeated key keeps the key's first position and its last value, as a
//!   Python `dict` does.
//!
//! Only the strings matter to the gate. The value is built without an allocation per node: nodes
//! live in one arena, a string without escapes borrows the text, other scalars keep their text.

use std::borrow::Cow;
use std::ops::Range;

/// Deepest nesting of arrays and objects accepted. CPython's own limit depends on the build and
/// the stack (natively, the recursion limit of 1000 less the frames in use; in the component,
/// an estimate of the WASI stack), so no number is exactly Python's; the host never sends args
/// nested deeper than serde_json's 128, where both parse.
pub const MAX_DEPTH: usize = 990;

/// Longest integer literal, in digits, that CPython converts (`sys.get_int_max_str_digits()`).
const MAX_INT_DIGITS: usize = 4300;

/// A JSON value; arrays and objects hold the places of their children in [`Doc::nodes`].
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    /// `null`, `true`, `false`, a number, `NaN` or an infinity, as written.
    Scalar(&'a str),
    /// A string.
    Str(Cow<'a, str>),
    /// An array: its items.
    Arr(Range<usize>),
    /// An object: its keys (strings) and values, alternately, in the order of each key's first
    /// appearance, each key once.
    Obj(Range<usize>),
}

/// A parsed JSON text.
#[derive(Debug)]
pub struct Doc<'a> {
    /// The children of every array and object, each one's together.
    pub nodes: Vec<Node<'a>>,
    /// The value.
    pub root: Node<'a>,
}

impl<'a> Doc<'a> {
    /// The items of an array, or the keys and values of an object, alternately.
    pub fn children(&self, node: &Node<'a>) -> &[Node<'a>] {
        match node {
            Node::Arr(r) | Node::Obj(r) => &self.nodes[r.clone()],
            Node::Scalar(_) | Node::Str(_) => &[],
        }
    }

    /// The entries of an object, in order: (key, value).
    pub fn entries<'d>(
        &'d self,
        node: &'d Node<'a>,
    ) -> impl Iterator<Item = (&'d str, &'d Node<'a>)> {
        let pairs = match node {
            Node::Obj(_) => self.children(node),
            _ => &[],
        };
        pairs.chunks_exact(2).map(|kv| match &kv[0] {
            Node::Str(k) => (k.as_ref(), &kv[1]),
            _ => ("", &kv[1]),
        })
    }
}

/// `text` parsed as `json.loads` would, or `None` where Python raises.
pub fn parse(text: &str) -> Option<Doc<'_>> {
    let mut p = Parser {
        s: text,
        i: 0,
        depth: 0,
        nodes: Vec::new(),
        pending: Vec::new(),
    };
    p.ws();
    let root = p.value()?;
    p.ws();
    (p.i == text.len()).then_some(Doc {
        nodes: p.nodes,
        root,
    })
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
    depth: usize,
    /// The finished children of arrays and objects.
    nodes: Vec<Node<'a>>,
    /// The children of the arrays and objects being read, innermost last.
    pending: Vec<Node<'a>>,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        let ok = self.s.as_bytes()[self.i..].starts_with(lit.as_bytes());
        if ok {
            self.i += lit.len();
        }
        ok
    }

    fn value(&mut self) -> Option<Node<'a>> {
        match self.peek()? {
            b'"' => self.string().map(Node::Str),
            b'{' => self.nested(Self::object),
            b'[' => self.nested(Self::array),
            _ => {
                for lit in ["null", "true", "false", "NaN", "Infinity", "-Infinity"] {
                    if self.eat(lit) {
                        return Some(Node::Scalar(lit));
                    }
                }
                self.number()
            }
        }
    }

    fn nested(&mut self, inner: fn(&mut Self) -> Option<Node<'a>>) -> Option<Node<'a>> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let value = inner(self);
        self.depth -= 1;
        value
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`: a `.` or an exponent that is not
    /// followed by digits is left unread, and then fails where it stands, as in Python.
    fn number(&mut self) -> Option<Node<'a>> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_digits = match self.peek()? {
            b'0' => {
                self.i += 1;
                1
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        };
        let mut is_float = false;
        if self.peek() == Some(b'.')
            && matches!(self.s.as_bytes().get(self.i + 1), Some(b'0'..=b'9'))
        {
            self.i += 1;
            self.digits();
            is_float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let e = self.i;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() > 0 {
                is_float = true;
            } else {
                self.i = e;
            }
        }
        if !is_float && int_digits > MAX_INT_DIGITS {
            return None;
        }
        Some(Node::Scalar(&self.s[start..self.i]))
    }

    /// Move the children read since `start` into the arena: their range there.
    fn finish(&mut self, start: usize) -> Range<usize> {
        let at = self.nodes.len();
        self.nodes.extend(self.pending.drain(start..));
        at..self.nodes.len()
    }

    fn array(&mut self) -> Option<Node<'a>> {
        self.i += 1; // [
        let start = self.pending.len();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Some(Node::Arr(self.finish(start)));
        }
        loop {
            let item = self.value()?;
            self.pending.push(item);
            self.ws();
            match self.peek()? {
                b']' => {
                    self.i += 1;
                    return Some(Node::Arr(self.finish(start)));
                }
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Node<'a>> {
        self.i += 1; // {
        let start = self.pending.len();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Some(Node::Obj(self.finish(start)));
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            let value = self.value()?;
            self.pending.push(Node::Str(key));
            self.pending.push(value);
            self.ws();
            match self.peek()? {
                b'}' => {
                    self.i += 1;
                    dedup(&mut self.pending, start);
                    return Some(Node::Obj(self.finish(start)));
                }
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                _ => return None,
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let h = self.s.as_bytes().get(at..at + 4)?;
        h.iter()
            .try_fold(0u32, |n, &b| Some(n * 16 + char::from(b).to_digit(16)?))
    }

    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.i += 1; // "
        let mut out = Cow::Borrowed("");
        loop {
            // The run up to the next quote, backslash or control character, as it is.
            let start = self.i;
            while matches!(self.peek(), Some(b) if b != b'"' && b != b'\\' && b >= 0x20) {
                self.i += 1;
            }
            let run = &self.s[start..self.i];
            if out.is_empty() {
                out = Cow::Borrowed(run);
            } else {
                out.to_mut().push_str(run);
            }
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {}
                _ => return None, // a control character
            }
            let escape = *self.s.as_bytes().get(self.i + 1)?;
            self.i += 2;
            let c = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let mut code = self.hex4(self.i)?;
                    self.i += 4;
                    if (0xD800..0xDC00).contains(&code)
                        && self.s.as_bytes()[self.i..].starts_with(b"\\u")
                    {
                        // A high surrogate joins a low one that follows at once, as in Python.
                        if let Some(low) = self.hex4(self.i + 2)
                            && (0xDC00..0xE000).contains(&low)
                        {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                            self.i += 6;
                        }
                    }
                    char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
                }
                _ => return None,
            };
            out.to_mut().push(c);
        }
    }
}

/// The keys and values read since `start`, alternately: a repeated key keeps its first place
/// and takes its last value, as in a Python `dict`.
fn dedup(pending: &mut Vec<Node<'_>>, start: usize) {
    let pairs = (pending.len() - start) / 2;
    if pairs < 2 {
        return;
    }
    // Sorted by key, then by place: a repeated key is a run of equal keys.
    let mut order: Vec<usize> = (0..pairs).collect();
    order.sort_unstable_by(|&a, &b| {
        key(pending, start, a)
            .cmp(key(pending, start, b))
            .then(a.cmp(&b))
    });
    let mut drop = vec![false; pairs];
    let mut moves = Vec::new();
    for run in order.chunk_by(|&a, &b| key(pending, start, a) == key(pending, start, b)) {
        if let [first, .., last] = *run {
            moves.push((first, last));
            for &n in &run[1..] {
                drop[n] = true;
            }
        }
    }
    if moves.is_empty() {
        return;
    }
    for (first, last) in moves {
        pending.swap(start + 2 * first + 1, start + 2 * last + 1);
    }
    let mut n = 0;
    let mut keep = |_: &Node<'_>| {
        let k = n < start || !drop[(n - start) / 2];
        n += 1;
        k
    };
    pending.retain(|node| keep(node));
}

/// The key of the `n`th pair read since `start`.
fn key<'p>(pending: &'p [Node<'_>], start: usize, n: usize) -> &'p str {
    match &pending[start + 2 * n] {
        Node::Str(k) => k,
        _ => "",
    }
}
