//! The registry: what the model is offered, how calls are classified, and the validation door.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::Workspace;
use reloop_tools::{Tool, ToolContext, ToolOutput, ToolRegistry};
use serde_json::{json, Value};

/// A library user's tool that shouts its input and counts its calls.
struct Shout {
    name: &'static str,
    calls: Arc<AtomicUsize>,
}

impl Tool for Shout {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Upper-cases a text."
    }
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        })
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }
    fn call(&self, input: &Value, _ctx: &ToolContext) -> ToolOutput {
        self.calls.fetch_add(1, Ordering::SeqCst);
        ToolOutput::ok(input["text"].as_str().unwrap_or_default().to_uppercase())
    }
}

fn shout(name: &'static str) -> (Arc<Shout>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    (Arc::new(Shout { name, calls: calls.clone() }), calls)
}

fn spec_names(registry: &ToolRegistry) -> Vec<String> {
    registry.specs().into_iter().map(|s| s.name).collect()
}

#[test]
fn builtin_offers_claude_codes_tools_in_order() {
    assert_eq!(spec_names(&ToolRegistry::builtin()), ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]);
    assert!(ToolRegistry::empty().specs().is_empty());
}

#[test]
fn every_builtin_schema_is_a_closed_object_with_described_tools() {
    for spec in ToolRegistry::builtin().specs() {
        assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
        assert_eq!(spec.input_schema["additionalProperties"], false, "{}", spec.name);
        assert!(spec.input_schema["required"].is_array(), "{}", spec.name);
        assert!(spec.description.len() > 100, "{} needs a real description", spec.name);
    }
}

#[test]
fn grep_uses_claude_codes_flag_property_names() {
    let registry = ToolRegistry::builtin();
    let schema = registry.get("Grep").expect("Grep").input_schema();
    for name in [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "context",
        "head_limit",
        "offset",
        "multiline",
    ] {
        assert!(schema["properties"].get(name).is_some(), "missing property {name}");
    }
    assert_eq!(schema["properties"]["output_mode"]["enum"], json!(["content", "files_with_matches", "count"]));
}

#[test]
fn a_custom_tool_is_offered_after_the_builtins_and_runs() {
    let mut ws = Workspace::new();
    let (tool, calls) = shout("Shout");
    ws.registry.register(tool);
    assert_eq!(spec_names(&ws.registry), ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "Shout"]);
    assert_eq!(ws.ok("Shout", json!({"text": "hi"})), "HI");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn registering_an_existing_name_replaces_it_in_place() {
    let mut registry = ToolRegistry::builtin();
    let (tool, _) = shout("Grep");
    registry.register(tool);
    assert_eq!(spec_names(&registry), ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]);
    assert_eq!(registry.get("Grep").map(|t| t.description().to_string()).as_deref(), Some("Upper-cases a text."));
}

#[test]
fn a_registered_clone_does_not_change_the_original() {
    let original = ToolRegistry::empty();
    let mut copy = original.clone();
    copy.register(shout("Shout").0);
    assert!(original.get("Shout").is_none());
    assert!(copy.get("Shout").is_some());
}

#[test]
fn an_unknown_tool_is_an_error_output() {
    let ws = Workspace::new();
    assert_eq!(
        ws.err("Teleport", json!({})),
        "<tool_use_error>Error: No such tool available: Teleport</tool_use_error>"
    );
}

#[test]
fn invalid_input_is_reported_and_the_tool_does_not_run() {
    let mut ws = Workspace::new();
    let (tool, calls) = shout("Shout");
    ws.registry.register(tool);
    assert_eq!(
        ws.err("Shout", json!({"text": 5})),
        "<tool_use_error>InputValidationError: Shout failed due to the following issue:\n\
         The parameter `text` type is expected as `string` but provided as `number`</tool_use_error>"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn read_input_problems_are_listed_one_a_line() {
    let ws = Workspace::new();
    assert_eq!(
        ws.err("Read", json!({})),
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\n\
         The required parameter `file_path` is missing</tool_use_error>"
    );
    assert_eq!(
        ws.err("Read", json!({"path": "/a"})),
        "<tool_use_error>InputValidationError: Read failed due to the following issues:\n\
         The required parameter `file_path` is missing\n\
         An unexpected parameter `path` was provided</tool_use_error>"
    );
    assert_eq!(
        ws.err("Read", json!({"file_path": 1, "limit": "ten"})),
        "<tool_use_error>InputValidationError: Read failed due to the following issues:\n\
         The parameter `file_path` type is expected as `string` but provided as `number`\n\
         The parameter `limit` type is expected as `integer` but provided as `string`</tool_use_error>"
    );
}

#[test]
fn an_unparseable_input_is_echoed_back_and_the_tool_does_not_run() {
    const COMMON_CAUSES: &str = "Common causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.";
    let mut ws = Workspace::new();
    let (tool, calls) = shout("Shout");
    ws.registry.register(tool);
    let raw = "{\"text\": \"an answer cut off mid-str";
    assert_eq!(
        ws.err("Shout", Value::String(raw.to_string())),
        format!(
            "<tool_use_error>InputValidationError: Shout was called with input that could not be parsed as JSON.\n\
             You sent (first {n} of {n} bytes): {raw}\n{COMMON_CAUSES}</tool_use_error>",
            n = raw.len()
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let long = format!("{{\"content\": \"{}", "z".repeat(300));
    let out = ws.err("Write", Value::String(long.clone()));
    assert_eq!(
        out,
        format!(
            "<tool_use_error>InputValidationError: Write was called with input that could not be parsed as JSON.\n\
             You sent (first 200 of {} bytes): {}\n{COMMON_CAUSES}</tool_use_error>",
            long.len(),
            &long[..200]
        )
    );
}

#[test]
fn reading_tools_are_safe_writing_tools_are_not() {
    let registry = ToolRegistry::builtin();
    let cases = [
        ("Read", json!({"file_path": "/a"}), true),
        ("Glob", json!({"pattern": "*"}), true),
        ("Grep", json!({"pattern": "x"}), true),
        ("Write", json!({"file_path": "/a", "content": ""}), false),
        ("Edit", json!({"file_path": "/a", "old_string": "a", "new_string": "b"}), false),
        ("Bash", json!({"command": "cat a"}), true),
        ("Bash", json!({"command": "make"}), false),
    ];
    for (name, input, safe) in cases {
        assert_eq!(registry.is_concurrency_safe(name, &input), safe, "{name} {input}");
        assert_eq!(registry.is_read_only(name, &input), safe, "{name} {input}");
    }
}

#[test]
fn unknown_tools_and_invalid_inputs_are_never_safe() {
    let registry = ToolRegistry::builtin();
    assert!(!registry.is_concurrency_safe("Teleport", &json!({})));
    assert!(!registry.is_read_only("Teleport", &json!({})));
    assert!(!registry.is_concurrency_safe("Read", &json!({})));
    assert!(!registry.is_read_only("Grep", &json!({"pattern": 1})));
    assert!(!registry.is_concurrency_safe("Glob", &Value::String("{\"pattern\": \"*".into())));
}

#[test]
fn registry_and_context_can_move_into_blocking_tasks() {
    fn assert_task_safe<T: Send + Sync + Clone + 'static>() {}
    assert_task_safe::<ToolRegistry>();
    assert_task_safe::<ToolContext>();
    assert_task_safe::<ToolOutput>();
    let registry = ToolRegistry::builtin();
    let ctx = ToolContext::new(std::env::temp_dir());
    let handle = std::thread::spawn(move || registry.execute("Teleport", &json!({}), &ctx));
    assert!(handle.join().expect("thread").is_error);
}
