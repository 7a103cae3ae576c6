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
    model: String,
    source: String,
    cost_usd: f64,
}

impl Row {
    fn of(overview: SessionOverview) -> Row {
        let config = &overview.run_config;
        let text = |key: &str| config.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let prompt = match &overview.first_prompt {
            Some(reloop_core::Event::UserInput { content }) => reloop_inspect::timeline::text_of(content),
            _ => String::new(),
        };
        let model = overview.responses.iter().rev().find_map(|(m, _)| m.clone()).unwrap_or_else(|| text("model"));
        let cost_usd = overview
            .responses
            .iter()
            .map(|(m, usage)| {
                let m = m.as_deref().unwrap_or(&model);
                crate::models::price(m).map_or(0.0, |p| p.cost(usage))
            })
            .fold(0.0, |a, b| a + b);
        let agent =
            |key: &str| config.get("agent").and_then(|a| a.get(key)).and_then(Value::as_str).map(str::to_string);
        let source = match (&overview.parent, text("provider").as_str()) {
            (Some((parent, seq)), _) => format!("fork of {} @{seq}", short(parent)),
            (None, _) if agent("parent").is_some() => format!(
                "agent {} for {} of {}",
                agent("agent_type").unwrap_or_default(),
                agent("tool_use_id").unwrap_or_default(),
                short(&agent("parent").unwrap_or_default())
            ),
            (None, "import") => format!("import {}", text("file")),
            (None, provider) if !provider.is_empty() => format!("run ({provider})"),
            _ => "run".to_string(),
        };
        Row { overview, prompt, model, source, cost_usd }
    }

    fn end(&self, journal: &SessionJournal) -> Result<String, CliError> {
        Ok(match (&self.overview.terminal_reason, journal.live_writer(&self.overview.id)?) {
            (_, Some(writer)) => format!("(running, {writer})"),
            (Some(reason), None) => reason.clone(),
            (None, None) => "(unfinished)".to_string(),
        })
    }
}

pub fn run(args: SessionsArgs) -> Result<Exit, CliError> {
    let json = args.json.json;
    let journal = args.journal.open(&current_dir()?, crate::launch::journal::Open::Reading)?;
    let mut rows: Vec<Row> = journal.overview()?.into_iter().map(Row::of).collect();
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
                    "parent": o.parent.as_ref().map(|(id, _)| id),
                    "fork_seq": o.parent.as_ref().map(|(_, seq)| seq),
                    "source": r.source, "file": o.run_config.get("file"),
                    "model": r.model, "first_prompt": r.prompt, "cost_usd": r.cost_usd,
                    "writer_pid": journal.as_sqlite().map(|j| j.writer(&o.id)).transpose()?.flatten(),
                    "writer": journal.live_writer(&o.id)?,
                    "agent": o.run_config.get("agent"),
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
    let mut stack: Vec<(&Row, usize)> = children(None).into_iter().rev().map(|r| (r, 0)).collect();
    while let Some((r, depth)) = stack.pop() {
        let o = &r.overview;
        let indent = "    ".repeat(depth);
        let mark = if Some(&o.id) == last.as_ref() { "  <- last" } else { "" };
        outln!(
            "{indent}{}  {}  {:>5} steps  ${:.4}  {}  {}{mark}",
            short(&o.id),
            local_time(o.created_at_ms),
            o.steps,
            r.cost_usd,
            r.end(&journal)?,
            if r.model.is_empty() { "-" } else { r.model.as_str() },
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
