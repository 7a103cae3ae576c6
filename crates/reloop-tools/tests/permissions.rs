//! Permissions, headless: Claude Code's modes and rules decide every call, an ask becomes a deny
//! with the text the prompt would show, and paths are judged where they really lead.
//!
//! These tests only ask for decisions; no tool is run on a path outside the workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reloop_tools::{
    tool_paths, Decision, PermissionContext, PermissionError, PermissionMode, PermissionRules, Rule, RuleProblem,
    Sandboxing, Tool, ToolContext, ToolOutput, ToolRegistry, Workspace,
};
use serde_json::{json, Value};

const MODES: [PermissionMode; 5] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::BypassPermissions,
    PermissionMode::DontAsk,
];

/// A library user's tool, read-only or not as asked.
struct UserTool {
    name: &'static str,
    read_only: bool,
}

impl Tool for UserTool {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A tool added by a library user."
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"url": {"type": "string"}}})
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        self.read_only
    }
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only
    }
    fn call(&self, _input: &Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::ok("done")
    }
}

/// A workspace folder and a folder outside it, both canonical, with the built-in tools plus
/// `Deploy` (writes) and `WebFetch` (a user tool here, not read-only).
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
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("write");
    std::fs::write(outside_path.join("secret.txt"), "secret\n").expect("write");
    let mut registry = ToolRegistry::builtin();
    registry.register(Arc::new(UserTool { name: "Deploy", read_only: false }));
    registry.register(Arc::new(UserTool { name: "WebFetch", read_only: false }));
    Fixture { _dirs: (inside, outside), root, outside: outside_path, registry }
}

impl Fixture {
    fn ctx(&self, mode: PermissionMode, allow: &[&str], deny: &[&str], ask: &[&str]) -> PermissionContext {
        PermissionContext::new(
            mode,
            PermissionRules::parse(allow, deny, ask).expect("rules"),
            Workspace::new(&self.root, &[]).expect("workspace"),
            Vec::new(),
        )
        .expect("context")
    }

    fn mode(&self, mode: PermissionMode) -> PermissionContext {
        self.ctx(mode, &[], &[], &[])
    }

    fn check(&self, ctx: &PermissionContext, tool: &str, input: Value) -> Decision {
        ctx.check(&self.registry, tool, &input)
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }
}

fn deny(message: impl Into<String>) -> Decision {
    Decision::Deny { message: message.into() }
}

fn read_from(path: &Path) -> Decision {
    deny(format!("Claude requested permissions to read from {}, but you haven't granted it yet.", path.display()))
}

fn write_to(path: &Path) -> Decision {
    deny(format!("Claude requested permissions to write to {}, but you haven't granted it yet.", path.display()))
}

fn plan(tool: &str) -> Decision {
    deny(format!("Permission to use {tool} has been denied because reloop is in plan mode."))
}

fn dont_ask(tool: &str) -> Decision {
    deny(format!(
        "Permission to use {tool} has been denied because reloop is running in don't ask mode. Approve it or add it to the allowed tools to continue."
    ))
}

fn approval() -> Decision {
    deny("This command requires approval")
}

fn write_input(path: &str) -> Value {
    json!({"file_path": path, "content": "x\n"})
}

#[test]
fn reads_inside_the_workspace_run_in_every_mode() {
    let f = fixture();
    for mode in MODES {
        let ctx = f.mode(mode);
        assert_eq!(f.check(&ctx, "Read", json!({"file_path": f.path("src/main.rs")})), Decision::Allow, "{mode}");
        assert_eq!(f.check(&ctx, "Read", json!({"file_path": "src/main.rs"})), Decision::Allow, "{mode}");
        assert_eq!(f.check(&ctx, "Glob", json!({"pattern": "**/*.rs"})), Decision::Allow, "{mode}");
        assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "main", "path": "src"})), Decision::Allow, "{mode}");
        assert_eq!(f.check(&ctx, "Bash", json!({"command": "ls -la && git status"})), Decision::Allow, "{mode}");
    }
}

