use crate::nft::walk::{DEFAULT_BUDGET, MAX_DEPTH};
use crate::nft::*;
use serde_json::{json, Value};

/// A table `ip t` of `chains` (name, rules as statement lists); the first is the forward base
/// chain.
fn table(chains: &[(&str, Vec<Value>)]) -> Ruleset {
    let mut items = vec![json!({"table": {"family": "ip", "name": "t"}})];
    for (i, (name, _)) in chains.iter().enumerate() {
        let mut chain = json!({"family": "ip", "table": "t", "name": name});
        if i == 0 {
            chain["type"] = json!("filter");
            chain["hook"] = json!("forward");
            chain["prio"] = json!(0);
        }
        items.push(json!({ "chain": chain }));
    }
    let mut handle = 1;
    for (name, rules) in chains {
        for expr in rules {
            handle += 1;
            items.push(json!({"rule": {"family": "ip", "table": "t", "chain": name, "handle": handle, "expr": expr}}));
        }
    }
    Ruleset::parse(&json!({ "nftables": items }).to_string()).unwrap()
}

fn jump(target: &str) -> Value {
    json!([{"jump": {"target": target}}])
}

fn goto(target: &str) -> Value {
    json!([{"goto": {"target": target}}])
}

/// A jump behind a match: some packets take it.
fn may_jump(target: &str) -> Value {
    json!([{"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 1}}, {"jump": {"target": target}}])
}

fn verdict(name: &str) -> Value {
    json!([{ name: null }])
}

/// The test's meaning: verdict statements as they read, a jump behind a match as
/// [`Step::MayJump`], `counter` as nothing, anything else unknown; `seen` counts the calls.
fn meaning(seen: &mut usize) -> impl FnMut(&Chain, &Rule) -> Step<String> + '_ {
    move |_chain, rule| {
        *seen += 1;
        let last = rule.expr.last().and_then(Value::as_object);
        let Some((kind, body)) = last.and_then(|o| o.iter().next()) else {
            return Step::Unknown("an empty rule".into());
        };
        let target = body["target"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "jump" if rule.expr.len() > 1 => Step::MayJump(target),
            "jump" => Step::Jump(target),
            "goto" => Step::Goto(target),
            "return" => Step::Return,
            "counter" => Step::Continue,
            "accept" | "drop" => Step::Verdict(kind.clone()),
            other => Step::Unknown(format!("{other} is not read")),
        }
    }
}

fn base(ruleset: &Ruleset) -> &Chain {
    ruleset.base_chains("forward").next().unwrap().0
}

fn walk(ruleset: &Ruleset) -> Result<Outcome<String>, Unreadable> {
    let mut seen = 0;
    let outcome = Walker::new(ruleset, meaning(&mut seen)).outcome(base(ruleset));
    outcome
}

#[test]
fn jumps_gotos_and_returns_end_as_the_kernel_runs_them() {
    let decided = |v: &str| Ok(Outcome::Verdict(v.to_string()));
    // A jump's chain that ends hands back; its verdict is the walk's.
    let ruleset = table(&[
        ("fwd", vec![jump("a"), verdict("drop")]),
        ("a", vec![verdict("counter")]),
    ]);
    assert_eq!(walk(&ruleset), decided("drop"));
    let ruleset = table(&[
        ("fwd", vec![jump("a"), verdict("drop")]),
        ("a", vec![verdict("accept")]),
    ]);
    assert_eq!(walk(&ruleset), decided("accept"));
    // A return leaves the rest of its chain unread.
    let ruleset = table(&[
        ("fwd", vec![jump("a"), verdict("drop")]),
        ("a", vec![verdict("return"), verdict("accept")]),
    ]);
    assert_eq!(walk(&ruleset), decided("drop"));
    // A goto does not come back: the chain it went to ending ends the base chain.
    let ruleset = table(&[
        ("fwd", vec![goto("a"), verdict("drop")]),
        ("a", vec![verdict("counter")]),
    ]);
    assert_eq!(walk(&ruleset), Ok(Outcome::End));
    // A jump some packets take is walked, and its verdict does not end the walk.
    let ruleset = table(&[
        ("fwd", vec![may_jump("a"), verdict("drop")]),
        ("a", vec![verdict("accept")]),
    ]);
    let mut seen = 0;
    let mut walker = Walker::new(&ruleset, meaning(&mut seen));
    assert_eq!(walker.outcome(base(&ruleset)), decided("drop"));
    assert_eq!(walker.rules_read(), 3, "the chain it may jump to is read");
    // The base chain's end is the policy's to decide.
    let ruleset = table(&[("fwd", vec![verdict("counter")])]);
    assert_eq!(walk(&ruleset), Ok(Outcome::End));
}

/// TR8: each chain is read once however many jumps reach it: 14 levels of two chains, each
/// jumping to both chains of the next level (2^14 paths to the bottom, where a walk that
/// re-reads shared chains reads 2^15 rules), read in exactly as many rule readings as the
/// ruleset has rules.
#[test]
fn a_diamond_of_jumps_is_read_once_per_rule() {
    const LEVELS: usize = 14;
    let name = |level: usize, side: usize| format!("l{level}{}", ["a", "b"][side]);
    let mut chains: Vec<(String, Vec<Value>)> = vec![(
        "fwd".into(),
        vec![jump(&name(0, 0)), jump(&name(0, 1)), verdict("accept")],
    )];
    for level in 0..LEVELS {
        for side in 0..2 {
            let rules = if level + 1 < LEVELS {
                vec![jump(&name(level + 1, 0)), jump(&name(level + 1, 1))]
            } else {
                vec![verdict("counter")]
            };
            chains.push((name(level, side), rules));
        }
    }
    let borrowed: Vec<(&str, Vec<Value>)> = chains
        .iter()
        .map(|(n, r)| (n.as_str(), r.clone()))
        .collect();
    let ruleset = table(&borrowed);
    let mut seen = 0;
    let mut walker = Walker::new(&ruleset, meaning(&mut seen));
    let outcome = walker.outcome(base(&ruleset));
    let read = walker.rules_read();
    drop(walker);
    assert_eq!(outcome, Ok(Outcome::Verdict("accept".into())));
    assert_eq!(read, ruleset.rules.len());
    assert_eq!(seen, ruleset.rules.len());
}

/// More steps than the budget make the walk unreadable, naming where it stopped; the same walk
/// within its budget ends.
#[test]
fn a_walk_past_its_budget_is_unreadable() {
    let ruleset = table(&[
        (
            "fwd",
            vec![jump("a"), jump("a"), jump("a"), verdict("drop")],
        ),
        ("a", vec![verdict("counter"), verdict("counter")]),
    ]);
    let mut seen = 0;
    let err = Walker::new(&ruleset, meaning(&mut seen))
        .with_budget(4)
        .outcome(base(&ruleset))
        .unwrap_err();
    assert_eq!((err.chain.as_str(), err.kind), ("ip t a", Fault::Budget));
    assert_eq!(
        err.to_string(),
        "chain ip t a: the walk took more than its budget of 4 steps here"
    );
    let mut seen = 0;
    let mut walker = Walker::new(&ruleset, meaning(&mut seen)).with_budget(12);
    assert_eq!(
        walker.outcome(base(&ruleset)),
        Ok(Outcome::Verdict("drop".into()))
    );
    assert!(walker.steps() <= 12 && walker.steps() < DEFAULT_BUDGET);
}

#[test]
fn a_jump_to_a_missing_chain_a_loop_and_an_unknown_rule_are_unreadable() {
    let ruleset = table(&[
        ("fwd", vec![verdict("counter"), jump("a")]),
        ("a", vec![jump("nowhere")]),
    ]);
    assert_eq!(
        walk(&ruleset).unwrap_err().to_string(),
        "chain ip t a: rule handle 4 jumps to chain nowhere, which does not exist"
    );
    let ruleset = table(&[
        ("fwd", vec![jump("a")]),
        ("a", vec![goto("b")]),
        ("b", vec![may_jump("a")]),
    ]);
    assert_eq!(
        walk(&ruleset).unwrap_err().to_string(),
        "chain ip t a: a jump leads back into it while it is walked (a loop)"
    );
    let ruleset = table(&[("fwd", vec![json!([{"xt": {"name": "MARK"}}])])]);
    assert_eq!(
        walk(&ruleset).unwrap_err().to_string(),
        "chain ip t fwd: rule handle 2: xt is not read"
    );
    // A fault of a shared chain is remembered with it: a second base chain meets it unread.
    let mut shared = table(&[
        ("fwd", vec![jump("bad")]),
        (
            "bad",
            vec![verdict("counter"), json!([{"xt": {"name": "MARK"}}])],
        ),
    ]);
    let mut second = shared.chains[0].clone();
    second.name = "fwd2".into();
    shared.chains.push(second);
    let mut rule = shared.rules[0].clone();
    rule.chain = "fwd2".into();
    shared.rules.push(rule);
    let mut seen = 0;
    let mut walker = Walker::new(&shared, meaning(&mut seen));
    for chain in ["fwd", "fwd2"] {
        let chain = shared.chains.iter().find(|c| c.name == chain).unwrap();
        let err = walker.outcome(chain).unwrap_err();
        assert_eq!(
            (err.chain.as_str(), err.kind),
            ("ip t bad", Fault::UnknownRule)
        );
    }
    assert_eq!(walker.rules_read(), 4);
    // A chain of another ruleset is not walked.
    let other = table(&[("elsewhere", vec![])]);
    let mut seen = 0;
    let err = Walker::new(&ruleset, meaning(&mut seen))
        .outcome(base(&other))
        .unwrap_err();
    assert_eq!(err.why, "the chain is not in the ruleset");
    assert_eq!(err.kind, Fault::NotInRuleset);
}

/// `depth` chains below the base chain, each jumping (or going) to the next.
fn ladder(depth: usize, step: fn(&str) -> Value) -> Ruleset {
    let names: Vec<String> = (0..=depth).map(|i| format!("c{i}")).collect();
    let chains: Vec<(&str, Vec<Value>)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let rules = match names.get(i + 1) {
                Some(next) => vec![step(next)],
                None => vec![verdict("accept")],
            };
            (name.as_str(), rules)
        })
        .collect();
    table(&chains)
}

