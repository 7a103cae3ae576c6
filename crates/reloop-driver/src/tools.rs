//! Running the tool calls of one assistant message.
//!
//! Consecutive concurrency-safe calls run in parallel (at most [`MAX_PARALLEL`] at once); any
//! other call runs alone, in order, as a barrier. A safe call at the head of a response starts
//! as soon as its `tool_use` block is complete, while the model still streams. Whether a call
//! runs is [`reloop_tools::decide()`]'s to say; this module only fetches the answers it asks for
//! (runs the PreToolUse hooks, calls `can_use_tool`, asks the prompt), then runs the tool and its
//! PostToolUse hooks. The hook runs and the outcome are fed back as events when the call
//! finishes, and the core puts the results back in `tool_use` order.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use reloop_core::hook::HookEventName;
use reloop_core::{Event, RuleSource, ToolOutcome, ToolResultContent, ToolUse};
use reloop_hooks::{run_all, HookCommon, HookInput, HooksConfig};
use reloop_tools::{
    decide, Answers, Checks, Need, Next, PermissionContext, PromptReply, ReadFirst, Ruling, ToolContext, ToolRegistry,
    Why,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::CanUseTool;

pub const MAX_PARALLEL: usize = 10;

/// The result of a tool call that may have changed something and was interrupted by a crash.
pub const UNFINISHED_TOOL_RESULT: &str = "<tool_use_error>The reloop process stopped before this tool call finished, \
so it may or may not have run. Check its effects before running it again.</tool_use_error>";

/// Everything a tool call needs besides its input.
#[derive(Clone)]
pub(crate) struct ToolEnv {
    pub registry: ToolRegistry,
    pub ctx: ToolContext,
    pub hooks: Arc<HooksConfig>,
    pub hook_common: HookCommon,
    pub permissions: Option<Arc<PermissionContext>>,
    /// Asked when the rules would ask; without it an ask is a deny.
    pub prompt: Option<Arc<dyn crate::prompt::PermissionPrompt>>,
    /// The profile checks Write/Edit's read-first rule before hooks and permissions.
    pub read_check_first: bool,
    /// How a PreToolUse hook's deny and ask read (the profile's words under the session's
    /// [`reloop_core::Flag::ClaudeCodeHookRulings`]).
    pub hook_rulings: reloop_tools::HookRulings,
    pub can_use_tool: Option<CanUseTool>,
    /// Where a call that may change something asks to be journaled as started.
    pub starts: Option<mpsc::UnboundedSender<(String, u32, tokio::sync::oneshot::Sender<()>)>>,
    /// Runs `Agent` calls as child sessions, when the session offers the tool.
    pub agents: Option<Arc<crate::subagent::Subagents>>,
    /// `Agent` calls whose start the journal holds from before a resume: they go on with their
    /// child without a second start.
    pub resumed: Arc<HashSet<String>>,
    /// A failed call fires PostToolUseFailure hooks instead of PostToolUse ones (the session's
    /// [`reloop_core::Flag::PostToolUseFailureHooks`]).
    pub failure_hooks: bool,
    /// A subagent's id and type: its tool hooks' inputs name them, as Claude Code's do (their
    /// `session_id` is the calling session's; `hooks_events/all_log`, both versions).
    pub agent: Option<(String, String)>,
    /// Outcomes keep what each call did as data (the session's
    /// [`reloop_core::Flag::StreamDetails`]).
    pub tool_use_result: bool,
    /// A rule's ruling names the rule's origin (the session's [`reloop_core::Flag::RuleSources`]).
    pub rule_sources: bool,
    /// A Read's, a Write's or an Edit's outcome keeps when its file last changed (the session's
    /// [`reloop_core::Flag::GivenBackByChange`]).
    pub read_times: bool,
}

#[cfg(test)]
impl ToolEnv {
    /// `registry`'s tools in `cwd`: no hooks, rules, prompt or subagents.
    pub(crate) fn for_test(registry: ToolRegistry, cwd: std::path::PathBuf) -> Self {
        ToolEnv {
            registry,
            ctx: ToolContext::new(cwd.clone()),
            hooks: Arc::new(HooksConfig::default()),
            hook_common: HookCommon {
                session_id: "s".into(),
                transcript_path: String::new(),
                cwd: cwd.display().to_string(),
                permission_mode: "default".into(),
            },
            permissions: None,
            prompt: None,
            read_check_first: false,
            hook_rulings: reloop_tools::HookRulings::default(),
            can_use_tool: None,
            starts: None,
            agents: None,
            resumed: Arc::new(HashSet::new()),
            failure_hooks: true,
            agent: None,
            tool_use_result: true,
            rule_sources: true,
            read_times: true,
        }
    }
}

/// A tool hook's input, naming the subagent it runs in.
fn in_agent(mut input: HookInput, env: &ToolEnv) -> HookInput {
    if let Some((id, agent_type)) = &env.agent {
        input.agent_id = Some(id.clone());
        input.agent_type = Some(agent_type.clone());
    }
    input
}

/// A call started while the model streamed.
enum Early {
    /// Running in its own task.
    Running(JoinHandle<Vec<Event>>),
    /// An instant call with nothing to await, answered on the spot ([`answer_now`]).
    Answered(Vec<Event>),
}

/// What a session read ([`ToolContext::files_read`]).
type FilesRead = Arc<Mutex<HashMap<PathBuf, Option<reloop_tools::ReadStamp>>>>;

/// The calls of the current assistant message, started early or on `run_tools`.
pub(crate) struct ToolScheduler {
    env: ToolEnv,
    /// Calls started while the model streamed, by id, with their cancel flags; their events wait
    /// for `run_tools`.
    early: HashMap<String, (Early, Arc<AtomicBool>)>,
    /// What the early calls read, begun as a copy of what the session read. Kept apart until
    /// their response completes, so a read of an abandoned attempt never satisfies Edit's
    /// read-first rule nor makes a later Read "unchanged".
    early_reads: Option<FilesRead>,
    /// An unsafe call was seen in the response: later calls must wait for it.
    early_closed: bool,
    /// Every cancel flag handed out since the last reset; an abort raises them all.
    flags: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
    hooks_cancel: CancellationToken,
    main: Option<JoinHandle<()>>,
    /// The session's own rules while a slash command's `allowed-tools` add to them.
    session_rules: Option<reloop_tools::PermissionRules>,
}

impl ToolScheduler {
    /// What the session's calls run with.
    pub(crate) fn env(&self) -> &ToolEnv {
        &self.env
    }

    /// The permission context the session's calls run under (its children's too).
    pub(crate) fn permissions(&self) -> Option<Arc<PermissionContext>> {
        self.env.permissions.clone()
    }

    pub(crate) fn new(env: ToolEnv) -> Self {
        ToolScheduler {
            env,
            early: HashMap::new(),
            early_reads: None,
            early_closed: false,
            flags: Arc::new(Mutex::new(Vec::new())),
            hooks_cancel: CancellationToken::new(),
            main: None,
            session_rules: None,
        }
    }

    fn flag(&self) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.flags.lock().unwrap_or_else(|p| p.into_inner()).push(flag.clone());
        flag
    }

    /// A `tool_use` block is complete while the model streams: start it if it is safe, no
    /// unsafe call came before it, and fewer than [`MAX_PARALLEL`] calls already started.
    pub(crate) fn on_block(&mut self, call: &Arc<ToolUse>, request: u32) {
        if self.early_closed || self.early.contains_key(&call.id) || self.early.len() >= MAX_PARALLEL {
            return;
        }
        if !self.env.registry.is_concurrency_safe(&call.name, &call.input) {
            self.early_closed = true;
            return;
        }
        // An `Agent` call's start must be journaled before its child runs, which only
        // `run_tools` allows: it waits for its turn.
        if self.env.agents.is_some() && call.name == crate::agents::AGENT_TOOL {
            return;
        }
        let (mut env, call_owned) = (self.env.clone(), call.clone());
        let session_read = &self.env.ctx.files_read;
        env.ctx.files_read = self
            .early_reads
            .get_or_insert_with(|| Arc::new(Mutex::new(session_read.lock().unwrap_or_else(|p| p.into_inner()).clone())))
            .clone();
        let (flag, token) = (self.flag(), self.hooks_cancel.clone());
        if let Some(events) = answer_now(call, &env, &flag) {
            self.early.insert(call.id.clone(), (Early::Answered(events), flag));
            return;
        }
        let task_flag = flag.clone();
        let task = tokio::spawn(async move { run_call(call_owned, request, env, task_flag, token, None).await });
        self.early.insert(call.id.clone(), (Early::Running(task), flag));
    }

    /// The history was compacted: the earlier Read results a "file unchanged" answer would
    /// point at are gone from the model's view.
    pub(crate) fn forget_read_stamps(&self) {
        self.env.ctx.forget_read_stamps();
    }

    /// The response in flight was abandoned or completed: forget what streaming started.
    pub(crate) fn new_response(&mut self) {
        for (_, (early, flag)) in self.early.drain() {
            // The blocking tool itself stops on its flag; aborting the task only drops its result.
            flag.store(true, Ordering::SeqCst);
            if let Early::Running(task) = early {
                task.abort();
            }
        }
        self.early_reads = None;
        self.early_closed = false;
    }

    /// Runs the calls of a completed assistant message, reusing the ones already started.
    /// Runs the calls of a completed assistant message, the answer to `request`, reusing the ones
    /// already started; every event fed back names `request`.
    pub(crate) fn run(&mut self, calls: Vec<Arc<ToolUse>>, request: u32, inbox: mpsc::UnboundedSender<Event>) {
        let mut early = std::mem::take(&mut self.early);
        self.early_closed = false;
        // The response completed: what its early calls read counts once each of them finishes.
        let reads = self.early_reads.take();
        // Flags of calls that are over are dropped, so the list does not grow with the session.
        self.flags.lock().unwrap_or_else(|p| p.into_inner()).retain(|f| Arc::strong_count(f) > 1);
        let env = self.env.clone();
        let flags = self.flags.clone();
        let token = self.hooks_cancel.clone();
        self.main = Some(tokio::spawn(async move {
            for batch in batches(&env.registry, calls) {
                let flag = Arc::new(AtomicBool::new(false));
                flags.lock().unwrap_or_else(|p| p.into_inner()).push(flag.clone());
                let errored: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
                // The batch's calls started early have their own flags; a failing sibling must
                // reach those too, or they run to completion for a result that is thrown away.
                let started: Vec<_> = batch.iter().map(|call| early.remove(&call.id)).collect();
                let early_flags: Vec<Arc<AtomicBool>> = started.iter().flatten().map(|(_, f)| f.clone()).collect();
                let runs = batch.into_iter().zip(started).map(|(call, started)| {
                    let started = started.map(|(task, _)| task);
                    let (env, flag, token, errored) = (env.clone(), flag.clone(), token.clone(), errored.clone());
                    let reads = reads.clone();
                    async move {
                        let events = match started {
                            Some(early) => {
                                let events = match early {
                                    Early::Running(task) => {
                                        task.await.unwrap_or_else(|e| vec![panicked(&call.id, &e.to_string())])
                                    }
                                    Early::Answered(events) => events,
                                };
                                if let Some(reads) = reads {
                                    let read = reads.lock().unwrap_or_else(|p| p.into_inner()).clone();
                                    env.ctx.files_read.lock().unwrap_or_else(|p| p.into_inner()).extend(read);
                                }
                                events
                            }
                            None => {
                                run_call(call.clone(), request, env, flag.clone(), token, Some(errored.clone())).await
                            }
                        };
                        (call, events)
                    }
                });
                let mut finished = futures::stream::iter(runs).buffer_unordered(MAX_PARALLEL);
                while let Some((call, mut events)) = finished.next().await {
                    let by_other = errored.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    match (by_other, last_outcome(&events)) {
                        // A sibling Bash call failed first: this call's result is moot.
                        (Some(culprit), _) => set_outcome(&mut events, &call.id, cancelled_text(&culprit)),
                        (None, Some(outcome)) if outcome.is_error && !outcome.denied && call.name == "Bash" => {
                            *errored.lock().unwrap_or_else(|p| p.into_inner()) = Some(describe(&call));
                            flag.store(true, Ordering::SeqCst);
                            for early_flag in &early_flags {
                                early_flag.store(true, Ordering::SeqCst);
                            }
                        }
                        _ => {}
                    }
                    for mut event in events {
                        crate::tool_use_result::fill(&mut event, env.tool_use_result);
                        if inbox.send(event.correlated(request)).is_err() {
                            return;
                        }
                    }
                }
            }
        }));
    }

    /// Calls journaled as started before a resume (see [`ToolEnv::resumed`]).
    pub(crate) fn set_resumed(&mut self, started: &[String]) {
        self.env.resumed = Arc::new(started.iter().cloned().collect());
    }

    /// The caller switched the permission mode: calls from now on are checked under it.
    pub(crate) fn set_permission_mode(&mut self, mode: reloop_tools::PermissionMode) {
        if let Some(permissions) = &self.env.permissions {
            let mut changed = PermissionContext::clone(permissions);
            changed.mode = mode;
            self.env.permissions = Some(Arc::new(changed));
        }
        self.env.hook_common.permission_mode = mode.as_str().to_string();
    }

    /// A slash command's `allowed-tools` are allowed from now on, until its query is over
    /// (`allow` empty: the session's own rules again).
    pub(crate) fn set_command_tools(&mut self, allow: &[String]) {
        let Some(permissions) = &self.env.permissions else { return };
        let own = self.session_rules.take().unwrap_or_else(|| permissions.rules.clone());
        let mut changed = PermissionContext::clone(permissions);
        changed.rules = own.allowing(allow);
        if !allow.is_empty() {
            self.session_rules = Some(own);
        }
        self.env.permissions = Some(Arc::new(changed));
    }

    /// Whether running `calls` shows nothing outside the process: every call is read-only, no
    /// tool hook would run for it and no caller callback is asked. The step asking for them
    /// may then share the group commit of the streamed steps.
    pub(crate) fn runs_quietly(&self, calls: &[Arc<ToolUse>]) -> bool {
        self.env.can_use_tool.is_none()
            && self.env.prompt.is_none()
            && calls.iter().all(|c| {
                self.env.registry.is_read_only(&c.name, &c.input)
                    && self.env.hooks.matching(HookEventName::PreToolUse, Some(&c.name)).is_empty()
                    && self.env.hooks.matching(HookEventName::PostToolUse, Some(&c.name)).is_empty()
            })
    }

    /// Stops everything in flight: tools see their cancel flag, hooks are killed.
    pub(crate) fn cancel(&mut self) {
        for flag in self.flags.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            flag.store(true, Ordering::SeqCst);
        }
        self.hooks_cancel.cancel();
        self.hooks_cancel = CancellationToken::new();
        if let Some(task) = self.main.take() {
            task.abort();
        }
        self.new_response();
    }
}

