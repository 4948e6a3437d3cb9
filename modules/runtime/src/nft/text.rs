//! What only nft's text listing (`nft -t list ruleset`) shows right in nft 1.0.6: each table's
//! flags (read by [`super::flags`]) and the devices of each netdev-hooked base chain, which the
//! JSON omits (`type filter hook ingress device "v0" ...` or `devices = { v0, v1 }`).

use super::ruleset::Owner;

/// Each base chain's devices in the text listing: (table, chain name, devices), for the chains
/// whose `type` line names any.
pub fn chain_devices(text: &str) -> Vec<(Owner, String, Vec<String>)> {
    let mut found = Vec::new();
    let mut table: Option<Owner> = None;
    let mut chain: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("table ") {
            table = table_header(line);
            chain = None;
        } else if let Some(header) = line.strip_prefix("\tchain ") {
            chain = header.strip_suffix(" {").map(str::to_string);
        } else if let Some(hooked) = line.strip_prefix("\t\ttype ") {
            let devices = devices_of(hooked);
            if let (Some(table), Some(chain), false) = (&table, &chain, devices.is_empty()) {
                found.push((table.clone(), chain.clone(), devices));
            }
        }
    }
    found
}

/// `table FAMILY NAME {` as the table it opens.
pub(super) fn table_header(line: &str) -> Option<Owner> {
    let (family, rest) = line.strip_prefix("table ")?.split_once(' ')?;
    let (name, _) = rest.split_once(" {")?;
    Some(Owner::new(family, name))
}

/// `... device "v0" priority ...` or `... devices = { v0, v1 } priority ...`.
fn devices_of(line: &str) -> Vec<String> {
    let unquote = |name: &str| name.trim().trim_matches('"').to_string();
    if let Some((_, rest)) = line.split_once(" devices = { ") {
        let Some((list, _)) = rest.split_once(" }") else {
            return Vec::new();
        };
        return list
            .split(',')
            .map(unquote)
            .filter(|n| !n.is_empty())
            .collect();
    }
    match line.split_once(" device ") {
        Some((_, rest)) => {
            let name = match rest.strip_prefix('"') {
                Some(quoted) => quoted.split_once('"').map_or(quoted, |(name, _)| name),
                None => rest.split_whitespace().next().unwrap_or_default(),
            };
            vec![unquote(name)]
        }
        None => Vec::new(),
    }
}
