//! Whether one tool call runs: the whole chain from a `tool_use` to run or refuse, as one pure
//! function over what is known of the call.
//!
//! [`decide`] never waits and never looks outside: where a step needs an outside answer (a
//! hook's runs, the embedder's callback, the rules' look at the disk, a person's reply) it
//! returns [`Next::Need`], and the driver calls it again with that answer in [`Answers`]. The
//! driver is thereby only an executor, and the order below is read here, in one place. A call
//! goes through the steps the session has ([`Checks`]), the first that decides winning:
//!
//! 1. **Read first** (profiles with the rule): a Write or Edit of an existing file the session
//!    has not Read is refused as a tool error, before any hook or rule sees it; no permission
//!    denial.
//! 2. **PreToolUse hooks**, their runs read once ([`reloop_core::hook::outcome`]): a block (exit
//!    2, `decision: block`) refuses with the hooks' feedback, even when another hook allowed; a
//!    `deny` refuses with its reason; an `allow` runs the call at once, **skipping the
//!    `can_use_tool` callback and the rules, deny rules included**. A hook's `updatedInput`
//!    replaces the input every later step and the tool see. A hook's `ask` decides nothing
//!    (under a Claude Code profile's [`HookRulings::ask_refuses`], one with a reason refuses the
//!    call with it when nobody can be asked, after the callback had its say), and a hook that
//!    stops the loop (`continue: false`) decides nothing for the call: it goes on, and the loop
//!    stops once the turn's tools are done.
//! 3. **`can_use_tool`** (the embedder's callback): a deny refuses with its message; an allow
//!    runs the call, skipping the rules; no opinion goes on.
//! 4. **The rules and the mode** ([`crate::PermissionContext::judge`], whose module lists its
//!    own order: deny rules, ask rules, `bypassPermissions`, protected paths, allow rules, the
//!    workspace, read-only calls under the sandbox, the mode). An allow runs; a deny refuses (a
//!    tool the flags removed is refused as missing, no permission denial); an ask refuses with
//!    the prompt's text when nobody is there to ask.
//! 5. **The prompt** (the SDK's `can_use_tool` over stdio), asked only when the rules would ask:
//!    an allow runs (with its `updatedInput` when it is an object), a deny refuses with its
//!    message or the prompt's text, a failed or unreadable reply refuses with the prompt's text.
//!
//! A session without rules runs what the steps before let through.

use reloop_core::hook::{
    outcome, pre_tool_use_denied, pre_tool_use_feedback, with_raw_stderr, HookEventName, HookRun, Permission,
};
use serde_json::Value;

use crate::permissions::{Decision, Judgement, RuleStep, Verdict};

/// The steps a session has for a call; a step it does not have is skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checks {
    /// The profile refuses a Write or Edit of a file not Read first.
    pub read_first: bool,
    /// PreToolUse hooks match the call's tool.
    pub pre_tool_use: bool,
    /// The embedder gave a `can_use_tool` callback.
    pub can_use_tool: bool,
    /// The session has permission rules and a mode.
    pub rules: bool,
    /// Somebody can be asked when the rules would ask.
    pub prompt: bool,
    /// How a PreToolUse hook's `deny` and `ask` read, where the session's profile words them.
    pub hook_rulings: HookRulings,
}

/// A profile's words for a PreToolUse hook's `deny` and `ask` (Claude Code's, under
/// [`reloop_core::Flag::ClaudeCodeHookRulings`]); the default is reloop's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HookRulings {
    /// The refusal of a hook's `deny` that gave a reason, `{tool}` and `{reason}` filled in
    /// (2.1.332: `PreToolUse:{tool} hook error: {reason}`); `None`: the reason alone.
    pub denied: Option<&'static str>,
    /// A hook's `ask` with a reason, when nobody can be asked, refuses the call with that reason
    /// whatever the rules say (both Claude Code versions); off: the ask decides nothing.
    pub ask_refuses: bool,
    /// An exit-2 hook's stderr refuses the call as written, trailing newline included (both
    /// Claude Code versions, `tool_results/hook_exit2`); off: trimmed.
    pub raw_stderr: bool,
    /// A deny and an ask that give no reason, worded as the version words them.
    pub bare: reloop_core::profile::BareHookTexts,
}

impl HookRulings {
    /// The words of the session `config` runs under: its profile's, when its flags have
    /// [`reloop_core::Flag::ClaudeCodeHookRulings`]; reloop's otherwise.
    pub fn of(config: &reloop_core::Config) -> Self {
        if !config.flag(reloop_core::Flag::ClaudeCodeHookRulings) {
            return HookRulings::default();
        }
        let texts = &config.rules().tools;
        let raw_stderr = config.flag(reloop_core::Flag::PreToolUseRawStderr) && config.rules().stop_hook_raw_stderr;
        let bare = if config.flag(reloop_core::Flag::BareHookRulings) {
            config.profile.bare_hook_texts()
        } else {
            reloop_core::profile::BareHookTexts::default()
        };
        HookRulings { denied: texts.hook_denied, ask_refuses: texts.hook_ask_refuses, raw_stderr, bare }
    }
}

