//! What the core's property tests share: the strategy of a scripted model's answers, so a new
//! outcome of the testkit reaches every test that draws them.

use proptest::prelude::*;
use reloop_core::testkit::ModelOutcome;

/// Every kind of answer a scripted model gives, weighted as sessions meet them.
pub fn model_outcome() -> impl Strategy<Value = ModelOutcome> {
    prop_oneof![
        3 => Just(ModelOutcome::Text),
        6 => (0usize..5).prop_map(ModelOutcome::Tools),
        1 => Just(ModelOutcome::Error),
        1 => Just(ModelOutcome::Overloaded),
        1 => Just(ModelOutcome::Fatal),
        2 => Just(ModelOutcome::MaxTokens),
        1 => Just(ModelOutcome::MissingToolCall),
        2 => (0u64..3_000).prop_map(ModelOutcome::TextTokens),
        2 => (0u64..40_000, 0usize..3).prop_map(|(input_tokens, tools)| ModelOutcome::Large { input_tokens, tools }),
        1 => Just(ModelOutcome::PromptTooLong),
    ]
}
