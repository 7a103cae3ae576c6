//! `reloop sessions` and `reloop import claude-code`: the journal as a person reads it, and
//! transcripts brought into it once each.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use reloop_driver::SessionJournal;
use reloop_journal::SessionOverview;
use serde_json::{json, Value};

use super::{current_dir, CliError, JournalArg};
use crate::term::{errln, outln};

/// One row of `sessions`, worked out from the journal's overview.
struct Row {
    overview: SessionOverview,
    prompt: String,
    model: String,
    source: String,
    cost_usd: f64,
}

impl Row {
    fn of(overview: SessionOverview) -> Row {
        let config = &overview.run_config;
        let text = |key: &str| config.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let prompt = match &overview.first_prompt {
            Some(reloop_core::Event::UserInput { content }) => reloop_inspect::timeline::text_of(content),
            _ => String::new(),
        };
        let model = overview.responses.iter().rev().find_map(|(m, _)| m.clone()).unwrap_or_else(|| text("model"));
        let cost_usd = overview
            .responses
            .iter()
            .map(|(m, usage)| {
                let m = m.as_deref().unwrap_or(&model);
                crate::models::price(m).map_or(0.0, |p| p.cost(usage))
            })
            .fold(0.0, |a, b| a + b);
        let agent =
            |key: &str| config.get("agent").and_then(|a| a.get(key)).and_then(Value::as_str).map(str::to_string);
        let source = match (&overview.parent, text("provider").as_str()) {
            (Some((parent, seq)), _) => format!("fork of {} @{seq}", short(parent)),
            (None, _) if agent("parent").is_some() => format!(
                "agent {} for {} of {}",
                agent("agent_type").unwrap_or_default(),
                agent("tool_use_id").unwrap_or_default(),
                short(&agent("parent").unwrap_or_default())
            ),
            (None, "import") => format!("import {}", text("file")),
            (None, provider) if !provider.is_empty() => format!("run ({provider})"),
            _ => "run".to_string(),
        };
        Row { overview, prompt, model, source, cost_usd }
    }

    fn end(&self, journal: &SessionJournal) -> Result<String, CliError> {
        Ok(match (&self.overview.terminal_reason, journal.live_writer(&self.overview.id)?) {
            (_, Some(writer)) => format!("(running, {writer})"),
            (Some(reason), None) => reason.clone(),
            (None, None) => "(unfinished)".to_string(),
        })
    }
}

/// The first eight characters of reloop's own ids (UUIDs, hex): unique enough to type, and any
/// unique prefix works. Any other id (from a dump someone handed over) is shown whole.
pub(crate) fn short(id: &str) -> &str {
    if id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        id.get(..8).unwrap_or(id)
    } else {
        id
    }
}

/// `2025-03-04 17:22` in this machine's time zone.
pub(crate) fn local_time(ms: u64) -> String {
    let Ok(at) = jiff::Timestamp::from_millisecond(ms as i64) else { return "?".to_string() };
    at.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M").to_string()
}

