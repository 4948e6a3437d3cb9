//! The walker's benchmark (`bench/nft_walk.py`, BENCHMARKS.md): reads `nft -j list ruleset`
//! from the file given, then for each of ROUNDS rounds parses it and walks its forward base
//! chain with a fresh walker, for a packet from 192.0.2.1 that no `ip saddr` rule matches (so
//! every chain is reached). Prints one JSON object: the sizes, each round's parse and walk
//! times, the rules the walker read, and how many rule readings a walk that re-reads shared
//! chains would need.
//!
//! `cargo run --release --example nft_walk_bench --features nft -- RULESET.json ROUNDS`

use deevnet_runtime::nft::{Chain, Outcome, Owner, Rule, Ruleset, Step, Walker};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Instant;

const PACKET_SADDR: &str = "192.0.2.1";

/// A packet's view of a rule: an `ip saddr` match decides whether it applies; the last
/// statement is its verdict.
fn step(_chain: &Chain, rule: &Rule) -> Step<String> {
    for statement in &rule.expr {
        let Some(m) = statement.get("match") else {
            continue;
        };
        let saddr = m.pointer("/left/payload/field").and_then(Value::as_str) == Some("saddr");
        if saddr && m.get("right").and_then(Value::as_str) != Some(PACKET_SADDR) {
            return Step::Continue;
        }
    }
    let last = rule.expr.last().and_then(Value::as_object);
    match last.and_then(|o| o.iter().next()) {
        Some((kind, body)) if kind == "jump" || kind == "goto" => {
            let target = body["target"].as_str().unwrap_or_default().to_string();
            if kind == "jump" {
                Step::Jump(target)
            } else {
                Step::Goto(target)
            }
        }
        Some((kind, _)) if kind == "accept" || kind == "drop" => Step::Verdict(kind.clone()),
        Some((kind, _)) if kind == "counter" => Step::Continue,
        Some((kind, _)) => Step::Unknown(kind.clone()),
        None => Step::Continue,
    }
}

/// Rule readings of a walk that walks a chain again at every jump that reaches it.
fn rereading_count(
    ruleset: &Ruleset,
    owner: &Owner,
    chain: &str,
    memo: &mut HashMap<String, f64>,
) -> f64 {
    if let Some(count) = memo.get(chain) {
        return *count;
    }
    let mut count = 0.0;
    for rule in ruleset
        .rules
        .iter()
        .filter(|r| &r.owner == owner && r.chain == chain)
    {
        count += 1.0;
        if let Some(target) = rule
            .expr
            .last()
            .and_then(|s| s.get("jump"))
            .and_then(|j| j["target"].as_str())
        {
            count += rereading_count(ruleset, owner, target, memo);
        }
    }
    memo.insert(chain.to_string(), count);
    count
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(rounds)) = (args.get(1), args.get(2).and_then(|r| r.parse().ok())) else {
        eprintln!("usage: nft_walk_bench RULESET.json ROUNDS");
        std::process::exit(2);
    };
    let json = std::fs::read_to_string(path).expect("reading the ruleset");
    let mut parse_ms = Vec::new();
    let mut walk_ms = Vec::new();
    let mut read = 0;
    let mut outcome = String::new();
    let mut ruleset = Ruleset::default();
    for _ in 0..rounds {
        let started = Instant::now();
        ruleset = Ruleset::parse(&json).expect("nft's JSON");
        parse_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        let (base, _) = ruleset
            .base_chains("forward")
            .next()
            .expect("a forward base chain");
        let started = Instant::now();
        let mut walker = Walker::new(&ruleset, step);
        let walked = walker.outcome(base);
        walk_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        read = walker.rules_read();
        outcome = match walked {
            Ok(Outcome::Verdict(v)) => v,
            Ok(Outcome::End) => "end (policy)".into(),
            Err(e) => format!("unreadable: {e}"),
        };
    }
    let (base, _) = ruleset.base_chains("forward").next().expect("a base chain");
    let rereading = rereading_count(&ruleset, &base.owner, &base.name, &mut HashMap::new());
    println!(
        "{}",
        json!({
            "rules": ruleset.rules.len(),
            "chains": ruleset.chains.len(),
            "rules_read": read,
            "outcome": outcome,
            "rereading_walk_reads": rereading,
            "parse_ms": parse_ms,
            "walk_ms": walk_ms,
        })
    );
}
