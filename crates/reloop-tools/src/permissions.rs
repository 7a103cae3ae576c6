//! Claude Code's permission modes and rules, decided headless, over a workspace that symlinks and
//! `..` cannot escape.
//!
//! A session runs with nobody to ask, so every "ask" of Claude Code becomes a deny whose message is
//! the text the prompt would have shown; the model reads it and adapts. These rules are one step
//! of a call's whole decision ([`crate::decide()`]: read-first, hooks, callback, rules, prompt),
//! which takes their [`Judgement`] (the verdict and the step below that gave it).
//! [`PermissionContext::check`] decides in this order, the first step that applies winning:
//!
//! 1. A matching deny rule, or an entry of `disallowed_tools`, denies. A bare tool name removes the
//!    tool, so the model is told what Claude Code tells it about a tool it cannot see:
//!    `<tool_use_error>Error: No such tool available: {Tool}. {Tool} exists but is not enabled in
//!    this context. Use one of the available tools instead.</tool_use_error>`. A rule with a
//!    specifier denies that call only: `Permission to use {Tool} has been denied.` (a Claude Code
//!    profile names a Bash rule's command: `Permission to use Bash with command {command} has
//!    been denied.`). A Read or Edit
//!    rule with a path also denies a Bash command that names the path (any word, `< file`,
//!    `> file`, a glob, through `cd`) or reads every file below a directory holding it (`rg`,
//!    `grep -r`). An unknown tool or an input that fails its schema is then allowed through,
//!    because [`crate::ToolRegistry::execute`] refuses it with the precise error and runs nothing.
//! 2. A matching ask rule asks (see 10 and 11), in every mode, even over an allow rule or
//!    `bypassPermissions`, as in Claude Code where an ask rule prompts "even in modes where nothing
//!    would otherwise prompt". Its question is worded as the profile says
//!    ([`reloop_core::profile::AskRuleText`]): the question of step 11, or Claude Code's
//!    `Claude requested permissions to use {Tool}, but you haven't granted it yet.`
//! 3. `bypassPermissions` allows.
//! 4. A Write or Edit of configuration that later commands execute (`.git/`, shell rc files,
//!    `.reloop/`, `.claude/`, `.mcp.json`, see `protected`) is asked, in every mode but `plan`
//!    (which denies it below), even in `acceptEdits` and under a bare `Edit` allow rule; only an
//!    allow rule naming the path lets it through.
//! 5. A matching allow rule allows. A rule naming paths (`Read(//etc/hosts)`) lets a call through
//!    even outside the workspace; a bare `Write` or `Read` allows the tool inside the workspace
//!    only, because it names no path (Claude Code lets a bare rule reach anywhere; reloop keeps
//!    the workspace boundary unless a rule names the place). A Bash command is covered when each
//!    simple command matches a rule or only reads inside the workspace, and it writes no
//!    protected file.
//! 6. A path outside the workspace roots is denied: `Claude requested permissions to read from
//!    {path}, but you haven't granted it yet.` (Read, Glob, Grep) or `... to write to {path}, ...`
//!    (Write, Edit), with the canonical path.
//! 7. A Bash command reading a path outside the workspace (operands, path-valued options,
//!    `< file`, the directories it `cd`s to, `~`, globs) is asked (see 11).
//! 8. A read-only call (per [`crate::ToolRegistry::is_read_only`]) is allowed in every mode.
//! 9. `plan` denies the rest: `Permission to use {Tool} has been denied because reloop is in plan
//!    mode.`
//! 10. `acceptEdits` allows Write and Edit (their paths are inside the workspace by now).
//! 11. What is left would be asked. `default` denies with the prompt's text: `Claude requested
//!    permissions to write to {path}, but you haven't granted it yet.` for file edits, `This
//!    command requires approval` for Bash, `Claude requested permissions to use {Tool}, but you
//!    haven't granted it yet.` for other tools. `dontAsk` denies with `Permission to use {Tool}
//!    has been denied because reloop is running in don't ask mode. Approve it or add it to the
//!    allowed tools to continue.`
//!
//! Bash commands are split on shell operators ([`shell`]): an allow rule must cover every simple
//! command (a read-only one needs no rule), a deny or ask rule needs to match only one. These are
//! text matches, as in Claude Code, not a sandbox around the programs a command starts.

