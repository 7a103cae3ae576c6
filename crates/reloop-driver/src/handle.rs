//! What the caller of a run holds: the stream of [`RunEvent`]s, the [`RunResult`] at the end of
//! each query, and the handles that abort, queue input, switch settings and close the session.

use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use reloop_core::{ContentBlock, Event, Message, Reason, Terminal, ToolOutcome, Usage};
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::DriverError;

/// What the caller sees of a run, in order.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RunEvent {
    /// The events that follow, up to the next `Step`, come from the journal's step `seq`: a
    /// printer derives stable line ids from it (a replay prints the same ones).
    Step {
        /// The journal step the following events belong to.
        seq: u64,
        /// When the step was journaled (milliseconds since the Unix epoch): a compaction's
        /// `duration_ms` is read from these, so a replay prints the live run's.
        at_ms: u64,
    },
    /// The session exists and is journaled.
    Started {
        /// The id its journal and a later `resume` know it by.
        session_id: String,
        /// The model its first request goes to.
        model: String,
        /// The directory its tools work in.
        cwd: PathBuf,
        /// The tools the model is offered, by name.
        tools: Vec<String>,
        /// The mode its tool calls are judged in (`default`, `acceptEdits`, ...).
        permission_mode: String,
        /// `scripted`, `anthropic`, `openai`.
        provider: String,
        /// Whose loop rules the session follows.
        profile: reloop_core::profile::ProfileId,
    },
    /// A model response began: its id and opening usage as the server sent them
    /// (`message_start`), for a stream that shows the response's head.
    ResponseStarted {
        /// The response's id.
        id: Option<String>,
        /// `message_start`'s `usage`, as sent.
        usage: Option<serde_json::Value>,
    },
    /// A thinking block of the response in flight completed (before the response did), for a
    /// stream that shows it before the next block streams (Claude Code's partial messages).
    /// Other blocks are shown with the response's message, so they are not copied here.
    ThinkingDone {
        /// The block's index in the response.
        index: usize,
        /// The block.
        block: reloop_core::ContentBlock,
    },
    /// Assistant text as it streams, with the index of the content block it belongs to.
    TextDelta {
        /// The content block of the response the text belongs to.
        index: usize,
        /// The new text, to append.
        text: String,
    },
    /// A model response completed; its message (if it joined the history) follows.
    Response {
        /// The response's usage.
        usage: Usage,
        /// Why the model stopped, as the API said it.
        stop_reason: Option<String>,
    },
    /// A message joined the history (the assistant's answer, the tool results, an interruption).
    Message(Message),
    /// A tool call finished; its result also arrives later inside the next user message.
    ToolFinished(ToolOutcome),
    /// Calls an interrupt stopped while they ran, which Claude Code reports as rejected by the
    /// user (flag 28); their answers follow, in the message that ends the run.
    CallsRejected {
        /// The stopped calls, by id.
        tool_use_ids: Vec<String>,
    },
    /// The loop continued or stopped, and why.
    Transition {
        /// The journal step that decided it.
        seq: u64,
        /// The turn the loop is in after the step.
        turn: u32,
        /// Why the loop continued or stopped.
        reason: Reason,
    },
    /// A request failed and will be retried after a delay.
    Retry(reloop_core::RetryWait),
    /// The session switched to the fallback model.
    ModelFallback {
        /// What made it switch: `overloaded` or `server_error`.
        trigger: String,
        /// The model it left.
        from: String,
        /// The model its requests go to now.
        to: String,
    },
    /// What the caller was shown of a failed attempt is withdrawn.
    Withdrawn,
    /// A hook failed without blocking: shown to the user, not to the model.
    HookNotice {
        /// The hook's command, so the user knows which one failed.
        command: String,
        /// What it reported.
        message: String,
    },
    /// A hook's `systemMessage` (JSON stdout on exit 0): shown to the user, not to the model.
    HookSystemMessage {
        /// The event the hook ran for.
        hook_event: reloop_core::hook::HookEventName,
        /// The call, for a tool event (Claude Code names the tool: `PreToolUse:Read says: …`).
        tool_use_id: Option<String>,
        /// The message.
        message: String,
    },
    /// A SessionStart hook ran (flag 10): Claude Code prints its `hook_started` and
    /// `hook_response` lines before `system/init`. Or a PreCompact hook of a compaction by
    /// hand: its run is worded into the `Compacted ` note.
    HookRan {
        /// The event the hook ran for.
        hook_event: reloop_core::hook::HookEventName,
        /// The tool call a tool event's hook ran for.
        tool_use_id: Option<String>,
        /// The run.
        run: reloop_core::hook::HookRun,
    },
    /// UserPromptSubmit hooks refused the prompt (flag 10): no request was made.
    PromptRefused {
        /// What the user is shown (also the result's text).
        content: String,
        /// `blocked_by_hook` (the prompt dropped) or `stopped_by_hook` (kept).
        kind: &'static str,
        /// Whether the prompt joined the conversation.
        prompt_kept: bool,
        /// The hook's reason.
        reason: String,
    },
    /// Something the user must know, e.g. that stop hooks were overridden at their cap.
    Warning(String),
    /// A queued user message: `queued`, `consumed` (a request carried it), `completed` (the
    /// loop that carried it ended) or `dropped` (the loop ended before any request carried it).
    Input {
        /// The queued message's id, as journaled with it.
        id: String,
        /// Where the message stands (one of the four above).
        status: &'static str,
    },
    /// The history was compacted; the summary message follows.
    CompactBoundary {
        /// `auto` (the context passed its threshold), `reactive` (a request was too long) or
        /// `manual`.
        trigger: String,
        /// The context's tokens before the compaction.
        pre_tokens: u64,
        /// The context's tokens after it, as estimated.
        post_tokens: u64,
        /// How many messages of the history before it the compacted history kept after the
        /// summary (Claude Code's `preserved_messages`); `None` in a session without
        /// [`reloop_core::Flag::StreamDetails`], whose boundary line says no more than the counts.
        kept: Option<usize>,
    },
    /// A compaction started, or ended for good (a retried summary request is still the same one).
    CompactStatus(CompactStatus),
    /// A session started without a prompt ([`crate::Session::start_unprompted`]) ran its
    /// SessionStart hooks and waits for its first message.
    Ready,
    /// A subagent started (or resumed) to answer this session's `Agent` call `tool_use_id`,
    /// before any of its messages: a printer opens its task here, so a child that ends before
    /// it answers anything (its first request failed) still has one. Live runs only, as
    /// [`RunEvent::SubagentMessage`].
    SubagentStarted {
        /// The `Agent` call the child answers.
        tool_use_id: String,
        /// Claude Code's id of the agent ([`reloop_core::profile::agent_id`] of the child's session id).
        agent_id: String,
        /// It runs in the background (flag 44): the call is answered before it ends.
        background: bool,
    },
    /// A message of a subagent run by this session's `Agent` call `tool_use_id`, as the child
    /// journaled it (a printer marks its lines with `parent_tool_use_id`). Live runs only: a
    /// replay of the parent takes the call's result from the journal and runs no child.
    SubagentMessage {
        /// The `Agent` call the child answers.
        tool_use_id: String,
        /// Claude Code's id of the agent ([`reloop_core::profile::agent_id`] of the child's session id).
        agent_id: String,
        /// The child's message.
        message: Message,
        /// The usage of the response that gave an assistant message.
        usage: Option<Usage>,
    },
    /// A background child's end is about to be told (flag 44): the query its notification
    /// starts follows. From the notification's journaled `origin`, so a replay has it too.
    Notified {
        /// The run that ended ([`reloop_core::profile::run_id`] of its agent's id).
        run_id: String,
    },
    /// The run is over.
    Finished(RunResult),
}

