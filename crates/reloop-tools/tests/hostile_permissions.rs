//! The permission layer against a hostile model: Bash paths checked like Read's, deny rules
//! that cover every way to a file, protected configuration, and filtered Grep/Glob results.

use std::path::PathBuf;

use reloop_tools::{
    Decision, PermissionContext, PermissionMode, PermissionRules, ToolContext, ToolRegistry, Workspace,
};
use serde_json::{json, Value};

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    outside: PathBuf,
    registry: ToolRegistry,
}

fn fixture() -> Fixture {
    let (inside, outside) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
    let root = std::fs::canonicalize(inside.path()).expect("canonical");
    let outside_path = std::fs::canonicalize(outside.path()).expect("canonical");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("write");
    std::fs::write(root.join("secret.txt"), "password=hunter2\n").expect("write");
    std::fs::write(root.join("notes.md"), "password is elsewhere\n").expect("write");
    std::fs::write(outside_path.join("secret"), "s\n").expect("write");
    Fixture { _dirs: (inside, outside), root, outside: outside_path, registry: ToolRegistry::builtin() }
}

impl Fixture {
    fn ctx(&self, mode: PermissionMode, allow: &[&str], deny: &[&str]) -> PermissionContext {
        let rules = PermissionRules::parse(allow, deny, &[]).expect("rules");
        PermissionContext::new(mode, rules, Workspace::new(&self.root, &[]).expect("workspace"), Vec::new())
            .expect("context")
    }

    fn bash(&self, ctx: &PermissionContext, command: &str) -> Decision {
        ctx.check(&self.registry, "Bash", &json!({ "command": command }))
    }

    fn tool(&self, ctx: &PermissionContext, tool: &str, input: Value) -> Decision {
        ctx.check(&self.registry, tool, &input)
    }
}

const NEEDS_APPROVAL: &str = "This command requires approval";

fn deny(text: &str) -> Decision {
    Decision::Deny { message: text.to_string() }
}

#[test]
fn a_read_only_command_reading_outside_the_workspace_needs_approval() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &[], &[]);
    let outside = f.outside.join("secret");
    for command in [
        "cat ../secret".to_string(),
        format!("cat {}", outside.display()),
        "cat ~/.bashrc".into(),
        "cat /etc/shadow".into(),
        "find / -name x".into(),
        "cat /proc/self/environ".into(),
        "cd / && ls".into(),
        "cd /etc && cat shadow".into(),
        "cd nowhere || cat ../secret".into(),
        "head -n 1 < /etc/passwd".into(),
        "grep -f /etc/passwd x".into(),
        "wc -l /etc/*".into(),
        "ls ~root".into(),
        "git -C / status".into(),
    ] {
        assert_eq!(f.bash(&ctx, &command), deny(NEEDS_APPROVAL), "{command}");
    }
    for command in ["cat src/main.rs", "ls", "cd src && cat main.rs", "grep -rn fn .", "find . -name '*.rs'"] {
        assert_eq!(f.bash(&ctx, command), Decision::Allow, "{command}");
    }
}

#[test]
fn an_add_dir_folder_counts_as_inside() {
    let f = fixture();
    let workspace = Workspace::new(&f.root, std::slice::from_ref(&f.outside)).expect("workspace");
    let ctx = PermissionContext::new(PermissionMode::Default, PermissionRules::default(), workspace, Vec::new())
        .expect("context");
    assert_eq!(f.bash(&ctx, &format!("cat {}/secret", f.outside.display())), Decision::Allow);
}

#[test]
fn a_read_deny_rule_covers_bash_commands_that_name_or_walk_over_the_file() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &[], &["Read(./secret.txt)"]);
    let denied = deny("Permission to use Bash has been denied.");
    for command in [
        "cat secret.txt",
        "cat secr*",
        "cat ./src/../secret.txt",
        "head -1 < secret.txt",
        "rg password",
        "grep -r password .",
        "cp secret.txt x",
    ] {
        assert_eq!(f.bash(&ctx, command), denied, "{command}");
    }
    assert_eq!(f.bash(&ctx, "cat notes.md"), Decision::Allow);
    assert_eq!(f.bash(&ctx, "grep -r fn src"), Decision::Allow, "a walk that cannot reach the file");
    // Even bypassPermissions keeps deny rules.
    let bypass = f.ctx(PermissionMode::BypassPermissions, &[], &["Read(./secret.txt)"]);
    assert_eq!(f.bash(&bypass, "cat secret.txt"), denied);
}

#[test]
fn an_edit_deny_rule_covers_write_edit_and_bash_writes() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::BypassPermissions, &[], &["Edit(./src/**)"]);
    let main = f.root.join("src/main.rs");
    assert_eq!(
        f.tool(&ctx, "Write", json!({"file_path": main, "content": "x"})),
        deny("Permission to use Write has been denied.")
    );
    assert_eq!(
        f.tool(&ctx, "Edit", json!({"file_path": main, "old_string": "a", "new_string": "b"})),
        deny("Permission to use Edit has been denied.")
    );
    for command in [
        "echo x > src/main.rs",
        "sort -o src/main.rs notes.md",
        "sort -osrc/main.rs notes.md",
        "sort --output=src/main.rs notes.md",
        "rm -rf src",
        "mv notes.md src/n.md",
    ] {
        assert_eq!(f.bash(&ctx, command), deny("Permission to use Bash has been denied."), "{command}");
    }
}