mod asking;
mod bash_paths;
mod judgement;
mod protected;
mod rules;
mod shell;
mod workspace;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use reloop_core::RuleSource;
use serde_json::Value;

use crate::bash_classify::{analyze, Analysis};
use crate::confine::{Confinement, Containment};
use crate::registry::ToolRegistry;
use crate::tool::{PathFilter, ToolEnvPolicy};
use crate::validate::validate_input;

use asking::Refusal;
pub use judgement::{Judgement, RuleStep};
pub use rules::{PermissionRules, Rule};
use workspace::EDIT_TOOLS;
pub use workspace::{tool_paths, Workspace};

/// How much the session may do without asking; the values of Claude Code's `--permission-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Reads inside the workspace run; everything else would be asked.
    #[default]
    Default,
    /// File edits inside the workspace run too.
    AcceptEdits,
    /// Only reading: the model is meant to plan, not act.
    Plan,
    /// Everything not denied runs.
    BypassPermissions,
    /// Like `default`, but what would be asked is refused outright.
    DontAsk,
}

impl PermissionMode {
    /// The name Claude Code's CLI and settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }
}

impl FromStr for PermissionMode {
    type Err = PermissionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "default" => Ok(PermissionMode::Default),
            "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "plan" => Ok(PermissionMode::Plan),
            "bypassPermissions" => Ok(PermissionMode::BypassPermissions),
            "dontAsk" => Ok(PermissionMode::DontAsk),
            other => Err(PermissionError::UnknownMode { given: other.to_string() }),
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why permission settings could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionError {
    /// A `--permission-mode` or settings value that is not one of Claude Code's five modes.
    #[error(
        "unknown permission mode `{given}`: expected one of default, acceptEdits, plan, bypassPermissions, dontAsk"
    )]
    UnknownMode {
        /// The text as the user gave it, so the message quotes their typo.
        given: String,
    },
    /// A rule that does not parse; refused at startup rather than silently matching nothing.
    #[error("invalid permission rule `{rule}`: {problem}")]
    InvalidRule {
        /// The rule's text as written.
        rule: String,
        /// What is wrong with it.
        problem: RuleProblem,
    },
    /// A workspace directory that cannot be canonicalized (missing, unreadable): the canonical
    /// path is what confines the file tools, so there is no safe fallback.
    #[error("cannot use `{}` as a workspace directory: {source}", path.display())]
    Workspace {
        /// The directory as given.
        path: PathBuf,
        /// Why canonicalizing it failed.
        #[source]
        source: std::io::Error,
    },
    /// A workspace directory that resolves to a file.
    #[error("cannot use `{}` as a workspace directory: not a directory", path.display())]
    NotADirectory {
        /// The path as given.
        path: PathBuf,
    },
}

/// What is wrong with a rule's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuleProblem {
    /// `(ls)` or an empty rule: nothing says which tool it governs.
    #[error("no tool name before the parenthesis")]
    MissingTool,
    /// A name no tool can have (`Ba sh`), most likely a typo that would never match.
    #[error("a tool name has only letters, digits, `_` and `-`")]
    BadToolName,
    /// `Bash(git diff` or text after the `)`: the specifier's extent is unclear.
    #[error("`(` is not closed by a `)` at the end")]
    Unclosed,
    /// `Bash()`: the bare tool name is how a rule names the whole tool, so empty parentheses
    /// are taken for a rule left unfinished.
    #[error("the parentheses are empty; write the bare tool name for the whole tool")]
    EmptySpecifier,
}

/// What the session does with one tool call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// The call runs.
    Allow,
    /// The call does not run; `message` goes back to the model as an error tool result. Headless
    /// there is nobody to ask, so an ask arrives here too, with the text the prompt would show.
    Deny {
        /// The model's tool result text, worded as Claude Code words it.
        message: String,
    },
}

impl Decision {
    /// The text for the model when denied.
    pub fn message(&self) -> Option<&str> {
        match self {
            Decision::Allow => None,
            Decision::Deny { message } => Some(message),
        }
    }
}

