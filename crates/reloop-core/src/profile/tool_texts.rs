//! The texts of refused and answered tool calls, per version: what the model is told when a
//! call does not run (a removed tool, a rule, a mode, a hook) and how a few tools word their
//! results.

/// Texts of refused tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolTexts {
    /// A call of a tool removed by `--disallowedTools`; `{tool}` stands for its name.
    pub disallowed: &'static str,
    /// Write and Edit refuse a file the session has not read (2.1.197); 2.1.332 has no such
    /// check.
    pub edit_requires_read: bool,
    /// That refusal comes before the hooks and the permission check, and is no permission
    /// denial (Claude Code 2.1.197); reloop's own rules checked it when the tool ran.
    pub read_check_first: bool,
    /// The text for a Bash command that would create, change or remove a file inside the
    /// working directories (default mode): `{command}`, `{path}` and `{dirs}` are filled in;
    /// `None`: the generic `This command requires approval`.
    pub bash_write: Option<BashWriteTexts>,
    /// The answer to a second Read of the same part of an unchanged file (2.1.197); `None`:
    /// the content again.
    pub unchanged_read: Option<&'static str>,
    /// The denial of a call in `dontAsk` mode; `{tool}` stands for the tool's name. `None`:
    /// reloop's own words.
    pub dont_ask: Option<&'static str>,
    /// An image in an MCP tool's result is also saved beside the session's transcript, and a
    /// text block `[Image: source: PATH]` follows it (2.1.332, `sdk_wire/mcp_result`).
    pub mcp_image_saved: bool,
    /// The words a Write's and an Edit's result end with when the model knows the file as
    /// written ([`WRITTEN_NOTE_CLAUDE_CODE`]), and an Edit with `replace_all` says so; `None`:
    /// reloop's own texts. Applied under [`crate::Flag::WrittenFileTexts`].
    pub written_note: Option<&'static str>,
    /// The refusal of a Bash call a Bash deny rule matches; `{command}` stands for the command
    /// ([`BASH_RULE_DENIED_CLAUDE_CODE`]). `None`: `Permission to use Bash has been denied.`
    pub bash_rule_denied: Option<&'static str>,
    /// The answer to a call the user's interrupt stopped while it ran
    /// ([`REJECTED_CLAUDE_CODE`], 2.1.332 adding [`STOPPED_WHILE_RUNNING`]); `None`: `Interrupted
    /// by user`. Applied under [`crate::Flag::InterruptedCallRejected`].
    pub interrupted: Option<&'static str>,
    /// The refusal of a PreToolUse hook's deny that gave a reason, `{tool}` and `{reason}` filled
    /// in ([`HOOK_DENIED_2_1_332`]); `None`: the reason alone. Under
    /// [`crate::Flag::ClaudeCodeHookRulings`].
    pub hook_denied: Option<&'static str>,
    /// A PreToolUse hook's ask with a reason, when nobody can be asked, refuses the call with that
    /// reason (Claude Code, both versions, `tool_results/hook_rulings`); off: the ask decides
    /// nothing. Under [`crate::Flag::ClaudeCodeHookRulings`].
    pub hook_ask_refuses: bool,
    /// A failed Bash command's result opens with `Exit code N`, its output after it (Claude Code,
    /// both versions); off: the output, then the code. Under [`crate::Flag::ExitCodeFirst`].
    pub exit_code_first: bool,
    /// The refusal of a Read whose path a deny rule matches, which the version's Read gives as
    /// its own check of the input ([`READ_PATH_DENIED_CLAUDE_CODE`]); `None`: as any deny rule's.
    pub read_path_denied: Option<ReadPathDenied>,
    /// How an `Agent` call's answer hands the subagent's report back. Applied under
    /// [`crate::Flag::ClaudeCodeHandBack`].
    pub hand_back: super::HandBack,
    /// How the refusal of a call an ask rule matched is worded when nobody can be asked.
    pub ask_rule: AskRuleText,
}

/// The words of a call an ask rule matched, refused because nobody can be asked
/// (`rule_sources/ask`, both versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskRuleText {
    /// The question the call would raise without the rule (a Bash command making a file names
    /// the file): reloop's own, which tells the model what was at stake.
    AsAsked,
    /// `Claude requested permissions to use {tool}, but you haven't granted it yet.`, whatever
    /// the tool (2.1.197).
    UseTool,
    /// That text, but a file tool (Write, Edit, Read, ...) asks for its path as it would
    /// without the rule (2.1.332: `... to write to PATH, ...` for the recorded Write).
    UseToolButFiles,
}

/// How a version refuses a Read whose path a deny rule matches (`tool_results/deny_rules`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadPathDenied {
    /// What the model is told.
    pub text: &'static str,
    /// It counts as a permission denial (2.1.332; 2.1.197's input check does not).
    pub denial: bool,
}

/// Claude Code's refusal of a Read whose path a deny rule matches, both versions.
pub const READ_PATH_DENIED_CLAUDE_CODE: &str =
    "<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>";

