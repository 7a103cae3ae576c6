//! `reloop show SESSION`: a session rebuilt from the journal: its conversation, its transition
//! trace (`--steps`), or the exact request of a turn (`--turn N`, `--request R`); `--follow`
//! prints a running session's steps as they are journaled, until it ends.

use reloop_core::{ContentBlock, Role};
use serde_json::json;

use super::reading::open;
use super::CliError;
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg, SessionArg};
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// Show the transition trace (one line per journaled step) instead of the conversation.
    #[arg(long)]
    pub steps: bool,
    /// Show the exact request sent at turn N (its first request), rebuilt from the journal.
    #[arg(long, value_name = "N", conflicts_with = "steps")]
    pub turn: Option<u32>,
    /// Show the exact request with this number (retries included), rebuilt from the journal.
    #[arg(long, value_name = "R", conflicts_with_all = ["steps", "turn"])]
    pub request: Option<u32>,
    /// Print the session's steps as they are journaled (the trace's lines), until it ends: until
    /// nobody writes it (right away for a finished session).
    #[arg(long, short = 'f', conflicts_with_all = ["turn", "request", "json"])]
    pub follow: bool,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

/// How often `--follow` looks for new steps.
const FOLLOW_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

pub fn run(args: ShowArgs) -> Result<Exit, CliError> {
    let (journal, session, json) = (&args.journal, args.session.session.as_str(), args.json.json);
    if args.follow {
        return follow(journal, session);
    }
    match (args.steps, args.turn, args.request) {
        (true, _, _) => trace(journal, session, json),
        (false, Some(n), _) => request(journal, session, reloop_inspect::RequestAt::Turn(n)),
        (false, None, Some(n)) => request(journal, session, reloop_inspect::RequestAt::Number(n)),
        (false, None, None) => conversation(journal, session, json),
    }
}

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    crate::term::json_line(value, true).map_err(|e| CliError::Io(e.to_string()))
}

