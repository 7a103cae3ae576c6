//! The crate's shape, checked: its modules form layers with no import cycle (so each can be read
//! knowing only the ones below it), its unsafe code is all in one module, and no file outgrows
//! what a reader takes in at once.
//!
//! The layers: the calls into the operating system and the environment's allow-list at the
//! bottom; the confined command above them; the probe, which builds a command to prove the
//! sandbox works, on top.

use std::path::{Path, PathBuf};

use reloop_layout::{checked_crate, module_of, non_test_code, read, sources};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_crate_s_modules_have_no_import_cycle_and_no_file_is_over_800_lines() {
    let graph = checked_crate(env!("CARGO_MANIFEST_DIR"), "reloop-sandbox");
    // The reader saw the graph it checks: the probe runs a confined command, and both use the
    // operating system's calls.
    assert!(graph["probe"].contains("command") && graph["probe"].contains("os"), "{graph:?}");
    assert!(graph["command"].contains("os"), "{graph:?}");
    assert!(graph["os"].is_empty(), "{graph:?}");
}

#[test]
fn unsafe_code_is_only_in_the_os_module() {
    let src = src();
    let unsafe_files: Vec<String> = sources(&src)
        .into_iter()
        .filter(|file| non_test_code(&read(file)).contains("unsafe"))
        .map(|file| module_of(&src, &file))
        .collect();
    assert_eq!(unsafe_files, vec!["os".to_string()]);
}
