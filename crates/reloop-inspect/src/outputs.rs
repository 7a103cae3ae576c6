//! The stream a session's live run showed, rebuilt from its journal with no model and no tools
//! (`reloop replay --output-format`): the driver's own functions ([`step_outputs`],
//! [`result_of`]) over the journaled facts, through the one fold, so a replay prints what the
//! live run printed (timings aside).

use reloop_core::Fold;
use reloop_core::{Event, State};
use reloop_driver::outputs::{result_of, step_outputs};
use reloop_driver::{RunConfig, RunEvent};
use reloop_journal::{SessionHeader, StepRecord};

/// The stream a session's live run showed, rebuilt from its journal with no model and no tools.
pub fn replay_outputs(header: &SessionHeader, steps: &[StepRecord]) -> Vec<RunEvent> {
    let (mut replay, started) = OutputReplay::new(header);
    let mut out = vec![started];
    for record in steps {
        out.extend(replay.step(record.seq, record.at_ms, &record.event));
    }
    out.extend(replay.finish());
    out
}

/// [`replay_outputs`] one step at a time, so a session of any length is shown in the memory of
/// its state, not of all its steps (`reloop replay --output-format` streams them from the
/// journal through it).
pub struct OutputReplay {
    session_id: String,
    fold: Fold,
    /// When the first and the last step were journaled: the run's duration.
    span: Option<(u64, u64)>,
}

impl OutputReplay {
    /// A replay of the session `header` describes, and the `Started` event that opens its stream.
    pub fn new(header: &SessionHeader) -> (Self, RunEvent) {
        let run: Option<RunConfig> = serde_json::from_value(header.run_config.clone()).ok();
        let started = RunEvent::Started {
            session_id: header.id.clone(),
            model: run.as_ref().map(|r| r.model.clone()).unwrap_or_default(),
            cwd: run.as_ref().map(|r| r.cwd.clone()).unwrap_or_default(),
            tools: run.as_ref().map(|r| r.tools.clone()).unwrap_or_default(),
            permission_mode: run
                .as_ref()
                .and_then(|r| r.permissions.as_ref())
                .and_then(|p| p.mode.parse::<reloop_tools::PermissionMode>().ok())
                .map_or("default".to_string(), |m| m.as_str().to_string()),
            provider: run.as_ref().map(|r| r.provider.clone()).unwrap_or_default(),
            profile: header.core_config.profile,
        };
        let replay = OutputReplay { session_id: header.id.clone(), fold: Fold::new(&header.core_config), span: None };
        (replay, started)
    }

    /// What the caller saw of the step journaled at `seq` (at `at_ms`) with `event`.
    pub fn step(&mut self, seq: u64, at_ms: u64, event: &Event) -> Vec<RunEvent> {
        let (Some(before), span) = (self.fold.before(), &mut self.span) else { return Vec::new() };
        let outputs = self.fold.push(seq, event.clone(), |step| {
            *span = Some((span.map_or(at_ms, |(first, _)| first), at_ms));
            step_outputs(seq, at_ms, event, before.messages, &step.state, &step.effects, step.reason.as_ref())
        });
        outputs.unwrap_or_default()
    }

    /// The run's result, when the session ended.
    pub fn finish(self) -> Option<RunEvent> {
        let state = Some(self.fold.into_state()).filter(State::is_done)?;
        let duration = self.span.map_or(0, |(first, last)| last.saturating_sub(first));
        Some(RunEvent::Finished(result_of(&self.session_id, &state, duration)))
    }
}