#[test]
fn writes_inside_the_workspace_depend_on_the_mode() {
    let f = fixture();
    let target = f.root.join("src/new.rs");
    let edit = json!({"file_path": f.path("src/main.rs"), "old_string": "main", "new_string": "start"});
    for (mode, expected) in [
        (PermissionMode::Default, write_to(&target)),
        (PermissionMode::AcceptEdits, Decision::Allow),
        (PermissionMode::Plan, plan("Write")),
        (PermissionMode::BypassPermissions, Decision::Allow),
        (PermissionMode::DontAsk, dont_ask("Write")),
    ] {
        assert_eq!(f.check(&f.mode(mode), "Write", write_input(&f.path("src/new.rs"))), expected, "{mode}");
    }
    for (mode, expected) in [
        (PermissionMode::Default, write_to(&f.root.join("src/main.rs"))),
        (PermissionMode::AcceptEdits, Decision::Allow),
        (PermissionMode::Plan, plan("Edit")),
        (PermissionMode::BypassPermissions, Decision::Allow),
        (PermissionMode::DontAsk, dont_ask("Edit")),
    ] {
        assert_eq!(f.check(&f.mode(mode), "Edit", edit.clone()), expected, "{mode}");
    }
}

#[test]
fn commands_that_may_write_depend_on_the_mode_and_accept_edits_does_not_cover_them() {
    let f = fixture();
    for (mode, expected) in [
        (PermissionMode::Default, approval()),
        (PermissionMode::AcceptEdits, approval()),
        (PermissionMode::Plan, plan("Bash")),
        (PermissionMode::BypassPermissions, Decision::Allow),
        (PermissionMode::DontAsk, dont_ask("Bash")),
    ] {
        assert_eq!(f.check(&f.mode(mode), "Bash", json!({"command": "npm install"})), expected, "{mode}");
    }
}

#[test]
fn other_tools_that_are_not_read_only_are_asked_for_by_name() {
    let f = fixture();
    for (mode, expected) in [
        (PermissionMode::Default, deny("Claude requested permissions to use Deploy, but you haven't granted it yet.")),
        (
            PermissionMode::AcceptEdits,
            deny("Claude requested permissions to use Deploy, but you haven't granted it yet."),
        ),
        (PermissionMode::Plan, plan("Deploy")),
        (PermissionMode::BypassPermissions, Decision::Allow),
        (PermissionMode::DontAsk, dont_ask("Deploy")),
    ] {
        assert_eq!(f.check(&f.mode(mode), "Deploy", json!({})), expected, "{mode}");
    }
}

#[test]
fn a_disallowed_tool_is_reported_as_not_enabled() {
    let f = fixture();
    let mut ctx = f.mode(PermissionMode::BypassPermissions);
    ctx.disallowed_tools = vec!["Bash".into()];
    assert_eq!(
        f.check(&ctx, "Bash", json!({"command": "ls"})),
        deny(
            "<tool_use_error>Error: No such tool available: Bash. Bash exists but is not enabled in this context. Use one of the available tools instead.</tool_use_error>"
        )
    );
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": f.path("src/main.rs")})), Decision::Allow);
}

#[test]
fn a_deny_rule_with_a_specifier_denies_only_matching_calls_and_beats_allow() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::BypassPermissions, &["Bash", "Bash(rm:*)"], &["Bash(rm:*)"], &[]);
    assert_eq!(
        f.check(&ctx, "Bash", json!({"command": "rm -rf src"})),
        deny("Permission to use Bash has been denied.")
    );
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "npm install"})), Decision::Allow);

    // Even a read-only call inside the workspace.
    let ctx = f.ctx(PermissionMode::Default, &["Read"], &["Read(./src/**)"], &[]);
    assert_eq!(
        f.check(&ctx, "Read", json!({"file_path": f.path("src/main.rs")})),
        deny("Permission to use Read has been denied.")
    );

    // --disallowed-tools takes rules as well as names.
    let mut ctx = f.mode(PermissionMode::BypassPermissions);
    ctx.disallowed_tools = vec!["Bash(git push:*)".into()];
    assert_eq!(
        f.check(&ctx, "Bash", json!({"command": "git push origin"})),
        deny("Permission to use Bash has been denied.")
    );
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "git pull"})), Decision::Allow);
}

