//! What a built-in command answered without the model (`/compact`, `/clear`, 2.1.197's unknown
//! command) leaves for the model: Claude Code sends its caveat, the command and its output with
//! the next prompt, in each version's words, and reloop's stream-json sessions do the same
//! (`reloop_core::local_lines`). Each recording's requests are held to reloop's, message for
//! message where the prompt's lines are concerned; the sessions replay identically.

mod common;

use common::hooks_play::{play, prompt_lines, recorded_requests, VERSIONS};
use serde_json::Value;

fn holds(scenario: &str) {
    for version in VERSIONS {
        let played = play(version, scenario);
        let recorded = recorded_requests(version, scenario);
        // The hooks' folder, as the recorder named it.
        let context = version == "2.1.197";
        let ours: Vec<Vec<String>> = prompt_lines(&played.requests, context)
            .into_iter()
            .map(|texts| texts.into_iter().map(|t| t.replace(&played.hooks_dir, "/tmp/reloop-cc-hooks")).collect())
            .collect();
        assert_eq!(ours, prompt_lines(&recorded, context), "{version} {scenario}: the prompts and their local lines");
        assert!(played.replays_identical, "{version} {scenario}");
        // A rerun sends them again with their prompt, and compacts where `/compact` was typed:
        // every request as recorded.
        assert_eq!(played.rerun.0, Some(0), "{version} {scenario}: {}", played.rerun.1);
        // The session file keeps them as Claude Code's does: a user line each (the caveat meta),
        // a failure's output a `system` line (a `/clear`'s new session is the recording's other
        // file).
        let dir = common::hooks_play::recorded_dir(version, scenario);
        let mut files = vec![dir.join("transcript.jsonl")];
        files.extend(std::fs::read_dir(dir.join("other")).into_iter().flatten().flatten().map(|e| e.path()));
        let transcript: Vec<Value> =
            files.iter().flat_map(|f| common::hooks_play::json_lines(&std::fs::read_to_string(f).unwrap())).collect();
        let kept = |lines: &[Value]| -> Vec<Value> {
            lines
                .iter()
                .filter_map(|l| {
                    let text = match l["type"].as_str() {
                        Some("user") => l["message"]["content"].as_str()?,
                        Some("system") if l["subtype"] == "local_command" => l["content"].as_str()?,
                        _ => return None,
                    };
                    let local = ["<local-command-", "<command-name>"].iter().any(|p| text.starts_with(p));
                    let text = text.replace(&played.hooks_dir, "/tmp/reloop-cc-hooks");
                    local.then(|| {
                        serde_json::json!([l["type"], l["isMeta"] == true, text, l["commandRun"], l["commandOutcome"]])
                    })
                })
                .collect()
        };
        let written = kept(&played.session_file);
        let recorded = kept(&transcript);
        assert!(!written.is_empty(), "{version} {scenario}: {:#?}", played.session_file);
        assert!(
            recorded.windows(written.len()).any(|w| w == written.as_slice()),
            "{version} {scenario}: the session file's lines: {written:#?} {recorded:#?}"
        );
    }
}

/// `/clear` between queries: the new conversation's first prompt carries the `/clear`'s caveat,
/// command and (empty) output.
#[test]
fn a_clear_s_lines_go_with_the_new_conversation_s_first_prompt() {
    holds("settings_slash/stream_clear");
}

/// `/compact` between queries: its `Compacted ` line (with its PreCompact hooks' note) goes
/// with the next prompt, after the summary and what the compaction gave back.
#[test]
fn a_compaction_s_lines_go_with_the_next_prompt() {
    holds("settings_slash/stream_compact");
}

/// A PreCompact hook blocked the `/compact`: 2.1.197 keeps the block as the command's output,
/// 2.1.332 as its failure.
#[test]
fn a_blocked_compaction_s_lines_say_so_in_each_version_s_way() {
    holds("settings_slash/stream_compact_hooks");
}

