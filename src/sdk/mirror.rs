//! `--session-mirror`: the session files' new entries, sent to the SDK as they are written, so
//! an app's `SessionStore` holds the session as the files do. Claude Code prints them on stdout
//! as `{"type":"transcript_mirror","filePath":…,"entries":[…]}` frames, which the SDK peels off
//! before they reach the app and flushes to the store before it yields each `result`; a
//! subagent's file is preceded by its `agent_metadata` entry (what its `.meta.json` holds), which
//! the store's subagent reads need (2.1.332, recorded: tests/sdk/recorded/).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::protocol::Wire;
use super::transcript::Written;

/// What was mirrored of each file so far.
#[derive(Default)]
pub struct Mirror {
    /// Entries sent, by file.
    sent: HashMap<PathBuf, usize>,
}

impl Mirror {
    /// Sends what `written` added since the last call, file by file.
    pub fn send(&mut self, wire: &Wire, written: &Written) {
        self.file(wire, &written.session, None);
        for (file, meta) in &written.subagents {
            self.file(wire, file, Some(meta));
        }
    }

    fn file(&mut self, wire: &Wire, file: &Path, meta: Option<&Value>) {
        // A file that cannot be read now is sent whole at the next write.
        let Ok(text) = std::fs::read_to_string(file) else { return };
        let first = !self.sent.contains_key(file);
        let sent = self.sent.entry(file.to_path_buf()).or_insert(0);
        if let (true, Some(Value::Object(meta))) = (first, meta) {
            let mut entry = Map::new();
            entry.insert("type".into(), json!("agent_metadata"));
            entry.extend(meta.clone());
            frame(wire, file, vec![Value::Object(entry)]);
        }
        // The file is written whole at each query: only the lines after those sent are parsed.
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let new: Vec<Value> = lines.iter().skip(*sent).filter_map(|l| serde_json::from_str(l).ok()).collect();
        if !new.is_empty() {
            frame(wire, file, new);
        }
        *sent = lines.len().max(*sent);
    }
}

fn frame(wire: &Wire, file: &Path, entries: Vec<Value>) {
    wire.line(&json!({"type": "transcript_mirror", "filePath": file.to_string_lossy(), "entries": entries}));
}
