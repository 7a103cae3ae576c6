//! Every event of the replay corpus, as its writer spelled it, reads through `read_event`
//! (its fast readings first) to the value the ordinary `serde_json` reading gives.

use reloop_core::Event;
use reloop_journal::read_event;

#[test]
fn every_corpus_event_reads_as_the_ordinary_reading_reads_it() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/journals");
    let mut read = 0;
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let dump: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        for step in dump["steps"].as_array().expect("steps") {
            let text = step["event"].to_string();
            let ordinary: Event = serde_json::from_str(&text).expect("an event");
            assert_eq!(read_event(&text).expect("read"), ordinary, "{text}");
            read += 1;
        }
    }
    assert!(read > 200, "the corpus holds events ({read})");
}
