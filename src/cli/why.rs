//! `reloop why SESSION`: why each turn of a session continued or stopped, in the loop's words.

use reloop_inspect::explain::{why_step, WhyFilter};
use reloop_journal::StepRecord;

use super::reading::open;
use super::CliError;
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg, SessionArg};
use crate::term::{out, outln};

#[derive(clap::Args, Debug)]
pub struct WhyArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// Only the decisions taken in this turn (of every prompt, unless --prompt says which).
    #[arg(long)]
    pub turn: Option<u32>,
    /// Only the decisions of this prompt (1 is the session's first).
    #[arg(long, value_name = "P")]
    pub prompt: Option<u32>,
    /// Only decisions with this reason or kind: next_turn, completed, retry, fallback, hook...
    #[arg(long, value_name = "NAME")]
    pub reason: Option<String>,
    /// Write the path of states and reasons as a Graphviz graph.
    #[arg(long, conflicts_with = "json")]
    pub dot: bool,
    /// Also list every event a state did not expect, with why it was ignored.
    #[arg(long)]
    pub steps: bool,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

/// A decision as `why --json` prints it: the line, and the tokens and cost of its turn.
#[derive(serde::Serialize)]
struct WithUsage<'a> {
    #[serde(flatten)]
    line: &'a reloop_inspect::explain::WhyLine,
    turn_usage: Option<&'a reloop_inspect::spend::Spend>,
}

pub fn run(args: WhyArgs) -> Result<Exit, CliError> {
    let (journal, selector, json, dot) = (&args.journal, args.session.session.as_str(), args.json.json, args.dot);
    let filter = WhyFilter { turn: args.turn, prompt: args.prompt, reason: args.reason.clone(), ignored: args.steps };
    let opened = open(journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    if dot {
        // Only the steps of the turn asked for are kept.
        let turn = filter.turn;
        let mut steps: Vec<StepRecord> = Vec::new();
        opened.visit_steps(&header.id, &mut |s| {
            if turn.is_none_or(|t| s.turn_before == t || s.turn_after == t) {
                steps.push(s);
            }
            Ok(true)
        })?;
        out!("{}", reloop_inspect::explain::dot(&header, &steps));
        return Ok(Exit::Success);
    }
    // Two walks over the journal, each holding one step: the facts of the whole session, then
    // the decisions, which read them.
    let price = super::reading::price(&header);
    // `why` names calls but shows no input or output: the facts need not hold every output.
    let mut gatherer = reloop_inspect::timeline::FactsGatherer::new(&header, &price).without_payloads();
    let steps = opened.visit_steps(&header.id, &mut |s| {
        gatherer.step(&s);
        Ok(true)
    })?;
    let facts = gatherer.finish();
    // The decisions are written as the second walk finds them: a long session's lines are
    // never held (they were most of `why`'s memory).
    let mut written = 0usize;
    let mut array = crate::term::PrettyArray::default();
    let mut grouping = reloop_inspect::explain::Grouping::default();
    let mut i = 0;
    if !json {
        super::reading::warn_unpriced(&facts.totals().unpriced_models);
    }
    // A session still being written may have more steps now: the facts cover the first ones.
    opened.visit_steps(&header.id, &mut |s| {
        for line in why_step(i, &s, &facts, &filter) {
            if json {
                // Each decision carries its turn's tokens and cost, as the text's turn heading.
                let turn_usage = facts.turn(line.prompt, line.turn);
                array
                    .push(&WithUsage { line: &line, turn_usage: turn_usage.map(|t| &t.spend) })
                    .map_err(|e| reloop_journal::JournalError::Encode { what: "a decision", source: e })?;
            } else {
                if written == 0 {
                    // Whose rules decided: the same events under another profile decide otherwise.
                    outln!("rules: {}", reloop_inspect::timeline::rules_words(&header));
                    // What answered is not what was asked: both, or the costs read as the wrong model's.
                    let models = facts.models();
                    if models.differ() {
                        outln!("model: {}", models.words());
                        // Then the costs differ too: each response is priced at the model that
                        // answered; the run's own result priced it as the model asked.
                        let spend = facts.totals();
                        if let Some(words) = facts.reported_cost_words(spend.cost_usd()) {
                            outln!("cost: {}, priced at the model that answered; {words}", spend.cost_words());
                        }
                    }
                }
                crate::term::write_stdout(&crate::term::visible(&grouping.text(&line, &facts)), false);
            }
            written += 1;
        }
        i += 1;
        Ok(i < steps && !crate::term::stdout_closed())
    })?;
    drop(opened);
    if json {
        array.end();
    } else {
        if written == 0 {
            outln!("no decisions match");
        } else {
            super::tree::print_subagents(journal, &header.id)?;
        }
        // A queued session that failed before it could end has no decision saying why: the
        // queue does.
        if let Some(entry) = super::queue::by_session(journal)?.remove(&header.id) {
            if let Some(words) = super::queue::end_words(&entry) {
                outln!("queue: {words}");
            }
        }
    }
    Ok(Exit::Success)
}
