//! Secrets recognised by the name they are given: `.env`-style assignments, secret-named URL
//! query parameters and form fields, passwords in URLs, and (from `walk`) secret-named JSON
//! keys.
//!
//! A variable name is secret-named when, upper-cased and with `-` read as `_`, it is one of
//! [`KNOWN`] or ends in one of [`SUFFIXES`], unless one of its words is in [`NOT_SECRET`]
//! (`PAGE_TOKEN`, `MAX_TOKENS`...). Its value counts only when it is not a placeholder: see
//! [`is_placeholder`].

use crate::tokens::spells_placeholder;

/// Names that hold a secret whatever their prefix.
const KNOWN: &[&str] = &[
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "SECRET",
    "SECRET_KEY",
    "TOKEN",
    "API_KEY",
    "APIKEY",
    "PRIVATE_KEY",
    "PGPASSWORD",
    "MYSQL_PWD",
    "AWS_SECRET_ACCESS_KEY",
];

/// Endings of secret names: `OPENAI_API_KEY`, `DB_PASSWORD`, `GITHUB_TOKEN`, `MYSQLPASSWD`...
const SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_SECRET",
    "_SECRET_KEY",
    "_TOKEN",
    "_PASSWORD",
    "PASSWD",
    "_PASSPHRASE",
    "_PRIVATE_KEY",
];

/// Words that make a `..._TOKEN` name something else: a page cursor, a count.
const NOT_SECRET: &[&str] = &[
    "PAGE",
    "NEXT",
    "CURSOR",
    "CONTINUATION",
    "SYNC",
    "CANCELLATION",
    "MAX",
    "MIN",
    "NUM",
    "COUNT",
];

/// Values that stand for a secret without being one (compared without case).
const PLACEHOLDERS: &[&str] = &[
    "changeme",
    "change-me",
    "change_me",
    "changeit",
    "secret",
    "password",
    "passwd",
    "pass",
    "token",
    "dummy",
    "test",
    "testing",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "todo",
    "tbd",
    "fixme",
    "empty",
    "undefined",
    "default",
    "bearer",
];

/// Is `name` (a variable, key or parameter name) one that holds a secret?
pub fn is_secret_name(name: &str) -> bool {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    {
        return false;
    }
    let upper = name.to_ascii_uppercase().replace('-', "_");
    if upper.split('_').any(|word| NOT_SECRET.contains(&word)) {
        return false;
    }
    KNOWN.contains(&upper.as_str()) || SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// Does `value` (unquoted) stand for a secret rather than hold one? True when it is shorter
/// than 4 characters; refers to something else (`$VAR`, `${VAR}`, `$(cmd)`, `%VAR%`,
/// `{{ template }}`, `<your key>`); is masked or elided (`****`, `xxxx`, `...`, one character
/// repeated); or is a stock word (`changeme`, `test`, `none`, `true`...) or holds `example`,
/// `your`, `placeholder`, `redacted`.
pub fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    let first = v.chars().next().unwrap_or('$');
    v.chars().count() < 4
        || matches!(first, '$' | '%' | '<' | '{' | '*')
        || v.contains("...")
        || v.contains("**")
        || v.chars().all(|c| c == first)
        || PLACEHOLDERS.iter().any(|p| v.eq_ignore_ascii_case(p))
        || spells_placeholder(v.as_bytes())
}

/// The name of the first secret-named variable assigned a real value in a `.env`-style line of
/// `text`: `NAME=value`, `export NAME=value`, `NAME = "value"`, `"NAME": "value"`,
/// `name: "value"` (YAML, nothing after it). An unquoted value needs `=` with no space around
/// it and must not look like code (see `is_code`: `token = get_token()`, `TOKEN=f(x)`,
/// `password=password,` are not secrets); a value after `:` must be quoted. Several
/// assignments may lead a line (`A=1 DB_PASSWORD=x cmd`).
pub fn find_assignment(text: &str) -> Option<&str> {
    for line in text.lines() {
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix("export ") {
            rest = after.trim_start();
        }
        while let Some((name, value, next)) = assignment(rest) {
            if is_secret_name(name) && value.is_some_and(|v| !is_placeholder(v)) {
                return Some(name);
            }
            rest = next.trim_start();
        }
    }
    None
}