/// The files a session had read, so Write and Edit keep their read-first rule after a resume.
pub(crate) fn files_read_from(state: &reloop_core::State, ctx: &ToolContext) {
    let messages = state.messages().messages();
    for (i, message) in messages.iter().enumerate() {
        for call in message.tool_uses().filter(|c| c.name == "Read" || c.name == "Write" || c.name == "Edit") {
            let ok = messages.get(i + 1).is_some_and(|next| {
                next.content
                    .iter()
                    .any(|b| matches!(b, reloop_core::ContentBlock::ToolResult(r) if r.tool_use_id == call.id && !r.is_error))
            });
            if let (true, Some(path)) = (ok, call.input.get("file_path").and_then(|p| p.as_str())) {
                ctx.mark_read(&ctx.cwd.join(path), None);
            }
        }
    }
}

/// The events of `call` when it can be answered on the spot, as [`run_call`] would answer it:
/// an instant, read-only tool with no PostToolUse hook, that the decision lets run without
/// awaiting anything ([`decide_now`]). Spares such a call its own task. `None`: run it.
fn answer_now(call: &ToolUse, env: &ToolEnv, flag: &Arc<AtomicBool>) -> Option<Vec<Event>> {
    let failure_hooks =
        env.failure_hooks && !env.hooks.matching(HookEventName::PostToolUseFailure, Some(&call.name)).is_empty();
    let quiet = env.registry.is_instant(&call.name, &call.input)
        && env.registry.is_read_only(&call.name, &call.input)
        && env.hooks.matching(HookEventName::PostToolUse, Some(&call.name)).is_empty()
        && !failure_hooks;
    if !quiet {
        return None;
    }
    let (ruling, rule) = decide_now(call, env)?;
    let rule = rule.filter(|_| env.rule_sources);
    let meta = crate::tool_use_result::meta(call, &ruling, rule).filter(|_| env.tool_use_result);
    let Ruling::Run { input, .. } = ruling else { return None };
    let mut ctx = env.ctx.clone();
    ctx.cancel = flag.clone();
    let output = execute_instant(&env.registry, call, &input, &ctx);
    let mut event = done(&call.id, output.content, output.is_error, false);
    if let Event::ToolDone(outcome) = &mut event {
        outcome.tool_use_result = output.structured.filter(|_| env.tool_use_result);
        outcome.file_changed_ms = output.changed_ms.filter(|_| env.read_times);
        crate::tool_use_result::attach(outcome, meta, rule);
    }
    Some(vec![event])
}

