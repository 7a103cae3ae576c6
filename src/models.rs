//! The model table (`data/models.json`): context windows and prices, bundled into the binary.

use reloop_core::Price;
use serde::Deserialize;

const TABLE: &str = include_str!("../data/models.json");

#[derive(Deserialize, Clone)]
struct Entry {
    /// The name Claude Code shows (`Opus 4.8`).
    #[serde(default)]
    display: Option<String>,
    context_window: u64,
    input: f64,
    output: f64,
    #[serde(default)]
    cache_write: f64,
    #[serde(default)]
    cache_read: f64,
}

#[derive(Deserialize)]
struct Table {
    default: Entry,
    models: std::collections::BTreeMap<String, Entry>,
}

/// The table, parsed once: a listing prices every response of every session, and parsing it
/// for each took most of `reloop sessions`' time.
fn table() -> Option<&'static Table> {
    static TABLE_PARSED: std::sync::OnceLock<Option<Table>> = std::sync::OnceLock::new();
    TABLE_PARSED.get_or_init(|| serde_json::from_str(TABLE).ok()).as_ref()
}

/// The entry for a model: an exact name, else the longest listed name it starts with (dated
/// snapshots like `claude-sonnet-4-5-20250929`, `claude-opus-4-8[1m]`), else the default.
fn entry(model: &str) -> Option<Entry> {
    known(model).or_else(|| table().map(|t| t.default.clone()))
}

/// The entry the table lists for a model, if it lists one.
fn known(model: &str) -> Option<Entry> {
    let table = table()?;
    if let Some(e) = table.models.get(model) {
        return Some(e.clone());
    }
    let prefix = table.models.iter().filter(|(name, _)| model.starts_with(name.as_str())).max_by_key(|(n, _)| n.len());
    prefix.map(|(_, e)| e.clone())
}

/// A model's prices; a model the table does not list costs nothing, with one warning on stderr
/// (rather than silently getting another model's prices).
pub fn price_or_warn(model: &str) -> Option<Price> {
    if known(model).is_none() {
        crate::term::errln!(
            "reloop: warning: data/models.json has no prices for model {model}: its cost counts as 0 and its context window as {}",
            context_window(model)
        );
        return None;
    }
    price(model)
}

/// The name Claude Code shows for a model (`Sonnet 4.6`), or the model's own when the table
/// has none.
pub fn display_name(model: &str) -> String {
    known(model).and_then(|e| e.display).unwrap_or_else(|| model.to_string())
}

pub fn context_window(model: &str) -> u64 {
    entry(model).map_or(200_000, |e| e.context_window)
}

pub fn price(model: &str) -> Option<Price> {
    let e = entry(model)?;
    Some(Price {
        model: model.to_string(),
        input: e.input,
        output: e.output,
        cache_write: e.cache_write,
        cache_read: e.cache_read,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_table_parses_and_matches_dated_names() {
        assert!(super::table().is_some());
        assert_eq!(super::price("claude-sonnet-4-5-20250929").unwrap().output, 15.0);
        assert_eq!(super::context_window("some-local-model"), 200_000);
    }
}
