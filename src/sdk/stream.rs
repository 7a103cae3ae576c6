//! The stream-json lines the Agent SDKs parse, in Claude Code's shapes: `system/init`,
//! `assistant` (one line per content block, as Claude Code prints them), `user`,
//! `stream_event` (with `--include-partial-messages`) and `result`.
//!
//! Every line carries `session_id`, `parent_tool_use_id` and a `uuid`. Line uuids are derived
//! from the session, the journal step that produced the line and the line's place in it
//! ([`reloop_driver::line_uuid`]), so they are unique in a journal and a replay reprints them.
//! Deliberate differences from Claude Code are listed in `docs/sdk.md`.

use reloop_core::profile::{self, CompactStatusLines, ProfileId};
use reloop_core::{Continue, Message, Reason, Role, Stop, TerminalReason, Usage};
use reloop_driver::{CompactStatus, RunEvent, RunResult};
use serde_json::{json, Map, Value};

use super::usage::{minus, model_usage, usage_json};
use endings::{api_error_status, Ending};

use super::args::CLAUDE_CODE_VERSION;
use super::protocol::Wire;

mod background;
mod boundary;
mod children;
mod endings;
mod local_answer;
mod notices;
mod partial_lines;
mod retraction;
mod session_hooks;
mod tasks;
mod tool_results;

/// What is printed: every line (`stream-json`), the result line alone (`json`), or the
/// result's text (`text`, as `claude -p` prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Lines,
    Result,
    Text,
}

#[path = "stream_hooks.rs"]
mod hooks;
#[path = "stream_local.rs"]
mod local;

/// Turns run events into lines.
pub struct SdkStream {
    output: Output,
    /// Prices given with `--price`, before the model table's (`modelUsage`'s `costUSD`).
    prices: Vec<reloop_core::Price>,
    /// The `system/init` line, printed again when a later query starts.
    init: Option<Map<String, Value>>,
    /// The first `system/init`, held (with its uuid) until the SessionStart hook lines are out.
    held_init: Option<(Map<String, Value>, String)>,
    /// A `/clear` began the session: its start's hooks are `SessionStart:clear`.
    cleared: bool,
    /// The `/clear` whose lines wait for the new session's start (flag 38): its id and record.
    pending_clear: Option<(String, crate::sdk::clear::ClearedFrom)>,
    /// Tokens the last response reported (`get_context_usage`).
    context_tokens: u64,
    wire: Wire,
    session_id: String,
    /// The model requests go to now (for `assistant` lines and `modelUsage`).
    model: String,
    partial: bool,
    seq: u64,
    line: u32,
    /// Cumulative usage by model at the end of the previous query, for per-query `usage`.
    usage_before: Usage,
    /// The partial-message events of the response in flight.
    streaming: super::partial::Partial,
    /// The usage of the response whose message comes next.
    response_usage: Usage,
    /// Why the last response of the query stopped (`RunEvent::Response`).
    stop_reason: Option<String>,
    /// Whose rules the session follows: which lines are echoed and how the result reads.
    profile: ProfileId,
    /// Continues of this query Claude Code counts as turns: malformed-call retries, and
    /// max-tokens resumes.
    retries: u32,
    resumes: u32,
    /// The Stop-hook notification was printed in this query.
    notified: bool,
    /// `user` lines of the main thread shown in this query (printed or not): Claude Code's
    /// `num_turns` is one more than these.
    user_lines: u32,
    /// The thinking of the response being printed, in UTF-16 units (`system/thinking_tokens`).
    thinking_units: u64,
    /// Tool names by call id, for `permission_denied` lines.
    tool_names: std::collections::HashMap<String, String>,
    /// Each call's PreToolUse hook runs, by call id, until its `permission_denied` line says
    /// whether a hook ruled on it.
    pre_tool_use: std::collections::HashMap<String, Vec<reloop_core::hook::HookRun>>,
    /// PostToolUse hooks' `systemMessage` lines, held until the results' line is printed (Claude
    /// Code prints them after it).
    after_results: Vec<String>,
    /// With `--include-hook-events`, PreToolUse hooks' `systemMessage` lines, held until the
    /// results' line is due (Claude Code prints them after the call's PostToolUse hook lines).
    before_results: Vec<String>,
    /// The model server's `host:port` when it is not Anthropic's own (Claude Code names it in
    /// the text of a server-side error).
    gateway: Option<String>,
    /// The text streamed of the response in flight, shown if 2.1.332 retracts it.
    response_text: String,
    /// The uuid of a retracted line the next assistant line supersedes.
    supersedes: Option<String>,
    /// The MCP servers as `system/init` lists them: `{"name", "status"}`.
    mcp_servers: Vec<Value>,
    /// `CLAUDE_CODE_MAX_OUTPUT_TOKENS` as the run read it: each model's `maxOutputTokens`.
    max_output_tokens: Option<u32>,
    /// `init`'s `slash_commands` and `output_style`, from the settings layers read.
    settings_view: (Vec<String>, String),
    /// The agents' names as `system/init` lists them.
    agents: Vec<String>,
    /// A subagent's text and thinking are printed (`forwardSubagentText`).
    forward_subagent_text: bool,
    /// What the result and a child's lines need of the session's `Agent` and
    /// `StructuredOutput` calls.
    calls: children::NotedCalls,
    /// A `/compact` typed between queries is running (`stream_local.rs`).
    by_hand: Option<local::ByHand>,
    /// What the built-in commands answered since the last prompt said, for the next prompt.
    local_lines: Vec<reloop_core::local_lines::LocalLine>,
    /// The `origin` the host stamped on the running query's message, for its result.
    origin: Option<Value>,
    /// Prompts answered locally so far (`stream/local_answer.rs`): their lines' step numbers.
    local_answers: u32,
    /// `--include-hook-events`: every hook's lines, not only SessionStart's.
    include_hook_events: bool,
    /// A command file's `model` for the session's first query, shown by its `system/init`.
    init_model: Option<String>,
    /// Each call's `tool_use_result`, until its result's line is printed.
    tool_results: tool_results::ToolResults,
    /// What a `compact_boundary` line says of the stream before it.
    boundaries: boundary::Boundaries,
}

