//! The journal's shape, checked: its modules form layers with no cycle, the records and the row
//! codec sit below SQLite (no database in them), and no file outgrows what a reader takes in at
//! once. A cycle hides which part is the data and which the logic over it; this test names it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reloop_layout::{checked_crate, graph, non_test_code, read};

/// Modules that hold data and its checks only: what both backends build on.
const DATA: [&str; 3] = ["record", "outcome", "codec"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_journal_s_modules_have_no_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-journal");
    // The reader saw the graph it checks: SQLite's store is above the records.
    assert!(graph["store"].contains("record") && graph["store"].contains("codec"), "{graph:?}");
}

#[test]
fn the_records_and_the_row_codec_hold_no_database() {
    let graph = graph(&src());
    for module in DATA {
        let text = read(&src().join(format!("{module}.rs")));
        assert!(!non_test_code(&text).contains("rusqlite"), "{module} uses SQLite");
        let below: BTreeSet<&str> = DATA.into_iter().chain(["error"]).collect();
        let above: Vec<&String> = graph[module].iter().filter(|m| !below.contains(m.as_str())).collect();
        assert!(above.is_empty(), "{module} depends on {above:?}, above the data");
    }
}
