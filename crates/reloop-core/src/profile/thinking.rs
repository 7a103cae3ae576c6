//! The `thinking` a Claude Code version asks of a model (recorded: `thinking_env/`,
//! `model_alias/` in crates/reloop-import/tests/recorded/VERSION/). Both versions think
//! adaptively on the models that can (Opus 4.8, Sonnet 5, Sonnet 4.6, the 5.5 family), whatever
//! budget `MAX_THINKING_TOKENS` names; the older ones get a budget, by default all their output
//! less one token (Haiku 4.5 under 2.1.197: `{"budget_tokens": 31999, "type": "enabled"}`);
//! `MAX_THINKING_TOKENS=0` turns thinking off with `{"type": "disabled"}`, except on the models
//! 2.1.332 asks to think adaptively anyway (the 5.5 family: Haiku, Opus and Sonnet) and on
//! Opus 5.5 under 2.1.197, which then sends no `thinking` at all. The rule reads the bundles'
//! (2.1.197's `qst`, `zIi`, `x3e`) where the recordings stop.

use serde_json::{json, Map, Value};

use super::models::canonical_model as canonical;

/// What the session asked for: `MAX_THINKING_TOKENS` (or `--max-thinking-tokens`) unset, `0`,
/// or a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingAsked {
    /// Nothing said: the version's default.
    Default,
    /// `0`: off.
    Off,
    /// A budget of tokens.
    Budget(u32),
}

impl ThinkingAsked {
    /// From the number given (`None`: none given).
    pub fn from_tokens(tokens: Option<u32>) -> Self {
        match tokens {
            None => ThinkingAsked::Default,
            Some(0) => ThinkingAsked::Off,
            Some(n) => ThinkingAsked::Budget(n),
        }
    }
}

/// A version's thinking rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingRule {
    /// Models (canonical ids: no date, no `[1m]`) that think on a budget; the other Claude
    /// models think adaptively.
    pub budget_models: &'static [&'static str],
    /// Models that refuse `{"type": "disabled"}`: they think adaptively when asked not to.
    pub rejects_disabled: &'static [&'static str],
    /// Models asked not to think with no `thinking` at all (2.1.197's Opus 5.5).
    pub omits_disabled: &'static [&'static str],
    /// The `display` every thinking config carries (2.1.332: `updates`).
    pub display: Option<&'static str>,
    /// The smallest budget sent (2.1.332: 1024).
    pub min_budget: u32,
    /// How a subagent's requests think (the child of an `Agent` call, run in the foreground).
    pub child: ChildThinking,
}

/// The `thinking` of a subagent's requests, where it differs from its parent's (recorded,
/// `subagent/foreground`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildThinking {
    /// Off, as thinking asked off is sent (2.1.197: `{"type": "disabled"}`, so no
    /// `context_management` either).
    Disabled,
    /// As the parent's, with this `display` (2.1.332: `omitted`, and so no display beta).
    Display(&'static str),
}

/// The models that think on a budget in both versions (2.1.197's `qst`).
pub const BUDGET_THINKING_MODELS: &[&str] = &[
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
];

/// The models that think on a budget, as the older ones do, under
/// `CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING` (recorded, both versions:
/// `env/disable_adaptive_thinking_sonnet_4_6`); Opus 4.8, Opus 5.5 and Sonnet 5.5 think
/// adaptively whatever it says (`env/disable_adaptive_thinking`, `…_sonnet_5_5`), and the models
/// that think on a budget anyway keep theirs (`…_haiku_4_5`, `…_opus_4_5`).
pub const ADAPTIVE_OR_BUDGET_MODELS: &[&str] = &["claude-sonnet-4-6"];

/// The environment's thinking switches, Claude Code's names: `CLAUDE_CODE_DISABLE_THINKING`
/// (`off`: no `thinking` key at all, recorded `env/disable_thinking*`) and
/// `CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING` (`adaptive_off`: [`ADAPTIVE_OR_BUDGET_MODELS`] think
/// on a budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ThinkingSwitches {
    /// `CLAUDE_CODE_DISABLE_THINKING` is set.
    #[serde(default)]
    pub off: bool,
    /// `CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING` is set.
    #[serde(default)]
    pub adaptive_off: bool,
}

impl ThinkingSwitches {
    /// Neither is set (what a session journaled before them had).
    pub fn is_default(&self) -> bool {
        *self == ThinkingSwitches::default()
    }
}

impl ThinkingRule {
    /// As [`Self::request`], under the environment's `switches`.
    pub fn request_switched(
        &self,
        model: &str,
        max_tokens: u32,
        asked: ThinkingAsked,
        switches: ThinkingSwitches,
    ) -> Option<Value> {
        if switches.off {
            return None;
        }
        let on_budget = switches.adaptive_off && ADAPTIVE_OR_BUDGET_MODELS.contains(&canonical(model).as_str());
        self.request_on(model, max_tokens, asked, on_budget)
    }