fn conversation(journal: &JournalArg, selector: &str, json: bool) -> Result<Exit, CliError> {
    let opened = open(journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    let price = super::reading::price(&header);
    // One walk: the state the conversation is read from, and the facts `why` reads, so both
    // name and price each request alike.
    let mut fold = reloop_core::Fold::new(&header.core_config);
    let mut gatherer = reloop_inspect::timeline::FactsGatherer::new(&header, &price).without_payloads();
    let steps = opened.visit_steps(&header.id, &mut |record| {
        gatherer.step(&record);
        fold.push(record.seq, record.event, |_| ());
        Ok(true)
    })?;
    let (state, facts) = (fold.into_state(), gatherer.finish());
    drop(opened);
    // A rerun's divergence is journaled as a failed request (its last step): told as the rerun's.
    let diverged = state.terminal().and_then(|t| reloop_inspect::rerun::diverged_words(&t.stop, steps as u64));
    let (spend, models) = spend_and_models(&header, &facts, state.context().model_usage(), &price);
    if json {
        /// The session as `show --json` prints it, serialized straight to stdout: a long
        /// conversation is never copied into a JSON value or a string first.
        #[derive(serde::Serialize)]
        struct Shown<'a> {
            id: &'a str,
            engine_version: &'a str,
            core_config: &'a reloop_core::Config,
            run_config: &'a serde_json::Value,
            steps: usize,
            terminal: Option<&'a reloop_core::Terminal>,
            /// A rerun's stop at a divergence, in words (the terminal holds it as a failed request).
            #[serde(skip_serializing_if = "Option::is_none")]
            rerun_diverged: Option<&'a str>,
            usage: &'a reloop_inspect::spend::Spend,
            /// The model asked for and the ones that answered, apart.
            models: &'a reloop_inspect::models::SessionModels,
            messages: &'a reloop_core::History,
        }
        let shown = Shown {
            id: &header.id,
            engine_version: &header.engine_version,
            core_config: &header.core_config,
            run_config: &header.run_config,
            steps,
            terminal: state.terminal(),
            rerun_diverged: diverged.as_deref(),
            usage: &spend,
            models: &models,
            messages: state.messages(),
        };
        match crate::term::json_line_streamed(&shown, true) {
            // A closed stdout ends the serialization with an error: the reader went away, which
            // is a normal end.
            Err(_) if crate::term::stdout_closed() => {}
            written => written.map_err(|e| CliError::Io(e.to_string()))?,
        }
        return Ok(Exit::Success);
    }
    outln!(
        "session {}  (engine {}, {} steps, rules {})",
        header.id,
        header.engine_version,
        steps,
        header.core_config.profile.name()
    );
    if let Some(cwd) = header.run_config.get("cwd").and_then(|v| v.as_str()) {
        outln!("cwd {cwd}");
    }
    outln!("model {}", models.words());
    super::tree::print_subagents(journal, &header.id)?;
    for message in state.messages().messages() {
        if crate::term::stdout_closed() {
            break;
        }
        let who = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        };
        for block in &message.content {
            match block {
                ContentBlock::Text(t) => outln!("{who}: {}", t.text),
                ContentBlock::ToolUse(t) => outln!("{who}: tool_use {} {} {}", t.id, t.name, t.input),
                ContentBlock::ToolResult(r) => {
                    let flag = if r.is_error { " (error)" } else { "" };
                    outln!("{who}: tool_result {}{flag}:", r.tool_use_id);
                    for line in r.content.as_text().lines() {
                        outln!("    {line}");
                    }
                }
                other => outln!("{who}: [{}]", other.type_name()),
            }
        }
    }
    match (state.terminal(), &diverged) {
        (Some(_), Some(words)) => outln!("terminal: {words}"),
        (Some(t), None) => outln!("terminal: {}", t.reason().as_str()),
        (None, _) => {}
    }
    // Priced at the models that answered, as every view prices it; the run's own result, which
    // prices as the model asked, is told beside it when it differs.
    let reported = facts.reported_cost_words(spend.cost_usd()).map(|w| format!(" ({w})")).unwrap_or_default();
    outln!("usage: {}, {}{reported}", spend.tokens_words(), spend.cost_words());
    super::reading::warn_unpriced(&spend.unpriced_models);
    Ok(Exit::Success)
}

fn trace(journal: &JournalArg, selector: &str, json: bool) -> Result<Exit, CliError> {
    let journal = open(journal)?;
    let id = journal.resolve(selector)?;
    // Streamed a step at a time, so a session of any length is shown in the memory of one step.
    let mut array = crate::term::PrettyArray::default();
    journal.visit_steps(&id, &mut |s| {
        if crate::term::stdout_closed() {
            return Ok(false);
        }
        if !json {
            outln!("{}", reloop_inspect::explain::trace_line(&s));
            return Ok(true);
        }
        let mut row = json!({
            "seq": s.seq, "event": s.event.kind(), "from": s.from_phase, "to": s.to_phase,
            "turn": s.turn_after, "effects": s.effects, "reason": s.reason,
        });
        // Only an ignored step says why it was ignored.
        if let Some(ignored) = &s.ignored {
            row["ignored"] = json!(ignored);
        }
        array.push(&row).map_err(|e| reloop_journal::JournalError::Encode { what: "a step", source: e })?;
        Ok(true)
    })?;
    if json {
        array.end();
    }
    Ok(Exit::Success)
}

