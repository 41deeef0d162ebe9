//! A small Lisp: reader, evaluator and printer. Errors are strings for the model to read.

use std::fmt;

/// Longest expression accepted, in bytes.
const MAX_SOURCE: usize = 64 * 1024;
/// Deepest nesting accepted, when reading and when evaluating.
const MAX_DEPTH: usize = 200;

/// A Lisp value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A 64-bit integer; arithmetic that overflows is an error, not a wrap.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A symbol.
    Sym(String),
    /// A list; the empty list is `nil`.
    List(Vec<Value>),
    /// True.
    T,
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Sym(s) => write!(f, "{s}"),
            Value::T => write!(f, "t"),
            Value::List(items) if items.is_empty() => write!(f, "nil"),
            Value::List(items) => {
                write!(f, "(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, ")")
            }
        }
    }
}

type Result<T> = std::result::Result<T, String>;

/// Read and evaluate every expression in `src`; the value is the last one's.
///
/// # Errors
/// A message naming what was wrong: unbalanced parentheses, an unknown function, a type error,
/// division by zero, integer overflow, nesting deeper than 200.
pub fn eval_str(src: &str) -> Result<Value> {
    if src.len() > MAX_SOURCE {
        return Err(format!("expression is longer than {MAX_SOURCE} bytes"));
    }
    let mut reader = Reader {
        chars: src.chars().collect(),
        pos: 0,
    };
    let mut last = Value::List(vec![]);
    let mut any = false;
    while reader.skip_ws() {
        let form = reader.read(0)?;
        last = eval(&form, &mut Vec::new(), 0)?;
        any = true;
    }
    if any {
        Ok(last)
    } else {
        Err("empty expression".into())
    }
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

impl Reader {
    /// Skip whitespace and `;` comments; false at the end.
    fn skip_ws(&mut self) -> bool {
        while let Some(&c) = self.chars.get(self.pos) {
            if c == ';' {
                while self.chars.get(self.pos).is_some_and(|c| *c != '\n') {
                    self.pos += 1;
                }
            } else if c.is_whitespace() {
                self.pos += 1;
            } else {
                return true;
            }
        }
        false
    }

    fn read(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(format!("expression nests deeper than {MAX_DEPTH}"));
        }
        if !self.skip_ws() {
            return Err("unexpected end of expression: a `(` is not closed".into());
        }
        let c = self.chars[self.pos];
        match c {
            '(' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    if !self.skip_ws() {
                        return Err("unexpected end of expression: a `(` is not closed".into());
                    }
                    if self.chars[self.pos] == ')' {
                        self.pos += 1;
                        return Ok(Value::List(items));
                    }
                    items.push(self.read(depth + 1)?);
                }
            }
            ')' => Err(format!("unexpected `)` at character {}", self.pos + 1)),
            '\'' => {
                self.pos += 1;
                let quoted = self.read(depth + 1)?;
                Ok(Value::List(vec![Value::Sym("quote".into()), quoted]))
            }
            '"' => {
                self.pos += 1;
                let mut s = String::new();
                loop {
                    match self.chars.get(self.pos) {
                        None => return Err("unterminated string".into()),
                        Some('"') => break,
                        Some('\\') => {
                            self.pos += 1;
                            match self.chars.get(self.pos) {
                                Some('n') => s.push('\n'),
                                Some(&c) => s.push(c),
                                None => return Err("unterminated string".into()),
                            }
                        }
                        Some(&c) => s.push(c),
                    }
                    self.pos += 1;
                }
                self.pos += 1;
                Ok(Value::Str(s))
            }
            _ => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| !c.is_whitespace() && !"()'\";".contains(*c))
                {
                    self.pos += 1;
                }
                let tok: String = self.chars[start..self.pos].iter().collect();
                Ok(atom(&tok))
            }
        }
    }
}