/// What the rules say of one call before anybody is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call runs.
    Allow,
    /// The call does not run; `message` goes back to the model.
    Deny {
        /// The model's tool result text.
        message: String,
    },
    /// The user would be asked; `message` is what the prompt shows, and what a headless
    /// session answers with as a deny.
    Ask {
        /// The prompt's text, also the headless deny's.
        message: String,
    },
}

impl Verdict {
    fn deny(refusal: Refusal) -> Self {
        Verdict::Deny { message: refusal.to_string() }
    }

    /// The decision with nobody to ask: an ask is denied with the prompt's text.
    pub fn headless(self) -> Decision {
        match self {
            Verdict::Allow => Decision::Allow,
            Verdict::Deny { message } | Verdict::Ask { message } => Decision::Deny { message },
        }
    }
}

/// Everything a permission decision depends on.
#[derive(Debug, Clone)]
pub struct PermissionContext {
    /// How much runs without asking; a caller may switch it mid-session (the SDK's `set_permission_mode`).
    pub mode: PermissionMode,
    /// The allow, deny and ask rules, checked before the mode.
    pub rules: PermissionRules,
    /// The directories file tools may reach without a rule naming the path.
    pub workspace: Workspace,
    /// `--disallowed-tools` entries: bare tool names or rules, both denying.
    pub disallowed_tools: Vec<String>,
    /// What the processes tools start may inherit of reloop's environment.
    pub tool_env: ToolEnvPolicy,
    /// The texts of the session's profile (the `--disallowedTools` refusal).
    pub texts: reloop_core::profile::ToolTexts,
    /// Whether and how the processes tools start are contained.
    pub sandbox: Sandboxing,
    /// Whether tool processes share the machine's network (settings `sandbox.network`).
    pub network: bool,
}

/// Whether the processes tools start are contained, as far as the permission layer knows.
#[derive(Debug, Clone, Default)]
pub enum Sandboxing {
    /// Nobody asked the machine: an embedder that contains processes its own way, or a test.
    /// The classifier's read-only verdict runs a command, as it did before the sandbox.
    #[default]
    NotProbed,
    /// The machine's sandbox; every process a tool starts runs in it.
    Available(reloop_sandbox::Sandbox),
    /// The machine has none: every Bash command needs approval.
    Unavailable,
}

/// One call, with what rules look at already worked out.
struct Call<'a> {
    tool: &'a str,
    input: &'a Value,
    /// Canonical paths, for the file tools.
    paths: Vec<PathBuf>,
    /// The parsed command, for Bash.
    command: Option<shell::Command>,
    /// What the command does and reads, for Bash.
    analysis: Option<Analysis>,
}

impl PermissionContext {
    /// A context whose `disallowed_tools` entries are checked to parse, so a typo is reported
    /// rather than silently denying less than meant.
    pub fn new(
        mode: PermissionMode,
        rules: PermissionRules,
        workspace: Workspace,
        disallowed_tools: Vec<String>,
    ) -> Result<Self, PermissionError> {
        for entry in &disallowed_tools {
            Rule::parse(entry)?;
        }
        let texts = reloop_core::profile::RELOOP.tools;
        Ok(PermissionContext {
            mode,
            rules,
            workspace,
            disallowed_tools,
            tool_env: ToolEnvPolicy::default(),
            texts,
            sandbox: Sandboxing::NotProbed,
            network: false,
        })
    }

    /// Whether the processes tools start are contained: then a command the classifier calls
    /// read-only runs without approval (the sandbox makes a wrong call harmless); without
    /// containment every command needs approval, by a person, a rule or `bypassPermissions`.
    pub fn contained(&self) -> bool {
        !matches!(self.sandbox, Sandboxing::Unavailable)
    }

    /// The same context with the machine's containment: `None` means there is none, and every
    /// Bash command then needs approval.
    pub fn with_sandbox(mut self, sandbox: Option<reloop_sandbox::Sandbox>, network: bool) -> Self {
        self.sandbox = sandbox.map_or(Sandboxing::Unavailable, Sandboxing::Available);
        self.network = network;
        self
    }

