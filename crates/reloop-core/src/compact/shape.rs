//! The shapes a compaction gives the conversation, per profile: the messages of the summary
//! request, and the history that replaces the old one once the summary is in.
//!
//! Everything here is computed from the history alone (no file is read again, no clock is
//! asked): the date comes from the context reminder the first message carried, the files shown
//! again come from the earlier Read results, so a replay rebuilds the same history.

use std::collections::HashSet;

use crate::history::History;
use crate::message::{ContentBlock, Message, Role};
use crate::profile::{CompactRule, Reattach, RestoredDate, SummaryShape};

use super::{extract_summary, SUMMARY_CONTINUE, SUMMARY_PREAMBLE, TRANSCRIPT_NOTE};

/// How the context reminder prepended to a session's first message opens (the driver writes it).
pub const USER_CONTEXT_OPENING: &str =
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n";
/// The date line inside the context reminder, and the date message after a 2.1.332 compaction.
pub const DATE_OPENING: &str = "Today's date is ";
/// The head of a summary request cut down after it was itself too long (2.1.332's text).
pub(crate) const TRUNCATED_HEAD: &str = "[earlier conversation truncated for compaction retry]";
/// 2.1.332's last paragraph of the summary message, when messages were kept after it.
pub const KEPT_NOTE: &str = "The messages after this summary are the most recent messages from before compaction, kept verbatim. The summary was written without seeing them, so something it says has not happened yet may already have happened in them.";
/// The tool whose earlier results are shown again after a compaction, and its input's path key.
pub(crate) const READ_TOOL: (&str, &str) = ("Read", "file_path");
/// At most this many files are shown again (Claude Code's limit), newest first ...
pub(crate) const REATTACH_MAX_FILES: usize = 5;
/// ... each at most this many bytes (about Claude Code's 5,000 tokens per file); a larger
/// result is left out rather than cut.
pub const REATTACH_MAX_BYTES: usize = 20_000;

/// The messages of a summary request: the first `summarize` messages (or, head cut, a
/// marker, the date and the last exchange of them), the instruction appended to the last user
/// message (`rule.in_place`) or sent as a user message of its own. `latest`: a head-cut request
/// keeps the history's last exchange, the one a reactive compaction keeps out of the full request
/// (2.1.332 under flag 18), not the summarised messages' last.
pub fn summary_request(
    history: &History,
    summarize: usize,
    shape: SummaryShape,
    rule: &CompactRule,
    latest: bool,
) -> History {
    let mut date_last = None;
    let mut out = if shape == SummaryShape::Full {
        // The summarised messages are shared with the session's history, not copied.
        history.prefix(summarize)
    } else {
        let messages = history.messages();
        let prefix = if latest { &messages[..] } else { &messages[..summarize.min(messages.len())] };
        let mut head = vec![Message::user_text(TRUNCATED_HEAD)];
        if let Some(date) = today(&messages) {
            let date = Message::system_text(format!("{DATE_OPENING}{date}."));
            if shape == SummaryShape::HeadCutDateLast {
                // 2.1.332's third try: an empty system message where the date was, the date last.
                head.push(Message { content: Vec::new(), ..Message::system_text("") });
                date_last = Some(date);
            } else {
                head.push(date);
            }
        }
        head.extend(last_exchange(prefix).iter().map(|m| (*m).clone()));
        history.empty_like().extended(head)
    };
    match out.last() {
        Some(last) if rule.in_place && last.role == Role::User => {
            if let Some(mut last) = out.pop() {
                last.content.push(ContentBlock::text(rule.instruction));
                out.push(last);
            }
        }
        _ => out.push(Message::user_text(rule.instruction)),
    }
    if let Some(date) = date_last {
        out.push(date);
    }
    out
}

/// The shape a `summarize` command's `truncated` and `date_last` name.
pub fn shape_of(truncated: bool, date_last: bool) -> SummaryShape {
    match (truncated, date_last) {
        (false, _) => SummaryShape::Full,
        (true, false) => SummaryShape::HeadCut,
        (true, true) => SummaryShape::HeadCutDateLast,
    }
}

/// The last assistant message of `prefix` with the user message answering it, or its last
/// message alone.
fn last_exchange<'a>(prefix: &[&'a Message]) -> Vec<&'a Message> {
    match prefix {
        [.., a, u] if a.role == Role::Assistant && u.role == Role::User => vec![*a, *u],
        [.., last] => vec![*last],
        [] => Vec::new(),
    }
}

