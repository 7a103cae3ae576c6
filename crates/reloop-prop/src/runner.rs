//! Running the cases: proptest draws worlds from a seed, each is simulated and checked, and the
//! first falsified property or invariant is shrunk to a minimal counterexample.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

use proptest::test_runner::{Config as PropConfig, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde::Serialize;

use crate::invariants;
use crate::property::{Evaluator, Property, PropertyError};
use crate::{strategy, HookRunner, Setup, Simulated, Summary, World};

/// How many cases, from which seed.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Cases to draw (a falsified one stops the run).
    pub cases: u32,
    /// The seed every world is drawn from: the same seed draws the same cases.
    pub seed: u64,
}

/// A property's or an invariant's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Its name.
    pub name: String,
    /// `property` or `invariant`.
    pub kind: &'static str,
    /// The expression, for a property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
    /// Whether every case kept it.
    pub holds: bool,
}

/// What the cases exercised: how many reached each terminal reason and each kind of event.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Coverage {
    /// Cases by how they ended.
    pub terminal: BTreeMap<String, u64>,
    /// Cases that retried a request.
    pub retried: u64,
    /// Cases that recovered from an output-token cut.
    pub recovered: u64,
    /// Cases that compacted.
    pub compacted: u64,
    /// Cases a stop hook blocked at least once.
    pub stop_hook_blocked: u64,
    /// Cases whose stop hooks blocked up to the cap.
    pub hit_hook_cap: u64,
    /// Cases with a refused tool call.
    pub denied: u64,
    /// Cases that called a tool.
    pub called_tools: u64,
}

impl Coverage {
    fn add(&mut self, s: &Summary, cap: u32) {
        let end = if s.terminal_reason.is_empty() { "(none)" } else { &s.terminal_reason };
        *self.terminal.entry(end.to_string()).or_default() += 1;
        self.retried += u64::from(s.retries > 0);
        self.recovered += u64::from(s.recoveries > 0);
        self.compacted += u64::from(s.compactions > 0);
        self.stop_hook_blocked += u64::from(s.stop_hook_blocks > 0);
        self.hit_hook_cap += u64::from(s.stop_hook_blocks >= u64::from(cap) && cap > 0);
        self.denied += u64::from(s.denials > 0);
        self.called_tools += u64::from(!s.tool_calls.is_empty());
    }
}

/// A falsified property or invariant, with its shrunk counterexample.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The property's or invariant's name.
    pub name: String,
    /// `property` or `invariant`.
    pub kind: &'static str,
    /// What the minimal case did that broke it.
    pub detail: String,
    /// The minimal world.
    pub world: World,
    /// Its session's summary.
    pub summary: Summary,
}

/// What a run found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The seed the cases were drawn from.
    pub seed: u64,
    /// Cases checked before the run ended (all of them unless one failed).
    pub cases: u64,
    /// Seconds the cases took (shrinking not counted).
    pub seconds: f64,
    /// Each property's and invariant's verdict.
    pub verdicts: Vec<Verdict>,
    /// What the cases exercised.
    pub coverage: Coverage,
    /// The first falsified property or invariant, shrunk.
    pub failure: Option<Failure>,
}

