//! # reloop-layout: a crate's module graph, read from its sources
//!
//! The layout tests of the workspace's crates use it to hold their shape: modules in layers
//! with no import cycle, files no longer than a reader takes in at once. It reads text, not
//! compiled code: `crate::` paths (and `super::` in files directly under `src`), grouped imports
//! one level deep, names the crate root re-exports; `#[cfg(test)]` items and test-only files are
//! left out. A directory module is one node; [`dir_graph`] reads the files inside one. Test support only: it panics on a source it cannot
//! read, since a test that cannot see the sources must fail.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file's text; a file that cannot be read fails the test using this crate.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

/// The files under `src` longer than `max` lines, with their lengths.
pub fn long_files(src: &Path, max: usize) -> Vec<(PathBuf, usize)> {
    sources(src)
        .into_iter()
        .map(|f| {
            let n = read(&f).lines().count();
            (f, n)
        })
        .filter(|(_, n)| *n > max)
        .collect()
}

/// Each module and the modules its non-test code uses.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `src`, sorted.
pub fn sources(src: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(src, &mut out);
    out.sort();
    out
}

/// `src/bash_table.rs` → `bash_table`; `src/permissions/rules.rs` → `permissions`. A directory
/// module is one node: its files share the parent's private types by design, as in reloop-core.
pub fn module_of(src: &Path, path: &Path) -> String {
    let rel: Vec<String> = path
        .strip_prefix(src)
        .unwrap_or(path)
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    rel.first().cloned().unwrap_or_default()
}

/// Files that are only test code: included as `#[cfg(test)] #[path = "x.rs"] mod x;`.
pub fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for file in files {
        let text = read(file);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if pair[0] == "#[cfg(test)]" {
                if let Some(name) = pair[1].strip_prefix("#[path = \"").and_then(|r| r.strip_suffix("\"]")) {
                    out.insert(file.parent().unwrap_or(Path::new("")).join(name));
                }
            }
        }
    }
    out
}

/// The text without comment lines and without `#[cfg(test)]` items: a one-line item (`use`,
/// `mod x;`) is dropped, a block item up to the `}` that closes it at the start of a line (as
/// rustfmt writes it).
pub fn non_test_code(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed != "#[cfg(test)]" {
            out.push(line);
            continue;
        }
        // Further attributes, then the item's first line: a one-line item ends there; a block
        // item ends at its closing `}`.
        let mut first = true;
        for item in lines.by_ref() {
            let trimmed = item.trim_start();
            if first && trimmed.starts_with("#[") {
                continue;
            }
            if first && trimmed.ends_with(';') && !trimmed.contains('{') {
                break;
            }
            first = false;
            if item == "}" {
                break;
            }
        }
    }
    out.join("\n")
}

/// The names the crate root re-exports, each with the module it comes from:
/// `pub use bash_classify::{analyze as analyze_command, Analysis}` maps `analyze_command` and
/// `Analysis` to `bash_classify`, so `crate::Analysis` is a dependency on that module.
pub fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let code = non_test_code(lib);
    for statement in code.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let Some((module, names)) = rest.split_once("::") else { continue };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// The first name of each `crate::` path (and `super::` path, in a file directly under `src`) in
/// `code`, grouped imports (`crate::{a::X, b}`) included.
pub fn named_paths(code: &str, top_level: bool) -> BTreeSet<String> {
    let prefixes: &[&str] = if top_level { &["crate::", "super::"] } else { &["crate::"] };
    names_after(code, prefixes)
}

/// The first name after each of `prefixes` (`"super::"`, ...) in `code`, grouped imports
/// (`super::{a::X, b}`) included: [`named_paths`] for a caller that chooses which paths count.
pub fn names_after(code: &str, prefixes: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in prefixes {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            // `xcrate::` or `my_super::` is another name.
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                group[..end].split(',').map(|n| n.trim().split("::").next().unwrap_or("")).collect()
            } else {
                vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("")]
            };
            out.extend(names.into_iter().filter(|n| !n.is_empty()).map(String::from));
        }
    }
    out
}