pub fn sessions(journal: &JournalArg, json: bool) -> Result<ExitCode, CliError> {
    let journal = journal.open(&current_dir()?, super::journal::Open::Reading)?;
    let mut rows: Vec<Row> = journal.overview()?.into_iter().map(Row::of).collect();
    // `last` is the session written most recently: the overview's last row.
    let last = rows.iter().rev().find(|r| r.overview.run_config.get("agent").is_none()).map(|r| r.overview.id.clone());
    // Listed in creation order (an import's creation is its transcript's start), forks under
    // their parents.
    rows.sort_by_key(|r| r.overview.created_at_ms);
    if json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                let o = &r.overview;
                Ok(json!({
                    "id": o.id, "created_at_ms": o.created_at_ms, "last_written_ms": o.last_written_ms,
                    "last": Some(&o.id) == last.as_ref(), "steps": o.steps,
                    "terminal_reason": o.terminal_reason,
                    "parent": o.parent.as_ref().map(|(id, _)| id),
                    "fork_seq": o.parent.as_ref().map(|(_, seq)| seq),
                    "source": r.source, "file": o.run_config.get("file"),
                    "model": r.model, "first_prompt": r.prompt, "cost_usd": r.cost_usd,
                    "writer_pid": journal.as_sqlite().map(|j| j.writer(&o.id)).transpose()?.flatten(),
                    "writer": journal.live_writer(&o.id)?,
                    "agent": o.run_config.get("agent"),
                }))
            })
            .collect::<Result<_, CliError>>()?;
        crate::term::json_line(&out, true).map_err(|e| CliError::Io(e.to_string()))?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        outln!("no sessions yet");
        return Ok(ExitCode::SUCCESS);
    }
    let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.overview.id.as_str()).collect();
    // A subagent sits under the session whose call it answered, as a fork under its parent.
    let parent_of = |r: &Row| -> Option<String> {
        r.overview.parent.as_ref().map(|(p, _)| p.clone()).or_else(|| {
            r.overview.run_config.get("agent").and_then(|a| a.get("parent")).and_then(Value::as_str).map(str::to_string)
        })
    };
    let children = |parent: Option<&str>| -> Vec<&Row> {
        rows.iter()
            .filter(|r| match (&parent_of(r), parent) {
                (Some(p), Some(want)) => p == want,
                (Some(p), None) => !ids.contains(p.as_str()),
                (None, want) => want.is_none(),
            })
            .collect()
    };
    let mut stack: Vec<(&Row, usize)> = children(None).into_iter().rev().map(|r| (r, 0)).collect();
    while let Some((r, depth)) = stack.pop() {
        let o = &r.overview;
        let indent = "    ".repeat(depth);
        let mark = if Some(&o.id) == last.as_ref() { "  <- last" } else { "" };
        outln!(
            "{indent}{}  {}  {:>5} steps  ${:.4}  {}  {}{mark}",
            short(&o.id),
            local_time(o.created_at_ms),
            o.steps,
            r.cost_usd,
            r.end(&journal)?,
            if r.model.is_empty() { "-" } else { r.model.as_str() },
        );
        outln!("{indent}          {}: {}", r.source, reloop_inspect::timeline::shorten(&r.prompt, 72));
        stack.extend(children(Some(&o.id)).into_iter().rev().map(|c| (c, depth + 1)));
    }
    Ok(ExitCode::SUCCESS)
}

/// What became of one transcript.
#[allow(clippy::large_enum_variant)] // one per file imported; boxing would buy nothing
enum Outcome {
    Imported {
        id: String,
        steps: usize,
        summary: reloop_import::ImportSummary,
        replaces: Option<String>,
        /// The profile chosen, and the transcript's version with whether it matched exactly.
        profile: &'static str,
        version: Option<(String, bool)>,
    },
    AlreadyImported {
        id: String,
    },
}

/// Imports one transcript, unless the same conversation of the same file is already in the
/// journal: a second import of an unchanged file is refused, never a silent duplicate.
fn import_one(journal: &mut SessionJournal, file: &Path, leaf: Option<String>) -> Result<Outcome, CliError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
    let options = reloop_import::ImportOptions::default().with_leaf(leaf);
    let mut imported = reloop_import::parse_claude_code(&text, &file.display().to_string(), &options)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    // The events hold what the import needs of the text: it goes before the core rebuilds the
    // conversation from them.
    drop(text);
    // Errors name the file as the person typed it; the journal keeps its absolute path, which
    // names it however it is typed next time.
    let origin = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf()).display().to_string();
    imported.header_run_config["file"] = Value::String(origin.clone());
    let leaf = imported.header_run_config.get("leaf").cloned();
    let earlier = journal.imports_of(&origin)?;
    if let Some((id, _)) = earlier.iter().find(|(_, config)| config.get("leaf") == leaf.as_ref()) {
        return Ok(Outcome::AlreadyImported { id: id.clone() });
    }
    let id = reloop_driver::new_session_id();
    let created = imported.at_ms.first().copied().unwrap_or(0);
    let report = reloop_import::import_into(&mut **journal, &imported, &id, created)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let replaces = earlier.last().map(|(id, _)| id.clone());
    let profile = imported.core_config.profile.name();
    let version = imported.version.clone();
    Ok(Outcome::Imported { id, steps: report.steps, summary: imported.summary, replaces, profile, version })
}

