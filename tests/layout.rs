//! The binary's shape, checked: its top-level modules, the command modules in `src/cli/` and the
//! launch path in `src/launch/` each form layers with no import cycle (so each can be read knowing
//! only the ones below it), and no file of `src/` outgrows what a reader takes in at once. And the
//! workspace's: the crates depend on each other in the layers docs/architecture.md draws, each
//! crate with its room described there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use reloop_layout::{
    assert_acyclic, dir_graph, long_files, module_of, named_paths, non_test_code, read, sources, Graph, MAX_LINES,
};

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

/// Each crate under `crates/` and the workspace crates its library depends on: its
/// `[dependencies]`, not its tests' and benches' (which may use a crate above it).
fn crate_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let manifest = entry.path().join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let text = read(&manifest);
        let section = text.split("\n[").find(|s| s.starts_with("dependencies]")).unwrap_or_default();
        let deps = section
            .lines()
            .filter_map(|l| l.split(['.', ' ', '=']).next())
            .filter(|name| name.starts_with("reloop-"))
            .map(str::to_string)
            .collect();
        out.insert(entry.file_name().to_string_lossy().into_owned(), deps);
    }
    out
}

#[test]
fn nothing_that_runs_a_session_depends_on_the_inspector() {
    let deps = crate_dependencies();
    // The reader saw what it checks: the inspector reads the driver's run config and outputs.
    assert!(deps["reloop-inspect"].contains("reloop-driver"), "{deps:?}");
    // `reloop serve`'s pages read journals as the binary's commands do, and run nothing live.
    assert!(deps["reloop-serve"].contains("reloop-inspect"), "{deps:?}");
    let users: Vec<&String> = deps
        .iter()
        .filter(|(c, d)| d.contains("reloop-inspect") && c.as_str() != "reloop-serve")
        .map(|(c, _)| c)
        .collect();
    assert!(users.is_empty(), "only the binary and reloop-serve may depend on reloop-inspect, not {users:?}");
    let serve_users: Vec<&String> = deps.iter().filter(|(_, d)| d.contains("reloop-serve")).map(|(c, _)| c).collect();
    assert!(serve_users.is_empty(), "only the binary may depend on reloop-serve, not {serve_users:?}");
}

#[test]
fn the_otel_mapping_knows_only_the_core_and_the_journal() {
    let deps = crate_dependencies();
    let expected: BTreeSet<String> = ["reloop-core", "reloop-journal"].into_iter().map(str::to_string).collect();
    assert_eq!(deps["reloop-otel"], expected, "reloop-otel reads journaled steps; it never runs a session");
}

#[test]
fn the_architecture_gives_every_crate_its_room() {
    let doc = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"));
    let rooms = doc.split("## Crates and their rooms").nth(1).expect("the crates section");
    let rooms = rooms.split("\n## ").next().unwrap_or_default();
    let missing: Vec<String> =
        crate_dependencies().into_keys().filter(|c| !rooms.contains(&format!("`{c}`"))).collect();
    assert!(missing.is_empty(), "docs/architecture.md does not describe {missing:?}");
}
