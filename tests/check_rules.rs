//! `reloop check --rules`: Claude Code transcripts as tests of reloop's profiles. The engine,
//! fed what the model, the tools and the hooks answered, must decide what Claude Code did; a
//! transcript edited so that Claude Code did otherwise must fail, naming the rule.

mod common;

use std::path::{Path, PathBuf};

use common::{stderr, stdout, Workspace};
use serde_json::{json, Value};

fn recorded() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/reloop-import/tests/recorded")
}

fn real() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/real");
    assert!(
        root.is_dir(),
        "the real fixtures are missing: expected {} (shared/ beside the repository)",
        root.display()
    );
    root
}

/// `check --rules --json PATH`: the exit code and the document.
fn check_json(ws: &Workspace, path: &Path) -> (Option<i32>, Value) {
    let out = ws.reloop(&["check", "--rules", "--json", path.to_str().unwrap()]);
    let doc = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (out.status.code(), doc)
}

/// The session files the recorder kept below `dir`: each scenario's `transcript.jsonl` and its
/// subagents' `subagents/agent-*.jsonl`.
fn transcripts_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            let in_subagents = path.parent().and_then(Path::file_name).is_some_and(|p| p == "subagents");
            if path.is_dir() {
                transcripts_under(&path)
            } else {
                usize::from(
                    name == "transcript.jsonl"
                        || (in_subagents && name.starts_with("agent-") && name.ends_with(".jsonl")),
                )
            }
        })
        .sum()
}

/// Each transcript's status and, for a disagreement, its code, by the file's path below `root`.
fn verdicts(doc: &Value, root: &Path) -> Vec<(String, String)> {
    doc["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let file = t["file"].as_str().unwrap();
            let name = Path::new(file).strip_prefix(root).map_or(file.to_string(), |p| p.display().to_string());
            let verdict = match t["disagreement"]["code"].as_str() {
                Some(code) => code.to_string(),
                None => t["status"].as_str().unwrap().to_string(),
            };
            (name, verdict)
        })
        .collect()
}