fn atom(tok: &str) -> Value {
    if let Ok(i) = tok.parse::<i64>() {
        Value::Int(i)
    } else if let Ok(x) = tok.parse::<f64>().map_err(|_| ()).and_then(|x| {
        if tok.chars().any(|c| c.is_ascii_digit()) {
            Ok(x)
        } else {
            Err(())
        }
    }) {
        Value::Float(x)
    } else {
        match tok.to_ascii_lowercase().as_str() {
            "nil" => Value::List(vec![]),
            "t" => Value::T,
            lower => Value::Sym(lower.to_owned()),
        }
    }
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::List(items) if items.is_empty())
}

fn boolean(b: bool) -> Value {
    if b { Value::T } else { Value::List(vec![]) }
}

type Env = Vec<(String, Value)>;

fn eval(form: &Value, env: &mut Env, depth: usize) -> Result<Value> {
    if depth > MAX_DEPTH {
        return Err(format!("evaluation nests deeper than {MAX_DEPTH}"));
    }
    match form {
        Value::Sym(name) => env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("unbound variable `{name}`")),
        Value::List(items) if !items.is_empty() => {
            let (head, rest) = (&items[0], &items[1..]);
            let Value::Sym(op) = head else {
                return Err(format!("`{head}` is not a function name"));
            };
            match op.as_str() {
                "quote" => rest
                    .first()
                    .cloned()
                    .ok_or_else(|| "quote needs an argument".into()),
                "if" => {
                    let cond = eval(arg(rest, 0, "if")?, env, depth + 1)?;
                    if truthy(&cond) {
                        eval(arg(rest, 1, "if")?, env, depth + 1)
                    } else {
                        rest.get(2)
                            .map_or(Ok(boolean(false)), |e| eval(e, env, depth + 1))
                    }
                }
                "and" => {
                    let mut last = Value::T;
                    for e in rest {
                        last = eval(e, env, depth + 1)?;
                        if !truthy(&last) {
                            break;
                        }
                    }
                    Ok(last)
                }
                "or" => {
                    for e in rest {
                        let v = eval(e, env, depth + 1)?;
                        if truthy(&v) {
                            return Ok(v);
                        }
                    }
                    Ok(boolean(false))
                }
                "cond" => {
                    for clause in rest {
                        let Value::List(parts) = clause else {
                            return Err("each cond clause is a list (test expr...)".into());
                        };
                        let test = eval(arg(parts, 0, "cond clause")?, env, depth + 1)?;
                        if truthy(&test) {
                            return progn(&parts[1..], env, depth).map(|v| v.unwrap_or(test));
                        }
                    }
                    Ok(boolean(false))
                }
                "progn" => progn(rest, env, depth).map(|v| v.unwrap_or(boolean(false))),
                "let" | "let*" => {
                    let Some(Value::List(bindings)) = rest.first() else {
                        return Err(format!(
                            "{op} needs a list of bindings: ({op} ((x 1)) body)"
                        ));
                    };
                    let mark = env.len();
                    let mut fresh = Vec::new();
                    for b in bindings {
                        let (name, value) = match b {
                            Value::Sym(n) => (n.clone(), boolean(false)),
                            Value::List(pair) if pair.len() == 2 => match &pair[0] {
                                Value::Sym(n) => (n.clone(), eval(&pair[1], env, depth + 1)?),
                                other => return Err(format!("cannot bind `{other}`")),
                            },
                            other => {
                                return Err(format!("bad binding `{other}`: use (name value)"));
                            }
                        };
                        if op == "let*" {
                            env.push((name, value));
                        } else {
                            fresh.push((name, value));
                        }
                    }
                    env.extend(fresh);
                    let result = progn(&rest[1..], env, depth);
                    env.truncate(mark);
                    result.map(|v| v.unwrap_or(boolean(false)))
                }
                _ => {
                    let mut args = Vec::with_capacity(rest.len());
                    for e in rest {
                        args.push(eval(e, env, depth + 1)?);
                    }
                    apply(op, &args)
                }
            }
        }
        other => Ok(other.clone()),
    }
}