    /// How the session's tool processes are contained: confined in the sandbox with the
    /// workspace roots, the allow-listed environment (from `vars`, reloop's own) and the deny
    /// rules; unconfined when there is no sandbox (then nothing runs without approval).
    pub fn containment(&self, vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>) -> Containment {
        let Sandboxing::Available(sandbox) = &self.sandbox else { return Containment::Unconfined };
        let roots = self.workspace.roots().to_vec();
        let env_policy = reloop_sandbox::EnvPolicy { extra: self.tool_env.kept().to_vec() };
        let env = env_policy.build(vars, |home| roots.iter().any(|root| home.starts_with(root)));
        let policy = reloop_sandbox::Policy { roots, network: self.network, env };
        let mut confinement =
            Confinement::new(sandbox.clone(), policy, self.deny_filter("Read", false), self.deny_filter("Edit", false));
        if let (Some(read), Some(edit)) = (self.literal_denials("Read"), self.literal_denials("Edit")) {
            confinement = confinement.with_literal_paths(read, edit);
        }
        Containment::Confined(std::sync::Arc::new(confinement))
    }

    /// The paths the deny rules for `tool` name, when each names exactly one (no glob, an
    /// anchored pattern); `None` when one may match many.
    fn literal_denials(&self, tool: &str) -> Option<Vec<PathBuf>> {
        let cwd = self.workspace.cwd();
        self.deny_rules()
            .iter()
            .filter(|r| r.specifier().is_some() && r.covers_tool(tool))
            .map(|r| r.literal_path(cwd))
            .collect()
    }

    /// The same context speaking the texts of a profile.
    pub fn with_texts(mut self, texts: reloop_core::profile::ToolTexts) -> Self {
        self.texts = texts;
        self
    }

    /// The same context with another tool environment policy.
    pub fn with_tool_env(mut self, tool_env: ToolEnvPolicy) -> Self {
        self.tool_env = tool_env;
        self
    }

    /// Deny rules as parsed, with the `--disallowed-tools` entries that parse (the command
    /// line's rules).
    fn deny_rules(&self) -> Vec<Rule> {
        let mut rules = self.rules.deny().to_vec();
        rules.extend(self.disallowed_tools.iter().filter_map(|entry| Rule::parse(entry).ok()).map(from_flag));
        rules
    }

    /// The filter Grep and Glob apply to what they walk: files a Read deny rule names are
    /// neither searched nor listed. `None` when no such rule exists.
    pub fn read_filter(&self) -> Option<PathFilter> {
        self.deny_filter("Read", true)
    }

    /// The paths deny rules with a specifier name for `tool` (`Read` or `Edit`), as a filter;
    /// `None` when no such rule exists. With `canonicalize` each path is made canonical first;
    /// the sandbox's walk gives paths that already are (it follows no link), and saves the
    /// lookups.
    fn deny_filter(&self, tool: &str, canonicalize: bool) -> Option<PathFilter> {
        let rules: Vec<Rule> =
            self.deny_rules().into_iter().filter(|r| r.specifier().is_some() && r.covers_tool(tool)).collect();
        if rules.is_empty() {
            return None;
        }
        let cwd = self.workspace.cwd().to_path_buf();
        Some(PathFilter::new(move |path| {
            if canonicalize {
                let canonical = workspace::canonicalize_lenient(path);
                rules.iter().any(|rule| rule.matches_path(&canonical, &cwd))
            } else {
                rules.iter().any(|rule| rule.matches_path(path, &cwd))
            }
        }))
    }

    /// Whether a Bash command reaches a path one of the Read or Edit `rules` names: by naming it
    /// (any word, any glob, any directory it may run in) or by reading every file below a
    /// directory that holds it (`grep -r`, `rg`).
    fn bash_reaches(&self, call: &Call<'_>, rules: &[Rule]) -> bool {
        let (Some(command), Some(analysis)) = (&call.command, &call.analysis) else { return false };
        let cwd = self.workspace.cwd();
        let rules: Vec<&Rule> = rules
            .iter()
            .filter(|r| r.specifier().is_some() && (r.covers_tool("Read") || r.covers_tool("Edit")))
            .collect();
        if rules.is_empty() {
            return false;
        }
        // A path that cannot be resolved (`~user`, a glob of too many matches) may be the file.
        let named = bash_paths::named(command, analysis, cwd);
        if named.iter().any(|path| path.as_ref().is_none_or(|path| rules.iter().any(|r| r.matches_path(path, cwd)))) {
            return true;
        }
        bash_paths::reads(analysis, cwd).into_iter().any(|(path, walks)| match path {
            Some(path) => rules.iter().any(|r| r.matches_path(&path, cwd) || (walks && r.may_match_under(&path, cwd))),
            None => true,
        })
    }

