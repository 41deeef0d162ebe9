//! Test-only: `_PHONE`'s alternatives run by a small generic backtracking matcher (continuation
//! passing, in the order of Python's `sre`), to check the hand-unrolled loops of
//! [`crate::scan`] on many strings.

/// A character class of the phone pattern.
#[derive(Debug, Clone, Copy)]
enum Class {
    Digit,
    /// `[ .-]`
    Sep,
    /// `[ -]`
    SpaceDash,
    Is(char),
}

impl Class {
    fn has(self, c: char) -> bool {
        match self {
            Class::Digit => c.is_ascii_digit(),
            Class::Sep => matches!(c, ' ' | '.' | '-'),
            Class::SpaceDash => matches!(c, ' ' | '-'),
            Class::Is(x) => c == x,
        }
    }
}

#[derive(Debug)]
enum Node {
    One(Class),
    /// Greedy `{min,max}`.
    Rep(&'static Node, usize, usize),
    Seq(&'static [Node]),
    Alt(&'static [Node]),
    /// A capturing group: its number (1 or 2) and body.
    Group(usize, &'static Node),
    Backref(usize),
}

use Class::{Digit, Is, Sep, SpaceDash};
use Node::{Alt, Backref, Group, One, Rep, Seq};

const D: Node = One(Digit);

static PHONE: Node = Alt(&[
    // \+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,7}
    Seq(&[
        One(Is('+')),
        Rep(&D, 1, 3),
        Rep(
            &Seq(&[
                Rep(&One(Sep), 0, 1),
                Rep(&One(Is('(')), 0, 1),
                Rep(&D, 1, 4),
                Rep(&One(Is(')')), 0, 1),
            ]),
            2,
            7,
        ),
    ]),
    // \(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}
    Seq(&[
        One(Is('(')),
        Rep(&D, 2, 4),
        One(Is(')')),
        Rep(&One(Sep), 0, 1),
        Rep(&D, 3, 4),
        Rep(&One(Sep), 0, 1),
        Rep(&D, 3, 4),
    ]),
    // \d{3}([ .-])\d{3}\1\d{4}
    Seq(&[
        Rep(&D, 3, 3),
        Group(1, &One(Sep)),
        Rep(&D, 3, 3),
        Backref(1),
        Rep(&D, 4, 4),
    ]),
    // 0\d([ .-]?)\d{2}\2\d{2}\2\d{2}\2\d{2}
    Seq(&[
        One(Is('0')),
        D,
        Group(2, &Rep(&One(Sep), 0, 1)),
        Rep(&D, 2, 2),
        Backref(2),
        Rep(&D, 2, 2),
        Backref(2),
        Rep(&D, 2, 2),
        Backref(2),
        Rep(&D, 2, 2),
    ]),
    // 0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}
    Seq(&[
        One(Is('0')),
        Rep(&D, 2, 4),
        One(SpaceDash),
        Rep(&D, 3, 4),
        Rep(&One(SpaceDash), 0, 1),
        Rep(&D, 3, 4),
    ]),
]);

type Groups = [Option<(usize, usize)>; 3];

/// Where the first match of the alternatives at `pos` ends (the atomic group's commitment).
pub fn first_alternative(t: &[char], pos: usize) -> Option<usize> {
    let mut end = None;
    matches(&PHONE, t, pos, [None; 3], &mut |e, _| {
        end = Some(e);
        true
    });
    end
}

fn matches(
    node: &Node,
    t: &[char],
    pos: usize,
    groups: Groups,
    k: &mut dyn FnMut(usize, Groups) -> bool,
) -> bool {
    match node {
        One(class) => t.get(pos).is_some_and(|&c| class.has(c)) && k(pos + 1, groups),
        Seq(nodes) => sequence(nodes, t, pos, groups, k),
        Alt(nodes) => nodes.iter().any(|n| matches(n, t, pos, groups, k)),
        Rep(body, min, max) => repeat(body, (*min, *max), 0, t, pos, groups, k),
        Group(n, body) => matches(body, t, pos, groups, &mut |e, mut g| {
            g[*n] = Some((pos, e));
            k(e, g)
        }),
        Backref(n) => {
            let Some((s, e)) = groups[*n] else {
                return false;
            };
            let len = e - s;
            t.get(pos..pos + len) == Some(&t[s..e]) && k(pos + len, groups)
        }
    }
}

fn sequence(
    nodes: &[Node],
    t: &[char],
    pos: usize,
    groups: Groups,
    k: &mut dyn FnMut(usize, Groups) -> bool,
) -> bool {
    match nodes.split_first() {
        None => k(pos, groups),
        Some((first, rest)) => matches(first, t, pos, groups, &mut |p, g| {
            sequence(rest, t, p, g, k)
        }),
    }
}

fn repeat(
    body: &Node,
    (min, max): (usize, usize),
    done: usize,
    t: &[char],
    pos: usize,
    groups: Groups,
    k: &mut dyn FnMut(usize, Groups) -> bool,
) -> bool {
    (done < max
        && matches(body, t, pos, groups, &mut |p, g| {
            repeat(body, (min, max), done + 1, t, p, g, k)
        }))
        || (done >= min && k(pos, groups))
}
