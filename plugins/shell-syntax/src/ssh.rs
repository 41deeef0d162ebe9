//! `ssh`: its command words are a line the remote shell runs, and some of its `-o` settings
//! run command lines on this machine.

use crate::launchers::{nothing, shown};
use crate::options;
use crate::split::quote;
use crate::wrappers::{Runs, Wrapped, shell, together};

/// `ssh` (OpenSSH): its getopt string, `1246ACGKMNTVXYZafgknqstvxy` and
/// `B:D:E:F:I:J:L:O:P:Q:R:S:W:b:c:e:i:l:m:o:p:w:`.
const SSH: &[&str] = &[
    "1", "2", "4", "6", "A", "C", "G", "K", "M", "N", "T", "V", "X", "Y", "Z", "a", "f", "g", "k",
    "n", "q", "s", "t", "v", "x", "y", "B=", "D=", "E=", "F=", "I=", "J=", "L=", "O=", "P=", "Q=",
    "R=", "S=", "W=", "b=", "c=", "e=", "i=", "l=", "m=", "o=", "p=", "w=",
];

/// What `ssh`'s `-o KEYWORD=VALUE` (or `-o "KEYWORD VALUE"`) does that the gate must see.
enum SshConfig {
    /// A command line run on this machine (`ProxyCommand`, `LocalCommand`,
    /// `KnownHostsCommand`).
    Local(String),
    /// The command line the remote shell runs (`RemoteCommand`).
    Remote(String),
}

/// What `ssh`'s `-o OPTION` runs: ssh_config's keywords are read whatever their case, their
/// value after blanks or an `=`, and the rest of the option is the command (`none` is none).
/// A keyword that loads a library or more configuration is an error: the gate cannot tell
/// what that runs.
fn ssh_config(option: &str) -> Result<Option<SshConfig>, String> {
    // As OpenSSH's `strdelim` reads it: blanks and `=`s before the keyword are skipped, and a
    // keyword in double quotes is read without them (`"ProxyCommand"=...`).
    let text = option.trim_start_matches(|c: char| c.is_whitespace() || c == '=');
    let (keyword, rest) = match text.strip_prefix('"') {
        Some(quoted) => quoted.split_once('"').unwrap_or((quoted, "")),
        None => text.split_at(
            text.find(|c: char| c.is_whitespace() || c == '=')
                .unwrap_or(text.len()),
        ),
    };
    let rest = rest.trim_start();
    let value = rest
        .strip_prefix('=')
        .unwrap_or(rest)
        .trim_start()
        .to_owned();
    let none = value.is_empty() || value.eq_ignore_ascii_case("none");
    Ok(match keyword.to_ascii_lowercase().as_str() {
        "proxycommand" | "localcommand" | "knownhostscommand" if !none => {
            Some(SshConfig::Local(value))
        }
        "remotecommand" if !none => Some(SshConfig::Remote(value)),
        "pkcs11provider" | "securitykeyprovider" | "include" | "match" | "xauthlocation" => {
            return Err(format!(
                "its `-o {}` loads code or configuration this gate cannot read",
                shown(keyword)
            ));
        }
        _ => None,
    })
}