fn progn(body: &[Value], env: &mut Env, depth: usize) -> Result<Option<Value>> {
    let mut last = None;
    for e in body {
        last = Some(eval(e, env, depth + 1)?);
    }
    Ok(last)
}

fn arg<'a>(rest: &'a [Value], i: usize, what: &str) -> Result<&'a Value> {
    rest.get(i)
        .ok_or_else(|| format!("{what} is missing argument {}", i + 1))
}

fn number(v: &Value, op: &str) -> Result<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(x) => Ok(*x),
        other => Err(format!("{op}: `{other}` is not a number")),
    }
}

fn arith(op: &str, args: &[Value]) -> Result<Value> {
    let all_int = args.iter().all(|a| matches!(a, Value::Int(_)));
    if all_int {
        let ints: Vec<i64> = args
            .iter()
            .filter_map(|a| {
                if let Value::Int(i) = a {
                    Some(*i)
                } else {
                    None
                }
            })
            .collect();
        let overflow = || format!("{op}: integer overflow");
        let result = match (op, ints.as_slice()) {
            ("+", xs) => xs
                .iter()
                .try_fold(0i64, |a, b| a.checked_add(*b))
                .ok_or_else(overflow)?,
            ("*", xs) => xs
                .iter()
                .try_fold(1i64, |a, b| a.checked_mul(*b))
                .ok_or_else(overflow)?,
            ("-", [x]) => x.checked_neg().ok_or_else(overflow)?,
            ("-", [x, ys @ ..]) => ys
                .iter()
                .try_fold(*x, |a, b| a.checked_sub(*b))
                .ok_or_else(overflow)?,
            ("/", [x, ys @ ..]) if !ys.is_empty() => {
                if ys.contains(&0) {
                    return Err("/: division by zero".into());
                }
                if ys
                    .iter()
                    .try_fold(*x, |a, b| (a % b == 0).then(|| a / b))
                    .is_none()
                {
                    return arith_float(op, args);
                }
                ys.iter()
                    .try_fold(*x, |a, b| a.checked_div(*b))
                    .ok_or_else(overflow)?
            }
            _ => return Err(format!("{op}: wrong number of arguments")),
        };
        return Ok(Value::Int(result));
    }
    arith_float(op, args)
}

fn arith_float(op: &str, args: &[Value]) -> Result<Value> {
    let xs = args
        .iter()
        .map(|a| number(a, op))
        .collect::<Result<Vec<f64>>>()?;
    let r = match (op, xs.as_slice()) {
        ("+", xs) => xs.iter().sum(),
        ("*", xs) => xs.iter().product(),
        ("-", [x]) => -x,
        ("-", [x, ys @ ..]) => ys.iter().fold(*x, |a, b| a - b),
        ("/", [x, ys @ ..]) if !ys.is_empty() => {
            if ys.contains(&0.0) {
                return Err("/: division by zero".into());
            }
            ys.iter().fold(*x, |a, b| a / b)
        }
        _ => return Err(format!("{op}: wrong number of arguments")),
    };
    Ok(Value::Float(r))
}

