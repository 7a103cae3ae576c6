//! A session's subagents as `show`, `why` and `replay` print them: the tree under the session,
//! each child with the call it answered and how it ended.

use reloop_driver::SessionJournal;
use reloop_journal::Subagent;

use super::reading::short;
use super::{CliError, JournalArg};
use crate::term::outln;

/// The subagents under `id`, depth first, with their depth (1 for `id`'s own).
pub(crate) fn subagents(journal: &SessionJournal, id: &str) -> Result<Vec<(usize, Subagent)>, CliError> {
    let mut out = Vec::new();
    let mut stack: Vec<(usize, Subagent)> = journal.subagents_of(id)?.into_iter().rev().map(|s| (1, s)).collect();
    while let Some((depth, sub)) = stack.pop() {
        // Bounded: a journal edited into a cycle cannot make this loop forever.
        if out.len() >= 10_000 {
            break;
        }
        stack.extend(journal.subagents_of(&sub.id)?.into_iter().rev().map(|s| (depth + 1, s)));
        out.push((depth, sub));
    }
    Ok(out)
}

/// One line per subagent: `toolu_… -> agent TYPE  SESSION  how it ended, turns, cost`.
pub(crate) fn lines(journal: &SessionJournal, id: &str) -> Result<Vec<String>, CliError> {
    let mut lines = Vec::new();
    for (depth, sub) in subagents(journal, id)? {
        let header = journal.header(&sub.id)?;
        let state = reloop_driver::rebuild(&**journal, &sub.id, &header.core_config)?.state;
        let end = state.terminal().map_or("(unfinished)", |t| t.reason().as_str());
        let result = reloop_driver::outputs::result_of(&sub.id, &state, 0);
        // Priced as `why` prices a session: a model with no price makes the cost unknown
        // rather than the $0 the run counted for it.
        let price = super::reading::price(&header);
        let mut spend = reloop_inspect::spend::Spend::default();
        for (model, usage) in &result.model_usage {
            spend.add(model, usage, price(model, usage));
        }
        lines.push(format!(
            "{}{} -> agent {}  {}  {end}, {} turns, {}",
            "  ".repeat(depth),
            sub.tool_use_id,
            sub.agent_type,
            short(&sub.id),
            result.num_turns,
            spend.cost_words()
        ));
    }
    Ok(lines)
}

/// The session's subagents, one line each, under a `subagents:` heading (nothing without any).
pub(crate) fn print_subagents(journal: &JournalArg, id: &str) -> Result<(), CliError> {
    let lines = lines(&super::reading::open(journal)?, id)?;
    if !lines.is_empty() {
        outln!("subagents:");
        for line in lines {
            outln!("{line}");
        }
    }
    Ok(())
}