#[test]
fn every_recorded_transcript_agrees() {
    let ws = Workspace::seed();
    let junit = ws.dir.path().join("reports/rules.xml");
    let out = ws.reloop(&["check", "--rules", recorded().to_str().unwrap(), "--junit", junit.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let (code, doc) = check_json(&ws, &recorded());
    assert_eq!(code, Some(0));
    let verdicts = verdicts(&doc, &recorded());
    let failing: Vec<_> = verdicts.iter().filter(|(_, v)| v != "agrees").cloned().collect();
    assert_eq!(failing, Vec::<(String, String)>::new());
    // Both versions of every family agree, subagents' sidechains included, and the recorder's
    // other files are no transcripts.
    let on_disk = transcripts_under(&recorded());
    assert!(on_disk >= 124, "{on_disk}");
    assert_eq!(verdicts.len(), on_disk, "{verdicts:?}");
    assert!(verdicts.iter().any(|(n, v)| n.contains("2.1.332/subagent/default/subagents/agent-") && v == "agrees"));
    assert_eq!(doc["agree"], on_disk);
    assert!(doc["skipped"].as_array().unwrap().iter().all(|f| !f.as_str().unwrap().ends_with("transcript.jsonl")));
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains(&format!("tests=\"{on_disk}\" failures=\"0\" errors=\"0\" skipped=\"0\"")), "{xml}");
}

#[test]
fn every_real_transcript_agrees_with_its_profile() {
    let ws = Workspace::seed();
    for family in ["kfischer-claude-history", "marot-spotter", "codemie-code"] {
        let (code, doc) = check_json(&ws, &real().join(family));
        assert_eq!(code, Some(0), "{family}: {doc:#}");
        let agreed = doc["agree"].as_u64().unwrap();
        assert!(agreed >= 4, "{family}: {doc:#}");
        for t in doc["transcripts"].as_array().unwrap() {
            if t["status"] == "agrees" {
                assert!(t["decisions"].as_u64().unwrap() > 0 || t["steps"].as_u64().unwrap() <= 3, "{t:#}");
            }
        }
    }
    // The tool-heavy sessions' tool inputs are checked against the tools' schemas, one by one.
    let (_, doc) = check_json(&ws, &real().join("codemie-code/claude/session-196820da.jsonl"));
    assert_eq!(doc["transcripts"][0]["inputs_checked"], 56, "{doc:#}");
    assert_eq!(doc["transcripts"][0]["profile"], "claude-code-2.1.197");
}

#[test]
fn a_stream_broken_after_part_of_the_answer_is_kept_as_each_version_keeps_it() {
    let ws = Workspace::seed();
    // 2.1.197: the half answer (stop_reason null), then `API Error: Overloaded`: a cut stream,
    // which it does not retry.
    let rel = "2.1.197/api_errors/sse_overloaded/transcript.jsonl";
    let (code, doc) = check_json(&ws, &recorded().join(rel));
    assert_eq!(code, Some(0), "{doc:#}");
    // The same error line after a finished answer comes after the engine's stop.
    let mut lines = lines(rel);
    let half = lines.iter_mut().find(|l| l["type"] == "assistant" && l["message"]["stop_reason"].is_null()).unwrap();
    half["message"]["stop_reason"] = json!("end_turn");
    let edited = write(&ws, "finished-then-error.jsonl", &lines);
    let d = disagreement(&ws, &edited);
    assert_eq!(d["code"], "RULES-S001", "{d:#}");
    // 2.1.332: the half answer kept (written `end_turn`) and the model asked to resume, three
    // times, then the answer: each resume a decision of the engine's, then the end of the turn.
    let rel = "2.1.332/api_errors/sse_overloaded/transcript.jsonl";
    let (code, doc) = check_json(&ws, &recorded().join(rel));
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["transcripts"][0]["decisions"], 4, "{doc:#}");
    let inferred = doc["transcripts"][0]["inferred"].to_string();
    assert!(inferred.contains("Claude Code's resume line says the stream broke"), "{inferred}");
    assert!(inferred.contains("max_retries 10"), "{inferred}");
    // The same transcript under 2.1.197's rules: that version ends the run on the first cut.
    let mut lines = self::lines(rel);
    for line in lines.iter_mut().filter(|l| l["version"] == "2.1.332") {
        line["version"] = json!("2.1.197");
    }
    let edited = write(&ws, "resumed-under-2.1.197.jsonl", &lines);
    let (code, doc) = check_json(&ws, &edited);
    assert_eq!(code, Some(3), "{doc:#}");
    assert_eq!(doc["transcripts"][0]["profile"], "claude-code-2.1.197", "{doc:#}");
}

