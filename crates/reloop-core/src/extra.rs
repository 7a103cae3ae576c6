//! The fields of a message or block that reloop keeps without reading them.
//!
//! Nearly always there are none, yet a JSON map is 72 bytes even empty, and every message and
//! content block of a session's history carries one for the session's life: a third of a tool
//! turn's memory. [`Extra`] is one pointer, null when empty, and reads and writes as the map
//! it stands for (`Deref` to [`Map`]).

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Fields kept verbatim, in order; empty costs one pointer.
#[derive(Clone, Default)]
pub struct Extra(Option<Box<Map<String, Value>>>);

impl Extra {
    /// No fields.
    pub const fn new() -> Self {
        Extra(None)
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Extra(None)
        } else {
            Extra(Some(Box::new(map)))
        }
    }
}

impl Deref for Extra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        self.0.as_deref().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
    }
}

impl DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
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
        let mut emptied = Extra::new();
        emptied.insert("id".into(), json!("m"));
        assert_eq!(emptied.get("id"), Some(&json!("m")));
        assert_ne!(emptied, Extra::new());
        emptied.clear();
        assert_eq!(emptied, Extra::new());
        assert_eq!(serde_json::to_string(&Extra::new()).unwrap(), "{}");
    }

    #[test]
    fn kept_fields_keep_their_order_through_a_round_trip() {
        let text = r#"{"z":1,"a":{"b":2},"m":null}"#;
        let extra: Extra = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&extra).unwrap(), text);
        assert!(serde_json::from_str::<Extra>("{}").unwrap().0.is_none(), "nothing allocated for none");
    }
}
