//! `reloop sessions`: the journal as a person reads it: one entry per session, forks and
//! subagents under their parents.

use reloop_driver::SessionJournal;
use reloop_journal::SessionOverview;
use serde_json::{json, Value};

use super::reading::{local_time, short};
use super::{current_dir, CliError};
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg};
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

/// An import's rules, in words: the profile its transcript's Claude Code version chose, exact or
/// the nearest known.
fn import_rules(config: &Value) -> String {
    let version = config.get("version").and_then(Value::as_str);
    match version.map(|v| (v, reloop_core::profile::ProfileId::nearest(v))) {
        Some((v, Some((p, true)))) => format!("{}, Claude Code {v}", p.name()),
        Some((v, Some((p, false)))) => format!("{}, nearest to Claude Code {v}", p.name()),
        _ => "reloop: no Claude Code version named".to_string(),
    }
}

/// One row of `sessions`, worked out from the journal's overview.
struct Row {
    overview: SessionOverview,
    prompt: String,
    /// The model that answered last (as before: `--json`'s `model`).
    model: String,
    /// The model the session asked for and the ones that answered, told apart.
    models: reloop_inspect::models::SessionModels,
    source: String,
    spend: reloop_inspect::spend::Spend,
    /// A rerun's stop at a divergence: its code and its words (journaled as a failed request).
    diverged: Option<(String, String)>,
    /// Its row in a shared journal's work queue, if it was queued.
    queued: Option<reloop_journal_pg::QueueEntry>,
}

/// How a rerun that ended in a model error ended: at a divergence (its code and words), read
/// from its terminal step; `None` for any other session or end.
fn diverged(journal: &SessionJournal, overview: &SessionOverview) -> Result<Option<(String, String)>, CliError> {
    let rerun = overview.run_config.get("provider").and_then(Value::as_str) == Some("rerun");
    if !rerun || overview.terminal_reason.as_deref() != Some("model_error") {
        return Ok(None);
    }
    let mut found = None;
    journal.visit_steps(&overview.id, &mut |s| {
        if let Some(reloop_core::Reason::Terminal(stop)) = &s.reason {
            let code = reloop_inspect::rerun::diverged_code(stop).map(str::to_string);
            found = code.zip(reloop_inspect::rerun::diverged_words(stop, s.seq));
        }
        Ok(true)
    })?;
    Ok(found)
}

impl Row {
    /// The row of a session, its responses priced at `prices` (the session's own, recorded as it
    /// ran) else the model table's: a model neither prices makes its cost unknown.
    fn of(overview: SessionOverview, prices: &[reloop_core::Price], requested: &str) -> Row {
        let config = &overview.run_config;
        let text = |key: &str| config.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let prompt = match &overview.first_prompt {
            Some(reloop_core::Event::UserInput { content, .. }) => reloop_inspect::timeline::text_of(content),
            _ => String::new(),
        };
        let model = overview.responses.iter().rev().find_map(|(m, _)| m.clone()).unwrap_or_else(|| text("model"));
        let mut models = reloop_inspect::models::SessionModels::of(
            [requested],
            overview.responses.iter().map(|(m, _)| m.as_deref().unwrap_or(requested)),
        );
        if text("provider") == "import" {
            models = models.as_answered();
        }
        let price = super::reading::price_in(prices);
        let mut spend = reloop_inspect::spend::Spend::default();
        for (m, usage) in &overview.responses {
            let m = m.as_deref().unwrap_or(&model);
            spend.add(m, usage, price(m, usage));
        }
        let agent =
            |key: &str| config.get("agent").and_then(|a| a.get(key)).and_then(Value::as_str).map(str::to_string);
        let source = match (&overview.parent, text("provider").as_str()) {
            // A rerun names its recording as parent at step 0: it is no fork of it.
            (Some((parent, _)), "rerun") => format!("rerun of {}", short(parent)),
            (Some((parent, seq)), _) => format!("fork of {} @{seq}", short(parent)),
            (None, _) if agent("parent").is_some() => format!(
                "agent {} for {} of {}",
                agent("agent_type").unwrap_or_default(),
                agent("tool_use_id").unwrap_or_default(),
                short(&agent("parent").unwrap_or_default())
            ),
            (None, "import") => format!("import {}", text("file")),
            (None, "prop") => format!(
                "prop: {} falsified, seed {}",
                text("property"),
                config.get("seed").map(Value::to_string).unwrap_or_default()
            ),
            (None, provider) if !provider.is_empty() => format!("run ({provider})"),
            _ => "run".to_string(),
        };
        Row { overview, prompt, model, models, source, spend, diverged: None, queued: None }
    }

    fn end(&self, journal: &SessionJournal) -> Result<String, CliError> {
        Ok(match (&self.overview.terminal_reason, journal.live_writer(&self.overview.id)?) {
            (_, Some(writer)) => format!("(running, {writer})"),
            (_, None) if self.diverged.is_some() => {
                format!("rerun diverged: {}", self.diverged.as_ref().map_or("", |(code, _)| code))
            }
            (Some(reason), None) => reason.clone(),
            // Waiting for a worker, or failed in the queue before it could end: not unfinished.
            (None, None) => {
                self.queued.as_ref().and_then(super::queue::end_words).unwrap_or_else(|| "(unfinished)".into())
            }
        })
    }
}

