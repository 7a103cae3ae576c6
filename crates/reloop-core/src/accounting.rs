//! Which model a response's usage counts under, and what it cost.
//!
//! Claude Code keys `modelUsage` and prices a response by the model that answered (the
//! response's `model`), not by the one it asked: a server may answer an alias with a dated
//! snapshot, or with another model altogether. Under [`Flag::AnsweringModelUsage`] the core
//! does the same, so the live result, the `--max-budget-usd` stop and the reading commands
//! (which price each response by its answering model) agree. Off: the model asked, as
//! sessions journaled before the flag were accounted.

use crate::config::Config;
use crate::flags::Flag;
use crate::message::Usage;

/// The model a response's usage is counted under, and its cost in US dollars.
///
/// `requested` is the model the request went to, `answered` the model the response named.
/// With the flag on, a response that names a model counts under it; one that names none (a
/// compaction's summary, a server that leaves `model` out) under the model asked. The cost
/// is at the answering model's price when the session has one, else at the asked model's:
/// an alias answered by its dated snapshot costs the same, and a budget is never left
/// unenforced because a server answered under a name the session holds no price for.
pub(crate) fn charge(config: &Config, requested: &str, answered: Option<&str>, usage: &Usage) -> (String, f64) {
    let answered = answered.filter(|m| !m.is_empty() && config.flag(Flag::AnsweringModelUsage));
    let Some(answered) = answered else {
        return (requested.to_string(), config.cost(requested, usage));
    };
    let price = config.price(answered).or_else(|| config.price(requested));
    (answered.to_string(), price.map_or(0.0, |p| p.cost(usage)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Price;
    use crate::flags::Flags;
    use proptest::prelude::*;

    fn price(model: &str, input: f64, output: f64) -> Price {
        Price { model: model.into(), input, output, cache_write: 0.0, cache_read: 0.0 }
    }

    fn config(flags: Flags) -> Config {
        let prices = vec![price("claude-opus-5-5", 5.0, 25.0), price("claude-sonnet-4-6", 3.0, 15.0)];
        Config::default().with_model("claude-opus-5-5").with_prices(prices).with_flags(flags)
    }

    fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage { input_tokens, output_tokens, ..Usage::default() }
    }

    #[test]
    fn a_response_counts_under_the_model_that_answered_at_its_price() {
        let (model, cost) =
            charge(&config(Flags::current()), "claude-opus-5-5", Some("claude-sonnet-4-6"), &usage(1_000_000, 0));
        assert_eq!((model.as_str(), cost), ("claude-sonnet-4-6", 3.0));
    }

    #[test]
    fn without_the_flag_the_model_asked_keys_and_prices_it() {
        let mut flags = Flags::current();
        flags.flip(Flag::AnsweringModelUsage.number());
        let (model, cost) = charge(&config(flags), "claude-opus-5-5", Some("claude-sonnet-4-6"), &usage(1_000_000, 0));
        assert_eq!((model.as_str(), cost), ("claude-opus-5-5", 5.0));
    }

    #[test]
    fn an_answer_under_an_unpriced_name_is_keyed_by_it_and_priced_as_the_model_asked() {
        let answered = Some("claude-opus-5-5-20261101");
        let (model, cost) = charge(&config(Flags::current()), "claude-opus-5-5", answered, &usage(0, 1_000_000));
        assert_eq!((model.as_str(), cost), ("claude-opus-5-5-20261101", 25.0));
    }

    proptest! {
        /// A response that names no model (or an empty one) is counted and priced exactly as
        /// the model asked, whatever the flags.
        #[test]
        fn a_response_naming_no_model_falls_back_to_the_model_asked(
            input in 0u64..10_000_000,
            output in 0u64..10_000_000,
            flag_on in any::<bool>(),
            requested in prop::sample::select(vec!["claude-opus-5-5", "claude-sonnet-4-6", "local-model"]),
            answered in prop::option::of(Just(String::new())),
        ) {
            let mut flags = Flags::current();
            if !flag_on {
                flags.flip(Flag::AnsweringModelUsage.number());
            }
            let config = config(flags);
            let usage = usage(input, output);
            let (model, cost) = charge(&config, requested, answered.as_deref(), &usage);
            prop_assert_eq!(model.as_str(), requested);
            prop_assert_eq!(cost.to_bits(), config.cost(requested, &usage).to_bits());
        }
    }
}
