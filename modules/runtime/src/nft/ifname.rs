//! nft's interface-name patterns (`iifname`, `oifname`, a netdev chain's devices) as nft
//! prints them. nft's rule (src/evaluate.c, `expr_evaluate_string`): a name whose last
//! character is `*` matches every name that starts with what comes before it; a `\` right
//! before that `*` makes the star literal. nft 1.0.6 prints a match the same way (`"eth*"`, a
//! prefix; `"eth\*"`, the name `eth*`), and a backslash anywhere else is part of the name.
//!
//! In a set (`iifname { "a*", "b\*" }`) nft 1.0.6 prints both elements as `"a*"` and `"b*"`:
//! an element ending in `*` may be either, so [`set_element_matches`] answers `None` when the
//! two readings differ.

/// What a printed pattern matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// Exactly this name.
    Name(String),
    /// Every name that starts with this (possibly empty) text.
    Prefix(String),
}

impl Pattern {
    /// The pattern as nft prints it in a match.
    pub fn parse(printed: &str) -> Pattern {
        if let Some(literal) = printed.strip_suffix("\\*") {
            return Pattern::Name(format!("{literal}*"));
        }
        match printed.strip_suffix('*') {
            Some(prefix) => Pattern::Prefix(prefix.to_string()),
            None => Pattern::Name(printed.to_string()),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Name(exact) => exact == name,
            Pattern::Prefix(prefix) => name.starts_with(prefix.as_str()),
        }
    }
}

/// Whether interface `name` matches `printed`, a pattern as nft prints it in a match.
pub fn matches(printed: &str, name: &str) -> bool {
    Pattern::parse(printed).matches(name)
}

/// Whether `name` matches a set element as nft 1.0.6 prints it; `None` when the element ends in
/// an unescaped `*` that may be literal (see the module documentation) and the two readings
/// disagree on `name`.
pub fn set_element_matches(printed: &str, name: &str) -> Option<bool> {
    match Pattern::parse(printed) {
        Pattern::Prefix(prefix) => {
            let as_prefix = name.starts_with(prefix.as_str());
            let as_name = name == printed;
            (as_prefix == as_name).then_some(as_prefix)
        }
        exact => Some(exact.matches(name)),
    }
}
