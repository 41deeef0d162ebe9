//! A program's options, read as GNU `getopt_long` reads them, to find where its operands begin:
//! short options clustered (`-Eu root`), a value attached or in the next word (`-ofile`, `-o
//! file`, `--output=file`, `--output file`), a long option abbreviated to any prefix that names
//! one option only (`--sig` is `--signal`), and `--` ending the options. A word the table does not
//! hold is an error, not a guess: whoever reads the words then cannot tell where the command
//! begins.
//!

/// How an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    /// None: a flag.
    Nothing,
    /// One, attached or in the next word (getopt's `x:`).
    Value,
    /// One only when attached, `-i{}` or `--replace={}` (getopt's `x::`).
    Attached,
}

/// One entry of an option table, written `s|long`, then `=` when it takes a value or `?` when
/// it takes one only attached. Either name may be left out: `I=`, `|show-limits`. `#` stands
/// for the old numeric options, `nice -5`.
#[derive(Clone, Copy, Debug)]
struct Opt {
    short: Option<char>,
    long: &'static str,
    name: &'static str,
    takes: Takes,
}

impl Opt {
    fn parse(spec: &'static str) -> Opt {
        let (names, takes) = if let Some(names) = spec.strip_suffix('=') {
            (names, Takes::Value)
        } else if let Some(names) = spec.strip_suffix('?') {
            (names, Takes::Attached)
        } else {
            (spec, Takes::Nothing)
        };
        let (short, long) = names.split_once('|').unwrap_or((names, ""));
        Opt {
            short: short.chars().next(),
            long,
            name: if long.is_empty() { short } else { long },
            takes,
        }
    }
}

/// One option found among a command's words: its name (the long one when it has one, else its
/// letter) and its value, when it takes one and one was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    /// The option's name, as its table writes it.
    pub name: &'static str,
    /// Its value.
    pub value: Option<String>,
}

/// A command's options, and its operands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The options, in the order given.
    pub given: Vec<Given>,
    /// The words after the options: from the first operand (a word not starting with `-`, or
    /// `-` alone) or after a `--`. When read [`permuted`], every word that is not an option.
    pub rest: Vec<String>,
}

impl Options {
    /// Whether the option `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|g| g.name == name)
    }

    /// The values given to the option `name`, in order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.given
            .iter()
            .filter(move |g| g.name == name)
            .filter_map(|g| g.value.as_deref())
    }
}