/// Where a compaction stands.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactStatus {
    /// The summary request is out.
    Compacting,
    /// The history was compacted.
    Succeeded,
    /// The compaction gave up.
    Failed,
    /// An auto-compaction found too little to summarise; the request goes ahead (flag 18).
    TooFewGroups,
    /// An auto-compaction's summary request failed on this error; the request goes ahead
    /// without it (flag 18).
    FailedOn(reloop_core::ModelError),
    /// A compaction by hand a PreCompact hook blocked (flag 10): never asked for, with the
    /// block's words ([`reloop_core::hook::session::pre_compact_block`]).
    Blocked(String),
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// The session the run belonged to, to resume or inspect it later.
    pub session_id: String,
    /// How the loop ended (success, a cap, an abort, an error).
    pub terminal: Terminal,
    /// Whether that ending is a failure (what a caller's exit status reflects).
    pub is_error: bool,
    /// The turns the session took.
    pub num_turns: u32,
    /// The model requests it made, retries included.
    pub model_requests: u32,
    /// Wall-clock time of the query (0 in a replay).
    pub duration_ms: u64,
    /// The last assistant text, or the error that ended the run.
    pub result: String,
    /// Tokens used over the whole session, summed over its responses.
    pub usage: Usage,
    /// The tool calls that were refused, for the caller to review or allow next time.
    pub permission_denials: Vec<reloop_core::PermissionDenial>,
    /// What the session's requests cost at the known prices (0 for an unpriced model).
    pub total_cost_usd: f64,
    /// Usage by model, with the fallback model's share apart.
    pub model_usage: std::collections::BTreeMap<String, Usage>,
    /// Whose loop rules the session followed (how its result is worded).
    pub profile: reloop_core::profile::ProfileId,
    /// Time spent waiting for the model in this query (live runs only; 0 in a replay).
    pub duration_api_ms: u64,
    /// Tokens the last response reported (input, cache and output): the context in use.
    pub context_tokens: u64,
}

