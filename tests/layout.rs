//! The binary's shape, checked: its top-level modules, the command modules in `src/cli/` and the
//! launch path in `src/launch/` each form layers with no import cycle (so each can be read knowing
//! only the ones below it), and no file of `src/` outgrows what a reader takes in at once.

use std::path::{Path, PathBuf};

use reloop_layout::{
    assert_acyclic, dir_graph, long_files, module_of, named_paths, non_test_code, read, sources, Graph,
};

const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_in_the_binary_is_over_800_lines() {
    assert_eq!(long_files(&src(), MAX_LINES), vec![], "over {MAX_LINES} lines");
}

#[test]
fn the_cli_s_modules_have_no_import_cycle() {
    let graph = dir_graph(&src().join("cli"), "mod.rs");
    assert_acyclic(&graph, "src/cli");
    // The reader saw the graph it checks: the commands sit on the helpers they share.
    assert!(graph["replay"].contains("what_if"), "{graph:?}");
    assert!(graph["show"].contains("tree"), "{graph:?}");
    assert!(graph["tree"].contains("reading"), "{graph:?}");
    assert!(graph["what_if"].contains("reading"), "{graph:?}");
    assert!(graph["replay"].contains("reading"), "{graph:?}");
}

#[test]
fn the_launch_path_s_modules_have_no_import_cycle() {
    let graph = dir_graph(&src().join("launch"), "mod.rs");
    assert_acyclic(&graph, "src/launch");
    assert!(graph["new"].contains("permissions"), "{graph:?}");
    assert!(graph["new"].contains("scripted"), "{graph:?}");
    assert!(graph["recorded"].contains("agents"), "{graph:?}");
    assert!(graph["drive"].contains("signals"), "{graph:?}");
}

/// Which top-level modules of `src/` each one uses through `crate::` (and `super::` in a file
/// directly under `src/`); `main.rs`, the root, is no node.
fn top_level_graph() -> Graph {
    let src = src();
    let files: Vec<PathBuf> = sources(&src)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "main.rs") || f.parent() != Some(src.as_path()))
        .collect();
    let modules: Vec<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = Graph::new();
    for (file, module) in files.iter().zip(&modules) {
        let used = named_paths(&non_test_code(&read(file)), file.parent() == Some(src.as_path()));
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(used.into_iter().filter(|m| modules.contains(m) && m != module));
    }
    graph
}

#[test]
fn the_binary_s_top_level_modules_have_no_import_cycle() {
    let graph = top_level_graph();
    assert_acyclic(&graph, "src");
    // Both front ends sit on the one launch path, which knows neither; the terminal is below all.
    for front in ["cli", "sdk"] {
        assert!(graph[front].contains("launch"), "{graph:?}");
        assert!(!graph["launch"].contains(front), "{graph:?}");
    }
    assert!(!graph["cli"].contains("sdk"), "{graph:?}");
    assert!(graph["term"].is_empty(), "{graph:?}");
}