/// `reloop show SESSION --turn N`: the request as the provider sent it, as JSON.
fn request(journal: &JournalArg, selector: &str, at: reloop_inspect::RequestAt) -> Result<Exit, CliError> {
    let opened = open(journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    // The steps are read up to the one that sent the request, a step at a time.
    let mut finder = reloop_inspect::RequestFinder::new(&header, at);
    let mut found = None;
    opened.visit_steps(&header.id, &mut |record| {
        found = finder.step(&record);
        Ok(found.is_none())
    })?;
    drop(opened);
    let Some(rebuilt) = found else {
        let what = match at {
            reloop_inspect::RequestAt::Turn(n) => format!("at turn {n}"),
            reloop_inspect::RequestAt::Number(n) => format!("number {n}"),
            _ => "like that".to_string(),
        };
        return Err(CliError::Usage(format!("session {} sent no model request {what}", header.id)));
    };
    print_json(&json!({
        "session_id": header.id,
        "seq": rebuilt.seq,
        "turn": rebuilt.turn,
        "request": rebuilt.request,
        "format": rebuilt.format,
        "body": rebuilt.body,
    }))?;
    Ok(Exit::Success)
}

/// `reloop show SESSION --follow`: the trace's lines of the steps journaled so far, then of each
/// new one, looking every [`FOLLOW_EVERY`], until nobody writes the session (it ended, or its
/// writer is gone). Who writes it is asked before each read, so the steps a writer journaled
/// before it let go are all printed.
fn follow(journal: &JournalArg, selector: &str) -> Result<Exit, CliError> {
    let opened = open(journal)?;
    let id = opened.resolve(selector)?;
    let (mut printed, mut terminal) = (0u64, None);
    loop {
        let writer = opened.live_writer(&id)?;
        // Only the steps journaled since the last look are read.
        opened.visit_steps_from(&id, printed + 1, &mut |s| {
            outln!("{}", reloop_inspect::explain::trace_line(&s));
            printed = s.seq;
            if let Some(r) = s.reason.as_ref().filter(|r| r.is_terminal()) {
                terminal = Some(r.name());
            }
            Ok(!crate::term::stdout_closed())
        })?;
        if writer.is_none() || crate::term::stdout_closed() {
            break;
        }
        std::thread::sleep(FOLLOW_EVERY);
    }
    match terminal {
        Some(reason) => outln!("-- session {} ended: {reason} ({printed} steps)", super::reading::short(&id)),
        None => outln!("-- session {} is not running: nobody writes it ({printed} steps)", super::reading::short(&id)),
    }
    Ok(Exit::Success)
}

/// Every response's tokens by kind and cost, subagents' included, and the models asked and
/// answering. The session's own responses are priced at the model that answered each, as `why`
/// and `sessions` price them; the loop's own count (`model_usage`) keys them by the model asked,
/// so what it holds beyond them is its subagents', priced at their models.
fn spend_and_models(
    header: &reloop_journal::SessionHeader,
    facts: &reloop_inspect::timeline::Facts,
    model_usage: &std::collections::BTreeMap<String, reloop_core::Usage>,
    price: reloop_inspect::spend::PriceFn<'_>,
) -> (reloop_inspect::spend::Spend, reloop_inspect::models::SessionModels) {
    let mut spend = facts.totals();
    let mut agents = model_usage.clone();
    for r in &facts.requests {
        if let Some(u) = agents.get_mut(&r.requested_model) {
            u.input_tokens = u.input_tokens.saturating_sub(r.usage.input_tokens);
            u.output_tokens = u.output_tokens.saturating_sub(r.usage.output_tokens);
            u.cache_read_input_tokens = u.cache_read_input_tokens.saturating_sub(r.usage.cache_read_input_tokens);
            u.cache_creation_input_tokens =
                u.cache_creation_input_tokens.saturating_sub(r.usage.cache_creation_input_tokens);
        }
    }
    let mut models = facts.models();
    for (model, usage) in agents.iter().filter(|(_, u)| **u != reloop_core::Usage::default()) {
        spend.add(model, usage, price(model, usage));
        // A subagent's model was asked for (by its child session) and answered there.
        for seen in [&mut models.requested, &mut models.answered] {
            if !seen.contains(model) {
                seen.push(model.clone());
            }
        }
    }
    if reloop_inspect::timeline::source(header) == "import" {
        models = models.as_answered();
    }
    (spend, models)
}
