//! `reloop replay SESSION --set KEY=VALUE ...`: what the recorded session would have done under
//! other rules. The recorded events go through the engine under the changed configuration; the
//! first step where it would have acted otherwise is reported in the loop's own words ("would
//! have stopped at turn 3 with max_turns"). Past that step the journal holds no events for the
//! changed rules (the session never made the requests they would have made), so the replay
//! stops there and says so.

use reloop_core::profile::ProfileId;
use reloop_core::{Config, Reason};
use serde_json::json;

use super::{CliError, JournalArg};
use crate::error::Exit;
use crate::term::outln;

/// The settings `--set` takes, with what their value is.
pub const KEYS: &[(&str, &str)] = &[
    ("compat", "a profile's name"),
    ("max_turns", "a number of turns, or none"),
    ("stop_hook_block_cap", "consecutive Stop-hook blocks"),
    ("max_budget_usd", "US dollars, or none"),
    ("token_budget", "output tokens, or none"),
    ("context_window", "tokens"),
    ("auto_compact", "true or false"),
    ("max_retries", "retries of one request"),
    ("flag.N", "on or off (behaviour flag N)"),
];

/// Replays `selector` under the changed settings and reports where it would have differed.
pub fn replay(
    journal: &JournalArg,
    selector: &str,
    json: bool,
    flips: &[u32],
    set: &[String],
) -> Result<Exit, CliError> {
    // Streamed as `replay` is: the steps are read a row at a time, never held.
    let mut opened = super::reading::open(journal)?;
    let id = opened.resolve(selector)?;
    let mut header = opened.header(&id)?;
    let recorded = header.core_config.clone();
    for change in set {
        apply(&mut header.core_config, change)?;
    }
    if header.core_config.max_budget_usd.is_some() && header.core_config.max_budget_usd != recorded.max_budget_usd {
        budget_is_countable(&header.core_config)?;
    }
    let mut replayer = reloop_inspect::Replayer::new(&header, flips);
    super::reading::feed(&mut opened, &id, &mut replayer)?;
    let report = replayer.finish();
    let changes = set.join(" ");
    let Some(d) = &report.divergence else {
        if json {
            print(&json!({"changes": set, "differs": false, "steps": report.steps}))?;
        } else {
            outln!("what-if {changes}: no change — all {} steps go as recorded", report.steps);
        }
        return Ok(Exit::Success);
    };
    // The turn the step was in: its row, walked to (nothing before it is kept).
    let mut turn = 0;
    opened.visit_steps(&id, &mut |s| {
        if s.seq == d.seq {
            turn = s.turn_before;
        }
        Ok(s.seq < d.seq)
    })?;
    let would = would_have(&d.actual.reason, &d.expected.reason, &d.actual.effects, &d.expected.effects, &d.diff);
    if json {
        print(&json!({
            "changes": set, "differs": true, "seq": d.seq, "turn": turn, "event": d.event_kind,
            "would": would, "code": d.code, "recorded": d.expected, "under_changes": d.actual, "diff": d.diff,
        }))?;
    } else {
        if recorded.profile != header.core_config.profile {
            outln!(
                "the session was recorded under {} and replayed under {}",
                recorded.profile.name(),
                header.core_config.profile.name()
            );
        }
        outln!("what-if {changes}: at step {} (turn {turn}, {}) the session {would}", d.seq, d.event_kind);
        // What differs, by JSON path: `-` as recorded, `+` under the changes.
        for line in d.diff.iter().take(SHOWN_DIFF_LINES) {
            outln!("  {}", clipped(line));
        }
        outln!("  {} steps went as recorded before it", report.steps);
        outln!("  past it the journal holds no events for the changed rules: the session never made what they would have asked for");
    }
    Ok(Exit::Diverged)
}

fn print(value: &serde_json::Value) -> Result<(), CliError> {
    crate::term::json_line(value, true).map_err(|e| CliError::Io(e.to_string()))
}

/// How many lines of the difference a what-if shows, each cut to [`SHOWN_DIFF_CHARS`].
const SHOWN_DIFF_LINES: usize = 8;
const SHOWN_DIFF_CHARS: usize = 200;

