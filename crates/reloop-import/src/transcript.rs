//! Reading a Claude Code transcript: its lines, and the one conversation (chain) to import.
//!
//! A transcript is a tree, not a list: every line names its `parentUuid`, checkpoint reverts
//! start new branches from an old line, and parallel tool calls hang their results off the
//! `tool_use` line each answers. The conversation is the path from a leaf back to the root, plus
//! the siblings that belong to the same responses (the other blocks of one `message.id`, and
//! the results of its tool calls), which the path alone misses.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use crate::error::ImportError;
use crate::time::parse_rfc3339_ms;

/// Line types Claude Code writes. Anything else inside a transcript is counted and skipped.
const KNOWN_TYPES: &[&str] =
    &["user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment"];

/// One line of the file: what the tree of lines needs, and the line's text. Its fields are
/// parsed again when the conversation is read ([`Line::fields`]), one line at a time: a
/// transcript's lines held parsed cost about six times the file.
#[derive(Debug)]
pub(crate) struct Line<'t> {
    /// 1-based, as editors count.
    pub no: usize,
    pub kind: String,
    pub uuid: Option<String>,
    pub parent: Option<String>,
    pub logical_parent: Option<String>,
    pub sidechain: bool,
    pub at_ms: Option<u64>,
    /// `message.id`: the other lines of the same response.
    message_id: Option<String>,
    /// An assistant line's `tool_use` ids, a user line's `tool_result` `tool_use_id`s: which
    /// results answer which calls.
    block_ids: Vec<String>,
    /// Answers this line took back (2.1.332's malformed-call reminder names the answer it
    /// retracts, which then hangs off the conversation on a branch of its own).
    retracted: Vec<String>,
    text: &'t str,
}

impl Line<'_> {
    /// The line's fields, parsed from its text (which parsed as an object when it was read).
    pub fn fields(&self) -> Fields {
        Fields(serde_json::from_str(self.text).unwrap_or_default())
    }

    pub fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }
}

/// A line's fields, parsed.
pub(crate) struct Fields(Map<String, Value>);

impl Fields {
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub fn u64_field(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }

    pub fn flag(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn object(&self, key: &str) -> Option<&Map<String, Value>> {
        self.0.get(key).and_then(Value::as_object)
    }

    pub fn array(&self, key: &str) -> Option<&Vec<Value>> {
        self.0.get(key).and_then(Value::as_array)
    }

    pub fn map(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn message(&self) -> Option<&Map<String, Value>> {
        self.0.get("message").and_then(Value::as_object)
    }

    fn message_id(&self) -> Option<&str> {
        self.message().and_then(|m| m.get("id")).and_then(Value::as_str)
    }

    fn content_blocks(&self) -> impl Iterator<Item = &Map<String, Value>> {
        self.message()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
    }

    fn block_ids<'a>(&'a self, block_type: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.content_blocks()
            .filter(move |b| b.get("type").and_then(Value::as_str) == Some(block_type))
            .filter_map(move |b| b.get(key).and_then(Value::as_str))
    }
}

/// The whole file, parsed.
#[derive(Debug)]
pub(crate) struct Transcript<'t> {
    pub lines: Vec<Line<'t>>,
    /// Lines counted but not kept: a truncated last line, duplicated uuids.
    pub dropped: BTreeMap<String, usize>,
}

