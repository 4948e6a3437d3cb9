//! The one policy for a table's flags. nft 1.0.6 prints a table's single flag in JSON from a
//! string it has already freed, so a dormant table can read `"flags": "persist"`, or the next
//! table's name; two or more flags print right. nft's text listing (`nft -t list ruleset`)
//! prints every flag right. Hence:
//!
//! - the flags are the ones the text listing prints under the table's header (`\tflags
//!   dormant`); the JSON's `flags` value is never read, only whether it is there;
//! - a table the text listing does not show has [`TableFlags::Unreadable`] flags;
//! - read from JSON alone ([`super::Ruleset::parse`]), a table printed with `flags` has
//!   unreadable flags, and one printed without has none;
//! - a flag other than `dormant`, `owner` and `persist` is unreadable: it may stop the table.
//!
//! A reader then asks [`TableFlags::not_in_force`]: a dormant table's chains are not hooked,
//! and one whose flags cannot be read may be dormant, so nothing it holds may be counted on.

use super::ruleset::Owner;
use serde_json::Value;

/// The flags nft knows, as its text listing names them.
const KNOWN: [&str; 3] = ["dormant", "owner", "persist"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableFlags {
    /// The flags as the text listing names them; empty for none.
    Read(Vec<String>),
    /// Flags that cannot be trusted, and why.
    Unreadable(String),
}

impl Default for TableFlags {
    fn default() -> Self {
        TableFlags::Read(Vec::new())
    }
}

impl TableFlags {
    /// From the JSON alone: none when the table prints no `flags`, else unreadable.
    pub fn from_json(flags: Option<&Value>) -> TableFlags {
        match flags {
            None | Some(Value::Null) => TableFlags::Read(Vec::new()),
            Some(printed) => TableFlags::Unreadable(format!(
                "flags {printed} as nft -j prints them (nft 1.0.6 misprints a single flag; read with nft -t list ruleset)"
            )),
        }
    }

    /// The flags of table `owner` from [`in_text`]'s listing.
    pub fn from_text(owner: &Owner, listed: &[(Owner, Vec<String>)]) -> TableFlags {
        let mut found = listed.iter().filter(|(o, _)| o == owner);
        match (found.next(), found.next()) {
            (Some((_, names)), None) => TableFlags::Read(names.clone()),
            (None, _) => TableFlags::Unreadable(
                "flags unknown: nft's text listing does not show the table".into(),
            ),
            (Some(_), Some(_)) => TableFlags::Unreadable(
                "flags unknown: nft's text listing shows the table twice".into(),
            ),
        }
    }

    /// Whether the table has no flag at all.
    pub fn is_empty(&self) -> bool {
        matches!(self, TableFlags::Read(names) if names.is_empty())
    }

    /// Why the table's chains may not be in force: it is dormant, or its flags cannot be
    /// read (it may be); `None` when it is in force.
    pub fn not_in_force(&self) -> Option<String> {
        match self {
            TableFlags::Unreadable(why) => Some(format!("has {why}, so it may be dormant")),
            TableFlags::Read(names) if names.iter().any(|n| n == "dormant") => {
                Some("is dormant (flags dormant), so its chains see no packet".into())
            }
            TableFlags::Read(names) => {
                names
                    .iter()
                    .find(|n| !KNOWN.contains(&n.as_str()))
                    .map(|n| {
                        format!(
                            "has flag {n}, which this reader does not know, so it may be dormant"
                        )
                    })
            }
        }
    }
}

/// Each table's flags in `nft -t list ruleset`'s text: a `table FAMILY NAME {` line, then, one
/// tab in, `flags dormant` (names joined by `,`). Lines two tabs in are a chain's or a set's.
pub fn in_text(text: &str) -> Vec<(Owner, Vec<String>)> {
    let mut tables: Vec<(Owner, Vec<String>)> = Vec::new();
    // Whether the flags lines that follow belong to the last table pushed.
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("table ") {
            let owner = super::text::table_header(line);
            in_table = owner.is_some();
            tables.extend(owner.map(|owner| (owner, Vec::new())));
        } else if let Some(flags) = line.strip_prefix("\tflags ") {
            if let Some((_, names)) = tables.last_mut().filter(|_| in_table) {
                names.extend(flags.split(',').map(|f| f.trim().to_string()));
            }
        }
    }
    tables
}