/// The lines of a recorded transcript, as JSON.
fn lines(rel: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(recorded().join(rel)).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn write(ws: &Workspace, name: &str, lines: &[Value]) -> PathBuf {
    let path = ws.dir.path().join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The one disagreement of an edited transcript: exit 3, and its JSON.
fn disagreement(ws: &Workspace, path: &Path) -> Value {
    let (code, doc) = check_json(ws, path);
    assert_eq!(code, Some(3), "{doc:#}");
    doc["transcripts"][0]["disagreement"].clone()
}

/// A copy of the transcript's last model answer, sent again after `parent`.
fn one_more_answer(lines: &[Value], parent: &Value) -> Value {
    let mut answer = lines.iter().rev().find(|l| l["type"] == "assistant").unwrap().clone();
    answer["uuid"] = json!("00000000-0000-4000-8000-0000000000aa");
    answer["parentUuid"] = parent["uuid"].clone();
    answer["message"]["id"] = json!("msg_one_too_many");
    answer["requestId"] = json!("req_one_too_many");
    answer
}

#[test]
fn a_tool_input_the_schema_rejects_recorded_as_accepted_disagrees() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let rel = format!("{version}/malformed_tool_call/schema_rejected/transcript.jsonl");
        let original = recorded().join(&rel);
        let (code, _) = check_json(&ws, &original);
        assert_eq!(code, Some(0), "{rel}");
        // The refusal of the schema-breaking Read becomes a result: the call ran.
        let mut lines = lines(&rel);
        let refused = lines
            .iter_mut()
            .find(|l| {
                l["message"]["content"][0]["type"] == "tool_result" && l.to_string().contains("InputValidationError")
            })
            .unwrap();
        refused["message"]["content"][0]["content"] = json!("     1\tthe file's first line");
        refused["message"]["content"][0]["is_error"] = json!(false);
        refused["toolUseResult"] = json!({"type": "text"});
        let edited = write(&ws, &format!("schema-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-V001", "{d:#}");
        assert!(
            d["claude_code"].as_str().unwrap().contains("Read (")
                && d["claude_code"].as_str().unwrap().contains("was run"),
            "{d:#}"
        );
        assert!(
            d["engine"].as_str().unwrap().contains("InputValidationError: Read failed due to the following"),
            "{d:#}"
        );
        assert_eq!(d["rule"], "the Read tool's input schema");
        // The refusal in other words than the engine's: the model reads them.
        let mut lines = self::lines(&rel);
        let refused = lines.iter_mut().find(|l| l.to_string().contains("is missing")).unwrap();
        let text = refused.to_string().replacen("is missing", "is absent", 1);
        *refused = serde_json::from_str(&text).unwrap();
        let edited = write(&ws, &format!("wording-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-V003", "{d:#}");
        assert!(d["engine"].as_str().unwrap().contains("The required parameter `file_path` is missing"), "{d:#}");
        // A call the schema accepts, recorded as refused for its input.
        let mut lines = self::lines(&format!("{version}/max_turns/transcript.jsonl"));
        let ran = lines
            .iter_mut()
            .find(|l| {
                l["message"]["content"][0]["type"] == "tool_result" && l["message"]["content"][0]["is_error"] != true
            })
            .unwrap();
        ran["message"]["content"][0]["content"] = json!("<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing</tool_use_error>");
        ran["message"]["content"][0]["is_error"] = json!(true);
        let edited = write(&ws, &format!("refused-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-V002", "{d:#}");
    }
}

#[test]
fn input_cut_by_the_output_limit_is_refused_in_claude_code_s_words() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        // `{"__unparsedToolInput": {"raw", "len"}}` is the unfinished JSON reloop carries as text.
        let (code, doc) =
            check_json(&ws, &recorded().join(format!("{version}/output_limit/tool_use_cut/transcript.jsonl")));
        assert_eq!(code, Some(0), "{doc:#}");
        assert_eq!(doc["transcripts"][0]["inputs_checked"], 1, "{doc:#}");
    }
}

#[test]
fn one_response_too_many_after_the_max_turns_stop_disagrees() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let rel = format!("{version}/max_turns/transcript.jsonl");
        let mut lines = lines(&rel);
        let stop = lines.iter().position(|l| l["attachment"]["type"] == "max_turns_reached").unwrap();
        let extra = one_more_answer(&lines, &lines[stop]);
        lines.push(extra);
        let edited = write(&ws, &format!("max-turns-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-S001", "{d:#}");
        assert_eq!(d["line"], lines.len(), "{d:#}");
        assert!(d["engine"].as_str().unwrap().starts_with("the engine had stopped: max_turns"), "{d:#}");
        assert_eq!(d["rule"], "max_turns 2");
        // The attachment naming a limit the run did not stop at disagrees too.
        let mut lines = self::lines(&rel);
        lines[stop]["attachment"]["maxTurns"] = json!(3);
        let edited = write(&ws, &format!("max-turns-3-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-D006", "{d:#}");
        assert!(d["engine"].as_str().unwrap().starts_with("next_turn"), "{d:#}");
    }
}

#[test]
fn a_stop_hook_obeyed_a_ninth_time_disagrees_with_the_cap() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let rel = format!("{version}/stop_hook_block/cap/transcript.jsonl");
        // Unedited: nine blocks, the ninth written and not obeyed, as both versions do.
        let (code, doc) = check_json(&ws, &recorded().join(&rel));
        assert_eq!(code, Some(0), "{doc:#}");
        // Edited: the model is asked a tenth time after the ninth block.
        let mut lines = lines(&rel);
        // After the last line of the conversation (the 9th feedback; 2.1.332's cap warning).
        let last = lines.iter().rev().find(|l| l["uuid"].is_string()).unwrap().clone();
        let extra = one_more_answer(&lines, &last);
        lines.push(extra);
        let edited = write(&ws, &format!("cap-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-S001", "{d:#}");
        assert!(
            d["engine"]
                .as_str()
                .unwrap()
                .starts_with("the engine had stopped: completed: A hook blocked the turn from ending"),
            "{d:#}"
        );
        assert_eq!(d["rule"], "stop_hook_block_cap 8");
        // Edited: a tenth block's feedback after the ninth, no answer after it.
        let mut lines = self::lines(&rel);
        let ninth = lines
            .iter()
            .rev()
            .find(|l| l["message"]["content"].as_str().is_some_and(|c| c.starts_with("Stop hook feedback:")))
            .unwrap()
            .clone();
        let mut tenth = ninth.clone();
        tenth["uuid"] = json!("00000000-0000-4000-8000-0000000000bb");
        tenth["parentUuid"] = last["uuid"].clone();
        lines.push(tenth);
        let edited = write(&ws, &format!("cap-tenth-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-D002", "{d:#}");
        assert!(d["engine"].as_str().unwrap().starts_with("no turn ends here"), "{d:#}");
        // A block the transcript holds no feedback for is no block: the model's answer after an
        // answer that asked for no tool is a turn Claude Code went on with by itself.
        let mut lines = self::lines(&rel);
        let feedback: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l["message"]["content"].as_str().is_some_and(|c| c.starts_with("Stop hook feedback:")))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(feedback.len(), 9, "{rel}");
        let gone = lines.remove(feedback[2]);
        for l in lines.iter_mut().filter(|l| l["parentUuid"] == gone["uuid"]) {
            l["parentUuid"] = gone["parentUuid"].clone();
        }
        let edited = write(&ws, &format!("cap-gap-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        // (2.1.197 writes nothing else of the hooks: the import supplies a block no feedback
        // shows; 2.1.332's hook summary says the hooks passed, so the answer comes after the
        // engine's stop.)
        let want = if version == "2.1.197" { "RULES-D008" } else { "RULES-S001" };
        assert_eq!(d["code"], want, "{d:#}");
        assert!(
            d["engine"].as_str().unwrap().contains("the turn ends")
                || d["engine"].as_str().unwrap().contains("completed"),
            "{d:#}"
        );
    }
}

#[test]
fn compactions_are_checked_against_the_auto_compact_threshold_both_ways() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let rel = format!("{version}/auto_compact/auto/transcript.jsonl");
        // Unedited: the engine's own estimate reaches the threshold where Claude Code compacted.
        let (code, doc) = check_json(&ws, &recorded().join(&rel));
        assert_eq!(code, Some(0), "{doc:#}");
        assert!(!doc.to_string().contains("reactive"), "{doc:#}");
        // The responses' usage made small: Claude Code's compaction is under the engine's
        // threshold.
        let mut lines = lines(&rel);
        for line in lines.iter_mut().filter(|l| l["type"] == "assistant") {
            for key in ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] {
                if let Some(n) = line["message"]["usage"][key].as_u64() {
                    line["message"]["usage"][key] = json!(n.min(1000));
                }
            }
        }
        let edited = write(&ws, &format!("small-usage-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-D009", "{d:#}");
        assert_eq!(d["claude_code"], "the history was compacted (auto, 190043 tokens by Claude Code's count)");
        assert_eq!(d["rule"], "auto-compact threshold 167000 (context window 200000)");
        // The boundary and its summary taken out: the engine compacts where the transcript shows
        // none, which Claude Code's failed compactions look like: inferred, and said.
        let mut lines = self::lines(&rel);
        let boundary = lines.iter().find(|l| l["subtype"] == "compact_boundary").unwrap().clone();
        let summary = lines.iter().find(|l| l["isCompactSummary"] == true).unwrap().clone();
        lines.retain(|l| l["uuid"] != boundary["uuid"] && l["uuid"] != summary["uuid"]);
        for l in lines.iter_mut().filter(|l| l["parentUuid"] == boundary["uuid"] || l["parentUuid"] == summary["uuid"])
        {
            l["parentUuid"] = boundary["logicalParentUuid"].clone();
        }
        let edited = write(&ws, &format!("no-boundary-{version}.jsonl"), &lines);
        let (code, doc) = check_json(&ws, &edited);
        assert_eq!(code, Some(0), "{doc:#}");
        let inferred = doc["transcripts"][0]["inferred"].to_string();
        assert!(inferred.contains("taken as an auto-compaction that failed or was given up"), "{inferred}");
    }
}

