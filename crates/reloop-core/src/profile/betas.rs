//! The `anthropic-beta` header and the `context_management` each Claude Code version sends with a
//! request, as recorded (every `requests.jsonl` under tests/print/recorded/ and
//! crates/reloop-import/tests/recorded/, and `env/disable_*` for the thinking switches). The betas
//! depend on the model (its family and generation), on the thinking asked for and on the effort
//! sent; none of it changes what the loop does, so the driver reads it for the request only.

use serde_json::{json, Value};

/// Which version's betas a profile sends (`None` on [`super::WireRule::betas`]: reloop's, the
/// 1M-context one alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BetaRule {
    /// Claude Code 2.1.197's list.
    V2_1_197,
    /// Claude Code 2.1.332's list.
    V2_1_332,
}

/// Claude Code's own beta, first in its list (after the thinking ones for Haiku).
const CLAUDE_CODE: &str = "claude-code-20250219";
const ONE_M: &str = "context-1m-2025-08-07";
const INTERLEAVED: &str = "interleaved-thinking-2025-05-14";
/// The beta 2.1.332's first guess after a refusal leaves out ([`super::RequestGuess`]).
pub(super) const TOKEN_COUNT: &str = "thinking-token-count-2026-05-13";
const CONTEXT_MANAGEMENT: &str = "context-management-2025-06-27";
const CACHING_SCOPE: &str = "prompt-caching-scope-2026-01-05";
const MID_SYSTEM: &str = "mid-conversation-system-2026-04-07";
const EFFORT: &str = "effort-2025-11-24";
const PER_TURN: &str = "per-turn-control-2026-07-01";
const MID_TOOLS: &str = "mid-conversation-tool-changes-2026-07-01";
/// 2.1.332's beta for deferred tools, which it leaves out with tool search off
/// (`ENABLE_TOOL_SEARCH=false`, `error_endings/invalid_request_no_tool_search`).
pub const ADVANCED_TOOL_USE_BETA: &str = "advanced-tool-use-2025-11-20";
const DISPLAY_UPDATES: &str = "thinking-display-updates-2026-08-18";
const FALLBACK_CREDIT: &str = "fallback-credit-2026-06-01";

/// 2.1.197 sends `mid-conversation-system` to these models (by id prefix) only.
const MID_SYSTEM_MODELS: &[&str] = &["claude-opus-4-8", "claude-sonnet-5"];
/// 2.1.332 sends `per-turn-control` and `mid-conversation-tool-changes` to these only.
const PER_TURN_MODELS: &[&str] = &["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"];

/// Whether Claude Code counts `model` as one that thinks: a Claude model past the 3 family (a
/// `claude-3-7-sonnet-latest` request carried no thinking beta in either version).
fn thinks(model: &str) -> bool {
    model.starts_with("claude-") && !model.starts_with("claude-3-")
}

impl BetaRule {
    /// The betas, in the version's order, of a request to `model` (`[1m]` kept: the 1M
    /// variant's beta goes second) asking `thinking` and sending an effort or not.
    pub fn betas(self, model: &str, thinking: Option<&Value>, effort: bool) -> Vec<&'static str> {
        let one_m = model.ends_with("[1m]") || model.ends_with("[1M]");
        let starts = |list: &[&str]| list.iter().any(|p| model.starts_with(p));
        let haiku = model.contains("haiku");
        let mut out = Vec::new();
        if !thinks(model) {
            out.push(CLAUDE_CODE);
            out.extend(one_m.then_some(ONE_M));
            if self == BetaRule::V2_1_197 {
                out.push(CACHING_SCOPE);
            }
            return out;
        }
        if !haiku {
            out.push(CLAUDE_CODE);
        }
        out.extend(one_m.then_some(ONE_M));
        match self {
            BetaRule::V2_1_197 => {
                out.extend([INTERLEAVED, TOKEN_COUNT, CONTEXT_MANAGEMENT, CACHING_SCOPE]);
                out.extend(starts(MID_SYSTEM_MODELS).then_some(MID_SYSTEM));
                out.extend(effort.then_some(EFFORT));
                if haiku {
                    out.push(CLAUDE_CODE);
                }
            }
            BetaRule::V2_1_332 => {
                out.extend([INTERLEAVED, CONTEXT_MANAGEMENT]);
                if haiku {
                    out.push(CLAUDE_CODE);
                }
                if starts(PER_TURN_MODELS) {
                    out.extend([PER_TURN, MID_TOOLS]);
                }
                out.extend([TOKEN_COUNT, ADVANCED_TOOL_USE_BETA]);
                out.extend(effort.then_some(EFFORT));
                let updates = thinking.is_some_and(|t| t["display"] == "updates");
                out.extend(updates.then_some(DISPLAY_UPDATES));
            }
        }
        out
    }

    /// `betas` of a summary request's first try of its shape: 2.1.332 adds
    /// `fallback-credit-2026-06-01` before the display beta (recorded on every compaction's
    /// request; `auto_compact/reactive_failed` sends each shape twice, the second time without
    /// it). 2.1.197 sends none.
    pub fn with_fallback_credit(self, mut betas: Vec<&'static str>) -> Vec<&'static str> {
        if self == BetaRule::V2_1_332 {
            let at = betas.iter().position(|b| *b == DISPLAY_UPDATES).unwrap_or(betas.len());
            betas.insert(at, FALLBACK_CREDIT);
        }
        betas
    }
}

