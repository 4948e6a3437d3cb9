//! One walker of jumps and gotos for every reader of a ruleset: it follows a chain's rules in
//! the kernel's order into the chains they jump or go to, and computes what each chain does
//! once (memoized per chain), so a walk reads each rule at most once however many jumps share a
//! chain. Two ways to ask:
//!
//! - [`Walker`], with a [`Meaning`]: what a rule does for the packet (or packets) in question,
//!   as a [`Step`]; each chain ends in an [`Outcome`] (a verdict, or its end).
//! - [`Folder`], with a [`Fold`]: each chain read into a summary of the fold's own (what it
//!   decides for which packets, say), and a caller's summary built from its callees'. A chain's
//!   summary holds whatever came before it; what a caller had decided before the jump is the
//!   caller's to apply when it takes the callee's summary ([`Fold::entered`]), so a chain
//!   reached from two callers is judged by what each decided, and still read once.
//!
//! [`Walker`] is a [`Fold`] whose summary is the [`Outcome`]: both are this one traversal.
//!
//! A ruleset the walker cannot follow is [`Unreadable`], naming the chain and the [`Fault`]: a
//! jump to a chain that does not exist, a chain 16 jumps (or gotos) below its base chain (the
//! kernel refuses to load one: its jump stack holds 16), a jump back into a chain being walked
//! (the kernel refuses loops), a rule the meaning cannot read, or more steps than the budget.
//! A fault any path meets is remembered with the chain, like an outcome; one that depends on
//! the path (depth, loops) is not, so a later walk may read that chain again: only in a
//! ruleset the kernel would not load, and never past the budget. A [`Fold`] may instead keep a
//! fault in the caller's summary and go on ([`Fold::fault`]); past the budget every walk ends.

use super::ruleset::{Chain, Index, Rule, Ruleset};
use std::collections::HashMap;
use std::fmt;

/// How many levels of jumps the kernel follows below a base chain (`NFT_JUMP_STACK_SIZE`): a
/// chain 16 jumps down cannot be loaded.
pub const MAX_DEPTH: usize = 16;
/// The default step budget: far above any ruleset nft prints within its 16 MiB cap (a step is
/// one rule read or one jump followed), so that only a walk gone wrong meets it.
pub const DEFAULT_BUDGET: usize = 2_000_000;

/// What one rule does, as the caller's [`Meaning`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<V> {
    /// No verdict for this walk: the next rule decides.
    Continue,
    /// The walk ends here with this verdict (accept, drop, a NAT decision...).
    Verdict(V),
    /// Into the chain; when it ends or returns, the next rule decides.
    Jump(String),
    /// Into the chain, for good: when it ends or returns, so does this chain.
    Goto(String),
    /// A jump some packets of the walk take and others do not: the chain is walked (its
    /// rules read, its faults reported), and the next rule decides whatever it decided.
    MayJump(String),
    /// Back to the chain that jumped here (the base chain's policy at the top).
    Return,
    /// A rule the meaning cannot read: the walk fails, naming it.
    Unknown(String),
}

/// How a chain ends for the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<V> {
    /// A rule decided (in the chain or in one it jumped or went to).
    Verdict(V),
    /// The chain ran out of rules or returned: its caller goes on (for a base chain, its
    /// policy applies).
    End,
}

/// What a walk cannot follow, and in which chain (`family table chain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub chain: String,
    pub why: String,
    pub kind: Fault,
}

/// Why a walk is unreadable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A jump or goto to a chain the table does not have.
    MissingChain,
    /// A chain 16 or more levels below its base chain.
    TooDeep,
    /// A jump back into a chain being walked.
    Loop,
    /// A rule the meaning cannot read ([`Step::Unknown`]).
    UnknownRule,
    /// More steps than the budget.
    Budget,
    /// The chain asked about is not one of the ruleset's.
    NotInRuleset,
}

impl Fault {
    /// Whether the fault belongs to the chain whatever path reaches it (so it is remembered
    /// with the chain); depth and loops depend on the path.
    fn lasting(self) -> bool {
        !matches!(self, Fault::TooDeep | Fault::Loop)
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chain {}: {}", self.chain, self.why)
    }
}