/// 2.1.332 sends a prompt naming no command to the model after a reminder
/// (`settings_slash/unknown`, `typo`, `typo_hidden`, `sdk36/stream_local`): its words as recorded (the nearest
/// command named when one is within two edits), the commands the
/// session's `system/init` lists named in place of Claude Code's, and reloop's two built-ins
/// counted as its others are. 2.1.197 answers such a prompt itself (tests/sdk_local.rs).
#[test]
fn an_unknown_command_goes_to_the_model_after_2_1_332_s_reminder() {
    const OPENS: &str = "<system-reminder>\nThe user's message starts with the slash command";
    for scenario in
        ["settings_slash/unknown", "settings_slash/typo", "settings_slash/typo_hidden", "sdk36/stream_local"]
    {
        let played = play("2.1.332", scenario);
        let reminders = |requests: &[Value]| -> Vec<String> {
            let blocks =
                requests.iter().filter_map(|r| r["messages"].as_array()).flatten().filter(|m| m["role"] == "user");
            let texts = blocks.filter_map(|m| m["content"].as_array()).flatten().filter_map(|b| b["text"].as_str());
            let mut out: Vec<String> =
                texts.filter(|t| t.starts_with(OPENS)).map(|t| t.trim_end().to_string()).collect();
            out.dedup();
            out
        };
        let init = played.lines.iter().find(|l| l["subtype"] == "init").unwrap();
        let listed: Vec<String> =
            init["slash_commands"].as_array().unwrap().iter().map(|c| format!("/{}", c.as_str().unwrap())).collect();
        // A command the model may not run is listed by `init`, counted by the reminder, not named
        // (`typo_hidden`'s `/greet`).
        let hidden = if scenario.ends_with("typo_hidden") { vec!["/greet".to_string()] } else { Vec::new() };
        let ours: Vec<String> = listed.into_iter().filter(|c| !hidden.contains(c)).collect();
        let more = 2 + hidden.len();
        let expected: Vec<String> = reminders(&recorded_requests("2.1.332", scenario))
            .into_iter()
            .map(|text| {
                let (head, rest) = text.split_once("Slash commands available in this session: ").unwrap();
                let (_, tail) = rest.split_once(" more. ").unwrap();
                let available = match ours.is_empty() {
                    true => format!("This session has {more} slash commands, but none can be named here."),
                    false => format!("Slash commands available in this session: {}, and {more} more.", ours.join(", ")),
                };
                format!("{head}{available} {tail}")
            })
            .collect();
        assert!(!expected.is_empty(), "{scenario}");
        assert_eq!(reminders(&played.requests), expected, "{scenario}");
    }
}

/// 2.1.197 sends the files a `/compact` between queries gave back (`Called the Read tool …`, a
/// `role: "system"` message) after the next prompt, where a compaction within a query leaves
/// them after the kept messages (flag 42).
#[test]
fn the_files_a_compaction_by_hand_gave_back_follow_the_next_prompt_in_2_1_197() {
    let scenario = "settings_slash/stream_compact";
    let played = play("2.1.197", scenario);
    // Where the last request puts the given-back message and the prompt, by place.
    let places = |requests: &[Value]| -> (usize, usize) {
        let messages = requests.last().unwrap()["messages"].as_array().unwrap().clone();
        let text = |m: &Value| match &m["content"] {
            Value::String(t) => t.clone(),
            Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
            other => other["head"].as_str().unwrap_or_default().to_string(),
        };
        let at = |what: &str| messages.iter().position(|m| text(m).contains(what)).unwrap();
        (at("再说一遍"), at("Called the Read tool"))
    };
    let (prompt, given_back) = places(&played.requests);
    assert_eq!(given_back, prompt + 1, "{:#?}", played.requests.last());
    let (prompt, given_back) = places(&recorded_requests("2.1.197", scenario));
    assert_eq!(given_back, prompt + 1, "the recording");
}

/// After a `/compact` between queries 2.1.332 sends no date message (an empty system message
/// stands where a compaction within a query puts `Today's date is …`), and reloop neither
/// (flag 43).
#[test]
fn no_date_follows_a_compaction_by_hand_in_2_1_332() {
    let scenario = "settings_slash/stream_compact";
    let played = play("2.1.332", scenario);
    let dates = |requests: &[Value]| -> usize {
        let last = requests.last().unwrap()["messages"].as_array().unwrap().clone();
        last.iter()
            .filter(|m| m["role"] == "system")
            .filter(|m| serde_json::to_string(&m["content"]).unwrap().contains("Today's date is"))
            .count()
    };
    assert_eq!(dates(&recorded_requests("2.1.332", scenario)), 0, "the recording");
    assert_eq!(dates(&played.requests), 0, "{:#?}", played.requests.last());
}

/// After a `/compact` between queries 2.1.332 sends the first file it gave back as a message of
/// its own, a plain string (its `Called the Read tool …` reminder), and the rest with the next
/// prompt; reloop too (flag 46).
#[test]
fn the_first_file_a_compaction_by_hand_gave_back_goes_alone_in_2_1_332() {
    for scenario in ["settings_slash/stream_compact", "settings_slash/stream_compact_two_reads"] {
        let played = play("2.1.332", scenario);
        // The messages after the kept answer, up to the prompt's: the lone one, then the
        // first block of the next.
        let after_answer = |requests: &[Value], project: &str| -> (Value, String) {
            let messages = requests.last().unwrap()["messages"].as_array().unwrap().clone();
            let answer = messages.iter().position(|m| m["role"] == "assistant").unwrap();
            let alone =
                serde_json::to_string(&messages[answer + 1]).unwrap().replace(project, "/tmp/reloop-cc-project");
            let next = &messages[answer + 2]["content"][0]["text"];
            (serde_json::from_str(&alone).unwrap(), next.as_str().unwrap_or_default().chars().take(50).collect())
        };
        let ours = after_answer(&played.requests, &played.cwd);
        let theirs = after_answer(&recorded_requests("2.1.332", scenario), "/tmp/reloop-cc-project");
        assert_eq!(ours, theirs, "{scenario}");
        assert!(ours.0["content"].as_str().unwrap().contains("Called the Read tool"), "{scenario}: {ours:?}");
        assert!(theirs.1.starts_with("<system-reminder>\nResult of calling the Read tool:"), "{scenario}");
        assert!(played.replays_identical, "{scenario}");
    }
}
