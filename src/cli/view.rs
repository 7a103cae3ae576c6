//! `reloop view SESSION`: the session as one self-contained HTML page, a timeline a person
//! clicks through. Everything the page shows is embedded as JSON; the CSS and JS are inline
//! (`view.html`), so the file opens anywhere with no network.

use std::path::PathBuf;
use std::process::ExitCode;

use reloop_driver::explain::{why, WhyFilter};
use serde_json::{json, Value};

use super::{current_dir, CliError, JournalArg};
use crate::term::outln;

const TEMPLATE: &str = include_str!("view.html");

pub fn view(journal: &JournalArg, selector: &str, output: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let journal = journal.open(&current_dir()?, super::journal::Open::Reading)?;
    let id = journal.resolve(selector)?;
    let header = journal.header(&id)?;
    let steps = journal.steps(&id)?;
    let facts = super::inspect::facts(&header, &steps);
    let decisions = why(&steps, &facts, &WhyFilter { ignored: true, ..WhyFilter::default() });
    let (input_tokens, output_tokens, cost_usd) = facts.totals();
    let config = &header.run_config;
    let step_rows: Vec<Value> = steps
        .iter()
        .map(|s| {
            json!({
                "seq": s.seq, "at_ms": s.at_ms, "kind": s.event.kind(), "event": s.event,
                "from": s.from_phase, "to": s.to_phase, "turn_before": s.turn_before, "turn_after": s.turn_after,
                "effects": s.effects, "reason": s.reason, "ignored": s.ignored,
                "reason_name": s.reason.as_ref().map(reloop_core::Reason::name),
                "terminal": s.reason.as_ref().map(reloop_core::Reason::is_terminal),
                "explanation": s.reason.as_ref().map(reloop_core::Reason::explain),
                "inferred": facts.inferred.get(&s.seq),
            })
        })
        .collect();
    let data = json!({
        "session": {
            "id": header.id,
            "source": reloop_driver::timeline::source(&header),
            "file": config.get("file"),
            "provider": config.get("provider"),
            "model": facts.requests.iter().rev().map(|r| r.model.as_str()).find(|m| !m.is_empty()).unwrap_or(&header.core_config.model),
            "cwd": config.get("cwd"),
            "created": super::listing::local_time(header.created_at_ms),
            "engine_version": header.engine_version,
            "parent": header.parent.as_ref().map(|(p, seq)| json!({"id": p, "seq": seq})),
            // A subagent's call, and the session's own subagents: the tree around the page.
            "agent": config.get("agent"),
            "subagents": journal.subagents_of(&id)?.into_iter()
                .map(|s| json!({"id": s.id, "tool_use_id": s.tool_use_id, "agent_type": s.agent_type}))
                .collect::<Vec<_>>(),
            "terminal": steps.iter().rev().find_map(|s| s.reason.as_ref().filter(|r| r.is_terminal()).map(reloop_core::Reason::name)),
            "input_tokens": input_tokens, "output_tokens": output_tokens, "cost_usd": cost_usd,
            "steps": steps.len(),
        },
        "prompts": facts.prompts,
        "turns": facts.turns,
        "requests": facts.requests,
        "tools": facts.tools,
        "decisions": decisions,
        "steps": step_rows,
    });
    let page = page(&data, &header.id)?;
    let path =
        output.unwrap_or_else(|| PathBuf::from(format!("reloop-{}.html", header.id.get(..8).unwrap_or(&header.id))));
    std::fs::write(&path, page).map_err(|e| CliError::Io(format!("cannot write {}: {e}", path.display())))?;
    outln!("wrote {} ({} steps); open it in a browser", path.display(), steps.len());
    Ok(ExitCode::SUCCESS)
}

/// The page: the template with the session's data in a JSON script element. `<` is escaped so
/// no text of the session can close the element or open another.
fn page(data: &Value, id: &str) -> Result<String, CliError> {
    let json = serde_json::to_string(data).map_err(|e| CliError::Io(e.to_string()))?;
    let json = json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026");
    let title: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    Ok(TEMPLATE.replace("{{TITLE}}", &title).replace("{{DATA}}", &json))
}