/// tests/print/recorded/*/tool_results/deny_rules: Claude Code names the command a Bash deny
/// rule refused; another tool's refusal keeps the generic words.
#[test]
fn a_claude_code_profile_names_the_command_a_bash_deny_rule_refuses() {
    let f = fixture();
    let mut ctx = f.mode(PermissionMode::Default);
    ctx.disallowed_tools = vec!["Bash(touch:*)".into(), "Read(./README.md)".into()];
    let ctx = ctx.with_texts(reloop_core::profile::CLAUDE_CODE_2_1_332.tools);
    assert_eq!(
        f.check(&ctx, "Bash", json!({"command": "touch made.txt"})),
        deny("Permission to use Bash with command touch made.txt has been denied.")
    );
    // A Read's path rule is the Read's own check of its input (tool_results/deny_rules).
    assert_eq!(
        f.check(&ctx, "Read", json!({"file_path": f.path("README.md")})),
        deny("<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>")
    );
    let reloop = ctx.clone().with_texts(reloop_core::profile::RELOOP.tools);
    assert_eq!(
        f.check(&reloop, "Read", json!({"file_path": f.path("README.md")})),
        deny("Permission to use Read has been denied.")
    );
}

/// crates/reloop-import/tests/recorded/*/rule_sources/ask: with nobody to ask, an ask rule's
/// refusal is worded per version: 2.1.197 names the tool, 2.1.332 too but a file tool names its
/// path, reloop's own profile the question the call would raise without the rule.
#[test]
fn an_ask_rules_refusal_is_worded_as_each_profile_words_it() {
    use reloop_core::profile::{CLAUDE_CODE_2_1_197, CLAUDE_CODE_2_1_332, RELOOP};
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &[], &[], &["Bash(mkdir:*)", "Write", "Deploy"]);
    let use_tool =
        |tool: &str| deny(format!("Claude requested permissions to use {tool}, but you haven't granted it yet."));
    let write_to = deny(format!(
        "Claude requested permissions to write to {}, but you haven't granted it yet.",
        f.path("notes.txt")
    ));
    let mkdir = json!({"command": "mkdir made"});
    let write = json!({"file_path": f.path("notes.txt"), "content": "alpha\n"});
    let v197 = ctx.clone().with_texts(CLAUDE_CODE_2_1_197.tools);
    assert_eq!(f.check(&v197, "Bash", mkdir.clone()), use_tool("Bash"));
    assert_eq!(f.check(&v197, "Write", write.clone()), use_tool("Write"));
    let v332 = ctx.clone().with_texts(CLAUDE_CODE_2_1_332.tools);
    assert_eq!(f.check(&v332, "Bash", mkdir.clone()), use_tool("Bash"));
    assert_eq!(f.check(&v332, "Write", write.clone()), write_to);
    assert_eq!(f.check(&v332, "Deploy", json!({})), use_tool("Deploy"));
    let reloop = ctx.clone().with_texts(RELOOP.tools);
    assert_eq!(f.check(&reloop, "Bash", mkdir.clone()), deny("This command requires approval"));
    assert_eq!(f.check(&reloop, "Write", write), write_to);
    // An ask rule holds in every mode; `dontAsk` refuses in its own words whatever the version.
    let dont_ask = f.ctx(PermissionMode::DontAsk, &[], &[], &["Bash(mkdir:*)"]).with_texts(CLAUDE_CODE_2_1_197.tools);
    let Decision::Deny { message } = f.check(&dont_ask, "Bash", mkdir) else {
        panic!("dontAsk let an ask rule's call run")
    };
    assert!(message.contains("don't ask mode"), "{message}");
}

#[test]
fn a_malformed_disallowed_entry_set_without_new_fails_closed_on_its_tool() {
    let f = fixture();
    let ctx = PermissionContext {
        mode: PermissionMode::BypassPermissions,
        rules: PermissionRules::default(),
        workspace: Workspace::new(&f.root, &[]).expect("workspace"),
        disallowed_tools: vec!["Bash(rm -rf".into()],
        tool_env: Default::default(),
        texts: reloop_core::profile::RELOOP.tools,
        sandbox: Sandboxing::NotProbed,
        network: false,
    };
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "ls"})), deny("Permission to use Bash has been denied."));
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "src/main.rs"})), Decision::Allow);
}

