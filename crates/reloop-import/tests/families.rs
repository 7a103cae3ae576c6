//! Transcripts the real Claude Code 2.1.197 and 2.1.332 wrote, one per family of loop behaviour
//! (`tests/recorded/<version>/<family>/`, each with a NOTE.md of how it was made), import as the
//! session reloop itself runs for the same behaviour: one prompt where the person typed one,
//! the continue and stop reasons a native session has, and every step no line held marked as
//! inferred. What Claude Code was seen to decide is kept beside the inputs (`observed`).

mod common;

use std::path::PathBuf;

use reloop_core::{Command, Effect, Notice};
use reloop_import::{Decision, ImportOptions, Imported};
use reloop_journal::StepRecord;

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.332"];

fn recorded(version: &str, family: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/recorded");
    assert!(root.is_dir(), "the recorded transcripts are missing: expected {}", root.display());
    root.join(version).join(family).join("transcript.jsonl")
}

/// An import of one recording, journaled and replayed.
struct Session {
    imported: Imported,
    steps: Vec<StepRecord>,
}

fn import(version: &str, family: &str) -> Session {
    let path = recorded(version, family);
    let name = format!("{version}/{family}");
    let imported =
        common::parse_file(&name, &path, &ImportOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (header, steps) = common::journal(&imported, "family");
    common::assert_well_formed(&common::assert_replays(&header, &steps));
    assert_eq!(imported.version.as_ref().map(|(v, exact)| (v.as_str(), *exact)), Some((version, true)), "{name}");
    assert_eq!(header.core_config.profile.name(), format!("claude-code-{version}"), "{name}");
    Session { imported, steps }
}

impl Session {
    /// The decisions as `why` names them: continues and stops by reason, retries, compactions.
    fn decisions(&self) -> Vec<String> {
        let mut out = Vec::new();
        for step in &self.steps {
            let effects: Vec<Effect> = serde_json::from_value(step.effects.clone()).unwrap_or_default();
            for effect in &effects {
                match effect {
                    Effect::Command(Command::WaitRetry(_)) => out.push("retry".to_string()),
                    Effect::Notice(Notice::CompactBoundary { trigger, .. }) => {
                        out.push(format!("compacted ({trigger})"))
                    }
                    Effect::Notice(Notice::CompactionFailed { .. }) => out.push("compaction_failed".to_string()),
                    Effect::Notice(Notice::SwitchModel { .. }) => out.push("fallback".to_string()),
                    _ => {}
                }
            }
            if let Some(reason) = &step.reason {
                out.push(reason.name().to_string());
            }
        }
        out
    }

    fn prompts(&self) -> usize {
        self.imported.summary.prompts
    }

    /// What the import marked as its own inference, in its words.
    fn inferred(&self) -> Vec<String> {
        self.imported.header_run_config["inferred"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["what"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn observed(&self) -> Vec<Decision> {
        self.imported.observed.iter().map(|o| o.decision.clone()).collect()
    }
}

fn repeat(reason: &str, n: usize) -> Vec<String> {
    vec![reason.to_string(); n]
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_blocking_stop_hook_is_stop_hook_blocking_with_its_count_in_both_forms() {
    for version in VERSIONS {
        for form in ["exit2", "json"] {
            let s = import(version, &format!("stop_hook_block/{form}"));
            assert_eq!(s.prompts(), 1, "{version} {form}");
            let mut want = names(&["next_turn"]);
            want.extend(repeat("stop_hook_blocking", 3));
            want.push("completed".into());
            assert_eq!(s.decisions(), want, "{version} {form}");
            let blocks: Vec<u32> = s
                .observed()
                .into_iter()
                .filter_map(|d| match d {
                    Decision::StopHookBlocked { block } => Some(block),
                    _ => None,
                })
                .collect();
            assert_eq!(blocks, [1, 2, 3], "{version} {form}");
            // 2.1.332 sums up the hooks that let the turn end; 2.1.197 writes nothing then.
            let marked = s.inferred().iter().any(|w| w.contains("no Stop hook outcome"));
            assert_eq!(marked, version == "2.1.197", "{version} {form}: {:?}", s.inferred());
        }
    }
}

#[test]
fn a_hook_that_always_blocks_ends_at_claude_code_s_cap() {
    for version in VERSIONS {
        for form in ["cap", "json_cap"] {
            let s = import(version, &format!("stop_hook_block/{form}"));
            assert_eq!(s.prompts(), 1);
            let mut want = repeat("stop_hook_blocking", 8);
            want.push("completed".into());
            assert_eq!(s.decisions(), want, "{version} {form}");
            assert_eq!(
                s.steps.last().and_then(|st| st.reason.as_ref()).map(|r| r.explain()).unwrap_or_default(),
                "A hook blocked the turn from ending 8 consecutive times — overriding and ending turn"
            );
        }
    }
}

#[test]
fn max_turns_is_the_max_turns_stop() {
    for version in VERSIONS {
        let s = import(version, "max_turns");
        assert_eq!(s.decisions(), names(&["next_turn", "max_turns"]), "{version}");
        assert_eq!(s.imported.core_config.max_turns, Some(2));
        assert_eq!(s.observed().last(), Some(&Decision::MaxTurns { max_turns: 2 }), "{version}");
    }
}

#[test]
fn auto_compaction_is_a_compaction_where_claude_code_made_it() {
    for version in VERSIONS {
        // The reactive recording's boundary says `auto` too: its 400 is in no line.
        for (family, turns) in [("auto_compact/auto", 3), ("auto_compact/reactive", 2)] {
            let s = import(version, family);
            assert_eq!(s.prompts(), 1, "{version} {family}: the summary is no prompt");
            let mut want = repeat("next_turn", turns);
            want.extend(names(&["compacted (auto)", "completed"]));
            assert_eq!(s.decisions(), want, "{version} {family}");
            assert!(s
                .observed()
                .iter()
                .any(|d| matches!(d, Decision::Compacted { trigger: Some(t), pre_tokens: Some(_) } if t == "auto")));
            assert!(
                s.inferred().iter().any(|w| w.contains("token counts are reloop's estimates")),
                "{:?}",
                s.inferred()
            );
        }
    }
}

#[test]
fn a_compaction_that_fails_after_prompt_too_long_ends_prompt_too_long() {
    for version in VERSIONS {
        let s = import(version, "auto_compact/reactive_failed");
        assert_eq!(s.decisions(), names(&["next_turn", "next_turn", "prompt_too_long"]), "{version}");
        assert!(s.inferred().iter().any(|w| w.contains("compaction failed")), "{:?}", s.inferred());
    }
}

#[test]
fn api_errors_are_the_model_error_with_the_retries_the_transcript_records() {
    for version in VERSIONS {
        let s = import(version, "api_errors/no_retry_500");
        assert_eq!(s.decisions(), names(&["next_turn", "model_error"]), "{version}");
        assert!(matches!(s.observed().last(), Some(Decision::ModelError { status: Some(500), .. })));
    }
    // 2.1.197 writes no line per retry; 2.1.332 does (system/api_error).
    assert_eq!(import("2.1.197", "api_errors/retried_then_ok").decisions(), names(&["completed"]));
    assert_eq!(
        import("2.1.332", "api_errors/retried_then_ok").decisions(),
        names(&["retry", "retry", "retry", "completed"])
    );
    let s = import("2.1.332", "api_errors/overloaded_exhausted");
    assert_eq!(s.decisions(), names(&["retry", "retry", "model_error"]));
    assert!(matches!(s.observed().last(), Some(Decision::ModelError { status: Some(529), .. })));
}

#[test]
fn the_output_limit_is_the_transcript_s_and_resumes_are_recoveries() {
    for version in VERSIONS {
        let s = import(version, "output_limit/exhausted");
        let mut want = repeat("max_output_tokens_recovery", 3);
        want.push("model_error".into());
        assert_eq!(s.decisions(), want, "{version}");
        let limit = if version == "2.1.197" { 64_000 } else { 128_000 };
        assert_eq!(s.imported.core_config.max_output_tokens, limit, "{version}");
        assert!(s.observed().contains(&Decision::OutputTokensExhausted { limit }), "{version}");
        // Named by the error line (and by 2.1.332's requests): nothing about it is inferred.
        assert!(!s.inferred().iter().any(|w| w.contains("output limit")), "{:?}", s.inferred());
        let resumed = import(version, "output_limit/resumed");
        assert_eq!(resumed.decisions(), names(&["max_output_tokens_recovery", "completed"]), "{version}");
        // 2.1.197 names the limit nowhere in a transcript that ends well: the profile's, marked.
        let marked = resumed.inferred().iter().any(|w| w.contains("output limit 64000"));
        assert_eq!(marked, version == "2.1.197", "{version}: {:?}", resumed.inferred());
    }
}

#[test]
fn malformed_calls_are_retried_as_each_version_retries_them() {
    let s = import("2.1.197", "malformed_tool_call/no_block_exhausted");
    assert_eq!(s.decisions(), names(&["malformed_tool_call_retry", "model_error"]));
    let s = import("2.1.332", "malformed_tool_call/no_block_exhausted");
    assert_eq!(
        s.decisions(),
        names(&["malformed_tool_call_retry", "malformed_tool_call_retry", "malformed_tool_use_exhausted"])
    );
    // The answers 2.1.332 took back are kept only as uuids: marked.
    assert_eq!(s.inferred().iter().filter(|w| w.contains("took back")).count(), 2);
    for version in VERSIONS {
        let s = import(version, "malformed_tool_call/no_block_recovered");
        assert_eq!(s.decisions(), names(&["malformed_tool_call_retry", "next_turn", "completed"]), "{version}");
        assert_eq!(s.prompts(), 1, "{version}");
        let s = import(version, "malformed_tool_call/schema_rejected");
        assert!(s.observed().iter().any(|d| matches!(d, Decision::ToolInputRejected { .. })), "{version}");
    }
}

#[test]
fn interrupts_are_aborts_where_they_happened() {
    for version in VERSIONS {
        let s = import(version, "interrupt/during_tool");
        assert_eq!(s.decisions(), names(&["aborted_tools", "completed"]), "{version}");
        assert_eq!(s.prompts(), 2, "{version}: the prompt before and the one after");
        let s = import(version, "interrupt/mid_stream");
        assert_eq!(s.decisions(), names(&["aborted_streaming", "completed"]), "{version}");
    }
    let s = import("2.1.332", "interrupt/sigint");
    assert_eq!(s.decisions(), names(&["aborted_streaming"]));
}

#[test]
fn denied_calls_are_permission_denials() {
    for version in VERSIONS {
        for family in ["permission_denied/default_mode", "permission_denied/dont_ask"] {
            let s = import(version, family);
            assert!(s.observed().iter().any(|d| matches!(d, Decision::PermissionDenied { .. })), "{version} {family}");
            assert_eq!(s.decisions().last().map(String::as_str), Some("completed"));
        }
    }
}

#[test]
fn a_background_agent_s_notification_is_claude_code_s_prompt_not_the_person_s() {
    let s = import("2.1.332", "subagent/default");
    assert_eq!((s.prompts(), s.imported.summary.prompts_from_claude_code), (1, 1));
    assert_eq!(s.decisions(), names(&["next_turn", "completed", "completed"]));
}

#[test]
fn a_model_fallback_is_the_core_s_switch_after_the_overloads() {
    let s = import("2.1.332", "model_fallback");
    assert_eq!(s.decisions(), names(&["retry", "retry", "fallback", "completed"]));
    assert_eq!(s.imported.core_config.model, "claude-opus-5-5");
    assert_eq!(s.imported.core_config.fallback_model.as_deref(), Some("claude-sonnet-4-6"));
    assert!(s.observed().contains(&Decision::ModelFallback));
    // The third overload, which tipped the switch, is in no line.
    assert!(s.inferred().iter().any(|w| w.contains("switch models")), "{:?}", s.inferred());
    // 2.1.197 writes neither the retries nor the switch: only the answer the fallback gave.
    assert_eq!(import("2.1.197", "model_fallback").decisions(), names(&["completed"]));
}

#[test]
fn a_message_queued_while_tools_ran_joins_their_results_and_is_no_prompt() {
    for version in VERSIONS {
        let s = import(version, "queued_command");
        assert_eq!(s.prompts(), 1, "{version}");
        assert_eq!(s.imported.summary.queued, 1, "{version}");
        let queued = s.imported.events.iter().position(|e| e.kind() == "queued_input").expect("queued");
        assert_eq!(s.imported.events[queued + 1].kind(), "tool_done", "{version}: before the batch's last result");
    }
}

#[test]
fn the_plain_families_read_as_a_native_session() {
    for version in VERSIONS {
        for (family, want) in [
            ("thinking", names(&["next_turn", "completed"])),
            ("tool_error", names(&["next_turn", "next_turn", "completed"])),
            ("queued_command", names(&["next_turn", "next_turn", "completed"])),
            ("subagent/foreground", names(&["next_turn", "completed"])),
        ] {
            let s = import(version, family);
            assert_eq!(s.decisions(), want, "{version} {family}");
            assert_eq!(s.prompts(), 1, "{version} {family}");
            assert!(s.inferred().is_empty(), "{version} {family}: {:?}", s.inferred());
        }
    }
}

#[test]
fn every_recording_exports_and_imports_back_to_the_same_events() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/recorded");
    let mut files = Vec::new();
    for version in VERSIONS {
        let mut dirs = vec![root.join(version)];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.file_name().is_some_and(|n| n == "transcript.jsonl") {
                    files.push(path);
                }
            }
        }
    }
    assert!(files.len() >= 60, "{} recordings", files.len());
    for path in files {
        let name = path.display().to_string();
        let first = common::parse_file(&name, &path, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let (header, steps) = common::journal(&first, "round-trip");
        let jsonl = reloop_import::export(reloop_import::ExportFormat::ClaudeJsonl, &header, &steps).unwrap();
        let second = reloop_import::parse_claude_code(&jsonl, "export.jsonl", &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: the export does not import: {e}"));
        assert_eq!(second.events, first.events, "{name}: events differ after export → import");
    }
}
