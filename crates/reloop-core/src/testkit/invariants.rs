//! The invariants every simulated run must keep.

use super::Trace;
use crate::effect::{Command, Effect, Notice};
use crate::event::Event;
use crate::message::{ContentBlock, Role};
use crate::reason::{ContinueReason, Reason, TerminalReason};
use crate::state::State;
use crate::transition::transition;

/// An invariant that a run broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

fn is_call_model(effect: &Effect) -> bool {
    matches!(effect, Effect::Command(Command::CallModel(_)))
}

impl Trace {
    /// How the run ended.
    pub fn terminal(&self) -> Option<TerminalReason> {
        self.final_state.terminal().map(|t| t.reason())
    }

    /// Model requests made (summary requests not counted).
    pub fn model_requests(&self) -> usize {
        self.steps.iter().flat_map(|s| &s.effects).filter(|e| is_call_model(e)).count()
    }

    /// How often the loop continued for `reason`.
    pub fn continues(&self, reason: ContinueReason) -> usize {
        self.steps.iter().filter(|s| s.reason.as_ref().and_then(Reason::continue_reason) == Some(reason)).count()
    }

    /// Checks every invariant of the loop; the first one broken is returned.
    pub fn check(&self) -> Result<(), Violation> {
        let fail = |msg: String| Err(Violation(msg));
        if self.gave_up {
            return fail(format!("the loop did not stop within {} steps", self.steps.len()));
        }
        if !self.final_state.is_done() {
            return fail(format!("the loop ended in phase {} without a terminal state", self.final_state.phase()));
        }
        if let Some(i) = self.steps.iter().position(|s| s.phase == "done") {
            if self.steps[i + 1..].iter().flat_map(|s| &s.effects).any(is_call_model) {
                return fail("a model request followed the terminal state".into());
            }
        }
        if let Some(max) = self.config.max_turns {
            let next_turns = self.continues(ContinueReason::NextTurn);
            if next_turns >= max as usize {
                return fail(format!("{next_turns} next_turn continues with max_turns {max}"));
            }
            // Retries, recoveries and budget continuations repeat a turn; no request may belong to
            // a turn beyond the limit.
            let beyond = self.steps.iter().flat_map(|s| &s.effects).find_map(|e| match e {
                Effect::Command(Command::CallModel(c)) if c.turn > max => Some(c.turn),
                _ => None,
            });
            if let Some(turn) = beyond {
                return fail(format!("a model request for turn {turn} with max_turns {max}"));
            }
        }
        let turn = self.final_state.context().turn_count() as usize;
        if turn != 1 + self.continues(ContinueReason::NextTurn) {
            return fail(format!(
                "turn_count {turn} but {} next_turn continues",
                self.continues(ContinueReason::NextTurn)
            ));
        }
        self.check_ignored()?;
        self.check_guards()?;
        self.check_queue()?;
        self.check_tool_pairing()?;
        self.check_replay()
    }