    /// As [`Self::request_switched`], for a subagent's request ([`Self::child`]).
    pub fn child_request(
        &self,
        model: &str,
        max_tokens: u32,
        asked: ThinkingAsked,
        switches: ThinkingSwitches,
    ) -> Option<Value> {
        match self.child {
            ChildThinking::Disabled => self.request_switched(model, max_tokens, ThinkingAsked::Off, switches),
            ChildThinking::Display(display) => {
                let mut config = self.request_switched(model, max_tokens, asked, switches)?;
                if let Some(map) = config.as_object_mut().filter(|m| m.contains_key("display")) {
                    map.insert("display".into(), json!(display));
                }
                Some(config)
            }
        }
    }

    /// The `thinking` sent to `model` with `max_tokens` (`None`: no key). Models that are not
    /// Claude's, and Claude 3, get what reloop's own rule sends: a budget when one was given.
    pub fn request(&self, model: &str, max_tokens: u32, asked: ThinkingAsked) -> Option<Value> {
        self.request_on(model, max_tokens, asked, false)
    }

    /// [`Self::request`], `on_budget` making the model think on a budget as the older ones do.
    fn request_on(&self, model: &str, max_tokens: u32, asked: ThinkingAsked, on_budget: bool) -> Option<Value> {
        let id = canonical(model);
        if !id.starts_with("claude-") || id.starts_with("claude-3-") {
            return reloop_thinking(asked);
        }
        let adaptive = !on_budget && !self.budget_models.contains(&id.as_str());
        let config = match asked {
            ThinkingAsked::Off if self.rejects_disabled.contains(&id.as_str()) => json!({"type": "adaptive"}),
            ThinkingAsked::Off if self.omits_disabled.contains(&id.as_str()) => return None,
            ThinkingAsked::Off => return Some(json!({"type": "disabled"})),
            _ if adaptive => json!({"type": "adaptive"}),
            ThinkingAsked::Budget(n) => budget(n.min(max_tokens.saturating_sub(1)).max(self.min_budget)),
            ThinkingAsked::Default => budget(max_tokens.saturating_sub(1).max(self.min_budget)),
        };
        Some(match (config, self.display) {
            (Value::Object(mut map), Some(display)) => {
                map.insert("display".into(), json!(display));
                Value::Object(map)
            }
            (config, _) => config,
        })
    }
}

/// `{"budget_tokens": N, "type": "enabled"}`, in Claude Code's key order.
fn budget(tokens: u32) -> Value {
    let mut map = Map::new();
    map.insert("budget_tokens".into(), json!(tokens));
    map.insert("type".into(), json!("enabled"));
    Value::Object(map)
}

/// reloop's own rule: thinking only on a budget given.
pub fn reloop_thinking(asked: ThinkingAsked) -> Option<Value> {
    match asked {
        ThinkingAsked::Budget(n) => Some(json!({"type": "enabled", "budget_tokens": n})),
        ThinkingAsked::Default | ThinkingAsked::Off => None,
    }
}

#[cfg(test)]
mod tests {
    use super::ThinkingAsked::{Budget, Default, Off};
    use super::*;
    use crate::profile::{CLAUDE_CODE_2_1_197, CLAUDE_CODE_2_1_332};