/// The ruling on `call` when the decision asks only what is answered without waiting or
/// anybody's code (the read-first check, the rules), with the origin of the rule that gave it;
/// `None` when it needs a hook, the caller's callback or a prompt.
fn decide_now(call: &ToolUse, env: &ToolEnv) -> Option<(Ruling, Option<RuleSource>)> {
    let checks = checks(call, env);
    let mut answers = Answers::default();
    loop {
        match decide(&call.name, &call.input, checks, &answers) {
            Next::Decided(ruling) => {
                let rule = crate::tool_use_result::rule_of(&ruling, &answers);
                return Some((ruling, rule));
            }
            Next::Need(Need::ReadFirst) => {
                let refusal = reloop_tools::read_first_refusal(&call.name, &call.input, &env.ctx);
                answers.read_first = Some(ReadFirst::from_refusal(refusal));
            }
            Next::Need(Need::Rules { input }) => {
                answers.rules = Some(env.permissions.as_ref()?.judge(&env.registry, &call.name, &input));
            }
            Next::Need(Need::PreToolUse | Need::CanUseTool { .. } | Need::Prompt { .. }) => return None,
        }
    }
}

/// Runs an instant call here; a panic is answered as a tool error, as the blocking pool would.
fn execute_instant(
    registry: &ToolRegistry,
    call: &ToolUse,
    input: &serde_json::Value,
    ctx: &ToolContext,
) -> reloop_tools::ToolOutput {
    let run = std::panic::AssertUnwindSafe(|| registry.execute(&call.name, input, ctx));
    match std::panic::catch_unwind(run) {
        Ok(output) => output,
        Err(_) => reloop_tools::ToolOutput::error(
            "<tool_use_error>Error: the tool failed unexpectedly: it panicked</tool_use_error>",
        ),
    }
}