    /// Whether every path a read-only Bash command reads lies inside the workspace.
    fn bash_reads_inside(&self, call: &Call<'_>) -> bool {
        let Some(analysis) = &call.analysis else { return true };
        // An opaque line is never allowed for reading; what it reads only feeds deny rules, so
        // it keeps the answer it had when it was not analysed (plan mode's own text).
        if analysis.verdict == Err(crate::bash_classify::NotReadOnly::Opaque) {
            return true;
        }
        bash_paths::reads(analysis, self.workspace.cwd())
            .into_iter()
            .all(|(path, _)| path.is_some_and(|p| self.workspace.contains(&p)))
    }

    /// Whether a Bash command that is not read-only names a protected file.
    fn bash_names_protected(&self, call: &Call<'_>) -> bool {
        let (Some(command), Some(analysis)) = (&call.command, &call.analysis) else { return false };
        !analysis.is_read_only()
            && bash_paths::named(command, analysis, self.workspace.cwd())
                .iter()
                .any(|p| p.as_ref().is_none_or(|p| protected::is_protected(p)))
    }

    /// Decides whether `tool` may run with `input` (see the module documentation for the order),
    /// headless: what would be asked is denied with the text the prompt would show.
    pub fn check(&self, registry: &ToolRegistry, tool: &str, input: &Value) -> Decision {
        self.verdict(registry, tool, input).headless()
    }

    /// Like [`PermissionContext::check`], but tells an ask apart from a deny, for a session
    /// that has somebody to ask (the Agent SDK's `can_use_tool`). `dontAsk` never asks.
    pub fn verdict(&self, registry: &ToolRegistry, tool: &str, input: &Value) -> Verdict {
        self.judge(registry, tool, input).verdict
    }

    /// [`PermissionContext::verdict`] with the step of the order that gave it. Not pure: paths
    /// are resolved on disk (symlinks, `..`), so a decision takes it as an answer
    /// ([`crate::decide()`]).
    pub fn judge(&self, registry: &ToolRegistry, tool: &str, input: &Value) -> Judgement {
        let cwd = self.workspace.cwd();
        let text = (tool == "Bash").then(|| input.get("command").and_then(Value::as_str)).flatten();
        let call = Call {
            tool,
            input,
            paths: tool_paths(tool, input, cwd),
            command: text.map(shell::parse),
            analysis: text.map(analyze),
        };

        if let Some((refusal, source)) = self.denied(&call) {
            // A tool the flags removed is not there to deny: the evidence says so.
            let step = match &refusal {
                _ if self.removes(tool) => RuleStep::Removed,
                Refusal::ReadPath { denial: false, .. } => RuleStep::PathCheck,
                _ => RuleStep::DenyRule,
            };
            return Judgement::new(Verdict::Deny { message: refusal.to_string() }, step).by(source);
        }
        let valid =
            registry.get_with_schema(tool).is_some_and(|(_, schema)| validate_input(tool, schema, input).is_ok());
        if !valid {
            return Judgement::new(Verdict::Allow, RuleStep::Unjudged);
        }
        let asks = self.rules.ask();
        if let Some(rule) =
            asks.iter().find(|rule| self.matches_any(rule, &call)).or_else(|| self.reaching(&call, asks))
        {
            return Judgement::new(self.asking_with(self.ask_by_rule(&call)), RuleStep::AskRule).by(rule.source());
        }
        if self.mode == PermissionMode::BypassPermissions {
            return Judgement::new(Verdict::Allow, RuleStep::Bypass);
        }
        if EDIT_TOOLS.contains(&tool) && self.mode != PermissionMode::Plan {
            if let Some(path) = call.paths.iter().find(|p| protected::is_protected(p) && !self.names_allowed(tool, p)) {
                let verdict = match self.mode {
                    PermissionMode::DontAsk => Verdict::deny(self.dont_ask(tool)),
                    _ => Verdict::Ask { message: Refusal::WriteTo { path: path.clone() }.to_string() },
                };
                return Judgement::new(verdict, RuleStep::Protected);
            }
        }
        if self.allowed_by_rule(&call) {
            return Judgement::new(Verdict::Allow, RuleStep::AllowRule).by(self.allowing_rule(&call));
        }
        if let Some(outside) = call.paths.iter().find(|p| !self.workspace.contains(p)) {
            let path = outside.clone();
            let refusal =
                if EDIT_TOOLS.contains(&tool) { Refusal::WriteTo { path } } else { Refusal::ReadFrom { path } };
            return Judgement::new(self.asking_with(refusal), RuleStep::OutsideWorkspace);
        }
        if tool == "Bash" && !self.bash_reads_inside(&call) {
            return Judgement::new(self.asking(&call), RuleStep::BashReadsOutside);
        }
        // An MCP tool asks even when its server says it only reads, as in Claude Code: the hint
        // comes from the server, not from reloop.
        // Bash only with containment: the classifier's word alone never runs a command.
        if registry.is_read_only(tool, input) && !tool.starts_with("mcp__") && (self.contained() || tool != "Bash") {
            return Judgement::new(Verdict::Allow, RuleStep::ReadOnly);
        }
        match self.mode {
            PermissionMode::Plan => {
                Judgement::new(Verdict::deny(Refusal::PlanMode { tool: tool.to_string() }), RuleStep::PlanMode)
            }
            PermissionMode::AcceptEdits if EDIT_TOOLS.contains(&tool) => {
                Judgement::new(Verdict::Allow, RuleStep::AcceptEdits)
            }
            _ => Judgement::new(self.asking(&call), RuleStep::WouldAsk),
        }
    }