/// Without containment the classifier's word alone runs nothing: a read-only command asks (an
/// allow rule naming it, or bypassPermissions, still lets it through), the file tools do not.
#[test]
fn without_a_sandbox_every_bash_command_needs_approval() {
    let f = fixture();
    let uncontained = |mode: PermissionMode, allow: &[&str]| {
        let allow: Vec<String> = allow.iter().map(|r| r.to_string()).collect();
        let rules = PermissionRules::parse(&allow, &[], &[]).expect("rules");
        PermissionContext::new(mode, rules, Workspace::new(&f.root, &[]).expect("workspace"), vec![])
            .expect("context")
            .with_sandbox(None, false)
    };
    let ctx = uncontained(PermissionMode::Default, &[]);
    assert!(!ctx.contained());
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "ls"})), deny("This command requires approval"));
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "src/main.rs"})), Decision::Allow);
    let ruled = uncontained(PermissionMode::Default, &["Bash(git status:*)"]);
    assert_eq!(f.check(&ruled, "Bash", json!({"command": "git status"})), Decision::Allow);
    assert_eq!(
        f.check(&ruled, "Bash", json!({"command": "git status && ls"})),
        deny("This command requires approval"),
        "a part no rule names is not let through for only reading"
    );
    let bypass = uncontained(PermissionMode::BypassPermissions, &[]);
    assert_eq!(f.check(&bypass, "Bash", json!({"command": "ls"})), Decision::Allow);
}

#[test]
fn rules_parse_from_claude_code_syntax() {
    for (text, tool, specifier) in [
        ("Bash", "Bash", None),
        ("Bash(*)", "Bash", None),
        ("Bash(git diff:*)", "Bash", Some("git diff:*")),
        ("Bash(npm run test)", "Bash", Some("npm run test")),
        ("Read(./src/**)", "Read", Some("./src/**")),
        ("Edit(/abs/path/**)", "Edit", Some("/abs/path/**")),
        ("Read(//abs/path)", "Read", Some("//abs/path")),
        ("Read(~/x)", "Read", Some("~/x")),
        ("WebFetch(domain:example.com)", "WebFetch", Some("domain:example.com")),
        ("Bash(echo (x))", "Bash", Some("echo (x)")),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
    ] {
        let rule: Rule = text.parse().expect(text);
        assert_eq!((rule.tool(), rule.specifier()), (tool, specifier), "{text}");
    }
    assert_eq!(Rule::parse("Bash(git diff:*)").expect("rule").to_string(), "Bash(git diff:*)");
}

#[test]
fn a_malformed_rule_is_a_typed_error_naming_it() {
    for (text, problem) in [
        ("Bash(git diff", RuleProblem::Unclosed),
        ("(ls)", RuleProblem::MissingTool),
        ("", RuleProblem::MissingTool),
        ("Bash()", RuleProblem::EmptySpecifier),
        ("Ba sh", RuleProblem::BadToolName),
        ("Bash(ls) extra", RuleProblem::Unclosed),
    ] {
        match Rule::parse(text) {
            Err(PermissionError::InvalidRule { rule, problem: got }) => {
                assert_eq!((rule.as_str(), got), (text, problem));
            }
            other => panic!("{text:?} parsed as {other:?}"),
        }
    }
    let err = PermissionRules::parse(&["Read"], &["Bash(rm"], &[]).expect_err("bad deny rule");
    assert!(err.to_string().contains("`Bash(rm`"), "{err}");
    let f = fixture();
    let workspace = Workspace::new(&f.root, &[]).expect("workspace");
    let err =
        PermissionContext::new(PermissionMode::Default, PermissionRules::default(), workspace, vec!["Edit(".into()])
            .expect_err("bad disallowed entry");
    assert!(err.to_string().contains("`Edit(`"), "{err}");
}

#[test]
fn modes_parse_and_serialize_by_their_cli_names() {
    for (text, mode) in ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"].iter().zip(MODES) {
        assert_eq!(text.parse::<PermissionMode>().expect(text), mode);
        assert_eq!(mode.to_string(), *text);
        assert_eq!(serde_json::to_value(mode).expect("json"), json!(text));
    }
    assert!(matches!("yolo".parse::<PermissionMode>(), Err(PermissionError::UnknownMode { .. })));
}

#[test]
fn decisions_serialize_with_a_decision_tag() {
    assert_eq!(serde_json::to_value(Decision::Allow).expect("json"), json!({"decision": "allow"}));
    assert_eq!(serde_json::to_value(deny("no")).expect("json"), json!({"decision": "deny", "message": "no"}));
}

