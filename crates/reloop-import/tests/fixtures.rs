//! Every real Claude Code transcript in the shared fixtures either imports (and then replays
//! identically, with a well-formed history, and survives export → import unchanged) or fails
//! with the specific error its content calls for.

mod common;

use reloop_core::{ContentBlock, Event};
use reloop_import::{export, parse_claude_code, ExportFormat, ImportError, ImportOptions};

/// Files that must not import, and the error each must give.
fn expected_error(name: &str) -> Option<fn(&ImportError) -> bool> {
    let empty: fn(&ImportError) -> bool = |e| matches!(e, ImportError::Empty { .. });
    let no_conversation: fn(&ImportError) -> bool = |e| matches!(e, ImportError::NoConversation { .. });
    let codex: fn(&ImportError) -> bool = |e| {
        matches!(e, ImportError::NotClaudeCode { line: 1, .. }) && e.to_string().contains("OpenAI Codex CLI rollout")
    };
    let only_commands: fn(&ImportError) -> bool =
        |e| matches!(e, ImportError::NothingToReplay { line: 4, .. }) && e.to_string().contains("command (1)");
    let file = name.rsplit('/').next().unwrap_or(name);
    match file {
        "0f13eeba-e6ed-42ea-ad8c-d8db37e1304e.jsonl" | "34d48ba8-bf7c-478e-aa05-b568b8be4cd1.jsonl" => Some(empty),
        // summaries only; snapshots only; summaries and snapshots
        "3f6ddfee-788c-48a5-8f7a-d43377b51472.jsonl"
        | "be89c3cd-bfbf-4c4f-a515-5af6e13249bf.jsonl"
        | "6d3dc917-03e0-448d-a7a5-d5e6c1a6dd27.jsonl"
        | "b8649630-2a03-472f-b005-712c4650e6e9.jsonl"
        | "e9040aa9-cf0d-4b25-a964-b30198f1f544.jsonl"
        | "a751b8dd-6b29-4eed-8cb9-64bc9a916a39.jsonl" => Some(no_conversation),
        // the session /clear created: only the command's own lines
        "0d3b22c1-ba90-4fd3-b8d2-056ffc626725.jsonl" => Some(only_commands),
        _ if file.starts_with("rollout-") => Some(codex),
        _ => None,
    }
}

fn snapshot_name(name: &str) -> String {
    name.trim_end_matches(".jsonl").replace('/', "__")
}

#[test]
fn every_fixture_imports_and_replays_or_fails_clearly() {
    let files = common::transcript_files();
    assert_eq!(files.len(), 39, "fixture transcripts found: {:#?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
    let (mut imported, mut refused) = (0, 0);
    for (name, path) in &files {
        let result = common::parse_file(name, path, &ImportOptions::default());
        match (expected_error(name), result) {
            (Some(check), Err(e)) => {
                assert!(check(&e), "{name}: unexpected error: {e}");
                assert!(e.to_string().starts_with(name.as_str()), "{name}: the error does not name the file: {e}");
                refused += 1;
            }
            (Some(_), Ok(_)) => panic!("{name}: imported, but it holds no conversation"),
            (None, Err(e)) => panic!("{name}: {e}"),
            (None, Ok(import)) => {
                let (header, steps) = common::journal(&import, "imported");
                let state = common::assert_replays(&header, &steps);
                common::assert_well_formed(&state);
                assert_eq!(header.run_config["provider"], "import");
                assert_eq!(header.run_config["file"], name.as_str());
                insta::assert_json_snapshot!(snapshot_name(name), import.summary);
                imported += 1;
            }
        }
    }
    assert_eq!((imported, refused), (29, 10));
}

#[test]
fn export_then_import_gives_the_same_events_on_every_fixture() {
    for (name, path) in common::transcript_files() {
        let Ok(first) = common::parse_file(&name, &path, &ImportOptions::default()) else { continue };
        let (header, steps) = common::journal(&first, "round-trip");
        let jsonl = export(ExportFormat::ClaudeJsonl, &header, &steps).unwrap();
        let second = parse_claude_code(&jsonl, "export.jsonl", &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: the export does not import: {e}\n{jsonl}"));
        assert_eq!(second.events, first.events, "{name}: events differ after export → import");
        // Times are not compared: a response is one line, so its blocks share the response's time.
        let (header2, steps2) = common::journal(&second, "round-trip");
        assert_eq!(export(ExportFormat::ClaudeJsonl, &header2, &steps2).unwrap(), jsonl, "{name}: export not stable");
    }
}

fn prompts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::UserInput { content, .. } => content.iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.chars().take(16).collect()),
                _ => None,
            }),
            _ => None,
        })
        .collect()
}

#[test]
fn branches_of_the_kfischer_session_are_picked_by_leaf() {
    let root = common::fixtures_root().join("kfischer-claude-history/-Users-user-project");
    let path = root.join("b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl");
    let parse = |leaf: Option<&str>| {
        common::parse_file("b3edadab.jsonl", &path, &ImportOptions::default().with_leaf(leaf.map(str::to_string)))
    };
    let shared = ["Hello I want to ", "ok edit it and a", "Ok now make a ta"];

    // Default: the latest leaf, branch 5: the interrupted prompt, then the retry.
    let latest = parse(None).unwrap();
    // Branches 3 and 4 were continued, so only branches 1, 2 and 5 end in leaves.
    assert_eq!(latest.summary.leaf, "38842167-8451-487e-9a65-4f6623b4ca8b");
    assert_eq!(latest.summary.leaves, 3);
    let mut expected: Vec<&str> = shared.to_vec();
    expected.extend(["Ok in the future", "Hi", "Ok ultrathink an", "Ok ultrathink an"]);
    assert_eq!(prompts(&latest.events), expected);
    assert_eq!(latest.summary.interrupts, 1);

    let branch = |leaf: &str, last: &str| {
        let import = parse(Some(leaf)).unwrap();
        let mut expected: Vec<&str> = shared.to_vec();
        expected.push(last);
        assert_eq!(prompts(&import.events), expected, "leaf {leaf}");
        let (header, steps) = common::journal(&import, "branch");
        common::assert_well_formed(&common::assert_replays(&header, &steps));
        assert_eq!(header.run_config["leaf"], leaf);
    };
    branch("51be2f36-8201-4dfc-a399-b59165dc8643", "Ok make another ");
    branch("39a76b25-bba8-42b8-a143-40f73d97598a", "Ok I came from t");
    branch("a625e20b-5313-4c2c-8d2f-da78e841406f", "Ok in the future");

    let err = parse(Some("no-such-uuid")).unwrap_err();
    assert!(matches!(err, ImportError::LeafNotFound { .. }), "{err}");
}