    /// Every `thinking` the recordings hold (`model_alias/`, `thinking_env/`).
    #[test]
    fn each_version_asks_what_it_was_recorded_asking() {
        let old = CLAUDE_CODE_2_1_197.thinking.unwrap();
        let new = CLAUDE_CODE_2_1_332.thinking.unwrap();
        let cases = [
            (old, "claude-opus-4-8[1m]", 64_000, Default, json!({"type": "adaptive"})),
            (old, "claude-sonnet-5", 64_000, Default, json!({"type": "adaptive"})),
            (old, "claude-haiku-4-5-20251001", 32_000, Default, json!({"budget_tokens": 31999, "type": "enabled"})),
            (old, "claude-haiku-4-5-20251001", 32_000, Budget(8000), json!({"budget_tokens": 8000, "type": "enabled"})),
            (old, "claude-haiku-4-5-20251001", 32_000, Off, json!({"type": "disabled"})),
            (old, "claude-opus-4-5", 32_000, Budget(8000), json!({"budget_tokens": 8000, "type": "enabled"})),
            (old, "claude-sonnet-4-6", 32_000, Budget(8000), json!({"type": "adaptive"})),
            (old, "claude-sonnet-4-6", 32_000, Off, json!({"type": "disabled"})),
            (new, "claude-opus-5-5", 128_000, Default, json!({"type": "adaptive", "display": "updates"})),
            (new, "claude-haiku-5-5", 128_000, Off, json!({"type": "adaptive", "display": "updates"})),
            (new, "claude-haiku-5-5", 128_000, Budget(8000), json!({"type": "adaptive", "display": "updates"})),
            (
                new,
                "claude-opus-4-5",
                32_000,
                Budget(8000),
                json!({"budget_tokens": 8000, "type": "enabled", "display": "updates"}),
            ),
            (new, "claude-opus-4-5", 32_000, Off, json!({"type": "disabled"})),
            (new, "claude-sonnet-4-6", 32_000, Budget(8000), json!({"type": "adaptive", "display": "updates"})),
            // thinking_env/claude_{opus,sonnet}_5_5_0 (recorded 2026-12-06).
            (old, "claude-sonnet-5-5", 64_000, Off, json!({"type": "disabled"})),
            (new, "claude-opus-5-5", 128_000, Off, json!({"type": "adaptive", "display": "updates"})),
            (new, "claude-sonnet-5-5", 128_000, Off, json!({"type": "adaptive", "display": "updates"})),
        ];
        assert_eq!(old.request("claude-opus-5-5", 32_000, Off), None, "2.1.197 sends Opus 5.5 no thinking at all");
        for (rule, model, max_tokens, asked, want) in cases {
            let got = rule.request(model, max_tokens, asked).unwrap();
            assert_eq!(got, want, "{model} {asked:?}");
            // The key order is Claude Code's too (`budget_tokens` first).
            assert_eq!(got.to_string(), want.to_string(), "{model} {asked:?}");
        }
    }

    /// tests/print/recorded/*/env/disable_*: no `thinking` at all when it is off; Sonnet 4.6 on
    /// a budget without adaptive thinking, the Opus models adaptive still.
    #[test]
    fn the_environment_s_switches_change_what_is_asked() {
        let off = ThinkingSwitches { off: true, adaptive_off: false };
        let no_adaptive = ThinkingSwitches { off: false, adaptive_off: true };
        for rule in [CLAUDE_CODE_2_1_197.thinking.unwrap(), CLAUDE_CODE_2_1_332.thinking.unwrap()] {
            assert_eq!(rule.request_switched("claude-opus-4-8[1m]", 64_000, Default, off), None);
            assert_eq!(rule.request_switched("claude-sonnet-4-6", 32_000, Default, off), None);
            let sonnet = rule.request_switched("claude-sonnet-4-6", 32_000, Default, no_adaptive).unwrap();
            assert_eq!((sonnet["type"].clone(), sonnet["budget_tokens"].clone()), (json!("enabled"), json!(31999)));
            let opus = rule.request_switched("claude-opus-5-5", 128_000, Default, no_adaptive).unwrap();
            assert_eq!(opus["type"], "adaptive");
            let plain = ThinkingSwitches::default();
            assert_eq!(
                rule.request_switched("claude-sonnet-4-6", 32_000, Default, plain),
                rule.request("claude-sonnet-4-6", 32_000, Default)
            );
        }
    }

    #[test]
    fn budgets_fit_under_max_tokens_and_other_models_keep_reloop_s_rule() {
        let new = CLAUDE_CODE_2_1_332.thinking.unwrap();
        let small = |b| new.request("claude-haiku-4-5", 32_000, Budget(b)).unwrap()["budget_tokens"].clone();
        assert_eq!((small(10), small(50_000)), (json!(1024), json!(31999)));
        for rule in [CLAUDE_CODE_2_1_197.thinking.unwrap(), new] {
            assert_eq!(rule.request("qwen3", 32_000, Default), None);
            assert_eq!(rule.request("qwen3", 32_000, Off), None);
            assert_eq!(rule.request("claude-3-7-sonnet-latest", 32_000, Budget(5)), reloop_thinking(Budget(5)));
        }
        assert_eq!(canonical("claude-sonnet-4-20250514"), "claude-sonnet-4-0");
        assert_eq!(ThinkingAsked::from_tokens(Some(0)), Off);
    }

    /// `subagent/foreground`: 2.1.197's child asks for no thinking, 2.1.332's for its parent's
    /// with the display omitted.
    #[test]
    fn a_subagent_thinks_as_each_version_s_children_do() {
        let (old, new) = (CLAUDE_CODE_2_1_197.thinking.unwrap(), CLAUDE_CODE_2_1_332.thinking.unwrap());
        let switches = ThinkingSwitches::default();
        let asked = Default;
        assert_eq!(old.child_request("claude-opus-4-8", 64_000, asked, switches), Some(json!({"type": "disabled"})));
        assert_eq!(
            new.child_request("claude-opus-5-5", 128_000, asked, switches),
            Some(json!({"type": "adaptive", "display": "omitted"}))
        );
        assert_eq!(
            new.child_request("claude-3-7-sonnet-latest", 32_000, asked, switches),
            None,
            "no display, no change"
        );
    }
}