/// How a compaction shapes the history beyond its profile's [`CompactRule`], by the session's
/// flags and files.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shaping<'a> {
    /// The file the summary message points to for the details, if it names one.
    pub transcript: Option<&'a str>,
    /// The files' reminder blocks read as lines joined together, each but the last ending in a
    /// newline (2.1.332 under flag 18).
    pub joined: bool,
    /// The files' paths in the order to give them back (flag 45); without it, or for a file it
    /// does not name, the newest read first.
    pub order: Option<&'a [&'a str]>,
    /// Given back after the kept answer, the first file's call reminder is a message of its own
    /// ([`Message::sent_alone`]), the rest another (2.1.332 after a compaction by hand, flag 46).
    pub first_call_alone: bool,
    /// The files to give back as read again from disk, `(Read input, text)`, in order (flag
    /// 47), in place of what the summarised messages' Reads returned.
    pub read_again: Option<&'a [(String, String)]>,
}

/// The history after a compaction: the summary message (with what the profile gives back),
/// then the kept messages.
pub fn compacted(history: &History, summarize: usize, summary: &str, rule: &CompactRule, how: &Shaping) -> History {
    let Shaping { transcript, joined, order, first_call_alone, read_again } = *how;
    let messages = history.messages();
    let split = summarize.min(messages.len());
    let (prefix, kept) = messages.split_at(split);
    let tools = if rule.tools_used { tools_used(prefix) } else { Vec::new() };
    let text = summary_text(summary, &tools, transcript, rule.kept_note && !kept.is_empty());
    let mut out = Vec::with_capacity(kept.len() + 3);
    match rule.date {
        RestoredDate::ContextBlock => match context_block(&messages) {
            Some(block) => out.push(Message::user(vec![ContentBlock::text(block), ContentBlock::text(text)])),
            None => out.push(Message::user_text(text)),
        },
        RestoredDate::SystemMessage => {
            out.push(Message::user_text(text));
            if let Some(date) = today(&messages) {
                out.push(Message::system_text(format!("{DATE_OPENING}{date}.")));
            }
        }
        RestoredDate::None => out.push(Message::user_text(text)),
    }
    out.extend(kept.iter().map(|m| (*m).clone()));
    let reads = match read_again {
        Some(files) => files
            .iter()
            .filter(|(_, content)| content.len() <= REATTACH_MAX_BYTES)
            .map(|(input, content)| Reread { input: input.clone(), content: content.clone() })
            .collect(),
        None => recent_reads(prefix, kept, order),
    };
    if !reads.is_empty() {
        match rule.reattach {
            Reattach::None => {}
            Reattach::SystemMessage => {
                let texts: Vec<String> = reads.iter().map(|r| format!("{}\n{}", r.called(), r.result())).collect();
                out.push(Message::system_text(texts.join("\n\n")));
            }
            Reattach::ReminderBlocks => {
                let last = reads.len().saturating_sub(1);
                let blocks = reads.iter().enumerate().flat_map(|(i, r)| {
                    let end = if joined && i < last { "\n" } else { "" };
                    [
                        ContentBlock::text(format!("{}\n", crate::profile::system_reminder(&r.called()))),
                        ContentBlock::text(format!("{}{end}", crate::profile::system_reminder(&r.result()))),
                    ]
                });
                // Onto the kept tail's last user message, never onto the summary itself.
                let has_tail = out.len() > 1;
                match out.last_mut() {
                    Some(last) if last.role == Role::User && has_tail => last.content.extend(blocks),
                    Some(last) if last.role == Role::Assistant && first_call_alone => {
                        let mut blocks = blocks;
                        let first = crate::profile::system_reminder(&reads[0].called());
                        blocks.next();
                        out.push(Message { sent_alone: true, ..Message::user_text(first) });
                        out.push(Message::user(blocks.collect()));
                    }
                    _ => out.push(Message::user(blocks.collect())),
                }
            }
        }
    }
    history.empty_like().extended(out)
}

