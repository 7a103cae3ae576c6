//! Writes that would reach past the workspace or the memory bound: a dangling symbolic link never
//! gets a file created through it, a hard-linked file is never changed under its other names, and
//! an Edit whose result would be huge is refused before it is built.

mod common;

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use common::Workspace;
use serde_json::json;

/// A directory standing for "outside the workspace".
fn outside() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    (dir, root)
}

fn dangling(path: &std::path::Path, target: &std::path::Path) -> String {
    format!(
        "Error: cannot write '{}': it is a symbolic link to '{}', which does not exist. Write and Edit do not \
         create files through symbolic links; use the target's own path.",
        path.display(),
        target.display()
    )
}

#[test]
fn write_through_a_dangling_symlink_creates_nothing_where_it_points() {
    let ws = Workspace::new();
    let (_keep, out) = outside();
    let target = out.join("planted.txt");
    let link = ws.path("notes.txt");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");

    assert_eq!(ws.err("Write", json!({"file_path": link, "content": "x"})), dangling(&link, &target));
    assert!(!target.exists(), "a file was created outside the workspace");
}

#[test]
fn edit_creating_through_a_dangling_symlink_creates_nothing_where_it_points() {
    let ws = Workspace::new();
    let (_keep, out) = outside();
    let target = out.join("planted.txt");
    let link = ws.path("new.txt");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");

    let input = json!({"file_path": link, "old_string": "", "new_string": "x"});
    assert_eq!(ws.err("Edit", input), dangling(&link, &target));
    assert!(!target.exists(), "a file was created outside the workspace");
}

#[test]
fn a_symlink_to_an_existing_file_is_still_written_through() {
    // The permission check sees the canonical target; the tool keeps Claude Code's behaviour.
    let ws = Workspace::new();
    ws.file("real.md", "old\n");
    std::os::unix::fs::symlink(ws.path("real.md"), ws.path("CLAUDE.md")).expect("symlink");
    ws.ok("Read", json!({"file_path": ws.path("CLAUDE.md")}));
    ws.ok("Write", json!({"file_path": ws.path("CLAUDE.md"), "content": "new\n"}));
    assert_eq!(ws.read_to_string("real.md"), "new\n");
    assert!(std::fs::symlink_metadata(ws.path("CLAUDE.md")).expect("lstat").file_type().is_symlink());
}

fn hard_linked(ws: &Workspace) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let (keep, out) = outside();
    let secret = out.join("secret.txt");
    std::fs::write(&secret, "outside content\n").expect("write");
    let inside = ws.path("linked.txt");
    if std::fs::hard_link(&secret, &inside).is_err() {
        // Two file systems: link within the workspace instead; the rule is the same.
        std::fs::write(ws.path("twin.txt"), "outside content\n").expect("write");
        std::fs::hard_link(ws.path("twin.txt"), &inside).expect("hard link");
        return (keep, ws.path("twin.txt"), inside);
    }
    (keep, secret, inside)
}

fn refused_hard_link(path: &std::path::Path) -> String {
    format!(
        "Error: cannot write '{}': it has 2 hard links, so writing it would also change the same file under its \
         other names, which may lie outside the workspace. Write and Edit do not change hard-linked files.",
        path.display()
    )
}

#[test]
fn write_and_edit_leave_a_hard_linked_file_and_its_other_names_alone() {
    let ws = Workspace::new();
    let (_keep, other, inside) = hard_linked(&ws);
    ws.ok("Read", json!({"file_path": inside}));

    assert_eq!(ws.err("Write", json!({"file_path": inside, "content": "pwned\n"})), refused_hard_link(&inside));
    let edit = json!({"file_path": inside, "old_string": "outside", "new_string": "pwned"});
    assert_eq!(ws.err("Edit", edit), refused_hard_link(&inside));

    assert_eq!(std::fs::read_to_string(&other).expect("read"), "outside content\n");
    assert_eq!(std::fs::read_to_string(&inside).expect("read"), "outside content\n", "not even truncated");
    assert_eq!(std::fs::metadata(&inside).expect("stat").nlink(), 2, "the link is left as it was");
}

/// The process's peak resident memory so far, in bytes.
#[allow(unsafe_code)]
fn peak_rss() -> u64 {
    // SAFETY: an all-zero rusage is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the live local it is given.
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