#[test]
fn paths_outside_the_workspace_are_denied_in_every_mode_but_bypass() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    let new_file = f.outside.join("new.txt");
    for mode in MODES {
        let ctx = f.mode(mode);
        let (read, write) = if mode == PermissionMode::BypassPermissions {
            (Decision::Allow, Decision::Allow)
        } else {
            (read_from(&secret), write_to(&new_file))
        };
        assert_eq!(f.check(&ctx, "Read", json!({"file_path": secret})), read, "{mode}");
        assert_eq!(f.check(&ctx, "Write", write_input(&new_file.to_string_lossy())), write, "{mode}");
    }
}

#[test]
fn an_allow_rule_naming_an_outside_path_lets_the_call_through() {
    let f = fixture();
    let outside = f.outside.to_string_lossy();
    let ctx =
        f.ctx(PermissionMode::Default, &[&format!("Read(/{outside}/**)"), &format!("Edit({outside}/**)")], &[], &[]);
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": f.outside.join("secret.txt")})), Decision::Allow);
    assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "x", "path": outside})), Decision::Allow);
    // An Edit rule covers Write.
    assert_eq!(f.check(&ctx, "Write", write_input(&f.outside.join("new.txt").to_string_lossy())), Decision::Allow);
    // A bare allow rule names no path, so it does not reach outside.
    let ctx = f.ctx(PermissionMode::Default, &["Write"], &[], &[]);
    assert_eq!(f.check(&ctx, "Write", write_input(&f.path("src/new.rs"))), Decision::Allow);
    let new_file = f.outside.join("new.txt");
    assert_eq!(f.check(&ctx, "Write", write_input(&new_file.to_string_lossy())), write_to(&new_file));
}

#[test]
fn a_symlink_inside_the_workspace_pointing_outside_is_denied() {
    let f = fixture();
    std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.root.join("innocent.txt")).expect("symlink");
    std::os::unix::fs::symlink(&f.outside, f.root.join("vendor")).expect("symlink");
    let ctx = f.mode(PermissionMode::AcceptEdits);
    let secret = f.outside.join("secret.txt");
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "innocent.txt"})), read_from(&secret));
    assert_eq!(f.check(&ctx, "Glob", json!({"pattern": "*", "path": "vendor"})), read_from(&f.outside));
    // A file that does not exist yet under the symlinked folder resolves through it.
    let planted = f.outside.join("new/deep.txt");
    assert_eq!(f.check(&ctx, "Write", write_input("vendor/new/deep.txt")), write_to(&planted));
    // A dangling symlink is followed to the file a write would create.
    std::os::unix::fs::symlink(f.outside.join("created.txt"), f.root.join("dangling")).expect("symlink");
    assert_eq!(f.check(&ctx, "Write", write_input("dangling")), write_to(&f.outside.join("created.txt")));
}

#[test]
fn a_not_yet_existing_file_under_a_symlinked_folder_inside_resolves_inside() {
    let f = fixture();
    std::os::unix::fs::symlink(f.root.join("src"), f.root.join("alias")).expect("symlink");
    let ctx = f.mode(PermissionMode::AcceptEdits);
    assert_eq!(tool_paths("Write", &write_input("alias/new/mod.rs"), &f.root), vec![f.root.join("src/new/mod.rs")]);
    assert_eq!(f.check(&ctx, "Write", write_input("alias/new/mod.rs")), Decision::Allow);
}

#[test]
fn dot_dot_cannot_escape_the_workspace() {
    let f = fixture();
    let ctx = f.mode(PermissionMode::AcceptEdits);
    let parent = f.root.parent().expect("parent");
    let escaped = parent.join("etc/passwd");
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "src/../../etc/passwd"})), read_from(&escaped));
    assert_eq!(f.check(&ctx, "Write", write_input("src/../../etc/passwd")), write_to(&escaped));
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "/etc/passwd"})), read_from(Path::new("/etc/passwd")));
    // `..` that stays inside is fine.
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": "src/../src/main.rs"})), Decision::Allow);
}

