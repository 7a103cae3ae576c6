//! `reloop diff A B`: where two sessions part ways, and what differs after.
//!
//! Sessions are compared by what a person would call the same step, not byte for byte: the
//! event without its ids, timings and usage, the request it sends (turn, messages, model) and
//! the reason it decides. Streaming deltas and `tool_started` marks are left out, so a Claude
//! Code transcript (which has neither) lines up with a reloop run of the same prompt. A fork is
//! compared from its fork point: the steps before it are its parent's by construction.

use std::collections::BTreeMap;

use reloop_core::{Command, ContentBlock, Effect, Event};
use reloop_journal::{SessionHeader, StepRecord};
use serde::Serialize;

use crate::timeline::{shorten, tool_key, Facts};

/// One step as the comparison sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub seq: u64,
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What one side did from the first difference on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct After {
    pub steps: usize,
    pub requests: usize,
    /// Tools called, by name, with how many times.
    pub tools: BTreeMap<String, usize>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub terminal_reason: Option<String>,
}

/// Where the sessions part ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstDifference {
    pub a: Option<StepView>,
    pub b: Option<StepView>,
    /// Which of `event`, `request`, `reason` differ (or `missing`: one session has ended).
    pub differs: Vec<&'static str>,
}

/// The comparison of two sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDiff {
    pub a: String,
    pub b: String,
    /// `B forks A at step N` (or the other way round): the sessions share steps `1..=N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork_point: Option<u64>,
    /// Compared steps (after the fork point) both sessions agree on before the difference.
    pub same_steps: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<FirstDifference>,
    pub after_a: After,
    pub after_b: After,
}

/// One side of a comparison: a session's header, steps and facts.
pub struct Side<'a> {
    pub header: &'a SessionHeader,
    pub steps: &'a [StepRecord],
    pub facts: &'a Facts,
}

/// Compares `a` with `b`.
pub fn diff(a: &Side<'_>, b: &Side<'_>) -> SessionDiff {
    let fork_point = match (&a.header.parent, &b.header.parent) {
        (_, Some((parent, seq))) if *parent == a.header.id => Some(*seq),
        (Some((parent, seq)), _) if *parent == b.header.id => Some(*seq),
        _ => None,
    };
    let from = fork_point.unwrap_or(0);
    let view_a = views(a, from);
    let view_b = views(b, from);
    let same = view_a.iter().zip(&view_b).take_while(|(x, y)| same_step(x, y)).count();
    let first_difference = (same < view_a.len().max(view_b.len())).then(|| {
        let (x, y) = (view_a.get(same).cloned(), view_b.get(same).cloned());
        let differs = match (&x, &y) {
            (Some(x), Some(y)) => {
                [("event", x.event != y.event), ("request", x.request != y.request), ("reason", x.reason != y.reason)]
                    .into_iter()
                    .filter_map(|(name, d)| d.then_some(name))
                    .collect()
            }
            _ => vec!["missing"],
        };
        FirstDifference { a: x, b: y, differs }
    });
    // What each did from the difference on (or nothing, when they agree throughout).
    let after_seq = |views: &[StepView]| views.get(same).map_or(u64::MAX, |v| v.seq);
    SessionDiff {
        a: a.header.id.clone(),
        b: b.header.id.clone(),
        fork_point,
        same_steps: same,
        after_a: after(a, after_seq(&view_a)),
        after_b: after(b, after_seq(&view_b)),
        first_difference,
    }
}

fn same_step(x: &StepView, y: &StepView) -> bool {
    x.event == y.event && x.request == y.request && x.reason == y.reason
}

/// The compared steps of a side after step `from`.
fn views(side: &Side<'_>, from: u64) -> Vec<StepView> {
    let cwd = side.header.run_config.get("cwd").and_then(serde_json::Value::as_str).unwrap_or_default();
    side.steps
        .iter()
        .filter(|s| s.seq > from && s.ignored.is_none())
        .filter_map(|s| {
            let event = event_words(&s.event, side.facts)?;
            let event =
                if cwd.is_empty() { event } else { event.replace(&format!("{}/", cwd.trim_end_matches('/')), "") };
            Some(StepView {
                seq: s.seq,
                event,
                request: request_words(s),
                reason: s.reason.as_ref().map(|r| r.name().to_string()),
            })
        })
        .collect()
}

/// The event in words that two sessions doing the same thing share: no ids, usage or timing.
fn event_words(event: &Event, facts: &Facts) -> Option<String> {
    Some(match event {
        // Streaming granularity, a call's start mark and a restart after a crash or at a fork
        // point are how a session was driven, not what it did.
        Event::TextDelta { .. } | Event::ToolStarted { .. } | Event::Resumed => return None,
        Event::UserInput { content } => format!("user_input {:?}", shorten(&crate::timeline::text_of(content), 60)),
        Event::ModelBlock { block: ContentBlock::Text(t), .. } => format!("text {:?}", shorten(&t.text, 60)),
        Event::ModelBlock { block: ContentBlock::ToolUse(call), .. } => {
            format!("tool_use {} {}", call.name, tool_key(&call.name, &call.input))
        }
        Event::ModelBlock { block, .. } => format!("block {}", block.type_name()),
        Event::ModelDone { stop_reason, .. } => {
            format!("model_done {}", stop_reason.as_ref().map_or("-", |r| r.as_str()))
        }
        Event::ModelFailed { error, .. } => format!("model_failed {}", error.error_type),
        Event::ToolDone(outcome) => {
            let name = facts.tool(&outcome.tool_use_id).map_or("?", |t| t.name.as_str());
            let error = if outcome.is_error { " error" } else { "" };
            format!("tool_done {name}{error} {:?}", shorten(&outcome.content.as_text(), 50))
        }
        Event::HookDone { hook_event, .. } => format!("hook_done {}", hook_event.as_str()),
        other => other.kind().to_string(),
    })
}

