//! Just enough URL handling for `http-fetch`: split an `http`/`https` URL into the parts a
//! wasi:http request takes, and resolve a redirect's `Location` against the URL it came from
//! (RFC 3986 §5.2, without percent-decoding: paths are passed on as written).

use std::fmt;

/// The schemes `http-fetch` speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

impl Scheme {
    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// An absolute `http`/`https` URL, without fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// `host[:port]`, the host lowercased.
    pub authority: String,
    /// The path (starting with `/`) and the query, if any.
    pub path_and_query: String,
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme.as_str(),
            self.authority,
            self.path_and_query
        )
    }
}

impl Url {
    /// Parse an absolute URL.
    ///
    /// # Errors
    /// A message for the model: not `http`/`https`, no host, credentials in the URL, a bad
    /// port, or spaces and control characters.
    pub fn parse(text: &str) -> Result<Url, String> {
        let text = text.trim();
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "{text:?}: URLs cannot contain spaces or control characters (write a space as %20)"
            ));
        }
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(format!(
                "{text:?} is not an absolute URL: write it as http://host/path or https://host/path"
            ));
        };
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(format!(
                    "{text:?}: the scheme {other:?} is not supported; only http and https are"
                ));
            }
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = check_authority(authority).map_err(|e| format!("{text:?}: {e}"))?;
        let tail = tail.split('#').next().unwrap_or_default();
        let path_and_query = if tail.starts_with('/') {
            tail.to_owned()
        } else {
            format!("/{tail}")
        };
        Ok(Url {
            scheme,
            authority,
            path_and_query,
        })
    }

    /// The host, without port (IPv6 addresses keep their brackets).
    pub fn host(&self) -> &str {
        if self.authority.starts_with('[') {
            return match self.authority.find(']') {
                Some(i) => &self.authority[..=i],
                None => &self.authority,
            };
        }
        self.authority
            .split(':')
            .next()
            .unwrap_or(self.authority.as_str())
    }

    /// Whether `other` has the same scheme and authority (credentials may follow a redirect
    /// only within one origin).
    pub fn same_origin(&self, other: &Url) -> bool {
        self.scheme == other.scheme && self.authority == other.authority
    }

    /// Resolve a `Location` header (absolute, scheme-relative, absolute-path or relative)
    /// against this URL.
    ///
    /// # Errors
    /// As [`Url::parse`], for a location that resolves to something `http-fetch` cannot fetch.
    pub fn join(&self, location: &str) -> Result<Url, String> {
        let location = location.trim();
        if has_scheme(location) {
            return Url::parse(location);
        }
        if location.starts_with("//") {
            return Url::parse(&format!("{}:{location}", self.scheme.as_str()));
        }
        let location = location.split('#').next().unwrap_or_default();
        let (base_path, _) = split_query(&self.path_and_query);
        let joined = if location.is_empty() {
            self.path_and_query.clone()
        } else if location.starts_with('/') {
            let (path, query) = split_query(location);
            format!("{}{query}", remove_dots(path))
        } else if location.starts_with('?') {
            format!("{base_path}{location}")
        } else {
            let dir = &base_path[..base_path.rfind('/').map_or(0, |i| i + 1)];
            let (path, query) = split_query(location);
            format!("{}{query}", remove_dots(&format!("{dir}{path}")))
        };
        Url::parse(&format!(
            "{}://{}{joined}",
            self.scheme.as_str(),
            self.authority
        ))
    }
}

/// Whether `s` starts with `scheme:` (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Split `path?query` into the path and `?query` (empty when there is none).
fn split_query(s: &str) -> (&str, &str) {
    match s.find('?') {
        Some(i) => s.split_at(i),
        None => (s, ""),
    }
}

/// Remove `.` and `..` segments from an absolute path (never above the root).
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

/// Check `host[:port]` and lowercase the host.
fn check_authority(authority: &str) -> Result<String, String> {
    if authority.is_empty() {
        return Err("the URL has no host".into());
    }
    if authority.contains('@') {
        return Err(
            "credentials in the URL are not supported; send an Authorization header instead".into(),
        );
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else {
            return Err("an IPv6 host needs its closing `]`".into());
        };
        if ip.is_empty()
            || !ip
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(format!("[{ip}] is not an IPv6 address"));
        }
        match after {
            "" => (&authority[..ip.len() + 2], None),
            p => match p.strip_prefix(':') {
                Some(port) => (&authority[..ip.len() + 2], Some(port)),
                None => return Err(format!("unexpected {p:?} after the IPv6 address")),
            },
        }
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("the URL has no host".into());
    }
    if !host.starts_with('[')
        && !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    {
        return Err(format!(
            "{host:?} is not a host name (use its punycode form for non-ASCII names)"
        ));
    }
    if let Some(p) = port
        && !p.parse::<u16>().is_ok_and(|n| n != 0)
    {
        return Err(format!("{p:?} is not a port (1-65535)"));
    }
    Ok(authority.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        match Url::parse(s) {
            Ok(u) => u,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn joined(base: &str, loc: &str) -> String {
        match url(base).join(loc) {
            Ok(u) => u.to_string(),
            Err(e) => panic!("{base} + {loc}: {e}"),
        }
    }

    #[test]
    fn parses_the_parts() {
        let u = url("HTTPS://Example.COM:8443/a/b?x=1#frag");
        assert_eq!(u.scheme, Scheme::Https);
        assert_eq!(u.authority, "example.com:8443");
        assert_eq!(u.host(), "example.com");
        assert_eq!(u.path_and_query, "/a/b?x=1");
        assert_eq!(url("http://example.com").path_and_query, "/");
        assert_eq!(url("http://example.com?q").path_and_query, "/?q");
        assert_eq!(url("http://[::1]:80/").host(), "[::1]");
    }

    #[test]
    fn refuses_what_it_cannot_fetch() {
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "example.com/path",
            "http://",
            "http:///path",
            "http://user:pw@example.com/",
            "http://example.com:0/",
            "http://example.com:99999/",
            "http://exa mple.com/",
            "http://[::1/",
            "http://ex%41mple.com/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn resolves_locations() {
        let base = "https://a.example/dir/page?q=1";
        assert_eq!(joined(base, "http://b.example/x"), "http://b.example/x");
        assert_eq!(joined(base, "//c.example/y"), "https://c.example/y");
        assert_eq!(joined(base, "/root?z"), "https://a.example/root?z");
        assert_eq!(joined(base, "other"), "https://a.example/dir/other");
        assert_eq!(joined(base, "../up"), "https://a.example/up");
        assert_eq!(joined(base, "../../../top"), "https://a.example/top");
        assert_eq!(joined(base, "./"), "https://a.example/dir/");
        assert_eq!(joined(base, "?r=2"), "https://a.example/dir/page?r=2");
        assert_eq!(joined(base, "#frag"), "https://a.example/dir/page?q=1");
        assert!(url(base).join("javascript:alert(1)").is_err());
    }

    #[test]
    fn origins() {
        let a = url("https://a.example/x");
        assert!(a.same_origin(&url("https://A.example/y")));
        assert!(!a.same_origin(&url("http://a.example/x")));
        assert!(!a.same_origin(&url("https://a.example:444/x")));
    }
}
