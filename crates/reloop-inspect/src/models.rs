//! The models of a session, told apart: the one a request asked for and the one that answered.
//! They differ more often than not in a scripted run (the demo asks `claude-opus-5-5`, its
//! cassette answers as `claude-sonnet-4-6`), behind a proxy that routes to another model, and
//! after a fallback. Showing only the answering model made the demo look as if it had asked
//! Sonnet; showing only the asked one would price and name the wrong model.

use serde::Serialize;

use crate::timeline::Facts;

/// The models a session asked for and the models that answered it, each once, in the order
/// first met.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionModels {
    /// What its requests asked for (the session's model, a fallback, a switched-to model).
    pub requested: Vec<String>,
    /// What its responses said answered them (a response that named none counts as the model
    /// asked).
    pub answered: Vec<String>,
}

impl SessionModels {
    /// The models of `requested` and `answered`, each once, in order; placeholders a transcript
    /// writes for messages no model sent (`<synthetic>`) and empty names are left out.
    pub fn of<'a>(
        requested: impl IntoIterator<Item = &'a str>,
        answered: impl IntoIterator<Item = &'a str>,
    ) -> SessionModels {
        fn once<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for name in names {
                if !name.is_empty() && !name.starts_with('<') && !out.iter().any(|n| n == name) {
                    out.push(name.to_string());
                }
            }
            out
        }
        SessionModels { requested: once(requested), answered: once(answered) }
    }

    /// Whether what answered is not what was asked.
    pub fn differ(&self) -> bool {
        !self.answered.is_empty() && self.answered != self.requested
    }

    /// `claude-sonnet-4-6` when the model asked answered; `claude-opus-5-5 (answered by
    /// claude-sonnet-4-6)` when another did; `-` with neither known.
    pub fn words(&self) -> String {
        match (self.requested.is_empty(), self.answered.is_empty()) {
            (true, true) => "-".to_string(),
            (true, false) => self.answered.join(", "),
            (false, _) if self.differ() => {
                format!("{} (answered by {})", self.requested.join(", "), self.answered.join(", "))
            }
            (false, _) => self.requested.join(", "),
        }
    }

    /// For a session whose requests are not known, only its answers (an import: a transcript
    /// records the model that answered, and the importer's guess of the one asked is that).
    pub fn as_answered(mut self) -> SessionModels {
        if !self.answered.is_empty() {
            self.requested = self.answered.clone();
        }
        self
    }
}

impl Facts {
    /// The models the session's requests asked for and the ones that answered them; a request
    /// still in flight or failed had no answering model.
    pub fn models(&self) -> SessionModels {
        let answered = self.requests.iter().filter(|r| r.done_seq.is_some() && !r.outcome.starts_with("failed"));
        let models = SessionModels::of(
            self.requests.iter().map(|r| r.requested_model.as_str()),
            answered.map(|r| r.model.as_str()),
        );
        if self.imported {
            models.as_answered()
        } else {
            models
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_named_once_and_the_answering_ones_only_when_they_differ() {
        let same = SessionModels::of(["claude-sonnet-4-6"; 3], ["claude-sonnet-4-6"; 3]);
        assert_eq!(same.words(), "claude-sonnet-4-6");
        assert!(!same.differ());
        let demo = SessionModels::of(["claude-opus-5-5"; 3], ["claude-sonnet-4-6", "<synthetic>", "claude-sonnet-4-6"]);
        assert_eq!(demo.words(), "claude-opus-5-5 (answered by claude-sonnet-4-6)");
        let fallback = SessionModels::of(["claude-opus-4-6", "claude-sonnet-4-6"], ["claude-sonnet-4-6"]);
        assert_eq!(fallback.words(), "claude-opus-4-6, claude-sonnet-4-6 (answered by claude-sonnet-4-6)");
        let unanswered = SessionModels::of(["claude-opus-5-5"], []);
        assert_eq!(unanswered.words(), "claude-opus-5-5");
        assert_eq!(SessionModels::default().words(), "-");
        assert_eq!(SessionModels::of([], ["claude-sonnet-4-6"]).words(), "claude-sonnet-4-6");
        let imported = SessionModels::of(["claude-opus-4-6"], ["claude-sonnet-4-6", "claude-opus-4-6"]).as_answered();
        assert_eq!(imported.words(), "claude-sonnet-4-6, claude-opus-4-6");
    }
}