/// The model request a step asks for, in words: turn, messages, model.
fn request_words(step: &StepRecord) -> Option<String> {
    let effects: Vec<Effect> = serde_json::from_value(step.effects.clone()).unwrap_or_default();
    effects.iter().find_map(|e| match e {
        Effect::Command(Command::CallModel(c)) => {
            let model = if c.model.is_empty() { String::new() } else { format!(", {}", c.model) };
            Some(format!("turn {}, {} messages{model}", c.turn, c.message_count))
        }
        Effect::Command(Command::Summarize { trigger, .. }) => Some(format!("summary ({trigger})")),
        _ => None,
    })
}

/// What a side did from step `seq` on.
fn after(side: &Side<'_>, seq: u64) -> After {
    let mut out = After {
        steps: side.steps.iter().filter(|s| s.seq >= seq).count(),
        terminal_reason: side
            .steps
            .iter()
            .rev()
            .find_map(|s| s.reason.as_ref().filter(|r| r.is_terminal()))
            .map(|r| r.name().to_string()),
        ..After::default()
    };
    for r in side.facts.requests.iter().filter(|r| r.seq >= seq) {
        out.requests += 1;
        out.input_tokens +=
            r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens;
        out.output_tokens += r.usage.output_tokens;
        out.cost_usd += r.cost_usd;
    }
    for t in side.facts.tools.iter().filter(|t| t.seq >= seq) {
        *out.tools.entry(t.name.clone()).or_default() += 1;
    }
    out
}

/// The comparison for a person: the first difference side by side, then the rest.
pub fn text(d: &SessionDiff) -> String {
    // reloop's own ids by their first eight characters; any other (a handed-over dump's) whole.
    let short = |id: &str| {
        let hex = id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        if hex { id.get(..8).unwrap_or(id) } else { id }.to_string()
    };
    let (a, b) = (short(&d.a), short(&d.b));
    let mut out = String::new();
    if let Some(n) = d.fork_point {
        out.push_str(&format!("A {a} and B {b}: one forks the other at step {n}; compared from there\n"));
    }
    let Some(first) = &d.first_difference else {
        out.push_str(&format!("A {a} and B {b} take the same {} steps\n", d.same_steps));
        return out;
    };
    let at = |v: &Option<StepView>| v.as_ref().map_or("(ended)".to_string(), |v| format!("#{}", v.seq));
    out.push_str(&format!(
        "A {a} and B {b} agree on {} steps, then part ways at A {} / B {} ({} differs)\n\n",
        d.same_steps,
        at(&first.a),
        at(&first.b),
        first.differs.join(", ")
    ));
    let cell = |v: &Option<StepView>, f: fn(&StepView) -> Option<String>| {
        v.as_ref().and_then(f).map_or("-".to_string(), |s| shorten(&s, 46))
    };
    let side_a = format!("A {a}");
    out.push_str(&format!("  {:<9} {side_a:<48} B {b}\n", ""));
    let rows: [(&str, Field); 3] =
        [("event", |v| Some(v.event.clone())), ("request", |v| v.request.clone()), ("reason", |v| v.reason.clone())];
    for (label, f) in rows {
        let mark = if first.differs.contains(&label) || first.differs.contains(&"missing") { "*" } else { " " };
        out.push_str(&format!("{mark} {label:<9} {:<48} {}\n", cell(&first.a, f), cell(&first.b, f)));
    }
    out.push_str("\nfrom there on:\n");
    let (x, y) = (&d.after_a, &d.after_b);
    let tools = |t: &BTreeMap<String, usize>| {
        if t.is_empty() {
            "-".to_string()
        } else {
            t.iter().map(|(n, c)| format!("{n}×{c}")).collect::<Vec<_>>().join(" ")
        }
    };
    let tokens = |s: &After| {
        format!(
            "{} in / {} out",
            reloop_core::reason::thousands(s.input_tokens),
            reloop_core::reason::thousands(s.output_tokens)
        )
    };
    let rows: [(&str, String, String); 6] = [
        ("steps", x.steps.to_string(), y.steps.to_string()),
        ("requests", x.requests.to_string(), y.requests.to_string()),
        ("tools", tools(&x.tools), tools(&y.tools)),
        ("tokens", tokens(x), tokens(y)),
        ("cost", format!("${:.4}", x.cost_usd), format!("${:.4}", y.cost_usd)),
        (
            "end",
            x.terminal_reason.clone().unwrap_or_else(|| "(unfinished)".into()),
            y.terminal_reason.clone().unwrap_or_else(|| "(unfinished)".into()),
        ),
    ];
    for (label, l, r) in rows {
        let mark = if l == r { " " } else { "*" };
        out.push_str(&format!("{mark} {label:<9} {l:<48} {r}\n"));
    }
    out
}

/// One field of a step's view, as a column of the side-by-side table.
type Field = fn(&StepView) -> Option<String>;
