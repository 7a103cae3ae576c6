//! A counterexample journaled as a session: its steps are the simulated ones, so `reloop
//! replay` runs them again identically and `why`, `view` and `show --steps` read them as any
//! session's.

use reloop_core::testkit::Trace;
use reloop_core::Fold;
use reloop_journal::{JournalBackend, JournalError, SessionHeader, StepRecord, Writer, ENGINE_VERSION};
use serde_json::Value;

/// Journals `trace` as the new session `id`, created at `created_at_ms`; `run_config` is the
/// header's (the CLI's says `"provider": "prop"` and names the property, seed and cassette).
/// Every step gets the same time: a simulated session has no clock.
pub fn journal_trace(
    journal: &mut dyn JournalBackend,
    trace: &Trace,
    id: &str,
    created_at_ms: u64,
    run_config: Value,
) -> Result<(), JournalError> {
    let header = SessionHeader {
        id: id.to_string(),
        created_at_ms,
        engine_version: ENGINE_VERSION.to_string(),
        core_config: trace.config.clone(),
        run_config,
        parent: None,
    };
    let mut fold = Fold::new(&trace.config);
    journal.create_session_from(&header, Writer::Leave, &mut |sink| {
        for (i, step) in trace.steps.iter().enumerate() {
            let Some(before) = fold.before() else { break };
            let seq = i as u64 + 1;
            fold.push(seq, step.event.clone(), |done| {
                sink(&StepRecord::of(seq, created_at_ms, step.event.clone(), before.phase, before.turn, done))
            })
            .transpose()?;
        }
        Ok(())
    })
}
