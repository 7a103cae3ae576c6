//! `reloop why`: the continue and terminal decisions of a session, with their evidence.

use reloop_core::hook::{combine, interpret, HookEventName, HookVerdict, Permission};
use reloop_core::{Command, Effect, Event, Evidence, Ignored, Notice};
use reloop_journal::{SessionHeader, StepRecord};
use serde::Serialize;

use crate::timeline::{shorten, Facts};

/// One decision of the loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyLine {
    /// The step that took the decision.
    pub seq: u64,
    /// The prompt (query) the decision belongs to, counted from 1.
    pub prompt: u32,
    /// The turn the decision was taken in.
    pub turn: u32,
    /// The turn after it (one more for `next_turn`).
    pub next_turn: u32,
    /// `continue`, `terminal`, `compaction`, `retry`, `fallback`, `caller` (a setting the caller
    /// changed, a new prompt), `hook` (a tool hook's or permission prompt's decision),
    /// `inferred` (an event an importer added) or (with `--steps`) `ignored`.
    pub kind: &'static str,
    /// The reason's name, or for an ignored event the why's.
    pub reason: &'static str,
    /// One human line.
    pub explanation: String,
    /// The facts behind a decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// Why an event was ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    /// The importer inferred this step: the transcript did not hold it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
}

impl std::fmt::Display for WhyLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            "terminal" => write!(f, "#{:<4} stop: {}: {}", self.seq, self.reason, self.explanation),
            "ignored" => write!(f, "#{:<4} ignored: {}: {}", self.seq, self.reason, self.explanation),
            "inferred" => write!(f, "#{:<4} inferred: {}", self.seq, self.explanation),
            "retry" | "fallback" => write!(f, "#{:<4} {}: {}", self.seq, self.kind, self.explanation),
            "caller" | "hook" => {
                write!(f, "#{:<4} {}: {}: {}", self.seq, self.kind, self.reason, self.explanation)
            }
            // A continue that repeats the turn (recovery, retry, hook, budget) keeps its number.
            _ if self.turn == self.next_turn => {
                write!(f, "#{:<4} turn {}: {}: {}", self.seq, self.turn, self.reason, self.explanation)
            }
            _ => write!(
                f,
                "#{:<4} turn {} -> {}: {}: {}",
                self.seq, self.turn, self.next_turn, self.reason, self.explanation
            ),
        }?;
        match (&self.inferred, self.kind) {
            (Some(what), k) if k != "inferred" => write!(f, "  [inferred: {what}]"),
            _ => Ok(()),
        }
    }
}

/// Which decisions `why` keeps.
#[derive(Debug, Clone, Default)]
pub struct WhyFilter {
    /// Only those taken in this turn (of any prompt, unless `prompt` is set too).
    pub turn: Option<u32>,
    /// Only those of this prompt.
    pub prompt: Option<u32>,
    /// Only those whose reason or kind has this name (`next_turn`, `completed`, `retry`, ...).
    pub reason: Option<String>,
    /// Also every event a state did not expect (`why --steps`).
    pub ignored: bool,
}

/// The decisions of a session, as `filter` keeps them.
pub fn why(steps: &[StepRecord], facts: &Facts, filter: &WhyFilter) -> Vec<WhyLine> {
    steps.iter().enumerate().flat_map(|(i, s)| why_step(i, s, facts, filter)).collect()
}

/// [`why`] of the session's step `s`, the `i`th (counted from 0): `why` reads a long session a
/// step at a time through it.
pub fn why_step(i: usize, s: &StepRecord, facts: &Facts, filter: &WhyFilter) -> Vec<WhyLine> {
    let in_turn = filter.turn.is_none_or(|t| s.turn_before == t);
    let in_prompt = filter.prompt.is_none_or(|p| facts.prompt_of.get(i) == Some(&p));
    if !(in_turn && in_prompt) {
        return Vec::new();
    }
    let prompt = facts.prompt_of.get(i).copied().unwrap_or(0);
    let mut lines = step_lines(s, facts, filter.ignored);
    let inferred = facts.inferred.get(&s.seq);
    for line in &mut lines {
        line.prompt = prompt;
        if line.kind == "caller" && line.reason == "prompt" {
            line.turn = line.next_turn;
        }
        line.inferred = inferred.cloned();
    }
    if let (Some(what), true) = (inferred, lines.is_empty()) {
        lines.push(WhyLine {
            prompt,
            kind: "inferred",
            reason: "inferred",
            explanation: what.clone(),
            inferred: Some(what.clone()),
            ..line_of(s)
        });
    }
    lines.retain(|l| filter.reason.as_deref().is_none_or(|r| l.reason == r || l.kind == r));
    lines
}