/// The summary message's text.
pub fn summary_text(summary: &str, tools_used: &[&str], transcript: Option<&str>, kept_note: bool) -> String {
    let tools = if tools_used.is_empty() {
        String::new()
    } else {
        let inner = format!("<tools-used-before-summary>{}</tools-used-before-summary>", tools_used.join(", "));
        format!("{}\n", crate::profile::system_reminder(&inner))
    };
    let transcript = transcript.map(|path| format!("\n\n{TRANSCRIPT_NOTE}{path}")).unwrap_or_default();
    let mut text =
        format!("{SUMMARY_PREAMBLE}\n\n{tools}Summary:\n{}{transcript}\n{SUMMARY_CONTINUE}", extract_summary(summary));
    if kept_note {
        text.push_str("\n\n");
        text.push_str(KEPT_NOTE);
    }
    text
}

/// The tools the summarised messages called, in the order of their first call.
fn tools_used<'a>(prefix: &[&'a Message]) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    prefix.iter().flat_map(|m| m.tool_uses()).map(|c| c.name.as_str()).filter(|name| seen.insert(*name)).collect()
}

/// The context reminder the conversation opened with: the first message's first block, or,
/// after an earlier compaction that gave it back, the summary message's.
fn context_block(messages: &[&Message]) -> Option<String> {
    let first = messages.first()?;
    first.content.iter().find_map(|b| match b {
        ContentBlock::Text(t) if t.text.starts_with(USER_CONTEXT_OPENING) => Some(t.text.clone()),
        _ => None,
    })
}

/// Today's date as the conversation was told it: from the context reminder, or from the date
/// message an earlier compaction left.
fn today(messages: &[&Message]) -> Option<String> {
    if let Some(block) = context_block(messages) {
        let start = block.find(DATE_OPENING)? + DATE_OPENING.len();
        let end = block[start..].find(".\n")? + start;
        return Some(block[start..end].to_string());
    }
    messages.iter().filter(|m| m.role == Role::System).find_map(|m| {
        let text = m.text();
        let date = text.strip_prefix(DATE_OPENING)?.strip_suffix('.')?;
        (!date.is_empty() && !date.contains('\n')).then(|| date.to_string())
    })
}

/// One earlier Read shown again.
struct Reread {
    input: String,
    content: String,
}

impl Reread {
    fn called(&self) -> String {
        format!("Called the {} tool with the following input: {}", READ_TOOL.0, self.input)
    }

    fn result(&self) -> String {
        format!("Result of calling the {} tool:\n{}", READ_TOOL.0, self.content)
    }
}

