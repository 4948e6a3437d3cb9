//! Secrets FRR configuration holds (BGP `neighbor X password …`, `password …`, OSPF and IS-IS
//! keys, key-chain `key-string …`), kept out of everything the module returns: messages, lint
//! findings, warnings, diffs and result keys, with `no_log` or without it.
//!
//! The module quotes lines of the file, of the task and of the owner record in many places;
//! rather than trust each of them to mask, every secret value met in those texts is collected
//! and replaced by [`MASK`] in the whole result before it is returned (as Ansible masks
//! `no_log` values), so a message written later cannot leak one by forgetting.

use crate::ownership::{Entry, Record};
use crate::stanza::Stanza;
use deevnet_runtime::{Failure, FileDiff, Outcome};
use serde_json::{Map, Value};

/// What a secret is replaced with.
pub const MASK: &str = deevnet_runtime::SECRET_MASK;

/// Words after which the rest of a line is a secret, whatever precedes them: `password`,
/// `area-password`, `domain-password`, `enable secret`, `key-string` (key chains),
/// `authentication-key` and `message-digest-key` (OSPF), `passphrase`.
fn opens_secret(word: &str, previous: Option<&str>, first: bool) -> bool {
    word.ends_with("password")
        || word.ends_with("secret")
        || matches!(
            word,
            "key-string" | "authentication-key" | "message-digest-key" | "passphrase"
        )
        // `ipv6 ospf6 authentication keyid 1 sha256 key SECRET`; `key 1` opening a key of a
        // key chain (first word) names no secret.
        || (word == "key" && !first)
        // RIP: `ip rip authentication string SECRET`.
        || (word == "string" && previous == Some("authentication"))
}

/// Words after a secret keyword that are no secret: the type or algorithm of the secret and
/// IS-IS's trailing options. A number is a type (`password 7 …`) or a key id only when more
/// words follow it; alone it is the secret.
fn is_marker(word: &str, last: bool) -> bool {
    let number = !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
    (number && !last)
        || matches!(
            word,
            "md5"
                | "clear"
                | "text"
                | "sha1"
                | "sha256"
                | "sha384"
                | "sha512"
                | "hmac-sha-1"
                | "hmac-sha-256"
                | "hmac-sha-384"
                | "hmac-sha-512"
                | "authenticate"
                | "snp"
                | "send-only"
                | "validate"
        )
}

/// The secret values of one line (its words after a secret keyword, markers excepted).
pub fn secret_words(line: &str) -> Vec<&str> {
    // Most lines hold none of the keywords: one scan, no allocation.
    let candidate = ["pass", "secret", "key", "string"]
        .iter()
        .any(|k| line.contains(k));
    if !candidate {
        return Vec::new();
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(at) = words.iter().enumerate().position(|(i, w)| {
        opens_secret(
            w.trim_matches(['"', '\'', '`']),
            i.checked_sub(1).map(|p| words[p]),
            i == 0,
        )
    }) else {
        return Vec::new();
    };
    let tail = &words[at + 1..];
    tail.iter()
        .enumerate()
        .filter(|(i, w)| !is_marker(w, i + 1 == tail.len()))
        .map(|(_, w)| *w)
        .collect()
}

/// The secret values met so far, masked in everything the module returns.
#[derive(Debug, Default, Clone)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// Collects the secrets of every line of `text`.
    pub fn learn(&mut self, text: &str) {
        for line in text.lines() {
            for word in secret_words(line) {
                self.add(word);
            }
        }
    }

    /// Collects the secrets of the task's stanzas (as given, before any check).
    pub fn learn_stanzas(&mut self, stanzas: &[Stanza]) {
        for stanza in stanzas {
            self.learn(&stanza.header);
            stanza.lines.iter().for_each(|line| self.learn(line));
            self.learn_stanzas(&stanza.children);
        }
    }

    /// Collects the secrets of every claim of the record, pending ones too.
    pub fn learn_record(&mut self, record: &Record) {
        let claims = record.files.values().flat_map(|owners| owners.values());
        let pending = record
            .pending
            .values()
            .flat_map(|owners| owners.values().map(|p| &p.entries));
        for entries in claims.chain(pending) {
            self.learn_entries(entries);
        }
    }

    fn learn_entries(&mut self, entries: &[Entry]) {
        for entry in entries {
            self.learn(&entry.header);
            entry.lines.iter().for_each(|line| self.learn(line));
            self.learn_entries(&entry.children);
        }
    }

    /// The run's result with every known secret masked: its message, diffs and data.
    pub fn mask_result(&self, result: Result<Outcome, Failure>) -> Result<Outcome, Failure> {
        match result {
            Ok(mut outcome) => {
                self.mask_parts(&mut outcome.msg, &mut outcome.diff, &mut outcome.data);
                Ok(outcome)
            }
            Err(mut failure) => {
                self.mask_parts(&mut failure.msg, &mut failure.diff, &mut failure.data);
                Err(failure)
            }
        }
    }

    fn mask_parts(&self, msg: &mut String, diffs: &mut [FileDiff], data: &mut Map<String, Value>) {
        *msg = self.mask(msg);
        for diff in diffs {
            diff.before = self.mask(&diff.before);
            diff.after = self.mask(&diff.after);
        }
        let mut value = Value::Object(std::mem::take(data));
        self.mask_json(&mut value);
        if let Value::Object(map) = value {
            *data = map;
        }
    }

    fn add(&mut self, value: &str) {
        // As the record's JSON holds it, too (`"` and `\` escaped).
        let escaped = serde_json::to_string(value).unwrap_or_default();
        let escaped = escaped.trim_matches('"').to_string();
        for value in [value.to_string(), escaped] {
            if !value.is_empty() && !self.values.contains(&value) {
                self.values.push(value);
            }
        }
        // Longest first, so a secret that holds another is replaced whole.
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// The secret values met so far (for the runtime to mask in `invocation`).
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `text` with every known secret replaced by [`MASK`].
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), MASK);
            }
        }
        out
    }

    /// Masks every string of a JSON value, object keys included.
    pub fn mask_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.mask(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_json(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.mask_json(&mut v);
                    map.insert(self.mask(&key), v);
                }
            }
            _ => {}
        }
    }
}
