//! The core's shape, checked: its modules form layers with no cycle, and no file outgrows what
//! a reader takes in at once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 500;

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// `src/phase/idle.rs` → `phase::idle`; `src/hook/verdict.rs` → `hook` (a directory module that
/// is not `phase` is one node).
fn module_of(path: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel: Vec<String> = path
        .strip_prefix(&src)
        .unwrap()
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match rel.as_slice() {
        [file] => file.clone(),
        [dir, file] if dir == "phase" && file != "mod" => format!("phase::{file}"),
        [dir, ..] => dir.clone(),
        [] => String::new(),
    }
}

/// The modules a file's non-test code names through `crate::`.
fn references(text: &str) -> BTreeSet<String> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    // Doc links and comments are no dependency.
    let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
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
            let sub = rest
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix("::"))
                .map(|r| r.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("").to_string());
            match (name, sub) {
                ("phase", Some(sub)) if !sub.is_empty() && sub.chars().next().is_some_and(char::is_lowercase) => {
                    out.insert(format!("phase::{sub}"));
                }
                _ => {
                    out.insert(name.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn no_file_in_the_core_is_over_500_lines() {
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
fn the_core_s_modules_have_no_cycle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources() {
        let module = module_of(&path);
        if module == "lib" {
            continue;
        }
        let refs = references(&std::fs::read_to_string(&path).unwrap());
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(refs.into_iter().filter(|r| *r != module));
    }
    // Depth-first search; a grey node met again closes a cycle.
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
    for node in graph.keys() {
        if let Some(cycle) = visit(node, &graph, &mut state, &mut Vec::new()) {
            panic!("module cycle in reloop-core: {}", cycle.join(" -> "));
        }
    }
    assert!(graph.contains_key("phase::awaiting_model") && graph.contains_key("transition"), "{graph:?}");
}

#[test]
fn the_reference_reader_sees_grouped_and_nested_paths() {
    let refs = references(
        "use crate::{event::Event, step};\nfn f() { crate::phase::idle::on(); }\n#[cfg(test)]\nuse crate::testkit;",
    );
    assert_eq!(refs, ["event", "phase::idle", "step"].into_iter().map(String::from).collect());
}