impl std::error::Error for Unreadable {}

/// What a rule leads to, as a [`Fold`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The next rule.
    On,
    /// No packet of the walk gets past the rule: the chain ends here.
    Stop,
    /// Into the chain (a jump or a goto): the fold takes its summary in [`Fold::entered`].
    Enter(String),
}

/// A reading of chains into summaries. The folder reads a chain's rules in order into a pass
/// ([`Fold::begin`], [`Fold::rule`]), hands it the summary of each chain a rule enters
/// ([`Fold::entered`]) or the fault that stopped it there ([`Fold::fault`]), and keeps what
/// [`Fold::finish`] makes of the pass as the chain's summary, for every later jump to it.
pub trait Fold {
    /// What a chain does, whatever came before it.
    type Summary: Clone;
    /// The state while one chain's rules are read.
    type Pass;
    fn begin(&mut self, chain: &Chain) -> Self::Pass;
    /// Rule `rule` (at `place` in the ruleset's rules) of `chain`; an error is a rule the fold
    /// cannot read, and ends the walk ([`Fault::UnknownRule`]).
    fn rule(
        &mut self,
        pass: &mut Self::Pass,
        chain: &Chain,
        rule: &Rule,
        place: usize,
    ) -> Result<Next, String>;
    /// The summary of the chain the last rule entered; whether the chain goes on past it.
    fn entered(&mut self, pass: &mut Self::Pass, callee: &Self::Summary) -> bool;
    /// The fault that stopped the last rule's jump (a missing chain, one too deep, a loop, or
    /// a fault below it): an error ends the walk with it; `Ok` goes on to the next rule, the
    /// fault kept in the pass. A walk past its budget ends whatever the fold says.
    fn fault(&mut self, pass: &mut Self::Pass, fault: Unreadable) -> Result<(), Unreadable>;
    fn finish(&mut self, pass: Self::Pass) -> Self::Summary;
}

/// What a rule does for the walk. The walker asks once per rule (whichever jumps reach its
/// chain), so the step must not depend on the path that led to the chain; state kept across
/// calls (findings, say) sees each rule once.
pub trait Meaning {
    type Verdict: Clone;
    fn step(&mut self, chain: &Chain, rule: &Rule) -> Step<Self::Verdict>;
}

impl<V: Clone, F: FnMut(&Chain, &Rule) -> Step<V>> Meaning for F {
    type Verdict = V;
    fn step(&mut self, chain: &Chain, rule: &Rule) -> Step<V> {
        self(chain, rule)
    }
}

enum Memo<S> {
    /// On the walk's stack: reaching it again is a loop.
    Walking,
    /// Its summary, and how many levels of jumps lie below it.
    Done { summary: S, height: usize },
    /// A fault of its own or of a chain below it that any path meets.
    Failed(Unreadable),
}

/// A walk over one ruleset with one [`Fold`]; chains already read are not read again.
pub struct Folder<'a, F: Fold> {
    ruleset: &'a Ruleset,
    index: Index<'a>,
    fold: F,
    memo: HashMap<usize, Memo<F::Summary>>,
    budget: usize,
    steps: usize,
    rules_read: usize,
}

type Walked<S> = Result<(S, usize), Unreadable>;

impl<'a, F: Fold> Folder<'a, F> {
    pub fn new(ruleset: &'a Ruleset, fold: F) -> Self {
        Folder {
            ruleset,
            index: ruleset.index(),
            fold,
            memo: HashMap::new(),
            budget: DEFAULT_BUDGET,
            steps: 0,
            rules_read: 0,
        }
    }