/// Parse `NAME=value` at the start of `s`: the name, the value when it is a literal, and what
/// follows. `None` when `s` does not start with an assignment.
fn assignment(s: &str) -> Option<(&str, Option<&str>, &str)> {
    let quoted_name = s.starts_with(['"', '\'']);
    let s = if quoted_name { s.get(1..)? } else { s };
    let len = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
        .count();
    let name = s.get(..len)?;
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = s.get(len..)?;
    if quoted_name {
        rest = rest.strip_prefix(['"', '\''])?;
    }
    let before = rest.len();
    rest = rest.trim_start_matches([' ', '\t']);
    let spaced_before = rest.len() != before;
    let colon = rest.starts_with(':') && !rest.starts_with(":=");
    rest = rest
        .strip_prefix(":=")
        .or_else(|| rest.strip_prefix('='))
        .or_else(|| rest.strip_prefix(':'))?;
    if rest.starts_with('=') {
        return None; // `==`: a comparison
    }
    let before = rest.len();
    rest = rest.trim_start_matches([' ', '\t']);
    let spaced = spaced_before || rest.len() != before;
    if let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let inner = rest.get(1..)?;
        let end = inner.find(quote).unwrap_or(inner.len());
        let after = inner.get(end + 1..).unwrap_or_default();
        // `name: "value"` is YAML only when nothing follows; `Token: "#ccc",` is a dict entry
        // of some program. A quoted name (`"name": "value",`) is JSON either way.
        let entry = colon && !quoted_name && !after.trim().is_empty();
        return Some((name, inner.get(..end).filter(|_| !entry), after));
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let raw = rest.get(..end)?;
    let value = raw.trim_end_matches(';');
    let literal = !(spaced || colon || value.is_empty() || is_code(value));
    Some((name, literal.then_some(value), rest.get(end..)?))
}

/// Is the unquoted `value` of an assignment code rather than a literal? A call or index
/// (`get_token()`, `args[1]`), a keyword argument or list item (`key=key,`), or a dotted name
/// (`self.config.password`).
fn is_code(value: &str) -> bool {
    let identifier = |part: &str| {
        part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    value.contains(['(', ')', '[', ']', '{', '}'])
        || value.ends_with(',')
        || (value.contains('.') && value.split('.').all(identifier))
}

/// A secret carried by a URL in `text`: a password in its user info
/// (`https://user:pw@host`, unless the host is reserved for documentation or the user is
/// empty, as in `cvs://:pserver:...`) or a secret-named query parameter (`?access_token=...`).
pub fn find_in_url(text: &str) -> Option<String> {
    let mut search = text;
    while let Some(pos) = search.find("://") {
        let url_start = pos + 3;
        let url = search.get(url_start..).unwrap_or_default();
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .unwrap_or(url.len());
        let url = url.get(..end).unwrap_or_default();
        let authority = url.split(['/', '?', '#']).next().unwrap_or_default();
        if let Some((userinfo, host)) = authority.rsplit_once('@')
            && let Some((user, password)) = userinfo.split_once(':')
            && !user.is_empty()
            && !is_placeholder(password)
            && !is_documentation_host(host)
        {
            return Some("a password in a URL".into());
        }
        if let Some(kind) = url
            .split_once('?')
            .and_then(|(_, query)| find_in_query(query))
        {
            return Some(kind);
        }
        search = search.get(url_start + end..).unwrap_or_default();
    }
    None
}

/// A secret-named parameter of a URL's query (`a=1&access_token=...`, up to any `#`).
pub fn find_in_query(query: &str) -> Option<String> {
    let query = query.split('#').next().unwrap_or_default();
    find_in_pairs(query, "the URL query parameter")
}

/// A secret-named field of a form body (`grant_type=client_credentials&client_secret=...`, as
/// `application/x-www-form-urlencoded` sends it): one word of `name=value` pairs joined by
/// `&`. (One pair alone is a `.env`-style assignment: [`find_assignment`].)
pub fn find_in_form(text: &str) -> Option<String> {
    let form = text.trim();
    if !form.contains('&') || form.contains(char::is_whitespace) {
        return None;
    }
    find_in_pairs(form, "the form field")
}

/// The first `name=value` pair of `pairs` (joined by `&`) whose name is secret and whose value
/// is not a placeholder, as "a secret in {what} {name}".
fn find_in_pairs(pairs: &str, what: &str) -> Option<String> {
    pairs.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        (is_secret_name(name) && !is_placeholder(value))
            .then(|| format!("a secret in {what} {name}"))
    })
}

/// Is `host` (with an optional `:port`) one of the names reserved for examples (RFC 2606):
/// `example.com`, `example.org`, `example.net` and their subdomains, or a name under `.example`,
/// `.test` or `.invalid`?
fn is_documentation_host(host: &str) -> bool {
    let name = host
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let name = name.trim_end_matches('.');
    [
        "example.com",
        "example.org",
        "example.net",
        "example",
        "test",
        "invalid",
    ]
    .iter()
    .any(|d| name == *d || name.strip_suffix(d).is_some_and(|sub| sub.ends_with('.')))
}
