//! The outside facts a world leaves to the configuration: each configured hook's run, named
//! as the settings name it (or really run), and each call's permission, decided by
//! [`reloop_tools::decide`] with the configuration's rules exactly as a non-interactive run
//! decides it.

use reloop_core::hook::{HookEventName, HookRun};
use reloop_core::testkit::{hook_run, HookOutcome, Outside, Refusal};
use reloop_core::ToolUse;
use reloop_tools::{decide, Answers, Checks, Need, Next, PromptReply, Ruling};

use crate::{HookRunner, Setup};

/// One case's outside: the setup's hooks and rules, the world's Stop verdicts.
pub(crate) struct Play<'a> {
    pub(crate) setup: &'a Setup,
    pub(crate) hooks: &'a dyn HookRunner,
    /// The Stop hooks' verdicts, one per configured Stop hook per time they run.
    pub(crate) stop: &'a [HookOutcome],
    /// Times the Stop hooks ran so far.
    pub(crate) stop_runs: usize,
    /// The calls that ran (neither hooks nor rules refused them), by `tool_use` id.
    pub(crate) ran: Vec<String>,
}

impl Outside for Play<'_> {
    fn hook_runs(
        &mut self,
        event: HookEventName,
        call: Option<&ToolUse>,
        verdicts: &[HookOutcome],
    ) -> Option<Vec<HookRun>> {
        let real = self.hooks.runs(event, call);
        let runs = match (event, call) {
            (HookEventName::Stop, _) => {
                let names = &self.setup.stop_hooks;
                let first = self.stop_runs * names.len();
                self.stop_runs += 1;
                let verdict = |j: usize| self.stop.get(first + j).copied().unwrap_or(HookOutcome::Pass);
                names.iter().enumerate().map(|(j, name)| hook_run(name, verdict(j))).collect()
            }
            (_, Some(call)) => {
                let tool = self.setup.tool(&call.name)?;
                let names = if event == HookEventName::PreToolUse { &tool.pre_hooks } else { &tool.post_hooks };
                names.iter().zip(verdicts).map(|(name, verdict)| hook_run(name, *verdict)).collect()
            }
            _ => return real,
        };
        real.or(Some(runs))
    }

    fn refusal(&mut self, call: &ToolUse, pre: &[HookRun]) -> Option<Refusal> {
        match self.setup.ruling(call, pre) {
            Ruling::Refuse { message, denied, .. } => Some(Refusal { message, denied }),
            Ruling::Run { .. } => {
                self.ran.push(call.id.clone());
                None
            }
        }
    }
}

impl Setup {
    /// How a run rules on `call`, its PreToolUse hooks having run `pre` (empty: none match):
    /// the hooks, then the rules and the mode, with nobody to ask. The read-first check (a
    /// Write or Edit of a file not Read) is not simulated: it looks at the workspace's files.
    pub fn ruling(&self, call: &ToolUse, pre: &[HookRun]) -> Ruling {
        let checks = Checks {
            read_first: false,
            pre_tool_use: !pre.is_empty(),
            can_use_tool: false,
            rules: self.permissions.is_some(),
            prompt: false,
            hook_rulings: reloop_tools::HookRulings::of(&self.config),
        };
        let mut answers = Answers { pre_tool_use: Some(pre.to_vec()), ..Answers::default() };
        loop {
            match decide(&call.name, &call.input, checks, &answers) {
                Next::Decided(ruling) => return ruling,
                Next::Need(Need::Rules { input }) => match &self.permissions {
                    Some(p) => answers.rules = Some(p.context.judge(&p.registry, &call.name, &input)),
                    None => return Ruling::Run { input, why: reloop_tools::Why::NoRules },
                },
                // Nobody is there to ask: the prompt fails, as in `reloop run`.
                Next::Need(Need::Prompt { .. }) => answers.prompt = Some(PromptReply::Failed),
                // Not among the checks: never asked; answered as absent all the same.
                Next::Need(Need::ReadFirst) => answers.read_first = Some(reloop_tools::ReadFirst::Satisfied),
                Next::Need(Need::PreToolUse) => answers.pre_tool_use = Some(Vec::new()),
                Next::Need(Need::CanUseTool { .. }) => {
                    answers.can_use_tool = Some(reloop_tools::CallbackAnswer::NoOpinion)
                }
            }
        }
    }
}
