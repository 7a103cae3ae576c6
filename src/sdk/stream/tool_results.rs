//! Claude Code's `tool_use_result` on a tool result's `user` line: what the call did as data
//! (a Read's file and line counts, a Write's patch, an error's text), taken from the outcome as
//! the journal keeps it (flag 12), so a replay prints what the live run printed. Only the Claude
//! Code profiles print it; the outcome holds 2.1.332's shape, and 2.1.197's lacks a few keys.
//! 2.1.332 follows it with `tool_result_meta`, how the permission check ruled on the call.

use std::borrow::Cow;

use reloop_core::profile::{ProfileId, USER_REJECTED_KIND, USER_REJECTED_RESULT};
use reloop_core::{ContentBlock, ToolOutcome, ToolResultContent};
use serde_json::Value;

/// Keys 2.1.332 added to results 2.1.197 prints without them (tests/print/recorded/2.1.197/
/// tool_results/): Grep's totals, and an Edit's note that the file was never read (2.1.197
/// refuses such an Edit).
const NEWER_KEYS: &[&str] = &["totalFiles", "totalLines", "contentNotInModelContext"];

/// The outcomes' results (and 2.1.332's permission entries) waiting for the line of their
/// message.
#[derive(Default)]
pub(super) struct ToolResults {
    kept: std::collections::HashMap<String, (Option<Value>, Option<Value>)>,
    /// Each call's output as its tool gave it, until its line is printed: the reminders the core
    /// appends to a result (`<total_tokens>`, the model's name) reach the model only, and
    /// Claude Code prints the output untrimmed (2.1.332, `env/disable_*_sonnet_4_6`). Kept as
    /// the output's trimmed length and the whitespace trimmed off it: the rest is in the block.
    outputs: std::collections::HashMap<String, (usize, String)>,
}

impl ToolResults {
    /// Keeps what an outcome says the call did, under the profiles that print it.
    pub(super) fn note(&mut self, profile: ProfileId, outcome: &ToolOutcome) {
        if profile.profile().claude_code_version.is_none() {
            return;
        }
        if let ToolResultContent::Text(output) = &outcome.content {
            let trimmed = output.trim_end().len();
            self.outputs.insert(outcome.tool_use_id.clone(), (trimmed, output[trimmed..].to_string()));
        }
        let result = outcome.tool_use_result.as_ref().map(|r| shown(profile, r));
        let meta = outcome.tool_result_meta.clone().filter(|_| profile == ProfileId::ClaudeCode2_1_332);
        if result.is_some() || meta.is_some() {
            self.kept.insert(outcome.tool_use_id.clone(), (result, meta));
        }
    }

    /// `block` as Claude Code prints it: a tool result the core sent with reminders after it
    /// shows the tool's output alone.
    pub(super) fn printed<'a>(&mut self, block: &'a ContentBlock) -> Cow<'a, ContentBlock> {
        let ContentBlock::ToolResult(result) = block else { return Cow::Borrowed(block) };
        let Some((trimmed, tail)) = self.outputs.remove(&result.tool_use_id) else { return Cow::Borrowed(block) };
        let ToolResultContent::Text(sent) = &result.content else { return Cow::Borrowed(block) };
        let reminded = sent.get(trimmed..).is_some_and(|rest| rest.starts_with("\n\n<system-reminder>"));
        if !reminded {
            return Cow::Borrowed(block);
        }
        let mut result = result.clone();
        result.content = ToolResultContent::Text(format!("{}{tail}", &sent[..trimmed]));
        Cow::Owned(ContentBlock::ToolResult(result))
    }

    /// Keeps what Claude Code says of a call an interrupt stopped while it ran: the user
    /// rejected it, and 2.1.332 adds an entry saying it did not run for that reason
    /// (`interrupt/during_tool`).
    pub(super) fn rejected(&mut self, profile: ProfileId, tool_use_id: &str) {
        let meta = (profile == ProfileId::ClaudeCode2_1_332)
            .then(|| serde_json::json!({"id": tool_use_id, "non_execution_kind": USER_REJECTED_KIND}));
        self.kept.insert(tool_use_id.to_string(), (Some(Value::String(USER_REJECTED_RESULT.into())), meta));
    }

    /// The keys a line whose first block is a tool result ends with: the call's
    /// `tool_use_result` and 2.1.332's `tool_result_meta`, where the outcome kept them.
    pub(super) fn take(&mut self, blocks: &[ContentBlock]) -> Vec<(&'static str, Value)> {
        let Some(ContentBlock::ToolResult(first)) = blocks.first() else { return Vec::new() };
        let Some((result, meta)) = self.kept.remove(&first.tool_use_id) else { return Vec::new() };
        let mut tail: Vec<(&'static str, Value)> = result.map(|r| ("tool_use_result", r)).into_iter().collect();
        tail.extend(meta.map(|m| ("tool_result_meta", Value::Array(vec![m]))));
        tail
    }
}

