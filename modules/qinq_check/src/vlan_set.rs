//! A zone's VLANs as the operator writes them (`"199-299"`, `[199-249, 260]`, `"10 20-30"`),
//! kept as sorted, merged ranges.

use deevnet_runtime::netlink::PortVlans;
use std::fmt;

/// The lowest and highest VLAN a tag can carry (0 and 4095 are reserved).
pub const MIN_VID: u16 = 1;
pub const MAX_VID: u16 = 4094;

/// A set of VLAN ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlanSet {
    ranges: Vec<(u16, u16)>,
}

impl VlanSet {
    /// Parses the `vlans` option: each element is one VLAN (`201`) or a range (`199-299`);
    /// commas and spaces separate more of them within an element, as in `bridge-vids`.
    pub fn parse(parameter: &str, items: &[String]) -> Result<VlanSet, String> {
        let mut ranges = Vec::new();
        for item in items {
            for word in item
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
            {
                ranges.push(parse_range(parameter, word)?);
            }
        }
        if ranges.is_empty() {
            return Err(format!(
                "{parameter}: no VLAN given; give the zone's VLANs as a range such as \"199-299\" or a list"
            ));
        }
        Ok(VlanSet::from_ranges(ranges))
    }

    /// A set from ranges in any order, overlapping or not.
    pub fn from_ranges(mut ranges: Vec<(u16, u16)>) -> VlanSet {
        ranges.sort();
        let mut merged: Vec<(u16, u16)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        VlanSet { ranges: merged }
    }

    pub fn contains(&self, vid: u16) -> bool {
        self.ranges.iter().any(|&(s, e)| s <= vid && vid <= e)
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ranges
            .iter()
            .map(|&(s, e)| usize::from(e - s) + 1)
            .sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.ranges.iter().flat_map(|&(s, e)| s..=e)
    }

    /// The VLANs of this set that `port` does not carry.
    pub fn missing_on(&self, port: &PortVlans) -> VlanSet {
        self.filter(|vid| port.find(vid).is_none())
    }

    /// The VLANs of this set that `port` sends untagged (their tag stripped on the way out).
    pub fn untagged_on(&self, port: &PortVlans) -> VlanSet {
        self.filter(|vid| port.find(vid).is_some_and(|entry| entry.untagged))
    }

    fn filter(&self, keep: impl Fn(u16) -> bool) -> VlanSet {
        let ranges = self.iter().filter(|&v| keep(v)).map(|v| (v, v)).collect();
        VlanSet::from_ranges(ranges)
    }
}

impl fmt::Display for VlanSet {
    /// `199-249,251-299`, the way `bridge-vids` and `bridge vlan add` take it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .ranges
            .iter()
            .map(|&(s, e)| {
                if s == e {
                    s.to_string()
                } else {
                    format!("{s}-{e}")
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

fn parse_vid(parameter: &str, word: &str, text: &str) -> Result<u16, String> {
    match text.trim().parse::<u32>() {
        Ok(vid) if (u32::from(MIN_VID)..=u32::from(MAX_VID)).contains(&vid) => Ok(vid as u16),
        Ok(vid) => Err(format!(
            "{parameter}: VLAN {vid} in '{word}' is outside 1-4094 (0 and 4095 are reserved); give VLAN ids from 1 to 4094"
        )),
        Err(_) => Err(format!(
            "{parameter}: '{word}' is not a VLAN id or a range; write one VLAN as 201 and a range as 199-299"
        )),
    }
}

fn parse_range(parameter: &str, word: &str) -> Result<(u16, u16), String> {
    let (start, end) = match word.split_once('-') {
        Some((start, end)) => (
            parse_vid(parameter, word, start)?,
            parse_vid(parameter, word, end)?,
        ),
        None => {
            let vid = parse_vid(parameter, word, word)?;
            (vid, vid)
        }
    };
    if start > end {
        return Err(format!(
            "{parameter}: the range '{word}' is written backwards; write it lowest first, as {end}-{start}"
        ));
    }
    Ok((start, end))
}