/// What a caller can tell a running loop.
#[derive(Debug)]
pub(crate) enum Control {
    Abort,
    /// A user message, the host's `origin` for it, and what local commands said before it
    /// ([`Event::UserInput`]'s `local`).
    Send(Vec<ContentBlock>, Option<serde_json::Value>, Vec<reloop_core::local_lines::LocalLine>),
    /// A setting changed (`set_model`, `set_permission_mode`): journaled and applied at once.
    Set(Event),
    /// A kept-alive session ends once its query is over.
    Close,
    /// As [`Control::Close`], because of a `/clear`: its SessionEnd hooks' `reason` is `clear`.
    Clear,
    /// Compact the conversation now (`/compact`): between queries, that is the next query.
    Compact,
}

/// A running session: a stream of [`RunEvent`]s and a way to abort.
pub struct RunHandle {
    pub(crate) session_id: String,
    pub(crate) events: mpsc::UnboundedReceiver<RunEvent>,
    pub(crate) abort: mpsc::UnboundedSender<Control>,
    pub(crate) task: JoinHandle<Result<RunResult, DriverError>>,
}

impl RunHandle {
    /// The running session's id, known before its first event.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Asks the loop to stop; it answers unfinished tool calls and ends with an `aborted_*` reason.
    pub fn abort(&self) {
        let _ = self.abort.send(Control::Abort);
    }

    /// Queues a user message: it joins the next request (after the current tools), or starts a
    /// new turn if the model had already finished. The stream reports it `queued`, `consumed`
    /// and `completed` — or `dropped` if the loop ends first.
    pub fn send(&self, content: Vec<ContentBlock>) {
        let _ = self.abort.send(Control::Send(content, None, Vec::new()));
    }

    /// Switches the model for the requests still to come (`None`: the configured one).
    pub fn set_model(&self, model: Option<String>) {
        let _ = self.abort.send(Control::Set(Event::SetModel { model, command: None }));
    }

    /// Switches the permission mode for the calls still to come.
    pub fn set_permission_mode(&self, mode: reloop_tools::PermissionMode) {
        let _ = self.abort.send(Control::Set(Event::SetPermissionMode { mode: mode.as_str().to_string() }));
    }

    /// Ends a kept-alive session once its current query is over.
    pub fn close(&self) {
        let _ = self.abort.send(Control::Close);
    }

    /// Compacts the conversation by hand (`/compact`): between queries of a kept-alive session
    /// it runs as a query of its own, ending with a result like any other.
    pub fn compact(&self) {
        let _ = self.abort.send(Control::Compact);
    }

    /// A cloneable way to abort from elsewhere (a Ctrl-C handler).
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle(self.abort.clone())
    }

    /// Stops the loop where it is without journaling anything more, as a crash would, and
    /// waits until it is gone: its journal is dropped (committing what was deferred, giving up
    /// its writer's lease), so the session is left to `resume` on any machine. A worker told to
    /// stop does this rather than [`RunHandle::abort`], which would end the session for good.
    pub async fn halt(self) {
        self.task.abort();
        let _ = self.task.await;
    }

    /// Drains the remaining events and returns the result.
    pub async fn finish(mut self) -> Result<RunResult, DriverError> {
        while self.events.recv().await.is_some() {}
        self.task.await.map_err(DriverError::TaskStopped)?
    }

    /// As [`Self::finish`], handing each message the run journals (its own and its
    /// subagents') and each response's usage to `forward` on the way.
    pub(crate) async fn finish_forwarding(
        mut self,
        mut forward: impl FnMut(RunEvent) + Send,
    ) -> Result<RunResult, DriverError> {
        while let Some(event) = self.events.recv().await {
            if matches!(event, RunEvent::Message(_) | RunEvent::Response { .. } | RunEvent::SubagentMessage { .. }) {
                forward(event);
            }
        }
        self.task.await.map_err(DriverError::TaskStopped)?
    }
}