/// What the outside answered so far; each is `None` until [`decide`] asked for it.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// The read-first check ([`Need::ReadFirst`]).
    pub read_first: Option<ReadFirst>,
    /// The PreToolUse hooks' runs, in hook order ([`Need::PreToolUse`]).
    pub pre_tool_use: Option<Vec<HookRun>>,
    /// The callback's answer ([`Need::CanUseTool`]).
    pub can_use_tool: Option<CallbackAnswer>,
    /// The rules' judgement ([`Need::Rules`]).
    pub rules: Option<Judgement>,
    /// The prompt's reply ([`Need::Prompt`]).
    pub prompt: Option<PromptReply>,
}

/// The read-first check of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadFirst {
    /// Not a Write or Edit of an existing file left unread.
    Satisfied,
    /// The file exists and was not read: the tool's own refusal text.
    Refused {
        /// What the model is told.
        message: String,
    },
}

impl ReadFirst {
    /// From [`crate::read_first_refusal`]'s answer.
    pub fn from_refusal(refusal: Option<String>) -> Self {
        refusal.map_or(ReadFirst::Satisfied, |message| ReadFirst::Refused { message })
    }
}

/// What the embedder's `can_use_tool` callback said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackAnswer {
    /// It left the call to the rules.
    NoOpinion,
    /// It decided.
    Decided(Decision),
}

impl From<Option<Decision>> for CallbackAnswer {
    fn from(answer: Option<Decision>) -> Self {
        answer.map_or(CallbackAnswer::NoOpinion, CallbackAnswer::Decided)
    }
}

/// What the prompt replied.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptReply {
    /// The reply, in the SDK's format: `{"behavior": "allow", "updatedInput": {...}}` or
    /// `{"behavior": "deny", "message": "..."}`.
    Replied(Value),
    /// No reply: the caller is gone, the reply was malformed, or the call was aborted.
    Failed,
}

/// What [`decide`] needs before it can rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The read-first check of the call as the model asked it ([`crate::read_first_refusal`]).
    ReadFirst,
    /// The runs of the PreToolUse hooks matching the call, on the input the model gave.
    PreToolUse,
    /// The callback's answer for the call with `input`.
    CanUseTool {
        /// The input the call would run with.
        input: Value,
    },
    /// The rules' judgement of the call with `input` ([`crate::PermissionContext::judge`]).
    Rules {
        /// The input the call would run with.
        input: Value,
    },
    /// A person's reply: the rules would ask.
    Prompt {
        /// The input the call would run with.
        input: Value,
        /// What the prompt shows; a failed prompt refuses with it.
        message: String,
    },
}

/// The next thing to do for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Answer this, then decide again.
    Need(Need),
    /// Decided.
    Decided(Ruling),
}

/// What happens to the call, and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Ruling {
    /// The tool runs with `input` (the model's, or as a hook or the prompt replaced it).
    Run {
        /// The input to run with.
        input: Value,
        /// What let it through.
        why: Why,
    },
    /// The call does not run; `message` goes back to the model as an error result.
    Refuse {
        /// What the model is told.
        message: String,
        /// It counts as a permission denial (the result's `permission_denials`); a tool error
        /// (read first, a removed tool) does not.
        denied: bool,
        /// What refused it.
        why: Why,
    },
}

impl Ruling {
    /// The evidence: which step decided.
    pub fn why(&self) -> &Why {
        match self {
            Ruling::Run { why, .. } | Ruling::Refuse { why, .. } => why,
        }
    }
}

/// The step that decided a call, and who spoke in it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Why {
    /// A Write or Edit of an existing file that was not Read first.
    ReadFirst,
    /// PreToolUse hooks blocked the call.
    HookBlocked {
        /// The blocking hooks, in hook order.
        commands: Vec<String>,
    },
    /// A PreToolUse hook denied the call.
    HookDenied {
        /// The hook.
        command: String,
    },
    /// A PreToolUse hook asked, and nobody could be asked.
    HookAsked {
        /// The hook.
        command: String,
    },
    /// A PreToolUse hook allowed the call.
    HookAllowed {
        /// The hook.
        command: String,
    },
    /// The embedder's callback denied the call.
    CallbackDenied,
    /// The embedder's callback allowed the call.
    CallbackAllowed,
    /// The rules decided, at this step (an ask among them, with nobody to ask).
    Rules(RuleStep),
    /// The rules would ask (at this step) and the person allowed.
    PromptAllowed(RuleStep),
    /// The rules would ask (at this step) and the person denied, or the prompt failed.
    PromptDenied(RuleStep),
    /// The session has no rules: nothing before refused the call.
    NoRules,
}

