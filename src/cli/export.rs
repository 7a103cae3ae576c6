//! `reloop export SESSION`: a session written out as messages, stream-json lines, Claude Code
//! transcript lines or a session dump, a step at a time.

use super::reading::open;
use super::CliError;
use crate::error::Exit;
use crate::options::{JournalArg, SessionArg};
use crate::term::outln;

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub session: SessionArg,
    /// What to write: the messages array, the stream-json lines, Claude Code transcript
    /// lines, or a session dump.
    #[arg(long, value_enum, default_value = "messages")]
    pub format: ExportKind,
    #[command(flatten)]
    pub journal: JournalArg,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Messages,
    StreamJson,
    ClaudeJsonl,
    /// The session's header and steps, verbatim (`reloop import journal` reads it back).
    Journal,
}

pub fn run(args: ExportArgs) -> Result<Exit, CliError> {
    let (journal, selector, kind) = (&args.journal, args.session.session.as_str(), args.format);
    if kind == ExportKind::Journal {
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
            Err(_) if crate::term::stdout_closed() => return Ok(Exit::Success),
            written => written?,
        }
        std::io::Write::write_all(&mut out, b"\n").map_err(|e| CliError::Io(e.to_string()))?;
        out.finish();
        return Ok(Exit::Success);
    }
    let format = match kind {
        ExportKind::Journal => return Ok(Exit::Success),
        ExportKind::Messages => reloop_import::ExportFormat::Messages,
        ExportKind::StreamJson => reloop_import::ExportFormat::StreamJson,
        ExportKind::ClaudeJsonl => reloop_import::ExportFormat::ClaudeJsonl,
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
        Err(_) if crate::term::stdout_closed() => return Ok(Exit::Success),
        failed => failed.map_err(|e| CliError::Io(e.to_string()))?,
    }
    // As before, an export that wrote nothing still ends its (empty) line.
    let ends_line = out.ends_line();
    out.finish();
    if !ends_line {
        outln!();
    }
    Ok(Exit::Success)
}