fn clipped(line: &str) -> String {
    match line.char_indices().nth(SHOWN_DIFF_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// The first difference, in the loop's words; `diff` (the replay's, by JSON path) names where
/// two sides that read alike in a few words differ (another profile's request has the same kind
/// and size, other text).
fn would_have(
    actual: &Option<Reason>,
    expected: &Option<Reason>,
    actual_effects: &serde_json::Value,
    expected_effects: &serde_json::Value,
    diff: &[String],
) -> String {
    let recorded = expected.as_ref().map_or("went on".to_string(), |r| format!("{} ({})", r.name(), r.explain()));
    if actual == expected && actual_effects == expected_effects {
        // Same decision, same effects: only what the state holds after it differs, which two
        // sentences naming the same reason would hide.
        let what: Vec<&str> = ["phase", "digest", "ignored"]
            .into_iter()
            .filter(|field| diff.iter().any(|l| l.get(2..).is_some_and(|rest| rest.starts_with(field))))
            .collect();
        let what = if what.is_empty() { "its state".to_string() } else { what.join(", ") };
        return format!(
            "would have decided as recorded ({recorded}), but the state it leaves differs ({what}): the changed rules track the session otherwise from here"
        );
    }
    match actual {
        Some(reason @ Reason::Terminal(_)) => {
            format!(
                "would have stopped with {}: {}; it {}",
                reason.name(),
                reason.explain(),
                recorded_instead(&recorded)
            )
        }
        Some(reason @ Reason::Continue(_)) => {
            format!(
                "would have continued with {}: {}; it {}",
                reason.name(),
                reason.explain(),
                recorded_instead(&recorded)
            )
        }
        None if actual_effects != expected_effects => {
            let (now, then) = (short(actual_effects), short(expected_effects));
            if now != then {
                return format!("would have acted otherwise: {now} instead of {then}");
            }
            let paths: Vec<&str> = diff
                .iter()
                .filter_map(|line| line.get(2..)?.split_once(": ").map(|(path, _)| path))
                .fold(Vec::new(), |mut seen, path| {
                    if !seen.contains(&path) {
                        seen.push(path);
                    }
                    seen
                });
            match paths.as_slice() {
                [] => format!("would have acted otherwise: {now}, unlike the recorded one"),
                [one] => format!("would have acted otherwise: {now} differing at {one}"),
                [first, rest @ ..] => {
                    format!("would have acted otherwise: {now} differing at {first} and {} more", rest.len())
                }
            }
        }
        None => format!("would have gone on where it decided: it {}", recorded_instead(&recorded)),
    }
}

fn recorded_instead(recorded: &str) -> String {
    if recorded == "went on" {
        "went on as recorded".to_string()
    } else {
        format!("was recorded as {recorded}")
    }
}

/// Effects in a few words: their kinds, with a compaction's trigger.
fn short(effects: &serde_json::Value) -> String {
    let kinds: Vec<String> = effects
        .as_array()
        .map(|list| {
            list.iter()
                .map(|e| {
                    let kind = e["effect"].as_str().or_else(|| e["notice"].as_str()).unwrap_or("effect");
                    match (kind, e["max_tokens"].as_u64()) {
                        ("call_model", Some(n)) => format!("a request (max_tokens {n})"),
                        _ => kind.replace('_', " "),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if kinds.is_empty() {
        "nothing".to_string()
    } else {
        kinds.join(", ")
    }
}

/// A budget set on replay counts the session's cost as it was recorded, at the prices the
/// session recorded. A model it recorded none for (an import records none; a run on a model the
/// table does not list) counted as costing 0, so the budget could never bite and the answer
/// would be a misleading "no change": it is refused instead. (Pricing it now would change the
/// recorded state's digest at the first response, a difference the session never had.)
fn budget_is_countable(config: &Config) -> Result<(), CliError> {
    let models = std::iter::once(config.model.as_str()).chain(config.fallback_model.as_deref());
    for model in models.filter(|m| !m.is_empty()) {
        if !config.prices.iter().any(|p| p.model == model) {
            return Err(CliError::Usage(format!(
                "--set max_budget_usd cannot be answered: the session recorded no price for model {model} (an \
                 imported session records none), so its cost counted as 0 and no budget would stop it"
            )));
        }
    }
    Ok(())
}

/// One `KEY=VALUE` change to the configuration a replay runs under.
fn apply(config: &mut Config, change: &str) -> Result<(), CliError> {
    let bad = |why: &str| {
        let known: Vec<String> = KEYS.iter().map(|(k, v)| format!("{k} ({v})")).collect();
        CliError::Usage(format!("--set {change}: {why}; known: {}", known.join(", ")))
    };
    let (key, value) = change.split_once('=').ok_or_else(|| bad("expected KEY=VALUE"))?;
    let (key, value) = (key.trim(), value.trim());
    let number = |v: &str| v.parse::<u64>().map_err(|_| bad("expected a whole number"));
    let optional = |v: &str| if v == "none" { Ok(None) } else { number(v).map(Some) };
    let small = |n: u64| u32::try_from(n).map_err(|_| bad("too large"));
    match key {
        "compat" => {
            config.profile = ProfileId::parse(value).ok_or_else(|| {
                let names: Vec<&str> = ProfileId::ALL.iter().map(|p| p.name()).collect();
                bad(&format!("unknown profile (the profiles: {})", names.join(", ")))
            })?;
        }
        "max_turns" => config.max_turns = optional(value)?.map(small).transpose()?.filter(|n| *n > 0),
        "stop_hook_block_cap" => config.stop_hook_block_cap = small(number(value)?)?,
        "max_budget_usd" => {
            config.max_budget_usd = match value {
                "none" => None,
                v => Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|b| b.is_finite() && *b >= 0.0)
                        .ok_or_else(|| bad("expected dollars"))?,
                ),
            }
        }
        "token_budget" => config.token_budget = optional(value)?,
        "context_window" => config.context_window = number(value)?.max(1),
        "auto_compact" => config.auto_compact = value.parse::<bool>().map_err(|_| bad("expected true or false"))?,
        "max_retries" => config.max_retries = small(number(value)?)?,
        flag if flag.starts_with("flag.") => {
            let n = small(number(&flag["flag.".len()..])?)?;
            let on = match value {
                "on" | "true" => true,
                "off" | "false" => false,
                _ => return Err(bad("expected on or off")),
            };
            if config.flags.has(n) != on {
                config.flags.flip(n);
            }
        }
        _ => return Err(bad("unknown setting")),
    }
    Ok(())
}