/// A line for `step` with nothing said yet.
fn line_of(step: &StepRecord) -> WhyLine {
    WhyLine {
        seq: step.seq,
        prompt: 0,
        turn: step.turn_before,
        next_turn: step.turn_after,
        kind: "continue",
        reason: "",
        explanation: String::new(),
        evidence: None,
        ignored: None,
        inferred: None,
    }
}

/// The decisions one step took: usually none or one; a failed request can retry or fall back
/// in the same step that carries no reason.
fn step_lines(s: &StepRecord, facts: &Facts, ignored: bool) -> Vec<WhyLine> {
    if let Some(why) = s.ignored.as_ref() {
        if !ignored {
            return Vec::new();
        }
        return vec![WhyLine {
            kind: "ignored",
            reason: why.name(),
            explanation: why.explain(),
            ignored: Some(why.clone()),
            ..line_of(s)
        }];
    }
    if let Some(line) = caller_line(s).or_else(|| hook_line(s, facts)) {
        return vec![line];
    }
    let mut lines = retry_lines(s);
    if let Some(reason) = s.reason.as_ref() {
        let evidence = reason.evidence();
        // A rerun's divergence is journaled as a failed request: told as the rerun's verdict.
        let diverged = match reason {
            reloop_core::Reason::Terminal(stop) => crate::rerun::diverged_words(stop, s.seq),
            _ => None,
        };
        if let Some(words) = diverged {
            let explanation = words.trim_start_matches("rerun diverged: ").to_string();
            lines.push(WhyLine {
                kind: "terminal",
                reason: crate::rerun::RERUN_DIVERGED,
                explanation,
                evidence: Some(evidence),
                ..line_of(s)
            });
            return lines;
        }
        let explanation = match &evidence {
            Evidence::ToolsRequested { tools } => {
                let calls: Vec<String> = tools.iter().map(|t| call_words(facts, &t.name, &t.id)).collect();
                format!("the model asked for {}", calls.join(", "))
            }
            _ => reason.explain(),
        };
        lines.push(WhyLine {
            kind: if reason.is_terminal() { "terminal" } else { "continue" },
            reason: reason.name(),
            explanation,
            evidence: Some(evidence),
            ..line_of(s)
        });
    } else if let Some(line) = compaction_line(s) {
        lines.push(line);
    }
    lines
}

/// `Read src/auth/login.ts (toolu_02)`: a call by its name, the input that matters and its id;
/// a call that was refused rather than run says so (`(toolu_03, denied)`).
fn call_words(facts: &Facts, name: &str, id: &str) -> String {
    let tool = facts.tool(id);
    let id = if tool.is_some_and(|t| t.denied) { format!("{id}, denied") } else { id.to_string() };
    match tool.map(|t| t.key.as_str()).filter(|k| !k.is_empty()) {
        Some(key) => format!("{name} {key} ({id})"),
        None => format!("{name} ({id})"),
    }
}

/// A failed request the core retries after a wait, or hands to the fallback model.
fn retry_lines(s: &StepRecord) -> Vec<WhyLine> {
    let effects: Vec<Effect> = serde_json::from_value(s.effects.clone()).unwrap_or_default();
    let failure = match &s.event {
        Event::ModelFailed { error, request } => {
            let status = error.status.map(|st| format!("{st} ")).unwrap_or_default();
            format!("request {request} failed ({status}{}: {})", error.error_type, shorten(&error.message, 60))
        }
        _ => "the request failed".to_string(),
    };
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Command(Command::WaitRetry(w)) => Some(WhyLine {
                kind: "retry",
                reason: "retry",
                explanation: format!(
                    "{failure}; retry {} of {} in {}",
                    w.attempt,
                    w.max_retries,
                    crate::timeline::duration(w.delay_ms)
                ),
                ..line_of(s)
            }),
            Effect::Notice(Notice::SwitchModel { trigger, from, to }) => Some(WhyLine {
                kind: "fallback",
                reason: "fallback",
                explanation: format!("{failure}; after repeated {trigger} errors the run switches from {from} to {to}"),
                ..line_of(s)
            }),
            _ => None,
        })
        .collect()
}

