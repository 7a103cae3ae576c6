//! `reloop replay SESSION`: the session's journal through today's engine, with no model and no
//! tools; `--set KEY=VALUE` replays it under changed rules instead ([`super::what_if`]).

use super::reading::{feed, open};
use super::CliError;
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg, OutputFormat, SessionArg};
use crate::term::{errln, outln};

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub session: SessionArg,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
    /// Print the stream the live run showed, rebuilt from the journal (timings aside).
    #[arg(long, value_enum)]
    pub output_format: Option<OutputFormat>,
    /// Debugging: replay with behaviour flag N flipped, to see where that behaviour bites.
    #[arg(long, value_name = "N", hide = true)]
    pub flip_flag: Vec<u32>,
    /// What-if: replay under a changed setting and show where the session would have gone
    /// otherwise. Keys: `compat=PROFILE` (another profile's rules).
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

pub fn run(args: ReplayArgs) -> Result<Exit, CliError> {
    let (journal, selector, json, format) =
        (&args.journal, args.session.session.as_str(), args.json.json, args.output_format);
    let (flips, set) = (args.flip_flag.as_slice(), args.set.as_slice());
    if !set.is_empty() {
        return super::what_if::replay(journal, selector, json, flips, set);
    }
    if format.is_none() {
        // Streamed from the journal a step at a time: memory stays flat however long the session.
        // Rows are read and decoded on a second thread while this one steps the core.
        let mut journal = open(journal)?;
        let id = journal.resolve(selector)?;
        let header = journal.header(&id)?;
        let mut replayer = reloop_inspect::Replayer::new(&header, flips);
        feed(&mut journal, &id, &mut replayer)?;
        let code = print_replay(&replayer.finish(), json)?;
        if json {
            return Ok(code);
        }
        // The session's subagents replay from their own steps, each under its call.
        let mut diverged = code != Exit::Success;
        for (depth, sub) in super::tree::subagents(&journal, &id)? {
            let header = journal.header(&sub.id)?;
            let mut replayer = reloop_inspect::Replayer::new(&header, flips);
            feed(&mut journal, &sub.id, &mut replayer)?;
            let report = replayer.finish();
            let what = match &report.divergence {
                None => format!("replayed {} steps: identical", report.steps),
                Some(d) => {
                    diverged = true;
                    format!("{}: diverged at step {} ({}): {}", d.code, d.seq, d.event_kind, d.summary())
                }
            };
            let indent = "  ".repeat(depth);
            outln!(
                "{indent}agent {} for {} ({}): {what}",
                sub.agent_type,
                sub.tool_use_id,
                super::reading::short(&sub.id)
            );
        }
        return Ok(if diverged { Exit::Diverged } else { Exit::Success });
    }
    // The stream first, as the live run printed it, then a divergence if there is one. Two
    // walks over the journal, each holding one step and one state: the replay that compares, and
    // the stream (shown as the journal's engine-independent events drive today's core, whatever
    // flags were flipped).
    let mut journal = open(journal)?;
    let id = journal.resolve(selector)?;
    let header = journal.header(&id)?;
    let mut replayer = reloop_inspect::Replayer::new(&header, flips);
    feed(&mut journal, &id, &mut replayer)?;
    let report = replayer.finish();
    let format = format.unwrap_or(OutputFormat::Text);
    // A print-mode session is shown as print mode showed it; any other as `reloop run` does.
    let mut printer: Box<dyn crate::launch::drive::ShowEvents> =
        match crate::launch::drive::REPLAY_PRINTER.get().and_then(|build| build(&header.run_config, format)) {
            Some(stream) => stream,
            None => Box::new(crate::term::output::Printer::new(format, false)),
        };
    let (mut outputs, started) = reloop_inspect::outputs::OutputReplay::new(&header);
    printer.on_event(&started);
    journal.visit_steps(&id, &mut |record| {
        for event in outputs.step(record.seq, record.at_ms, &record.event) {
            if crate::term::stdout_closed() {
                return Ok(false);
            }
            printer.on_event(&event);
        }
        Ok(true)
    })?;
    if let Some(finished) = outputs.finish().filter(|_| !crate::term::stdout_closed()) {
        printer.on_event(&finished);
    }
    if let Some(d) = &report.divergence {
        errln!("{}: diverged at step {} ({}): {}", d.code, d.seq, d.event_kind, d.summary());
    }
    Ok(exit_of(&report))
}

fn exit_of(report: &reloop_inspect::ReplayReport) -> Exit {
    if report.divergence.is_some() {
        Exit::Diverged
    } else {
        Exit::Success
    }
}

fn print_replay(report: &reloop_inspect::ReplayReport, json: bool) -> Result<Exit, CliError> {
    if json {
        print_json(report)?;
    } else {
        match &report.divergence {
            None => outln!("replayed {} steps: identical", report.steps),
            Some(d) if d.seq == 0 => outln!("{}: {}", d.code, d.summary()),
            Some(d) => {
                outln!("{}: diverged at step {} ({}): {}", d.code, d.seq, d.event_kind, d.summary());
                outln!("  expected: reason {}  effects {}", reason_name(&d.expected.reason), d.expected.effects);
                outln!("  got:      reason {}  effects {}", reason_name(&d.actual.reason), d.actual.effects);
                for line in &d.diff {
                    outln!("  {line}");
                }
            }
        }
    }
    Ok(exit_of(report))
}

fn reason_name(reason: &Option<reloop_core::Reason>) -> &'static str {
    reason.as_ref().map_or("none", reloop_core::Reason::name)
}

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    crate::term::json_line(value, true).map_err(|e| CliError::Io(e.to_string()))
}