    /// At most `budget` steps (rules read and chains entered) over the folder's life.
    #[must_use]
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget;
        self
    }

    /// The summary of `chain` (a chain of the ruleset, usually a base chain), read from its
    /// top.
    pub fn summary(&mut self, chain: &Chain) -> Result<F::Summary, Unreadable> {
        let Some(&at) = self.index.chains.get(&(&chain.owner, chain.name.as_str())) else {
            return Err(Unreadable {
                chain: chain.path(),
                why: "the chain is not in the ruleset".into(),
                kind: Fault::NotInRuleset,
            });
        };
        self.walk(at, 0).map(|(summary, _)| summary)
    }

    /// How many rules the folder has read (each at most once).
    pub fn rules_read(&self) -> usize {
        self.rules_read
    }

    /// How many steps the folder has taken.
    pub fn steps(&self) -> usize {
        self.steps
    }

    pub fn fold(&self) -> &F {
        &self.fold
    }

    pub fn into_fold(self) -> F {
        self.fold
    }

    fn chain_at(&self, at: usize) -> &'a Chain {
        &self.ruleset.chains[at]
    }

    fn unreadable(&self, at: usize, kind: Fault, why: String) -> Unreadable {
        Unreadable {
            chain: self.chain_at(at).path(),
            why,
            kind,
        }
    }

    fn take_step(&mut self, at: usize) -> Result<(), Unreadable> {
        if self.steps >= self.budget {
            let why = format!(
                "the walk took more than its budget of {} steps here",
                self.budget
            );
            return Err(self.unreadable(at, Fault::Budget, why));
        }
        self.steps += 1;
        Ok(())
    }

    /// The summary of the chain at `at`, `level` jumps below the base chain, and its height.
    fn walk(&mut self, at: usize, level: usize) -> Walked<F::Summary> {
        self.take_step(at)?;
        if level >= MAX_DEPTH {
            let why = format!("it lies {level} jumps below its base chain, deeper than the kernel's {MAX_DEPTH} levels");
            return Err(self.unreadable(at, Fault::TooDeep, why));
        }
        match self.memo.get(&at) {
            Some(Memo::Done { summary, height }) if level + height < MAX_DEPTH => {
                return Ok((summary.clone(), *height));
            }
            Some(Memo::Done { height, .. }) => {
                let why = format!("reached {level} jumps below its base chain, its jumps go {height} levels deeper, past the kernel's {MAX_DEPTH}");
                return Err(self.unreadable(at, Fault::TooDeep, why));
            }
            Some(Memo::Walking) => {
                let why = "a jump leads back into it while it is walked (a loop)".to_string();
                return Err(self.unreadable(at, Fault::Loop, why));
            }
            Some(Memo::Failed(fault)) => return Err(fault.clone()),
            None => {}
        }
        self.memo.insert(at, Memo::Walking);
        let walked = self.walk_rules(at, level);
        match &walked {
            Ok((summary, height)) => {
                let done = Memo::Done {
                    summary: summary.clone(),
                    height: *height,
                };
                self.memo.insert(at, done);
            }
            Err(fault) if fault.kind.lasting() => {
                self.memo.insert(at, Memo::Failed(fault.clone()));
            }
            Err(_) => {
                self.memo.remove(&at);
            }
        }
        walked
    }

    fn walk_rules(&mut self, at: usize, level: usize) -> Walked<F::Summary> {
        let ruleset = self.ruleset;
        let chain = self.chain_at(at);
        let places: Vec<usize> = self
            .index
            .rules
            .get(&(&chain.owner, chain.name.as_str()))
            .cloned()
            .unwrap_or_default();
        let mut pass = self.fold.begin(chain);
        let mut height = 0;
        for place in places {
            self.take_step(at)?;
            self.rules_read += 1;
            let rule = &ruleset.rules[place];
            let name = match self.fold.rule(&mut pass, chain, rule, place) {
                Ok(Next::On) => continue,
                Ok(Next::Stop) => break,
                Ok(Next::Enter(name)) => name,
                Err(why) => {
                    let why = format!("rule handle {}: {why}", rule.handle);
                    return Err(self.unreadable(at, Fault::UnknownRule, why));
                }
            };
            let entered =
                (self.target(at, rule, &name)).and_then(|next| self.walk(next, level + 1));
            match entered {
                Ok((summary, below)) => {
                    height = height.max(below + 1);
                    if !self.fold.entered(&mut pass, &summary) {
                        break;
                    }
                }
                Err(fault) if fault.kind == Fault::Budget => return Err(fault),
                Err(fault) => self.fold.fault(&mut pass, fault)?,
            }
        }
        Ok((self.fold.finish(pass), height))
    }

    /// The chain a rule of the chain at `at` jumps or goes to: one of the same table.
    fn target(&self, at: usize, rule: &Rule, name: &str) -> Result<usize, Unreadable> {
        let owner = &self.chain_at(at).owner;
        self.index
            .chains
            .get(&(owner, name))
            .copied()
            .ok_or_else(|| {
                self.unreadable(
                    at,
                    Fault::MissingChain,
                    format!(
                        "rule handle {} jumps to chain {name}, which does not exist",
                        rule.handle
                    ),
                )
            })
    }
}

