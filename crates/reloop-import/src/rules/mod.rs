//! Does the profile's engine explain what Claude Code did? The import's inputs (the model's
//! answers, the tools' results, the hooks' outcomes) are fed to the engine under the
//! transcript's profile, and every decision it takes is held against what the transcript shows
//! Claude Code decided ([`crate::Imported::observed`]), both ways: each observed decision must be
//! the engine's own at that step, and each decision of the engine must be one the transcript
//! shows (or is silent about, which is said). The import bends its events so the core can follow
//! a transcript; none of that bending can pass here unnoticed: a fact the import left out because
//! the engine had stopped ([`crate::Imported::skips`]) is a disagreement, and a block, stop or
//! compaction the engine took only because the import supplied it is unclaimed by any
//! observation and so a disagreement too. What the transcript does not hold is listed as
//! inferred, never counted as agreement silently.

use reloop_core::{Command, Completion, Config, Continue, Effect, Event, Fold, Reason, Stop};
use serde::Serialize;
use serde_json::Value;

use crate::observed::{Decision, Interrupted, Observation};
use crate::{ImportError, ImportOptions, Imported};

mod compaction;
mod inputs;

/// The answer a tool gives a call before running it: `None` for a tool the checker does not
/// have, `Some(Err(text))` when the input breaks the tool's schema (`reloop-tools`' registry).
pub type InputCheck<'a> = &'a dyn Fn(&str, &Value) -> Option<Result<(), String>>;

/// The verdict on one transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RulesReport {
    /// The file, as named to [`check_rules`].
    pub file: String,
    /// The transcript's Claude Code version.
    pub version: Option<String>,
    /// The profile whose rules were checked.
    pub profile: String,
    /// Whether the profile is the transcript's own version rather than the nearest known.
    pub profile_exact: Option<bool>,
    /// The engine's steps.
    pub steps: usize,
    /// Decisions held against the transcript (Claude Code's and the engine's, each counted once
    /// when they meet).
    pub decisions: usize,
    /// Tool inputs checked against the tools' schemas.
    pub inputs_checked: usize,
    /// Steps that rest on what the transcript does not hold, and what was taken for it.
    pub inferred: Vec<InferredStep>,
    /// The first disagreement, in the order of the transcript.
    pub disagreement: Option<Disagreement>,
}

/// A step whose input or decision the transcript does not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InferredStep {
    /// The engine's step.
    pub seq: u64,
    /// What was taken for it.
    pub what: String,
}

/// Where Claude Code and the engine part.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Disagreement {
    /// A stable code (`docs/cli.md` lists them).
    pub code: &'static str,
    /// The transcript's line that shows Claude Code's side, when one does.
    pub line: Option<usize>,
    /// The engine's step.
    pub seq: u64,
    /// What Claude Code did.
    pub claude_code: String,
    /// What the engine decides for the same inputs.
    pub engine: String,
    /// The profile rule or setting that made the engine decide so.
    pub rule: String,
}

/// What the engine did with one event.
#[derive(Debug, Clone)]
struct EngineStep {
    event_kind: &'static str,
    reason: Option<Reason>,
    /// The retry the step planned.
    retry: Option<u32>,
    /// The model the step switched to (the fallback model).
    switched_to: Option<String>,
    phase: &'static str,
}

/// Reads a transcript and checks it against its profile's rules.
pub fn check_rules(text: &str, origin: &str, inputs: InputCheck<'_>) -> Result<RulesReport, ImportError> {
    let imported = crate::parse_claude_code(text, origin, &ImportOptions::default())?;
    Ok(check_imported(&imported, origin, inputs))
}