impl Report {
    /// Cases per second.
    pub fn cases_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cases as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The outcome of checking one case.
enum Checked {
    Holds(Summary),
    Fails { name: String, kind: &'static str, detail: String },
}

fn check_case(
    world: &World,
    setup: &Setup,
    properties: &[Property],
    eval: &Evaluator,
    hooks: &dyn HookRunner,
) -> Result<Checked, PropertyError> {
    let trace = world.simulate_with(setup, hooks);
    let mut summary = Summary::of(&trace);
    for tool in &setup.tools {
        summary.tool_calls.entry(tool.name.clone()).or_default();
    }
    if let Err(broken) = invariants::check(&trace) {
        return Ok(Checked::Fails { name: broken.name.to_string(), kind: "invariant", detail: broken.detail });
    }
    for property in properties {
        if !eval.holds(property, &summary)? {
            let detail = format!("{} is false: {}", property.expr, describe(&summary));
            return Ok(Checked::Fails { name: property.name.clone(), kind: "property", detail });
        }
    }
    Ok(Checked::Holds(summary))
}

fn describe(s: &Summary) -> String {
    format!(
        "requests {}, turns {}, terminal_reason {}, retries {}, recoveries {}, compactions {}, stop_hook_blocks {}",
        s.requests,
        s.turns,
        if s.terminal_reason.is_empty() { "(none)" } else { &s.terminal_reason },
        s.retries,
        s.recoveries,
        s.compactions,
        s.stop_hook_blocks
    )
}

/// Draws `options.cases` worlds for `setup` and checks each against the built-in invariants
/// and `properties`; `progress` hears the number of cases done. An expression that cannot be
/// evaluated (an unknown variable) is an error, not a verdict.
pub fn run(
    setup: &Setup,
    properties: &[Property],
    options: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Report, PropertyError> {
    run_with_hooks(setup, properties, options, &Simulated, progress)
}

/// As [`run`], each hook run asked of `hooks` first (the configuration's real commands).
pub fn run_with_hooks(
    setup: &Setup,
    properties: &[Property],
    options: &RunOptions,
    hooks: &dyn HookRunner,
    progress: &mut dyn FnMut(u64),
) -> Result<Report, PropertyError> {
    let eval = Evaluator::new(setup.values());
    let config = PropConfig {
        cases: options.cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        max_global_rejects: 0,
        ..PropConfig::default()
    };
    let mut seed = [0u8; 32];
    for chunk in seed.chunks_mut(8) {
        chunk.copy_from_slice(&options.seed.to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    // The first failure names the target; shrinking then keeps to it, so the minimal case
    // breaks the same property as the first one did.
    let target: RefCell<Option<String>> = RefCell::new(None);
    let coverage = RefCell::new(Coverage::default());
    let eval_error: RefCell<Option<PropertyError>> = RefCell::new(None);
    let cases = RefCell::new(0u64);
    let progress = RefCell::new(progress);
    let started = Instant::now();
    let elapsed = RefCell::new(None);
    let result = runner.run(&strategy::world(setup), |world| {
        let checked = match check_case(&world, setup, properties, &eval, hooks) {
            Ok(checked) => checked,
            Err(e) => {
                eval_error.borrow_mut().get_or_insert(e);
                return Ok(());
            }
        };
        let mut target = target.borrow_mut();
        match (checked, target.as_ref()) {
            (Checked::Holds(summary), None) => {
                coverage.borrow_mut().add(&summary, setup.config.stop_hook_block_cap);
                *cases.borrow_mut() += 1;
                let done = *cases.borrow();
                (progress.borrow_mut())(done);
                Ok(())
            }
            (Checked::Holds(_), Some(_)) => Ok(()),
            (Checked::Fails { name, .. }, None) => {
                *cases.borrow_mut() += 1;
                elapsed.borrow_mut().get_or_insert(started.elapsed());
                *target = Some(name.clone());
                Err(TestCaseError::fail(name))
            }
            (Checked::Fails { name, .. }, Some(t)) if &name == t => Err(TestCaseError::fail(name)),
            (Checked::Fails { .. }, Some(_)) => Ok(()),
        }
    });
    if let Some(e) = eval_error.into_inner() {
        return Err(e);
    }
    let seconds = elapsed.into_inner().unwrap_or_else(|| started.elapsed()).as_secs_f64();
    let failure = match result {
        Err(TestError::Fail(_, world)) => match check_case(&world, setup, properties, &eval, hooks)? {
            Checked::Fails { name, kind, detail } => {
                let summary = Summary::of(&world.simulate_with(setup, hooks));
                Some(Failure { name, kind, detail, world, summary })
            }
            Checked::Holds(_) => None,
        },
        _ => None,
    };
    let failed = failure.as_ref().map(|f| f.name.clone());
    let mut verdicts: Vec<Verdict> = invariants::NAMES
        .iter()
        .map(|n| Verdict { name: n.to_string(), kind: "invariant", expr: None, holds: failed.as_deref() != Some(n) })
        .collect();
    verdicts.extend(properties.iter().map(|p| Verdict {
        name: p.name.clone(),
        kind: "property",
        expr: Some(p.expr.clone()),
        holds: failed.as_deref() != Some(p.name.as_str()),
    }));
    Ok(Report {
        seed: options.seed,
        cases: cases.into_inner(),
        seconds,
        verdicts,
        coverage: coverage.into_inner(),
        failure,
    })
}