/// The result as the profile's version prints it.
fn shown(profile: ProfileId, result: &Value) -> Value {
    let mut result = result.clone();
    if profile == ProfileId::ClaudeCode2_1_197 && result["_meta"].get(crate::mcp::MCP_SERVER_INFO).is_some() {
        // An MCP tool's: 2.1.197 names no server and lists no links (sdk_wire/mcp_*): the
        // content alone, or with the `structuredContent` it came from.
        return match result.get("structuredContent") {
            Some(structured) => serde_json::json!({"content": result["content"], "structuredContent": structured}),
            None => result["content"].take(),
        };
    }
    if profile == ProfileId::ClaudeCode2_1_197 {
        if let Value::Object(fields) = &mut result {
            fields.retain(|k, _| !NEWER_KEYS.contains(&k.as_str()));
            if fields.contains_key("agentId") {
                older_agent_summary(fields);
            }
        }
    }
    result
}

/// An `Agent` call's summary as 2.1.197 keeps it (`subagent/foreground`): no tools note, none of
/// 2.1.332's hand-back bookkeeping, and its usage without the newer keys.
fn older_agent_summary(fields: &mut serde_json::Map<String, Value>) {
    fields.retain(|k, _| !AGENT_NEWER_KEYS.contains(&k.as_str()));
    if let Some(Value::Array(content)) = fields.get_mut("content") {
        content.retain(|b| !b["text"].as_str().is_some_and(|t| t.starts_with("<tools-used-before-summary>")));
    }
    if let Some(Value::Object(usage)) = fields.get_mut("usage") {
        usage.retain(|k, _| k != "output_tokens_details" && k != "fallback_credit");
    }
}

/// The keys of an `Agent` call's summary that 2.1.332 added.
const AGENT_NEWER_KEYS: &[&str] =
    &["toolsUsed", "harnessNoteCount", "harnessTailCount", "harnessSectionHash", "canContinueAgent"];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_version_prints_its_own_keys() {
        let grep = json!({"mode": "files_with_matches", "filenames": ["a"], "numFiles": 1, "totalFiles": 1});
        assert_eq!(shown(ProfileId::ClaudeCode2_1_332, &grep), grep);
        assert_eq!(
            shown(ProfileId::ClaudeCode2_1_197, &grep),
            json!({"mode": "files_with_matches", "filenames": ["a"], "numFiles": 1})
        );
        let mut results = ToolResults::default();
        let mut outcome = ToolOutcome::error("t1", "x");
        outcome.tool_use_result = Some(json!("Error: x"));
        results.note(ProfileId::Reloop, &outcome);
        assert!(results.kept.is_empty() && results.outputs.is_empty(), "reloop's own profile prints none");
        outcome.tool_result_meta = Some(json!({"id": "t1"}));
        results.note(ProfileId::ClaudeCode2_1_332, &outcome);
        let line = [outcome.clone().into_block()];
        assert_eq!(
            results.take(&line),
            vec![("tool_use_result", json!("Error: x")), ("tool_result_meta", json!([{"id": "t1"}]))]
        );
        assert_eq!(results.take(&line), vec![], "printed once");
        results.note(ProfileId::ClaudeCode2_1_197, &outcome);
        assert_eq!(results.take(&line), vec![("tool_use_result", json!("Error: x"))], "2.1.197 prints no meta");
    }

    /// 2.1.332 `env/disable_*_sonnet_4_6`: the model is sent `…9\n\n<system-reminder>…`, stdout
    /// shows the Read's `…9\t` as it was.
    #[test]
    fn a_result_the_core_reminded_prints_as_the_tool_gave_it() {
        let mut results = ToolResults::default();
        let outcome = ToolOutcome::new("t1", ToolResultContent::Text("8\t}\n9\t".into()));
        results.note(ProfileId::ClaudeCode2_1_332, &outcome);
        let sent = ContentBlock::tool_result(
            "t1",
            "8\t}\n9\n\n<system-reminder>\n<total_tokens>5 tokens left</total_tokens>\n</system-reminder>",
            false,
        );
        assert_eq!(*results.printed(&sent), outcome.clone().into_block());
        assert_eq!(*results.printed(&sent), sent, "once");
        results.note(ProfileId::ClaudeCode2_1_332, &outcome);
        let rewritten = ContentBlock::tool_result("t1", "something else", false);
        assert_eq!(*results.printed(&rewritten), rewritten, "only appended reminders are left out");
    }

    /// tests/print/recorded/*/sdk_wire/mcp_*: 2.1.197 prints an MCP tool's content alone, or
    /// with its `structuredContent`; 2.1.332 adds the server and the resource links.
    #[test]
    fn an_mcp_result_loses_its_server_and_links_under_2_1_197() {
        let info = json!({crate::mcp::MCP_SERVER_INFO: {"name": "fixture", "version": ""}});
        let blocks = json!([{"type": "text", "text": "a"}]);
        let links = json!({"content": blocks, "_meta": info, "resourceLinks": [{"uri": "file:///a", "name": "a"}]});
        assert_eq!(shown(ProfileId::ClaudeCode2_1_332, &links), links);
        assert_eq!(shown(ProfileId::ClaudeCode2_1_197, &links), blocks);
        let structured = json!({"content": "{\"n\":1}", "_meta": info, "structuredContent": {"n": 1}});
        assert_eq!(
            shown(ProfileId::ClaudeCode2_1_197, &structured),
            json!({"content": "{\"n\":1}", "structuredContent": {"n": 1}})
        );
    }
}