    /// Whether a bare deny rule or `--disallowed-tools` name removes `tool` altogether: its
    /// calls are refused as a tool that does not exist, which Claude Code does not count as a
    /// permission denial.
    pub fn removes(&self, tool: &str) -> bool {
        self.deny_rules().iter().any(|r| r.specifier().is_none() && r.covers_tool(tool))
    }

    /// Step 1: deny rules and `--disallowed-tools`, with the origin of the rule that denied. A
    /// bare name wins the wording, because then the tool is gone altogether.
    fn denied(&self, call: &Call<'_>) -> Option<(Refusal, Option<RuleSource>)> {
        let tool = call.tool.to_string();
        let mut entries = Vec::new();
        for entry in &self.disallowed_tools {
            match Rule::parse(entry) {
                Ok(rule) => entries.push(from_flag(rule)),
                // Built without `new`, a malformed entry fails closed on the tool it names.
                Err(_) if entry.split('(').next().map(str::trim) == Some(call.tool) => {
                    return Some((Refusal::DeniedByRule { tool }, Some(RuleSource::CliArg)));
                }
                Err(_) => {}
            }
        }
        let rules: Vec<&Rule> = self.rules.deny().iter().chain(&entries).collect();
        if let Some(rule) = rules.iter().find(|r| r.specifier().is_none() && r.covers_tool(call.tool)) {
            return Some((Refusal::NotEnabled { text: self.texts.disallowed(&tool) }, rule.source()));
        }
        if let Some(rule) = rules.iter().find(|r| self.matches_any(r, call)) {
            let source = rule.source();
            // A Read's path rule: the version's Read refuses the path itself.
            if let Some(worded) = self.texts.read_path_denied.filter(|_| call.tool == "Read") {
                return Some((Refusal::ReadPath { text: worded.text, denial: worded.denial }, source));
            }
            // A Bash rule's refusal names the command where the version words it so.
            let command = call.input.get("command").and_then(Value::as_str).filter(|_| call.tool == "Bash");
            if let Some(text) = command.and_then(|c| self.texts.bash_rule_denied(c)) {
                return Some((Refusal::Worded { text }, source));
            }
            return Some((Refusal::DeniedByRule { tool }, source));
        }
        let deny = self.deny_rules();
        let source = self.reaching(call, &deny)?.source();
        Some((Refusal::DeniedByRule { tool }, source))
    }

    /// The first of `rules` a Bash command reaches by a path ([`PermissionContext::bash_reaches`]).
    fn reaching<'r>(&self, call: &Call<'_>, rules: &'r [Rule]) -> Option<&'r Rule> {
        if !self.bash_reaches(call, rules) {
            return None;
        }
        rules.iter().find(|rule| self.bash_reaches(call, std::slice::from_ref(*rule)))
    }

