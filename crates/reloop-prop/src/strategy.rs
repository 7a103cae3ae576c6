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

/// What running a call gives. Simpler outcomes first: shrinking moves toward them. A drawn
/// denial stands for the user refusing; under a setup with permission rules the rules refuse
/// instead ([`tool_result_for`]).
pub fn tool_result() -> impl Strategy<Value = ToolResult> {
    prop_oneof![
        8 => Just(ToolResult::Success),
        2 => Just(ToolResult::Error),
        1 => (10_000usize..200_000).prop_map(ToolResult::Large),
        1 => Just(ToolResult::Denied),
    ]
}

/// What running a call gives under `setup`: with permission rules, a call is refused only as
/// the rules and the hooks refuse it, never by a drawn denial.
pub fn tool_result_for(setup: &Setup) -> BoxedStrategy<ToolResult> {
    if setup.permissions.is_none() {
        return tool_result().boxed();
    }
    prop_oneof![
        8 => Just(ToolResult::Success),
        2 => Just(ToolResult::Error),
        1 => (10_000usize..200_000).prop_map(ToolResult::Large),
    ]
    .boxed()
}

/// An input for a tool with `schema`: valid (every required property of its type) or invalid
/// (a required property missing, or of the wrong type).
pub fn tool_input(schema: &Value, valid: bool, variant: u8) -> Value {
    sampled_input(schema, valid, variant, &[])
}

/// As [`tool_input`], the first required string property taken from `samples` (what the
/// permission rules name) two times in three when there are some; variant 0, where shrinking
/// goes, takes none.
pub fn sampled_input(schema: &Value, valid: bool, variant: u8, samples: &[String]) -> Value {
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let mut input = Map::new();
    let mut sample = match variant.is_multiple_of(3) {
        true => None,
        false => samples.get(usize::from(variant) % samples.len().max(1)).cloned(),
    };
    for name in &required {
        let ty = props.get(name).and_then(|p| p.get("type")).and_then(Value::as_str).unwrap_or("string");
        let value = match (ty, sample.take()) {
            ("string", Some(text)) => json!(text),
            (_, taken) => {
                sample = taken;
                example(ty)
            }
        };
        input.insert(name.clone(), value);
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

/// One call of one of `setup`'s tools: valid input most of the time, a result, and a verdict
/// for each hook that matches it.
pub fn call(setup: &Setup) -> impl Strategy<Value = Call> {
    let tools = setup.tools.clone();
    let count = tools.len().max(1);
    let results = tool_result_for(setup);
    let most = tools.iter().map(|t| t.pre_hooks.len() + t.post_hooks.len()).max().unwrap_or(0);
    let verdicts = prop::collection::vec(hook_outcome(), most);
    // Drawn as "invalid" so that shrinking (toward false) moves toward a valid input.
    (0..count, prop::bool::weighted(0.1), any::<u8>(), results, verdicts).prop_map(
        move |(i, invalid, variant, result, verdicts)| {
            let valid = !invalid;
            let tool = tools.get(i).cloned().unwrap_or_else(|| OfferedTool::new("Read", json!({})));
            // One verdict a hook: the PreToolUse hooks' first, then the PostToolUse hooks'.
            let pre = tool.pre_hooks.len();
            let drawn = |n: usize, skip: usize| -> Vec<HookOutcome> {
                (0..n).map(|j| verdicts.get(skip + j).copied().unwrap_or(HookOutcome::Pass)).collect()
            };
            Call {
                input: sampled_input(&tool.schema, valid, variant, &tool.samples),
                result: if valid { result } else { ToolResult::Invalid },
                pre_hooks: drawn(tool.pre_hooks.len(), 0),
                post_hooks: drawn(tool.post_hooks.len(), pre),
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
    let calls = prop::collection::vec(call(setup), 1..4);
    let read_calls = if setup.tool("Read").is_some() { 2usize } else { 0 };
    prop_oneof![
        4 => Just(ModelOutcome::Text),
        8 => (calls, prop_oneof![3 => small, 1 => half..past])
            .prop_map(|(calls, input_tokens)| ModelOutcome::Calls { calls, input_tokens }),
        2 => Just(ModelOutcome::MaxTokens),
        1 => prop_oneof![
            Just(StopReason::StopSequence),
            Just(StopReason::PauseTurn),
            Just(StopReason::Refusal),
            // A stop reason this engine has no name for, as a newer API sends.
            Just(StopReason::Other("model_context_window_exceeded".into())),
        ].prop_map(ModelOutcome::Stopped),
        1 => Just(ModelOutcome::MissingToolCall),
        2 => (0u64..4_000).prop_map(ModelOutcome::TextTokens),
        // Large usage; its calls (always Reads of /x) only when Read is offered. Calls of any
        // offered tool with large usage are drawn as `Calls` above.
        1 => (half..past, 0..=read_calls).prop_map(|(input_tokens, tools)| ModelOutcome::Large { input_tokens, tools }),
        // Plain Reads of /x (none: a `tool_use` stop with no block), when Read is offered.
        1 => (0..=read_calls).prop_map(ModelOutcome::Tools),
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
    let per_stop = setup.stop_hooks.len().max(1);
    (
        prop::collection::vec(model_outcome(setup), 0..=n),
        prop::collection::vec(hook_outcome(), 0..n * per_stop),
        prop::collection::vec(0usize..4 * n, 0..2),
        prop::option::weighted(0.1, 0usize..8 * n),
    )
        .prop_map(|(script, stop_hooks, queue_at, abort_at)| World { script, stop_hooks, queue_at, abort_at })
}
