//! Workspace-relative recordings: a session recorded in `/home/me/shop` names that folder in its
//! tool calls (`Read /home/me/shop/README.md`), its tool results and its working directory. A
//! rerun in another clone (every CI job's) maps each recorded root to today's before the
//! recording is compared or answered from, so the recorded call reads today's file instead of
//! being refused as outside the workspace. A path outside every recorded root stays as it was.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Recorded roots and what each is today, longest first so a nested root wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathMap {
    pairs: Vec<(String, String)>,
}

impl PathMap {
    /// A map of `(recorded, today)` roots; a pair that maps a root to itself, or an empty root,
    /// is dropped. Trailing slashes are ignored.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let trim = |s: String| if s.len() > 1 { s.trim_end_matches('/').to_string() } else { s };
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .map(|(old, new)| (trim(old), trim(new)))
            .filter(|(old, new)| !old.is_empty() && old != "/" && old != new)
            .collect();
        pairs.sort_by_key(|(old, _)| std::cmp::Reverse(old.len()));
        pairs.dedup_by(|a, b| a.0 == b.0);
        PathMap { pairs }
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` with every occurrence of a recorded root that names it or a path under it (the
    /// root followed by `/`, or by a character no file name would run on with) put as today's.
    pub fn text(&self, text: &str) -> String {
        if !self.pairs.iter().any(|(old, _)| text.contains(old.as_str())) {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'scan: while !rest.is_empty() {
            for (old, new) in &self.pairs {
                if let Some(after) = rest.strip_prefix(old.as_str()) {
                    if ends_a_path(after) && starts_a_path(&out) {
                        out.push_str(new);
                        rest = after;
                        continue 'scan;
                    }
                }
            }
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
        out
    }

    /// Every string inside `value` mapped ([`PathMap::text`]).
    pub fn json(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.json(v)),
            _ => {}
        }
    }

    /// `item` with every string it serializes to mapped; unchanged when nothing in it names a
    /// recorded root (or when the mapped form would not read back, which a string edit cannot cause).
    pub fn item<T: Serialize + DeserializeOwned + Clone>(&self, item: &T) -> T {
        let Ok(mut value) = serde_json::to_value(item) else { return item.clone() };
        let before = value.clone();
        self.json(&mut value);
        if value == before {
            return item.clone();
        }
        serde_json::from_value(value).unwrap_or_else(|_| item.clone())
    }
}

/// Whether a root ends where `after` begins: at a separator, or at a character no path name
/// continues with (a quote, a space, the end).
fn ends_a_path(after: &str) -> bool {
    after.chars().next().is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')))
}

/// Whether a root may begin after `before`: not inside a longer path (`/x/home/me`).
fn starts_a_path(before: &str) -> bool {
    before.chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '~')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map() -> PathMap {
        PathMap::new([("/home/me/shop/".to_string(), "/ci/build".to_string())])
    }

    #[test]
    fn a_recorded_root_and_paths_under_it_become_todays_and_nothing_else_does() {
        let m = map();
        assert_eq!(m.text("/home/me/shop"), "/ci/build");
        assert_eq!(m.text("/home/me/shop/src/a.ts:3"), "/ci/build/src/a.ts:3");
        assert_eq!(m.text("cd /home/me/shop && cat '/home/me/shop/x'"), "cd /ci/build && cat '/ci/build/x'");
        for kept in ["/home/me/shop2/a", "/home/me/shop.bak", "/x/home/me/shop/a", "/home/me/other", "shop"] {
            assert_eq!(m.text(kept), kept);
        }
        let mut input = json!({"file_path": "/home/me/shop/README.md", "n": 3, "list": ["/etc/hosts"]});
        m.json(&mut input);
        assert_eq!(input, json!({"file_path": "/ci/build/README.md", "n": 3, "list": ["/etc/hosts"]}));
    }

    #[test]
    fn the_longest_recorded_root_wins_and_identity_pairs_are_dropped() {
        let m = PathMap::new([
            ("/a".to_string(), "/x".to_string()),
            ("/a/b".to_string(), "/y".to_string()),
            ("/same".to_string(), "/same/".to_string()),
        ]);
        assert_eq!(m.text("/a/b/c /a/c"), "/y/c /x/c");
        assert_eq!(m.text("/same/z"), "/same/z");
        assert!(PathMap::new([("/r".to_string(), "/r".to_string())]).is_empty());
    }
}