/// 2.1.332's answer to a call a PreToolUse hook denied with a reason (recorded,
/// `tool_results/hook_rulings`; 2.1.197 gives the reason alone).
pub const HOOK_DENIED_2_1_332: &str = "PreToolUse:{tool} hook error: {reason}";

/// Claude Code's answer to a tool call the user would not let proceed, which both versions also
/// give a call an interrupt stopped while it ran (recorded, `interrupt/during_tool`).
pub const REJECTED_CLAUDE_CODE: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// What Claude Code tells the caller such a call did (its `tool_use_result`, and the session
/// file's `toolUseResult`), both versions (`interrupt/during_tool`).
pub const USER_REJECTED_RESULT: &str = "User rejected tool use";

/// 2.1.332's word for why such a call did not run: its `tool_result_meta` entry's
/// `non_execution_kind`, and the session file's `toolDenialKind`.
pub const USER_REJECTED_KIND: &str = "user-rejected";

/// 2.1.332's answer to a call an interrupt stopped while it ran: the rejection, corrected
/// (recorded, `interrupt/during_tool`).
pub const STOPPED_WHILE_RUNNING: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed. Correction to the text above: this call was stopped while running, not refused before it ran. It may have run in part or in full, and its changes may have been written. No permission prompt was involved. Work it started elsewhere (a remote command, a background process) may still be running, so check before starting the same work again. The instruction to stop and wait still stands.";

/// Claude Code's refusal of a Bash call a deny rule matches (2.1.197 and 2.1.332 alike,
/// recorded `tool_results/deny_rules`).
pub const BASH_RULE_DENIED_CLAUDE_CODE: &str = "Permission to use Bash with command {command} has been denied.";

/// Claude Code's `dontAsk` denial (2.1.197 and 2.1.332 alike, claude-code-facts.md §5.4).
pub const DONT_ASK_CLAUDE_CODE: &str = "Permission to use {tool} has been denied because Claude Code is running in don't ask mode. IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction in reasonable ways that do not attempt to bypass the intent behind this denial. If you believe this capability is essential to complete the user's request, STOP and explain to the user what you were trying to do and why you need this permission. Let the user decide how to proceed.";

/// The end of a Write's and an Edit's result in 2.1.197 and 2.1.332 alike (recorded,
/// `tool_results/success`; both bundles' `mapToolResultToToolResultBlockParam`), left off an
/// Edit of a file the session never read (2.1.332's `contentNotInModelContext`).
pub const WRITTEN_NOTE_CLAUDE_CODE: &str = " (file state is current in your context — no need to Read it back)";

/// 2.1.197's answer to a Read of a file unchanged since the last Read of it.
pub const WASTED_READ_2_1_197: &str =
    "Wasted call — file unchanged since your last Read. Refer to that earlier tool_result instead.";

/// Claude Code's texts for a shell command that writes inside the working directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BashWriteTexts {
    /// For commands that create or change files (`touch`, `mkdir`, `cp`, `mv`, ...).
    pub create: &'static str,
    /// For commands that remove files (`rm`, `rmdir`).
    pub remove: &'static str,
}

impl BashWriteTexts {
    /// The text for `command` writing `path`, the working directories being `dirs`.
    pub fn render(&self, command: &str, removes: bool, path: &str, dirs: &str) -> String {
        let template = if removes { self.remove } else { self.create };
        template.replace("{command}", command).replace("{path}", path).replace("{dirs}", dirs)
    }
}

pub(super) const BASH_WRITE_2_1_197: BashWriteTexts = BashWriteTexts {
    create: "{command} in '{path}' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: {dirs}.",
    remove: "{command} in '{path}' was blocked. For security, Claude Code may only remove files from the allowed working directories for this session: {dirs}.",
};

pub(super) const BASH_WRITE_2_1_332: BashWriteTexts = BashWriteTexts {
    create: "{command} in '{path}' needs approval. The path is inside the working directories for this session ({dirs}), and Claude Code asks before a shell command creates, changes or removes files there.",
    remove: "{command} in '{path}' needs approval. The path is inside the working directories for this session ({dirs}), and Claude Code asks before a shell command creates, changes or removes files there.",
};

impl ToolTexts {
    /// The disallowed text for `tool`.
    pub fn disallowed(&self, tool: &str) -> String {
        self.disallowed.replace("{tool}", tool)
    }

    /// The refusal of Bash `command` by a Bash deny rule, where the version words its own.
    pub fn bash_rule_denied(&self, command: &str) -> Option<String> {
        self.bash_rule_denied.map(|text| text.replace("{command}", command))
    }
}

pub(super) const DISALLOWED_2_1_197: &str = "<tool_use_error>Error: No such tool available: {tool}. {tool} exists but is not enabled in this context. Use one of the available tools instead.</tool_use_error>";
pub(super) const DISALLOWED_2_1_332: &str =
    "<tool_use_error>Error: No such tool available: {tool}. {tool} is disabled for this session, in subagents as well as here.</tool_use_error>";