impl crate::launch::drive::ShowEvents for SdkStream {
    fn on_event(&mut self, event: &RunEvent) {
        SdkStream::on_event(self, event)
    }
}

impl SdkStream {
    pub fn new(wire: Wire, model: String, partial: bool) -> Self {
        SdkStream {
            output: Output::Lines,
            prices: Vec::new(),
            init: None,
            held_init: None,
            cleared: false,
            pending_clear: None,
            context_tokens: 0,
            wire,
            session_id: String::new(),
            model,
            partial,
            seq: 0,
            line: 0,
            usage_before: Usage::default(),
            streaming: super::partial::Partial::default(),
            response_usage: Usage::default(),
            stop_reason: None,
            profile: ProfileId::default(),
            retries: 0,
            resumes: 0,
            notified: false,
            user_lines: 0,
            tool_names: std::collections::HashMap::new(),
            pre_tool_use: std::collections::HashMap::new(),
            thinking_units: 0,
            after_results: Vec::new(),
            before_results: Vec::new(),
            gateway: None,
            response_text: String::new(),
            supersedes: None,
            mcp_servers: Vec::new(),
            max_output_tokens: crate::launch::new::env_max_output_tokens(),
            settings_view: (Vec::new(), "default".to_string()),
            agents: Vec::new(),
            forward_subagent_text: false,
            calls: children::NotedCalls::default(),
            by_hand: None,
            local_lines: Vec::new(),
            origin: None,
            local_answers: 0,
            include_hook_events: false,
            init_model: None,
            tool_results: tool_results::ToolResults::default(),
            boundaries: boundary::Boundaries::default(),
        }
    }

    /// The output limit the run read from `CLAUDE_CODE_MAX_OUTPUT_TOKENS` (a replay's, recorded).
    pub fn with_max_output_tokens(mut self, limit: Option<u32>) -> Self {
        self.max_output_tokens = limit;
        self
    }

    /// The prices given with `--price`, which price `modelUsage` as they priced the run.
    pub fn with_prices(mut self, prices: Vec<reloop_core::Price>) -> Self {
        self.prices = prices;
        self
    }

