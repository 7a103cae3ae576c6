//! Claude Code sends no two user messages in a row: before each request its
//! `normalizeMessagesForAPI` folds a run of them into one (`mergeUserMessages`), its blocks in
//! order but for a `"\n"` added to a text block that a text block follows (`joinTextAtSeam`,
//! so `"2 + 2"` and `"3 + 3"` do not reach the model as `"2 + 23 + 3"`), then the tool results
//! first (`hoistToolResults`). Both recorded versions do (`interrupt/during_tool`: the
//! interrupted call's result, `[Request interrupted by user for tool use]\n` and the next
//! prompt, in one message). Only the request is shaped so: the history keeps its messages.

use std::ops::Range;

use reloop_core::{ContentBlock, Message, Role};

/// The messages of each message sent, as ranges of `messages`: a run of user messages is one
/// when `merge` is on, every other message its own, and so is one sent alone
/// ([`Message::sent_alone`]). Walked as the body is written.
pub(super) fn groups<'a>(messages: &'a [&'a Message], merge: bool) -> impl Iterator<Item = Range<usize>> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = messages.get(start)?;
        let mut end = start + 1;
        if merge && first.role == Role::User && !first.sent_alone {
            end += messages[end..].iter().take_while(|m| m.role == Role::User && !m.sent_alone).count();
        }
        Some(std::mem::replace(&mut start, end)..end)
    })
}

/// One block of a merged message: the history's block, and whether it is sent with `"\n"` after
/// its text (a text block a text block follows) or carries the cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Merged<'a> {
    pub block: &'a ContentBlock,
    pub seam: bool,
    pub cached: bool,
}

/// The blocks of `members` merged as Claude Code merges them. `cached`: which member carries
/// the breakpoint; on the group's last member it goes to the merged message's last block, as
/// Claude Code marks the message it sends, otherwise to that member's last block.
pub(super) fn blocks<'a>(members: &[&'a Message], cached: Option<usize>) -> Vec<Merged<'a>> {
    let mut out: Vec<Merged<'a>> = Vec::new();
    let last_member = members.len().saturating_sub(1);
    for (m, member) in members.iter().enumerate() {
        if let (Some(before), Some(ContentBlock::Text(_))) = (out.last_mut(), member.content.first()) {
            before.seam = matches!(before.block, ContentBlock::Text(_));
        }
        let count = member.content.len();
        out.extend(member.content.iter().enumerate().map(|(b, block)| Merged {
            block,
            seam: false,
            cached: cached == Some(m) && m != last_member && b + 1 == count,
        }));
    }
    // hoistToolResults: a stable partition, the tool results first.
    let (mut merged, rest): (Vec<Merged<'a>>, Vec<Merged<'a>>) =
        out.into_iter().partition(|b| matches!(b.block, ContentBlock::ToolResult(_)));
    merged.extend(rest);
    if cached == Some(last_member) {
        if let Some(last) = merged.last_mut() {
            last.cached = true;
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(blocks: &[Merged<'_>]) -> Vec<String> {
        blocks
            .iter()
            .map(|b| match b.block {
                ContentBlock::Text(t) => format!("{}{}", t.text, if b.seam { "\\n" } else { "" }),
                ContentBlock::ToolResult(r) => format!("result {}", r.tool_use_id),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_run_of_user_messages_is_one_message_and_nothing_else_is() {
        let user = Message::user_text("u");
        let answer = Message::assistant(vec![ContentBlock::text("a")]);
        let system = Message::system_text("s");
        let all = [&user, &user, &answer, &user, &system, &user, &user, &user];
        assert_eq!(groups(&all, true).collect::<Vec<_>>(), vec![0..2, 2..3, 3..4, 4..5, 5..8]);
        assert_eq!(groups(&all, false).count(), all.len(), "off: as the history holds them");
        // 2.1.332's first reminder a compaction by hand gave back goes alone (flag 46).
        let alone = Message { sent_alone: true, ..Message::user_text("called") };
        let all = [&answer, &alone, &user, &user];
        assert_eq!(groups(&all, true).collect::<Vec<_>>(), vec![0..1, 1..2, 2..4]);
        let all = [&user, &alone, &user];
        assert_eq!(groups(&all, true).collect::<Vec<_>>(), vec![0..1, 1..2, 2..3]);
    }

    /// `interrupt/during_tool`: the stopped call's result and the interrupt's words, then the
    /// next prompt; the breakpoint on the prompt, the last block sent.
    #[test]
    fn texts_meeting_at_a_seam_are_parted_by_a_newline_and_results_go_first() {
        let interrupted = Message::user(vec![
            ContentBlock::tool_result("t1", "rejected", true),
            ContentBlock::text("[Request interrupted by user for tool use]"),
        ]);
        let next = Message::user_text("继续");
        let merged = blocks(&[&interrupted, &next], Some(1));
        assert_eq!(texts(&merged), ["result t1", "[Request interrupted by user for tool use]\\n", "继续"]);
        assert_eq!(merged.iter().map(|b| b.cached).collect::<Vec<_>>(), [false, false, true]);
        let late_result = Message::user(vec![ContentBlock::tool_result("t2", "x", false)]);
        let merged = blocks(&[&next, &late_result, &next], None);
        assert_eq!(texts(&merged), ["result t2", "继续", "继续"], "no seam beside a result; hoisted");
        assert!(merged.iter().all(|b| !b.cached));
    }

    #[test]
    fn a_breakpoint_on_an_earlier_member_stays_on_its_last_block() {
        let first = Message::user(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        let second = Message::user_text("c");
        let merged = blocks(&[&first, &second], Some(0));
        assert_eq!(texts(&merged), ["a", "b\\n", "c"]);
        assert_eq!(merged.iter().map(|b| b.cached).collect::<Vec<_>>(), [false, true, false]);
    }
}
