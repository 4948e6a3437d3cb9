//! IPv4 address ranges: a prefix or an address (parsed and masked by `ipnet`), or `a-b` as nft
//! prints a range, and what `ipnet` has no answer for: whether two lists of ranges share an
//! address ([`any_overlap`]), whether a union of ranges covers another ([`covered`]), and the
//! union, intersection and difference of lists of ranges ([`union`], [`intersect`],
//! [`subtract`]).

use ipnet::{Ipv4Net, Ipv4Subnets};
use std::fmt;
use std::net::Ipv4Addr;

/// The addresses from `first` to `last`, both included (as numbers, so that a range that ends
/// at 255.255.255.255 needs no special case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Range {
    pub first: u32,
    pub last: u32,
}

impl From<Ipv4Net> for Range {
    fn from(net: Ipv4Net) -> Range {
        Range {
            first: u32::from(net.network()),
            last: u32::from(net.broadcast()),
        }
    }
}

impl From<Ipv4Addr> for Range {
    fn from(addr: Ipv4Addr) -> Range {
        Range {
            first: u32::from(addr),
            last: u32::from(addr),
        }
    }
}

impl Range {
    /// `10.0.0.0/8`, or an address alone (`/32`); host bits are ignored, as the kernel does.
    pub fn parse_cidr(text: &str) -> Option<Range> {
        if let Ok(net) = text.parse::<Ipv4Net>() {
            return Some(net.into());
        }
        text.parse::<Ipv4Addr>().ok().map(Range::from)
    }

    /// A CIDR, an address, or `a-b` (nft's range, `a` not after `b`).
    pub fn parse(text: &str) -> Option<Range> {
        match text.split_once('-') {
            Some((first, last)) => Range::span(
                first.trim().parse::<Ipv4Addr>().ok()?.into(),
                last.trim().parse::<Ipv4Addr>().ok()?.into(),
            ),
            None => Range::parse_cidr(text),
        }
    }

    /// The prefix of `len` bits that holds `addr`; `None` past 32 bits.
    pub fn prefix(addr: Ipv4Addr, len: u8) -> Option<Range> {
        Ipv4Net::new(addr, len).ok().map(|net| net.trunc().into())
    }

    /// From the start of `from` to the end of `to`; `None` when `to` ends before `from`
    /// starts.
    pub fn span(from: Range, to: Range) -> Option<Range> {
        (from.first <= to.last).then_some(Range {
            first: from.first,
            last: to.last,
        })
    }

    pub fn overlaps(&self, other: &Range) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    pub fn within(&self, other: &Range) -> bool {
        other.first <= self.first && self.last <= other.last
    }

    /// The range as one prefix, when it is one.
    pub fn as_prefix(&self) -> Option<Ipv4Net> {
        let mut nets = Ipv4Subnets::new(self.first.into(), self.last.into(), 0);
        match (nets.next(), nets.next()) {
            (Some(net), None) => Some(net),
            _ => None,
        }
    }
}

/// `10.0.0.0/8`, `192.0.2.1` for a single address, `a-b` otherwise.
impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_prefix() {
            Some(net) if net.prefix_len() == 32 => write!(f, "{}", net.addr()),
            Some(net) => write!(f, "{net}"),
            None => write!(
                f,
                "{}-{}",
                Ipv4Addr::from(self.first),
                Ipv4Addr::from(self.last)
            ),
        }
    }
}

/// Whether any range of `a` shares an address with any range of `b`.
pub fn any_overlap(a: &[Range], b: &[Range]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.overlaps(y)))
}

/// Whether every address of `inner` lies in some range of `outer` (each range of `inner` is
/// covered by the union of `outer`).
pub fn covered(inner: &[Range], outer: &[Range]) -> bool {
    let mut sorted: Vec<Range> = outer.to_vec();
    sorted.sort();
    inner.iter().all(|range| {
        let mut next = u64::from(range.first);
        for piece in &sorted {
            if u64::from(piece.first) <= next && u64::from(piece.last) >= next {
                next = u64::from(piece.last) + 1;
            }
            if next > u64::from(range.last) {
                return true;
            }
        }
        false
    })
}

/// The CIDRs of option `parameter`, each checked; the error names the option, the value and
/// the fix.
pub fn parse_list(parameter: &str, items: &[String]) -> Result<Vec<Range>, String> {
    if items.is_empty() {
        return Err(format!(
            "{parameter}: the list is empty; give at least one IPv4 CIDR, e.g. 10.202.0.0/16"
        ));
    }
    items
        .iter()
        .map(|item| {
            Range::parse_cidr(item.trim()).ok_or_else(|| {
                format!("{parameter}: '{item}' is not an IPv4 CIDR or address; write it as 10.202.0.0/16 or 192.0.2.53")
            })
        })
        .collect()
}

/// Every IPv4 address.
pub const ALL: Range = Range {
    first: 0,
    last: u32::MAX,
};

/// The union of `ranges` as sorted, disjoint, non-adjacent ranges.
pub fn union(ranges: &[Range]) -> Vec<Range> {
    let mut sorted = ranges.to_vec();
    sorted.sort();
    let mut out: Vec<Range> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match out.last_mut() {
            Some(last) if u64::from(range.first) <= u64::from(last.last) + 1 => {
                last.last = last.last.max(range.last);
            }
            _ => out.push(range),
        }
    }
    out
}

/// The addresses in both `a` and `b`, as [`union`] gives them.
pub fn intersect(a: &[Range], b: &[Range]) -> Vec<Range> {
    let pieces: Vec<Range> = a
        .iter()
        .flat_map(|x| {
            b.iter().filter(|y| x.overlaps(y)).map(|y| Range {
                first: x.first.max(y.first),
                last: x.last.min(y.last),
            })
        })
        .collect();
    union(&pieces)
}

/// The addresses of `a` that are not in `b`, as [`union`] gives them.
pub fn subtract(a: &[Range], b: &[Range]) -> Vec<Range> {
    let holes = union(b);
    let mut out = Vec::new();
    for range in union(a) {
        let mut next = u64::from(range.first);
        let last = u64::from(range.last);
        for hole in holes.iter().filter(|h| h.overlaps(&range)) {
            if u64::from(hole.first) > next {
                out.push(piece(next, u64::from(hole.first) - 1));
            }
            next = next.max(u64::from(hole.last) + 1);
        }
        if next <= last {
            out.push(piece(next, last));
        }
    }
    out
}

/// `first..=last`, both within u32 by construction.
fn piece(first: u64, last: u64) -> Range {
    let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Range {
        first: clamp(first),
        last: clamp(last),
    }
}