#[test]
fn add_dir_roots_are_part_of_the_workspace() {
    let f = fixture();
    let extra = f.outside.join("shared");
    std::fs::create_dir(&extra).expect("mkdir");
    let workspace = Workspace::new(&f.root, std::slice::from_ref(&extra)).expect("workspace");
    assert_eq!(workspace.roots(), [f.root.clone(), extra.clone()]);
    assert_eq!(workspace.cwd(), f.root);
    let ctx = PermissionContext::new(PermissionMode::AcceptEdits, PermissionRules::default(), workspace, Vec::new())
        .expect("context");
    assert_eq!(f.check(&ctx, "Write", write_input(&extra.join("notes.md").to_string_lossy())), Decision::Allow);
    assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "x", "path": extra})), Decision::Allow);
    // The sibling secret is still outside.
    assert_eq!(
        f.check(&ctx, "Read", json!({"file_path": f.outside.join("secret.txt")})),
        read_from(&f.outside.join("secret.txt"))
    );

    // Relative --add-dir folders are taken from the working directory; a missing one is an error.
    let relative = Workspace::new(&f.root, &[PathBuf::from("src")]).expect("workspace");
    assert_eq!(relative.roots()[1], f.root.join("src"));
    assert!(matches!(Workspace::new(&f.root, &[PathBuf::from("missing")]), Err(PermissionError::Workspace { .. })));
    assert!(matches!(
        Workspace::new(&f.root, &[PathBuf::from("src/main.rs")]),
        Err(PermissionError::NotADirectory { .. })
    ));
}

#[test]
fn glob_and_grep_with_a_path_outside_are_denied() {
    let f = fixture();
    let ctx = f.mode(PermissionMode::Default);
    assert_eq!(f.check(&ctx, "Glob", json!({"pattern": "*", "path": f.outside})), read_from(&f.outside));
    assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "secret", "path": f.outside})), read_from(&f.outside));
    assert_eq!(
        f.check(&ctx, "Grep", json!({"pattern": "x", "path": ".."})),
        read_from(f.root.parent().expect("parent"))
    );
    assert_eq!(tool_paths("Grep", &json!({"pattern": "x"}), &f.root), vec![f.root.clone()]);
}

#[test]
fn a_read_rule_covers_glob_and_grep() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &[], &["Read(./src/**)"], &[]);
    let denied = deny("Permission to use Grep has been denied.");
    assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "x", "path": "src"})), denied);
    assert_eq!(
        f.check(&ctx, "Glob", json!({"pattern": "*", "path": "src"})),
        deny("Permission to use Glob has been denied.")
    );
    assert_eq!(f.check(&ctx, "Grep", json!({"pattern": "x"})), Decision::Allow);
    // A pattern without a slash matches at any depth.
    let ctx = f.ctx(PermissionMode::Default, &[], &["Read(*.env)"], &[]);
    assert_eq!(
        f.check(&ctx, "Read", json!({"file_path": "config/prod.env"})),
        deny("Permission to use Read has been denied.")
    );
}

