//! Writes that would reach past the memory bound: an Edit whose result would be huge is refused
//! before it is built.

mod common;

use std::time::{Duration, Instant};

use common::Workspace;
use serde_json::json;

/// The process's peak resident memory so far, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    u64::try_from(usage.ru_maxrss).expect("non-negative") * 1024
}

#[test]
fn replace_all_that_would_grow_a_200_kb_file_to_2_gb_is_refused_before_it_is_built() {
    let ws = Workspace::new();
    let file = ws.file("small.txt", "a\n".repeat(100_000));
    ws.ok("Read", json!({"file_path": file, "limit": 1}));
    let started = Instant::now();

    let input = json!({"file_path": file, "old_string": "a", "new_string": "b".repeat(20_000), "replace_all": true});
    assert_eq!(
        ws.err("Edit", input),
        "<tool_use_error>The edit would make the file 1.9GB (100000 replacements), over the maximum editable file \
         size of 64MB. Replace fewer occurrences at a time.</tool_use_error>"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "refused at once: {:?}", started.elapsed());
    assert!(peak_rss() < 512 << 20, "no gigabytes were allocated: peak {} MB", peak_rss() >> 20);
    assert_eq!(ws.read_to_string("small.txt").len(), 200_000, "the file is unchanged");
}

#[test]
fn an_edit_that_stays_under_the_bound_still_replaces_all() {
    let ws = Workspace::new();
    let file = ws.file("small.txt", "a".repeat(1_000));
    ws.ok("Read", json!({"file_path": file}));
    let input = json!({"file_path": file, "old_string": "a", "new_string": "bb", "replace_all": true});
    ws.ok("Edit", input);
    assert_eq!(ws.read_to_string("small.txt"), "b".repeat(2_000));
}
