//! # reloop-tools: Claude Code's tool set for reloop
//!
//! The contract:
//!
//! * A [`Tool`] is synchronous. The driver is the only thing that awaits; it runs each call inside
//!   `tokio::task::spawn_blocking` (a tool that says it answers from memory,
//!   [`Tool::is_instant`], on the loop's own thread), and asks a running call to stop by setting
//!   [`ToolContext::cancel`], which long tools (Bash, Grep, Glob) poll.
//! * Every call goes through [`ToolRegistry::execute`], which validates the input against the
//!   tool's JSON schema first. An unknown tool, an invalid input, or an input whose JSON never
//!   closed (passed as `Value::String(raw)`) becomes an error [`ToolOutput`] and the tool does not
//!   run. Tools never panic: every failure is an output with `is_error` set, worded as Claude
//!   Code words it, because those are the texts the model was trained to act on.
//! * [`ToolRegistry::is_read_only`] and [`ToolRegistry::is_concurrency_safe`] classify a call
//!   before it runs: Read, Glob and Grep always read and may run in parallel; Write and Edit never;
//!   Bash only when [`is_read_only_command`] proves the command only reads. Unknown tools and
//!   invalid inputs are neither.
//! * Bash runs its command in the session's sandbox when [`ToolContext::containment`] is
//!   [`Containment::Confined`] (the CLI's sessions, on a machine that has one): read-only for a
//!   command [`is_read_only_command`] accepts, the workspace writable for one that was approved,
//!   deny-rule paths masked by every name ([`Confinement`]). The classifier decides when to ask;
//!   the sandbox decides what the command can do.
//! * Whether a call runs at all is [`decide()`]: a pure function over what is known of the call
//!   (the read-first check, the PreToolUse hooks' runs, the embedder's callback, the rules'
//!   [`Judgement`], a person's reply) that returns the ruling with its evidence ([`Why`]) or the
//!   next answer it needs. The driver only fetches the answers and carries the ruling out.
//! * Write and Edit refuse an existing file that was not Read in the same session
//!   ([`ToolContext::files_read`]), so the model never overwrites content it has not seen.
//! * Grep and Glob walk like `rg`: hidden files skipped, `.gitignore`/`.ignore`/`.rgignore`
//!   honoured (also outside a git repository), output paths relative to [`ToolContext::cwd`].
//! * The only `unsafe` is Bash's few `libc` calls (the output pipe, `poll`, killing the process
//!   group), each function allowed by name under the workspace's `unsafe_code = "deny"`.
//!
//! The public surface, and nothing else (the tools themselves, the Bash classifier's analysis,
//! schema validation and the tools' limits stay inside; an embedder reaches the tools through
//! the registry):
//!
//! * Tools: [`Tool`], [`ToolContext`] (with [`ReadStamp`], [`PathFilter`], [`ToolEnvPolicy`],
//!   [`CREDENTIAL_VARS`]), [`ToolOutput`], and [`ToolRegistry`], whose
//!   [`builtin`](ToolRegistry::builtin) set is Read, Write, Edit, Glob, Grep and Bash.
//! * Containment: [`Containment`], [`Confinement`], and the sandbox crate as [`sandbox`].
//! * Permissions: [`PermissionContext`] with its [`PermissionMode`], [`PermissionRules`] of
//!   [`Rule`]s, [`Workspace`] and [`Sandboxing`]; its [`Judgement`] ([`Verdict`], [`RuleStep`]);
//!   the [`Decision`] a headless session or an embedder's callback gives; [`PermissionError`] and
//!   [`RuleProblem`]; [`tool_paths`], the paths a call touches as rules see them.
//! * The whole decision: [`decide()`] over [`Checks`] and [`Answers`] ([`ReadFirst`],
//!   [`CallbackAnswer`], [`PromptReply`]), giving [`Next`]: a [`Need`] or a [`Ruling`] with its
//!   [`Why`]; [`read_first_refusal`] for the read-first check it takes as input.
//! * Texts and limits callers assert on or reuse: [`is_read_only_command`],
//!   [`grep_truncated_note`], [`MAX_GREP_RESULT_LINES`], [`MAX_EDIT_BYTES`].

#![warn(missing_docs)]

mod bash;
mod bash_classify;
mod bash_commands;
mod bash_git;
mod bash_jq;
mod bash_options;
mod bash_table;
mod bash_verdict;
mod confine;
mod decide;
mod error;
mod glob;
mod grep;
mod grep_search;
mod input;
mod output;
mod path_filter;
mod paths;
mod permissions;
mod read;
mod registry;
mod shell_lex;
mod special;
mod structured;
mod tool;
mod validate;
mod walk;
mod write_edit;
mod zod_issues;

pub use bash_classify::is_read_only_command;
pub use confine::{Confinement, Containment};
pub use decide::{
    decide, Answers, CallbackAnswer, Checks, HookRulings, Need, Next, PromptReply, ReadFirst, Ruling, Why,
};
pub use grep::{grep_truncated_note, MAX_GREP_RESULT_LINES};
pub use permissions::{
    tool_paths, Decision, Judgement, PermissionContext, PermissionError, PermissionMode, PermissionRules, Rule,
    RuleProblem, RuleStep, Sandboxing, Verdict, Workspace,
};
pub use registry::ToolRegistry;
pub use reloop_sandbox as sandbox;
pub use tool::{PathFilter, ReadStamp, Tool, ToolContext, ToolEnvPolicy, ToolOutput, CREDENTIAL_VARS};
pub use write_edit::{read_first_refusal, MAX_EDIT_BYTES};
