//! A bare allow rule (`Edit`, `Read`, `Edit(*)`) allows the one tool it names, as in Claude Code:
//! with `--allowedTools Bash,Read,Edit,Glob,Grep` Claude Code 2.1.197 and 2.1.332 denied a Write
//! (recording `tests/print/recorded/*/tool_results/errors`, `toolu_10_WRITE` in
//! `permission_denials`), and 2.1.197's bundle compares a bare rule's name exactly. A rule with a
//! path, `Edit(src/**)`, still covers every file-editing tool, and `Read(...)` Glob and Grep.

use std::path::PathBuf;

use reloop_tools::{Decision, PermissionContext, PermissionMode, PermissionRules, ToolRegistry, Workspace};
use serde_json::{json, Value};

/// A workspace with one file, and a folder outside it.
struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    outside: PathBuf,
    registry: ToolRegistry,
}

fn fixture() -> Fixture {
    let inside = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(inside.path()).expect("canonical");
    let outside_path = std::fs::canonicalize(outside.path()).expect("canonical");
    std::fs::write(root.join("notes.txt"), "alpha\n").expect("write");
    std::fs::write(outside_path.join("notes.txt"), "alpha\n").expect("write");
    Fixture { _dirs: (inside, outside), root, outside: outside_path, registry: ToolRegistry::builtin() }
}

impl Fixture {
    fn ctx(&self, mode: PermissionMode, allow: &[&str]) -> PermissionContext {
        PermissionContext::new(
            mode,
            PermissionRules::parse(allow, &[], &[]).expect("rules"),
            Workspace::new(&self.root, &[]).expect("workspace"),
            Vec::new(),
        )
        .expect("context")
    }

    /// One call of `tool` on a file inside the workspace or outside it.
    fn input(&self, tool: &str, outside: bool) -> Value {
        let dir = if outside { &self.outside } else { &self.root };
        let file = dir.join("notes.txt").to_string_lossy().into_owned();
        let dir = dir.to_string_lossy().into_owned();
        match tool {
            "Write" => json!({"file_path": file, "content": "x\n"}),
            "Edit" => json!({"file_path": file, "old_string": "alpha", "new_string": "beta"}),
            "Read" => json!({"file_path": file}),
            "Glob" => json!({"pattern": "*.txt", "path": dir}),
            "Grep" => json!({"pattern": "alpha", "path": dir}),
            _ => json!({"command": format!("touch {file}"), "description": "writes"}),
        }
    }

    fn check(&self, ctx: &PermissionContext, tool: &str, outside: bool) -> Decision {
        ctx.check(&self.registry, tool, &self.input(tool, outside))
    }
}

const TOOLS: [&str; 6] = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];

#[test]
fn claude_codes_recorded_allow_list_lets_edit_through_and_denies_write() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Bash", "Read", "Edit", "Glob", "Grep"]);
    assert_eq!(f.check(&ctx, "Edit", false), Decision::Allow);
    let file = f.root.join("notes.txt");
    assert_eq!(
        f.check(&ctx, "Write", false),
        Decision::Deny {
            message: format!(
                "Claude requested permissions to write to {}, but you haven't granted it yet.",
                file.display()
            )
        }
    );
    // `Edit(*)` is the bare rule written another way, in Claude Code too.
    let star = f.ctx(PermissionMode::Default, &["Edit(*)"]);
    assert_ne!(f.check(&star, "Write", false), Decision::Allow);
    assert_eq!(f.check(&star, "Edit", false), Decision::Allow);
}

#[test]
fn a_rule_with_a_path_still_covers_the_whole_family() {
    let f = fixture();
    let outside = f.outside.to_string_lossy().into_owned();
    let ctx = f.ctx(PermissionMode::Default, &[&format!("Edit(/{outside}/**)"), &format!("Read(/{outside}/**)")]);
    for tool in ["Write", "Edit", "Read", "Glob", "Grep"] {
        assert_eq!(f.check(&ctx, tool, true), Decision::Allow, "{tool}");
    }
}

#[test]
fn a_bare_read_rule_does_not_let_grep_or_glob_outside() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Read"]);
    let none = f.ctx(PermissionMode::Default, &[]);
    for tool in ["Glob", "Grep"] {
        assert_ne!(f.check(&ctx, tool, true), Decision::Allow, "{tool}");
        assert_eq!(f.check(&ctx, tool, true), f.check(&none, tool, true), "{tool}");
    }
}

/// A bare allow rule never changes the decision on another tool's call: every pair of tools,
/// both spellings, inside and outside the workspace, in each mode that consults allow rules
/// (the space is small enough to walk whole, which a sampled property would not reliably reach).
#[test]
fn a_bare_allow_rule_never_allows_another_tool() {
    let f = fixture();
    for mode in [PermissionMode::Default, PermissionMode::DontAsk, PermissionMode::AcceptEdits, PermissionMode::Plan] {
        let without = f.ctx(mode, &[]);
        for named in TOOLS {
            for rule in [named.to_string(), format!("{named}(*)")] {
                let with = f.ctx(mode, &[&rule]);
                for called in TOOLS.iter().filter(|t| **t != named) {
                    for outside in [false, true] {
                        assert_eq!(
                            f.check(&with, called, outside),
                            f.check(&without, called, outside),
                            "{rule} on {called} (outside: {outside}) in {mode}"
                        );
                    }
                }
            }
        }
    }
}