/// One call: PreToolUse hooks, permission, the tool, PostToolUse hooks. Returns the events to
/// feed back, the `tool_done` last.
async fn run_call(
    call: Arc<ToolUse>,
    request: u32,
    env: ToolEnv,
    flag: Arc<AtomicBool>,
    token: CancellationToken,
    errored: Option<Arc<Mutex<Option<String>>>>,
) -> Vec<Event> {
    let mut events = Vec::new();
    // An `Agent` call queues for its turn first, so concurrent children start in call order.
    let agent_turn = match env.agents.as_ref().filter(|_| call.name == crate::agents::AGENT_TOOL) {
        Some(agents) => Some(agents.turn().await),
        None => None,
    };
    if let Some(culprit) = errored.and_then(|e| e.lock().unwrap_or_else(|p| p.into_inner()).clone()) {
        events.push(done(&call.id, cancelled_text(&culprit), true, false));
        return events;
    }
    // Whether the call runs is decided by `reloop_tools::decide`; this only fetches what it asks.
    let (ruling, rule) = permit(&call, request, &env, &token, &mut events).await;
    let rule = rule.filter(|_| env.rule_sources);
    let meta = crate::tool_use_result::meta(&call, &ruling, rule).filter(|_| env.tool_use_result);
    let input = match ruling {
        Ruling::Run { input, .. } => input,
        Ruling::Refuse { message, denied, .. } => {
            let mut refused = done(&call.id, message, true, denied);
            crate::tool_use_result::set_meta(&mut refused, meta, rule);
            events.push(refused);
            return events;
        }
    };
    // An `Agent` call's start is journaled (once) before its child session exists, so a resume
    // knows to look for the child.
    let agent = env.agents.is_some() && call.name == crate::agents::AGENT_TOOL;
    if (!env.registry.is_read_only(&call.name, &input) || agent) && !(agent && env.resumed.contains(&call.id)) {
        if let Some(starts) = &env.starts {
            let (ack, journaled) = tokio::sync::oneshot::channel();
            // Without the journal's word the call does not run: the loop has ended.
            if starts.send((call.id.clone(), request, ack)).is_err() || journaled.await.is_err() {
                events.push(done(&call.id, "Interrupted by user".into(), true, false));
                return events;
            }
        }
    }
    let mut agent_outcome = None;
    let began = std::time::Instant::now();
    let (mut structured, mut changed) = (None, None);
    let (output, blocks) = match (env.agents.clone(), agent_turn) {
        (Some(agents), Some(turn)) => {
            let asked = ToolUse { input: input.clone(), ..ToolUse::clone(&call) };
            let permissions = env.permissions.clone();
            let outcome = if agents.in_background(&asked) {
                agents.launch(asked, permissions, token.clone(), turn).await
            } else {
                agents.answer(asked, permissions, token.clone(), turn).await
            };
            let output = (outcome.content.as_text(), outcome.is_error);
            agent_outcome = Some(outcome);
            (output, Vec::new())
        }
        _ => {
            let mut ctx = env.ctx.clone();
            ctx.cancel = flag;
            if env.registry.is_instant(&call.name, &input) {
                // Answered from memory: run here rather than hand the call to the blocking pool and back.
                let output = execute_instant(&env.registry, &call, &input, &ctx);
                (structured, changed) = (output.structured, output.changed_ms);
                ((output.content, output.is_error), Vec::new())
            } else {
                let (registry, name, tool_input) = (env.registry.clone(), call.name.clone(), input.clone());
                match tokio::task::spawn_blocking(move || registry.execute(&name, &tool_input, &ctx)).await {
                    Ok(output) => {
                        (structured, changed) = (output.structured, output.changed_ms);
                        ((output.content, output.is_error), output.blocks)
                    }
                    // A tool that panicked is answered, so its call never stays open.
                    Err(e) => {
                        let text = format!("<tool_use_error>Error: the tool failed unexpectedly: {e}</tool_use_error>");
                        ((text, true), Vec::new())
                    }
                }
            }
        }
    };
    // Claude Code runs PostToolUseFailure hooks, not PostToolUse ones, after a call that failed.
    let event =
        if env.failure_hooks && output.1 { HookEventName::PostToolUseFailure } else { HookEventName::PostToolUse };
    let post = env.hooks.matching(event, Some(&call.name));
    if !post.is_empty() {
        let hook_input = in_agent(
            if event == HookEventName::PostToolUseFailure {
                let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
                HookInput::post_tool_use_failure(
                    env.hook_common.clone(),
                    &call.name,
                    input,
                    &call.id,
                    &output.0,
                    millis,
                )
            } else {
                let response = serde_json::Value::String(output.0.clone());
                HookInput::post_tool_use(env.hook_common.clone(), &call.name, input, &call.id, response)
            },
            &env,
        );
        let runs = run_all(&post, &hook_input, &env.ctx.cwd, &token).await;
        events.push(Event::HookDone { hook_event: event, tool_use_id: Some(call.id.clone()), runs, request });
    }
    match agent_outcome {
        Some(mut outcome) => {
            outcome.tool_result_meta = meta;
            events.push(Event::ToolDone(outcome))
        }
        None => {
            let mut finished = done(&call.id, output.0, output.1, false);
            if let Event::ToolDone(outcome) = &mut finished {
                if !blocks.is_empty() {
                    // Text and images (an MCP tool's answer) go back as blocks.
                    outcome.content = ToolResultContent::Blocks(blocks);
                }
                outcome.tool_use_result = structured.filter(|_| env.tool_use_result);
                outcome.file_changed_ms = changed.filter(|_| env.read_times);
                crate::tool_use_result::attach(outcome, meta, rule);
            }
            events.push(finished);
        }
    }
    events
}

