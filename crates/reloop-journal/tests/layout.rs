//! The journal's shape, checked: its modules form layers with no cycle, the records and the row
//! codec sit below SQLite (no database in them), and no file outgrows what a reader takes in at
//! once. A cycle hides which part is the data and which the logic over it; this test names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// Modules that hold data and its checks only: what both backends build on.
const DATA: [&str; 2] = ["record", "codec"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    out.sort();
    out
}

fn module_of(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Non-test code without comments: doc links and the tests' helpers are no dependency.
fn code(text: &str) -> String {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// What `lib.rs` re-exports, by name: `crate::Journal` is a reference to `store`.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in code(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, rest)) = path.split_once("::") else { continue };
        let names = rest.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',').map(|n| n.trim().rsplit("::").next().unwrap_or("")).filter(|n| !n.is_empty()) {
            out.insert(name.to_string(), module.to_string());
        }
    }
    out
}

/// The modules a file's non-test code names through `crate::`, a re-export standing for the
/// module it comes from. A name that is neither is reported, so nothing slips past unseen.
fn references(text: &str, modules: &BTreeSet<String>, reexported: &BTreeMap<String, String>) -> BTreeSet<String> {
    let code = code(text);
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').map(|n| n.trim().split("::").next().unwrap_or("")).collect()
        } else {
            vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("")]
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            let module = if modules.contains(name) {
                name.to_string()
            } else if let Some(module) = reexported.get(name) {
                module.clone()
            } else {
                panic!("`crate::{name}` is neither a module nor a re-export of lib.rs");
            };
            out.insert(module);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let reexported = reexports(&lib);
    let modules: BTreeSet<String> = sources().iter().map(|p| module_of(p)).filter(|m| m != "lib").collect();
    let mut graph = BTreeMap::new();
    for path in sources() {
        let module = module_of(&path);
        if module == "lib" {
            continue;
        }
        let mut refs = references(&std::fs::read_to_string(&path).unwrap(), &modules, &reexported);
        refs.remove(&module);
        graph.insert(module, refs);
    }
    graph
}

/// A cycle in `graph`, if it has one: depth-first, a node met again while still open closes it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let from = path.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = path[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, path) {
                return Some(cycle);
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph.keys().find_map(|node| visit(node, graph, &mut state, &mut Vec::new()))
}

#[test]
fn the_journal_s_modules_have_no_cycle() {
    let graph = graph();
    if let Some(cycle) = cycle(&graph) {
        panic!("module cycle in reloop-journal: {}", cycle.join(" -> "));
    }
    assert!(graph.contains_key("store") && graph.contains_key("record"), "{graph:?}");
}

#[test]
fn the_records_and_the_row_codec_hold_no_database() {
    let graph = graph();
    for module in DATA {
        let text = std::fs::read_to_string(src().join(format!("{module}.rs"))).unwrap();
        assert!(!code(&text).contains("rusqlite"), "{module} uses SQLite");
        let below: BTreeSet<&str> = DATA.into_iter().chain(["error"]).collect();
        let above: Vec<&String> = graph[module].iter().filter(|m| !below.contains(m.as_str())).collect();
        assert!(above.is_empty(), "{module} depends on {above:?}, above the data");
    }
}

#[test]
fn no_file_in_the_journal_is_over_800_lines() {
    let long: Vec<String> = sources()
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn the_checker_sees_a_cycle_and_resolves_re_exports() {
    let modules: BTreeSet<String> = ["store", "rows", "lock"].into_iter().map(String::from).collect();
    let reexported = reexports("mod store;\npub use store::{Journal, check};\npub use rows::Row;");
    assert_eq!(reexported["Journal"], "store");
    let refs = references(
        "use crate::{Journal, rows::Row};\nfn f() { crate::lock::take(); }\n#[cfg(test)]\nuse crate::Nothing;",
        &modules,
        &reexported,
    );
    assert_eq!(refs, ["lock", "rows", "store"].into_iter().map(String::from).collect());
    let mut graph = BTreeMap::new();
    graph.insert("store".to_string(), ["rows".to_string()].into());
    graph.insert("rows".to_string(), ["lock".to_string()].into());
    graph.insert("lock".to_string(), ["store".to_string()].into());
    assert_eq!(cycle(&graph), Some(vec!["lock", "store", "rows", "lock"].into_iter().map(String::from).collect()));
}
