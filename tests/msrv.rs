//! `rust-version` in the workspace's Cargo.toml is the newest one the locked dependencies ask
//! for: an older one promises a toolchain that cannot build the lock, a newer one turns away
//! toolchains that could. Bumping a dependency that needs a newer Rust fails here until the
//! workspace says so.

use std::process::Command;

use serde_json::Value;

fn version(text: &str) -> Vec<u64> {
    text.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

#[test]
fn rust_version_is_what_the_locked_dependencies_need() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: Vec<&str> = meta["workspace_members"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let mut needed: Option<(Vec<u64>, String)> = None;
    let mut declared = Vec::new();
    for package in meta["packages"].as_array().unwrap() {
        let id = package["id"].as_str().unwrap_or_default();
        let Some(rust) = package["rust_version"].as_str() else {
            assert!(!members.contains(&id), "{id} does not inherit rust-version from the workspace");
            continue;
        };
        if members.contains(&id) {
            declared.push(rust.to_string());
            continue;
        }
        let name = format!("{} {} (rust-version {rust})", package["name"], package["version"]);
        if needed.as_ref().is_none_or(|(v, _)| version(rust) > *v) {
            needed = Some((version(rust), name));
        }
    }
    let (needed, by) = needed.unwrap();
    for rust in declared {
        let mut rust = version(&rust);
        rust.resize(needed.len().max(rust.len()), 0);
        let mut needed = needed.clone();
        needed.resize(rust.len(), 0);
        assert_eq!(rust[..2], needed[..2], "rust-version should be the minor version {by} needs");
    }
}