/// The steps `env` has for `call`.
fn checks(call: &ToolUse, env: &ToolEnv) -> Checks {
    Checks {
        read_first: env.read_check_first,
        pre_tool_use: !env.hooks.matching(HookEventName::PreToolUse, Some(&call.name)).is_empty(),
        can_use_tool: env.can_use_tool.is_some(),
        rules: env.permissions.is_some(),
        prompt: env.prompt.is_some(),
        hook_rulings: env.hook_rulings,
    }
}

/// Carries out [`reloop_tools::decide()`] for `call`: answers each question it asks (running
/// the PreToolUse hooks, calling the callback, judging by the rules, asking the prompt) until it
/// rules, with the origin of the rule that gave the ruling. The hooks' and the prompt's runs go
/// into `events`, as the journal keeps them.
async fn permit(
    call: &ToolUse,
    request: u32,
    env: &ToolEnv,
    token: &CancellationToken,
    events: &mut Vec<Event>,
) -> (Ruling, Option<RuleSource>) {
    let checks = checks(call, env);
    let mut answers = Answers::default();
    loop {
        match decide(&call.name, &call.input, checks, &answers) {
            Next::Decided(ruling) => {
                let rule = crate::tool_use_result::rule_of(&ruling, &answers);
                return (ruling, rule);
            }
            Next::Need(Need::ReadFirst) => {
                let refusal = reloop_tools::read_first_refusal(&call.name, &call.input, &env.ctx);
                answers.read_first = Some(ReadFirst::from_refusal(refusal));
            }
            Next::Need(Need::PreToolUse) => {
                let pre = env.hooks.matching(HookEventName::PreToolUse, Some(&call.name));
                let hook_input = in_agent(
                    HookInput::pre_tool_use(env.hook_common.clone(), &call.name, call.input.clone(), &call.id),
                    env,
                );
                let runs = run_all(&pre, &hook_input, &env.ctx.cwd, token).await;
                answers.pre_tool_use = Some(runs.clone());
                events.push(Event::HookDone {
                    hook_event: HookEventName::PreToolUse,
                    tool_use_id: Some(call.id.clone()),
                    runs,
                    request,
                });
            }
            Next::Need(Need::CanUseTool { input }) => {
                let answer = env.can_use_tool.as_ref().and_then(|f| f(&call.name, &input));
                answers.can_use_tool = Some(answer.into());
            }
            Next::Need(Need::Rules { input }) => match &env.permissions {
                Some(permissions) => answers.rules = Some(permissions.judge(&env.registry, &call.name, &input)),
                // Not asked without rules ([`checks`]); were it, no rules means no refusal.
                None => return (Ruling::Run { input, why: Why::NoRules }, None),
            },
            Next::Need(Need::Prompt { input, message }) => {
                let Some(prompt) = &env.prompt else {
                    answers.prompt = Some(PromptReply::Failed);
                    continue;
                };
                let asked = crate::prompt::PromptRequest {
                    tool_name: call.name.clone(),
                    input,
                    tool_use_id: call.id.clone(),
                    message,
                };
                let (run, reply) = crate::prompt::ask(prompt, asked, token).await;
                events.push(Event::HookDone {
                    hook_event: HookEventName::PermissionRequest,
                    tool_use_id: Some(call.id.clone()),
                    runs: vec![run],
                    request,
                });
                answers.prompt = Some(reply);
            }
        }
    }
}

