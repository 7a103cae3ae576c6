//! `reloop export SESSION`: a session written out as messages, stream-json lines, Claude Code
//! transcript lines or a session dump, a step at a time; or sent to an OpenTelemetry receiver
//! as a trace (`--format otlp`).

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
    /// With `--format otlp`: the OpenTelemetry receiver (OTLP over HTTP/protobuf; `/v1/traces`
    /// is added to the URL). Without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
    /// OTEL_EXPORTER_OTLP_ENDPOINT.
    #[arg(long, value_name = "URL", value_parser = otlp_url)]
    pub otlp_endpoint: Option<String>,
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
    /// The session as an OpenTelemetry trace, sent to an OTLP receiver (docs/otel.md).
    Otlp,
}

/// `--otlp-endpoint`'s check: an http(s) URL, refused at once otherwise (exit 2).
pub(crate) fn otlp_url(text: &str) -> Result<String, String> {
    if text.starts_with("http://") || text.starts_with("https://") {
        Ok(text.to_string())
    } else {
        Err("give an http:// or https:// URL (an OTLP/HTTP receiver)".into())
    }
}

/// `--format otlp`: the session's spans, mapped from its journaled steps (with their recorded
/// times), sent at once; the receiver's refusal or silence is an error of the command.
fn otlp(args: &ExportArgs) -> Result<Exit, CliError> {
    let endpoint = reloop_otel::otlp::resolve_endpoint(args.otlp_endpoint.as_deref(), |name| std::env::var(name).ok())
        .ok_or_else(|| {
            CliError::Usage(
                "--format otlp needs a receiver: --otlp-endpoint URL, or OTEL_EXPORTER_OTLP_ENDPOINT".into(),
            )
        })?;
    let journal = open(&args.journal)?;
    let header = journal.header(&journal.resolve(&args.session.session)?)?;
    let mut mapper = reloop_otel::SessionMapper::new(&header);
    let trace = mapper.trace_id();
    let mut spans = Vec::new();
    journal.visit_steps(&header.id, &mut |step| {
        spans.extend(mapper.step(&step));
        Ok(true)
    })?;
    spans.extend(mapper.finish());
    let sent = reloop_otel::otlp::send(&endpoint, spans).map_err(|e| CliError::Io(e.to_string()))?;
    outln!("sent {sent} spans of session {} to {endpoint}: trace {trace}", header.id);
    Ok(Exit::Success)
}

pub fn run(args: ExportArgs) -> Result<Exit, CliError> {
    if args.format == ExportKind::Otlp {
        return otlp(&args);
    }
    if args.otlp_endpoint.is_some() {
        return Err(CliError::Usage("--otlp-endpoint goes with --format otlp".into()));
    }
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
        ExportKind::Journal | ExportKind::Otlp => return Ok(Exit::Success),
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
