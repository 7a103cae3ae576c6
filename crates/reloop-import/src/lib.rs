//! # reloop-import: Claude Code transcripts in, reloop sessions out
//!
//! The contract:
//! * [`parse_claude_code`] reads one Claude Code session file (`~/.claude/projects/*/*.jsonl`,
//!   main session or subagent sidechain) and returns the [`Event`]s that, fed to
//!   [`reloop_core::transition()`] from a fresh state under [`Imported::core_config`], rebuild that
//!   conversation. The core is run while the events are chosen, so every event is one the core
//!   accepts in the phase it is in; where the transcript and the core disagree (results never
//!   written, a prompt typed while a request was in flight), the import synthesizes the smallest
//!   event that lets the core follow, and counts it in the [`ImportSummary`].
//! * One conversation per import: the branch ending at the latest leaf, or at [`ImportOptions::leaf`].
//! * What Claude Code writes about its own loop becomes the fact the core needs to take the same
//!   step itself, under the profile of the transcript's `version`: Stop-hook feedback and
//!   `stop_hook_summary` lines are the Stop hooks' runs (`HookDone`), a `compact_boundary` asks
//!   the core to compact before the request in flight and its summary is the `CompactDone`, the
//!   `max_turns_reached` attachment sets `--max-turns`, `api_error` lines are failed requests the
//!   core retries, a `model_fallback` line is the overload that tipped the switch, a
//!   `queued_command` is a `QueuedInput`, an answer 2.1.332 retracted is the malformed call its
//!   reminder names. Settings no line holds (the output limit, a larger window) are inferred and
//!   listed in the run config's `inferred_config`; steps no line holds in its `inferred`.
//! * What Claude Code was seen to decide ([`Imported::observed`]) is kept apart from those
//!   inputs, so a check can feed the inputs to a profile and compare the decisions.
//! * Lines that mean nothing to the loop (snapshots, progress, slash commands, meta text) are
//!   skipped and counted by kind, never fatal. Files that hold no conversation at all (0 bytes,
//!   summaries or snapshots only, another tool's log) are an [`ImportError`] naming the file and line.
//! * [`import_into`] journals the events as a new session whose steps replay identically through
//!   the core, and whose final history answers every `tool_use` in the next message.
//! * [`export`] writes a journaled session back out as API messages, stream-json, or a Claude Code
//!   transcript that re-imports to the same events.
//!
//! Pure functions over text and a journal handle: no clock, no file system, no network.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod claude_dir;
mod emit;
mod error;
mod export;
mod items;
mod loop_lines;
mod observed;
mod permission_decision;
mod rules;
mod skips;
mod time;
mod transcript;

use std::collections::{BTreeMap, HashSet};

use reloop_core::{Config, Event, Fold};
use reloop_journal::{JournalBackend, SessionHeader, StepRecord, Writer, ENGINE_VERSION};
use serde::Serialize;
use serde_json::{json, Value};

pub use claude_dir::{agent_id, project_dir_name};
pub use error::{ExportError, ImportError};
pub use export::{export, ExportFormat, Exporter, Sidechain, TranscriptStyle};
pub use observed::{Decision, Interrupted, Observation};
pub use rules::{check_imported, check_rules, Disagreement, InferredStep, InputCheck, RulesReport};
pub use skips::Skip;
pub use time::format_rfc3339_ms;

/// How to import.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ImportOptions {
    /// The uuid of the line that ends the conversation to import; by default the latest leaf.
    /// A transcript holds every branch a checkpoint revert left behind; this picks one.
    pub leaf: Option<String>,
}

impl ImportOptions {
    /// These options with the conversation ending at `leaf` (`None`: the latest leaf); the
    /// struct is `non_exhaustive`, so a caller outside the crate sets the leaf this way.
    pub fn with_leaf(mut self, leaf: Option<String>) -> Self {
        self.leaf = leaf;
        self
    }
}

