//! 2.1.332's model-identity reminder: the conversation names the model that answers it
//! (`You are powered by the model named …`), and when a query is asked of another model (a
//! command file's `model`) the first tool result of it names the new one. The names and
//! knowledge cutoffs are Claude Code's, copied from the recordings (`sdk_wire/command_frontmatter`,
//! `settings_sources/*`, `env/anthropic_model`, `sdk36/queued_command_model`).

/// One model as 2.1.332 names it to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelIdentity {
    /// The model id requests are sent with.
    pub id: &'static str,
    /// Its marketing name (`Haiku 4.5`).
    pub name: &'static str,
    /// Its knowledge cutoff as worded there (`February 2025`).
    pub cutoff: &'static str,
}

impl ModelIdentity {
    /// The reminder's text, without the `<system-reminder>` wrapping.
    pub fn text(&self) -> String {
        format!(
            "You are powered by the model named {}. The exact model ID is {}. Assistant knowledge cutoff is {}.",
            self.name, self.id, self.cutoff
        )
    }
}

/// The models 2.1.332 was recorded naming; another model gets no reminder (its words are not
/// known; `claude-3-7-sonnet-latest` is named with no cutoff sentence, left out).
pub const IDENTITIES_2_1_332: &[ModelIdentity] = &[
    ModelIdentity { id: "claude-opus-5-5", name: "Opus 5.5", cutoff: "June 2026" },
    ModelIdentity { id: "claude-haiku-4-5", name: "Haiku 4.5", cutoff: "February 2025" },
    ModelIdentity { id: "claude-sonnet-4-6", name: "Sonnet 4.6", cutoff: "August 2025" },
    ModelIdentity { id: "claude-sonnet-4-5", name: "Sonnet 4.5", cutoff: "January 2025" },
    ModelIdentity { id: "claude-opus-4-5", name: "Opus 4.5", cutoff: "May 2025" },
    ModelIdentity { id: "claude-haiku-5-5", name: "Haiku 5.5", cutoff: "June 2026" },
    ModelIdentity { id: "claude-sonnet-5-5", name: "Sonnet 5.5", cutoff: "June 2026" },
];

/// The identity of `model` in `table`, if it is there.
pub fn identity_of(table: &'static [ModelIdentity], model: &str) -> Option<&'static ModelIdentity> {
    table.iter().find(|i| i.id == model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn haiku_is_named_as_the_recording_names_it() {
        let haiku = identity_of(IDENTITIES_2_1_332, "claude-haiku-4-5").map(ModelIdentity::text);
        assert_eq!(
            haiku.as_deref(),
            Some("You are powered by the model named Haiku 4.5. The exact model ID is claude-haiku-4-5. Assistant knowledge cutoff is February 2025.")
        );
        assert_eq!(identity_of(IDENTITIES_2_1_332, "claude-haiku-4-5-20251001"), None);
    }
}
