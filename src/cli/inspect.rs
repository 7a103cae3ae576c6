//! `reloop sessions`, `show`, `replay`, `why`: reading journals.

use std::process::ExitCode;

use reloop_core::{ContentBlock, Role};
use reloop_driver::explain::{why_step, WhyFilter};
use reloop_journal::{SessionHeader, StepRecord};
use serde_json::json;

use super::reading::{feed, open};
use super::{current_dir, CliError, JournalArg};
use crate::term::{errln, out, outln};

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    crate::term::json_line(value, true).map_err(|e| CliError::Io(e.to_string()))
}

pub fn show(journal: &JournalArg, selector: &str, json: bool) -> Result<ExitCode, CliError> {
    let opened = open(journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    let reloop_driver::Rebuilt { state, steps, .. } =
        reloop_driver::rebuild(&*opened, &header.id, &header.core_config)?;
    drop(opened);
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
            messages: &'a reloop_core::history::History,
        }
        let shown = Shown {
            id: &header.id,
            engine_version: &header.engine_version,
            core_config: &header.core_config,
            run_config: &header.run_config,
            steps,
            terminal: state.terminal(),
            messages: state.messages(),
        };
        match crate::term::json_line_streamed(&shown, true) {
            // A closed stdout ends the serialization with an error: the reader went away, which
            // is a normal end.
            Err(_) if crate::term::stdout_closed() => {}
            written => written.map_err(|e| CliError::Io(e.to_string()))?,
        }
        return Ok(ExitCode::SUCCESS);
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
    print_subagents(journal, &header.id)?;
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
    if let Some(t) = state.terminal() {
        outln!("terminal: {}", t.reason().as_str());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn replay(
    journal: &JournalArg,
    selector: &str,
    json: bool,
    format: Option<super::OutputFormat>,
    flips: &[u32],
    set: &[String],
) -> Result<ExitCode, CliError> {
    if !set.is_empty() {
        return super::what_if::replay(journal, selector, json, flips, set);
    }
    if format.is_none() {
        // Streamed from the journal a step at a time: memory stays flat however long the session.
        // Rows are read and decoded on a second thread while this one steps the core.
        let mut journal = open(journal)?;
        let id = journal.resolve(selector)?;
        let header = journal.header(&id)?;
        let mut replayer = reloop_driver::Replayer::new(&header, flips);
        feed(&mut journal, &id, &mut replayer)?;
        let code = print_replay(&replayer.finish(), json)?;
        if json {
            return Ok(code);
        }
        // The session's subagents replay from their own steps, each under its call.
        let mut diverged = code != ExitCode::SUCCESS;
        for (depth, sub) in super::tree::subagents(&journal, &id)? {
            let header = journal.header(&sub.id)?;
            let mut replayer = reloop_driver::Replayer::new(&header, flips);
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
                super::listing::short(&sub.id)
            );
        }
        return Ok(if diverged { ExitCode::from(3) } else { ExitCode::SUCCESS });
    }
    // The stream first, as the live run printed it, then a divergence if there is one. Two
    // walks over the journal, each holding one step and one state: the replay that compares, and
    // the stream (shown as the journal's engine-independent events drive today's core, whatever
    // flags were flipped).
    let mut journal = open(journal)?;
    let id = journal.resolve(selector)?;
    let header = journal.header(&id)?;
    let mut replayer = reloop_driver::Replayer::new(&header, flips);
    feed(&mut journal, &id, &mut replayer)?;
    let report = replayer.finish();
    let mut printer = crate::term::output::Printer::new(format.unwrap_or(super::OutputFormat::Text), false);
    let (mut outputs, started) = reloop_driver::outputs::OutputReplay::new(&header);
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

fn exit_of(report: &reloop_driver::ReplayReport) -> ExitCode {
    if report.divergence.is_some() {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_replay(report: &reloop_driver::ReplayReport, json: bool) -> Result<ExitCode, CliError> {
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

/// What a response cost: the session's own prices, else the bundled model table's.
pub(crate) fn price(header: &SessionHeader) -> impl Fn(&str, &reloop_core::Usage) -> f64 + '_ {
    move |model, usage| match header.core_config.prices.iter().find(|p| p.model == model) {
        Some(p) => p.cost(usage),
        None => crate::models::price(model).map_or(0.0, |p| p.cost(usage)),
    }
}

pub fn why(
    journal: &JournalArg,
    selector: &str,
    filter: WhyFilter,
    json: bool,
    dot: bool,
) -> Result<ExitCode, CliError> {
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
        out!("{}", reloop_driver::explain::dot(&header, &steps));
        return Ok(ExitCode::SUCCESS);
    }
    // Two walks over the journal, each holding one step: the facts of the whole session, then
    // the decisions, which read them.
    let price = price(&header);
    // `why` names calls but shows no input or output: the facts need not hold every output.
    let mut gatherer = reloop_driver::timeline::FactsGatherer::new(&header, &price).without_payloads();
    let steps = opened.visit_steps(&header.id, &mut |s| {
        gatherer.step(&s);
        Ok(true)
    })?;
    let facts = gatherer.finish();
    // The decisions are written as the second walk finds them: a long session's lines are
    // never held (they were most of `why`'s memory).
    let mut written = 0usize;
    let mut array = crate::term::PrettyArray::default();
    let mut grouping = reloop_driver::explain::Grouping::default();
    let mut i = 0;
    // A session still being written may have more steps now: the facts cover the first ones.
    opened.visit_steps(&header.id, &mut |s| {
        for line in why_step(i, &s, &facts, &filter) {
            if json {
                array
                    .push(&line)
                    .map_err(|e| reloop_journal::JournalError::Encode { what: "a decision", source: e })?;
            } else {
                if written == 0 {
                    // Whose rules decided: the same events under another profile decide otherwise.
                    outln!("rules: {}", header.core_config.profile.name());
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
    } else if written == 0 {
        outln!("no decisions match");
    } else {
        print_subagents(journal, &header.id)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The session's subagents, one line each, under a `subagents:` heading (nothing without any).
fn print_subagents(journal: &JournalArg, id: &str) -> Result<(), CliError> {
    let lines = super::tree::lines(&open(journal)?, id)?;
    if !lines.is_empty() {
        outln!("subagents:");
        for line in lines {
            outln!("{line}");
        }
    }
    Ok(())
}

/// `reloop diff A B`: exit 0 when the sessions agree, 1 when they part ways. Both sessions are
/// walked a step at a time (A twice), so sessions of any length compare in the memory of a hash
/// a compared step.
pub fn diff(journal: &JournalArg, a: &str, b: &str, json: bool) -> Result<ExitCode, CliError> {
    let opened = open(journal)?;
    let (id_a, id_b) = (opened.resolve(a)?, opened.resolve(b)?);
    let (header_a, header_b) = (opened.header(&id_a)?, opened.header(&id_b)?);
    let (price_a, price_b) = (price(&header_a), price(&header_b));
    let walker = |id: &str| {
        let (opened, id) = (&opened, id.to_string());
        move |visit: &mut dyn FnMut(&StepRecord) -> bool| {
            opened.visit_steps(&id, &mut |step| Ok(visit(&step))).map(|_| ())
        }
    };
    let (mut walk_a, mut walk_b) = (walker(&id_a), walker(&id_b));
    let mut side_a = reloop_driver::diff::Side { header: &header_a, price: &price_a, walk: &mut walk_a };
    let mut side_b = reloop_driver::diff::Side { header: &header_b, price: &price_b, walk: &mut walk_b };
    let d = reloop_driver::diff::diff(&mut side_a, &mut side_b)?;
    if json {
        print_json(&d)?;
    } else {
        out!("{}", reloop_driver::diff::text(&d));
    }
    Ok(if d.first_difference.is_some() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

pub fn trace(journal: &JournalArg, selector: &str, json: bool) -> Result<ExitCode, CliError> {
    let journal = open(journal)?;
    let id = journal.resolve(selector)?;
    // Streamed a step at a time, so a session of any length is shown in the memory of one step.
    let mut array = crate::term::PrettyArray::default();
    journal.visit_steps(&id, &mut |s| {
        if crate::term::stdout_closed() {
            return Ok(false);
        }
        if !json {
            outln!("{}", reloop_driver::explain::trace_line(&s));
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
    Ok(ExitCode::SUCCESS)
}

pub fn export(journal: &JournalArg, selector: &str, kind: super::ExportKind) -> Result<ExitCode, CliError> {
    if kind == super::ExportKind::Journal {
        let journal = open(journal)?;
        let id = journal.resolve(selector)?;
        // Written as the journal is walked, a step at a time, as the other formats are.
        let mut out = crate::term::JsonStdout::default();
        let written = (|| {
            let mut writer = reloop_journal::DumpWriter::start(journal.header(&id)?, &mut out)?;
            journal.visit_steps(&id, &mut |step| {
                writer.step(step, &mut out)?;
                Ok(true)
            })?;
            writer.finish(&mut out)
        })();
        match written {
            // The reader went away: a normal end.
            Err(_) if crate::term::stdout_closed() => return Ok(ExitCode::SUCCESS),
            written => written?,
        }
        std::io::Write::write_all(&mut out, b"\n").map_err(|e| CliError::Io(e.to_string()))?;
        out.finish();
        return Ok(ExitCode::SUCCESS);
    }
    let format = match kind {
        super::ExportKind::Journal => return Ok(ExitCode::SUCCESS),
        super::ExportKind::Messages => reloop_import::ExportFormat::Messages,
        super::ExportKind::StreamJson => reloop_import::ExportFormat::StreamJson,
        super::ExportKind::ClaudeJsonl => reloop_import::ExportFormat::ClaudeJsonl,
    };
    let journal = open(journal)?;
    let header = journal.header(&journal.resolve(selector)?)?;
    // Written as the journal is walked, a step at a time: a session of any length is exported in
    // the memory of its state. Every format is JSON or JSON lines: the same values, with nothing
    // a terminal acts on.
    let mut out = crate::term::JsonStdout::default();
    let mut exported = reloop_import::Exporter::new(format, &header, &mut out);
    if let Ok(exporter) = &mut exported {
        let mut failed = None;
        journal.visit_steps(&header.id, &mut |record| match exporter.step(&record, &mut out) {
            Ok(()) => Ok(true),
            Err(e) => {
                failed = Some(e);
                Ok(false)
            }
        })?;
        if let Some(e) = failed {
            exported = Err(e);
        }
    }
    match exported.and_then(|exporter| exporter.finish(&mut out)) {
        // The reader went away: a normal end.
        Err(_) if crate::term::stdout_closed() => return Ok(ExitCode::SUCCESS),
        failed => failed.map_err(|e| CliError::Io(e.to_string()))?,
    }
    // As before, an export that wrote nothing still ends its (empty) line.
    let ends_line = out.ends_line();
    out.finish();
    if !ends_line {
        outln!();
    }
    Ok(ExitCode::SUCCESS)
}

/// `reloop import journal FILE`: a session dump, written verbatim. The dump is read twice, a
/// step at a time: checked whole before the journal is opened, then written (see
/// `reloop_journal::load_dump`); a pipe is copied to a temporary file first (`Rereadable`).
pub fn import_dump(journal: &JournalArg, file: &std::path::Path, json: bool) -> Result<ExitCode, CliError> {
    let cannot_read = |e: std::io::Error| CliError::Usage(format!("cannot read {}: {e}", file.display()));
    let bad = |e: reloop_journal::JournalError| match e {
        reloop_journal::JournalError::Dump(_) => CliError::Usage(format!("{}: {e}", file.display())),
        e => e.into(),
    };
    let dump = super::reread::Rereadable::open(file).map_err(cannot_read)?;
    let open = || dump.read().map_err(cannot_read);
    let head = reloop_journal::DumpHead::read(open()?).map_err(bad)?;
    let mut journal = journal.open(&current_dir()?, super::journal::Open::Create)?;
    let id = reloop_journal::load_dump(&mut *journal, &head, open()?).map_err(bad)?;
    if json {
        print_json(&json!({"session_id": id, "steps": head.steps}))?;
    } else {
        outln!("imported {} as session {id}: {} steps", file.display(), head.steps);
    }
    Ok(ExitCode::SUCCESS)
}

/// `reloop show SESSION --turn N`: the request as the provider sent it, as JSON.
pub fn request(journal: &JournalArg, selector: &str, at: reloop_driver::RequestAt) -> Result<ExitCode, CliError> {
    let opened = open(journal)?;
    let header = opened.header(&opened.resolve(selector)?)?;
    // The steps are read up to the one that sent the request, a step at a time.
    let mut finder = reloop_driver::RequestFinder::new(&header, at);
    let mut found = None;
    opened.visit_steps(&header.id, &mut |record| {
        found = finder.step(&record);
        Ok(found.is_none())
    })?;
    drop(opened);
    let Some(rebuilt) = found else {
        let what = match at {
            reloop_driver::RequestAt::Turn(n) => format!("at turn {n}"),
            reloop_driver::RequestAt::Number(n) => format!("number {n}"),
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
    Ok(ExitCode::SUCCESS)
}
