//! Claude Code's session files, written from the journal: `<config dir>/projects/<project>/<session>.jsonl`
//! and each subagent's `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`, where the
//! Agent SDKs' session readers (`get_session_messages`, `list_subagents`, a truncating resume)
//! look for them. The journal is the record: each file is rewritten whole from it (through
//! [`reloop_import::Exporter`]) when a query ends, so it cannot say anything the journal does not.
//! `--no-session-persistence` writes none.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reloop_driver::SessionJournal;
use reloop_import::{Exporter, Sidechain, TranscriptStyle};
use reloop_journal::SessionHeader;
use serde_json::{json, Value};

use crate::error::CliError;

/// How long a query's last step may take to reach the journal before the file is written
/// without it (the journal commits a deferred step within 100 ms).
const COMMIT_WAIT: Duration = Duration::from_secs(5);

/// Claude Code's configuration folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn config_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".claude")),
    }
}

/// The file of session `id`, whose working directory was `cwd`.
pub fn session_file(config: &Path, cwd: &str, id: &str) -> PathBuf {
    config.join("projects").join(reloop_import::project_dir_name(cwd)).join(format!("{id}.jsonl"))
}

/// The file a new session `id` in `cwd` writes (`written`) or would write, as the core names it
/// in a compaction's summary message; `None` without a configuration folder.
pub fn transcript_of(cwd: &Path, id: &str, written: bool) -> Option<reloop_core::compact::Transcript> {
    let path = session_file(&config_dir()?, &cwd.display().to_string(), id);
    Some(reloop_core::compact::Transcript { path: path.display().to_string(), written })
}

/// Writes session `id`'s file and its subagents' from `journal`, once the journal holds step
/// `last_seq` (or [`COMMIT_WAIT`] has passed).
pub fn write_session(journal: &SessionJournal, config: &Path, id: &str, last_seq: u64) -> Result<Written, CliError> {
    wait_for_step(journal, id, last_seq);
    let header = journal.header(id)?;
    let cwd = header.run_config.get("cwd").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let file = session_file(config, &cwd, id);
    let text = transcript_text(journal, &header, TranscriptStyle::session_file(None))?;
    // The file's messages carry the uuids the stream gave them, as Claude Code's do: an SDK
    // resumes at a uuid it saw live, or one `get_session_messages` returned, alike.
    let text = match super::replay::stream_lines(journal, id, &header)? {
        Some(stream) => with_stream_uuids(&text, &stream),
        None => text,
    };
    replace(&file, &text)?;
    let dir = file.with_extension("").join("subagents");
    let mut written = Written { session: file.clone(), subagents: Vec::new() };
    for sub in subagents(journal, id)? {
        let agent = reloop_import::agent_id(&sub.id);
        let child = journal.header(&sub.id)?;
        let side = Sidechain { agent_id: agent.clone(), session_id: id.to_string() };
        write_file(
            journal,
            &child,
            TranscriptStyle::session_file(Some(side)),
            &dir.join(format!("agent-{agent}.jsonl")),
        )?;
        // Who spawned it: the call it answers, and the agent above it when it is nested.
        let parent = child.run_config.pointer("/agent/parent").and_then(|v| v.as_str()).unwrap_or(id);
        let mut meta = json!({"agentType": sub.agent_type, "toolUseId": sub.tool_use_id});
        if parent != id {
            meta["parentAgentId"] = json!(reloop_import::agent_id(parent));
        }
        let bytes = serde_json::to_vec(&meta).map_err(|e| CliError::Io(e.to_string()))?;
        replace(&dir.join(format!("agent-{agent}.meta.json")), &bytes)?;
        written.subagents.push((dir.join(format!("agent-{agent}.jsonl")), meta));
    }
    Ok(written)
}

/// The files [`write_session`] wrote: the session's, and each subagent's with its metadata.
pub struct Written {
    /// The session's file.
    pub session: PathBuf,
    /// Each subagent's file and what its `.meta.json` says.
    pub subagents: Vec<(PathBuf, Value)>,
}

/// Session `id`'s entries as an SDK reads them: its file when one was written (its messages
/// carry the uuids the stream showed), else the lines the journal gives.
pub fn session_entries(journal: &SessionJournal, id: &str) -> Result<Vec<Value>, CliError> {
    let header = journal.header(id)?;
    let cwd = header.run_config.get("cwd").and_then(|v| v.as_str()).unwrap_or("");
    let text = match config_dir().map(|config| session_file(&config, cwd, id)).filter(|f| f.is_file()) {
        Some(file) => std::fs::read(&file).map_err(|e| CliError::Io(format!("cannot read {}: {e}", file.display())))?,
        None => transcript_text(journal, &header, TranscriptStyle::session_file(None))?,
    };
    Ok(text.split(|b| *b == b'\n').filter_map(|line| serde_json::from_slice(line).ok()).collect())
}

