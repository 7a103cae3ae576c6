//! `reloop import claude-code FILE|DIR` and `reloop import journal FILE`: transcripts brought
//! into the journal once each, and session dumps written back verbatim.

use std::path::{Path, PathBuf};

use reloop_driver::SessionJournal;
use serde_json::{json, Value};

use super::reading::short;
use super::{current_dir, CliError};
use crate::error::Exit;
use crate::options::{JournalArg, JsonArg};
use crate::term::{errln, outln};

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// The transcript's format: `claude-code`.
    #[arg(value_enum)]
    pub format: ImportFormat,
    /// The transcript (`~/.claude/projects/<project>/<session>.jsonl`), (claude-code) a folder of them,
    /// or a session dump.
    pub file: PathBuf,
    /// Import the conversation that ends at this line's uuid instead of the latest one.
    #[arg(long)]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub journal: JournalArg,
    #[command(flatten)]
    pub json: JsonArg,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    ClaudeCode,
    /// A session dump written by `reloop export --format journal`.
    Journal,
}

pub fn run(args: ImportArgs) -> Result<Exit, CliError> {
    match args.format {
        ImportFormat::ClaudeCode => transcripts(&args.journal, &args.file, args.leaf, args.json.json),
        ImportFormat::Journal => dump(&args.journal, &args.file, args.json.json),
    }
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
    import_as(journal, file, leaf, None)
}

/// [`import_one`], as the subagent of a session (`agent`: the parent, the call it answered and
/// the agent's type, as a native subagent session records them).
fn import_as(
    journal: &mut SessionJournal,
    file: &Path,
    leaf: Option<String>,
    agent: Option<Value>,
) -> Result<Outcome, CliError> {
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
    if let Some(agent) = agent {
        imported.header_run_config["agent"] = agent;
    }
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

/// The session a command that goes on from a transcript (`fork FILE`) starts from: the import of
/// `file` into `journal`, or the one made earlier of the same conversation.
pub(crate) fn adopt(journal: &mut SessionJournal, file: &Path) -> Result<String, CliError> {
    Ok(match import_one(journal, file, None)? {
        Outcome::Imported { id, .. } | Outcome::AlreadyImported { id } => id,
    })
}

/// The subagents' transcripts of the session `file` holds: `<session>/subagents/agent-*.jsonl`
/// beside it (or `subagents/` beside it, as recordings keep them), each with the call it
/// answered and its type from its `.meta.json`.
fn subagent_files(file: &Path) -> Vec<(PathBuf, Value)> {
    let Some(dir) = file.parent() else { return Vec::new() };
    let stem = file.file_stem().map(|s| dir.join(s).join("subagents"));
    let mut found = Vec::new();
    for folder in stem.into_iter().chain([dir.join("subagents")]) {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        for path in files {
            let meta: Value = std::fs::read_to_string(path.with_extension("meta.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            found.push((path, meta));
        }
        if !found.is_empty() {
            break;
        }
    }
    found
}

/// Imports the subagents of the session just imported as `parent`, each linked to it as a
/// native subagent session is, so `why`, `sessions` and `view` show them under it.
fn import_subagents(journal: &mut SessionJournal, file: &Path, parent: &str, json: bool) -> Result<(), CliError> {
    for (path, meta) in subagent_files(file) {
        let field = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let agent = json!({"parent": parent, "tool_use_id": field("toolUseId"), "agent_type": field("agentType")});
        match import_as(journal, &path, None, Some(agent)) {
            Ok(Outcome::Imported { id, steps, .. }) if json => print(&json!({
                "file": path.display().to_string(), "session_id": id, "steps": steps, "subagent_of": parent,
                "tool_use_id": field("toolUseId"),
            }))?,
            Ok(Outcome::Imported { id, steps, .. }) => outln!(
                "  subagent {} ({} for {}): {steps} steps, from {}",
                short(&id),
                field("agentType"),
                field("toolUseId"),
                path.display()
            ),
            Ok(Outcome::AlreadyImported { .. }) => {}
            Err(e) => errln!("skipped subagent: {e}"),
        }
    }
    Ok(())
}

/// `reloop import claude-code FILE|DIR`: a transcript, or every transcript of a Claude Code
/// project folder (`~/.claude/projects/<project>/`).
fn transcripts(journal: &JournalArg, path: &Path, leaf: Option<String>, json: bool) -> Result<Exit, CliError> {
    let mut journal = journal.open(&current_dir()?, crate::launch::journal::Open::Create)?;
    if !path.is_dir() {
        return match import_one(&mut journal, path, leaf)? {
            Outcome::AlreadyImported { id } => Err(CliError::Usage(format!(
                "{} is already imported as session {id} (same conversation); `reloop why {}` reads it",
                path.display(),
                short(&id)
            ))),
            outcome => {
                report(path, &outcome, json)?;
                if let Outcome::Imported { id, .. } = &outcome {
                    import_subagents(&mut journal, path, id, json)?;
                }
                Ok(Exit::Success)
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
                if let Outcome::Imported { id, .. } = &outcome {
                    import_subagents(&mut journal, file, id, json)?;
                }
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
    Ok(if imported + already == 0 { Exit::BadInput } else { Exit::Success })
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

/// `reloop import journal FILE`: a session dump, written verbatim. The dump is read twice, a
/// step at a time: checked whole before the journal is opened, then written (see
/// `reloop_journal::load_dump`); a pipe is copied to a temporary file first (`Rereadable`).
fn dump(journal: &JournalArg, file: &Path, json: bool) -> Result<Exit, CliError> {
    let cannot_read = |e: std::io::Error| CliError::Usage(format!("cannot read {}: {e}", file.display()));
    let bad = |e: reloop_journal::JournalError| match e {
        reloop_journal::JournalError::Dump(_) => CliError::Usage(format!("{}: {e}", file.display())),
        e => e.into(),
    };
    let dump = super::reread::Rereadable::open(file).map_err(cannot_read)?;
    let open = || dump.read().map_err(cannot_read);
    let head = reloop_journal::DumpHead::read(open()?).map_err(bad)?;
    let mut journal = journal.open(&current_dir()?, crate::launch::journal::Open::Create)?;
    let id = reloop_journal::load_dump(&mut *journal, &head, open()?).map_err(bad)?;
    if json {
        print(&json!({"session_id": id, "steps": head.steps}))?;
    } else {
        outln!("imported {} as session {id}: {} steps", file.display(), head.steps);
    }
    Ok(Exit::Success)
}