/// The options at the start of `args`, by `table` (see [`Opt`] for how an entry is written),
/// up to the first operand or a `--`, as programs that stop at their command read them (getopt's
/// `+`: `sudo`, `env`, `timeout`, `xargs`...).
///
/// # Errors
/// Why a word cannot be read: an option `table` does not hold, a prefix of several long options,
/// a value given to a flag. The caller cannot tell where the operands begin.
pub fn read(table: &[&'static str], args: &[String]) -> Result<Options, String> {
    parse(table, args, false)
}

/// The same, with options and operands mixed as GNU getopt allows by default (`su root -c
/// CMD`): every word that is not an option, or comes after `--`, is an operand.
///
/// # Errors
/// As [`read`].
pub fn permuted(table: &[&'static str], args: &[String]) -> Result<Options, String> {
    parse(table, args, true)
}

fn parse(table: &[&'static str], args: &[String], permute: bool) -> Result<Options, String> {
    let opts: Vec<Opt> = table.iter().copied().map(Opt::parse).collect();
    let numeric = table.contains(&"#");
    let mut out = Options::default();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        if word == "--" {
            out.rest.extend(args.iter().skip(i).cloned());
            break;
        }
        if word == "-" || !word.starts_with('-') {
            out.rest.push(word.clone());
            if permute {
                continue;
            }
            out.rest.extend(args.iter().skip(i).cloned());
            break;
        }
        if numeric && is_numeric_option(word) {
            out.given.push(Given {
                name: "#",
                value: Some(word.clone()),
            });
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let opt = long_option(&opts, name)?;
            let value = match opt.takes {
                Takes::Nothing if attached.is_some() => {
                    return Err(format!("option `--{}` takes no value", opt.long));
                }
                Takes::Nothing => None,
                Takes::Attached => attached,
                Takes::Value => attached.or_else(|| {
                    i += 1;
                    args.get(i - 1).cloned()
                }),
            };
            out.given.push(Given {
                name: opt.name,
                value,
            });
        } else {
            let letters = word.get(1..).unwrap_or_default();
            for (at, letter) in letters.char_indices() {
                let opt = opts
                    .iter()
                    .find(|o| o.short == Some(letter))
                    .ok_or_else(|| format!("option `-{letter}` is not one this gate knows"))?;
                let after = letters.get(at + letter.len_utf8()..).unwrap_or_default();
                let value = match opt.takes {
                    Takes::Nothing => None,
                    Takes::Attached => Some(after.to_owned()).filter(|v| !v.is_empty()),
                    Takes::Value if after.is_empty() => {
                        i += 1;
                        args.get(i - 1).cloned()
                    }
                    Takes::Value => Some(after.to_owned()),
                };
                out.given.push(Given {
                    name: opt.name,
                    value,
                });
                if opt.takes != Takes::Nothing {
                    break; // the rest of the cluster was its value
                }
            }
        }
    }
    Ok(out)
}

/// The long option `name` names: itself, or the one option it is a prefix of.
fn long_option(opts: &[Opt], name: &str) -> Result<Opt, String> {
    if let Some(exact) = opts.iter().find(|o| !o.long.is_empty() && o.long == name) {
        return Ok(*exact);
    }
    let mut prefixed = opts
        .iter()
        .filter(|o| !name.is_empty() && o.long.starts_with(name));
    match (prefixed.next(), prefixed.next()) {
        (Some(one), None) => Ok(*one),
        (Some(_), Some(_)) => Err(format!("`--{name}` abbreviates several options")),
        (None, _) => Err(format!("option `--{name}` is not one this gate knows")),
    }
}

/// `-5`, `--10`, `-+3`: `nice`'s old way of giving the adjustment.
fn is_numeric_option(word: &str) -> bool {
    let digits = word.trim_start_matches('-').trim_start_matches(['+', '-']);
    word.len() > 1 && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// Whether the long option word `--given` (a value after `=` left out) names `option` as getopt
/// reads it: the whole name, or a prefix of it (`--rec` for `--recursive`). A prefix that other
/// options share too is an error to getopt; counting it as `option` errs on the safe side.
pub fn abbreviates(given: &str, option: &str) -> bool {
    let name = given.split('=').next().unwrap_or_default();
    !name.is_empty() && option.starts_with(name)
}

/// An option a lenient reader ([`scan`]) looks for among a program's words.
pub(crate) struct Wanted {
    /// Its long name, without `--` (empty when it has none).
    pub(crate) long: &'static str,
    /// The fewest letters of a prefix of `long` that name it (its whole length when the
    /// program takes no abbreviations).
    min: usize,
    /// Its letter, when it has one.
    pub(crate) short: Option<char>,
    /// How it takes a value.
    takes: Takes,
}

impl Wanted {
    /// `--long` (or a prefix of it of `min` letters or more), and `-short`, taking a value.
    pub(crate) const fn new(long: &'static str, min: usize, short: Option<char>) -> Wanted {
        Wanted {
            long,
            min,
            short,
            takes: Takes::Value,
        }
    }

    /// The same, for a flag: the letters after it in a cluster are options too.
    pub(crate) const fn flag(long: &'static str, min: usize, short: Option<char>) -> Wanted {
        Wanted {
            long,
            min,
            short,
            takes: Takes::Nothing,
        }
    }

    /// The same, for an option whose value is only ever attached (`sed -i.bak`,
    /// `--in-place=.bak`): the rest of its cluster, or nothing.
    pub(crate) const fn optional(long: &'static str, min: usize, short: Option<char>) -> Wanted {
        Wanted {
            long,
            min,
            short,
            takes: Takes::Attached,
        }
    }
}

/// The options of `specs` found among `args` (up to a `--`), each with its value (after `=`,
/// the rest of a cluster, or the next word): options and operands may be mixed, as GNU getopt
/// and popt allow. In a cluster of letters, a letter of `valued` takes the rest as its value,
/// so none after it is an option. Unlike [`read`], a word it does not know is passed over and
/// the value of an option it does not look for is not skipped: a reader looking for options
/// that run or write something then finds more, never less.
pub(crate) fn scan(
    args: &[String],
    specs: &[Wanted],
    valued: &str,
) -> Vec<(usize, Option<String>)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let named =
                |s: &Wanted| !s.long.is_empty() && name.len() >= s.min && s.long.starts_with(name);
            if let Some(which) = specs.iter().position(named) {
                let takes = specs.get(which).is_some_and(|s| s.takes == Takes::Value);
                let value = attached.or_else(|| {
                    takes.then(|| {
                        at += 1;
                        args.get(at - 1).cloned()
                    })?
                });
                found.push((which, value));
            }
            continue;
        }
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) else {
            continue; // an operand
        };
        for (i, letter) in letters.char_indices() {
            let rest = letters.get(i + letter.len_utf8()..).unwrap_or_default();
            if let Some((which, spec)) = specs
                .iter()
                .enumerate()
                .find(|(_, s)| s.short == Some(letter))
            {
                let value = match spec.takes {
                    Takes::Nothing => {
                        found.push((which, None));
                        continue;
                    }
                    Takes::Attached => (!rest.is_empty()).then(|| rest.to_owned()),
                    Takes::Value if rest.is_empty() => {
                        at += 1;
                        args.get(at - 1).cloned()
                    }
                    Takes::Value => Some(rest.to_owned()),
                };
                found.push((which, value));
                break;
            }
            if valued.contains(letter) {
                break; // the rest of the cluster is its value
            }
        }
    }
    found
}