/// Every subagent under `id`, nested ones too (bounded: a journal edited into a cycle ends).
fn subagents(journal: &SessionJournal, id: &str) -> Result<Vec<reloop_journal::Subagent>, CliError> {
    let mut out = Vec::new();
    let mut stack = journal.subagents_of(id)?;
    stack.reverse();
    while let Some(sub) = stack.pop() {
        if out.len() >= 10_000 {
            break;
        }
        let mut below = journal.subagents_of(&sub.id)?;
        below.reverse();
        stack.extend(below);
        out.push(sub);
    }
    Ok(out)
}

/// Waits until `id`'s steps reach `seq`, bounded.
fn wait_for_step(journal: &SessionJournal, id: &str, seq: u64) {
    let start = Instant::now();
    while start.elapsed() < COMMIT_WAIT {
        let mut last = 0;
        let seen = journal.visit_steps(id, &mut |step| {
            last = step.seq;
            Ok(true)
        });
        if seen.is_err() || last >= seq {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The transcript of `header`'s session in `style`, written to `file` through a temporary file
/// beside it, so a reader never sees half of it.
fn write_file(
    journal: &SessionJournal,
    header: &SessionHeader,
    style: TranscriptStyle,
    file: &Path,
) -> Result<(), CliError> {
    let text = transcript_text(journal, header, style)?;
    replace(file, &text)
}

/// The transcript of `header`'s session in `style`, rebuilt from the journal.
fn transcript_text(
    journal: &SessionJournal,
    header: &SessionHeader,
    style: TranscriptStyle,
) -> Result<Vec<u8>, CliError> {
    let mut text = Vec::new();
    let mut exporter = Exporter::transcript(header, style, &mut text).map_err(|e| CliError::Io(e.to_string()))?;
    let mut failed = None;
    journal.visit_steps(&header.id, &mut |step| {
        if let Err(e) = exporter.step(&step, &mut text) {
            failed = Some(e);
            return Ok(false);
        }
        Ok(true)
    })?;
    if let Some(e) = failed {
        return Err(CliError::Io(e.to_string()));
    }
    exporter.finish(&mut text).map_err(|e| CliError::Io(e.to_string()))?;
    Ok(text)
}

/// What ties a file line to the stream line that showed the same thing: an assistant line's
/// response id and content block, a user line's first tool result.
fn match_key(line: &Value) -> Option<String> {
    let message = line.get("message")?;
    let content = message.get("content")?.as_array()?;
    match line.get("type")?.as_str()? {
        "assistant" => {
            Some(format!("a{}{}", message.get("id").and_then(Value::as_str).unwrap_or(""), content.first()?))
        }
        "user" => {
            let first = content.first()?;
            (first.get("type")? == "tool_result")
                .then(|| format!("u{}", first.get("tool_use_id").unwrap_or(&Value::Null)))
        }
        _ => None,
    }
}

/// `text`'s lines with the uuid of the stream line that showed each message (matched in order
/// by [`match_key`]), and every `parentUuid` and `sourceToolAssistantUUID` following the change. Lines the stream did not show
/// (the typed prompt, meta lines) keep theirs.
fn with_stream_uuids(text: &[u8], stream: &[Value]) -> Vec<u8> {
    let mut shown: std::collections::HashMap<String, std::collections::VecDeque<String>> = Default::default();
    for line in stream {
        if let (Some(key), Some(uuid)) = (match_key(line), line.get("uuid").and_then(Value::as_str)) {
            shown.entry(key).or_default().push_back(uuid.to_string());
        }
    }
    let mut renamed: std::collections::HashMap<String, String> = Default::default();
    let mut out = Vec::with_capacity(text.len());
    for raw in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(mut line) = serde_json::from_slice::<Value>(raw) else {
            out.extend_from_slice(raw);
            out.push(b'\n');
            continue;
        };
        if let Some(new) = match_key(&line).and_then(|k| shown.get_mut(&k)).and_then(|q| q.pop_front()) {
            if let Some(old) = line.get("uuid").and_then(Value::as_str) {
                renamed.insert(old.to_string(), new.clone());
            }
            line["uuid"] = json!(new);
        }
        for link in ["parentUuid", "sourceToolAssistantUUID"] {
            if let Some(to) = line.get(link).and_then(Value::as_str).and_then(|p| renamed.get(p)) {
                line[link] = json!(to);
            }
        }
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn replace(file: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Io(format!("cannot write {}: {e}", file.display()));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = file.with_extension("jsonl.tmp");
    let mut out = std::fs::File::create(&tmp).map_err(io)?;
    out.write_all(bytes).map_err(io)?;
    drop(out);
    std::fs::rename(&tmp, file).map_err(io)
}

/// The step of session `id` whose transcript line has `uuid` (what `get_session_messages`
/// returns, and an SDK may pass to `--resume-session-at`): the transcript is rebuilt from the
/// journal a step at a time until the line appears.
pub fn step_of_transcript_line(journal: &SessionJournal, id: &str, uuid: &str) -> Result<Option<u64>, CliError> {
    let header = journal.header(id)?;
    let mut text = Vec::new();
    let mut exporter = Exporter::transcript(&header, TranscriptStyle::session_file(None), &mut text)
        .map_err(|e| CliError::Io(e.to_string()))?;
    let needle = format!("\"uuid\":\"{uuid}\"");
    let mut found = None;
    journal.visit_steps(id, &mut |step| {
        text.clear();
        let seq = step.seq;
        if exporter.step(&step, &mut text).is_err() {
            return Ok(false);
        }
        if String::from_utf8_lossy(&text).contains(&needle) {
            found = Some(seq);
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

/// Keeps the session file up to date as a print-mode run goes: when a query ends, before its
/// `result` line is printed (an SDK that reads the session on the result finds it whole).
pub struct Persist {
    /// `None`: `--no-session-persistence`, or no configuration folder to write in.
    config: Option<PathBuf>,
    journal_arg: crate::options::JournalArg,
    base: PathBuf,
    journal: Option<SessionJournal>,
    session: String,
    seq: u64,
    /// A failure was reported already: one warning, not one per query.
    warned: bool,
    /// `--session-mirror`: where the files' new entries are sent, and what was sent.
    mirror: Option<(super::protocol::Wire, super::mirror::Mirror)>,
}

impl Persist {
    /// Session files for the run with `journal` (relative to `base`) unless `off`.
    pub fn new(off: bool, journal: crate::options::JournalArg, base: PathBuf) -> Self {
        let config = if off { None } else { config_dir() };
        Persist {
            config,
            journal_arg: journal,
            base,
            journal: None,
            session: String::new(),
            seq: 0,
            warned: false,
            mirror: None,
        }
    }

    /// Sends the files' new entries over `wire` as they are written (`--session-mirror`).
    pub fn mirroring(mut self, wire: Option<super::protocol::Wire>) -> Self {
        self.mirror = wire.map(|wire| (wire, super::mirror::Mirror::default()));
        self
    }

    /// Follows the run; writes the files when a query ends.
    pub fn on_event(&mut self, event: &reloop_driver::RunEvent) {
        use reloop_driver::RunEvent;
        match event {
            RunEvent::Started { session_id, .. } => self.session = session_id.clone(),
            RunEvent::Step { seq, .. } => self.seq = *seq,
            RunEvent::Finished(result) => {
                if result.session_id != self.session && !result.session_id.is_empty() {
                    self.session = result.session_id.clone();
                }
                if let Err(e) = self.write() {
                    if !std::mem::replace(&mut self.warned, true) {
                        crate::term::errln!("reloop: warning: the session file was not written: {e}");
                    }
                }
            }
            _ => {}
        }
    }

    fn write(&mut self) -> Result<(), CliError> {
        let Some(config) = &self.config else { return Ok(()) };
        if self.session.is_empty() {
            return Ok(());
        }
        if self.journal.is_none() {
            self.journal = Some(self.journal_arg.open(&self.base, crate::launch::journal::Open::Reading)?);
        }
        let Some(journal) = &self.journal else { return Ok(()) };
        let written = write_session(journal, config, &self.session, self.seq)?;
        if let Some((wire, mirror)) = &mut self.mirror {
            mirror.send(wire, &written);
        }
        Ok(())
    }
}

/// A printer that keeps the session file too: the file first, then the line.
pub struct Persisting<'a, P> {
    /// The session file's keeper.
    pub persist: &'a mut Persist,
    /// What prints the run.
    pub printer: &'a mut P,
}

impl<P: crate::launch::drive::ShowEvents> crate::launch::drive::ShowEvents for Persisting<'_, P> {
    fn on_event(&mut self, event: &reloop_driver::RunEvent) {
        self.persist.on_event(event);
        self.printer.on_event(event);
    }
}
