//! The host of a URL, parsed by hand and strictly: a URL that a lenient parser (a browser's,
//! the `url` crate's) might read differently is refused rather than guessed at.

/// The host of an `http`/`https` URL: lower case, without a trailing dot, IPv6 in brackets.
/// `scheme://[userinfo@]host[:port][/path][?query][#fragment]`.
///
/// # Errors
/// Why the host cannot be told, for a person.
pub fn host(url: &str) -> Result<String, &'static str> {
    let url = url.trim();
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return Err("it holds spaces, control characters or backslashes");
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("it does not start with http:// or https://");
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return Err("it is not an http:// or https:// URL");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_userinfo, host)| host);
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let (ip, after) = bracketed
            .split_once(']')
            .ok_or("its IPv6 address has no closing bracket")?;
        let ipv6 = !ip.is_empty()
            && ip
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
        if !ipv6 {
            return Err("its IPv6 address is malformed");
        }
        let port = match after.strip_prefix(':') {
            Some(port) => port,
            None if after.is_empty() => "",
            None => return Err("something follows its IPv6 address"),
        };
        (format!("[{}]", ip.to_ascii_lowercase()), port)
    } else {
        let (name, port) = host_port.split_once(':').unwrap_or((host_port, ""));
        (name.to_ascii_lowercase(), port)
    };
    if port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err("its port is not a number");
    }
    let host = host.strip_suffix('.').unwrap_or(&host);
    if host.is_empty() {
        return Err("it has no host");
    }
    if !host.starts_with('[') {
        let plain = host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
        if !plain || host.split('.').any(str::is_empty) {
            return Err("its host holds characters a host name does not have");
        }
    }
    Ok(host.to_owned())
}

/// Is `host` (as [`host`] gives it) listed in `known` (as `Config` keeps it)?
pub fn is_known(host: &str, known: &[String]) -> bool {
    known.iter().any(|k| match k.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => k == host,
    })
}

#[cfg(test)]
mod tests {
    use super::{host, is_known};

    #[test]
    fn hosts_are_parsed() {
        let cases = [
            ("https://example.org", Some("example.org")),
            ("https://Example.ORG./path?q=1#f", Some("example.org")),
            ("http://user:pw@example.org:8080/x", Some("example.org")),
            ("https://good.com@evil.com/", Some("evil.com")),
            ("https://evil.com#@good.com", Some("evil.com")),
            ("https://evil.com?@good.com", Some("evil.com")),
            ("https://[::1]:8443/", Some("[::1]")),
            ("https://[2001:DB8::1]", Some("[2001:db8::1]")),
            ("  https://api.github.com/repos  ", Some("api.github.com")),
            ("https://127.0.0.1/", Some("127.0.0.1")),
            ("ftp://example.org/", None),
            ("example.org/path", None),
            ("//example.org/", None),
            ("https://", None),
            ("https:///etc/passwd", None),
            ("https://evil.com\\@good.com/", None),
            ("https://go od.com/", None),
            ("https://%65vil.com/", None),
            ("https://ex..ample.org/", None),
            ("https://exämple.org/", None),
            ("https://[::1/", None),
            ("https://[zz]/", None),
            ("https://[::1]x/", None),
            ("https://example.org:80a/", None),
            ("", None),
        ];
        for (url, want) in cases {
            assert_eq!(host(url).ok().as_deref(), want, "{url:?}");
        }
    }

    #[test]
    fn known_hosts_and_wildcards() {
        let known = ["example.org", "*.wikipedia.org", "[::1]"].map(String::from);
        let cases = [
            ("example.org", true),
            ("www.example.org", false),
            ("en.wikipedia.org", true),
            ("a.b.wikipedia.org", true),
            ("wikipedia.org", false),
            ("evilwikipedia.org", false),
            ("[::1]", true),
            ("example.org.evil.com", false),
        ];
        for (h, want) in cases {
            assert_eq!(is_known(h, &known), want, "{h}");
        }
    }
}
