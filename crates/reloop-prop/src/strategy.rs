//! proptest strategies for every outside fact a case can meet, drawn for a [`Setup`]. Exported
//! so a Rust test of its own configuration draws the same worlds as `reloop prop` (and gets a
//! new outcome kind when one is added here).

use proptest::prelude::*;
use reloop_core::StopReason;
use serde_json::{json, Map, Value};

use crate::{Call, HookOutcome, ModelOutcome, OfferedTool, Setup, ToolResult, World};

/// A hook's verdict: mostly pass, sometimes block, prevent or fail.
pub fn hook_outcome() -> impl Strategy<Value = HookOutcome> {
    prop_oneof![
        6 => Just(HookOutcome::Pass),
        3 => Just(HookOutcome::Block),
        1 => Just(HookOutcome::Prevent),
        1 => Just(HookOutcome::Error),
    ]
}

/// What running a call gives. Simpler outcomes first: shrinking moves toward them.
pub fn tool_result() -> impl Strategy<Value = ToolResult> {
    prop_oneof![
        8 => Just(ToolResult::Success),
        2 => Just(ToolResult::Error),
        1 => (10_000usize..200_000).prop_map(ToolResult::Large),
        1 => Just(ToolResult::Denied),
    ]
}

/// An input for a tool with `schema`: valid (every required property of its type) or invalid
/// (a required property missing, or of the wrong type).
pub fn tool_input(schema: &Value, valid: bool, variant: u8) -> Value {
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let mut input = Map::new();
    for name in &required {
        let ty = props.get(name).and_then(|p| p.get("type")).and_then(Value::as_str).unwrap_or("string");
        input.insert(name.clone(), example(ty));
    }
    if !valid {
        match (required.first(), variant % 2) {
            (Some(first), 0) => {
                input.remove(first);
            }
            (Some(first), _) => {
                let ty = props.get(first).and_then(|p| p.get("type")).and_then(Value::as_str).unwrap_or("string");
                input.insert(first.clone(), if ty == "string" { json!(42) } else { json!("not a ") });
            }
            (None, _) => {
                input.insert("unexpected".into(), json!(null));
            }
        }
    }
    Value::Object(input)
}

fn example(ty: &str) -> Value {
    match ty {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        _ => json!("x"),
    }
}

/// One call of one of `tools`: valid input most of the time, a result, and the verdicts of the
/// hooks that match it.
pub fn call(tools: Vec<OfferedTool>) -> impl Strategy<Value = Call> {
    let count = tools.len().max(1);
    // Drawn as "invalid" so that shrinking (toward false) moves toward a valid input.
    (0..count, prop::bool::weighted(0.1), any::<u8>(), tool_result(), hook_outcome(), hook_outcome()).prop_map(
        move |(i, invalid, variant, result, pre, post)| {
            let valid = !invalid;
            let tool = tools.get(i).cloned().unwrap_or_else(|| OfferedTool::new("Read", json!({})));
            Call {
                input: tool_input(&tool.schema, valid, variant),
                result: match (valid, tool.denied) {
                    (false, _) => ToolResult::Invalid,
                    (true, true) => ToolResult::Denied,
                    (true, false) => result,
                },
                pre_hook: tool.pre_hooks.then_some(pre),
                post_hook: tool.post_hooks.then_some(post),
                name: tool.name,
            }
        },
    )
}

/// Every kind of answer the model gives to one request, weighted as sessions meet them, the
/// simpler ones first so a counterexample shrinks toward them. Input tokens range up to past
/// the context window, so compaction and "prompt is too long" are met.
pub fn model_outcome(setup: &Setup) -> impl Strategy<Value = ModelOutcome> {
    // Ranges that are never empty, whatever the window (a tiny `--context-window` included).
    let window = setup.config.context_window.max(4);
    let (half, past) = (window / 2, window + window / 10 + 1);
    let small = 100u64.min(half - 1)..half;
    let tools = setup.tools.clone();
    let calls = prop::collection::vec(call(tools), 1..4);
    prop_oneof![
        4 => Just(ModelOutcome::Text),
        8 => (calls, prop_oneof![3 => small, 1 => half..past])
            .prop_map(|(calls, input_tokens)| ModelOutcome::Calls { calls, input_tokens }),
        2 => Just(ModelOutcome::MaxTokens),
        1 => prop_oneof![
            Just(StopReason::StopSequence),
            Just(StopReason::PauseTurn),
            Just(StopReason::Refusal),
        ].prop_map(ModelOutcome::Stopped),
        1 => Just(ModelOutcome::MissingToolCall),
        2 => (0u64..4_000).prop_map(ModelOutcome::TextTokens),
        1 => (half..past, 0usize..3)
            .prop_map(|(input_tokens, tools)| ModelOutcome::Large { input_tokens, tools }),
        1 => Just(ModelOutcome::Error),
        1 => Just(ModelOutcome::Overloaded),
        1 => prop::option::of(0u64..2_000).prop_map(|retry_after_ms| ModelOutcome::RateLimited { retry_after_ms }),
        1 => Just(ModelOutcome::StreamCut),
        1 => Just(ModelOutcome::Fatal),
        1 => Just(ModelOutcome::PromptTooLong),
    ]
}

/// A whole case: up to `setup.max_responses` answers, the Stop hooks' verdicts, and now and
/// then a queued message or an abort.
pub fn world(setup: &Setup) -> impl Strategy<Value = World> {
    let n = setup.max_responses.max(1);
    (
        prop::collection::vec(model_outcome(setup), 0..=n),
        prop::collection::vec(hook_outcome(), 0..n),
        prop::collection::vec(0usize..4 * n, 0..2),
        prop::option::weighted(0.1, 0usize..8 * n),
    )
        .prop_map(|(script, stop_hooks, queue_at, abort_at)| World { script, stop_hooks, queue_at, abort_at })
}