    /// Names the model server a server-side error's text points at.
    pub fn with_gateway(mut self, gateway: Option<String>) -> Self {
        self.gateway = gateway;
        self
    }

    /// The MCP servers `system/init` lists.
    pub fn with_mcp_servers(mut self, servers: Vec<Value>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// The custom slash commands and the output style `init` reports (`crate::settings`).
    pub fn with_settings_view(mut self, view: (Vec<String>, String)) -> Self {
        self.settings_view = view;
        self
    }

    /// Prints what `--output-format` asks for.
    pub fn with_output(mut self, format: crate::options::OutputFormat) -> Self {
        self.output = match format {
            crate::options::OutputFormat::StreamJson => Output::Lines,
            crate::options::OutputFormat::Json => Output::Result,
            crate::options::OutputFormat::Text => Output::Text,
        };
        self
    }

    /// The model requests go to now.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Tokens the last response reported: input, cache and output.
    pub fn context_tokens(&self) -> u64 {
        self.context_tokens
    }

    /// The caller switched the permission mode: a `status` line says so, and later
    /// `system/init` lines show it.
    pub fn set_permission_mode(&mut self, mode: &str) {
        if let Some(init) = self.init.as_mut() {
            init.insert("permissionMode".into(), json!(mode));
        }
        let mut line = Map::new();
        line.insert("type".into(), json!("system"));
        line.insert("subtype".into(), json!("status"));
        line.insert("status".into(), Value::Null);
        line.insert("permissionMode".into(), json!(mode));
        self.emit(line, false);
    }

    /// A later query of the session starts: Claude Code prints `system/init` again.
    pub fn next_query(&mut self) {
        if let Some(mut line) = self.init.clone() {
            line.insert("model".into(), json!(shown_id(self.profile, &self.model)));
            self.emit(line, false);
        }
    }

    /// The host's `origin` for the query that starts now (`None`: it sent none).
    pub fn set_origin(&mut self, origin: Option<Value>) {
        self.origin = origin;
    }

    /// The model switched (`set_model`): later `assistant` lines name it.
    pub fn set_model(&mut self, model: String) {
        self.model = model;
    }

    fn uuid(&mut self) -> String {
        let uuid = reloop_driver::line_uuid(&self.session_id, self.seq, self.line);
        self.line += 1;
        uuid
    }

    /// Adds `session_id`, `parent_tool_use_id` (when the shape has it) and `uuid`, and prints.
    fn emit(&mut self, line: Map<String, Value>, parent: bool) {
        self.emit_with_tail(line, parent, Vec::new());
    }

    /// As [`Self::emit`], with keys Claude Code prints after the line's `uuid`; returns the uuid.
    fn emit_with_tail(&mut self, mut line: Map<String, Value>, parent: bool, tail: Vec<(&str, Value)>) -> String {
        if self.output != Output::Lines {
            return String::new();
        }
        self.release_init();
        let uuid = self.uuid();
        if matches!(line.get("type").and_then(Value::as_str), Some("user" | "assistant")) {
            self.boundaries.line_printed(&uuid);
        }
        if parent {
            line.insert("parent_tool_use_id".into(), Value::Null);
        }
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("uuid".into(), json!(uuid));
        line.extend(tail.into_iter().map(|(k, v)| (k.to_string(), v)));
        self.print(line);
        uuid
    }

    /// A line of the SDK layer's own between steps (`set_model`'s echo, say).
    pub fn local_command_output(&mut self, text: &str) {
        let mut line = Map::new();
        line.insert("type".into(), json!("user"));
        line.insert(
            "message".into(),
            json!({"role": "user", "content": format!("<local-command-stdout>{text}</local-command-stdout>")}),
        );
        self.emit(line, true);
    }

    pub fn on_event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Step { at_ms, .. } => self.boundaries.step(*at_ms),
            RunEvent::CompactStatus(CompactStatus::Compacting) => self.boundaries.compacting(),
            _ => {}
        }
        if self.by_hand_event(event) {
            return;
        }
        // A response retried or cut off leaves nothing open for the next one's partial events.
        if matches!(event, RunEvent::Retry(_) | RunEvent::Finished(_)) {
            self.streaming.reset();
        }
        self.crash_drops_init(event);
        if !matches!(
            event,
            RunEvent::Step { .. }
                | RunEvent::HookRan { .. }
                | RunEvent::HookNotice { .. }
                | RunEvent::Started { .. }
                | RunEvent::Ready
        ) {
            self.release_init();
        }
        if let RunEvent::ToolFinished(outcome) = event {
            self.tool_results.note(self.profile, outcome);
            self.agent_finished(outcome);
        }
        match event {
            RunEvent::Step { seq, .. } => {
                self.seq = *seq;
                self.line = 0;
            }
            RunEvent::Started { session_id, model, cwd, permission_mode, provider, tools, profile } => {
                self.session_id = session_id.clone();
                self.calls.cwd = cwd.display().to_string();
                self.profile = *profile;
                self.model = self.init_model.take().unwrap_or_else(|| model.clone());
                let model = &self.model;
                let api_key_source = if provider == "anthropic" { "ANTHROPIC_API_KEY" } else { "none" };
                let init = json!({
                    "type": "system", "subtype": "init", "cwd": cwd,
                    "tools": tools, "mcp_servers": self.mcp_servers, "model": shown_id(*profile, model), "permissionMode": permission_mode,
                    "slash_commands": self.settings_view.0, "apiKeySource": api_key_source,
                    "claude_code_version": CLAUDE_CODE_VERSION, "output_style": self.settings_view.1,
                    "agents": self.agents, "skills": [], "plugins": [],
                });
                let Value::Object(mut line) = init else { return };
                if *profile == ProfileId::ClaudeCode2_1_332 {
                    // Of 2.1.332's protocol capabilities, those reloop keeps: the interrupt's
                    // receipt, its `cancel_queued`, and the stamped messages' lifecycle lines.
                    let kept = ["interrupt_receipt_v1", "interrupt_cancel_queued_v1", "msg_lifecycle_v1"];
                    line.insert("capabilities".into(), json!(kept));
                }
                self.init = Some(line.clone());
                self.hold_init(line);
            }
            RunEvent::ResponseStarted { id, usage } => self.streaming.head(id.clone(), usage.clone()),
            RunEvent::ThinkingDone { index, block } => self.thinking_done(*index, block),
            RunEvent::TextDelta { text, .. } if !self.partial => self.keep_for_retraction(text),
            RunEvent::TextDelta { index, text } => {
                self.keep_for_retraction(text);
                let events = self.streaming.text_delta(crate::models::api_id(&self.model), *index, text);
                self.stream_events(events);
            }
            RunEvent::Response { usage, stop_reason } => {
                self.response_usage = usage.clone();
                self.stop_reason = stop_reason.clone();
            }
            RunEvent::Message(message) => self.message(message),
            RunEvent::Ready => self.started_unprompted(),
            RunEvent::SubagentStarted { tool_use_id, agent_id, background } => {
                self.subagent_started(tool_use_id, agent_id, *background)
            }
            RunEvent::Notified { run_id } => self.notified(run_id),
            RunEvent::SubagentMessage { tool_use_id, agent_id, message, usage } => {
                self.subagent_message(tool_use_id, agent_id, message, usage.as_ref())
            }
            RunEvent::ModelFallback { trigger, from, to } => {
                self.model = to.clone();
                self.model_fallback(trigger, from, to);
            }
            // Claude Code prints no api_retry line for a stream that broke off with an overload.
            RunEvent::Retry(wait)
                if wait.error_status.is_none()
                    && wait.error == "overloaded"
                    && self.profile.profile().claude_code_version.is_some() => {}
            RunEvent::Retry(wait) => {
                let mut line = Map::new();
                line.insert("type".into(), json!("system"));
                line.insert("subtype".into(), json!("api_retry"));
                line.insert("attempt".into(), json!(wait.attempt));
                line.insert("max_retries".into(), json!(wait.max_retries));
                // 2.1.197 prints its delay as JavaScript holds it: a float, whole when it is.
                let delay = match wait.unrounded_delay_ms {
                    Some(ms) if ms.fract() != 0.0 && ms.is_finite() => json!(ms),
                    _ => json!(wait.delay_ms),
                };
                line.insert("retry_delay_ms".into(), delay);
                line.insert("error_status".into(), json!(wait.error_status));
                line.insert("error".into(), json!(wait.error));
                // reloop's own, only when the server's retry-after was capped.
                if let Some(asked) = wait.retry_after_capped_from_ms {
                    line.insert("retry_after_capped_from_ms".into(), json!(asked));
                }
                self.emit(line, false);
            }
            RunEvent::CompactBoundary { trigger, pre_tokens, post_tokens, kept } => {
                let compaction =
                    boundary::Compaction { trigger, pre_tokens: *pre_tokens, post_tokens: *post_tokens, kept: *kept };
                self.compact_boundary(&compaction);
            }
            RunEvent::CompactStatus(status) => self.compact_status(status.clone()),
            RunEvent::Transition { reason: Reason::Continue(decision), .. } => match decision {
                Continue::MalformedToolCallRetry => {
                    self.retries += 1;
                    self.retract();
                }
                Continue::MaxOutputTokensRecovery { .. } => self.resumes += 1,
                _ => {}
            },
            RunEvent::ToolFinished(outcome) if outcome.denied => self.permission_denied(outcome),
            RunEvent::CallsRejected { tool_use_ids } => {
                tool_use_ids.iter().for_each(|id| self.tool_results.rejected(self.profile, id))
            }
            RunEvent::HookRan {
                hook_event: reloop_core::hook::HookEventName::PreToolUse,
                tool_use_id: Some(id),
                run,
            } => {
                self.pre_tool_use.entry(id.clone()).or_default().push(run.clone());
                self.hook_ran(reloop_core::hook::HookEventName::PreToolUse, Some(id), run)
            }
            RunEvent::HookRan { hook_event, tool_use_id, run } => {
                self.hook_ran(*hook_event, tool_use_id.as_deref(), run)
            }
            RunEvent::PromptRefused { content, kind, prompt_kept, reason } => {
                self.prompt_refused(content, kind, *prompt_kept, reason)
            }
            RunEvent::HookSystemMessage { hook_event, tool_use_id, message } => {
                self.hook_system_message(*hook_event, tool_use_id.as_deref(), message)
            }
            RunEvent::Finished(result) => {
                self.flush_before_results();
                self.flush_after_results();
                if let reloop_core::Evidence::StopHookCap { cap } = result.terminal.evidence() {
                    self.block_cap(cap);
                }
                self.result(result);
                (self.retries, self.resumes, self.notified, self.user_lines) = (0, 0, false, 0);
                self.stop_reason = None;
                self.tool_names.clear();
                self.pre_tool_use.clear();
            }
            _ => {}
        }
    }

    fn stream_event(&mut self, event: Value) {
        // Both versions say they ask before a response's events (`partial_messages/`).
        if event["type"] == "message_start" && self.profile.profile().claude_code_version.is_some() {
            self.system_line("status", json!({"status": "requesting"}));
        }
        let mut line = Map::new();
        line.insert("type".into(), json!("stream_event"));
        line.insert("event".into(), event);
        self.emit(line, true);
    }

    /// A message's lines, remembered by the compaction boundaries to come.
    fn message(&mut self, message: &Message) {
        if message.role == Role::System {
            return;
        }
        self.boundaries.message_starts();
        self.message_lines(message);
        self.boundaries.message_ends();
    }

    fn message_lines(&mut self, message: &Message) {
        match message.role {
            Role::Assistant => {
                // One line per content block, all with the response's id, as Claude Code prints.
                let kept = message.extra.to_map();
                let id = kept.get("id").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| {
                    format!("msg_{}", reloop_driver::line_uuid(&self.session_id, self.seq, 99).replace('-', ""))
                });
                // A response that named no model: the id the request was sent with.
                let sent = crate::models::api_id(&self.model);
                let model = kept.get("model").and_then(Value::as_str).unwrap_or(sent).to_string();
                for call in message.tool_uses() {
                    self.tool_names.insert(call.id.clone(), call.name.clone());
                    self.note_agent_call(call);
                }
                self.response_text.clear();
                if !self.streaming.any_early() {
                    self.thinking_units = 0;
                }
                let usage = self.block_usage();
                for (index, block) in message.content.iter().enumerate() {
                    // A thinking block already printed when it completed (see `thinking_done`).
                    if self.streaming.was_printed(index) {
                        continue;
                    }
                    self.partial_before(&model, &id, index, block);
                    self.block_line(&id, &model, &usage, block);
                    self.partial_after(index);
                }
                self.partial_end(&model, &id);
            }
            // Injected reminders reach the model only; Claude Code prints none of them.
            Role::System => {}
            Role::User => {
                let mut line = Map::new();
                line.insert("type".into(), json!("user"));
                match self.synthetic(message) {
                    Synthetic::No if self.one_line_per_result(message) => {
                        // Claude Code prints each tool result as a `user` line of its own.
                        for block in &message.content {
                            let mut line = Map::new();
                            line.insert("type".into(), json!("user"));
                            let shown = self.tool_results.printed(block);
                            line.insert("message".into(), json!({"role": "user", "content": [shown]}));
                            line.insert("timestamp".into(), json!(crate::sdk::timestamp()));
                            self.user_lines += 1;
                            let tail = self.tool_results.take(std::slice::from_ref(block));
                            self.emit_with_tail(line, true, tail);
                        }
                        return;
                    }
                    Synthetic::No => {
                        let shown: Vec<_> = message.content.iter().map(|b| self.tool_results.printed(b)).collect();
                        line.insert("message".into(), json!({"role": "user", "content": shown}));
                        line.insert("timestamp".into(), json!(crate::sdk::timestamp()));
                        self.user_lines += 1;
                    }
                    Synthetic::Hidden => return,
                    Synthetic::Echo(text) => {
                        self.user_lines += 1;
                        let feedback = text.starts_with("Stop hook feedback:");
                        self.synthetic_line(&text, None);
                        if feedback {
                            self.stop_hook_notification();
                        }
                        return;
                    }
                }
                self.flush_before_results();
                let tail = self.tool_results.take(&message.content);
                self.emit_with_tail(line, true, tail);
                self.flush_after_results();
            }
        }
    }

    /// Whether a message of several tool results is shown a line each, as Claude Code does; so
    /// is an interrupt's, its calls' results and then its words (`interrupt/during_tool`).
    fn one_line_per_result(&self, message: &Message) -> bool {
        use reloop_core::ContentBlock;
        let results = |blocks: &[ContentBlock]| blocks.iter().all(|b| matches!(b, ContentBlock::ToolResult(_)));
        let interrupt = match message.content.split_last() {
            Some((ContentBlock::Text(t), before)) => {
                t.text == reloop_core::INTERRUPT_MESSAGE_FOR_TOOL_USE && !before.is_empty() && results(before)
            }
            _ => false,
        };
        self.profile.profile().claude_code_version.is_some()
            && message.content.len() > 1
            && (results(&message.content) || interrupt)
    }

    /// A synthetic `user` line: the unwrapped text the model was given, after the line's uuid
    /// its timestamp, `isSynthetic` and what it retracted, as 2.1.332 prints it.
    fn synthetic_line(&mut self, text: &str, retracted: Option<String>) {
        let mut line = Map::new();
        line.insert("type".into(), json!("user"));
        line.insert("message".into(), json!({"role": "user", "content": [{"type": "text", "text": text}]}));
        let mut tail = vec![("timestamp", json!(crate::sdk::timestamp())), ("isSynthetic", json!(true))];
        tail.extend(retracted.map(|uuid| ("retracted_message_uuids", json!([uuid]))));
        self.emit_with_tail(line, true, tail);
    }

    fn system_line(&mut self, subtype: &str, fields: Value) {
        let mut line = Map::new();
        line.insert("type".into(), json!("system"));
        line.insert("subtype".into(), json!(subtype));
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        self.emit(line, false);
    }

    /// Claude Code's `system/status` line for a compaction starting or ending.
    fn compact_status(&mut self, status: CompactStatus) {
        let chars = match self.profile.profile().lines.compact_status {
            CompactStatusLines::None => return,
            CompactStatusLines::Plain => false,
            CompactStatusLines::WithOutputChars => true,
        };
        let fields = match status {
            CompactStatus::Compacting if chars => json!({"status": "compacting", "compact_output_chars": 0}),
            CompactStatus::Compacting => json!({"status": "compacting"}),
            CompactStatus::Succeeded => json!({"status": null, "compact_result": "success"}),
            CompactStatus::Failed => json!({"status": null, "compact_result": "failed", "compact_error": "exhausted"}),
            CompactStatus::TooFewGroups => {
                json!({"status": null, "compact_result": "failed", "compact_error": "too_few_groups"})
            }
            // 2.1.332 says the compaction was skipped; 2.1.197 gives the block's words alone.
            CompactStatus::Blocked(text) => {
                let error = match self.profile {
                    ProfileId::ClaudeCode2_1_332 => format!("skipped: {text}"),
                    _ => text,
                };
                json!({"status": null, "compact_result": "failed", "compact_error": error})
            }
            CompactStatus::FailedOn(error) => {
                let words = crate::sdk::ending::api_error_words(error.status, &error.message, self.gateway.as_deref());
                json!({"status": null, "compact_result": "failed", "compact_error": words.unwrap_or(error.message)})
            }
        };
        self.system_line("status", fields);
    }

    /// Whether a user message is one the loop injected, and how Claude Code shows it: its
    /// injected texts are echoed unwrapped as `isSynthetic` lines where the profile's version
    /// prints them, and not at all where it does not. reloop's own profile shows every message.
    fn synthetic(&self, message: &Message) -> Synthetic {
        let rules = self.profile.profile();
        if rules.claude_code_version.is_none() {
            return Synthetic::No;
        }
        let [reloop_core::ContentBlock::Text(block)] = message.content.as_slice() else { return Synthetic::No };
        let text = block.text.as_str();
        if text == rules.max_tokens_resume.render() {
            return if rules.echo_resume {
                Synthetic::Echo(rules.max_tokens_resume.text.to_string())
            } else {
                Synthetic::Hidden
            };
        }
        // 2.1.332 echoes its ask to resume a cut-off answer, unwrapped (`api_errors/sse_overloaded`).
        if let Some(resume) = rules.cut_stream_resume.filter(|r| text == r.render()) {
            return Synthetic::Echo(resume.text.to_string());
        }
        if text == rules.malformed.reminder.render() {
            // 2.1.197 echoes its retry text; 2.1.332 shows its own retraction line instead.
            return if rules.malformed.retract {
                Synthetic::Hidden
            } else {
                Synthetic::Echo(rules.malformed.reminder.text.to_string())
            };
        }
        let unwrapped = profile::unwrap_reminder(text);
        let feedback = rules
            .stop_hook_preamble
            .and_then(|preamble| unwrapped.strip_prefix(preamble).and_then(|t| t.strip_prefix('\n')))
            .unwrap_or(unwrapped);
        if feedback.starts_with("Stop hook feedback:") || text.starts_with(reloop_core::compact::SUMMARY_PREAMBLE) {
            return Synthetic::Echo(feedback.to_string());
        }
        Synthetic::No
    }

    fn result(&mut self, result: &RunResult) {
        let reason = result.terminal.reason();
        let subtype = match reason {
            TerminalReason::MaxTurns => "error_max_turns",
            TerminalReason::MaxBudgetUsd => "error_max_budget_usd",
            TerminalReason::StructuredOutputRetryExhausted => "error_max_structured_output_retries",
            TerminalReason::AbortedStreaming | TerminalReason::AbortedTools | TerminalReason::HookAnswerRejected => {
                "error_during_execution"
            }
            _ => "success",
        };
        let query_usage = minus(&result.usage, &self.usage_before);
        self.usage_before = result.usage.clone();
        let mut line = Map::new();
        line.insert("type".into(), json!("result"));
        line.insert("subtype".into(), json!(subtype));
        let ending = Ending::of(result);
        let error = super::ending::ErrorEnding::of(result, self.gateway.as_deref());
        if matches!(result.terminal.stop, Stop::MalformedToolUseExhausted { .. }) {
            self.last_bad_answer();
        }
        if let Some(error) = &error {
            // Claude Code prints the error as the session's last assistant message.
            let (mut shown, tail) = error.line(result);
            let id = reloop_driver::line_uuid(&self.session_id, self.seq, 98);
            if let Some(Value::Object(message)) = shown.get_mut("message") {
                message.insert("id".into(), json!(id));
            }
            self.emit_with_tail(shown, true, tail);
            self.stop_reason = Some("stop_sequence".into());
        }
        line.insert("is_error".into(), json!(result.is_error));
        // Claude Code's max-turns result has no `api_error_status`; a failed compaction's names
        // the 400 that asked for it.
        if subtype != "error_max_turns" {
            let status = api_error_status(result).or(error.as_ref().and_then(|e| e.status()));
            let status = status.filter(|_| !error.as_ref().is_some_and(|e| e.status_hidden()));
            line.insert("api_error_status".into(), json!(status));
        }
        let error_type = ending.api_error_type.clone().or_else(|| {
            let rules = result.profile.profile();
            rules.result.api_error_terminal.then(|| error.as_ref().and_then(|e| e.error_type())).flatten()
        });
        if let Some(kind) = error_type {
            line.insert("api_error_type".into(), json!(kind));
        }
        if let Some(api_error) = ending.api_error {
            line.insert("api_error".into(), json!(api_error));
        }
        line.insert("duration_ms".into(), json!(result.duration_ms));
        line.insert("duration_api_ms".into(), json!(result.duration_api_ms));
        line.insert("num_turns".into(), json!(self.num_turns(result)));
        match subtype {
            "success" => {
                let capped = matches!(result.terminal.evidence(), reloop_core::Evidence::StopHookCap { .. });
                let text = match &error {
                    Some(error) => error.text.clone(),
                    // Claude Code ends a turn its Stop hooks kept blocking with no result text.
                    None if capped && result.profile.profile().claude_code_version.is_some() => String::new(),
                    None => result.result.clone(),
                };
                line.insert("result".into(), json!(text));
            }
            "error_max_turns" => {
                if let reloop_core::Evidence::MaxTurns { max_turns, turn_count } = result.terminal.evidence() {
                    // Claude Code counts the turn it refused to start.
                    line.insert("num_turns".into(), json!(turn_count));
                    line.insert("errors".into(), json!([format!("Reached maximum number of turns ({max_turns})")]));
                }
            }
            _ => {
                line.insert("errors".into(), json!([result.result]));
            }
        }
        line.insert("stop_reason".into(), json!(self.stop_reason));
        line.insert("session_id".into(), json!(result.session_id));
        line.insert("total_cost_usd".into(), json!(result.total_cost_usd));
        line.insert("usage".into(), usage_json(&query_usage));
        line.insert(
            "modelUsage".into(),
            model_usage(&result.model_usage, result.profile, &self.prices, self.max_output_tokens),
        );
        line.insert("permission_denials".into(), json!(result.permission_denials));
        self.structured_output(&mut line, result);
        line.insert("terminal_reason".into(), json!(ending.terminal_reason));
        endings::version_ending(&mut line, result);
        // Taken, so a query started without one (a `/compact`) echoes none.
        if let Some(origin) = self.origin.take().filter(|_| result.profile.profile().result.echo_origin) {
            line.insert("origin".into(), origin);
        }
        line.insert("uuid".into(), json!(self.uuid()));
        self.context_tokens = result.context_tokens;
        self.put_result(match self.output {
            Output::Lines | Output::Result => background::Held::Line(Value::Object(line)),
            Output::Text => background::Held::Text(result.result.clone()),
        });
    }
}

/// A model's id as the profile's version prints it on `system/init` and in `modelUsage`: as the
/// session names it. 2.1.197 names its 1M-context variant `[1m]` (`claude-opus-4-8[1m]`: its
/// `default`, `opus[1m]`), and the name carries it (src/models.rs); `--model opus` is not it.
pub(super) fn shown_id(_profile: ProfileId, model: &str) -> String {
    model.to_string()
}

/// How a user message is shown (see [`SdkStream::synthetic`]).
enum Synthetic {
    /// A message of the user's or a tool result: as it is.
    No,
    /// An injected text the profile's version does not print.
    Hidden,
    /// An injected text printed unwrapped, as a synthetic line.
    Echo(String),
}
