//! 2.1.332's retracted answers: a response that asked for a tool without calling one is shown,
//! then retracted by a synthetic line, and the next answer supersedes it (recorded,
//! `malformed_tool_call/`). 2.1.197 shows none of this.

use serde_json::{json, Map, Value};

use super::super::usage::usage_json;
use super::SdkStream;

impl SdkStream {
    /// The streamed text is kept only where the profile may show it again as a retracted line.
    pub(super) fn keep_for_retraction(&mut self, text: &str) {
        if self.profile.profile().malformed.retract {
            self.response_text.push_str(text);
        }
    }

    /// 2.1.332 drops a response that asked for a tool without calling one: the stream shows it,
    /// then a synthetic line retracting it, and the next answer supersedes it.
    pub(super) fn retract(&mut self) {
        let rules = self.profile.profile();
        if !rules.malformed.retract {
            self.response_text.clear();
            return;
        }
        self.streaming.reset();
        // A bad answer after a retracted one supersedes it too, before being retracted itself.
        let (line, tail) = self.bad_answer_line();
        let retracted = self.emit_with_tail(line, true, tail);
        self.user_lines += 1;
        self.synthetic_line(rules.malformed.reminder.text, Some(retracted.clone()));
        self.supersedes = Some(retracted);
    }

    /// The last answer that asked for a tool without calling one, when the retries ran out
    /// (2.1.332 drops it from the history but prints it, superseding the one retracted before).
    pub(super) fn last_bad_answer(&mut self) {
        if !self.profile.profile().malformed.retract {
            return;
        }
        let (line, tail) = self.bad_answer_line();
        self.emit_with_tail(line, true, tail);
    }

    /// The `assistant` line of a bad answer (the text streamed of it), and the `supersedes` of
    /// the retracted answer before it, if any.
    fn bad_answer_line(&mut self) -> (Map<String, Value>, Vec<(&'static str, Value)>) {
        let text = std::mem::take(&mut self.response_text);
        let content = if text.is_empty() { json!([]) } else { json!([{"type": "text", "text": text}]) };
        let body = json!({
            "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": null, "stop_sequence": null,
            "usage": usage_json(&self.response_usage),
        });
        let mut line = Map::new();
        line.insert("type".into(), json!("assistant"));
        line.insert("message".into(), body);
        let tail = self.supersedes.take().map(|uuid| ("supersedes", json!([uuid]))).into_iter().collect();
        (line, tail)
    }
}