/// [`check_rules`] on a transcript already parsed.
pub fn check_imported(imported: &Imported, origin: &str, inputs: InputCheck<'_>) -> RulesReport {
    let config = &imported.core_config;
    let trace = run_engine(config, &imported.events);
    let mut checker = Checker {
        imported,
        config,
        trace: &trace,
        claimed: vec![false; trace.len()],
        found: Vec::new(),
        decisions: 0,
        inferred: Vec::new(),
    };
    checker.refused_events();
    checker.feedback_as_prompt();
    checker.observations();
    checker.skips();
    checker.unclaimed();
    checker.compaction_points();
    let inputs_checked = checker.tool_inputs(inputs);
    let run_config = &imported.header_run_config;
    for entry in run_config["inferred"].as_array().into_iter().flatten() {
        if let (Some(seq), Some(what)) = (entry["seq"].as_u64(), entry["what"].as_str()) {
            checker.inferred.push(InferredStep { seq, what: what.to_string() });
        }
    }
    // Settings the transcript does not hold, as the import took them (step 0: the whole run).
    for entry in run_config["inferred_config"].as_array().into_iter().flatten() {
        if let Some(what) = entry["what"].as_str() {
            checker.inferred.push(InferredStep { seq: 0, what: format!("setting: {what}") });
        }
    }
    // A version that writes no retry lines (2.1.197): the import allows none, so the retries
    // Claude Code made before giving up are not checked, and the check says so.
    let retried = imported.observed.iter().any(|o| matches!(o.decision, Decision::Retried { .. }));
    if config.max_retries == 0 && !retried {
        for o in &imported.observed {
            if let (Decision::ModelError { .. }, Some(seq)) = (&o.decision, o.seq) {
                checker.inferred.push(InferredStep {
                    seq,
                    what: "the transcript writes no retries before this error: whether Claude Code retried it as the profile would is not checked".to_string(),
                });
            }
        }
    }
    checker.inferred.sort_by_key(|i| i.seq);
    checker.inferred.dedup();
    let disagreement = checker.found.into_iter().min_by_key(|d| (d.seq, d.line.unwrap_or(usize::MAX)));
    RulesReport {
        file: origin.to_string(),
        version: run_config["version"].as_str().map(str::to_string),
        profile: config.profile.name().to_string(),
        profile_exact: run_config["profile_exact"].as_bool(),
        steps: imported.events.len(),
        decisions: checker.decisions,
        inputs_checked,
        inferred: checker.inferred,
        disagreement,
    }
}

/// Folds the events through the core, keeping each step's decision.
fn run_engine(config: &Config, events: &[Event]) -> Vec<EngineStep> {
    let mut fold = Fold::new(config);
    let mut trace = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let seen = fold.push(i as u64 + 1, event.clone(), |step| {
            let retry = step.effects.iter().find_map(|e| match e {
                Effect::Command(Command::WaitRetry(w)) => Some(w.attempt),
                _ => None,
            });
            let switched = step.effects.iter().find_map(|e| match e {
                Effect::Notice(reloop_core::Notice::SwitchModel { to, .. }) => Some(to.clone()),
                _ => None,
            });
            let reason = if step.ignored.is_some() { None } else { step.reason.clone() };
            (reason, retry, switched, step.ignored.is_some())
        });
        let (reason, retry, switched_to, ignored) = seen.unwrap_or((None, None, None, true));
        let phase = if ignored { "ignored" } else { fold.state().map_or("done", reloop_core::State::phase) };
        trace.push(EngineStep { event_kind: event.kind(), reason, retry, switched_to, phase });
    }
    trace
}

struct Checker<'a> {
    imported: &'a Imported,
    config: &'a Config,
    trace: &'a [EngineStep],
    /// The engine's decisions an observation accounts for, by step index.
    claimed: Vec<bool>,
    found: Vec<Disagreement>,
    decisions: usize,
    inferred: Vec<InferredStep>,
}

