//! What Claude Code 2.1.332 leaves out of a request the API refused with a 400 it has no words
//! for, before it gives up: one guess at a time, each sent again at once and kept for the rest of
//! the conversation (`error_endings/invalid_request_no_tool_search`: four requests, the last
//! three each without one more guess; `error_endings/invalid_request_healed`: the request that
//! went through, and every later one, stay without the first). 2.1.197 guesses nothing.
//!
//! Its third guess, the deferred tools declared in full, has no counterpart: reloop defers no
//! tool (docs/profiles.md).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::betas::TOKEN_COUNT;
use super::BetaRule;

/// One thing a refused request is sent again without.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestGuess {
    /// The `thinking-token-count` beta.
    TokenCountBeta,
    /// The thinking's `display` (and with it the display beta).
    ThinkingDisplay,
}

impl RequestGuess {
    const ALL: [RequestGuess; 2] = [RequestGuess::TokenCountBeta, RequestGuess::ThinkingDisplay];

    fn bit(self) -> u8 {
        match self {
            RequestGuess::TokenCountBeta => 1,
            RequestGuess::ThinkingDisplay => 2,
        }
    }
}

/// A set of guesses, journaled as the list of their names (a byte in memory: it rides on every
/// model error and model call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(from = "Vec<RequestGuess>", into = "Vec<RequestGuess>")]
pub struct RequestGuesses(u8);

impl RequestGuesses {
    /// None taken (what journals from before the guesses hold).
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether `guess` is in the set.
    pub fn contains(self, guess: RequestGuess) -> bool {
        self.0 & guess.bit() != 0
    }

    /// The set with `guess` too.
    #[must_use]
    pub fn with(self, guess: RequestGuess) -> Self {
        RequestGuesses(self.0 | guess.bit())
    }

    /// The guesses, in ladder order.
    pub fn iter(self) -> impl Iterator<Item = RequestGuess> {
        RequestGuess::ALL.into_iter().filter(move |g| self.contains(*g))
    }
}

impl From<Vec<RequestGuess>> for RequestGuesses {
    fn from(guesses: Vec<RequestGuess>) -> Self {
        guesses.into_iter().fold(RequestGuesses::default(), RequestGuesses::with)
    }
}

impl From<RequestGuesses> for Vec<RequestGuess> {
    fn from(guesses: RequestGuesses) -> Self {
        guesses.iter().collect()
    }
}

impl FromIterator<RequestGuess> for RequestGuesses {
    fn from_iter<I: IntoIterator<Item = RequestGuess>>(iter: I) -> Self {
        iter.into_iter().fold(RequestGuesses::default(), RequestGuesses::with)
    }
}

/// 2.1.332's guesses, in the order it tries them.
const LADDER_2_1_332: &[RequestGuess] = &[RequestGuess::TokenCountBeta, RequestGuess::ThinkingDisplay];

impl BetaRule {
    /// The guesses this version tries on a 400 it has no words for, in order (none: it gives up).
    pub fn refusal_guesses(self) -> &'static [RequestGuess] {
        match self {
            BetaRule::V2_1_197 => &[],
            BetaRule::V2_1_332 => LADDER_2_1_332,
        }
    }
}

/// The `thinking` sent once `shed` guesses were taken: without its `display` after
/// [`RequestGuess::ThinkingDisplay`].
pub fn shed_thinking(thinking: Option<Value>, shed: RequestGuesses) -> Option<Value> {
    let mut thinking = thinking?;
    if shed.contains(RequestGuess::ThinkingDisplay) {
        if let Some(map) = thinking.as_object_mut() {
            map.remove("display");
        }
    }
    Some(thinking)
}

/// `betas` without the beta a taken guess leaves out (the display beta follows the thinking's
/// `display`, which [`shed_thinking`] took out).
pub fn shed_betas(betas: &mut Vec<&'static str>, shed: RequestGuesses) {
    if shed.contains(RequestGuess::TokenCountBeta) {
        betas.retain(|b| *b != TOKEN_COUNT);
    }
}

/// The guesses of `rule`'s ladder a request to `model` carried, whose thinking had a `display`
/// or not, `shed` being what it was sent without already. What the driver journals with a
/// refused request, so the core can choose the next guess without knowing how requests are
/// built; asked only when a request was refused.
pub fn sheddable(rule: BetaRule, model: &str, display: bool, shed: RequestGuesses) -> RequestGuesses {
    rule.refusal_guesses()
        .iter()
        .copied()
        .filter(|guess| !shed.contains(*guess))
        .filter(|guess| match guess {
            // The thinking and the effort do not decide whether the beta is sent.
            RequestGuess::TokenCountBeta => rule.betas(model, None, false).contains(&TOKEN_COUNT),
            RequestGuess::ThinkingDisplay => display,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all() -> RequestGuesses {
        LADDER_2_1_332.iter().copied().collect()
    }

    /// `invalid_request_no_tool_search` of 2.1.332: the four requests' betas and thinking.
    #[test]
    fn each_guess_leaves_out_what_the_recording_s_next_request_lacks() {
        let rule = BetaRule::V2_1_332;
        let thinking = json!({"type": "adaptive", "display": "updates"});
        let full = rule.betas("claude-opus-5-5", Some(&thinking), true);
        assert!(full.contains(&TOKEN_COUNT));
        assert_eq!(sheddable(rule, "claude-opus-5-5", true, RequestGuesses::default()), all());
        let shed = RequestGuesses::default().with(RequestGuess::TokenCountBeta);
        let second = shed_thinking(Some(thinking.clone()), shed).unwrap();
        let mut betas = rule.betas("claude-opus-5-5", Some(&second), true);
        shed_betas(&mut betas, shed);
        assert_eq!(second, thinking);
        assert!(!betas.contains(&TOKEN_COUNT) && betas.contains(&"thinking-display-updates-2026-08-18"));
        assert_eq!(
            sheddable(rule, "claude-opus-5-5", second.get("display").is_some(), shed),
            RequestGuesses::default().with(RequestGuess::ThinkingDisplay)
        );
        let shed = shed.with(RequestGuess::ThinkingDisplay);
        let third = shed_thinking(Some(thinking), shed).unwrap();
        let mut betas = rule.betas("claude-opus-5-5", Some(&third), true);
        shed_betas(&mut betas, shed);
        assert_eq!(third, json!({"type": "adaptive"}));
        assert_eq!(
            betas.join(","),
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,\
             per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,\
             advanced-tool-use-2025-11-20,effort-2025-11-24"
        );
        assert!(sheddable(rule, "claude-opus-5-5", third.get("display").is_some(), shed).is_empty());
        assert_eq!(serde_json::to_value(shed).unwrap(), json!(["token_count_beta", "thinking_display"]));
        assert_eq!(serde_json::from_value::<RequestGuesses>(json!(["thinking_display"])).unwrap().iter().count(), 1);
    }

    /// A subagent's thinking (`"display": "omitted"`, no display beta) still has a display to
    /// leave out (`subagent/failed`); a model with no thinking beta, nothing.
    #[test]
    fn only_what_the_request_carries_can_be_left_out() {
        let rule = BetaRule::V2_1_332;
        let child = json!({"type": "adaptive", "display": "omitted"});
        let none = RequestGuesses::default();
        assert_eq!(sheddable(rule, "claude-opus-5-5", child.get("display").is_some(), none), all());
        assert!(sheddable(rule, "claude-3-7-sonnet-latest", false, none).is_empty());
        assert!(sheddable(BetaRule::V2_1_197, "claude-opus-5-5", true, none).is_empty());
    }
}