/// The `context_management` both versions send beside a `thinking` that is on (adaptive or a
/// budget): earlier thinking is kept whole. None with thinking disabled or not asked.
pub fn context_management(thinking: Option<&Value>) -> Option<Value> {
    let on = thinking.is_some_and(|t| t["type"] != "disabled");
    on.then(|| json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rule: BetaRule, model: &str, thinking: Value, effort: bool) -> String {
        rule.betas(model, Some(&thinking), effort).join(",")
    }

    /// Header values copied from the recordings' requests.
    #[test]
    fn each_version_sends_the_betas_it_was_recorded_sending() {
        use BetaRule::{V2_1_197 as OLD, V2_1_332 as NEW};
        let adaptive = json!({"type": "adaptive"});
        let updates = json!({"type": "adaptive", "display": "updates"});
        assert_eq!(
            list(OLD, "claude-opus-4-8[1m]", adaptive.clone(), true),
            "claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24"
        );
        assert_eq!(
            list(OLD, "claude-haiku-4-5-20251001", json!({"type": "disabled"}), false),
            "interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,claude-code-20250219"
        );
        assert_eq!(
            list(OLD, "claude-sonnet-4-6", adaptive, true),
            "claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,effort-2025-11-24"
        );
        assert_eq!(
            OLD.betas("claude-3-7-sonnet-latest", None, false).join(","),
            "claude-code-20250219,prompt-caching-scope-2026-01-05"
        );
        assert_eq!(
            list(NEW, "claude-opus-5-5", updates.clone(), true),
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24,thinking-display-updates-2026-08-18"
        );
        assert_eq!(
            list(NEW, "claude-haiku-4-5", json!({"budget_tokens": 31999, "type": "enabled", "display": "updates"}), false),
            "interleaved-thinking-2025-05-14,context-management-2025-06-27,claude-code-20250219,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,thinking-display-updates-2026-08-18"
        );
        assert_eq!(
            list(NEW, "claude-sonnet-4-6", json!({"type": "disabled"}), true),
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24"
        );
        assert_eq!(NEW.betas("claude-3-7-sonnet-latest", None, false), vec!["claude-code-20250219"]);
    }

    #[test]
    fn thinking_that_is_on_keeps_earlier_thinking_whole() {
        let edits = json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]});
        assert_eq!(context_management(Some(&json!({"type": "adaptive"}))), Some(edits));
        assert_eq!(context_management(Some(&json!({"type": "disabled"}))), None);
        assert_eq!(context_management(None), None);
    }

    /// `compaction/auto`'s summary request, as 2.1.332 sent it.
    #[test]
    fn a_summary_request_s_first_try_carries_2_1_332_s_fallback_credit() {
        let thinking = json!({"type": "adaptive", "display": "updates"});
        let first =
            BetaRule::V2_1_332.with_fallback_credit(BetaRule::V2_1_332.betas("claude-opus-5-5", Some(&thinking), true));
        assert_eq!(
            first.join(","),
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24,fallback-credit-2026-06-01,thinking-display-updates-2026-08-18"
        );
        let old = BetaRule::V2_1_197.betas("claude-opus-4-8", Some(&json!({"type": "adaptive"})), true);
        assert_eq!(BetaRule::V2_1_197.with_fallback_credit(old.clone()), old);
    }
}