impl Checker<'_> {
    fn disagree(
        &mut self,
        code: &'static str,
        line: Option<usize>,
        seq: u64,
        cc: String,
        engine: String,
        rule: String,
    ) {
        self.found.push(Disagreement { code, line, seq, claude_code: cc, engine, rule });
    }

    /// The engine's decision at step `seq` (1-based), in words.
    fn engine_at(&self, seq: u64) -> String {
        match seq.checked_sub(1).and_then(|i| self.trace.get(i as usize)) {
            Some(EngineStep { reason: Some(r), event_kind, .. }) => {
                format!("{}: {} (step {seq}, {event_kind})", r.name(), r.explain())
            }
            Some(step) => format!("no decision at step {seq} ({}; phase {})", step.event_kind, step.phase),
            None => "no step".to_string(),
        }
    }

    /// The first step at or after `seq` that decided something, before the next prompt.
    fn decision_from(&self, seq: u64) -> Option<u64> {
        let start = seq.saturating_sub(1) as usize;
        for (i, step) in self.trace.iter().enumerate().skip(start) {
            if i > start && step.event_kind == "user_input" {
                return None;
            }
            if step.reason.is_some() {
                return Some(i as u64 + 1);
            }
        }
        None
    }

    /// The latest step at or before `seq` that decided something, within the query: the decision
    /// that led to a request, which the transcript shows only when the request's answer comes
    /// (after a compaction, say).
    fn decision_before(&self, seq: u64) -> Option<u64> {
        let mut s = seq.min(self.trace.len() as u64);
        while s >= 1 {
            let step = &self.trace[s as usize - 1];
            if step.reason.is_some() {
                return Some(s);
            }
            if step.event_kind == "user_input" {
                return None;
            }
            s -= 1;
        }
        None
    }

    fn reason(&self, seq: u64) -> Option<&Reason> {
        self.trace.get(seq.checked_sub(1)? as usize).and_then(|s| s.reason.as_ref())
    }

    fn claim(&mut self, seq: u64) {
        if let Some(c) = seq.checked_sub(1).and_then(|i| self.claimed.get_mut(i as usize)) {
            *c = true;
        }
        self.decisions += 1;
    }

    /// An event the engine refuses under the transcript's profile: the import chose it under
    /// these same rules, so this is a broken import, reported rather than trusted.
    fn refused_events(&mut self) {
        if let Some(i) = self.trace.iter().position(|s| s.phase == "ignored") {
            let kind = self.trace[i].event_kind;
            let seq = i as u64 + 1;
            self.disagree(
                "RULES-E001",
                None,
                seq,
                format!("the transcript goes on with a {kind}"),
                format!("the engine refuses a {kind} at step {seq}"),
                format!("profile {}", self.config.profile.name()),
            );
        }
    }

    /// Stop-hook feedback where the engine ended no turn: the import can only send it to the
    /// model as a prompt, which the engine never does with a hook's words.
    fn feedback_as_prompt(&mut self) {
        for (i, event) in self.imported.events.iter().enumerate() {
            let Event::UserInput { content, .. } = event else { continue };
            let feedback = content.iter().any(|b| match b {
                reloop_core::ContentBlock::Text(t) => t.text.starts_with("Stop hook feedback:\n"),
                _ => false,
            });
            if !feedback {
                continue;
            }
            let seq = i as u64 + 1;
            let before = (1..seq).rev().find_map(|s| self.reason(s).map(|r| (s, r.clone())));
            let (engine, rule) = match &before {
                Some((s, r)) => (
                    format!("no turn ends here: the engine had decided {} at step {s}: {}", r.name(), r.explain()),
                    rule_of(r, self.config),
                ),
                None => ("no turn ends here".to_string(), format!("profile {}", self.config.profile.name())),
            };
            self.disagree(
                "RULES-D002",
                None,
                seq,
                "a Stop hook blocked and its feedback went to the model".to_string(),
                engine,
                rule,
            );
        }
    }

    /// Each of Claude Code's observed decisions against the engine's.
    fn observations(&mut self) {
        for obs in &self.imported.observed {
            self.observation(obs);
        }
    }

    fn observation(&mut self, obs: &Observation) {
        let Some(seq) = obs.seq else { return };
        let line = Some(obs.line);
        let cap = self.config.stop_hook_block_cap;
        match &obs.decision {
            Decision::NextTurn => self.expect_before(
                obs,
                seq,
                "RULES-D001",
                "the tools' results went back to the model (next turn)",
                |r| matches!(r, Reason::Continue(Continue::NextTurn { .. })),
            ),
            Decision::StopHookBlocked { block } => {
                let block = *block;
                let agrees = |r: &Reason| match r {
                    Reason::Continue(Continue::StopHookBlocking { block: b, .. }) => *b == block,
                    // Claude Code writes the feedback of the block that meets the cap, then ends
                    // the turn (FINDINGS.md, both versions).
                    Reason::Terminal(Stop::Completed(Completion::StopHookCap { cap: c })) => block == c + 1,
                    _ => false,
                };
                match self.reason(seq) {
                    Some(r) if agrees(r) => self.claim(seq),
                    _ => self.disagree(
                        "RULES-D002",
                        line,
                        seq,
                        format!("a Stop hook blocked the end of the turn (block {block} in a row) and the model was asked again"),
                        self.engine_at(seq),
                        format!("stop_hook_block_cap {cap}: the engine ends the turn when the hooks block a {}th time", cap + 1),
                    ),
                }
            }
            Decision::StopHooksPassed => self.expect(obs, seq, "RULES-D002", "the Stop hooks let the turn end", |r| {
                matches!(r, Reason::Terminal(Stop::Completed(_)))
            }),
            Decision::StopHookPrevented { .. } => {
                self.expect(obs, seq, "RULES-D002", "a Stop hook ended the run (continue: false)", |r| {
                    matches!(r, Reason::Terminal(Stop::StopHookPrevented(_)))
                })
            }
            Decision::MaxTokensResume => self.expect_before(
                obs,
                seq,
                "RULES-D003",
                "the answer was cut at the output limit; the model was asked to resume",
                |r| {
                    matches!(
                        r,
                        Reason::Continue(
                            Continue::MaxOutputTokensRecovery { .. } | Continue::MaxOutputTokensEscalate { .. }
                        )
                    )
                },
            ),
            Decision::CutStreamResume => self.expect_before(
                obs,
                seq,
                "RULES-D005",
                "the stream broke after part of the answer; it was kept and the model asked to resume",
                |r| matches!(r, Reason::Continue(Continue::CutStreamResume { .. })),
            ),
            Decision::OutputTokensExhausted { limit } => {
                let limit = *limit;
                self.expect(obs, seq, "RULES-D003", &format!("the run ended: output limit {limit} exhausted after the resumes"), |r| {
                    matches!(r, Reason::Terminal(Stop::ModelError(reloop_core::Failure::OutputTokensExhausted { limit: l, .. })) if *l == limit)
                })
            }
            Decision::MalformedToolCallRetry => self.expect_before(
                obs,
                seq,
                "RULES-D004",
                "a tool_use answer without a call; the model was told to retry",
                |r| matches!(r, Reason::Continue(Continue::MalformedToolCallRetry)),
            ),
            Decision::EndedWithError { reason } => {
                let reason = reason.clone();
                self.expect(obs, seq, "RULES-D004", &format!("the run ended with its own error ({reason})"), |r| {
                    r.name() == reason
                })
            }
            Decision::Retried { attempt, max_retries, status, error_type } => {
                let attempt = *attempt;
                // The failure the retry follows: the latest failed request at or before `seq`.
                let failed = (1..=seq).rev().find(|&s| self.trace[s as usize - 1].event_kind == "model_failed");
                let planned = failed.and_then(|s| self.trace[s as usize - 1].retry);
                match (failed, planned) {
                    (Some(s), Some(a)) if a == attempt => self.claim(s),
                    _ => {
                        let at = failed.unwrap_or(seq);
                        let status = status.map(|s| format!("{s} ")).unwrap_or_default();
                        self.disagree(
                            "RULES-D005",
                            line,
                            at,
                            format!("request failed ({status}{error_type}); retry {attempt} of {max_retries}"),
                            match planned {
                                Some(a) => format!("retry {a}"),
                                None => format!("no retry: {}", self.engine_at(at)),
                            },
                            format!("max_retries {} and the profile's retry rules", self.config.max_retries),
                        );
                    }
                }
            }
            Decision::ModelError { status, error_type } => {
                // An error line in the loop's own words (the malformed-call retries ran out) is
                // no failed request: the engine must have stopped there by its own rule, and
                // the import found it had not.
                let failed = (1..=seq).rev().find_map(|s| match &self.imported.events[s as usize - 1] {
                    Event::ModelFailed { error, .. } => Some((s, error.message.clone())),
                    _ => None,
                });
                if let Some((at, message)) = failed.filter(|(_, m)| m.trim() == reloop_core::MALFORMED_TOOL_CALL_ERROR)
                {
                    let before = (1..at).rev().find_map(|s| self.reason(s).cloned());
                    let rule = format!(
                        "{}: malformed tool call, {} retries",
                        self.config.profile.name(),
                        self.config.rules().malformed.retries
                    );
                    self.disagree(
                        "RULES-D004",
                        line,
                        at,
                        format!("the run ended: \"{}\"", message.trim()),
                        match before {
                            Some(r) => format!("the engine goes on: {}: {}", r.name(), r.explain()),
                            None => "the engine goes on".to_string(),
                        },
                        rule,
                    );
                    return;
                }
                let status = status.map(|s| format!("{s} ")).unwrap_or_default();
                self.expect(
                    obs,
                    seq,
                    "RULES-D005",
                    &format!("the run ended on a failed request ({status}{error_type})"),
                    |r| matches!(r, Reason::Terminal(Stop::ModelError(_) | Stop::PromptTooLong(_))),
                )
            }
            Decision::MaxTurns { max_turns } => {
                let max = *max_turns;
                match self.reason(seq) {
                    Some(Reason::Terminal(Stop::MaxTurns { max_turns, .. })) if *max_turns == max => self.claim(seq),
                    _ => self.disagree(
                        "RULES-D006",
                        line,
                        seq,
                        format!("the run stopped at --max-turns {max} (max_turns_reached)"),
                        self.engine_at(seq),
                        format!("max_turns {max}: the engine stops before a turn past it"),
                    ),
                }
            }
            Decision::Interrupted { during } => {
                let want = match during {
                    Interrupted::Streaming => "aborted_streaming",
                    Interrupted::Tools => "aborted_tools",
                };
                self.expect(obs, seq, "RULES-D007", &format!("the person interrupted ({want})"), |r| r.name() == want)
            }
            Decision::Completed => {
                let at = self.decision_from(seq);
                match at.and_then(|s| self.reason(s).map(|r| (s, r))) {
                    Some((s, Reason::Terminal(Stop::Completed(_)))) => self.claim(s),
                    _ => self.disagree(
                        "RULES-D008",
                        line,
                        at.unwrap_or(seq),
                        "the turn ended: the model's answer asked for no tool".to_string(),
                        self.engine_at(at.unwrap_or(seq)),
                        "the end-of-turn rules (Stop hooks, recoveries)".to_string(),
                    ),
                }
            }
            Decision::ModelFallback => {
                let switched = self.trace.get(seq as usize - 1).and_then(|s| s.switched_to.clone());
                match switched {
                    Some(_) => self.claim(seq),
                    None => self.disagree(
                        "RULES-D011",
                        line,
                        seq,
                        "Claude Code switched to the fallback model after an overload".to_string(),
                        format!("no switch: {}", self.engine_at(seq)),
                        format!(
                            "fallback_model {}: the switch after an overload",
                            self.config.fallback_model.as_deref().unwrap_or("(none)")
                        ),
                    ),
                }
            }
            // Taken up with the tool inputs, and the compaction points.
            Decision::ToolInputRejected { .. } | Decision::PermissionDenied { .. } | Decision::Compacted { .. } => {}
        }
    }

    /// The decision that led to the request at `seq` must satisfy `agrees`.
    fn expect_before(
        &mut self,
        obs: &Observation,
        seq: u64,
        code: &'static str,
        cc: &str,
        agrees: impl Fn(&Reason) -> bool,
    ) {
        let at = self.decision_before(seq);
        self.judge(obs, seq, at, code, cc, agrees);
    }

    /// The engine's decision at `seq` (or the first after it in the query) must satisfy `agrees`.
    fn expect(&mut self, obs: &Observation, seq: u64, code: &'static str, cc: &str, agrees: impl Fn(&Reason) -> bool) {
        let at = self.decision_from(seq);
        self.judge(obs, seq, at, code, cc, agrees);
    }

    fn judge(
        &mut self,
        obs: &Observation,
        seq: u64,
        at: Option<u64>,
        code: &'static str,
        cc: &str,
        agrees: impl Fn(&Reason) -> bool,
    ) {
        match at.and_then(|s| self.reason(s).map(|r| (s, agrees(r)))) {
            Some((s, true)) => self.claim(s),
            _ => {
                let rule = match at.and_then(|s| self.reason(s)) {
                    Some(r) => rule_of(r, self.config),
                    None => format!("profile {}", self.config.profile.name()),
                };
                self.disagree(
                    code,
                    Some(obs.line),
                    at.unwrap_or(seq),
                    cc.to_string(),
                    self.engine_at(at.unwrap_or(seq)),
                    rule,
                );
            }
        }
    }

    /// Facts the import left out because the engine had no use for them where they came.
    fn skips(&mut self) {
        for skip in &self.imported.skips {
            let (code, cc) = match skip.kind.as_str() {
                "orphan_response" => ("RULES-S001", "the model was asked again"),
                "orphan_api_retry" | "orphan_api_error" => ("RULES-S001", "a request failed (an API error line)"),
                "retry_the_core_did_not_plan" => ("RULES-D005", "a failed request was retried"),
                "compact_boundary_not_followed" => ("RULES-D009", "the history was compacted"),
                "stop_hook_feedback" | "system:stop_hook_summary" => ("RULES-D002", "Stop hooks ran"),
                "orphan_tool_result" => ("RULES-S002", "a tool result came for a call not in flight"),
                "system:model_fallback" => ("RULES-D011", "Claude Code switched to the fallback model"),
                _ => continue,
            };
            let seq = skip.after_seq;
            let engine = match seq.checked_sub(1).and_then(|i| self.trace.get(i as usize)) {
                Some(step) => {
                    let last = (1..=seq).rev().find_map(|s| self.reason(s));
                    match (step.phase, last) {
                        ("done", Some(r)) => format!("the engine had stopped: {}: {}", r.name(), r.explain()),
                        (phase, _) => format!("the engine was {phase}"),
                    }
                }
                None => "the engine had not started".to_string(),
            };
            let rule = match (1..=seq).rev().find_map(|s| self.reason(s)) {
                Some(r) => rule_of(r, self.config),
                None => format!("profile {}", self.config.profile.name()),
            };
            self.disagree(code, skip.line, seq.max(1), format!("{cc} (line {})", line_text(skip.line)), engine, rule);
        }
    }

    /// The engine's decisions no observation accounts for.
    fn unclaimed(&mut self) {
        let n = self.trace.len();
        for i in 0..n {
            if self.claimed[i] {
                continue;
            }
            let Some(reason) = self.trace[i].reason.clone() else { continue };
            let seq = i as u64 + 1;
            let next = self.trace[i + 1..].iter().map(|s| s.event_kind).find(|k| *k != "hook_done");
            match &reason {
                // A block (or the cap) no Stop-hook feedback shows: the import supplied it
                // because the model answered again after the end of its turn.
                Reason::Continue(Continue::StopHookBlocking { .. })
                | Reason::Terminal(Stop::Completed(Completion::StopHookCap { .. })) => self.disagree(
                    "RULES-D008",
                    None,
                    seq,
                    "the model was asked again after an answer that asked for no tool, with no Stop-hook feedback".to_string(),
                    "the turn ends".to_string(),
                    "the end-of-turn rules: only a blocking Stop hook, a recovery or queued input go on".to_string(),
                ),
                Reason::Terminal(Stop::AbortedStreaming { .. } | Stop::AbortedTools { .. }) => {
                    let was = i.checked_sub(1).map_or("idle", |before| self.trace[before].phase);
                    let going = (1..seq).rev().find_map(|s| self.reason(s)).map_or(String::new(), |r| {
                        format!(" (the engine had decided {} and was {was})", r.name())
                    });
                    self.inferred.push(InferredStep {
                        seq,
                        what: format!("the transcript stops this query without writing why{going}; taken as an interrupt it did not mark"),
                    });
                }
                // The engine goes on: Claude Code's next request, when there is one, is the
                // continue (2.1.197 writes no resume prompt); a transcript may end anywhere.
                Reason::Continue(c) => match next {
                    None | Some("model_block" | "model_done" | "model_failed" | "compact_requested" | "abort") => {
                        self.decisions += 1;
                        if next.is_some() && !matches!(c, Continue::NextTurn { .. }) {
                            self.inferred.push(InferredStep {
                                seq,
                                what: format!(
                                    "{}: the transcript shows the next request but not what asked for it",
                                    reason.name()
                                ),
                            });
                        }
                    }
                    Some(other) => self.disagree(
                        "RULES-D001",
                        None,
                        seq,
                        format!("the query went on with a {other}, no request"),
                        format!("{}: {}", reason.name(), reason.explain()),
                        rule_of(&reason, self.config),
                    ),
                },
                Reason::Terminal(stop) => self.disagree(
                    "RULES-D010",
                    None,
                    seq,
                    match next {
                        Some(k) => format!("no stop here: the query goes on (the next step is a {k} the import took from a line that is no person's prompt, or supplied)"),
                        None => "the transcript ends without showing this stop".to_string(),
                    },
                    format!("{}: {}", reason.name(), reason.explain()),
                    rule_of(&Reason::Terminal(stop.clone()), self.config),
                ),
            }
        }
    }
}

