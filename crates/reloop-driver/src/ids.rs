use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh session id: a random UUID, as Claude Code's session ids are (the Agent SDK and its
/// apps parse them). Commands accept any unique prefix, so its first hex digits name it.
/// Sessions journaled before ids were UUIDs keep their 16-hex-digit ids.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether `id` is a UUID in its usual hyphenated form, as `--session-id` must be.
pub fn is_uuid(id: &str) -> bool {
    id.len() == 36 && uuid::Uuid::try_parse(id).is_ok()
}

/// A stable UUID for the `n`th line a session printed at step `seq`: a replay reprints the
/// same ids, and no two lines of a journal share one.
pub fn line_uuid(session_id: &str, seq: u64, n: u32) -> String {
    let name = format!("{session_id}/{seq}/{n}");
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes()).to_string()
}

/// A fresh seed for the retry jitter; it is stored in the session's config, so replays agree.
pub fn new_seed() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.finish()
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