/// An outcome; [`ToolScheduler::run`] tags it with its request when it feeds it back.
fn done(id: &str, content: String, is_error: bool, denied: bool) -> Event {
    Event::ToolDone(ToolOutcome { is_error, denied, ..ToolOutcome::new(id, ToolResultContent::Text(content)) })
}

fn panicked(id: &str, error: &str) -> Event {
    done(id, format!("<tool_use_error>Error: the tool failed unexpectedly: {error}</tool_use_error>"), true, false)
}

fn last_outcome(events: &[Event]) -> Option<&ToolOutcome> {
    events.iter().rev().find_map(|e| match e {
        Event::ToolDone(o) => Some(o),
        _ => None,
    })
}

fn set_outcome(events: &mut [Event], id: &str, text: String) {
    if let Some(Event::ToolDone(o)) = events.iter_mut().rev().find(|e| matches!(e, Event::ToolDone(_))) {
        *o = ToolOutcome {
            is_error: true,
            request: o.request,
            agent_usage: o.agent_usage.take(),
            ..ToolOutcome::new(id, ToolResultContent::Text(text))
        };
    }
}

/// `Bash(first 40 characters of the command…)`.
fn describe(call: &ToolUse) -> String {
    let command = call.input.get("command").and_then(|c| c.as_str()).unwrap_or_default();
    let short: String = command.chars().take(40).collect();
    let more = if command.chars().count() > 40 { "…" } else { "" };
    format!("{}({short}{more})", call.name)
}

