//! `reloop diff A B`: where two sessions part ways, and what differs after.
//!
//! Sessions are compared by what a person would call the same step, not byte for byte: the
//! event without its ids, timings and usage, the request it sends (turn, messages, model) and
//! the reason it decides. Streaming deltas and `tool_started` marks are left out, so a Claude
//! Code transcript (which has neither) lines up with a reloop run of the same prompt. A fork is
//! compared from its fork point: the steps before it are its parent's by construction.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};

use reloop_core::{Command, ContentBlock, Effect, Event};
use reloop_journal::{SessionHeader, StepRecord};
use serde::{Deserialize, Serialize};

use crate::timeline::{shorten, tool_key, PriceFn};

/// One step as the comparison sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    /// The step's number in its own session.
    pub seq: u64,
    /// The event without its ids, timings and usage, as one line.
    pub event: String,
    /// The request the step sends (turn, messages, model), if it sends one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The reason the step decides, if it decides one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What one side did from the first difference on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct After {
    /// Steps taken from the difference on.
    pub steps: usize,
    /// Model requests made from the difference on.
    pub requests: usize,
    /// Tools called, by name, with how many times.
    pub tools: BTreeMap<String, usize>,
    /// The tokens those requests used, by kind, and what they cost at the binary's prices.
    #[serde(flatten)]
    pub spend: crate::spend::Spend,
    /// How the side ended, if it did.
    pub terminal_reason: Option<String>,
}

/// Where the sessions part ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstDifference {
    /// Session A's step there (`None`: A had ended).
    pub a: Option<StepView>,
    /// Session B's step there (`None`: B had ended).
    pub b: Option<StepView>,
    /// Which of `event`, `request`, `reason` differ (or `missing`: one session has ended).
    pub differs: Vec<&'static str>,
}

/// The comparison of two sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDiff {
    /// Session A's id.
    pub a: String,
    /// Session B's id.
    pub b: String,
    /// `B forks A at step N` (or the other way round): the sessions share steps `1..=N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fork_point: Option<u64>,
    /// Compared steps (after the fork point) both sessions agree on before the difference.
    pub same_steps: usize,
    /// A's steps (after the fork point) that are not compared: streamed text deltas, a call's
    /// start mark, a restart (how a session was driven, not what it did), ignored events; so that
    /// `same_steps` plus these is the step count `reloop sessions` shows.
    pub uncompared_steps_a: usize,
    /// Where they part ways; `None`: the sessions are the same step for step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<FirstDifference>,
    /// What A did from the difference on.
    pub after_a: After,
    /// What B did from the difference on.
    pub after_b: After,
}

/// One side of a comparison: a session's header, how its usage is priced, and a walk over its
/// steps in order (it hands each to its argument until that returns `false`). The comparison
/// walks a side once or twice and keeps neither side's steps: a fixed-size hash of each
/// compared step of one side, and what the other did after the difference, summed.
pub struct Side<'a, E> {
    /// The session's header: its id and whether it is a fork (and of what).
    pub header: &'a SessionHeader,
    /// Prices the side's responses for [`After::spend`].
    pub price: PriceFn<'a>,
    /// Hands over the session's steps, in order.
    pub walk: &'a mut Walk<'a, E>,
}

/// A walk over a session's steps: it hands each to its argument, in order, until that returns
/// `false`.
pub type Walk<'a, E> = dyn FnMut(&mut dyn FnMut(&StepRecord) -> bool) -> Result<(), E> + 'a;