fn apply(op: &str, args: &[Value]) -> Result<Value> {
    match op {
        "+" | "-" | "*" | "/" => arith(op, args),
        "mod" | "rem" => match args {
            [Value::Int(_), Value::Int(0)] => Err(format!("{op}: division by zero")),
            [Value::Int(a), Value::Int(b)] => Ok(Value::Int(if op == "mod" {
                a.rem_euclid(*b)
            } else {
                a % b
            })),
            _ => Err(format!("{op} takes two integers")),
        },
        "=" | "/=" | "<" | ">" | "<=" | ">=" => {
            let xs = args
                .iter()
                .map(|a| number(a, op))
                .collect::<Result<Vec<f64>>>()?;
            let ok = xs.windows(2).all(|w| match op {
                "=" => w[0] == w[1],
                "/=" => w[0] != w[1],
                "<" => w[0] < w[1],
                ">" => w[0] > w[1],
                "<=" => w[0] <= w[1],
                _ => w[0] >= w[1],
            });
            Ok(boolean(ok))
        }
        "min" | "max" => {
            let first = args
                .first()
                .ok_or_else(|| format!("{op} needs arguments"))?;
            let mut best = first.clone();
            for a in &args[1..] {
                let (x, b) = (number(a, op)?, number(&best, op)?);
                if (op == "min" && x < b) || (op == "max" && x > b) {
                    best = a.clone();
                }
            }
            number(&best, op).map(|_| best)
        }
        "abs" => match args {
            [Value::Int(i)] => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| "abs: integer overflow".into()),
            [Value::Float(x)] => Ok(Value::Float(x.abs())),
            _ => Err("abs takes one number".into()),
        },
        "not" | "null" => Ok(boolean(!truthy(arg(args, 0, op)?))),
        "equal" => Ok(boolean(args.windows(2).all(|w| w[0] == w[1]))),
        "list" => Ok(Value::List(args.to_vec())),
        "car" | "first" => match arg(args, 0, op)? {
            Value::List(items) => Ok(items.first().cloned().unwrap_or(boolean(false))),
            other => Err(format!("{op}: `{other}` is not a list")),
        },
        "cdr" | "rest" => match arg(args, 0, op)? {
            Value::List(items) => Ok(Value::List(items.iter().skip(1).cloned().collect())),
            other => Err(format!("{op}: `{other}` is not a list")),
        },
        "cons" => match (arg(args, 0, op)?, arg(args, 1, op)?) {
            (x, Value::List(items)) => {
                let mut v = vec![x.clone()];
                v.extend(items.iter().cloned());
                Ok(Value::List(v))
            }
            _ => Err("cons: the second argument must be a list".into()),
        },
        "length" => match arg(args, 0, op)? {
            Value::List(items) => Ok(Value::Int(items.len() as i64)),
            Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
            other => Err(format!("length: `{other}` has no length")),
        },
        "concat" | "concatenate" => {
            let mut s = String::new();
            for a in args {
                match a {
                    Value::Str(x) => s.push_str(x),
                    Value::Sym(x) if x == "string" => {}
                    other => s.push_str(&other.to_string()),
                }
            }
            Ok(Value::Str(s))
        }
        other => Err(format!(
            "unknown function `{other}`: this evaluator only computes (arithmetic, comparison, lists, strings); it has no I/O"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> String {
        match eval_str(src) {
            Ok(v) => v.to_string(),
            Err(e) => panic!("{src}: {e}"),
        }
    }

    #[test]
    fn evaluates_the_examples() {
        assert_eq!(ok("(+ 1 2)"), "3");
        assert_eq!(ok("(let ((x 2)) (* x 21))"), "42");
        assert_eq!(ok("(let* ((x 2) (y (* x 3))) (list x y))"), "(2 6)");
        assert_eq!(ok("(/ 7 2)"), "3.5");
        assert_eq!(ok("(if (> 3 2) \"yes\" \"no\")"), "\"yes\"");
        assert_eq!(ok("(car (cdr '(1 2 3)))"), "2");
        assert_eq!(ok("(cond ((= 1 2) 'a) (t 'b))"), "b");
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(eval_str("(+ 1").is_err_and(|e| e.contains("not closed")));
        assert!(eval_str("(/ 1 0)").is_err_and(|e| e.contains("division by zero")));
        assert!(eval_str("(* 9223372036854775807 2)").is_err_and(|e| e.contains("overflow")));
        assert!(
            eval_str("(open \"/etc/passwd\")")
                .is_err_and(|e| e.contains("unknown function `open`"))
        );
        let deep = format!("{}1{}", "(+ ".repeat(500), ")".repeat(500));
        assert!(eval_str(&deep).is_err_and(|e| e.contains("deeper")));
    }
}