#[test]
fn protected_configuration_needs_approval_even_in_accept_edits_and_under_a_bare_allow_rule() {
    let f = fixture();
    let git_config = f.root.join(".git/config");
    let write_to = |p: &std::path::Path| {
        deny(&format!("Claude requested permissions to write to {}, but you haven't granted it yet.", p.display()))
    };
    for ctx in [f.ctx(PermissionMode::AcceptEdits, &[], &[]), f.ctx(PermissionMode::Default, &["Edit", "Write"], &[])] {
        for rel in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".bashrc",
            ".envrc",
            ".reloop/settings.json",
            ".claude/settings.json",
            ".mcp.json",
        ] {
            let path = f.root.join(rel);
            assert_eq!(f.tool(&ctx, "Write", json!({"file_path": path, "content": "x"})), write_to(&path), "{rel}");
        }
        assert_eq!(
            f.tool(&ctx, "Write", json!({"file_path": f.root.join("src/new.rs"), "content": "x"})),
            Decision::Allow
        );
    }
    // A rule that names the file allows it, and so does bypassPermissions.
    let named = f.ctx(PermissionMode::AcceptEdits, &["Edit(./.git/config)"], &[]);
    assert_eq!(
        f.tool(&named, "Edit", json!({"file_path": git_config, "old_string": "a", "new_string": "b"})),
        Decision::Allow
    );
    let bypass = f.ctx(PermissionMode::BypassPermissions, &[], &[]);
    assert_eq!(f.tool(&bypass, "Write", json!({"file_path": git_config, "content": "x"})), Decision::Allow);
    // A Bash rule for a writing command does not reach protected files.
    let sort = f.ctx(PermissionMode::Default, &["Bash(sort:*)"], &[]);
    assert_eq!(f.bash(&sort, "sort -o .git/config notes.md"), deny(NEEDS_APPROVAL));
    assert_eq!(f.bash(&sort, "sort -o out.txt notes.md"), Decision::Allow);
}

#[test]
fn a_read_only_segment_inside_a_rule_allowed_command_must_read_inside() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Bash(npm test:*)"], &[]);
    assert_eq!(f.bash(&ctx, "npm test && cat src/main.rs"), Decision::Allow);
    assert_eq!(f.bash(&ctx, "npm test && cat /etc/shadow"), deny(NEEDS_APPROVAL));
    // The segment is judged as the glob it is, not as a quoted literal word.
    std::fs::write(f.root.join("a.txt"), "a\n").expect("write");
    std::fs::write(f.root.join("b.txt"), "b\n").expect("write");
    assert_eq!(f.bash(&ctx, "npm test && uniq [ab].txt"), deny(NEEDS_APPROVAL));
    assert_eq!(f.bash(&ctx, "npm test && uniq '[ab].txt'"), Decision::Allow);
}

#[test]
fn grep_and_glob_leave_out_what_a_read_deny_rule_hides() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &[], &["Read(./secret.txt)"]);
    let mut tool_ctx = ToolContext::new(f.root.clone());
    tool_ctx.hidden = ctx.read_filter();
    let grep = f.registry.execute("Grep", &json!({"pattern": "password", "output_mode": "content"}), &tool_ctx);
    assert_eq!(grep.content, "notes.md:1:password is elsewhere");
    let glob = f.registry.execute("Glob", &json!({"pattern": "*"}), &tool_ctx);
    assert!(!glob.content.contains("secret.txt"), "{}", glob.content);
    assert!(glob.content.contains("notes.md"), "{}", glob.content);
    assert!(f.ctx(PermissionMode::Default, &[], &["Read", "Bash(rm:*)"]).read_filter().is_none());
}

#[test]
fn a_read_ask_rule_asks_for_a_bash_command_naming_the_file() {
    let f = fixture();
    let rules = PermissionRules::parse::<&str>(&[], &[], &["Read(./secret.txt)"]).expect("rules");
    let ctx = PermissionContext::new(
        PermissionMode::BypassPermissions,
        rules,
        Workspace::new(&f.root, &[]).expect("workspace"),
        Vec::new(),
    )
    .expect("context");
    assert_eq!(f.bash(&ctx, "cat secret.txt"), deny(NEEDS_APPROVAL));
    assert_eq!(f.bash(&ctx, "cat notes.md"), Decision::Allow);
}

