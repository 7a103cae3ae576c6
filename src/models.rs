//! The model table (`data/models.json`): context windows and prices, bundled into the binary.

use reloop_core::profile::ProfileId;
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

/// A model's cost for a usage: the prices given (`--price`, or a session's recorded ones) first,
/// then the model table's.
pub(crate) fn price_in(prices: &[reloop_core::Price]) -> impl Fn(&str, &reloop_core::Usage) -> Option<f64> + '_ {
    move |model, usage| match prices.iter().find(|p| p.model == model) {
        Some(p) => Some(p.cost(usage)),
        None => known_price(model).map(|p| p.cost(usage)),
    }
}

/// The model aliases a Claude Code version resolves before its first request, with the id it
/// sends and the `max_tokens` it asks of that model. Recorded from each version with `--model
/// ALIAS` against a fake server (`crates/reloop-import/tests/recorded/VERSION/model_alias/`):
/// the real API answers an alias with 404, so an app passing `opus` must get the id.
/// `opusplan` is Sonnet outside plan mode (print mode never plans); `[1m]` asks for the
/// 1M-context variant of the same id, which 2.1.197 keeps on the name (`system/init` shows
/// `claude-opus-4-8[1m]`) and sends as the id with the `context-1m-2025-08-07` beta; its
/// `default` is that variant of Opus. 2.1.332 drops the suffix.
const ALIASES_2_1_197: &[(&str, &str, u32)] = &[
    ("default", "claude-opus-4-8[1m]", 64_000),
    ("best", "claude-opus-4-8", 64_000),
    ("opus", "claude-opus-4-8", 64_000),
    ("sonnet", "claude-sonnet-5", 64_000),
    ("haiku", "claude-haiku-4-5-20251001", 32_000),
    ("opusplan", "claude-sonnet-5", 64_000),
];

/// As [`ALIASES_2_1_197`], for 2.1.332.
const ALIASES_2_1_332: &[(&str, &str, u32)] = &[
    ("default", "claude-opus-5-5", 128_000),
    ("best", "claude-opus-5-5", 128_000),
    ("opus", "claude-opus-5-5", 128_000),
    ("sonnet", "claude-sonnet-5-5", 128_000),
    ("haiku", "claude-haiku-5-5", 128_000),
    ("opusplan", "claude-sonnet-5-5", 128_000),
];

/// The alias table of a profile; reloop's own profile resolves as the newest version does
/// (the API refuses aliases whichever rules the loop follows).
fn aliases(profile: ProfileId) -> &'static [(&'static str, &'static str, u32)] {
    match profile {
        ProfileId::ClaudeCode2_1_197 => ALIASES_2_1_197,
        ProfileId::ClaudeCode2_1_332 | ProfileId::Reloop => ALIASES_2_1_332,
    }
}

/// The model id `name` stands for under `profile`: an alias (`opus`, `sonnet[1m]`, any case)
/// becomes the id that version sends; any other name is kept as given.
pub fn resolve(profile: ProfileId, name: &str) -> String {
    let trimmed = name.trim();
    let base = trimmed.strip_suffix("[1m]").or_else(|| trimmed.strip_suffix("[1M]"));
    let one_m = base.is_some() && profile == ProfileId::ClaudeCode2_1_197;
    let base = base.unwrap_or(trimmed);
    aliases(profile).iter().find(|(alias, _, _)| alias.eq_ignore_ascii_case(base)).map_or_else(
        || name.to_string(),
        |(_, id, _)| if one_m && !id.ends_with("[1m]") { format!("{id}[1m]") } else { (*id).to_string() },
    )
}

/// The id the API is sent for a model named `model`: without the `[1m]` that names its
/// 1M-context variant (asked for by a beta instead, reloop_model's Anthropic provider).
pub fn api_id(model: &str) -> &str {
    reloop_model::api_model_id(model)
}

/// The `max_tokens` `profile`'s version asks of `model`: what it was seen sending for an
/// alias's id, else the profile's rule (Opus's own limit, 32000 for the rest).
pub fn max_tokens(profile: ProfileId, model: &str) -> u32 {
    let rules = profile.profile();
    if rules.claude_code_version.is_some() {
        let id = |name: &str| name.strip_suffix("[1m]").unwrap_or(name).to_string();
        if let Some((_, _, n)) = aliases(profile).iter().find(|(_, alias_id, _)| id(alias_id) == id(model)) {
            return *n;
        }
    }
    rules.max_tokens_for(model)
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

    #[test]
    fn aliases_become_the_ids_each_version_sends() {
        use super::{max_tokens, resolve};
        use reloop_core::profile::ProfileId::{ClaudeCode2_1_197 as V197, ClaudeCode2_1_332 as V332, Reloop};
        let cases = [
            ("opus", "claude-opus-4-8", "claude-opus-5-5"),
            ("sonnet", "claude-sonnet-5", "claude-sonnet-5-5"),
            ("haiku", "claude-haiku-4-5-20251001", "claude-haiku-5-5"),
            ("opusplan", "claude-sonnet-5", "claude-sonnet-5-5"),
            ("opus[1m]", "claude-opus-4-8[1m]", "claude-opus-5-5"),
            ("sonnet[1m]", "claude-sonnet-5[1m]", "claude-sonnet-5-5"),
            ("best", "claude-opus-4-8", "claude-opus-5-5"),
            ("default", "claude-opus-4-8[1m]", "claude-opus-5-5"),
            ("default[1m]", "claude-opus-4-8[1m]", "claude-opus-5-5"),
            ("Opus", "claude-opus-4-8", "claude-opus-5-5"),
        ];
        for (alias, old, new) in cases {
            assert_eq!((resolve(V197, alias), resolve(V332, alias)), (old.to_string(), new.to_string()), "{alias}");
            assert_eq!(resolve(Reloop, alias), new);
        }
        // Ids and unknown names pass unchanged, `[1m]` included.
        for name in ["claude-sonnet-4-6", "claude-opus-4-8[1m]", "qwen3", "opus-ish", ""] {
            assert_eq!(resolve(V332, name), name);
        }
        assert_eq!(
            (max_tokens(V197, "claude-sonnet-5"), max_tokens(V197, "claude-haiku-4-5-20251001")),
            (64_000, 32_000)
        );
        assert_eq!((max_tokens(V332, "claude-haiku-5-5"), max_tokens(V332, "claude-sonnet-4-6")), (128_000, 32_000));
        assert_eq!(max_tokens(V197, "claude-opus-4-8"), 64_000);
        assert_eq!(max_tokens(V197, "claude-sonnet-5[1m]"), 64_000);
        // reloop's own rules keep their limits: only a Claude Code version's recordings apply.
        assert_eq!(max_tokens(Reloop, "claude-sonnet-5-5"), 32_000);
    }
}