/// `reloop import claude-code FILE|DIR`: a transcript, or every transcript of a Claude Code
/// project folder (`~/.claude/projects/<project>/`).
pub fn import(journal: &JournalArg, path: &Path, leaf: Option<String>, json: bool) -> Result<ExitCode, CliError> {
    let mut journal = journal.open(&current_dir()?, super::journal::Open::Create)?;
    if !path.is_dir() {
        return match import_one(&mut journal, path, leaf)? {
            Outcome::AlreadyImported { id } => Err(CliError::Usage(format!(
                "{} is already imported as session {id} (same conversation); `reloop why {}` reads it",
                path.display(),
                short(&id)
            ))),
            outcome => {
                report(path, &outcome, json)?;
                Ok(ExitCode::SUCCESS)
            }
        };
    }
    if leaf.is_some() {
        return Err(CliError::Usage("--leaf names one conversation of one file, not of a folder".to_string()));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(CliError::Usage(format!("{} holds no .jsonl transcripts", path.display())));
    }
    let (mut imported, mut already, mut failed) = (0, 0, 0);
    for file in &files {
        match import_one(&mut journal, file, None) {
            Ok(outcome) => {
                match outcome {
                    Outcome::Imported { .. } => imported += 1,
                    Outcome::AlreadyImported { .. } => already += 1,
                }
                report(file, &outcome, json)?;
            }
            // One transcript that cannot be read does not stop the others: it is named.
            Err(e) => {
                failed += 1;
                if json {
                    print(&json!({"file": file.display().to_string(), "error": e.to_string()}))?;
                } else {
                    errln!("skipped: {e}");
                }
            }
        }
    }
    if !json {
        outln!("{imported} imported, {already} already imported, {failed} could not be imported ({})", path.display());
    }
    Ok(if imported + already == 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

fn print(value: &Value) -> Result<(), CliError> {
    crate::term::json_line(value, true).map_err(|e| CliError::Io(e.to_string()))
}

fn report(file: &Path, outcome: &Outcome, json: bool) -> Result<(), CliError> {
    match outcome {
        Outcome::AlreadyImported { id } if json => {
            print(&json!({"file": file.display().to_string(), "already_imported": id}))?
        }
        Outcome::AlreadyImported { id } => {
            outln!("{} is already imported as session {} (unchanged)", file.display(), short(id))
        }
        Outcome::Imported { id, steps, summary, replaces, profile, version } if json => print(&json!({
            "file": file.display().to_string(), "session_id": id, "steps": steps, "summary": summary,
            "newer_than": replaces, "profile": profile, "claude_code_version": version.as_ref().map(|(v, _)| v),
        }))?,
        Outcome::Imported { id, steps, summary: s, replaces, profile, version } => {
            outln!(
                "imported {} as session {id}: {steps} steps, {} prompts, {} responses, {} tool results, {} interrupts",
                file.display(),
                s.prompts,
                s.responses,
                s.tool_results,
                s.interrupts
            );
            if let Some(old) = replaces {
                outln!("  the transcript has grown since session {}: this is its newer conversation", short(old));
            }
            match version {
                Some((version, true)) => outln!("  profile {profile} (the transcript's Claude Code {version})"),
                Some((version, false)) => {
                    outln!("  profile {profile}, the nearest known to the transcript's Claude Code {version}")
                }
                None => outln!("  profile {profile}: the transcript names no Claude Code version"),
            }
        }
    }
    Ok(())
}
