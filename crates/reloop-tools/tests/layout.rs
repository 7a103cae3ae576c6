//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), the Bash classifier's table is data that names no module, and
//! no file outgrows what a reader takes in at once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reloop_layout::{checked_crate, graph};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-tools");
    // The reader saw the graph it checks: the classifier's layers are there.
    assert!(graph["bash_classify"].contains("bash_options"), "{graph:?}");
    assert!(graph["bash_options"].contains("bash_table"), "{graph:?}");
    assert!(graph["permissions"].contains("bash_classify"), "{graph:?}");
}

#[test]
fn the_permission_decision_reads_only_the_rules_types() {
    // `decide` is pure: it names the rules' verdict types and no module that runs a tool, walks
    // the disk or starts a process.
    let graph = graph(&src());
    assert_eq!(graph["decide"], BTreeSet::from(["permissions".to_string()]), "{graph:?}");
}

#[test]
fn the_bash_table_is_data_that_names_no_module() {
    let graph = graph(&src());
    assert_eq!(graph["bash_table"], BTreeSet::new(), "bash_table must stay data, below the logic that reads it");
}