/// Which modules each module's non-test code uses, through `crate::`, `super::` or the root's
/// re-exports, for the crate whose sources are under `src` (its root is `lib.rs`).
pub fn graph(src: &Path) -> Graph {
    let files = sources(src);
    let tests = test_only_files(&files);
    let lib = read(&src.join("lib.rs"));
    let exported = reexports(&lib);
    let modules: BTreeSet<String> =
        files.iter().filter(|f| !tests.contains(*f)).map(|f| module_of(src, f)).filter(|m| m != "lib").collect();
    let mut graph = Graph::new();
    for file in files.iter().filter(|f| !tests.contains(*f)) {
        let module = module_of(src, file);
        if module == "lib" {
            continue;
        }
        let top_level = file.parent() == Some(src);
        let code = non_test_code(&read(file));
        add_uses(&mut graph, module, named_paths(&code, top_level), &modules, &exported);
    }
    graph
}

/// Records that `module` uses each of `names` that is a module, or that the root re-exports
/// from one (itself aside).
fn add_uses(
    graph: &mut Graph,
    module: String,
    names: BTreeSet<String>,
    modules: &BTreeSet<String>,
    exported: &BTreeMap<String, String>,
) {
    let used: Vec<String> = names
        .into_iter()
        .filter_map(|name| if modules.contains(&name) { Some(name) } else { exported.get(&name).cloned() })
        .filter(|m| *m != module)
        .collect();
    graph.entry(module).or_default().extend(used);
}

/// The most lines a file outside the core may hold: what a reader takes in at once.
pub const MAX_LINES: usize = 800;

/// What every library crate's layout test checks first: no file under its `src/` over
/// [`MAX_LINES`], and no import cycle between its modules. `manifest_dir` is the crate's
/// (`env!("CARGO_MANIFEST_DIR")`), `name` names it in a failure. Returns the module graph, for
/// the test to check the layers it expects to see.
pub fn checked_crate(manifest_dir: &str, name: &str) -> Graph {
    let src = Path::new(manifest_dir).join("src");
    assert_eq!(long_files(&src, MAX_LINES), vec![], "{name}: files over {MAX_LINES} lines");
    let graph = graph(&src);
    assert_acyclic(&graph, name);
    graph
}

/// Fails the test with the cycle, when `graph` (of `what`) has one.
pub fn assert_acyclic(graph: &Graph, what: &str) {
    if let Some(cycle) = find_cycle(graph) {
        panic!("module cycle in {what}: {}", cycle.join(" -> "));
    }
}

/// Which files of one directory module use which, for a module whose sources are in `dir` and
/// whose root file there is `root` (`mod.rs` for `src/cli/`): a binary's commands, say, where
/// [`graph`] would see one node. Each file but the root is a node (a subdirectory is one, as in
/// [`graph`]); `super::x` in a file directly in `dir`, or in a subdirectory's `mod.rs`, names the
/// sibling `x`, and a name the root re-exports (`pub use x::Y`) counts as `x`. The root is no
/// node: it declares and dispatches to every file, and the items it defines are the layer's floor.
/// `crate::` paths lead out of the directory and are not followed.
pub fn dir_graph(dir: &Path, root: &str) -> Graph {
    let files = sources(dir);
    let tests = test_only_files(&files);
    let root_file = dir.join(root);
    let exported = reexports(&read(&root_file));
    let kept: Vec<&PathBuf> = files.iter().filter(|f| !tests.contains(*f) && **f != root_file).collect();
    let modules: BTreeSet<String> = kept.iter().map(|f| module_of(dir, f)).collect();
    let mut graph = Graph::new();
    for file in kept {
        let module = module_of(dir, file);
        // `super::` means `dir`'s module in its own files and in a subdirectory's `mod.rs` only.
        let parent = file.parent();
        let sees_siblings =
            parent == Some(dir) || (parent.and_then(Path::parent) == Some(dir) && file.ends_with("mod.rs"));
        let code = non_test_code(&read(file));
        let names = if sees_siblings { names_after(&code, &["super::"]) } else { BTreeSet::new() };
        add_uses(&mut graph, module, names, &modules, &exported);
    }
    graph
}