/// What was read, and what it was made of. Counts are of the imported conversation unless
/// noted; `skipped` counts lines (or items) that produced no event, by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ImportSummary {
    /// Non-blank lines in the file.
    pub lines: usize,
    /// Lines on the imported conversation.
    pub chain_lines: usize,
    /// Conversations the file holds (leaves), the imported one included.
    pub leaves: usize,
    /// The uuid of the imported conversation's last line.
    pub leaf: String,
    /// The file is a subagent's transcript.
    pub sidechain: bool,
    /// Prompts the person typed (and text used as one), each a `UserInput`.
    pub prompts: usize,
    /// Prompts Claude Code wrote itself (`promptSource: "system"`: a background agent's task
    /// notification), each a `UserInput` that starts a query nobody typed.
    pub prompts_from_claude_code: usize,
    /// Model responses, each a `ModelDone`.
    pub responses: usize,
    /// Content blocks of those responses, each a `ModelBlock`.
    pub model_blocks: usize,
    /// Tool results, each a `ToolDone`, synthesized ones included.
    pub tool_results: usize,
    /// `[Request interrupted by user]` markers mapped to aborts.
    pub interrupts: usize,
    /// API error lines, each a request that failed for good (`ModelFailed`).
    pub api_errors: usize,
    /// Stop hook feedback Claude Code wrote as a user message: each a Stop hook's block
    /// (`HookDone`), the core writing the feedback message itself.
    pub stop_hook_feedback: usize,
    /// Messages queued while the loop ran (`queued_command`), each a `QueuedInput`.
    pub queued: usize,
    /// Compaction boundaries crossed.
    pub compactions: usize,
    /// Compaction summaries Claude Code wrote as a user message, taken as a prompt.
    pub compact_summaries: usize,
    /// Meta or command text used as a prompt because a response answered it.
    pub meta_prompts: usize,
    /// Aborts the transcript does not write, added so the next prompt can start a query.
    pub synthesized_aborts: usize,
    /// `Interrupted by user` results for calls the conversation went past unanswered.
    pub synthesized_tool_results: usize,
    /// Results written by an interrupt, left for the core's abort to write.
    pub withheld_tool_results: usize,
    /// Lines (or items) that produced no event, by kind (`file-history-snapshot`,
    /// `other_branch`, `sidechain`, ...): what the import left out, counted so nothing is lost
    /// silently.
    pub skipped: BTreeMap<String, usize>,
    /// The core's phase after the last event (`done`, or `awaiting_model` for a transcript that
    /// ends with a request in flight).
    pub final_phase: String,
}

/// A parsed transcript, ready to journal.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Imported {
    /// The session header's `run_config`: `provider: "import"`, the source file, model, cwd,
    /// Claude Code's session id and version, and the leaf.
    pub header_run_config: Value,
    /// The rules the events were chosen under; journal them with the session.
    pub core_config: Config,
    /// The transcript's Claude Code `version`, and whether the profile chosen for it (in
    /// `core_config`) is that exact version rather than the nearest known one.
    pub version: Option<(String, bool)>,
    /// The events that rebuild the conversation through the core, in order.
    pub events: Vec<Event>,
    /// When each event happened, from the transcript's timestamps (Unix ms), one per event.
    pub at_ms: Vec<u64>,
    /// What was read and what it became, for the person importing.
    pub summary: ImportSummary,
    /// What Claude Code was seen to decide, in transcript order: kept apart from the inputs
    /// (`events`) so that a check can run the inputs through the profile's engine and compare.
    pub observed: Vec<Observation>,
    /// Where facts of the transcript were left out because the core had no use for them, in
    /// order (the counts are in `summary.skipped`).
    pub skips: Vec<Skip>,
}

/// What [`import_into`] journaled.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ImportReport {
    /// The new session's id, as given.
    pub session_id: String,
    /// Steps journaled, one per event.
    pub steps: usize,
    /// Messages in the session's final history.
    pub messages: usize,
    /// The core's phase after the last step.
    pub final_phase: String,
    /// Why the session ended, when it did (`completed`, `aborted_streaming`, ...).
    pub terminal_reason: Option<String>,
}

