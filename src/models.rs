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
    let prefix = table
        .models
        .iter()
        .filter(|(name, _)| model.strip_prefix(name.as_str()).is_some_and(same_model))
        .max_by_key(|(n, _)| n.len());
    prefix.map(|(_, e)| e.clone())
}

/// Whether what follows a listed name still names that model: a dated snapshot (`-20250929`,
/// Vertex's `@20250929`) or a context variant (`[1m]`). Anything else is another model
/// (`claude-sonnet-4-7` is not `claude-sonnet-4`), whose price the table does not know.
fn same_model(rest: &str) -> bool {
    let dated = |d: &str| d.len() >= 8 && d.bytes().take(8).all(|b| b.is_ascii_digit());
    rest.is_empty() || rest.starts_with('[') || rest.strip_prefix(['-', '@']).is_some_and(dated)
}

/// The words for a model with no price, said the same way by every command that meets one.
pub fn unpriced(model: &str) -> String {
    format!("no price for model {model} (data/models.json does not list it)")
}

/// The name Claude Code shows for a model (`Sonnet 4.6`), or the model's own when the table
/// has none.
pub fn display_name(model: &str) -> String {
    known(model).and_then(|e| e.display).unwrap_or_else(|| model.to_string())
}

pub fn context_window(model: &str) -> u64 {
    entry(model).map_or(200_000, |e| e.context_window)
}

/// The prices the table lists for a model; `None` for a model it does not list, whose cost is
/// unknown (never the default entry's prices: a local or newer model is not priced as Sonnet).
pub fn known_price(model: &str) -> Option<Price> {
    let e = known(model)?;
    Some(Price {
        model: model.to_string(),
        input: e.input,
        output: e.output,
        cache_write: e.cache_write,
        cache_read: e.cache_read,
    })
}

/// `--price MODEL=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ]`, USD per million tokens; cache writes
/// default to 1.25 times the input price and cache reads to a tenth of it, as Anthropic prices
/// its models.
pub fn parse_price(text: &str) -> Result<Price, String> {
    let usage = "expected MODEL=INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ] in USD per million tokens";
    let (model, numbers) = text.split_once('=').ok_or_else(|| format!("{text:?}: {usage}"))?;
    let model = model.trim();
    let numbers: Vec<f64> = numbers
        .split(',')
        .map(|n| n.trim().parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("{text:?}: {usage} (each a number, 0 or more)"))?;
    if model.is_empty() || !matches!(numbers.len(), 2 | 4) {
        return Err(format!("{text:?}: {usage}"));
    }
    let (input, output) = (numbers[0], numbers[1]);
    let (cache_write, cache_read) = match numbers.get(2..4) {
        Some([write, read]) => (*write, *read),
        _ => (input * 1.25, input * 0.1),
    };
    Ok(Price { model: model.to_string(), input, output, cache_write, cache_read })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_table_parses_and_matches_dated_names() {
        assert!(super::table().is_some());
        assert_eq!(super::known_price("claude-sonnet-4-5-20250929").unwrap().output, 15.0);
        assert_eq!(super::context_window("some-local-model"), 200_000);
    }

    #[test]
    fn a_model_the_table_does_not_list_has_no_price_rather_than_the_defaults() {
        assert_eq!(super::known_price("some-local-model"), None);
        assert_eq!(super::known_price("claude-opus-4-6"), None);
        // A listed name followed by anything but a date or a context variant is another model.
        assert_eq!(super::known_price("claude-sonnet-4-7"), None);
        assert_eq!(super::known_price("claude-sonnet-4x"), None);
        let output = |m: &str| super::known_price(m).map(|p| p.output);
        assert_eq!(output("claude-sonnet-4-20250514"), Some(15.0));
        assert_eq!(output("claude-sonnet-4-5@20250929"), Some(15.0));
        assert_eq!(output("claude-opus-4-8[1m]"), Some(25.0));
        assert_eq!(output("claude-haiku-4-5-20251001"), Some(5.0));
    }

    #[test]
    fn prices_given_on_the_command_line() {
        let p = super::parse_price("qwen3=0.5,2").unwrap();
        assert_eq!(
            (p.model.as_str(), p.input, p.output, p.cache_write, p.cache_read),
            ("qwen3", 0.5, 2.0, 0.625, 0.05)
        );
        let p = super::parse_price("m=1,2,3,4").unwrap();
        assert_eq!((p.cache_write, p.cache_read), (3.0, 4.0));
        for bad in ["qwen3", "=1,2", "m=1", "m=1,2,3", "m=1,x", "m=-1,2", "m=NaN,2", "m=inf,1"] {
            assert!(super::parse_price(bad).is_err(), "{bad}");
        }
    }
}