/// Compares `a` with `b`, walking `a` twice and `b` once.
///
/// Compared steps are matched by a 64-bit hash under keys drawn for this comparison: two
/// different steps would be taken as the same with odds of one in 2^64, and nobody can build a
/// session that makes them so.
pub fn diff<E>(a: &mut Side<'_, E>, b: &mut Side<'_, E>) -> Result<SessionDiff, E> {
    let fork_point = match (&a.header.parent, &b.header.parent) {
        (_, Some((parent, seq))) if *parent == a.header.id => Some(*seq),
        (Some((parent, seq)), _) if *parent == b.header.id => Some(*seq),
        _ => None,
    };
    let from = fork_point.unwrap_or(0);
    let keys = RandomState::new();
    let hash = |v: &StepView| keys.hash_one((&v.event, &v.request, &v.reason));

    // A's compared steps, as hashes.
    let mut hashes_a = Vec::new();
    let mut uncompared_steps_a = 0;
    let mut viewer = Viewer::new(a.header, from);
    (a.walk)(&mut |step| {
        match viewer.view(step) {
            Some(view) => hashes_a.push(hash(&view)),
            None if step.seq > from => uncompared_steps_a += 1,
            None => {}
        }
        true
    })?;

    // B's against them, up to the first that differs, and what B did from there.
    let mut viewer = Viewer::new(b.header, from);
    let mut after_b = AfterGatherer::new(b.header, b.price);
    let (mut same, mut view_b, mut parted) = (0, None, false);
    (b.walk)(&mut |step| {
        if !parted {
            if let Some(view) = viewer.view(step) {
                if hashes_a.get(same) == Some(&hash(&view)) {
                    same += 1;
                } else {
                    parted = true;
                    after_b.from = view.seq;
                    view_b = Some(view);
                }
            }
        }
        after_b.step(step);
        true
    })?;
    // B ended first: A's next compared step, if it has one, is where they part.
    let parted = parted || same < hashes_a.len();

    // A's step where they part, and what A did from there.
    let mut viewer = Viewer::new(a.header, from);
    let mut after_a = AfterGatherer::new(a.header, a.price);
    let (mut seen, mut view_a) = (0, None);
    (a.walk)(&mut |step| {
        if parted && view_a.is_none() {
            if let Some(view) = viewer.view(step) {
                if seen == same {
                    after_a.from = view.seq;
                    view_a = Some(view);
                }
                seen += 1;
            }
        }
        after_a.step(step);
        true
    })?;

    let first_difference = parted.then(|| {
        let differs = match (&view_a, &view_b) {
            (Some(x), Some(y)) => {
                [("event", x.event != y.event), ("request", x.request != y.request), ("reason", x.reason != y.reason)]
                    .into_iter()
                    .filter_map(|(name, d)| d.then_some(name))
                    .collect()
            }
            _ => vec!["missing"],
        };
        FirstDifference { a: view_a, b: view_b, differs }
    });
    Ok(SessionDiff {
        a: a.header.id.clone(),
        b: b.header.id.clone(),
        fork_point,
        same_steps: same,
        uncompared_steps_a,
        after_a: after_a.finish(),
        after_b: after_b.finish(),
        first_difference,
    })
}

/// Turns a side's steps, in order, into the compared steps after step `from`. It names the tool
/// a `tool_done` answers by the call with that id: only calls not answered yet are kept.
struct Viewer<'a> {
    from: u64,
    cwd: &'a str,
    in_flight: HashMap<String, String>,
}

impl<'a> Viewer<'a> {
    fn new(header: &'a SessionHeader, from: u64) -> Self {
        let cwd = header.run_config.get("cwd").and_then(serde_json::Value::as_str).unwrap_or_default();
        Viewer { from, cwd, in_flight: HashMap::new() }
    }

    /// The next step of the side: its compared view, if it is one.
    fn view(&mut self, step: &StepRecord) -> Option<StepView> {
        if step.ignored.is_some() {
            return None;
        }
        if let Event::ModelBlock { block: ContentBlock::ToolUse(call), .. } = &step.event {
            self.in_flight.insert(call.id.clone(), call.name.clone());
        }
        let view = (step.seq > self.from).then(|| self.words(step)).flatten();
        if let Event::ToolDone(outcome) = &step.event {
            self.in_flight.remove(&outcome.tool_use_id);
        }
        view
    }