#[test]
fn malformed_call_retries_ended_early_disagree() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let rel = format!("{version}/malformed_tool_call/no_block_exhausted/transcript.jsonl");
        let mut lines = lines(&rel);
        // One retry fewer than the version's rule: its reminder (and 2.1.197's second answer)
        // taken out, the chain closed over the gap.
        let reminder = lines.iter().rposition(|l| l["isMeta"] == true && l["type"] == "user").unwrap();
        let mut gone = vec![reminder];
        if version == "2.1.197" {
            gone.push(reminder + 1);
        }
        for &at in gone.iter().rev() {
            let line = lines.remove(at);
            for l in lines.iter_mut().filter(|l| l["parentUuid"] == line["uuid"]) {
                l["parentUuid"] = line["parentUuid"].clone();
            }
        }
        let edited = write(&ws, &format!("malformed-{version}.jsonl"), &lines);
        let d = disagreement(&ws, &edited);
        assert_eq!(d["code"], "RULES-D004", "{d:#}");
        assert_eq!(
            d["claude_code"],
            "the run ended: \"The model's tool call could not be parsed (retry also failed).\""
        );
        assert!(d["engine"].as_str().unwrap().starts_with("the engine goes on: malformed_tool_call_retry"), "{d:#}");
        let retries = if version == "2.1.197" { 1 } else { 2 };
        assert_eq!(d["rule"], format!("claude-code-{version}: malformed tool call, {retries} retries"));
    }
}