/// The core's rules for imported sessions: an API error line in a transcript is a final failure
/// (Claude Code already retried), so the core must not plan retries of its own; Claude Code
/// decided when to compact (the transcript's boundaries say where), so reloop's own
/// auto-compaction is off. What the transcript shows of the run's settings (Stop hooks,
/// `--max-turns`, the output limit) is set as Claude Code ran; what it does not show is
/// inferred, and said so in `inferred_config`.
fn import_config(
    items: &[items::Item],
    sent_max_tokens: Option<u32>,
    model: Option<&str>,
    profile: reloop_core::profile::ProfileId,
) -> (Config, Vec<Value>) {
    // Today's behaviours (flags), as a session recorded now gets them, but for the
    // `<total_tokens>` reminder: it rewrites tool results, and the transcript holds them as the
    // tools gave them.
    let mut flags = reloop_core::Flags::current();
    if flags.has(reloop_core::Flag::TotalTokensReminder.number()) {
        flags.flip(reloop_core::Flag::TotalTokensReminder.number());
    }
    let mut config = Config::default()
        .with_flags(flags)
        .with_max_retries(0)
        .with_auto_compact(false)
        .with_profile(profile)
        .with_model(model.unwrap_or_default());
    let mut inferred = Vec::new();
    // The retries Claude Code allowed, where it wrote them down (2.1.332 names them with each).
    let max_retries = items.iter().find_map(|i| match i {
        items::Item::ApiRetry { max_retries, .. } => Some(*max_retries),
        _ => None,
    });
    // A stream resumed after it broke (2.1.332) is a retry no line counts: the budget is then
    // Claude Code's own (the 10 its retry lines name), not none.
    let resumed = items.iter().any(|i| matches!(i, items::Item::Hidden { kind: "cut_stream_resume", .. }));
    let unwritten = if resumed { Config::default().max_retries } else { 0 };
    if max_retries.is_none() && resumed {
        inferred.push(json!({
            "field": "max_retries",
            "value": unwritten,
            "what": format!("max_retries {unwritten}, Claude Code's own: the transcript resumes a broken stream and names no retry budget"),
        }));
    }
    config = config.with_max_retries(max_retries.unwrap_or(unwritten));
    let stop_hooks =
        items.iter().any(|i| matches!(i, items::Item::StopHookFeedback { .. } | items::Item::StopHookSummary { .. }));
    config = config.with_stop_hooks(stop_hooks);
    let max_turns = items.iter().find_map(|i| match i {
        items::Item::MaxTurns { max_turns, .. } => Some(*max_turns),
        _ => None,
    });
    config = config.with_max_turns(max_turns);
    let named = sent_max_tokens.or_else(|| {
        items.iter().find_map(|i| match i {
            items::Item::ApiError { text, .. } => loop_lines::output_limit_in(text),
            _ => None,
        })
    });
    let limit = match named {
        Some(limit) => limit,
        None => {
            let model_name = model.unwrap_or("");
            let limit = profile.profile().max_tokens_for(model_name);
            inferred.push(json!({
                "field": "max_output_tokens",
                "value": limit,
                "what": format!(
                    "the output limit {limit} is what {} sends for {}; the transcript does not name it",
                    profile.name(),
                    if model_name.is_empty() { "an unnamed model" } else { model_name }
                ),
            }));
            limit
        }
    };
    config = config.with_max_output_tokens(limit);
    // A window larger than the usual 200,000 tokens shows in what the requests carried.
    let largest = items
        .iter()
        .filter_map(|i| match i {
            items::Item::Response(r) => Some(
                r.usage
                    .input_tokens
                    .saturating_add(r.usage.cache_creation_input_tokens)
                    .saturating_add(r.usage.cache_read_input_tokens)
                    .saturating_add(r.usage.output_tokens),
            ),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let window = config.context_window;
    // The core refuses a request this close to the window (its blocking limit: the output
    // reserve, at most 20,000, and 3,000 more).
    if largest.saturating_add(23_000) > window {
        config = config.with_context_window(1_000_000);
        inferred.push(json!({
            "field": "context_window",
            "value": 1_000_000,
            "what": format!(
                "a request carried {largest} tokens, more than a {window}-token window holds: the import takes the 1M window"
            ),
        }));
    }
    (config, inferred)
}

/// The refusal of a transcript whose `parentUuid` chain loops back to the line `at`.
fn parent_cycle(transcript: &transcript::Transcript, origin: &str, at: usize) -> ImportError {
    let line = &transcript.lines[at];
    ImportError::ParentCycle { file: origin.to_string(), line: line.no, uuid: line.uuid.clone().unwrap_or_default() }
}

/// Reads a Claude Code transcript. `origin` names the file in errors and in the run config.
pub fn parse_claude_code(text: &str, origin: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let transcript = transcript::Transcript::parse(text, origin)?;
    let leaves = transcript.leaves();
    let leaf = match &opts.leaf {
        Some(uuid) => transcript
            .find_uuid(uuid)
            .ok_or_else(|| ImportError::LeafNotFound { file: origin.to_string(), uuid: uuid.clone() })?,
        None => match (transcript.latest_leaf(), transcript.cycle()) {
            (Some(leaf), _) => leaf,
            (None, Some(at)) => return Err(parent_cycle(&transcript, origin, at)),
            (None, None) => {
                return Err(ImportError::NoConversation {
                    file: origin.to_string(),
                    found: "message lines without a `uuid`".to_string(),
                })
            }
        },
    };
    let chain = transcript.chain(leaf).map_err(|at| parent_cycle(&transcript, origin, at))?;
    let on_chain: HashSet<usize> = chain.iter().copied().collect();
    let lines: Vec<&transcript::Line> = chain.iter().map(|&i| &transcript.lines[i]).collect();

    let mut skipped: BTreeMap<String, usize> = transcript.dropped.clone();
    for (i, line) in transcript.lines.iter().enumerate() {
        if on_chain.contains(&i) {
            continue;
        }
        // Messages off the chain belong to other branches; everything else counts by type.
        let message = matches!(line.kind.as_str(), "user" | "assistant");
        let kind = match (message, line.sidechain && !lines.iter().all(|l| l.sidechain)) {
            (true, true) => "sidechain".to_string(),
            (true, false) => "other_branch".to_string(),
            (false, _) => line.kind.clone(),
        };
        *skipped.entry(kind).or_default() += 1;
    }
    let items = items::build(&lines, origin, &mut skipped)?;

    let model = items.iter().rev().find_map(|item| match item {
        items::Item::Response(r) => r.model.clone().filter(|m| !m.starts_with('<')),
        _ => None,
    });
    // After a fallback the answers come from the fallback model: the session's model is the
    // one asked first, the fallback the one that answered after the switch.
    let fallback_at = items.iter().position(|i| matches!(i, items::Item::ModelFallback { .. }));
    let (named_from, named_to) = match fallback_at.map(|at| &items[at]) {
        Some(items::Item::ModelFallback { from, to, .. }) => (from.clone(), to.clone()),
        _ => (None, None),
    };
    let fallback = named_to.or_else(|| {
        fallback_at.and_then(|at| {
            items[at..].iter().find_map(|item| match item {
                items::Item::Response(r) => r.model.clone().filter(|m| !m.starts_with('<')),
                _ => None,
            })
        })
    });
    let model = match fallback_at {
        Some(_) if named_from.is_some() => named_from,
        Some(at) => transcript
            .lines
            .iter()
            .filter(|l| l.kind == "api-request")
            .find_map(|l| {
                l.fields().object("params").and_then(|p| p.get("model")).and_then(Value::as_str).map(str::to_string)
            })
            .or_else(|| {
                items[..at].iter().find_map(|item| match item {
                    items::Item::Response(r) => r.model.clone().filter(|m| !m.starts_with('<')),
                    _ => None,
                })
            })
            .or(model),
        None => model,
    };
    let model = model.as_deref();
    // The rules of the Claude Code version that wrote the transcript (the nearest one known); a
    // transcript that names none gets reloop's own.
    let version = lines.iter().rev().find_map(|l| l.fields().str_field("version").map(str::to_string));
    let nearest = version.as_deref().and_then(reloop_core::profile::ProfileId::nearest);
    let profile = nearest.map_or(reloop_core::profile::ProfileId::Reloop, |(p, _)| p);
    // 2.1.332 writes each request's parameters (`api-request`): the output limit it asked for.
    let sent_max_tokens = transcript.lines.iter().filter(|l| l.kind == "api-request").find_map(|l| {
        let fields = l.fields();
        let max = fields.object("params").and_then(|p| p.get("max_tokens")).and_then(Value::as_u64);
        max.and_then(|m| u32::try_from(m).ok())
    });
    let (mut core_config, inferred_config) = import_config(&items, sent_max_tokens, model, profile);
    if let Some(fallback) = &fallback {
        let limit = profile.profile().max_tokens_for(fallback);
        core_config =
            core_config.with_fallback_model(Some(fallback.clone())).with_fallback_max_output_tokens(Some(limit));
    }
    let mut emitter = emit::Emitter::new(core_config.clone());
    emitter.limit_inferred = inferred_config
        .iter()
        .find(|c| c["field"] == "max_output_tokens")
        .and_then(|c| c["what"].as_str().map(str::to_string));
    for (kind, n) in skipped {
        *emitter.skipped_mut().entry(kind).or_default() += n;
    }
    emitter.run(items);
    let leaf_line = &transcript.lines[leaf];
    if emitter.events.is_empty() {
        let found = emitter.summary.skipped.iter().map(|(k, n)| format!("{k} ({n})")).collect::<Vec<_>>();
        return Err(ImportError::NothingToReplay {
            file: origin.to_string(),
            line: leaf_line.no,
            found: format!("lines that are not conversation: {}", found.join(", ")),
        });
    }

    let first_str = |key: &str| lines.iter().find_map(|l| l.fields().str_field(key).map(str::to_string));
    let last_str = |key: &str| lines.iter().rev().find_map(|l| l.fields().str_field(key).map(str::to_string));
    let header_run_config = json!({
        "provider": "import",
        "source": "claude-code",
        "file": origin,
        "model": model,
        "cwd": first_str("cwd"),
        "claude_code_session_id": first_str("sessionId"),
        "version": last_str("version"),
        "leaf": leaf_line.uuid,
        // Steps no line of the transcript held: `why` and `view` mark them.
        "inferred": emitter.inferred.iter().map(|(seq, what)| json!({"seq": seq, "what": what})).collect::<Vec<_>>(),
        // Settings of the run the transcript does not hold, and what the import took them to be.
        "inferred_config": inferred_config,
        // Whose rules the events were chosen under, and whether they are the transcript's
        // version's own or the nearest known.
        "profile": profile.name(),
        "profile_exact": nearest.map(|(_, exact)| exact),
    });
    let mut summary = std::mem::take(&mut emitter.summary);
    summary.lines = transcript.lines.len() + transcript.dropped.values().sum::<usize>();
    summary.chain_lines = chain.len();
    summary.leaves = leaves.len();
    summary.leaf = leaf_line.uuid.clone().unwrap_or_default();
    summary.sidechain = lines.iter().all(|l| l.sidechain);
    Ok(Imported {
        header_run_config,
        core_config,
        version: version.zip(nearest.map(|(_, exact)| exact)),
        events: std::mem::take(&mut emitter.events),
        at_ms: std::mem::take(&mut emitter.at_ms),
        summary,
        observed: std::mem::take(&mut emitter.observed),
        skips: std::mem::take(&mut emitter.skips),
    })
}

/// Runs the events through the core and journals them as a new session `session_id`, each step
/// written as it is computed, all in one transaction: an event the core refuses stops the import
/// and rolls it back, so a refused import leaves no partial session behind, and no step is held.
pub fn import_into(
    journal: &mut dyn JournalBackend,
    imported: &Imported,
    session_id: &str,
    created_at_ms: u64,
) -> Result<ImportReport, ImportError> {
    if imported.events.len() != imported.at_ms.len() {
        return Err(ImportError::TimesMismatch { events: imported.events.len(), times: imported.at_ms.len() });
    }
    let header = SessionHeader {
        id: session_id.to_string(),
        created_at_ms,
        engine_version: ENGINE_VERSION.to_string(),
        core_config: imported.core_config.clone(),
        run_config: imported.header_run_config.clone(),
        parent: None,
    };
    let mut fold = Fold::new(&imported.core_config);
    let mut refused = None;
    let written = journal.create_session_from(&header, Writer::Take, &mut |sink| {
        for (i, (event, &at_ms)) in imported.events.iter().zip(&imported.at_ms).enumerate() {
            let Some(before) = fold.before() else { break };
            let seq = i as u64 + 1;
            let stepped = fold.push(seq, event.clone(), |step| {
                if step.ignored.is_some() {
                    refused = Some(ImportError::RejectedEvent {
                        index: i,
                        kind: event.kind().to_string(),
                        phase: before.phase.to_string(),
                    });
                    // Any error rolls the session back; the refusal above is what is reported.
                    return Err(reloop_journal::JournalError::Empty);
                }
                sink(&StepRecord::of(seq, at_ms, event.clone(), before.phase, before.turn, step))
            });
            stepped.transpose()?;
        }
        Ok(())
    });
    if let Some(refused) = refused {
        return Err(refused);
    }
    written?;
    let state = fold.state().ok_or(ImportError::Journal(reloop_journal::JournalError::Empty))?;
    Ok(ImportReport {
        session_id: session_id.to_string(),
        steps: imported.events.len(),
        messages: state.messages().len(),
        final_phase: state.phase().to_string(),
        terminal_reason: state.terminal().map(|t| t.reason().as_str().to_string()),
    })
}