    fn words(&self, step: &StepRecord) -> Option<StepView> {
        let event = event_words(&step.event, &self.in_flight)?;
        let event = if self.cwd.is_empty() {
            event
        } else {
            event.replace(&format!("{}/", self.cwd.trim_end_matches('/')), "")
        };
        Some(StepView {
            seq: step.seq,
            event,
            request: request_words(step),
            reason: step.reason.as_ref().map(|r| r.name().to_string()),
        })
    }
}

/// The event in words that two sessions doing the same thing share: no ids, usage or timing.
fn event_words(event: &Event, tools: &HashMap<String, String>) -> Option<String> {
    Some(match event {
        // Streaming granularity, a call's start mark and a restart after a crash or at a fork
        // point are how a session was driven, not what it did.
        Event::TextDelta { .. } | Event::ToolStarted { .. } | Event::Resumed => return None,
        Event::UserInput { content, .. } => format!("user_input {:?}", shorten(&crate::timeline::text_of(content), 60)),
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
            let name = tools.get(&outcome.tool_use_id).map_or("?", String::as_str);
            let error = if outcome.is_error { " error" } else { "" };
            format!("tool_done {name}{error} {:?}", shorten(&outcome.content.as_text(), 50))
        }
        Event::HookDone { hook_event, .. } => format!("hook_done {}", hook_event.as_str()),
        other => other.kind().to_string(),
    })
}

/// A step's effects, read from its JSON in place (none when they cannot be read, as the
/// timeline's facts take them).
fn effects_of(step: &StepRecord) -> Vec<Effect> {
    Vec::<Effect>::deserialize(&step.effects).unwrap_or_default()
}

/// The model request a step asks for, in words: turn, messages, model.
fn request_words(step: &StepRecord) -> Option<String> {
    effects_of(step).into_iter().find_map(|e| match e {
        Effect::Command(Command::CallModel(c)) => {
            let model = if c.model.is_empty() { String::new() } else { format!(", {}", c.model) };
            Some(format!("turn {}, {} messages{model}", c.turn, c.message_count))
        }
        Effect::Command(Command::Summarize { trigger, .. }) => Some(format!("summary ({trigger})")),
        _ => None,
    })
}

/// What a side did from step `from` on, summed as its steps go by: the steps, the requests
/// asked from there with their usage and cost once answered, and the tools called. How the
/// side ended is taken from all its steps. What [`crate::timeline::Facts`] gathers, without
/// keeping it.
struct AfterGatherer<'a> {
    /// The first step counted (none until it is known).
    from: u64,
    header: &'a SessionHeader,
    price: PriceFn<'a>,
    after: After,
    /// Requests asked from `from` on and not answered yet, by number, with their model.
    asked: HashMap<u32, String>,
    /// The request asked last: the one a legacy answer (request 0) answers.
    latest: Option<u32>,
}

impl<'a> AfterGatherer<'a> {
    fn new(header: &'a SessionHeader, price: PriceFn<'a>) -> Self {
        AfterGatherer { from: u64::MAX, header, price, after: After::default(), asked: HashMap::new(), latest: None }
    }

