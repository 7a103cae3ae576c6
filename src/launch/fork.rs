//! A fork: a new session whose first steps are another's up to a step, journaled before it runs.
//! `fork`, `compact` and the print mode's `--fork-session` / `--resume-session-at` write one.

use std::path::PathBuf;

use reloop_core::State;
use reloop_driver::SessionJournal;
use reloop_journal::{SessionHeader, ENGINE_VERSION};
use serde_json::json;

use crate::error::CliError;

/// Where a fork of `parent_id` at `at` (its last step for `None`) starts, read from the journal
/// a step at a time. A fork point outside the session is bad input; a journal that cannot be
/// read is the journal's error. `what` names the command in the message.
pub(crate) fn fork_point(
    journal: &SessionJournal,
    parent_id: &str,
    at: Option<u64>,
    core: &reloop_core::Config,
    what: &str,
) -> Result<reloop_inspect::ForkPoint, CliError> {
    reloop_inspect::fork_point_of(&**journal, parent_id, at, core).map_err(|e| match e {
        reloop_inspect::ForkError::Journal(e) => CliError::from(e),
        e => CliError::Usage(format!("cannot {what} {parent_id}: {e}")),
    })
}

/// Journals the fork `header` of `parent_id` with its first steps, the parent's up to `at`
/// recomputed under `core`: they are read through a second connection while this one writes
/// them, a step at a time, in one transaction, so a fork of any length holds none of them.
/// Returns the state they lead to.
pub(crate) fn write_fork(
    journal: &mut SessionJournal,
    header: &SessionHeader,
    parent_id: &str,
    at: u64,
    core: &reloop_core::Config,
) -> Result<State, CliError> {
    let parent = journal.open_again()?;
    let mut state = None;
    journal.create_session_from(header, reloop_journal::Writer::Take, &mut |sink| {
        state = Some(reloop_inspect::fork_steps(&*parent, parent_id, at, core, sink)?);
        Ok(())
    })?;
    state.ok_or_else(|| CliError::Usage(format!("the fork of {parent_id} wrote no step")))
}

/// The header of a new session branching from `parent` after step `at`: the parent's run
/// config, with a new model or a new cassette (answering from the fork's first new request).
pub(crate) fn fork_header(
    parent: &SessionHeader,
    at: u64,
    core: &reloop_core::Config,
    model: Option<&str>,
    script: Option<PathBuf>,
    requests_done: u32,
) -> Result<SessionHeader, CliError> {
    let mut run = parent.run_config.clone();
    let Some(fields) = run.as_object_mut() else {
        return Err(CliError::Usage(format!("session {} has no run config to fork from", parent.id)));
    };
    fields.entry("max_output_tokens").or_insert(json!(core.max_output_tokens));
    fields.entry("model").or_insert(json!(core.model));
    if let Some(model) = model {
        fields.insert("model".into(), json!(model));
    }
    // A fork of a subagent is a session of its own: it answers no call of the parent.
    fields.remove("agent");
    if let Some(script) = script {
        fields.insert("provider".into(), json!("scripted"));
        fields.insert("script".into(), json!(script));
        fields.insert("request_offset".into(), json!(requests_done));
    }
    Ok(SessionHeader {
        id: reloop_driver::new_session_id(),
        created_at_ms: now_ms(),
        engine_version: ENGINE_VERSION.to_string(),
        core_config: core.clone(),
        run_config: run,
        parent: Some((parent.id.clone(), at)),
    })
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