    /// Every queued message is carried by exactly one request, or is still queued when the loop
    /// ends (reported as not consumed); none is lost or carried twice.
    fn check_queue(&self) -> Result<(), Violation> {
        let queued: Vec<&String> = self
            .steps
            .iter()
            .filter_map(|s| match &s.event {
                Event::QueuedInput { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        let consumed: Vec<&String> = self
            .steps
            .iter()
            .flat_map(|s| &s.effects)
            .flat_map(|e| match e {
                Effect::Notice(Notice::InputConsumed { ids }) => ids.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        let ctx = self.final_state.context();
        for id in &queued {
            let carried = consumed.iter().filter(|c| c == &id).count();
            let waiting = ctx.query.queued.iter().filter(|q| &&q.id == id).count();
            // A message queued after the end is refused by the core: neither carried nor kept.
            let after_end =
                self.steps.iter().position(|s| matches!(&s.event, Event::QueuedInput { id: i, .. } if i == *id))
                    > self.steps.iter().position(|s| s.phase == "done");
            if !after_end && carried + waiting != 1 {
                return Err(Violation(format!("queued message {id} carried {carried} times, waiting {waiting}")));
            }
        }
        Ok(())
    }

    /// An ignored event changes nothing: no effect, no reason, the same digest as before.
    fn check_ignored(&self) -> Result<(), Violation> {
        let mut before = State::new(self.config.clone()).digest();
        for (i, step) in self.steps.iter().enumerate() {
            if step.ignored.is_some() && (!step.effects.is_empty() || step.reason.is_some() || step.digest != before) {
                return Err(Violation(format!("ignored step {i} ({}) changed something", step.event.kind())));
            }
            before = step.digest;
        }
        Ok(())
    }

    /// The guards of each continue reason hold.
    fn check_guards(&self) -> Result<(), Violation> {
        let mut recoveries = 0u32;
        let mut malformed_this_turn = 0u32;
        let mut escalations_in_a_row = 0u32;
        let mut stop_blocks = 0u32;
        let mut turn = 1;
        for step in &self.steps {
            if step.turn != turn {
                turn = step.turn;
                malformed_this_turn = 0;
            }
            let continued = step.reason.as_ref().and_then(Reason::continue_reason);
            match continued {
                Some(ContinueReason::MaxOutputTokensRecovery) => recoveries += 1,
                Some(ContinueReason::NextTurn)
                | Some(ContinueReason::StopHookBlocking)
                | Some(ContinueReason::TokenBudgetContinuation) => recoveries = 0,
                _ => {}
            }
            if let Some(ContinueReason::MalformedToolCallRetry) = continued {
                malformed_this_turn += 1;
            }
            match (&step.reason, continued) {
                (_, Some(ContinueReason::MaxOutputTokensEscalate)) => escalations_in_a_row += 1,
                (Some(_), _) => escalations_in_a_row = 0,
                (None, _) => {}
            }
            if matches!(step.event, Event::HookDone { hook_event: crate::hook::HookEventName::Stop, .. }) {
                match continued {
                    Some(ContinueReason::StopHookBlocking) => stop_blocks += 1,
                    _ => stop_blocks = 0,
                }
            }
            if stop_blocks > self.config.stop_hook_block_cap {
                return Err(Violation(format!("{stop_blocks} consecutive stop-hook blocks")));
            }
            if recoveries > crate::config::MAX_OUTPUT_TOKENS_RECOVERY_LIMIT {
                return Err(Violation(format!("{recoveries} consecutive output-token recoveries")));
            }
            // The profile says how often (reloop's own rules once, Claude Code 2.1.332's twice).
            let malformed_limit = self.config.profile.profile().malformed.retries;
            if malformed_this_turn > malformed_limit {
                return Err(Violation(format!(
                    "the malformed-call retry ran {malformed_this_turn} times in one turn (the profile allows {malformed_limit})"
                )));
            }
            if escalations_in_a_row > 1 {
                return Err(Violation("escalated the same request twice".into()));
            }
        }
        Ok(())
    }

    /// Every `tool_use` is answered by exactly one `tool_result` in the next user message, and
    /// every `tool_result` answers a `tool_use` of the message before it (none is orphaned,
    /// also after a compaction).
    fn check_tool_pairing(&self) -> Result<(), Violation> {
        let messages = self.final_state.messages().messages();
        for (i, message) in messages.iter().enumerate() {
            for block in &message.content {
                if let ContentBlock::ToolResult(r) = block {
                    let asked = i > 0 && messages[i - 1].tool_uses().any(|t| t.id == r.tool_use_id);
                    if !asked {
                        return Err(Violation(format!(
                            "tool_result {} in message {i} answers no tool_use",
                            r.tool_use_id
                        )));
                    }
                }
            }
        }
        for (i, message) in messages.iter().enumerate() {
            if message.role != Role::Assistant {
                continue;
            }
            let Some(next) = messages.get(i + 1).filter(|m| m.role == Role::User) else {
                // Claude Code leaves the calls of the response that reached the budget unanswered
                // (flag 11); a later prompt answers them first.
                let budget_stop = i + 1 == messages.len()
                    && matches!(self.final_state.terminal(), Some(t) if matches!(t.stop, crate::reason::Stop::MaxBudgetUsd { .. }));
                if message.tool_uses().next().is_some() && !budget_stop {
                    return Err(Violation(format!("assistant message {i} has tool_use blocks and no answer")));
                }
                continue;
            };
            for call in message.tool_uses() {
                let answers = next
                    .content
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::ToolResult(r) if r.tool_use_id == call.id))
                    .count();
                if answers != 1 {
                    return Err(Violation(format!("tool_use {} has {answers} tool_result blocks", call.id)));
                }
            }
        }
        Ok(())
    }

    /// Feeding the same events again gives the same effects, reasons and digests.
    fn check_replay(&self) -> Result<(), Violation> {
        let mut state = State::new(self.config.clone());
        for (i, recorded) in self.steps.iter().enumerate() {
            let step = transition(state, recorded.event.clone());
            if step.effects != recorded.effects
                || step.reason != recorded.reason
                || step.ignored != recorded.ignored
                || step.state.digest() != recorded.digest
            {
                return Err(Violation(format!("replay diverged at step {i} ({})", recorded.event.kind())));
            }
            state = step.state;
        }
        Ok(())
    }
}