/// Why lines grouped for a person: a heading per prompt, a line per turn with its requests,
/// tokens, cost and time, then the turn's decisions.
pub fn grouped_text(lines: &[WhyLine], facts: &Facts) -> String {
    let mut grouping = Grouping::default();
    lines.iter().map(|line| grouping.text(line, facts)).collect()
}

/// [`grouped_text`] a line at a time, for output written as the lines are found: each line's
/// text, with the prompt and turn headings it opens.
#[derive(Default)]
pub struct Grouping {
    /// The prompt and turn of the last line.
    at: Option<(u32, u32)>,
}

impl Grouping {
    /// The text of `line`, preceded by the prompt or turn heading it opens, if any.
    pub fn text(&mut self, line: &WhyLine, facts: &Facts) -> String {
        let mut out = String::new();
        if self.at.map(|(prompt, _)| prompt) != Some(line.prompt) {
            match facts.prompts.iter().find(|p| p.number == line.prompt) {
                Some(p) => out.push_str(&format!("prompt {} (#{}): {}\n", p.number, p.seq, shorten(&p.text, 70))),
                None => out.push_str("before any prompt\n"),
            }
            self.at = None;
        }
        if self.at != Some((line.prompt, line.turn)) {
            if let Some(t) = facts.turn(line.prompt, line.turn) {
                out.push_str(&format!("  {}\n", turn_words(t)));
            }
            self.at = Some((line.prompt, line.turn));
        }
        out.push_str(&format!("    {line}\n"));
        out
    }
}

/// `turn 2: 1 request, 120 in, 3,000 cache read, 0 cache write, 85 out tokens, cache hit 96.2%,
/// $0.0107, 1.4 s` (`cost unknown` for a model with no price)
pub(crate) fn turn_words(t: &crate::timeline::TurnFacts) -> String {
    let mut requests = if t.requests == 1 { "1 request".to_string() } else { format!("{} requests", t.requests) };
    if t.failed > 0 {
        requests.push_str(&format!(" ({} failed)", t.failed));
    }
    format!(
        "turn {}: {requests}, {}, {}, {}",
        t.turn,
        t.spend.tokens_words(),
        t.spend.cost_words(),
        crate::timeline::duration(t.duration_ms)
    )
}

/// A setting the caller changed, or a new prompt for a session whose query had ended.
fn caller_line(step: &StepRecord) -> Option<WhyLine> {
    let (reason, explanation) = match &step.event {
        Event::SetModel { model: Some(model), command: Some(command) } => {
            ("set_model", format!("the command /{command} asks its query with {model}, as its file says"))
        }
        Event::SetModel { model: None, command: Some(command) } => {
            ("set_model", format!("the command /{command}'s query is over: back to the configured model"))
        }
        Event::SetModel { model: Some(model), .. } => {
            ("set_model", format!("the caller switched the model to {model}"))
        }
        Event::SetModel { model: None, .. } => {
            ("set_model", "the caller switched back to the configured model".to_string())
        }
        Event::SetPermissionMode { mode } => {
            ("set_permission_mode", format!("the caller switched the permission mode to {mode}"))
        }
        Event::CommandTools { command, allow } if allow.is_empty() => {
            ("command_tools", format!("the command /{command}'s query is over: back to the session's permission rules"))
        }
        Event::CommandTools { command, allow } => (
            "command_tools",
            format!("the command /{command} allows {} for its query, as its file says", allow.join(", ")),
        ),
        Event::UserInput { content, origin, .. } if step.from_phase == "done" => {
            let text = crate::timeline::prompt_text(content, origin.as_ref());
            ("prompt", format!("a new prompt starts the next query: {}", shorten(&text, 60)))
        }
        _ => return None,
    };
    Some(WhyLine { kind: "caller", reason, explanation, ..line_of(step) })
}