/// Aborts a run from another task.
#[derive(Clone)]
pub struct AbortHandle(mpsc::UnboundedSender<Control>);

impl AbortHandle {
    /// A handle of no run: what it is told goes nowhere. For a caller that holds one before any
    /// run starts (print mode's session, whose first prompt Claude Code answered itself).
    pub fn detached() -> Self {
        AbortHandle(mpsc::unbounded_channel().0)
    }

    /// As [`RunHandle::abort`].
    pub fn abort(&self) {
        let _ = self.0.send(Control::Abort);
    }

    /// Queues a user message, as [`RunHandle::send`].
    pub fn send(&self, content: Vec<ContentBlock>) {
        self.send_from(content, None);
    }

    /// As [`Self::send`], stamped with the host's `origin`: a message that starts a query is
    /// journaled with it (to be echoed on that query's result).
    pub fn send_from(&self, content: Vec<ContentBlock>, origin: Option<serde_json::Value>) {
        self.send_after_local(content, origin, Vec::new());
    }

    /// As [`Self::send_from`], after the lines of the local commands typed since the last prompt
    /// ([`reloop_core::local_lines`]), which a message that starts a query carries to the model.
    pub fn send_after_local(
        &self,
        content: Vec<ContentBlock>,
        origin: Option<serde_json::Value>,
        local: Vec<reloop_core::local_lines::LocalLine>,
    ) {
        let _ = self.0.send(Control::Send(content, reloop_core::profile::host_origin(origin), local));
    }

    /// As [`RunHandle::set_model`].
    pub fn set_model(&self, model: Option<String>) {
        let _ = self.0.send(Control::Set(Event::SetModel { model, command: None }));
    }

    /// A switch for the custom slash command `command`'s query (its file's `model`), or back
    /// after it: journaled as such, so a replay tells it from the caller's own switches.
    pub fn set_model_for_command(&self, model: Option<String>, command: &str) {
        let _ = self.0.send(Control::Set(Event::SetModel { model, command: Some(command.to_string()) }));
    }

    /// As [`RunHandle::set_permission_mode`].
    pub fn set_permission_mode(&self, mode: reloop_tools::PermissionMode) {
        let _ = self.0.send(Control::Set(Event::SetPermissionMode { mode: mode.as_str().to_string() }));
    }

    /// A slash command's `allowed-tools` for its query (`allow` empty: that query is over),
    /// journaled as [`Event::CommandTools`] before the command's prompt and after its query.
    pub fn set_tools_for_command(&self, allow: Vec<String>, command: &str) {
        let _ = self.0.send(Control::Set(Event::CommandTools { command: command.to_string(), allow }));
    }

    /// As [`RunHandle::close`].
    pub fn close(&self) {
        let _ = self.0.send(Control::Close);
    }

    /// As [`AbortHandle::close`], because of a stream-json `/clear`: the session's SessionEnd
    /// hooks are told `reason: "clear"`, as Claude Code tells them (`settings_slash/stream_clear`).
    pub fn clear(&self) {
        let _ = self.0.send(Control::Clear);
    }

    /// As [`RunHandle::compact`].
    pub fn compact(&self) {
        let _ = self.0.send(Control::Compact);
    }
}

impl Stream for RunHandle {
    type Item = RunEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        self.events.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run whose task panicked reports that, typed, not as a misuse or a lost state.
    #[tokio::test]
    async fn a_panicked_task_is_reported_as_stopped() {
        async fn broken() -> Result<RunResult, DriverError> {
            panic!("the loop broke")
        }
        // No event comes: the sender is gone, so `finish` goes straight to the task.
        let (_, events) = mpsc::unbounded_channel();
        let (abort, _abort_rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(broken());
        let handle = RunHandle { session_id: "s1".into(), events, abort, task };
        match handle.finish().await {
            Err(e @ DriverError::TaskStopped(_)) => {
                let text = e.to_string();
                assert!(text.starts_with("the run's task stopped without a result: "), "{text}");
                assert!(text.contains("panicked"), "{text}");
            }
            Err(e) => panic!("reported as another cause: {e}"),
            Ok(_) => panic!("a panicked task gave a result"),
        }
    }
}