impl<'t> Transcript<'t> {
    /// Parses every line and refuses files that are not Claude Code transcripts of a conversation.
    pub fn parse(text: &'t str, file: &str) -> Result<Self, ImportError> {
        let numbered: Vec<(usize, &str)> = text
            .split('\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
            .filter(|(_, l)| !l.trim().is_empty())
            .collect();
        if numbered.is_empty() {
            return Err(ImportError::Empty { file: file.to_string() });
        }
        let last_no = numbered.last().map_or(0, |(n, _)| *n);
        let mut lines = Vec::with_capacity(numbered.len());
        let mut dropped = BTreeMap::new();
        let mut seen = HashSet::new();
        for (no, line_text) in numbered {
            let value: Value = match serde_json::from_str(line_text) {
                Ok(v) => v,
                // A crash mid-write leaves the last line cut short; everything before it stands.
                Err(_) if no == last_no && no > 1 => {
                    *dropped.entry("truncated_last_line".to_string()).or_default() += 1;
                    continue;
                }
                Err(source) if no == 1 => {
                    return Err(ImportError::NotClaudeCode {
                        file: file.to_string(),
                        line: 1,
                        detail: format!("the first line is not JSON ({source}); a transcript is JSON Lines"),
                    })
                }
                Err(source) => return Err(ImportError::InvalidJson { file: file.to_string(), line: no, source }),
            };
            let Value::Object(raw) = value else {
                return Err(ImportError::MalformedLine {
                    file: file.to_string(),
                    line: no,
                    detail: "the line is JSON but not an object".to_string(),
                });
            };
            let kind = raw.get("type").and_then(Value::as_str).unwrap_or("").to_string();
            let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
            let uuid = text("uuid");
            if let Some(id) = &uuid {
                if !seen.insert(id.clone()) {
                    // Claude Code sometimes writes a line twice when a session is resumed.
                    *dropped.entry("duplicate_uuid".to_string()).or_default() += 1;
                    continue;
                }
            }
            let (parent, logical_parent) = (text("parentUuid"), text("logicalParentUuid"));
            let fields = Fields(raw);
            let block_ids = match kind.as_str() {
                "assistant" => fields.block_ids("tool_use", "id").map(str::to_string).collect(),
                "user" => fields.block_ids("tool_result", "tool_use_id").map(str::to_string).collect(),
                _ => Vec::new(),
            };
            let retracted = fields
                .array("retractedMessageUuids")
                .into_iter()
                .flatten()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect();
            lines.push(Line {
                no,
                retracted,
                uuid,
                parent,
                logical_parent,
                sidechain: fields.flag("isSidechain"),
                at_ms: fields.str_field("timestamp").and_then(parse_rfc3339_ms),
                message_id: fields.message_id().map(str::to_string),
                block_ids,
                kind,
                text: line_text,
            });
        }
        let transcript = Transcript { lines, dropped };
        transcript.check_kind(file)?;
        Ok(transcript)
    }

    fn check_kind(&self, file: &str) -> Result<(), ImportError> {
        if !self.lines.iter().any(|l| KNOWN_TYPES.contains(&l.kind.as_str())) {
            let Some(first) = self.lines.first() else {
                return Err(ImportError::Empty { file: file.to_string() });
            };
            let detail = if first.kind == "session_meta" {
                let fields = first.fields();
                let originator = fields.0.get("payload").and_then(|p| p.get("originator")).and_then(Value::as_str);
                format!(
                    "it looks like an OpenAI Codex CLI rollout (first line `session_meta`, originator {}); \
                     only Claude Code session files (~/.claude/projects/*/*.jsonl) can be imported",
                    originator.unwrap_or("unknown")
                )
            } else if first.kind.is_empty() {
                "its lines have no `type` field".to_string()
            } else {
                format!("no line has a Claude Code type (user, assistant, ...); the first is `{}`", first.kind)
            };
            return Err(ImportError::NotClaudeCode { file: file.to_string(), line: first.no, detail });
        }
        if !self.lines.iter().any(|l| l.kind == "user" || l.kind == "assistant") {
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            for l in &self.lines {
                *kinds.entry(l.kind.as_str()).or_default() += 1;
            }
            let found = kinds.iter().map(|(k, n)| format!("{k} ({n})")).collect::<Vec<_>>().join(", ");
            return Err(ImportError::NoConversation { file: file.to_string(), found: format!("{found} lines") });
        }
        Ok(())
    }

    /// Leaves: lines with a uuid that no line names as its parent.
    pub fn leaves(&self) -> Vec<usize> {
        let parents: HashSet<&str> =
            self.lines.iter().flat_map(|l| [l.parent.as_deref(), l.logical_parent.as_deref()]).flatten().collect();
        let all_sidechain = self.lines.iter().filter(|l| l.uuid.is_some()).all(|l| l.sidechain);
        (0..self.lines.len())
            .filter(|&i| {
                let l = &self.lines[i];
                l.uuid.as_deref().is_some_and(|u| !parents.contains(u)) && (all_sidechain || !l.sidechain)
            })
            .collect()
    }

    /// The default leaf: the latest by timestamp (then by position) among [`Self::leaves`].
    pub fn latest_leaf(&self) -> Option<usize> {
        self.leaves().into_iter().max_by_key(|&i| (self.lines[i].at_ms.unwrap_or(0), self.lines[i].no))
    }

    pub fn find_uuid(&self, uuid: &str) -> Option<usize> {
        self.lines.iter().position(|l| l.uuid.as_deref() == Some(uuid))
    }

    /// Where a `parentUuid` chain comes back on itself, if one does: the index of the line whose
    /// uuid closes the loop. A well-formed transcript is a tree, so every chain ends at a root;
    /// in a file whose chains all loop no line is a leaf, and in one where a leaf's chain runs
    /// into a loop the conversation has no first message. Either way the import is refused.
    pub fn cycle(&self) -> Option<usize> {
        let by_uuid = self.by_uuid();
        // Lines whose chains are known to end at a root, so each line is walked once overall.
        let mut ends = HashSet::new();
        for start in 0..self.lines.len() {
            let mut walked = Vec::new();
            let mut on_walk = HashSet::new();
            let mut at = Some(start);
            while let Some(i) = at {
                if ends.contains(&i) {
                    break;
                }
                if !on_walk.insert(i) {
                    return Some(i);
                }
                walked.push(i);
                at = self.up(i, &by_uuid);
            }
            ends.extend(walked);
        }
        None
    }

    fn by_uuid(&self) -> HashMap<&str, usize> {
        self.lines.iter().enumerate().filter_map(|(i, l)| l.uuid.as_deref().map(|u| (u, i))).collect()
    }

    /// The line the line `i` continues: its parent, or across a compaction boundary (which
    /// starts a new root) its logical parent, which continues the story.
    fn up(&self, i: usize, by_uuid: &HashMap<&str, usize>) -> Option<usize> {
        let line = &self.lines[i];
        let up = match (&line.parent, &line.logical_parent) {
            (Some(p), _) => Some(p),
            (None, Some(lp)) if line.kind == "system" => Some(lp),
            _ => None,
        };
        let up = up?;
        match by_uuid.get(up.as_str()) {
            Some(&at) => Some(at),
            // A retracted answer is not kept (2.1.332): what hung off it continues the
            // conversation from the line before it.
            None if self.lines.iter().any(|l| l.retracted.iter().any(|r| r == up)) => {
                (0..i).rev().find(|&j| self.lines[j].uuid.is_some())
            }
            None => None,
        }
    }

    /// The conversation ending at `leaf`, as indices into `lines` in file order; `Err` with the
    /// index of the line where the chain from `leaf` comes back on itself.
    pub fn chain(&self, leaf: usize) -> Result<Vec<usize>, usize> {
        let by_uuid = self.by_uuid();
        let mut set = HashSet::new();
        let mut at = Some(leaf);
        while let Some(i) = at {
            if !set.insert(i) {
                return Err(i);
            }
            at = self.up(i, &by_uuid);
        }

        // Answers the conversation took back, where the file keeps them.
        let retracted: Vec<usize> = set
            .iter()
            .flat_map(|&i| self.lines[i].retracted.iter())
            .filter_map(|u| by_uuid.get(u.as_str()).copied())
            .collect();
        set.extend(retracted);

        // Siblings the path misses: later blocks of a response already on it, and results of its
        // tool calls, as long as they descend from the conversation and not from another branch.
        loop {
            let response_ids: HashSet<&str> = set
                .iter()
                .filter(|&&i| self.lines[i].kind == "assistant")
                .filter_map(|&i| self.lines[i].message_id())
                .collect();
            let tool_ids: HashSet<&str> = set
                .iter()
                .filter(|&&i| self.lines[i].kind == "assistant")
                .flat_map(|&i| self.lines[i].block_ids.iter().map(String::as_str))
                .collect();
            let mut added = Vec::new();
            for (i, line) in self.lines.iter().enumerate() {
                if set.contains(&i) || line.uuid.is_none() {
                    continue;
                }
                let belongs = match line.kind.as_str() {
                    "assistant" => line.message_id().is_some_and(|id| response_ids.contains(id)),
                    "user" => line.block_ids.iter().any(|id| tool_ids.contains(id.as_str())),
                    _ => false,
                };
                if belongs && self.descends_from(i, &set, &by_uuid) {
                    added.push(i);
                }
            }
            if added.is_empty() {
                break;
            }
            set.extend(added);
        }
        let mut chain: Vec<usize> = set.into_iter().collect();
        chain.sort_unstable();
        Ok(chain)
    }

    fn descends_from(&self, start: usize, set: &HashSet<usize>, by_uuid: &HashMap<&str, usize>) -> bool {
        let mut at = self.lines[start].parent.as_deref().and_then(|p| by_uuid.get(p).copied());
        let mut steps = 0;
        while let Some(i) = at {
            if set.contains(&i) {
                return true;
            }
            steps += 1;
            if steps > self.lines.len() {
                return false;
            }
            at = self.lines[i].parent.as_deref().and_then(|p| by_uuid.get(p).copied());
        }
        false
    }
}
