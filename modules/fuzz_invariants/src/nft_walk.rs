//! Invariants of the runtime's nftables reader and its walker of jumps (`deevnet_runtime::nft`),
//! shared by the libFuzzer target `nft_walk` and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/runtime.rs`).

use crate::input::{split_at_nul, Input};
use deevnet_runtime::nft::{Chain, Fault, Outcome, Rule, Ruleset, Step, Walker};
use serde_json::{json, Value};
use std::collections::HashSet;

/// Target `nft_walk`: `JSON \0 DECISIONS`. The reader takes any text without panicking; the
/// walker, over the JSON's ruleset and over one the decisions build (chains jumping and going
/// to each other, to missing chains and in loops), always ends within its budget, with an
/// outcome or an unreadable error naming a chain, and reads each rule at most once unless a
/// walk met a loop or a chain too deep (which the kernel refuses to load).
pub fn check_bytes(data: &[u8]) {
    let (json, decisions) = split_at_nul(data);
    let json = String::from_utf8_lossy(json);
    let mut input = Input::new(decisions);
    let text = input.text(200);
    if let Ok(ruleset) = Ruleset::parse_listings(&json, &text) {
        assert_eq!(
            Ruleset::parse_listings(&json, &text).as_ref(),
            Ok(&ruleset),
            "the reader is not deterministic\n{json}"
        );
        let budget = budget(&mut input);
        walk_every_base_chain(&ruleset, budget, &json);
    }
    let built = built(&mut input);
    let ruleset = Ruleset::parse(&built.to_string()).expect("a built ruleset parses");
    let budget = budget(&mut input);
    walk_every_base_chain(&ruleset, budget, &built.to_string());
}

/// A small budget (that walks meet) or the default (that they do not).
fn budget(input: &mut Input) -> usize {
    if input.flag() {
        input.below(64)
    } else {
        deevnet_runtime::nft::walk::DEFAULT_BUDGET
    }
}

/// What the fuzzed rules mean: the last statement's verdict (a jump behind a match is one some
/// packets take); a rule ending in anything else continues, or is unknown when it holds `xt`.
fn meaning(chain: &Chain, rule: &Rule) -> Step<String> {
    let _ = chain;
    let last = rule.expr.last().and_then(Value::as_object);
    let Some((kind, body)) = last.and_then(|o| o.iter().next()) else {
        return Step::Continue;
    };
    let target = || {
        body.get("target")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match kind.as_str() {
        "jump" if rule.expr.len() > 1 => Step::MayJump(target()),
        "jump" => Step::Jump(target()),
        "goto" => Step::Goto(target()),
        "return" => Step::Return,
        "accept" | "drop" => Step::Verdict(kind.clone()),
        "xt" => Step::Unknown("xt".into()),
        _ => Step::Continue,
    }
}

fn walk_every_base_chain(ruleset: &Ruleset, budget: usize, shown: &str) {
    let mut read: HashSet<*const Rule> = HashSet::new();
    let mut twice = Vec::new();
    let counting = |chain: &Chain, rule: &Rule| {
        if !read.insert(rule as *const Rule) {
            twice.push(format!("{} handle {}", chain.path(), rule.handle));
        }
        meaning(chain, rule)
    };
    let mut walker = Walker::new(ruleset, counting).with_budget(budget);
    let mut outcomes = Vec::new();
    for chain in ruleset.chains.iter().filter(|c| c.base.is_some()) {
        let outcome = walker.outcome(chain);
        if let Err(unreadable) = &outcome {
            assert!(
                !unreadable.why.is_empty(),
                "an unreadable walk without a reason\n{shown}"
            );
        }
        outcomes.push(outcome);
    }
    let (steps, rules_read) = (walker.steps(), walker.rules_read());
    drop(walker);
    // Only a fault that depends on the path (a ruleset the kernel would not load) lets a later
    // walk read a chain again.
    let path_faults = outcomes
        .iter()
        .any(|o| matches!(o, Err(u) if matches!(u.kind, Fault::TooDeep | Fault::Loop)));
    assert!(
        path_faults || twice.is_empty(),
        "rules read twice: {twice:?}\n{shown}"
    );
    assert!(
        steps <= budget,
        "{steps} steps past a budget of {budget}\n{shown}"
    );
    assert!(
        path_faults || rules_read <= ruleset.rules.len(),
        "{rules_read} rules read of {}\n{shown}",
        ruleset.rules.len()
    );
    // A fresh walker gives each base chain the same answer.
    let mut again = Walker::new(ruleset, meaning).with_budget(budget);
    for (chain, first) in ruleset
        .chains
        .iter()
        .filter(|c| c.base.is_some())
        .zip(&outcomes)
    {
        let second = again.outcome(chain);
        if let (Ok(a), Ok(b)) = (first, &second) {
            assert_eq!(a, b, "two walks disagree on {}\n{shown}", chain.path());
        }
        if first.is_ok() && budget == deevnet_runtime::nft::walk::DEFAULT_BUDGET {
            assert!(
                matches!(second, Ok(Outcome::End | Outcome::Verdict(_))),
                "a walk that ended before fails now on {}\n{shown}",
                chain.path()
            );
        }
    }
}

/// A table of up to 24 chains (the first two base chains), each with up to 6 rules that jump,
/// go, may jump, return, decide or do nothing, to chains that may be missing or loop back.
fn built(input: &mut Input) -> Value {
    let chains = 1 + input.below(24);
    let mut items = vec![json!({"table": {"family": "inet", "name": "f"}})];
    for i in 0..chains {
        let mut chain = json!({"family": "inet", "table": "f", "name": format!("c{i}")});
        if i < 2 {
            chain["type"] = json!("filter");
            chain["hook"] = json!("forward");
            chain["prio"] = json!(i);
        }
        items.push(json!({ "chain": chain }));
    }
    let mut handle = 0;
    for i in 0..chains {
        for _ in 0..input.below(7) {
            handle += 1;
            // Mostly forward (a DAG, as the kernel loads), sometimes anywhere or nowhere.
            let target = match input.below(8) {
                0 => format!("c{}", input.below(chains)),
                1 => "missing".to_string(),
                _ => format!("c{}", (i + 1 + input.below(4)).min(chains - 1)),
            };
            let expr = match input.below(8) {
                0 | 1 => json!([{"jump": {"target": target}}]),
                2 => json!([{"goto": {"target": target}}]),
                3 => {
                    json!([{"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1}}, {"jump": {"target": target}}])
                }
                4 => json!([{"return": null}]),
                5 => json!([{ *input.pick(&["accept", "drop"]): null }]),
                6 => json!([{"xt": {"name": "MARK"}}]),
                _ => json!([{"counter": null}]),
            };
            items.push(json!({"rule": {"family": "inet", "table": "f", "chain": format!("c{i}"), "handle": handle, "expr": expr}}));
        }
    }
    json!({ "nftables": items })
}