fn cancelled_text(culprit: &str) -> String {
    format!("<tool_use_error>Cancelled: parallel tool call {culprit} errored</tool_use_error>")
}

/// Splits calls into runs: consecutive safe calls together, each unsafe call alone.
fn batches(registry: &ToolRegistry, calls: Vec<Arc<ToolUse>>) -> Vec<Vec<Arc<ToolUse>>> {
    let mut out: Vec<(bool, Vec<Arc<ToolUse>>)> = Vec::new();
    for call in calls {
        let safe = registry.is_concurrency_safe(&call.name, &call.input);
        match out.last_mut() {
            Some((true, batch)) if safe => batch.push(call),
            _ => out.push((safe, vec![call])),
        }
    }
    out.into_iter().map(|(_, batch)| batch).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use reloop_tools::{Tool, ToolOutput};
    use serde_json::{json, Value};

    use super::*;

    /// A safe tool that sleeps 50 ms and records how many calls ran at once at most.
    struct Counted {
        running: Arc<AtomicUsize>,
        peak: Arc<AtomicUsize>,
    }

    impl Tool for Counted {
        fn name(&self) -> &str {
            "Counted"
        }
        fn description(&self) -> &str {
            "Sleeps 50 ms."
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn is_read_only(&self, _: &Value) -> bool {
            true
        }
        fn is_concurrency_safe(&self, _: &Value) -> bool {
            true
        }
        fn call(&self, _: &Value, _: &ToolContext) -> ToolOutput {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            self.running.fetch_sub(1, Ordering::SeqCst);
            ToolOutput::ok("done")
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_started_while_the_model_streams_respect_the_parallel_cap() {
        let peak = Arc::new(AtomicUsize::new(0));
        let mut registry = ToolRegistry::empty();
        registry.register(Arc::new(Counted { running: Arc::new(AtomicUsize::new(0)), peak: peak.clone() }));
        let mut scheduler = ToolScheduler::new(ToolEnv::for_test(registry, std::env::temp_dir()));
        let calls: Vec<Arc<ToolUse>> = (0..MAX_PARALLEL + 5)
            .map(|i| {
                Arc::new(ToolUse {
                    id: format!("toolu_{i}"),
                    name: "Counted".into(),
                    input: json!({}),
                    extra: Default::default(),
                })
            })
            .collect();
        for call in &calls {
            scheduler.on_block(call, 1);
        }
        let (inbox, mut events) = mpsc::unbounded_channel();
        scheduler.run(calls.clone(), 1, inbox);
        let mut done = 0;
        while done < calls.len() {
            if let Some(Event::ToolDone(_)) = events.recv().await {
                done += 1;
            }
        }
        assert_eq!(peak.load(Ordering::SeqCst), MAX_PARALLEL);
    }
}