pub fn run(args: SessionsArgs) -> Result<Exit, CliError> {
    let json = args.json.json;
    let journal = args.journal.open(&current_dir()?, crate::launch::journal::Open::Reading)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut queue = super::queue::by_session(&args.journal)?;
    for overview in journal.overview()? {
        // Each session's recorded prices: `--price` given to a run prices its model here too.
        let core = journal.header(&overview.id)?.core_config;
        let mut row = Row::of(overview, &core.prices, &core.model);
        row.diverged = diverged(&journal, &row.overview)?;
        row.queued = queue.remove(&row.overview.id);
        rows.push(row);
    }
    // `last` is the session written most recently: the overview's last row.
    let last = rows.iter().rev().find(|r| r.overview.run_config.get("agent").is_none()).map(|r| r.overview.id.clone());
    // Listed in creation order (an import's creation is its transcript's start), forks under
    // their parents.
    rows.sort_by_key(|r| r.overview.created_at_ms);
    if json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                let o = &r.overview;
                Ok(json!({
                    "id": o.id, "created_at_ms": o.created_at_ms, "last_written_ms": o.last_written_ms,
                    "last": Some(&o.id) == last.as_ref(), "steps": o.steps,
                    "terminal_reason": o.terminal_reason,
                    "rerun_diverged": r.diverged.as_ref().map(|(_, words)| words),
                    "parent": o.parent.as_ref().map(|(id, _)| id),
                    "fork_seq": o.parent.as_ref().map(|(_, seq)| seq),
                    "source": r.source, "file": o.run_config.get("file"),
                    "model": r.model, "first_prompt": r.prompt,
                    "requested_model": r.models.requested.first(), "answered_models": r.models.answered,
                    "input_tokens": r.spend.input_tokens,
                    "cache_read_input_tokens": r.spend.cache_read_input_tokens,
                    "cache_creation_input_tokens": r.spend.cache_creation_input_tokens,
                    "output_tokens": r.spend.output_tokens,
                    "cache_hit_rate": r.spend.cache_hit_rate(),
                    "cost_usd": r.spend.cost_usd(), "unpriced_models": r.spend.unpriced_models,
                    "writer_pid": journal.as_sqlite().map(|j| j.writer(&o.id)).transpose()?.flatten(),
                    "writer": journal.live_writer(&o.id)?,
                    "agent": o.run_config.get("agent"),
                    "queue": r.queued.as_ref().map(|q| json!({"state": q.state, "worker": q.worker,
                        "since_ms": q.since_ms, "reason": q.reason})),
                    "rules": (o.run_config.get("provider").and_then(Value::as_str) == Some("import"))
                        .then(|| import_rules(&o.run_config)),
                }))
            })
            .collect::<Result<_, CliError>>()?;
        crate::term::json_line(&out, true).map_err(|e| CliError::Io(e.to_string()))?;
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        outln!("no sessions yet");
        return Ok(Exit::Success);
    }
    let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.overview.id.as_str()).collect();
    // A subagent sits under the session whose call it answered, as a fork under its parent.
    let parent_of = |r: &Row| -> Option<String> {
        r.overview.parent.as_ref().map(|(p, _)| p.clone()).or_else(|| {
            r.overview.run_config.get("agent").and_then(|a| a.get("parent")).and_then(Value::as_str).map(str::to_string)
        })
    };
    let children = |parent: Option<&str>| -> Vec<&Row> {
        rows.iter()
            .filter(|r| match (&parent_of(r), parent) {
                (Some(p), Some(want)) => p == want,
                (Some(p), None) => !ids.contains(p.as_str()),
                (None, want) => want.is_none(),
            })
            .collect()
    };
    let unpriced: std::collections::BTreeSet<&String> = rows.iter().flat_map(|r| &r.spend.unpriced_models).collect();
    super::reading::warn_unpriced(unpriced);
    let mut stack: Vec<(&Row, usize)> = children(None).into_iter().rev().map(|r| (r, 0)).collect();
    while let Some((r, depth)) = stack.pop() {
        let o = &r.overview;
        let indent = "    ".repeat(depth);
        let mark = if Some(&o.id) == last.as_ref() { "  <- last" } else { "" };
        outln!(
            "{indent}{}  {}  {:>5} steps  {}  {}  {}{mark}",
            short(&o.id),
            local_time(o.created_at_ms),
            o.steps,
            r.spend.cost_words(),
            r.end(&journal)?,
            r.models.words(),
        );
        // An import says whose rules read it.
        let rules = match o.run_config.get("provider").and_then(Value::as_str) {
            Some("import") => format!(" ({})", import_rules(&o.run_config)),
            _ => String::new(),
        };
        outln!("{indent}          {}{rules}: {}", r.source, reloop_inspect::timeline::shorten(&r.prompt, 72));
        stack.extend(children(Some(&o.id)).into_iter().rev().map(|c| (c, depth + 1)));
    }
    Ok(Exit::Success)
}