/// Every way the attack round found to read a denied file through a command the classifier
/// knows: walks over a directory, `-C`, bracket classes, a globbed `cd`, git's pathspec magic
/// and revision paths. Deny rules hold in every mode, so bypassPermissions shows them best.
#[test]
fn a_read_deny_rule_covers_directory_compares_git_paths_and_bracket_globs() {
    let f = fixture();
    std::fs::create_dir_all(f.root.join(".git")).expect("mkdir");
    std::fs::create_dir_all(f.root.join("cfg")).expect("mkdir");
    std::fs::write(f.root.join("cfg/secret.env"), "TOKEN=1\n").expect("write");
    std::fs::write(f.root.join("src/secret.txt"), "s\n").expect("write");
    let deny_rules = ["Read(./secret.txt)", "Read(./cfg/secret.env)", "Read(./src/secret.txt)"];
    let ctx = f.ctx(PermissionMode::BypassPermissions, &[], &deny_rules);
    let denied = deny("Permission to use Bash has been denied.");
    for command in [
        "diff -N . src",
        "diff . src",
        "diff -q notes.md .",
        "cmp . notes.md",
        "diff --from-file=. notes.md",
        "git -C cfg diff --no-index secret.env x",
        "git -C cfg diff --no-index ./secret.env x",
        "cat [[=s=]]ecret.txt",
        "cat [[:alpha:]]ecret.txt",
        "cat [[.s.]]ecret.txt",
        "cat [![:digit:]]ecret.txt",
        "cd [s]rc && cat secret.txt",
        "cd sr? && cat secret.txt",
        "git show HEAD -- ':(top)secret.txt'",
        "git log -p -- ':(glob)**/secret*'",
        "git show ':/secret'",
        "cd src && git show HEAD:secret.txt",
        "git show HEAD:src/secret.txt",
        "git show HEAD",
        "git -C src show HEAD:cfg/secret.env",
        "cat ~nosuchuser/x",
    ] {
        assert_eq!(f.bash(&ctx, command), denied, "{command}");
    }
    assert_eq!(f.bash(&ctx, "cat notes.md"), Decision::Allow);
    assert_eq!(f.bash(&ctx, "git show HEAD -- notes.md"), Decision::Allow);
    assert_eq!(f.bash(&ctx, "diff notes.md src/main.rs"), Decision::Allow);
}

#[test]
fn globs_and_git_repositories_the_text_cannot_pin_need_approval() {
    let f = fixture();
    std::fs::write(f.root.join("a.txt"), "a\n").expect("write");
    std::fs::write(f.root.join("b.txt"), "b\n").expect("write");
    std::fs::write(f.root.join("-delete"), "").expect("write");
    std::fs::write(f.root.join("--compress-program=sh"), "").expect("write");
    let ctx = f.ctx(PermissionMode::Default, &[], &[]);
    for command in [
        "uniq [ab].txt",
        "uniq .git/[Hc]*",
        "find [-]*",
        "sort -S 1 [-]*",
        "git --git-dir=g diff --no-index a.txt b.txt",
        "git --bare log",
        "printf -v CDPATH /outside; cd src && cat main.rs",
        "test -v 'x[$(touch PWNED)]'",
        "jq -n '$ ENV.GITHUB_TOKEN'",
    ] {
        assert_eq!(f.bash(&ctx, command), deny(NEEDS_APPROVAL), "{command}");
    }
    assert!(!f.root.join("PWNED").exists());
    for command in ["cat *.txt", "sort a.txt b.txt", "git --git-dir=.git status"] {
        assert_eq!(f.bash(&ctx, command), Decision::Allow, "{command}");
    }
}

/// The text around a path must not hide where it leads: brace expansion, a line that is opaque
/// for other reasons, and directory changes the table does not take as read-only.
#[test]
fn a_read_deny_rule_follows_braces_opaque_lines_and_hidden_directory_changes() {
    let f = fixture();
    std::fs::write(f.root.join("src/secret.txt"), "s\n").expect("write");
    let ctx = f.ctx(PermissionMode::BypassPermissions, &[], &["Read(./secret.txt)", "Read(./src/secret.txt)"]);
    let denied = deny("Permission to use Bash has been denied.");
    for command in [
        "cat {secret,x}.txt",
        "cat secret.{md,txt}",
        "cat {s,x}ecret.txt",
        "cd src && cat secret.txt > out.txt",
        "cd src && cat secret.txt $(true)",
        "pushd src && cat secret.txt",
        "command cd src && cat secret.txt",
        "builtin cd src; cat secret.txt",
        "CDPATH=/ cd src && cat secret.txt",
        "CDPATH=/; cd elsewhere && cat secret.txt",
        "shopt -s nocaseglob; cat SECRET*",
        "shopt -s extglob\ncat @(secret).txt",
        "GLOBIGNORE=x; cat .s*",
    ] {
        assert_eq!(f.bash(&ctx, command), denied, "{command}");
    }
    assert_eq!(f.bash(&ctx, "cat {notes,src/main}.{md,rs}"), Decision::Allow);
    assert_eq!(f.bash(&ctx, "pushd src && cat main.rs"), Decision::Allow);
}