/// A tool hook or the permission prompt decided about a call: denied it, allowed it without
/// asking, or blocked it. A hook that let the call through as it was says nothing.
fn hook_line(step: &StepRecord, facts: &Facts) -> Option<WhyLine> {
    let Event::HookDone { hook_event, tool_use_id: Some(id), runs, .. } = &step.event else { return None };
    let tool = facts.tool(id).map_or("the call".to_string(), |t| {
        if t.key.is_empty() {
            t.name.clone()
        } else {
            format!("{} {}", t.name, t.key)
        }
    });
    let (reason, explanation) = if *hook_event == HookEventName::PermissionRequest {
        let run = runs.first()?;
        let reply: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
        match (run.exit_code, reply.get("behavior").and_then(serde_json::Value::as_str)) {
            (Some(0), Some("allow")) => {
                ("allowed", format!("the permission prompt ({}) allowed {tool} ({id})", run.command))
            }
            (Some(0), _) => {
                let message = reply.get("message").and_then(serde_json::Value::as_str).unwrap_or("no reason given");
                ("denied", format!("the permission prompt ({}) denied {tool} ({id}): {message}", run.command))
            }
            _ => (
                "denied",
                format!(
                    "the permission prompt ({}) gave no answer for {tool} ({id}): {}",
                    run.command,
                    run.stderr.trim()
                ),
            ),
        }
    } else {
        let verdicts: Vec<_> = runs.iter().map(|r| (r.command.clone(), interpret(*hook_event, r))).collect();
        let combined = combine(&verdicts);
        let event = hook_event.as_str();
        if let Some(block) = combined.blocks.first() {
            ("blocked", format!("{event} hook [{}] blocked {tool} ({id}): {}", block.command, block.message))
        } else if let Some(p) = &combined.permission {
            let who = verdicts
                .iter()
                .find(|(_, v)| matches!(v, HookVerdict::PermissionDecision { .. }))
                .map_or("", |(c, _)| c.as_str());
            let reason = p.reason.as_deref().unwrap_or("no reason given");
            match p.decision {
                Permission::Deny => ("denied", format!("{event} hook [{who}] denied {tool} ({id}): {reason}")),
                Permission::Allow => {
                    ("allowed", format!("{event} hook [{who}] allowed {tool} ({id}) without asking: {reason}"))
                }
                Permission::Ask => return None,
            }
        } else {
            // A `continue: false` is the terminal reason's to explain.
            return None;
        }
    };
    Some(WhyLine { kind: "hook", reason, explanation, ..line_of(step) })
}

/// A compaction that is not itself a continue (auto, manual) or that failed is a decision too.
fn compaction_line(step: &StepRecord) -> Option<WhyLine> {
    let effects: Vec<Effect> = serde_json::from_value(step.effects.clone()).ok()?;
    let (reason, evidence) = effects.into_iter().find_map(|e| match e {
        Effect::Notice(Notice::CompactBoundary { trigger, pre_tokens, post_tokens, .. }) => {
            Some(("compacted", Evidence::Compacted { trigger, pre_tokens, post_tokens }))
        }
        Effect::Notice(Notice::CompactionFailed { trigger, failures, breaker_open, message }) => {
            let failure = reloop_core::CompactionFailure { trigger, failures, message, breaker_open };
            Some(("compaction_failed", Evidence::CompactionFailed(failure)))
        }
        Effect::Notice(Notice::CompactionRetried { trigger, message }) => {
            Some(("compaction_retried", Evidence::CompactionRetried { trigger, message }))
        }
        Effect::Notice(Notice::CompactionSkipped { trigger }) => {
            let message = "too few messages to summarise".to_string();
            let failure = reloop_core::CompactionFailure { trigger, failures: 0, message, breaker_open: false };
            Some(("compaction_failed", Evidence::CompactionFailed(failure)))
        }
        Effect::Notice(Notice::InputConsumed { .. } | Notice::Withdraw | Notice::SwitchModel { .. })
        | Effect::Command(_) => None,
    })?;
    let explanation = match &evidence {
        Evidence::Compacted { trigger, pre_tokens, post_tokens } => format!(
            "the request would reach the auto-compact threshold; {}",
            reloop_core::compacted_line(trigger, *pre_tokens, *post_tokens)
        ),
        Evidence::CompactionFailed(failure) => format!("{}; the request goes ahead", failure.line()),
        Evidence::CompactionRetried { trigger, message } => format!(
            "the summary request ({trigger}) was itself too long ({message}); sent again with its head cut to the last exchange"
        ),
        _ => return None,
    };
    Some(WhyLine { kind: "compaction", reason, explanation, evidence: Some(evidence), ..line_of(step) })
}

