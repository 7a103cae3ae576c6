//! What requests spent, as a person reads it without being misled: input, cache reads, cache
//! writes and output apart (a session that reads most of its input from the cache costs a
//! tenth of one that does not, at the same total), the cache hit rate, and a cost that is
//! unknown, not another model's, when a model has no price.

use std::collections::BTreeSet;

use reloop_core::Usage;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// Prices a response: `(model, usage) -> USD`, `None` when the model has no known price. The
/// binary knows the model table; the driver only knows the session's own config.
pub type PriceFn<'a> = &'a dyn Fn(&str, &Usage) -> Option<f64>;

/// The tokens and cost of some requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The cost of the requests whose model has a price.
    pub priced_usd: f64,
    /// Models that used tokens and have no price: while any is here, the cost is unknown.
    pub unpriced_models: BTreeSet<String>,
}

impl Spend {
    /// Counts one response: its usage, and its cost (`None`: its model has no price).
    pub fn add(&mut self, model: &str, usage: &Usage, cost: Option<f64>) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.cache_read_input_tokens = self.cache_read_input_tokens.saturating_add(usage.cache_read_input_tokens);
        self.cache_creation_input_tokens =
            self.cache_creation_input_tokens.saturating_add(usage.cache_creation_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        match cost {
            Some(usd) => self.priced_usd += usd,
            // A response that used no tokens cost nothing, whatever its model's price.
            None if *usage != Usage::default() => {
                self.unpriced_models.insert(model.to_string());
            }
            None => {}
        }
    }

    /// Counts what another spend counted.
    pub fn add_spend(&mut self, other: &Spend) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.cache_read_input_tokens = self.cache_read_input_tokens.saturating_add(other.cache_read_input_tokens);
        self.cache_creation_input_tokens =
            self.cache_creation_input_tokens.saturating_add(other.cache_creation_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.priced_usd += other.priced_usd;
        self.unpriced_models.extend(other.unpriced_models.iter().cloned());
    }

    /// Every input token: uncached, read from the cache and written to it.
    pub fn all_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.cache_read_input_tokens).saturating_add(self.cache_creation_input_tokens)
    }

    /// Cache reads over all input tokens; `None` with no input.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        let all = self.all_input_tokens();
        (all > 0).then(|| self.cache_read_input_tokens as f64 / all as f64)
    }

    /// The cost, `None` when a model that used tokens has no price.
    pub fn cost_usd(&self) -> Option<f64> {
        self.unpriced_models.is_empty().then_some(self.priced_usd)
    }

    /// `3 in, 11,515 cache read, 13,835 cache write, 27 out tokens, cache hit 45.4%`.
    pub fn tokens_words(&self) -> String {
        let n = reloop_core::thousands;
        let mut words = format!(
            "{} in, {} cache read, {} cache write, {} out tokens",
            n(self.input_tokens),
            n(self.cache_read_input_tokens),
            n(self.cache_creation_input_tokens),
            n(self.output_tokens)
        );
        if let Some(rate) = self.cache_hit_rate() {
            words.push_str(&format!(", cache hit {}", percent(rate)));
        }
        words
    }

    /// `$0.0353`, or `cost unknown` when a model has no price.
    pub fn cost_words(&self) -> String {
        match self.cost_usd() {
            Some(usd) => format!("${usd:.4}"),
            None => "cost unknown".to_string(),
        }
    }
}

/// `45.4%`.
pub fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// The fields by name, with the hit rate and the cost worked out (`null` when there is none).
impl Serialize for Spend {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Spend", 7)?;
        s.serialize_field("input_tokens", &self.input_tokens)?;
        s.serialize_field("cache_read_input_tokens", &self.cache_read_input_tokens)?;
        s.serialize_field("cache_creation_input_tokens", &self.cache_creation_input_tokens)?;
        s.serialize_field("output_tokens", &self.output_tokens)?;
        s.serialize_field("cache_hit_rate", &self.cache_hit_rate())?;
        s.serialize_field("cost_usd", &self.cost_usd())?;
        s.serialize_field("unpriced_models", &self.unpriced_models)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, read: u64, write: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: write,
            cache_read_input_tokens: read,
        }
    }

    #[test]
    fn tokens_are_shown_apart_with_the_hit_rate() {
        let mut spend = Spend::default();
        spend.add("m", &usage(3, 11_515, 13_835, 27), Some(0.1));
        spend.add("m", &usage(1, 25_350, 0, 10), Some(0.01));
        assert_eq!(spend.tokens_words(), "4 in, 36,865 cache read, 13,835 cache write, 37 out tokens, cache hit 72.7%");
        assert_eq!(spend.cost_words(), "$0.1100");
        let json = serde_json::to_value(&spend).unwrap();
        assert_eq!(json["cache_read_input_tokens"], 36_865);
        assert!((json["cache_hit_rate"].as_f64().unwrap() - 36_865.0 / 50_704.0).abs() < 1e-12);
        assert_eq!(json["unpriced_models"], serde_json::json!([]));
    }

    #[test]
    fn a_model_without_a_price_makes_the_cost_unknown_not_zero() {
        let mut spend = Spend::default();
        spend.add("known", &usage(10, 0, 0, 1), Some(0.5));
        spend.add("local", &usage(10, 0, 0, 1), None);
        // A failed request used nothing: no price is needed for it.
        spend.add("other", &Usage::default(), None);
        assert_eq!(spend.cost_usd(), None);
        assert_eq!(spend.cost_words(), "cost unknown");
        let json = serde_json::to_value(&spend).unwrap();
        assert_eq!(json["cost_usd"], serde_json::Value::Null);
        assert_eq!(json["unpriced_models"], serde_json::json!(["local"]));
    }

    #[test]
    fn no_input_has_no_hit_rate() {
        let spend = Spend::default();
        assert_eq!(spend.cache_hit_rate(), None);
        assert_eq!(spend.tokens_words(), "0 in, 0 cache read, 0 cache write, 0 out tokens");
        assert_eq!(spend.cost_words(), "$0.0000");
    }
}