    fn step(&mut self, step: &StepRecord) {
        if let Some(reason) = step.reason.as_ref().filter(|r| r.is_terminal()) {
            self.after.terminal_reason = Some(reason.name().to_string());
        }
        if step.seq < self.from {
            return;
        }
        self.after.steps += 1;
        let in_flight = self.latest;
        for effect in effects_of(step) {
            // A request asked again (after a restart) is counted again; its answer is the
            // newest asking's.
            match effect {
                Effect::Command(Command::CallModel(call)) => {
                    let model = if call.model.is_empty() { self.header.core_config.model.clone() } else { call.model };
                    self.asked.insert(call.request, model);
                    self.latest = Some(call.request);
                    self.after.requests += 1;
                }
                Effect::Command(Command::Summarize { request, .. }) => {
                    self.asked.insert(request, self.header.core_config.model.clone());
                    self.latest = Some(request);
                    self.after.requests += 1;
                }
                _ => {}
            }
        }
        if step.ignored.is_some() {
            return;
        }
        let (request, usage, model) = match &step.event {
            Event::ModelDone { model, usage, request, .. } => (*request, usage, model.as_ref()),
            Event::CompactDone { usage, request, .. } => (*request, usage, None),
            Event::ModelBlock { block: ContentBlock::ToolUse(call), .. } => {
                *self.after.tools.entry(call.name.clone()).or_default() += 1;
                return;
            }
            _ => return,
        };
        // A journal written before correlation ids answers request 0: the one in flight, asked
        // before this step (whose own effects may ask the next).
        let request = match request {
            0 => match in_flight {
                Some(r) => r,
                None => return,
            },
            n => n,
        };
        // The core answers an asking once: a later answer to the same request is ignored.
        let Some(asked_model) = self.asked.remove(&request) else { return };
        let model = model.cloned().unwrap_or(asked_model);
        let cost = (self.price)(&model, usage);
        self.after.spend.add(&model, usage, cost);
    }