/// The profile rule or setting behind a decision.
fn rule_of(reason: &Reason, config: &Config) -> String {
    let profile = config.profile.name();
    match reason {
        Reason::Continue(Continue::NextTurn { .. }) => {
            "the model asked for tools: their results go back (next_turn)".to_string()
        }
        Reason::Continue(Continue::MaxOutputTokensRecovery { of, .. }) => {
            format!("max_output_tokens {}: up to {of} resumes", config.max_output_tokens)
        }
        Reason::Continue(Continue::MaxOutputTokensEscalate { .. }) => "escalate_max_tokens".to_string(),
        Reason::Continue(Continue::CutStreamResume { of, .. }) => {
            format!("{profile}: a stream broken after part of the answer is resumed, up to max_retries {of}")
        }
        Reason::Continue(Continue::MalformedToolCallRetry)
        | Reason::Terminal(Stop::MalformedToolUseExhausted { .. }) => {
            format!("{profile}: malformed tool call, {} retries", config.rules().malformed.retries)
        }
        Reason::Terminal(Stop::ModelError(reloop_core::Failure::MalformedToolCall)) => {
            format!("{profile}: malformed tool call, {} retries", config.rules().malformed.retries)
        }
        Reason::Continue(Continue::StopHookBlocking { cap, .. })
        | Reason::Terminal(Stop::Completed(Completion::StopHookCap { cap })) => {
            format!("stop_hook_block_cap {cap}")
        }
        Reason::Terminal(Stop::MaxTurns { max_turns, .. }) => format!("max_turns {max_turns}"),
        Reason::Terminal(Stop::ModelError(reloop_core::Failure::OutputTokensExhausted { limit, of, .. })) => {
            format!("max_output_tokens {limit}: up to {of} resumes")
        }
        Reason::Terminal(Stop::ModelError(_)) => format!("max_retries {}", config.max_retries),
        Reason::Terminal(Stop::Completed(_)) => "the end-of-turn rules (Stop hooks, recoveries)".to_string(),
        other => format!("{profile}: {}", other.name()),
    }
}

fn line_text(line: Option<usize>) -> String {
    line.map_or("?".to_string(), |l| l.to_string())
}