/// `ssh [OPTIONS] HOST [OPTIONS] [CMD...]`: ssh reads options again after the host, up to the
/// command. The command's words, joined by blanks, are a line the remote shell runs in the
/// remote user's home; with none, that shell reads standard input; with `-N`, `-W` or `-s` no
/// line runs, and with `-G`, `-V`, `-Q` or `-O` nothing connects at all. What `-o` makes run
/// here (`ProxyCommand`...) is read too; `-F FILE` and `-I LIB` name configuration and code
/// the gate cannot read.
pub(crate) fn ssh(args: &[String]) -> Result<Wrapped, String> {
    let first = options::read(SSH, args)?;
    let Some((_host, after)) = first.rest.split_first() else {
        return Ok((nothing(), None)); // no host: its usage message, or -V
    };
    let second = options::read(SSH, after)?;
    let given: Vec<&options::Given> = first.given.iter().chain(&second.given).collect();
    let has = |name: &str| given.iter().any(|g| g.name == name);
    if ["G", "V", "Q", "O"].iter().any(|&n| has(n)) {
        return Ok((nothing(), None));
    }
    let mut local = Vec::new();
    let mut remote: Option<String> = None;
    for option in &given {
        let value = option.value.as_deref().unwrap_or_default();
        match option.name {
            "o" => match ssh_config(value)? {
                Some(SshConfig::Local(line)) => local.push(line),
                // ssh keeps the first value it is given.
                Some(SshConfig::Remote(line)) => {
                    remote.get_or_insert(line);
                }
                None => {}
            },
            "F" if value != "none" && value != "/dev/null" => {
                return Err("its -F config file may name commands this gate cannot read".into());
            }
            "I" => return Err("its -I loads a PKCS#11 library".into()),
            _ => {}
        }
    }
    let quiet = has("N") || has("W") || has("s");
    let there = if quiet {
        None
    } else if !second.rest.is_empty() {
        Some(Runs::Line(second.rest.join(" ")))
    } else {
        Some(remote.map_or_else(shell, Runs::Line))
    };
    if local.is_empty() {
        let dir = there.as_ref().map(|_| "~".to_owned());
        return Ok((there.unwrap_or_else(nothing), dir));
    }
    // Both: the local lines here, then the remote one from the home directory.
    let mut lines: Vec<String> = local
        .iter()
        .map(|l| format!("sh -c {}", quote(l)))
        .collect();
    match there {
        Some(Runs::Line(line)) => lines.push(format!("cd ~\nsh -c {}", quote(&line))),
        Some(_) => lines.push("cd ~\nsh".into()),
        None => {}
    }
    Ok((Runs::Line(lines.join("\n")), None))
}

/// `scp` (OpenSSH 9): its getopt string, `12346ABCTdfOpqRrstvD:F:J:M:P:S:X:c:i:l:o:`.
const SCP: &[&str] = &[
    "1", "2", "3", "4", "6", "A", "B", "C", "T", "d", "f", "O", "p", "q", "R", "r", "s", "t", "v",
    "D=", "F=", "J=", "M=", "P=", "S=", "X=", "c=", "i=", "l=", "o=",
];

/// `sftp` (OpenSSH 9): its getopt string, `1246AafhNpqrvCc:D:i:l:o:s:S:b:P:R:B:F:J:X:`.
const SFTP: &[&str] = &[
    "1", "2", "4", "6", "A", "a", "f", "h", "N", "p", "q", "r", "v", "C", "c=", "D=", "i=", "l=",
    "o=", "s=", "S=", "b=", "P=", "R=", "B=", "F=", "J=", "X=",
];

