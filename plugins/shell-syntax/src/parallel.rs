//! GNU `parallel`: the command lines it builds from its command and its `:::` arguments.

use crate::launchers::{nothing, shown};
use crate::options;
use crate::split::quote;
use crate::wrappers::{Runs, together};

/// The most command lines `parallel` is judged on (one for each combination of its
/// arguments); more makes the gate ask.
const MAX_JOBS: usize = 256;

/// GNU `parallel`'s options that change neither what it runs nor how it builds its command
/// lines; any other makes the gate ask.
const PARALLEL: &[&str] = &[
    "k|keep-order",
    "j|jobs=",
    "P|max-procs=",
    "v|verbose",
    "t",
    "u|ungroup",
    "|group",
    "|line-buffer",
    "|tag",
    "|bar",
    "|progress",
    "|eta",
    "|will-cite",
    "|no-notice",
    "|halt=",
    "|delay=",
    "|timeout=",
    "|joblog=",
    "|version",
    "|help",
];

/// GNU `parallel [OPTIONS] CMD ::: ARGS [::: ARGS...]`: for each combination of the arguments
/// after each `:::`, the command's words joined into a line with `{}` (all of them) and `{N}`
/// (the Nth) put in their place, or added at its end, each quoted; with no command, each
/// combination is itself the line. Arguments read from standard input or a file (no `:::`,
/// `::::`), linked ones (`:::+`) and the replacement strings that change an argument (`{.}`,
/// `{/}`, `{= perl =}`...) make the gate ask, as do options beyond [`PARALLEL`].
pub(crate) fn parallel(args: &[String]) -> Result<Runs, String> {
    let read = options::read(PARALLEL, args)?;
    if read.has("version") || read.has("help") {
        return Ok(nothing());
    }
    let Some(start) = read.rest.iter().position(|w| w == ":::") else {
        return Err(
            "it reads its arguments from standard input or a file, which this gate does not \
             follow"
                .into(),
        );
    };
    let (template, sources) = read.rest.split_at(start);
    if template
        .iter()
        .any(|w| w.starts_with("::::") || w == ":::+")
    {
        return Err("it reads its arguments from a file".into());
    }
    let mut groups: Vec<Vec<&String>> = Vec::new();
    for word in sources {
        match word.as_str() {
            ":::" => groups.push(Vec::new()),
            "::::" | ":::+" | "::::+" => {
                return Err(format!(
                    "its `{word}` reads or links arguments as this gate does not follow"
                ));
            }
            _ => {
                if let Some(group) = groups.last_mut() {
                    group.push(word);
                }
            }
        }
    }
    let jobs = groups
        .iter()
        .try_fold(1usize, |n, g| n.checked_mul(g.len()))
        .filter(|n| *n <= MAX_JOBS)
        .ok_or_else(|| format!("it runs more than {MAX_JOBS} commands"))?;
    let mut lines = Vec::with_capacity(jobs);
    for job in 0..jobs {
        // The job-th combination, the last group varying fastest.
        let mut rest = job;
        let mut combination: Vec<&String> = Vec::with_capacity(groups.len());
        for group in groups.iter().rev() {
            let len = group.len().max(1);
            combination.extend(group.get(rest % len).copied());
            rest /= len;
        }
        combination.reverse();
        lines.push(Runs::Line(parallel_line(template, &combination)?));
    }
    Ok(together(lines))
}

/// The line `parallel` runs for `template` (its command's words) given the arguments
/// `combination`.
fn parallel_line(template: &[String], combination: &[&String]) -> Result<String, String> {
    if template.is_empty() {
        let words: Vec<&str> = combination.iter().map(|a| a.as_str()).collect();
        return Ok(words.join(" "));
    }
    let quoted: Vec<String> = combination.iter().map(|a| quote(a)).collect();
    let mut replaced = false;
    let mut words = Vec::with_capacity(template.len() + quoted.len());
    for word in template {
        words.push(replace_strings(word, &quoted, &mut replaced)?);
    }
    if !replaced {
        words.extend(quoted);
    }
    Ok(words.join(" "))
}

/// `word` of a `parallel` command with its replacement strings put in: `{}` by all the
/// `quoted` arguments, `{N}` by the Nth; `replaced` is set when there is one. One that changes
/// an argument (`{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{+.}`, `{= perl =}` and their
/// numbered forms) is an error; braces holding anything else are text.
fn replace_strings(word: &str, quoted: &[String], replaced: &mut bool) -> Result<String, String> {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return Ok(out);
        };
        let inner = &after[..close];
        let numbered = !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit());
        let changer = inner.trim_start_matches(|c: char| c.is_ascii_digit());
        if inner.starts_with('=')
            || (!changer.is_empty() && changer.chars().all(|c| "./#%+".contains(c)))
        {
            return Err(format!(
                "its replacement string `{{{}}}` is not one this gate reads",
                shown(inner)
            ));
        }
        if inner.is_empty() {
            out.push_str(&quoted.join(" "));
            *replaced = true;
        } else if numbered {
            let n: usize = inner.parse().unwrap_or(0);
            let Some(arg) = n.checked_sub(1).and_then(|i| quoted.get(i)) else {
                return Err(format!("its `{{{}}}` names no argument", shown(inner)));
            };
            out.push_str(arg);
            *replaced = true;
        } else {
            out.push('{');
            out.push_str(inner);
            out.push('}');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::testing::*;

    #[test]
    fn parallel_builds_its_command_lines() {
        assert_eq!(runs("parallel rm -rf ::: ~"), line("rm -rf ~"));
        assert_eq!(
            runs("parallel 'rm -rf {}' ::: /tmp/a"),
            line("rm -rf /tmp/a")
        );
        assert_eq!(
            runs("parallel -j2 echo {1}-{2} ::: a b ::: c"),
            all(vec![line("echo a-c"), line("echo b-c")])
        );
        assert_eq!(runs("parallel ::: 'rm -rf ~'"), line("rm -rf ~"));
        assert_eq!(runs("parallel echo ::: 'a; rm'"), line("echo 'a; rm'"));
        assert!(
            asks("parallel rm"),
            "its arguments come from standard input"
        );
        assert!(asks("parallel rm :::: list"));
        assert!(asks("parallel rm {.} ::: a.c"));
        assert!(asks("parallel --pipe rm ::: a"));
        assert_eq!(runs("parallel --version"), nothing());
    }
}
