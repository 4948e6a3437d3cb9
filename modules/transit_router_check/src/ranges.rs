//! IPv4 address ranges (a CIDR, an address, or `a-b` as nft prints a range) and the one
//! question every check asks of them: do two sets of ranges share an address.

use std::fmt;
use std::net::Ipv4Addr;

/// The addresses from `first` to `last`, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Range {
    pub first: u32,
    pub last: u32,
}

impl Range {
    /// `10.0.0.0/8`, or an address alone (`/32`).
    pub fn parse_cidr(text: &str) -> Option<Range> {
        let (addr, len) = match text.split_once('/') {
            Some((addr, len)) => (addr, len.parse::<u32>().ok()?),
            None => (text, 32),
        };
        let addr: Ipv4Addr = addr.parse().ok()?;
        Range::prefix(u32::from(addr), len)
    }

    /// The prefix of `len` bits that holds `addr` (host bits are ignored, as the kernel does).
    pub fn prefix(addr: u32, len: u32) -> Option<Range> {
        if len > 32 {
            return None;
        }
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        Some(Range {
            first: addr & mask,
            last: (addr & mask) | !mask,
        })
    }

    pub fn overlaps(&self, other: &Range) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    pub fn within(&self, other: &Range) -> bool {
        other.first <= self.first && self.last <= other.last
    }

    /// The prefix length when the range is one prefix.
    fn prefix_len(&self) -> Option<u32> {
        let size = u64::from(self.last - self.first) + 1;
        if !size.is_power_of_two() {
            return None;
        }
        let len = 32 - size.trailing_zeros();
        (Range::prefix(self.first, len) == Some(*self)).then_some(len)
    }
}

/// `10.0.0.0/8`, `192.0.2.1` for a single address, `a-b` otherwise.
impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = Ipv4Addr::from(self.first);
        match self.prefix_len() {
            Some(32) => write!(f, "{first}"),
            Some(len) => write!(f, "{first}/{len}"),
            None => write!(f, "{first}-{}", Ipv4Addr::from(self.last)),
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

/// The addresses in both `a` and `b`.
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

/// The addresses of `a` that are not in `b`.
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
