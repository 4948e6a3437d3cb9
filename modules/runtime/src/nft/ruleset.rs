//! The ruleset as `nft -j list ruleset` prints it (libnftables-json), typed: tables with their
//! flags, chains (base chains with their type, hook, priority, policy and devices), sets with
//! their elements, flowtables, and rules with their statements as printed.

use super::flags::{self, TableFlags};
use super::ranges::Range;
use super::text;
use serde_json::Value;
use std::collections::HashMap;

/// A table, chain, set or rule belongs to a family and a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner {
    pub family: String,
    pub table: String,
}

impl Owner {
    pub fn new(family: &str, table: &str) -> Owner {
        Owner {
            family: family.to_string(),
            table: table.to_string(),
        }
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.family, self.table)
    }
}

/// A table and its flags ([`TableFlags`], read by the policy of [`super::flags`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub owner: Owner,
    pub flags: TableFlags,
}

/// A chain; `base` when it is hooked into the packet path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub owner: Owner,
    pub name: String,
    pub base: Option<BaseChain>,
}

impl Chain {
    /// `family table chain`, as an error or a finding names it.
    pub fn path(&self) -> String {
        format!("{} {}", self.owner, self.name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseChain {
    /// `filter`, `nat` or `route` (nft's `type`).
    pub kind: String,
    pub hook: String,
    pub prio: i64,
    /// `accept` unless printed otherwise.
    pub policy: String,
    /// The devices of a chain hooked on devices (netdev's ingress and egress, inet's ingress),
    /// from the JSON's `dev`, else from the text listing ([`Ruleset::parse_listings`]: nft
    /// 1.0.6's JSON omits them); empty for the other chains, and when neither shows any.
    pub devices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    pub owner: Owner,
    pub name: String,
    /// The element type as printed (`"ipv4_addr"`, or a list for a concatenation).
    pub kind: Value,
    /// `true` for a map (`"map"` objects): elements are key and value pairs.
    pub map: bool,
    pub elems: Vec<Value>,
}

/// A flowtable: packets of its flows skip the forward hook once offloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flowtable {
    pub owner: Owner,
    pub name: String,
    pub hook: String,
    pub prio: i64,
    pub devices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub owner: Owner,
    pub chain: String,
    pub handle: i64,
    /// The statements as printed, in order.
    pub expr: Vec<Value>,
}

/// The whole ruleset, in nft's order; `objects` keeps each listed object (all but
/// `metainfo`) as printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruleset {
    /// nft's version (`metainfo`), empty when not printed.
    pub version: String,
    pub tables: Vec<Table>,
    pub chains: Vec<Chain>,
    pub sets: Vec<Set>,
    pub flowtables: Vec<Flowtable>,
    pub rules: Vec<Rule>,
    pub objects: Vec<Value>,
}

/// A string field of an nft JSON object, empty when absent or not a string.
pub fn text(object: &Value, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn owner(object: &Value, table_key: &str) -> Owner {
    Owner {
        family: text(object, "family"),
        table: text(object, table_key),
    }
}

/// A device list as printed: one name, or a list of names.
fn devices(object: &Value, key: &str) -> Vec<String> {
    match object.get(key) {
        Some(Value::String(name)) => vec![name.clone()],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn list(object: &Value, key: &str) -> Vec<Value> {
    object
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn number(object: &Value, key: &str) -> i64 {
    object.get(key).and_then(Value::as_i64).unwrap_or_default()
}

fn base_chain(body: &Value) -> Option<BaseChain> {
    body.get("hook")?;
    Some(BaseChain {
        kind: text(body, "type"),
        hook: text(body, "hook"),
        prio: number(body, "prio"),
        policy: body
            .get("policy")
            .and_then(Value::as_str)
            .unwrap_or("accept")
            .to_string(),
        devices: devices(body, "dev"),
    })
}

impl Ruleset {
    /// Parses nft's JSON alone. A table printed with `flags` gets [`TableFlags::Unreadable`]:
    /// only the text listing says which ([`Ruleset::parse_listings`], policy in
    /// [`super::flags`]). An error says what was not as libnftables-json documents it.
    pub fn parse(json: &str) -> Result<Ruleset, String> {
        let mut value: Value =
            serde_json::from_str(json).map_err(|e| format!("no JSON ruleset: {e}"))?;
        let Some(objects) = value.get_mut("nftables").and_then(Value::as_array_mut) else {
            return Err("JSON without the `nftables` list".into());
        };
        let mut ruleset = Ruleset::default();
        for object in std::mem::take(objects) {
            ruleset.add(object);
        }
        Ok(ruleset)
    }

    /// Parses `nft -j list ruleset` (`json`) with each table's flags from `nft -t list
    /// ruleset` (`text`), as [`super::flags`] decides, and each netdev-hooked base chain's
    /// devices from the text when the JSON prints none (nft 1.0.6 never does).
    pub fn parse_listings(json: &str, text: &str) -> Result<Ruleset, String> {
        let mut ruleset = Ruleset::parse(json)?;
        let listed = flags::in_text(text);
        for table in &mut ruleset.tables {
            table.flags = TableFlags::from_text(&table.owner, &listed);
        }
        let devices = text::chain_devices(text);
        for chain in &mut ruleset.chains {
            let Some(base) = chain.base.as_mut().filter(|b| b.devices.is_empty()) else {
                continue;
            };
            if let Some((_, _, names)) = (devices.iter())
                .find(|(owner, name, _)| owner == &chain.owner && name == &chain.name)
            {
                base.devices.clone_from(names);
            }
        }
        Ok(ruleset)
    }

    /// One listed object, as `nft -j` prints it (`{"table": {...}}`); objects of other kinds
    /// are kept in `objects` only.
    fn add(&mut self, object: Value) {
        let Some((kind, body)) = object.as_object().and_then(|o| o.iter().next()) else {
            return;
        };
        match kind.as_str() {
            "metainfo" => {
                self.version = text(body, "version");
                return;
            }
            "table" => self.tables.push(Table {
                owner: owner(body, "name"),
                flags: TableFlags::from_json(body.get("flags")),
            }),
            "chain" => self.chains.push(Chain {
                owner: owner(body, "table"),
                name: text(body, "name"),
                base: base_chain(body),
            }),
            "set" | "map" => self.sets.push(Set {
                owner: owner(body, "table"),
                name: text(body, "name"),
                kind: body.get("type").cloned().unwrap_or(Value::Null),
                map: kind == "map",
                elems: list(body, "elem"),
            }),
            "flowtable" => self.flowtables.push(Flowtable {
                owner: owner(body, "table"),
                name: text(body, "name"),
                hook: text(body, "hook"),
                prio: number(body, "prio"),
                devices: devices(body, "dev"),
            }),
            "rule" => self.rules.push(Rule {
                owner: owner(body, "table"),
                chain: text(body, "chain"),
                handle: number(body, "handle"),
                expr: list(body, "expr"),
            }),
            _ => {}
        }
        self.objects.push(object);
    }

    pub fn has_table(&self, owner: &Owner) -> bool {
        self.tables.iter().any(|t| &t.owner == owner)
    }

    pub fn table(&self, owner: &Owner) -> Option<&Table> {
        self.tables.iter().find(|t| &t.owner == owner)
    }

    pub fn chain(&self, owner: &Owner, name: &str) -> Option<&Chain> {
        self.chains
            .iter()
            .find(|c| &c.owner == owner && c.name == name)
    }

    /// The rules of a chain, in order.
    pub fn rules_of<'a>(&'a self, chain: &'a Chain) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules
            .iter()
            .filter(move |r| r.owner == chain.owner && r.chain == chain.name)
    }

    /// Every base chain on `hook`, in nft's order.
    pub fn base_chains<'a>(
        &'a self,
        hook: &'a str,
    ) -> impl Iterator<Item = (&'a Chain, &'a BaseChain)> + 'a {
        self.chains
            .iter()
            .filter_map(move |c| c.base.as_ref().filter(|b| b.hook == hook).map(|b| (c, b)))
    }

    /// Every base chain on `hook` of one of `families`, in the order the kernel runs them:
    /// by priority, lowest first (equal priorities in nft's order, which the kernel does not
    /// promise to keep).
    pub fn base_chains_by_prio<'a>(
        &'a self,
        families: &[&str],
        hook: &'a str,
    ) -> Vec<(&'a Chain, &'a BaseChain)> {
        let mut chains: Vec<(&Chain, &BaseChain)> = self
            .base_chains(hook)
            .filter(|(chain, _)| families.contains(&chain.owner.family.as_str()))
            .collect();
        chains.sort_by_key(|(_, base)| base.prio);
        chains
    }

    pub fn set(&self, owner: &Owner, name: &str) -> Option<&Set> {
        self.sets
            .iter()
            .find(|s| &s.owner == owner && s.name == name)
    }

    /// The elements of the named set as ranges; `None` when the set is missing or holds
    /// something that is not an IPv4 address, prefix or range.
    pub fn set_ranges(&self, owner: &Owner, name: &str) -> Option<Vec<Range>> {
        let set = self.set(owner, name).filter(|s| !s.map)?;
        set.elems.iter().map(value_range).collect()
    }

    /// The ruleset with only the tables `keep` keeps (with their chains, sets, flowtables,
    /// rules and objects).
    #[must_use]
    pub fn filtered(&self, keep: impl Fn(&Owner) -> bool) -> Ruleset {
        let object_kept = |object: &Value| {
            let Some((kind, body)) = object.as_object().and_then(|o| o.iter().next()) else {
                return true;
            };
            let key = if kind == "table" { "name" } else { "table" };
            keep(&owner(body, key))
        };
        Ruleset {
            version: self.version.clone(),
            tables: self
                .tables
                .iter()
                .filter(|t| keep(&t.owner))
                .cloned()
                .collect(),
            chains: self
                .chains
                .iter()
                .filter(|c| keep(&c.owner))
                .cloned()
                .collect(),
            sets: self
                .sets
                .iter()
                .filter(|s| keep(&s.owner))
                .cloned()
                .collect(),
            flowtables: (self.flowtables.iter())
                .filter(|f| keep(&f.owner))
                .cloned()
                .collect(),
            rules: self
                .rules
                .iter()
                .filter(|r| keep(&r.owner))
                .cloned()
                .collect(),
            objects: (self.objects.iter())
                .filter(|o| object_kept(o))
                .cloned()
                .collect(),
        }
    }

    /// This ruleset followed by `other`'s tables (as if `other` were loaded after it).
    #[must_use]
    pub fn merged(mut self, other: Ruleset) -> Ruleset {
        self.tables.extend(other.tables);
        self.chains.extend(other.chains);
        self.sets.extend(other.sets);
        self.flowtables.extend(other.flowtables);
        self.rules.extend(other.rules);
        self.objects.extend(other.objects);
        self
    }

    /// Chains by owner and name, and each chain's rules (their places in `rules`), for lookups
    /// in constant time.
    pub(crate) fn index(&self) -> Index<'_> {
        let mut chains = HashMap::new();
        for (i, chain) in self.chains.iter().enumerate() {
            chains
                .entry((&chain.owner, chain.name.as_str()))
                .or_insert(i);
        }
        let mut rules: HashMap<(&Owner, &str), Vec<usize>> = HashMap::new();
        for (i, rule) in self.rules.iter().enumerate() {
            rules
                .entry((&rule.owner, rule.chain.as_str()))
                .or_default()
                .push(i);
        }
        Index { chains, rules }
    }
}

pub(crate) struct Index<'a> {
    pub chains: HashMap<(&'a Owner, &'a str), usize>,
    pub rules: HashMap<(&'a Owner, &'a str), Vec<usize>>,
}

/// An IPv4 address, `{"prefix": {addr, len}}`, `{"range": [a, b]}` or a set element
/// (`{"elem": {"val": ...}}`) as a range; `None` for anything else.
pub fn value_range(value: &Value) -> Option<Range> {
    if let Some(addr) = value.as_str() {
        return Range::parse_cidr(addr);
    }
    if let Some(prefix) = value.get("prefix") {
        let addr = prefix.get("addr")?.as_str()?;
        let len = u8::try_from(prefix.get("len")?.as_u64()?).ok()?;
        return Range::prefix(addr.parse().ok()?, len);
    }
    if let Some(range) = value.get("range").and_then(Value::as_array) {
        let [first, last] = range.as_slice() else {
            return None;
        };
        return Range::span(value_range(first)?, value_range(last)?);
    }
    value
        .get("elem")
        .and_then(|e| e.get("val"))
        .and_then(value_range)
}
