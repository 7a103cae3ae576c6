//! The fields of a message or block that reloop keeps without reading them.
//!
//! Nearly always there are none, and every message and content block of a session's history
//! carries them for the session's life. A response's message keeps two (`id`, `model`): as a
//! JSON map they cost about 470 bytes a turn (the map, its index, four small strings), a third
//! of a tool turn's memory; as the map's compact JSON, about 60. [`Extra`] is one pointer, null
//! when empty, to that text. Reading a field parses it; nothing on the loop's path does but
//! the digest, which takes the text as it is.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Fields kept verbatim, in order, as their compact JSON; empty costs one pointer.
// A `Box<str>` or a `String` would be two or three words in every message and block, most of
// which keep nothing; the boxed `String` is one, at one more allocation for the few that do.
#[expect(clippy::box_collection, reason = "one word inline: see above")]
#[derive(Clone, Default)]
pub struct Extra(Option<Box<String>>);

impl Extra {
    /// No fields.
    pub const fn new() -> Self {
        Extra(None)
    }

    /// It keeps no field.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The fields, as a map.
    pub fn to_map(&self) -> Map<String, Value> {
        // The text is what serde_json wrote for a map, so it reads back as one.
        self.0.as_deref().and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default()
    }

    /// The field `key`'s value.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.0.as_ref()?;
        self.to_map().remove(key)
    }

    /// Sets the field `key` (last, if it is new), giving back the value it replaces.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        let mut map = self.to_map();
        let old = map.insert(key.into(), value);
        *self = Extra::from(map);
        old
    }

    /// The fields as serde_json writes them inside a map, without the braces
    /// (`"id":"msg_1","model":"m"`); `None` when there are none.
    pub fn json_fields(&self) -> Option<&str> {
        let text = self.0.as_deref()?;
        text.strip_prefix('{').and_then(|t| t.strip_suffix('}'))
    }

    /// Fields whose values are strings, written straight to their text (a response's `id` and
    /// `model`, once a turn) rather than through a map. Keys are distinct.
    pub fn of_strings(fields: &[(&str, &str)]) -> Self {
        if fields.is_empty() {
            return Extra(None);
        }
        let mut text = Vec::with_capacity(2 + fields.iter().map(|(k, v)| k.len() + v.len() + 6).sum::<usize>());
        text.push(b'{');
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                text.push(b',');
            }
            // Writing a string into a vector cannot fail.
            let _ = serde_json::to_writer(&mut text, key);
            text.push(b':');
            let _ = serde_json::to_writer(&mut text, value);
        }
        text.push(b'}');
        // serde_json writes UTF-8.
        Extra(String::from_utf8(text).ok().map(Box::new))
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            return Extra(None);
        }
        // A map of strings and JSON values always serializes.
        match serde_json::to_string(&map) {
            Ok(mut text) => {
                text.shrink_to_fit();
                Extra(Some(Box::new(text)))
            }
            Err(_) => Extra(None),
        }
    }
}

impl PartialEq for Extra {
    /// As maps: the same fields in another order are equal, as they were in a map.
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.to_map() == other.to_map()
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_map().fmt(f)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            // Flattened into its message or block, an empty map writes nothing.
            None => s.serialize_map(Some(0))?.end(),
            Some(_) => self.to_map().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::deserialize(d).map(Extra::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_is_one_null_pointer_and_equal_to_an_emptied_one() {
        assert_eq!(std::mem::size_of::<Extra>(), std::mem::size_of::<usize>());
        let mut kept = Extra::new();
        assert_eq!(kept.insert("id", json!("m")), None);
        assert_eq!(kept.get("id"), Some(json!("m")));
        assert_eq!(kept.get("model"), None);
        assert_ne!(kept, Extra::new());
        assert_eq!(Extra::from(Map::new()), Extra::new());
        assert!(Extra::new().is_empty() && !kept.is_empty());
        assert_eq!(serde_json::to_string(&Extra::new()).unwrap(), "{}");
    }

    #[test]
    fn kept_fields_keep_their_order_through_a_round_trip() {
        let text = r#"{"z":1,"a":{"b":[2,0.1]},"m":null}"#;
        let extra: Extra = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&extra).unwrap(), text);
        assert_eq!(extra.json_fields(), Some(&text[1..text.len() - 1]));
        assert!(serde_json::from_str::<Extra>("{}").unwrap().0.is_none(), "nothing allocated for none");
        // Pretty-printed, as a map is.
        let map: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string_pretty(&extra).unwrap(), serde_json::to_string_pretty(&map).unwrap());
    }

    #[test]
    fn a_field_set_again_keeps_its_place_and_the_same_fields_in_any_order_are_equal() {
        let mut extra = Extra::from(json!({"id": "a", "model": "m"}).as_object().unwrap().clone());
        assert_eq!(extra.insert("id", json!("b")), Some(json!("a")));
        assert_eq!(extra.json_fields(), Some(r#""id":"b","model":"m""#));
        let reordered = Extra::from(json!({"model": "m", "id": "b"}).as_object().unwrap().clone());
        assert_eq!(extra, reordered);
        assert_eq!(format!("{extra:?}"), format!("{:?}", extra.to_map()));
    }

    #[test]
    fn string_fields_written_straight_are_the_maps_text() {
        for fields in [vec![], vec![("id", "msg_1")], vec![("id", "m\"\n\u{1}é\\"), ("model", "claude")]] {
            let map: Map<String, Value> = fields.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            let straight = Extra::of_strings(&fields);
            assert_eq!(straight.0, Extra::from(map).0, "{fields:?}");
        }
    }
}