#[test]
fn an_edit_rule_allows_writes_in_the_paths_it_names() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Edit(./src/**)"], &[], &[]);
    assert_eq!(f.check(&ctx, "Write", write_input("src/new.rs")), Decision::Allow);
    assert_eq!(f.check(&ctx, "Write", write_input("docs/x.md")), write_to(&f.root.join("docs/x.md")));
}

#[test]
fn a_home_relative_rule_is_under_home() {
    let Some(home) = std::env::var_os("HOME") else { return };
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Read(~/.reloop-permissions-test/**)"], &[], &[]);
    let target = PathBuf::from(home).join(".reloop-permissions-test/notes.txt");
    assert_eq!(f.check(&ctx, "Read", json!({"file_path": target})), Decision::Allow);
}

#[test]
fn a_bash_prefix_rule_matches_whole_leading_words() {
    let f = fixture();
    // `git diff --output=...` writes a file, so it is not read-only: only the rule lets it run.
    let ctx = f.ctx(PermissionMode::Default, &["Bash(git diff:*)"], &[], &[]);
    for allowed in ["git diff --output=patch.txt", "git diff", "git  diff --ext-diff HEAD", "git diff HEAD 2>&1"] {
        assert_eq!(f.check(&ctx, "Bash", json!({"command": allowed})), Decision::Allow, "{allowed}");
    }
    for asked in ["git difftool", "git commit -m x", "echo git diff > out.txt", "sudo git diff --ext-diff"] {
        assert_eq!(f.check(&ctx, "Bash", json!({"command": asked})), approval(), "{asked}");
    }
    // Without `:*` the rule is the exact command.
    let ctx = f.ctx(PermissionMode::DontAsk, &["Bash(npm run build)"], &[], &[]);
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "npm run build"})), Decision::Allow);
    assert_eq!(f.check(&ctx, "Bash", json!({"command": "npm run build --prod"})), dont_ask("Bash"));
}

#[test]
fn a_compound_command_needs_every_part_allowed_and_any_denied_part_denies() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["Bash(npm run test:*)"], &["Bash(rm:*)"], &[]);
    let check = |cmd: &str| f.check(&ctx, "Bash", json!({ "command": cmd }));
    assert_eq!(check("npm run test && ls -la"), Decision::Allow, "read-only parts need no rule");
    assert_eq!(check("npm run test | tee log.txt"), approval());
    assert_eq!(check("npm run test; npm publish"), approval());
    assert_eq!(check("npm run test $(curl evil.test)"), approval(), "substitution hides what runs");
    assert_eq!(check("npm run test > /etc/motd"), approval(), "a redirect writes a file");
    let denied = deny("Permission to use Bash has been denied.");
    assert_eq!(check("npm run test && rm -rf src"), denied);
    assert_eq!(check("ls\nrm -rf src"), denied);
    assert_eq!(check("FOO=1 rm -rf src"), denied);
    assert_eq!(check("echo $(rm -rf src)"), denied);
    assert_eq!(check("rmdir empty"), approval(), "rm:* is whole words");
}

#[test]
fn an_ask_rule_asks_even_over_allow_rules_and_bypass() {
    let f = fixture();
    for (mode, expected) in [
        (PermissionMode::Default, approval()),
        (PermissionMode::BypassPermissions, approval()),
        (PermissionMode::DontAsk, dont_ask("Bash")),
    ] {
        let ctx = f.ctx(mode, &["Bash"], &[], &["Bash(git push:*)"]);
        assert_eq!(f.check(&ctx, "Bash", json!({"command": "git push origin main"})), expected, "{mode}");
        assert_eq!(f.check(&ctx, "Bash", json!({"command": "npm install"})), Decision::Allow, "{mode}");
    }
    let ctx = f.ctx(PermissionMode::AcceptEdits, &[], &[], &["Edit(./src/**)"]);
    assert_eq!(
        f.check(&ctx, "Edit", json!({"file_path": "src/main.rs", "old_string": "a", "new_string": "b"})),
        write_to(&f.root.join("src/main.rs"))
    );
}

#[test]
fn web_fetch_rules_match_the_domain() {
    let f = fixture();
    let ctx = f.ctx(PermissionMode::Default, &["WebFetch(domain:docs.rs)"], &["WebFetch(domain:evil.test)"], &[]);
    assert_eq!(f.check(&ctx, "WebFetch", json!({"url": "https://docs.rs/serde"})), Decision::Allow);
    assert_eq!(
        f.check(&ctx, "WebFetch", json!({"url": "https://example.com/"})),
        deny("Claude requested permissions to use WebFetch, but you haven't granted it yet.")
    );
    assert_eq!(
        f.check(&ctx, "WebFetch", json!({"url": "http://evil.test/x"})),
        deny("Permission to use WebFetch has been denied.")
    );
}

#[test]
fn unknown_tools_and_invalid_inputs_are_left_to_the_registry() {
    let f = fixture();
    let ctx = f.mode(PermissionMode::Default);
    assert_eq!(f.check(&ctx, "Teleport", json!({})), Decision::Allow);
    assert_eq!(f.check(&ctx, "Write", json!({"file_path": 7})), Decision::Allow);
    let out = f.registry.execute("Write", &json!({"file_path": 7}), &ToolContext::new(f.root.clone()));
    assert!(out.is_error, "the registry refuses it: {}", out.content);
}

#[test]
fn an_allowed_call_runs_and_a_denied_one_is_never_run() {
    let f = fixture();
    let ctx = f.mode(PermissionMode::AcceptEdits);
    let tool_ctx = ToolContext::new(f.root.clone());
    let run = |input: Value| match ctx.check(&f.registry, "Write", &input) {
        Decision::Allow => f.registry.execute("Write", &input, &tool_ctx),
        denied => ToolOutput::error(denied.message().unwrap_or_default()),
    };
    assert!(!run(write_input("notes.md")).is_error);
    assert_eq!(std::fs::read_to_string(f.root.join("notes.md")).expect("written"), "x\n");
    assert!(run(write_input(&f.outside.join("planted.txt").to_string_lossy())).is_error);
    assert!(!f.outside.join("planted.txt").exists());
}