    /// Whether a deny or ask rule reaches any part of the call: one simple command of a Bash
    /// line, one path.
    fn matches_any(&self, rule: &Rule, call: &Call<'_>) -> bool {
        if !rule.covers_tool(call.tool) {
            return false;
        }
        if rule.specifier().is_none() {
            return true;
        }
        let cwd = self.workspace.cwd();
        match call.tool {
            "Bash" => call.command.as_ref().is_some_and(|cmd| {
                cmd.segments
                    .iter()
                    .any(|words| rule.matches_command(words) || rule.matches_command(shell::skip_assignments(words)))
            }),
            "WebFetch" => url(call.input).is_some_and(|u| rule.matches_url(u)),
            _ => call.paths.iter().any(|p| rule.matches_path(p, cwd)),
        }
    }

    /// Step 4: whether allow rules cover the whole call.
    fn allowed_by_rule(&self, call: &Call<'_>) -> bool {
        let rules: Vec<&Rule> = self.rules.allow().iter().filter(|r| r.allows_tool(call.tool)).collect();
        if rules.is_empty() {
            return false;
        }
        let bare = rules.iter().any(|r| r.specifier().is_none());
        let cwd = self.workspace.cwd();
        if !call.paths.is_empty() {
            return call.paths.iter().all(|path| {
                rules.iter().any(|r| match r.specifier() {
                    None => self.workspace.contains(path),
                    Some(_) => r.matches_path(path, cwd),
                })
            });
        }
        if bare {
            return true;
        }
        match call.tool {
            "Bash" => call.command.as_ref().is_some_and(|cmd| {
                let mut leans_on_reading = false;
                let covered = !cmd.opaque
                    && !cmd.segments.is_empty()
                    && cmd.segments.iter().zip(&cmd.globbed).all(|(words, globbed)| {
                        rules.iter().any(|r| r.matches_command(words))
                            || (self.contained() && {
                                leans_on_reading = true;
                                crate::is_read_only_command(&shell::quote_segment(words, globbed))
                            })
                    });
                // A segment let through for only reading must read inside the workspace; a rule
                // naming a command does not extend to writing protected configuration.
                covered && (!leans_on_reading || self.bash_reads_inside(call)) && !self.bash_names_protected(call)
            }),
            "WebFetch" => url(call.input).is_some_and(|u| rules.iter().any(|r| r.matches_url(u))),
            _ => false,
        }
    }

    /// The origin of the allow rule that lets the whole call through: the first bare rule for
    /// the tool, or the first rule naming each of its paths when one rule names them all.
    /// `None` for a Bash command whose parts rules cover one by one, which Claude Code judges
    /// part by part and names no rule for (`settings_sources/user`).
    fn allowing_rule(&self, call: &Call<'_>) -> Option<RuleSource> {
        let rules: Vec<&Rule> = self.rules.allow().iter().filter(|r| r.allows_tool(call.tool)).collect();
        let cwd = self.workspace.cwd();
        let deciding = rules.iter().find(|r| match r.specifier() {
            None => call.paths.iter().all(|path| self.workspace.contains(path)),
            Some(_) if call.paths.is_empty() => {
                call.tool == "WebFetch" && url(call.input).is_some_and(|u| r.matches_url(u))
            }
            Some(_) => call.paths.iter().all(|path| r.matches_path(path, cwd)),
        });
        deciding.and_then(|r| r.source())
    }

    /// Whether an allow rule with a specifier names `path` for `tool` (a bare rule does not).
    fn names_allowed(&self, tool: &str, path: &std::path::Path) -> bool {
        let cwd = self.workspace.cwd();
        self.rules.allow().iter().any(|r| r.covers_tool(tool) && r.specifier().is_some() && r.matches_path(path, cwd))
    }
}

/// A `--disallowed-tools` entry's rule: the command line's.
fn from_flag(rule: Rule) -> Rule {
    rule.from_source(RuleSource::CliArg)
}

fn url(input: &Value) -> Option<&str> {
    input.get("url").and_then(Value::as_str)
}
