//! The names spans and attributes are given: OpenTelemetry's GenAI semantic conventions where
//! they name the thing (`gen_ai.*`, `error.type`), reloop's own under `reloop.*` where they do
//! not (turns, hooks, decisions). `gen_ai.provider.name` is the current convention's name for
//! the provider (it replaced `gen_ai.system`, which is not sent). `openinference.span.kind`
//! lets OpenInference readers (Arize Phoenix) file the spans as agent, LLM, tool and chain
//! spans. [`ATTRIBUTE_KEYS`] lists every key the mapper writes; a test holds `docs/otel.md`'s
//! table to it.

/// `gen_ai.operation.name`: `invoke_agent`, `chat` or `execute_tool`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: `anthropic`, `openai`, or reloop's `scripted` and `recorded`.
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.agent.name` of the root span: `reloop`.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.conversation.id`: the session id.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.request.model`: the model the request asked for.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.request.max_tokens`: the request's output-token limit.
pub const REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
/// `gen_ai.response.model`: the model that answered.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.id`: the provider's message id.
pub const RESPONSE_ID: &str = "gen_ai.response.id";
/// `gen_ai.response.finish_reasons`: the stop reason, as the provider said it.
pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`: every input token, cached ones included (as the convention
/// asks; Anthropic's `input_tokens` leaves them out, so they are added).
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens`: input tokens read from the prompt cache.
pub const USAGE_CACHE_READ: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.usage.cache_creation.input_tokens`: input tokens written to the prompt cache.
pub const USAGE_CACHE_CREATION: &str = "gen_ai.usage.cache_creation.input_tokens";
/// `gen_ai.tool.name`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`: the model's id of the call.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: `function` (every reloop tool is called by name with JSON input).
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `error.type`: the provider's error type of a failed request, `tool_error` for a tool.
pub const ERROR_TYPE: &str = "error.type";
/// `openinference.span.kind`: `AGENT`, `CHAIN`, `LLM` or `TOOL`.
pub const OPENINFERENCE_KIND: &str = "openinference.span.kind";

/// `reloop.session.id` on every span: the session the span belongs to.
pub const SESSION_ID: &str = "reloop.session.id";
/// `reloop.session.parent_id`: a fork's parent session.
pub const SESSION_PARENT: &str = "reloop.session.parent_id";
/// `reloop.session.fork_seq`: the parent's step a fork starts from.
pub const SESSION_FORK_SEQ: &str = "reloop.session.fork_seq";
/// `reloop.session.steps`: how many steps the session journaled.
pub const SESSION_STEPS: &str = "reloop.session.steps";
/// `reloop.terminal_reason`: why the session (root span) or turn stopped.
pub const TERMINAL_REASON: &str = "reloop.terminal_reason";
/// `reloop.continue_reason`: why the loop went on after a turn.
pub const CONTINUE_REASON: &str = "reloop.continue_reason";
/// `reloop.reason.explain`: the decision in words, as `reloop why` says it.
pub const REASON_EXPLAIN: &str = "reloop.reason.explain";
/// `reloop.step`: the journal step a decision (span event) was taken at.
pub const STEP: &str = "reloop.step";
/// `reloop.prompt`: which prompt of the session (1, 2, ...) a turn answers.
pub const PROMPT: &str = "reloop.prompt";
/// `reloop.turn`: the turn's number within its prompt.
pub const TURN: &str = "reloop.turn";
/// `reloop.request`: the request's number in the session (retries counted).
pub const REQUEST: &str = "reloop.request";
/// `reloop.request.purpose`: `compaction` for a compaction's summary request.
pub const REQUEST_PURPOSE: &str = "reloop.request.purpose";
/// `reloop.compaction.trigger`: `auto`, `reactive` or `manual`.
pub const COMPACTION_TRIGGER: &str = "reloop.compaction.trigger";
/// `reloop.error.status`: the HTTP status of a failed request.
pub const ERROR_STATUS: &str = "reloop.error.status";
/// `reloop.tool.denied`: a permission rule, mode or hook refused the call.
pub const TOOL_DENIED: &str = "reloop.tool.denied";
/// `reloop.hook.event`: `PreToolUse`, `PostToolUse`, `Stop` or `PermissionRequest`.
pub const HOOK_EVENT: &str = "reloop.hook.event";
/// `reloop.hook.commands`: the hooks that ran, by command line.
pub const HOOK_COMMANDS: &str = "reloop.hook.commands";
/// `reloop.hook.decision`: what the runs added up to: `pass`, `block`, `prevent`, `allow`,
/// `ask` or `deny`.
pub const HOOK_DECISION: &str = "reloop.hook.decision";
/// `reloop.hook.timed_out`: a hook ran past its timeout.
pub const HOOK_TIMED_OUT: &str = "reloop.hook.timed_out";
/// `reloop.unfinished`: the journal ends before the span's work did (a crash, or a live
/// session exported before its end).
pub const UNFINISHED: &str = "reloop.unfinished";

/// The name of the span event each decision is recorded as.
pub const DECISION_EVENT: &str = "reloop.decision";

/// Every attribute key the mapper writes, on spans or on decision events.
pub const ATTRIBUTE_KEYS: &[&str] = &[
    OPERATION_NAME,
    PROVIDER_NAME,
    AGENT_NAME,
    CONVERSATION_ID,
    REQUEST_MODEL,
    REQUEST_MAX_TOKENS,
    RESPONSE_MODEL,
    RESPONSE_ID,
    FINISH_REASONS,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
    USAGE_CACHE_READ,
    USAGE_CACHE_CREATION,
    TOOL_NAME,
    TOOL_CALL_ID,
    TOOL_TYPE,
    ERROR_TYPE,
    OPENINFERENCE_KIND,
    SESSION_ID,
    SESSION_PARENT,
    SESSION_FORK_SEQ,
    SESSION_STEPS,
    TERMINAL_REASON,
    CONTINUE_REASON,
    REASON_EXPLAIN,
    STEP,
    PROMPT,
    TURN,
    REQUEST,
    REQUEST_PURPOSE,
    COMPACTION_TRIGGER,
    ERROR_STATUS,
    TOOL_DENIED,
    HOOK_EVENT,
    HOOK_COMMANDS,
    HOOK_DECISION,
    HOOK_TIMED_OUT,
    UNFINISHED,
];

/// The span names, as patterns: `{...}` is filled in per span.
pub const SPAN_NAMES: &[&str] =
    &["invoke_agent reloop", "turn {n}", "chat {model}", "execute_tool {name}", "hook {event}"];

/// The agent's name in `gen_ai.agent.name` and the root span's name.
pub const AGENT: &str = "reloop";
