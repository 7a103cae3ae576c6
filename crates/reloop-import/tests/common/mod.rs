//! Shared by the import tests: where the real fixtures live, and the two checks every imported
//! session must pass (it replays identically; its history is well-formed).
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use reloop_core::{transition, ContentBlock, Role, State};
use reloop_import::{import_into, parse_claude_code, ImportOptions, Imported};
use reloop_journal::{Journal, SessionHeader, StepRecord};

/// `shared/fixtures/real`, beside the repository (CI clones it there).
pub fn fixtures_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/real");
    assert!(
        root.is_dir(),
        "the real fixtures are missing: expected {} (clone the `shared` repository beside this one)",
        root.display()
    );
    root
}

/// Every `.jsonl` under the Claude Code fixture folders, sorted, as (relative name, path).
pub fn transcript_files() -> Vec<(String, PathBuf)> {
    let root = fixtures_root();
    let mut out = Vec::new();
    for dir in ["kfischer-claude-history", "marot-spotter", "codemie-code"] {
        walk(&root.join(dir), &mut out);
    }
    let mut named: Vec<(String, PathBuf)> = out
        .into_iter()
        .map(|p| (p.strip_prefix(&root).map(|r| r.display().to_string()).unwrap_or_default(), p))
        .collect();
    named.sort();
    named
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

pub fn parse_file(name: &str, path: &Path, opts: &ImportOptions) -> Result<Imported, reloop_import::ImportError> {
    let text = std::fs::read_to_string(path).unwrap();
    parse_claude_code(&text, name, opts)
}

/// Journals the import in a fresh in-memory journal; returns the header and steps read back.
pub fn journal(imported: &Imported, id: &str) -> (SessionHeader, Vec<StepRecord>) {
    let mut j = Journal::in_memory().unwrap();
    let report = import_into(&mut j, imported, id, 1_700_000_000_000).unwrap();
    let steps = j.steps(id).unwrap();
    assert_eq!(report.steps, steps.len());
    (j.header(id).unwrap(), steps)
}

/// Feeds the journaled events to the core again and compares every step with the journal.
/// Returns the final state.
pub fn assert_replays(header: &SessionHeader, steps: &[StepRecord]) -> State {
    let mut state = State::new(header.core_config.clone());
    for record in steps {
        assert_eq!(record.from_phase, state.phase(), "seq {}: from phase", record.seq);
        assert_eq!(record.turn_before, state.context().turn_count(), "seq {}: turn before", record.seq);
        let step = transition(state, record.event.clone());
        assert_eq!(serde_json::to_value(&step.effects).unwrap(), record.effects, "seq {}: effects", record.seq);
        assert_eq!(step.reason, record.reason, "seq {}: reason", record.seq);
        assert_eq!(step.state.digest(), record.digest, "seq {}: digest", record.seq);
        assert_eq!(step.state.phase(), record.to_phase, "seq {}: to phase", record.seq);
        state = step.state;
    }
    state
}

/// Every tool_use is answered by exactly one tool_result in the very next message (a user
/// message), and no tool_result answers anything else. A trailing assistant message whose calls
/// are in flight is only allowed when the state is still running them.
pub fn assert_well_formed(state: &State) {
    let messages = state.messages().messages();
    for (i, message) in messages.iter().enumerate() {
        let uses: Vec<&str> = message.tool_uses().map(|t| t.id.as_str()).collect();
        let results_here: Vec<&str> = message
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                _ => None,
            })
            .collect();
        if !results_here.is_empty() {
            assert_eq!(message.role, Role::User, "message {i}: tool results outside a user message");
            let prev: HashSet<&str> =
                i.checked_sub(1).map(|p| messages[p].tool_uses().map(|t| t.id.as_str()).collect()).unwrap_or_default();
            for id in &results_here {
                assert!(prev.contains(id), "message {i}: result for {id} answers no call of the previous message");
            }
        }
        if uses.is_empty() {
            continue;
        }
        let Some(next) = messages.get(i + 1) else {
            assert_eq!(state.phase(), "running_tools", "message {i}: calls {uses:?} are never answered");
            continue;
        };
        assert_eq!(next.role, Role::User, "message {i}: calls are not followed by a user message");
        for id in uses {
            let n =
                next.content.iter().filter(|b| matches!(b, ContentBlock::ToolResult(r) if r.tool_use_id == id)).count();
            assert_eq!(n, 1, "message {i}: call {id} answered {n} times");
        }
    }
}