/// A cycle of `graph`, as the path that closes it, if there is one.
pub fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    // Depth-first search; a node met again while still on the path closes a cycle.
    fn visit(node: &str, graph: &Graph, done: &mut BTreeSet<String>, path: &mut Vec<String>) -> Option<Vec<String>> {
        if let Some(from) = path.iter().position(|n| n == node) {
            let mut cycle = path[from..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_reader_sees_grouped_paths_super_and_reexports_but_not_tests_or_comments() {
        let code = non_test_code(
            "use crate::{event::Event, step};\n/// [`crate::doc`]\nfn f() { super::up::g(); crate::Analysis::x(); }\n\
             #[cfg(test)]\nuse crate::only_tests;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::testkit;\n}\nuse crate::after;",
        );
        let names = named_paths(&code, true);
        let expected: BTreeSet<String> =
            ["Analysis", "after", "event", "step", "up"].into_iter().map(String::from).collect();
        assert_eq!(names, expected);
        assert_eq!(named_paths("fn f() { super::up(); }", false), BTreeSet::new());
        let exported = reexports("mod a;\npub use a::{analyze as analyze_command, Analysis};\npub use b::C;");
        assert_eq!(exported.get("analyze_command").map(String::as_str), Some("a"));
        assert_eq!(exported.get("Analysis").map(String::as_str), Some("a"));
        assert_eq!(exported.get("C").map(String::as_str), Some("b"));
    }

    #[test]
    fn the_directory_reader_sees_siblings_through_super_and_the_root_s_reexports_only() {
        // A directory module on disk: a root that re-exports, files that use each other through
        // `super::`, one that uses the root's own items and the crate's other modules, a
        // subdirectory, and a test-only file.
        let dir = std::env::temp_dir().join(format!("reloop-layout-dir-graph-{}", std::process::id()));
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("mod.rs", "mod run;\nmod session;\nmod sub;\npub use session::Args;\npub enum CliError {}\n");
        write("run.rs", "use super::session::drive;\nfn f(_: super::Args) {}\n#[cfg(test)]\nmod tests {\n    use super::sub::x;\n}\n");
        write("session.rs", "use super::CliError;\nfn g() { crate::run::h(); crate::term::out(); }\n");
        write(
            "sub/mod.rs",
            "fn s() { super::session::drive(); }\n#[cfg(test)]\n#[path = \"only_tests.rs\"]\nmod only_tests;\n",
        );
        write("sub/inner.rs", "fn i() { super::run::f(); }\n");
        write("sub/only_tests.rs", "fn t() { crate::cli::run::f(); }\n");
        let graph = dir_graph(&dir, "mod.rs");
        std::fs::remove_dir_all(&dir).unwrap();
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<String>>();
        assert_eq!(graph.keys().cloned().collect::<BTreeSet<_>>(), set(&["run", "session", "sub"]));
        assert_eq!(graph["run"], set(&["session"]));
        assert_eq!(graph["session"], set(&[]));
        assert_eq!(graph["sub"], set(&["session"]));
        assert_eq!(find_cycle(&graph), None);
    }

    #[test]
    fn the_cycle_finder_finds_a_cycle_and_only_a_cycle() {
        let edges = |pairs: &[(&str, &str)]| {
            let mut graph = Graph::new();
            for (from, to) in pairs {
                graph.entry(from.to_string()).or_default().insert(to.to_string());
                graph.entry(to.to_string()).or_default();
            }
            graph
        };
        let layered = edges(&[("classify", "options"), ("options", "table"), ("classify", "table")]);
        assert_eq!(find_cycle(&layered), None);
        let cyclic = edges(&[("classify", "options"), ("options", "table"), ("table", "classify")]);
        assert_eq!(
            find_cycle(&cyclic),
            Some(vec!["classify".into(), "options".into(), "table".into(), "classify".into()])
        );
    }
}