/// The kernel loads a chain 15 jumps (or gotos) below its base chain and refuses one 16 down
/// ("Too many links", checked with nft 1.0.6): the walker follows the first and calls the
/// second unreadable, also when a chain first met shallow is met again deeper.
#[test]
fn a_chain_deeper_than_the_kernels_16_levels_is_unreadable() {
    for step in [jump as fn(&str) -> Value, goto] {
        assert_eq!(
            walk(&ladder(MAX_DEPTH - 1, step)),
            Ok(Outcome::Verdict("accept".into()))
        );
        let err = walk(&ladder(MAX_DEPTH, step)).unwrap_err();
        assert_eq!((err.chain.as_str(), err.kind), ("ip t c16", Fault::TooDeep));
        assert!(
            err.why.contains("deeper than the kernel's 16 levels"),
            "{err}"
        );
    }
    // `deep` is 5 levels tall: met first 1 level down, then 12 down (12 + 5 > 15).
    let mut chains: Vec<(String, Vec<Value>)> =
        vec![("fwd".into(), vec![may_jump("deep"), jump("s1")])];
    for i in 1..12 {
        chains.push((format!("s{i}"), vec![jump(&format!("s{}", i + 1))]));
    }
    chains.push(("s12".into(), vec![jump("deep")]));
    chains.push(("deep".into(), vec![jump("d1")]));
    for i in 1..5 {
        chains.push((format!("d{i}"), vec![jump(&format!("d{}", i + 1))]));
    }
    chains.push(("d5".into(), vec![verdict("accept")]));
    let borrowed: Vec<(&str, Vec<Value>)> = chains
        .iter()
        .map(|(n, r)| (n.as_str(), r.clone()))
        .collect();
    let err = walk(&table(&borrowed)).unwrap_err();
    assert_eq!(err.chain, "ip t deep");
    assert!(err.why.contains("past the kernel's 16"), "{err}");
}