/// Decides the call of `tool` with the model's `input` from what is known of it (see the module
/// documentation for the order). Total: any answers give a ruling or the next question, and
/// each question is asked once, so a driver answering them rules within five questions.
pub fn decide(tool: &str, input: &Value, checks: Checks, answers: &Answers) -> Next {
    if checks.read_first {
        match &answers.read_first {
            None => return Next::Need(Need::ReadFirst),
            Some(ReadFirst::Refused { message }) => return refuse(message.clone(), false, Why::ReadFirst),
            Some(ReadFirst::Satisfied) => {}
        }
    }
    let mut input = input;
    let hooks;
    let mut hook_asked = None;
    if checks.pre_tool_use {
        let Some(runs) = &answers.pre_tool_use else { return Next::Need(Need::PreToolUse) };
        hooks = outcome(HookEventName::PreToolUse, runs);
        if !hooks.blocks.is_empty() {
            let commands = hooks.blocks.iter().map(|b| b.command.clone()).collect();
            let feedback = if checks.hook_rulings.raw_stderr {
                pre_tool_use_feedback(tool, &with_raw_stderr(&hooks.blocks, runs))
            } else {
                pre_tool_use_feedback(tool, &hooks.blocks)
            };
            return refuse(feedback, true, Why::HookBlocked { commands });
        }
        if let Some(updated) = &hooks.updated_input {
            input = updated;
        }
        match &hooks.permission {
            Some(p) if p.decision == Permission::Deny => {
                let why = Why::HookDenied { command: p.command.clone() };
                let reason = p.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let message = match (checks.hook_rulings.denied, reason, checks.hook_rulings.bare.denied) {
                    (Some(text), Some(reason), _) => text.replace("{tool}", tool).replace("{reason}", reason),
                    (_, None, Some(bare)) => bare.replace("{tool}", tool),
                    _ => pre_tool_use_denied(tool, reason),
                };
                return refuse(message, true, why);
            }
            Some(p) if p.decision == Permission::Allow => {
                return run(input, Why::HookAllowed { command: p.command.clone() });
            }
            Some(p) if p.decision == Permission::Ask && checks.hook_rulings.ask_refuses && !checks.prompt => {
                let reason = p.reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let said = reason
                    .map(str::to_string)
                    .or_else(|| checks.hook_rulings.bare.asked.map(|t| t.replace("{tool}", tool)));
                hook_asked = said.map(|said| (said, p.command.clone()));
            }
            _ => {}
        }
    }
    if checks.can_use_tool {
        match &answers.can_use_tool {
            None => return Next::Need(Need::CanUseTool { input: input.clone() }),
            Some(CallbackAnswer::Decided(Decision::Deny { message })) => {
                return refuse(message.clone(), true, Why::CallbackDenied);
            }
            Some(CallbackAnswer::Decided(_)) => return run(input, Why::CallbackAllowed),
            Some(CallbackAnswer::NoOpinion) => {}
        }
    }
    if let Some((reason, command)) = hook_asked {
        return refuse(reason, true, Why::HookAsked { command });
    }
    if !checks.rules {
        return run(input, Why::NoRules);
    }
    let Some(Judgement { verdict, step, .. }) = &answers.rules else {
        return Next::Need(Need::Rules { input: input.clone() });
    };
    let step = *step;
    match (verdict, checks.prompt) {
        (Verdict::Allow, _) => run(input, Why::Rules(step)),
        (Verdict::Deny { message } | Verdict::Ask { message }, false) | (Verdict::Deny { message }, true) => {
            refuse(message.clone(), !matches!(step, RuleStep::Removed | RuleStep::PathCheck), Why::Rules(step))
        }
        (Verdict::Ask { message }, true) => match &answers.prompt {
            None => Next::Need(Need::Prompt { input: input.clone(), message: message.clone() }),
            Some(PromptReply::Failed) => refuse(message.clone(), true, Why::PromptDenied(step)),
            Some(PromptReply::Replied(reply)) => match read_reply(reply, input, message) {
                Ok(input) => Next::Decided(Ruling::Run { input, why: Why::PromptAllowed(step) }),
                Err(message) => refuse(message, true, Why::PromptDenied(step)),
            },
        },
    }
}

/// Reads a prompt's reply: `allow` runs the call (with `updatedInput` when it is an object),
/// `deny` refuses it with the reply's message; anything else refuses it with the `headless` text.
fn read_reply(reply: &Value, input: &Value, headless: &str) -> Result<Value, String> {
    match reply.get("behavior").and_then(Value::as_str) {
        Some("allow") => match reply.get("updatedInput") {
            Some(updated @ Value::Object(_)) => Ok(updated.clone()),
            _ => Ok(input.clone()),
        },
        Some("deny") => {
            let message = reply.get("message").and_then(Value::as_str).filter(|m| !m.is_empty());
            Err(message.unwrap_or(headless).to_string())
        }
        _ => Err(headless.to_string()),
    }
}

fn run(input: &Value, why: Why) -> Next {
    Next::Decided(Ruling::Run { input: input.clone(), why })
}

fn refuse(message: String, denied: bool, why: Why) -> Next {
    Next::Decided(Ruling::Refuse { message, denied, why })
}
