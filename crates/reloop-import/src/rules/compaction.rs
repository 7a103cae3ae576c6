//! Compaction points: Claude Code's compactions against the engine's own auto-compact rule.

use reloop_core::{Config, Event, Fold};

use super::{Checker, InferredStep};
use crate::observed::{Decision, Observation};

impl Checker<'_> {
    /// Claude Code's compactions against the engine's own auto-compact rule: a second engine,
    /// with auto-compaction on as Claude Code has it, takes the same inputs; it must compact
    /// where the transcript does, and nowhere else.
    pub(super) fn compaction_points(&mut self) {
        let compactions: Vec<&Observation> =
            self.imported.observed.iter().filter(|o| matches!(o.decision, Decision::Compacted { .. })).collect();
        // The window Claude Code compacted in: its default, unless a request carried more than
        // it holds. The import may take a larger one so that its own engine (auto-compaction
        // off) is not refused near the window; the check must not inherit that.
        let default_window = Config::default().context_window;
        let largest = self
            .imported
            .events
            .iter()
            .filter_map(|e| match e {
                Event::ModelDone { usage, .. } => Some(
                    usage
                        .input_tokens
                        .saturating_add(usage.cache_creation_input_tokens)
                        .saturating_add(usage.cache_read_input_tokens)
                        .saturating_add(usage.output_tokens),
                ),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let window = if largest > default_window { self.config.context_window } else { default_window };
        let probe_config = self.config.clone().with_auto_compact(true).with_context_window(window);
        let mut probe = Fold::new(&probe_config);
        for (i, event) in self.imported.events.iter().enumerate() {
            let seq = i as u64 + 1;
            let phase_before = probe.state().map_or("done", reloop_core::State::phase);
            if matches!(event, Event::CompactRequested) {
                let obs = compactions.iter().find(|o| o.seq == Some(seq));
                let (trigger, pre) = match obs.map(|o| &o.decision) {
                    Some(Decision::Compacted { trigger, pre_tokens }) => (trigger.clone(), *pre_tokens),
                    _ => (None, None),
                };
                if phase_before == "compacting" {
                    // The engine had already decided to compact here.
                    self.decisions += 1;
                    continue;
                }
                if trigger.as_deref() == Some("manual") {
                    self.decisions += 1;
                } else {
                    let threshold = auto_compact_threshold(&probe_config);
                    match pre {
                        Some(pre) if pre < threshold => {
                            self.inferred.push(InferredStep {
                                seq,
                                what: format!("Claude Code compacted below the auto-compact threshold ({pre} < {threshold} tokens): taken as the reactive compaction after a prompt-too-long error, which the transcript does not keep"),
                            });
                            self.decisions += 1;
                        }
                        _ => {
                            self.disagree(
                                "RULES-D009",
                                obs.map(|o| o.line),
                                seq,
                                format!(
                                    "the history was compacted (auto, {} tokens by Claude Code's count)",
                                    pre.map_or("?".to_string(), |p| p.to_string())
                                ),
                                "no compaction: the engine's estimate is under its auto-compact threshold".to_string(),
                                format!("auto-compact threshold {threshold} (context window {window})"),
                            );
                            return;
                        }
                    }
                }
            }
            // Each outcome names the probe's own request in flight, as the import's name its.
            let event = match probe.state() {
                Some(state) => event.clone().correlated(state.context().requests()),
                None => event.clone(),
            };
            let stepped = probe.push(seq, event.clone(), |step| step.ignored.is_none());
            let phase = probe.state().map_or("done", reloop_core::State::phase);
            if stepped == Some(false) {
                // The probe went its own way earlier (reported there).
                return;
            }
            let next_is_compaction = matches!(self.imported.events.get(i + 1), Some(Event::CompactRequested));
            if phase == "compacting"
                && phase_before != "compacting"
                && !next_is_compaction
                && !matches!(event, Event::CompactRequested | Event::ModelFailed { .. })
            {
                // The engine compacts here and the transcript shows no compaction: Claude Code
                // writes nothing for an auto-compaction that failed or was given up
                // (FINDINGS.md), and the request then goes out uncompacted, as here. The probe
                // is told its compaction failed, and follows on.
                let threshold = auto_compact_threshold(&probe_config);
                self.inferred.push(InferredStep {
                    seq,
                    what: format!("the engine's estimate reaches the auto-compact threshold ({threshold}, window {window}) and the transcript shows no compaction: taken as an auto-compaction that failed or was given up, which Claude Code does not write"),
                });
                self.decisions += 1;
                let failed = reloop_core::ModelError::new(
                    None,
                    "compaction_not_in_transcript",
                    "the transcript shows no compaction here",
                );
                let requests = probe.state().map_or(0, |s| s.context().requests());
                let event = Event::CompactFailed { error: failed, request: requests };
                if probe.push(seq, event, |step| step.ignored.is_none()) != Some(true) {
                    return;
                }
            }
        }
    }
}

/// The auto-compact threshold the engine uses for `config`.
fn auto_compact_threshold(config: &Config) -> u64 {
    // The core's own numbers: the window less the output reserve (at most 20,000) less 13,000.
    let reserve = u64::from(config.max_output_tokens.min(20_000));
    config.context_window.saturating_sub(reserve).saturating_sub(13_000)
}
