//! How a session's searchable texts are kept: in a few documents of its own (chunks), not one
//! row per text. A search for a word most sessions hold then matches one row per session
//! instead of one per text (14 for a short session, thousands for a long one), and the
//! document's key names its session, so the match yields sessions without reading a row.
//!
//! Texts are appended to the session's last chunk while it stays under [`CHUNK`] bytes; a
//! refresh that reads new steps of a running session rewrites at most that one chunk.

/// The most bytes of text one chunk gathers before the next starts (a text is at most
/// [`super::extract::MAX_TEXT`], so a chunk holds at least one whole).
pub const CHUNK: usize = 64 * 1024;

/// Chunks per session the key has room for: a chunk's key is `session << CHUNK_BITS | chunk`.
pub const CHUNK_BITS: u32 = 20;

/// The key of a session's chunk number `chunk` (from 0).
pub fn key(session: i64, chunk: i64) -> i64 {
    (session << CHUNK_BITS) | (chunk & ((1 << CHUNK_BITS) - 1))
}

/// What a refresh writes of a session's new texts.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Text to append to the existing last chunk (number `chunks - 1`), newline first.
    pub append: Option<String>,
    /// New chunks, numbered from the session's count before this refresh, in order.
    pub new: Vec<String>,
}

/// Where the session's chunk state stands: how many chunks, and the last one's length.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct State {
    /// Chunks written.
    pub chunks: i64,
    /// Bytes in the last.
    pub last_len: i64,
}

/// Places `texts` after `state`: into the last chunk while it has room, then into new ones.
/// Returns the plan and the state after it. A session with more chunks than its key has room
/// for (a gigabyte of text) keeps its last chunk growing rather than wrap onto another's keys.
pub fn place(state: State, texts: &[String]) -> (Plan, State) {
    let mut plan = Plan::default();
    let mut s = state;
    let room = (1i64 << CHUNK_BITS) - 1;
    for text in texts {
        let fits = s.chunks > 0 && (s.last_len as usize + 1 + text.len() <= CHUNK || s.chunks >= room);
        if fits {
            let target = match plan.new.last_mut() {
                Some(last) => last,
                None => plan.append.get_or_insert_with(String::new),
            };
            target.push('\n');
            target.push_str(text);
            s.last_len += 1 + text.len() as i64;
        } else {
            plan.new.push(text.clone());
            s.chunks += 1;
            s.last_len = text.len() as i64;
        }
    }
    (plan, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_fill_the_last_chunk_then_start_new_ones() {
        let t = |n: usize| "x".repeat(n);
        let (plan, s) = place(State::default(), &[t(10), t(20)]);
        assert_eq!(plan, Plan { append: None, new: vec![format!("{}\n{}", t(10), t(20))] });
        assert_eq!(s, State { chunks: 1, last_len: 31 });
        let (plan, s) = place(s, &[t(5), t(CHUNK - 20), t(3)]);
        assert_eq!(
            plan,
            Plan { append: Some(format!("\n{}", t(5))), new: vec![format!("{}\n{}", t(CHUNK - 20), t(3))] }
        );
        assert_eq!(s, State { chunks: 2, last_len: (CHUNK - 20 + 4) as i64 });
        assert_eq!(place(s, &[]), (Plan::default(), s), "no text, nothing written");
        assert_eq!(key(3, 2), (3 << CHUNK_BITS) | 2);
    }
}
