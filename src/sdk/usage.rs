//! The `usage` and `modelUsage` of stream-json lines, and their content blocks, in Claude
//! Code's shapes.

use std::collections::BTreeMap;

use reloop_core::profile::ProfileId;
use reloop_core::Usage;
use serde_json::{json, Map, Value};

use super::stream::shown_id;

pub(super) fn minus(total: &Usage, before: &Usage) -> Usage {
    Usage {
        input_tokens: total.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: total.output_tokens.saturating_sub(before.output_tokens),
        cache_creation_input_tokens: total
            .cache_creation_input_tokens
            .saturating_sub(before.cache_creation_input_tokens),
        cache_read_input_tokens: total.cache_read_input_tokens.saturating_sub(before.cache_read_input_tokens),
    }
}

pub(super) fn usage_json(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
    })
}

/// `modelUsage` in Claude Code's camelCase, with each model's cost, context window and the
/// output-token limit the profile gives it. A model with no price costs 0 here, as in
/// `total_cost_usd` (the launch warned about it on stderr), never another model's price.
pub(super) fn model_usage(
    by_model: &BTreeMap<String, Usage>,
    profile: ProfileId,
    prices: &[reloop_core::Price],
    limit: Option<u32>,
) -> Value {
    let mut out = Map::new();
    for (model, usage) in by_model {
        let max_output_tokens = limit.unwrap_or_else(|| profile.profile().max_tokens_for(model));
        let cost = crate::models::price_in(prices)(model, usage).unwrap_or(0.0);
        out.insert(
            shown_id(profile, model),
            json!({
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
                "cacheReadInputTokens": usage.cache_read_input_tokens,
                "cacheCreationInputTokens": usage.cache_creation_input_tokens,
                "webSearchRequests": 0,
                "costUSD": cost,
                "contextWindow": crate::models::context_window(model),
                "maxOutputTokens": max_output_tokens,
            }),
        );
    }
    Value::Object(out)
}

/// An assistant content block as Claude Code prints it: a call whose input never parsed (cut by
/// `max_tokens`) shows `{"__unparsedToolInput": {"raw", "len"}}`, as the next request sends it
/// (`len` in UTF-16 units).
pub(super) fn shown_block(block: &reloop_core::ContentBlock) -> Value {
    let mut shown = json!(block);
    if let reloop_core::ContentBlock::ToolUse(call) = block {
        if let Some(raw) = call.input.as_str() {
            let len = raw.encode_utf16().count();
            shown["input"] = json!({"__unparsedToolInput": {"raw": raw, "len": len}});
        }
    }
    shown
}
