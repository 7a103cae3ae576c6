//! Which step of the rules' order decided a verdict: the evidence a decision carries, so `why`
//! and a reader of a denial can name the rule or mode that spoke rather than re-derive it.

use super::Verdict;

/// The step of [`super::PermissionContext::verdict`]'s order that decided (the numbers are the
/// module documentation's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RuleStep {
    /// 1. A bare deny rule or `--disallowed-tools` name removes the tool: refused as a tool that
    ///    does not exist, which is no permission denial.
    Removed,
    /// 1. A deny rule (or `--disallowed-tools` entry) with a specifier matches the call.
    DenyRule,
    /// 1. A deny rule on a Read's path, which the profile's Read refuses as its own check of the
    ///    input (Claude Code 2.1.197): no permission denial.
    PathCheck,
    /// An unknown tool or an input that fails its schema: let through, so the registry refuses
    /// it with the precise error and runs nothing.
    Unjudged,
    /// 2. An ask rule matches the call, in every mode.
    AskRule,
    /// 3. `bypassPermissions` allows.
    Bypass,
    /// 4. A Write or Edit of protected configuration that no allow rule names.
    Protected,
    /// 5. Allow rules cover the whole call.
    AllowRule,
    /// 6. A path outside the workspace roots.
    OutsideWorkspace,
    /// 7. A Bash command reading a path outside the workspace.
    BashReadsOutside,
    /// 8. A call that only reads (a Bash command only while its processes are contained).
    ReadOnly,
    /// 9. `plan` denies what is left.
    PlanMode,
    /// 10. `acceptEdits` allows Write and Edit inside the workspace.
    AcceptEdits,
    /// 11. What is left would be asked (denied in `dontAsk`).
    WouldAsk,
}

/// The rules' verdict on one call, with the step that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// What the rules say.
    pub verdict: Verdict,
    /// Which step said it.
    pub step: RuleStep,
    /// Where the rule that said it came from, at the deny, ask and allow rule steps, when one
    /// rule decided and its origin is known (`None` for a Bash command its parts' rules allowed,
    /// which Claude Code judges part by part).
    pub rule: Option<reloop_core::RuleSource>,
}

impl Judgement {
    pub(super) fn new(verdict: Verdict, step: RuleStep) -> Self {
        Judgement { verdict, step, rule: None }
    }

    /// The same judgement, given by a rule from `source`.
    pub(super) fn by(mut self, source: Option<reloop_core::RuleSource>) -> Self {
        self.rule = source;
        self
    }
}