/// How a step enters another chain.
#[derive(Clone, Copy)]
enum Entry {
    Jump,
    Goto,
    MayJump,
}

/// A [`Meaning`] as a [`Fold`]: a chain's summary is its [`Outcome`].
struct ByStep<M: Meaning>(M);

struct StepPass<V> {
    ended: Option<Outcome<V>>,
    entry: Entry,
}

impl<M: Meaning> Fold for ByStep<M> {
    type Summary = Outcome<M::Verdict>;
    type Pass = StepPass<M::Verdict>;

    fn begin(&mut self, _: &Chain) -> Self::Pass {
        StepPass {
            ended: None,
            entry: Entry::Jump,
        }
    }

    fn rule(
        &mut self,
        pass: &mut Self::Pass,
        chain: &Chain,
        rule: &Rule,
        _: usize,
    ) -> Result<Next, String> {
        let (name, entry) = match self.0.step(chain, rule) {
            Step::Continue => return Ok(Next::On),
            Step::Verdict(verdict) => {
                pass.ended = Some(Outcome::Verdict(verdict));
                return Ok(Next::Stop);
            }
            Step::Return => {
                pass.ended = Some(Outcome::End);
                return Ok(Next::Stop);
            }
            Step::Unknown(why) => return Err(why),
            Step::Jump(target) => (target, Entry::Jump),
            Step::Goto(target) => (target, Entry::Goto),
            Step::MayJump(target) => (target, Entry::MayJump),
        };
        pass.entry = entry;
        Ok(Next::Enter(name))
    }

    fn entered(&mut self, pass: &mut Self::Pass, callee: &Self::Summary) -> bool {
        match (pass.entry, callee) {
            (Entry::MayJump, _) | (Entry::Jump, Outcome::End) => true,
            (Entry::Jump | Entry::Goto, outcome) => {
                pass.ended = Some(outcome.clone());
                false
            }
        }
    }

    fn fault(&mut self, _: &mut Self::Pass, fault: Unreadable) -> Result<(), Unreadable> {
        Err(fault)
    }

    fn finish(&mut self, pass: Self::Pass) -> Self::Summary {
        pass.ended.unwrap_or(Outcome::End)
    }
}

/// A walk over one ruleset with one meaning; chains already walked are not walked again.
pub struct Walker<'a, M: Meaning> {
    folder: Folder<'a, ByStep<M>>,
}

impl<'a, M: Meaning> Walker<'a, M> {
    pub fn new(ruleset: &'a Ruleset, meaning: M) -> Self {
        Walker {
            folder: Folder::new(ruleset, ByStep(meaning)),
        }
    }

    /// At most `budget` steps (rules read and jumps followed) over the walker's life.
    #[must_use]
    pub fn with_budget(self, budget: usize) -> Self {
        Walker {
            folder: self.folder.with_budget(budget),
        }
    }

    /// How `chain` (a chain of the ruleset, usually a base chain) ends, walked from its top.
    pub fn outcome(&mut self, chain: &Chain) -> Result<Outcome<M::Verdict>, Unreadable> {
        self.folder.summary(chain)
    }

    /// How many rules the walker has read (each at most once).
    pub fn rules_read(&self) -> usize {
        self.folder.rules_read()
    }

    /// How many steps the walker has taken.
    pub fn steps(&self) -> usize {
        self.folder.steps()
    }

    pub fn meaning(&self) -> &M {
        &self.folder.fold().0
    }

    pub fn into_meaning(self) -> M {
        self.folder.into_fold().0
    }
}
