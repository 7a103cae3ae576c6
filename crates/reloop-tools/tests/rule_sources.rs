//! The rules' judgement names the origin of the rule that decided (`ruleSource` in Claude Code
//! 2.1.332's session file; recordings `crates/reloop-import/tests/recorded/2.1.332/rule_sources/`):
//! a deny, an ask or an allow rule's own, the command line's for a `--disallowed-tools` entry, a
//! slash command's for its `allowed-tools`, and none where no single rule decided.

use std::path::PathBuf;

use reloop_core::{RuleSource, SourcedRule};
use reloop_tools::{PermissionContext, PermissionMode, PermissionRules, RuleStep, ToolRegistry, Workspace};
use serde_json::{json, Value};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    registry: ToolRegistry,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("README.md"), "# demo\n").expect("write");
    Fixture { _dir: dir, root, registry: ToolRegistry::builtin() }
}

fn from(source: RuleSource, texts: &[&str]) -> Vec<SourcedRule> {
    texts.iter().map(|t| SourcedRule::new(*t, source)).collect()
}

impl Fixture {
    fn ctx(&self, allow: Vec<SourcedRule>, deny: Vec<SourcedRule>, ask: Vec<SourcedRule>) -> PermissionContext {
        let rules = PermissionRules::parse_sourced(&allow, &deny, &ask).expect("rules");
        let workspace = Workspace::new(&self.root, &[]).expect("workspace");
        PermissionContext::new(PermissionMode::Default, rules, workspace, vec!["Bash(rm:*)".into()]).expect("context")
    }

    fn judged(&self, ctx: &PermissionContext, tool: &str, input: Value) -> (RuleStep, Option<RuleSource>) {
        let judgement = ctx.judge(&self.registry, tool, &input);
        (judgement.step, judgement.rule)
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }
}

fn bash(command: &str) -> Value {
    json!({"command": command, "description": "d"})
}

#[test]
fn each_rule_step_names_the_origin_of_the_rule_that_decided() {
    let fx = fixture();
    let allow = [from(RuleSource::UserSettings, &["Write"]), from(RuleSource::LocalSettings, &["Bash"])].concat();
    let deny =
        [from(RuleSource::UserSettings, &["Bash(mkdir:*)"]), from(RuleSource::LocalSettings, &["Read(./README.md)"])]
            .concat();
    let ask = from(RuleSource::ProjectSettings, &["Bash(touch:*)"]);
    let ctx = fx.ctx(allow, deny, ask);
    let write = json!({"file_path": fx.path("notes.txt"), "content": "alpha\n"});
    assert_eq!(fx.judged(&ctx, "Write", write), (RuleStep::AllowRule, Some(RuleSource::UserSettings)));
    assert_eq!(fx.judged(&ctx, "Bash", bash("echo made")), (RuleStep::AllowRule, Some(RuleSource::LocalSettings)));
    assert_eq!(fx.judged(&ctx, "Bash", bash("mkdir made")), (RuleStep::DenyRule, Some(RuleSource::UserSettings)));
    let read = json!({"file_path": fx.path("README.md")});
    assert_eq!(fx.judged(&ctx, "Read", read), (RuleStep::DenyRule, Some(RuleSource::LocalSettings)));
    assert_eq!(fx.judged(&ctx, "Bash", bash("touch made.txt")), (RuleStep::AskRule, Some(RuleSource::ProjectSettings)));
    // A `--disallowed-tools` entry is the command line's rule.
    assert_eq!(fx.judged(&ctx, "Bash", bash("rm -f made.txt")), (RuleStep::DenyRule, Some(RuleSource::CliArg)));
}

#[test]
fn no_origin_where_no_single_rule_decided() {
    let fx = fixture();
    // A Bash command its parts' rules cover one by one: Claude Code names no rule
    // (`subcommandResults`, tests/print/recorded/2.1.332/settings_sources/user).
    let ctx = fx.ctx(from(RuleSource::UserSettings, &["Bash(echo:*)", "Bash(touch:*)"]), Vec::new(), Vec::new());
    assert_eq!(fx.judged(&ctx, "Bash", bash("echo a && touch b")), (RuleStep::AllowRule, None));
    // A step that is no rule's.
    let read = json!({"file_path": fx.path("README.md")});
    assert_eq!(fx.judged(&ctx, "Read", read).1, None);
    // Rules read without an origin (a header journaled before origins were kept) name none.
    let bare = PermissionRules::parse(&["Write"], &[] as &[&str], &[] as &[&str]).expect("rules");
    let workspace = Workspace::new(&fx.root, &[]).expect("workspace");
    let ctx = PermissionContext::new(PermissionMode::Default, bare, workspace, Vec::new()).expect("context");
    let write = json!({"file_path": fx.path("notes.txt"), "content": "alpha\n"});
    assert_eq!(fx.judged(&ctx, "Write", write), (RuleStep::AllowRule, None));
}

#[test]
fn a_slash_commands_allowed_tools_are_the_commands_rules() {
    let fx = fixture();
    let ctx = fx.ctx(Vec::new(), Vec::new(), Vec::new());
    let mut with_command = ctx.clone();
    with_command.rules = ctx.rules.allowing(&["Write"]);
    let write = json!({"file_path": fx.path("notes.txt"), "content": "alpha\n"});
    assert_eq!(fx.judged(&with_command, "Write", write), (RuleStep::AllowRule, Some(RuleSource::Command)));
}