/// A fold's summary: the places of the rules a chain reads (its own and its callees'), and the
/// faults it kept.
#[derive(Default)]
struct Places;

impl Fold for Places {
    type Summary = (Vec<usize>, Vec<Fault>);
    type Pass = (Vec<usize>, Vec<Fault>);

    fn begin(&mut self, _: &Chain) -> Self::Pass {
        (Vec::new(), Vec::new())
    }

    fn rule(
        &mut self,
        pass: &mut Self::Pass,
        _: &Chain,
        rule: &Rule,
        place: usize,
    ) -> Result<Next, String> {
        pass.0.push(place);
        let target = rule.expr[0]["jump"]["target"].as_str();
        Ok(target.map_or(Next::On, |t| Next::Enter(t.to_string())))
    }

    fn entered(&mut self, pass: &mut Self::Pass, callee: &Self::Summary) -> bool {
        pass.0.extend(&callee.0);
        pass.1.extend(&callee.1);
        true
    }

    fn fault(&mut self, pass: &mut Self::Pass, fault: Unreadable) -> Result<(), Unreadable> {
        pass.1.push(fault.kind);
        Ok(())
    }

    fn finish(&mut self, pass: Self::Pass) -> Self::Summary {
        pass
    }
}

/// A fold reads each chain once into its summary, hands each caller its callees' summaries, and
/// may keep a fault and go on; past the budget the walk ends whatever the fold says.
#[test]
fn a_fold_builds_each_chain_once_and_may_keep_its_faults() {
    let ruleset = table(&[
        (
            "fwd",
            vec![jump("a"), jump("nowhere"), jump("a"), verdict("drop")],
        ),
        ("a", vec![verdict("counter")]),
    ]);
    let mut folder = Folder::new(&ruleset, Places);
    let (places, faults) = folder.summary(base(&ruleset)).unwrap();
    assert_eq!(places, [0, 4, 1, 2, 4, 3]);
    assert_eq!(faults, [Fault::MissingChain]);
    assert_eq!(folder.rules_read(), ruleset.rules.len());
    let err = Folder::new(&ruleset, Places)
        .with_budget(3)
        .summary(base(&ruleset))
        .unwrap_err();
    assert_eq!(err.kind, Fault::Budget);
}