    fn finish(self) -> After {
        self.after
    }
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
        let uncompared = match d.uncompared_steps_a {
            0 => String::new(),
            n => format!(" ({n} more, streamed text, tool-start marks and ignored events, are not compared)"),
        };
        out.push_str(&format!("A {a} and B {b} take the same {} steps{uncompared}\n", d.same_steps));
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
    let (n, (a, b)) = (reloop_core::thousands, (&x.spend, &y.spend));
    let hit = |s: &crate::spend::Spend| s.cache_hit_rate().map_or("-".to_string(), crate::spend::percent);
    let rows: [(&str, String, String); 10] = [
        ("steps", x.steps.to_string(), y.steps.to_string()),
        ("requests", x.requests.to_string(), y.requests.to_string()),
        ("tools", tools(&x.tools), tools(&y.tools)),
        ("in", n(a.input_tokens), n(b.input_tokens)),
        ("cache rd", n(a.cache_read_input_tokens), n(b.cache_read_input_tokens)),
        ("cache wr", n(a.cache_creation_input_tokens), n(b.cache_creation_input_tokens)),
        ("out", n(a.output_tokens), n(b.output_tokens)),
        ("cache hit", hit(a), hit(b)),
        ("cost", a.cost_words(), b.cost_words()),
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

#[cfg(test)]
mod tests {
    use super::*;
    /// A session: its header and steps.
    #[derive(Clone)]
    struct Session {
        header: SessionHeader,
        steps: Vec<StepRecord>,
    }

    fn corpus() -> Vec<Session> {
        crate::test_corpus::sessions().into_iter().map(|(header, steps)| Session { header, steps }).collect()
    }

    /// Diffs `a` and `b` held in memory, counting how often each is walked.
    fn diffed(a: &Session, b: &Session) -> (SessionDiff, usize, usize) {
        let price = |_: &str, u: &reloop_core::Usage| Some((u.input_tokens + u.output_tokens) as f64 * 1e-6);
        let (mut walks_a, mut walks_b) = (0, 0);
        let mut walk_a = |visit: &mut dyn FnMut(&StepRecord) -> bool| -> Result<(), ()> {
            walks_a += 1;
            a.steps.iter().take_while(|s| visit(s)).for_each(drop);
            Ok(())
        };
        let mut walk_b = |visit: &mut dyn FnMut(&StepRecord) -> bool| -> Result<(), ()> {
            walks_b += 1;
            b.steps.iter().take_while(|s| visit(s)).for_each(drop);
            Ok(())
        };
        let d = diff(
            &mut Side { header: &a.header, price: &price, walk: &mut walk_a },
            &mut Side { header: &b.header, price: &price, walk: &mut walk_b },
        )
        .expect("in memory");
        (d, walks_a, walks_b)
    }

    fn compared_steps(session: &Session) -> Vec<u64> {
        let mut viewer = Viewer::new(&session.header, 0);
        session.steps.iter().filter_map(|s| viewer.view(s)).map(|v| v.seq).collect()
    }

    #[test]
    fn a_session_takes_the_same_steps_as_itself_and_parts_from_its_prefix_where_the_prefix_ends() {
        for session in corpus() {
            let compared = compared_steps(&session);
            let (same, walks_a, walks_b) = diffed(&session, &session);
            assert_eq!((walks_a, walks_b), (2, 1), "A is walked twice, B once");
            assert_eq!(same.first_difference, None, "{}", session.header.id);
            assert_eq!(same.same_steps, compared.len());
            assert_eq!(same.after_a.steps, 0, "nothing comes after no difference");

            // B stops halfway through A's compared steps: they part at A's next one, B missing.
            let Some(&cut) = compared.get(compared.len() / 2) else { continue };
            let mut prefix = session.clone();
            prefix.steps.retain(|s| s.seq < cut);
            let (parted, _, _) = diffed(&session, &prefix);
            let first = parted.first_difference.expect("the prefix ends first");
            assert_eq!(first.differs, vec!["missing"]);
            assert_eq!((first.a.map(|v| v.seq), first.b), (Some(cut), None));
            assert_eq!(parted.same_steps, compared.len() / 2);
            assert_eq!(parted.after_a.steps, session.steps.iter().filter(|s| s.seq >= cut).count());
            assert_eq!(parted.after_b, After::default().with_end(&prefix));
        }
    }

    impl After {
        /// Nothing done, ending as `session` ended.
        fn with_end(mut self, session: &Session) -> After {
            self.terminal_reason = session
                .steps
                .iter()
                .rev()
                .find_map(|s| s.reason.as_ref().filter(|r| r.is_terminal()))
                .map(|r| r.name().to_string());
            self
        }
    }

    #[test]
    fn what_each_did_after_the_difference_counts_its_requests_tools_and_tokens_from_there() {
        for session in corpus() {
            // A changed tool result in B: both part at it, and each counts from there.
            let Some(at) =
                session.steps.iter().position(|s| matches!(s.event, Event::ToolDone(_)) && s.ignored.is_none())
            else {
                continue;
            };
            let mut other = session.clone();
            if let Event::ToolDone(outcome) = &mut other.steps[at].event {
                outcome.content = reloop_core::ToolResultContent::Text("something else".into());
            }
            let (d, _, _) = diffed(&session, &other);
            let first = d.first_difference.expect("they part");
            assert_eq!(first.differs, vec!["event"]);
            let seq = session.steps[at].seq;
            assert_eq!(first.a.as_ref().map(|v| v.seq), Some(seq));
            assert!(first.a.expect("a").event.starts_with("tool_done "), "the tool is named");
            // Counted the way the timeline's facts count them.
            let price = |_: &str, u: &reloop_core::Usage| Some((u.input_tokens + u.output_tokens) as f64 * 1e-6);
            let facts = crate::timeline::Facts::gather(&session.header, &session.steps, &price);
            let requests: Vec<_> = facts.requests.iter().filter(|r| r.seq >= seq).collect();
            assert_eq!(d.after_a.requests, requests.len(), "{}", session.header.id);
            assert_eq!(d.after_a.spend.output_tokens, requests.iter().map(|r| r.usage.output_tokens).sum::<u64>());
            let cost: f64 = requests.iter().filter_map(|r| r.cost_usd).sum();
            let after = d.after_a.spend.cost_usd().unwrap();
            assert!((after - cost).abs() < 1e-12, "{after} vs {cost}");
            let tools = facts.tools.iter().filter(|t| t.seq >= seq).count();
            assert_eq!(d.after_a.tools.values().sum::<usize>(), tools);
        }
    }
}