#[test]
fn a_session_named_alone_brings_its_subagents_sidechains() {
    let ws = Workspace::seed();
    for version in ["2.1.197", "2.1.332"] {
        let session = recorded().join(format!("{version}/subagent/foreground/transcript.jsonl"));
        let (code, doc) = check_json(&ws, &session);
        assert_eq!(code, Some(0), "{doc:#}");
        let files = verdicts(&doc, &recorded());
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files[1].0.contains("/subagent/foreground/subagents/agent-"), "{files:?}");
    }
}

#[test]
fn an_unreadable_transcript_is_bad_input_and_a_folder_without_one_too() {
    let ws = Workspace::seed();
    let broken = ws.dir.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"message\":\n").unwrap();
    let out = ws.reloop(&["check", "--rules", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).starts_with("UNREADABLE "), "{}", stdout(&out));
    let empty = ws.dir.path().join("none");
    std::fs::create_dir(&empty).unwrap();
    let out = ws.reloop(&["check", "--rules", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    // --json goes with --rules only.
    let out = ws.reloop(&["check", "--json", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// Hostile folders end: a symlink back up the tree is not walked, and a FIFO named `*.jsonl` is
/// not opened (it would block for ever).
#[test]
fn a_folder_with_a_link_loop_and_a_fifo_is_checked_without_following_either() {
    let ws = Workspace::seed();
    let folder = ws.dir.path().join("suite");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(recorded().join("2.1.332/max_turns/transcript.jsonl"), folder.join("max_turns.jsonl")).unwrap();
    std::os::unix::fs::symlink(&folder, folder.join("loop")).unwrap();
    let fifo = folder.join("pipe.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (code, doc) = check_json(&ws, &folder);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(verdicts(&doc, &folder), vec![("max_turns.jsonl".to_string(), "agrees".to_string())], "{doc:#}");
}