/// The files the summarised messages read successfully, one entry per file, none the kept
/// messages read again, at most [`REATTACH_MAX_FILES`]: in `order`'s order, then the newest
/// read first.
fn recent_reads(prefix: &[&Message], kept: &[&Message], order: Option<&[&str]>) -> Vec<Reread> {
    let path_of = |input: &serde_json::Value| input.get(READ_TOOL.1).and_then(|p| p.as_str()).map(str::to_string);
    let kept_paths: HashSet<String> = kept
        .iter()
        .flat_map(|m| m.tool_uses())
        .filter(|c| c.name == READ_TOOL.0)
        .filter_map(|c| path_of(&c.input))
        .collect();
    let mut calls = std::collections::HashMap::new();
    let mut reads: Vec<(String, Reread)> = Vec::new();
    for message in prefix {
        for block in &message.content {
            match block {
                ContentBlock::ToolUse(call) if call.name == READ_TOOL.0 => {
                    if let Some(path) = path_of(&call.input) {
                        calls.insert(call.id.as_str(), (path, call.input.to_string()));
                    }
                }
                ContentBlock::ToolResult(result) if !result.is_error => {
                    if let Some((path, input)) = calls.get(result.tool_use_id.as_str()) {
                        let content = result.content.as_text();
                        reads.retain(|(p, _)| p != path);
                        reads.push((path.clone(), Reread { input: input.clone(), content }));
                    }
                }
                _ => {}
            }
        }
    }
    reads.reverse();
    if let Some(order) = order {
        // A stable sort: what the order does not name keeps the newest-read-first order after it.
        reads.sort_by_key(|(path, _)| order.iter().position(|p| p == path).unwrap_or(order.len()));
    }
    reads
        .into_iter()
        .filter(|(path, read)| !kept_paths.contains(path) && read.content.len() <= REATTACH_MAX_BYTES)
        .take(REATTACH_MAX_FILES)
        .map(|(_, read)| read)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{CLAUDE_CODE_2_1_197, CLAUDE_CODE_2_1_332, RELOOP};
    use serde_json::json;

    const CONTEXT: &str = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# currentDate\nToday's date is 2026-12-01.\n\n      IMPORTANT: …\n</system-reminder>\n";

    /// prompt → Read login.ts → Grep → (kept) Read logout.ts, as e3 of the facts file runs.
    fn conversation() -> History {
        let read = |id: &str, path: &str| ContentBlock::tool_use(id, "Read", json!({"file_path": path}));
        [
            Message::user(vec![ContentBlock::text(CONTEXT), ContentBlock::text("检查登录模块")]),
            Message::assistant(vec![ContentBlock::text("Reading."), read("t1", "/w/login.ts")]),
            Message::user(vec![ContentBlock::tool_result("t1", "1\tlogin\n2\t}", false)]),
            Message::assistant(vec![ContentBlock::tool_use("t2", "Grep", json!({"pattern": "x"}))]),
            Message::user(vec![ContentBlock::tool_result("t2", "No matches", false)]),
            Message::assistant(vec![read("t3", "/w/logout.ts")]),
            Message::user(vec![ContentBlock::tool_result("t3", "1\tlogout", false)]),
        ]
        .into_iter()
        .collect()
    }

    fn texts(m: &Message) -> Vec<String> {
        m.content
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.clone(),
                other => other.type_name().to_string(),
            })
            .collect()
    }

    #[test]
    fn reloop_s_summary_request_is_the_prefix_and_a_user_message_of_its_own() {
        let request = summary_request(&conversation(), 5, SummaryShape::Full, &RELOOP.compact, false);
        assert_eq!(request.len(), 6);
        assert_eq!(texts(request.last().unwrap()), [crate::profile::COMPACT_INSTRUCTION]);
    }

    #[test]
    fn claude_code_appends_the_instruction_to_the_last_user_message_after_its_tool_result() {
        let request = summary_request(&conversation(), 5, SummaryShape::Full, &CLAUDE_CODE_2_1_332.compact, false);
        assert_eq!(request.len(), 5);
        let last = texts(request.last().unwrap());
        assert_eq!(last[0], "tool_result");
        assert!(last[1].starts_with("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n"));
        assert!(last[1].contains(" Only messages that actually came from the user (user-role turns) count"));
        assert!(!CLAUDE_CODE_2_1_197.compact.instruction.contains("user-role turns"));
    }

    #[test]
    fn a_truncated_retry_keeps_a_marker_the_date_and_the_last_exchange() {
        let request = summary_request(&conversation(), 5, SummaryShape::HeadCut, &CLAUDE_CODE_2_1_332.compact, false);
        let messages = request.messages();
        assert_eq!(texts(messages[0]), [TRUNCATED_HEAD]);
        assert_eq!((messages[1].role, texts(messages[1])), (Role::System, vec!["Today's date is 2026-12-01.".into()]));
        assert_eq!(messages[2].tool_uses().next().unwrap().name, "Grep");
        assert_eq!(texts(messages[3])[0], "tool_result");
        assert_eq!(messages.len(), 4);
    }

    #[test]
    fn the_third_2_1_332_shape_leaves_an_empty_system_message_and_puts_the_date_last() {
        // Under flag 18 the head cut keeps the history's last exchange (Read logout.ts, t3),
        // the one a reactive compaction left out of the full request.
        let request =
            summary_request(&conversation(), 5, SummaryShape::HeadCutDateLast, &CLAUDE_CODE_2_1_332.compact, true);
        let messages = request.messages();
        assert_eq!(texts(messages[0]), [TRUNCATED_HEAD]);
        assert_eq!((messages[1].role, messages[1].content.len()), (Role::System, 0));
        assert_eq!(messages[2].tool_uses().next().unwrap().id, "t3");
        assert_eq!(texts(messages[4]), ["Today's date is 2026-12-01."]);
        assert_eq!(messages.len(), 5);
    }

    #[test]
    fn the_summary_names_the_transcript_before_the_words_that_continue() {
        let text = summary_text("<summary>S</summary>", &[], Some("/h/.claude/projects/-w/id.jsonl"), false);
        assert_eq!(
            text,
            format!("{SUMMARY_PREAMBLE}\n\nSummary:\nS\n\n{TRANSCRIPT_NOTE}/h/.claude/projects/-w/id.jsonl\n{SUMMARY_CONTINUE}")
        );
    }

    #[test]
    fn after_a_2_1_197_compaction_the_context_opens_the_summary_and_read_files_follow_as_system() {
        let after =
            compacted(&conversation(), 5, "<summary>S</summary>", &CLAUDE_CODE_2_1_197.compact, &Shaping::default());
        let messages = after.messages();
        assert_eq!(messages.len(), 4);
        let summary = texts(messages[0]);
        assert_eq!(summary[0], CONTEXT);
        assert_eq!(summary[1], format!("{SUMMARY_PREAMBLE}\n\nSummary:\nS\n{SUMMARY_CONTINUE}"));
        assert_eq!(messages[3].role, Role::System);
        assert_eq!(
            texts(messages[3]),
            ["Called the Read tool with the following input: {\"file_path\":\"/w/login.ts\"}\nResult of calling the Read tool:\n1\tlogin\n2\t}"]
        );
    }

    #[test]
    fn after_a_2_1_332_compaction_the_date_is_a_system_message_and_files_are_reminders_on_the_tail() {
        let after = compacted(&conversation(), 5, "S", &CLAUDE_CODE_2_1_332.compact, &Shaping::default());
        let messages = after.messages();
        assert_eq!(messages.len(), 4);
        let summary = &texts(messages[0])[0];
        assert!(summary.starts_with(&format!(
            "{SUMMARY_PREAMBLE}\n\n<system-reminder>\n<tools-used-before-summary>Read, Grep</tools-used-before-summary>\n</system-reminder>\nSummary:\nS\n"
        )));
        assert!(summary.ends_with(&format!("{SUMMARY_CONTINUE}\n\n{KEPT_NOTE}")));
        assert_eq!((messages[1].role, texts(messages[1])), (Role::System, vec!["Today's date is 2026-12-01.".into()]));
        assert_eq!(
            texts(messages[3]),
            [
                "tool_result".to_string(),
                "<system-reminder>\nCalled the Read tool with the following input: {\"file_path\":\"/w/login.ts\"}\n</system-reminder>\n".into(),
                "<system-reminder>\nResult of calling the Read tool:\n1\tlogin\n2\t}\n</system-reminder>".into(),
            ]
        );
        // A second compaction finds the date in the message the first one left.
        let again = compacted(&after, 2, "T", &CLAUDE_CODE_2_1_332.compact, &Shaping::default());
        assert_eq!(texts(again.messages()[1]), ["Today's date is 2026-12-01."]);
    }

    #[test]
    fn reloop_s_history_after_compaction_is_unchanged() {
        let after = compacted(&conversation(), 5, "S", &RELOOP.compact, &Shaping::default());
        assert_eq!(after.len(), 3);
        assert_eq!(texts(after.messages()[0]), [crate::compact::summary_message("S")]);
    }

    #[test]
    fn files_read_again_in_the_kept_tail_or_failed_reads_are_not_shown_again() {
        let read = |id: &str, path: &str| ContentBlock::tool_use(id, "Read", json!({"file_path": path}));
        let mut history = conversation();
        history.push(Message::assistant(vec![read("t4", "/w/gone.ts")]));
        history.push(Message::user(vec![ContentBlock::tool_result("t4", "File does not exist.", true)]));
        history.push(Message::assistant(vec![read("t5", "/w/login.ts")]));
        history.push(Message::user(vec![ContentBlock::tool_result("t5", "1\tlogin", false)]));
        // The kept exchange reads login.ts again; gone.ts failed: only logout.ts comes back.
        let after = compacted(&history, 9, "S", &CLAUDE_CODE_2_1_197.compact, &Shaping::default());
        let shown = texts(after.last().unwrap()).join("");
        assert!(shown.contains("/w/logout.ts") && !shown.contains("login") && !shown.contains("gone"), "{shown}");
    }

    #[test]
    fn the_reloop_instruction_is_byte_for_byte_the_one_old_journals_recorded() {
        // FNV-1a of the text every journal before profiles sent; a change here breaks nothing
        // in replay (requests are not journaled) but would change what old sessions asked.
        let fnv = crate::profile::COMPACT_INSTRUCTION
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        assert_eq!((crate::profile::COMPACT_INSTRUCTION.len(), fnv), (1303, 0x2336_aa4f_32f7_2ce0));
    }
}
