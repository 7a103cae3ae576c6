//! A world's model answers as a cassette (`{"responses": [...]}`) that `reloop run --script`
//! plays: one response a request, in request order, as the simulation answered them.

use reloop_core::StopReason;
use serde_json::{json, Value};

use crate::{ModelOutcome, World};

/// The cassette of `world` for `model`. Its tool calls run for real under `reloop run`, so
/// their outputs are the workspace's; hooks, queued input and aborts are not in a cassette.
pub fn cassette(world: &World, model: &str) -> Value {
    let responses: Vec<Value> =
        world.script.iter().enumerate().map(|(i, outcome)| response(i as u32 + 1, outcome, model)).collect();
    json!({ "responses": responses })
}

fn message(request: u32, model: &str, content: Vec<Value>, stop: &str, input: u64, output: u64) -> Value {
    json!({"message": {
        "id": format!("msg_prop_{request}"), "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": input, "output_tokens": output},
    }})
}

fn error(status: u16, error_type: &str, message: &str, headers: Value) -> Value {
    json!({"error": {
        "status": status, "headers": headers,
        "body": {"type": "error", "error": {"type": error_type, "message": message}},
    }})
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn tool_use(request: u32, i: usize, name: &str, input: &Value) -> Value {
    json!({"type": "tool_use", "id": format!("toolu_{request}_{i}"), "name": name, "input": input})
}

fn response(request: u32, outcome: &ModelOutcome, model: &str) -> Value {
    match outcome {
        ModelOutcome::Text => message(request, model, vec![text("done")], "end_turn", 10, 5),
        ModelOutcome::Tools(n) => {
            let calls = (0..*n).map(|i| tool_use(request, i, "Read", &json!({"file_path": "/x"}))).collect();
            message(request, model, calls, "tool_use", 10, 5)
        }
        ModelOutcome::Error => error(500, "api_error", "Internal server error", json!({})),
        ModelOutcome::Overloaded => error(529, "overloaded_error", "Overloaded", json!({})),
        ModelOutcome::Fatal => error(400, "invalid_request_error", "bad request", json!({})),
        ModelOutcome::MaxTokens => message(request, model, vec![text("half a thou")], "max_tokens", 10, 5),
        ModelOutcome::MissingToolCall => message(request, model, vec![text("let me call")], "tool_use", 10, 5),
        ModelOutcome::TextTokens(n) => message(request, model, vec![text("work")], "end_turn", 10, *n),
        ModelOutcome::Large { input_tokens, tools } => {
            let content = if *tools == 0 {
                vec![text("big")]
            } else {
                (0..*tools).map(|i| tool_use(request, i, "Read", &json!({"file_path": "/x"}))).collect()
            };
            let stop = if *tools == 0 { "end_turn" } else { "tool_use" };
            message(request, model, content, stop, *input_tokens, 50)
        }
        ModelOutcome::PromptTooLong => {
            error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", json!({}))
        }
        ModelOutcome::RateLimited { retry_after_ms } => {
            let headers = match retry_after_ms {
                Some(ms) => json!({"retry-after-ms": ms.to_string()}),
                None => json!({}),
            };
            error(429, "rate_limit_error", "Rate limited", headers)
        }
        ModelOutcome::StreamCut => json!({"sse": format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"msg_prop_{request}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"{model}\",\"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":10,\"output_tokens\":1}}}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"half a sen\"}}}}\n\n"
        )}),
        ModelOutcome::Stopped(stop) => {
            let reason = match stop {
                StopReason::Other(s) => s.clone(),
                other => other.as_str().to_string(),
            };
            message(request, model, vec![text("stopped")], &reason, 10, 5)
        }
        ModelOutcome::Calls { calls, input_tokens } => {
            if calls.is_empty() {
                return message(request, model, vec![text("nothing to call")], "end_turn", *input_tokens, 20);
            }
            let content = calls.iter().enumerate().map(|(i, c)| tool_use(request, i, &c.name, &c.input)).collect();
            message(request, model, content, "tool_use", *input_tokens, 20)
        }
    }
}