/// One line of the transition trace: the event, the phase change, the effects and the reason.
pub fn trace_line(step: &StepRecord) -> String {
    let mut line = format!("#{:<4} {:<13} {} -> {}", step.seq, step.event.kind(), step.from_phase, step.to_phase);
    if step.turn_before != step.turn_after {
        line.push_str(&format!(" (turn {} -> {})", step.turn_before, step.turn_after));
    }
    match serde_json::from_value::<Vec<Effect>>(step.effects.clone()) {
        Ok(effects) => {
            for effect in &effects {
                line.push_str("  ! ");
                line.push_str(&describe_effect(effect));
            }
        }
        Err(_) => line.push_str(&format!("  ! {}", step.effects)),
    }
    if let Some(reason) = &step.reason {
        let kind = if reason.is_terminal() { "stop" } else { "continue" };
        line.push_str(&format!("  => {kind}: {}", reason.name()));
    }
    if let Some(ignored) = &step.ignored {
        line.push_str(&format!("  => ignored: {}", ignored.explain()));
    }
    line
}

/// An effect in a few words.
pub(crate) fn describe_effect(effect: &Effect) -> String {
    match effect {
        Effect::Command(Command::CallModel(c)) => {
            format!("call_model(request {}, turn {}, {} messages)", c.request, c.turn, c.message_count)
        }
        Effect::Command(Command::RunTools { calls }) => {
            let names: Vec<String> = calls.iter().map(|c| format!("{} {} {}", c.id, c.name, c.input)).collect();
            format!("run_tools({})", names.join("; "))
        }
        Effect::Command(Command::CancelModel) => "cancel_model".to_string(),
        Effect::Command(Command::CancelTools) => "cancel_tools".to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// The path of states and reasons as a Graphviz graph (`reloop why --dot | dot -Tsvg`).
///
/// One node per state the loop entered (a run of steps that stay in one phase is one node), one
/// edge per step that moved it, labelled with the step, its event and — where the loop continued
/// or stopped — the reason. Continues are blue, stops red; a fork's graph starts at its parent.
pub fn dot(header: &SessionHeader, steps: &[StepRecord]) -> String {
    let mut out = String::from("digraph reloop {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
    out.push_str(&format!("  label={};\n  labelloc=t;\n", quote(&format!("session {}", header.id))));
    let start = match &header.parent {
        Some((parent, seq)) => {
            out.push_str(&format!("  start [shape=note, label={}];\n", quote(&format!("fork of {parent} @{seq}"))));
            "start".to_string()
        }
        None => {
            out.push_str("  start [shape=circle, label=\"idle\"];\n");
            "start".to_string()
        }
    };
    let mut current = start;
    for s in steps {
        if s.from_phase == s.to_phase && s.reason.is_none() && s.turn_before == s.turn_after {
            continue;
        }
        let node = format!("s{}", s.seq);
        let mut label = format!("{}\nturn {}", s.to_phase, s.turn_after);
        let mut edge = format!("#{} {}", s.seq, s.event.kind());
        let mut color = "black";
        let mut shape = "box";
        if let Some(reason) = &s.reason {
            edge.push_str(&format!("\n{}", reason.name()));
            if reason.is_terminal() {
                color = "red";
                shape = "doubleoctagon";
                label = format!("done\n{}", reason.name());
            } else {
                color = "blue";
            }
        }
        out.push_str(&format!("  {node} [shape={shape}, label={}];\n", quote(&label)));
        out.push_str(&format!("  {current} -> {node} [label={}, color={color}, fontcolor={color}];\n", quote(&edge)));
        current = node;
    }
    out.push_str("}\n");
    out
}

/// A DOT string literal; `\n` inside labels is DOT's own line break.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"))
}