/// `scp` and `sftp`: what their options run here. `-o` as `ssh` reads it (`ProxyCommand`...),
/// `-S PROGRAM` run in place of `ssh`, `sftp -D` (a line: the local sftp server it talks to
/// instead of connecting), `scp -D PATH` (the same, a program); `-F FILE` names configuration
/// the gate cannot read, and `sftp` runs the `!CMD` lines of its batch file (`-b`) or standard
/// input, which the gate does not read either. `None` when `scp` is given none of these: it
/// reads as itself.
pub(crate) fn copy(name: &str, args: &[String]) -> Result<Option<Wrapped>, String> {
    let sftp = name == "sftp";
    let read = options::permuted(if sftp { SFTP } else { SCP }, args)?;
    let mut parts = Vec::new();
    for option in &read.given {
        let value = option.value.clone().unwrap_or_default();
        match option.name {
            "o" => match ssh_config(&value)? {
                Some(SshConfig::Local(line)) => parts.push(Runs::Line(line)),
                Some(SshConfig::Remote(_)) | None => {}
            },
            "S" => parts.push(Runs::Command(vec![value])),
            "D" if sftp => parts.push(Runs::Line(value)),
            "D" => parts.push(Runs::Command(vec![value])),
            "F" if value != "none" && value != "/dev/null" => {
                return Err("its -F config file may name commands this gate cannot read".into());
            }
            _ => {}
        }
    }
    if sftp {
        // `!CMD` lines run here, from its batch file or, without one, from standard input.
        let from = if read.has("b") {
            "its -b batch file"
        } else {
            "standard input"
        };
        parts.push(Runs::Unknown(format!(
            "`sftp` runs the `!` commands it reads from {from}, which this gate does not read"
        )));
    }
    Ok((!parts.is_empty()).then(|| (together(parts), None)))
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn ssh_runs_its_command_words_as_a_remote_line() {
        assert_eq!(runs("ssh host uptime"), line("uptime"));
        let runs_rm = |l: &str| matches!(runs(l), Some(Runs::Line(x)) if x.contains("rm -rf ~"));
        assert!(
            runs_rm("ssh -o '\"ProxyCommand\"=rm -rf ~' -N h"),
            "a quoted keyword"
        );
        assert!(
            runs_rm("ssh -o '=ProxyCommand=rm -rf ~' -N h"),
            "a leading ="
        );
        assert!(
            runs_rm("ssh -o 'RemoteCommand=rm -rf ~' -o RemoteCommand=ls h"),
            "ssh keeps the first"
        );
        assert_eq!(runs("ssh -p 22 user@host rm -rf '~'"), line("rm -rf ~"));
        assert_eq!(runs("ssh host -l root -t sudo reboot"), line("sudo reboot"));
        assert_eq!(runs("ssh host -- ls -la"), line("ls -la"));
        assert_eq!(dir("ssh host rm -rf ."), Some("~".into()));
        assert_eq!(runs("ssh host"), command("sh"));
        assert_eq!(runs("ssh -N -L 8080:localhost:80 host"), nothing());
        assert_eq!(runs("ssh -V"), nothing());
        assert_eq!(
            runs("ssh -o RemoteCommand='sudo reboot' host"),
            line("sudo reboot")
        );
        assert_eq!(
            runs("ssh -oProxyCommand='rm -rf ~' -N host"),
            line("sh -c 'rm -rf ~'")
        );
        assert_eq!(
            runs("ssh -o 'LocalCommand rm -rf ~' host ls"),
            line("sh -c 'rm -rf ~'\ncd ~\nsh -c ls")
        );
        assert_eq!(runs("ssh -o ProxyCommand=none host ls"), line("ls"));
        assert_eq!(runs("ssh -o BatchMode=yes host ls"), line("ls"));
        assert!(asks("ssh -F ./evil_config host ls"));
        assert!(asks("ssh -o PKCS11Provider=./x.so host"));
        assert!(asks("ssh -H host"));
    }

    #[test]
    fn scp_and_sftp_options_that_run_a_command_are_read() {
        assert_eq!(
            runs("scp -o 'ProxyCommand=rm -rf ~' a h:b"),
            line("rm -rf ~")
        );
        assert_eq!(runs("scp -S ./evil a h:b"), command("./evil"));
        assert!(matches!(
            runs("sftp -D 'sh -c \"rm -rf ~\"' h"),
            Some(Runs::All(parts)) if parts.contains(&Runs::Line("sh -c \"rm -rf ~\"".into()))
        ));
        assert_eq!(
            runs("scp a h:b -oProxyCommand=x"),
            line("x"),
            "options after operands"
        );
        assert!(asks("sftp -b cmds h"));
        assert!(asks("sftp h"), "it reads `!` commands on standard input");
        assert!(matches!(
            runs("sftp -o 'ProxyCommand=rm -rf ~' h"),
            Some(Runs::All(parts)) if parts.contains(&Runs::Line("rm -rf ~".into()))
        ));
        assert!(asks("scp -F ./cfg a h:b"));
        assert!(asks("scp -o PKCS11Provider=./x.so a h:b"));
        assert!(asks("scp -Z a h:b"));
        assert_eq!(runs("scp -rp -P 2222 a h:b"), None);
    }
}
