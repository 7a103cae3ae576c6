//! The permission decision of one call, as a specification of its order: which step is asked
//! first, which answer wins over which, and what the model is told. `decide` is pure, so each
//! test scripts the outside answers and reads off the questions asked and the ruling.

use reloop_core::hook::HookRun;
use reloop_tools::{
    decide, Answers, CallbackAnswer, Checks, Decision, Judgement, Need, Next, PermissionContext, PermissionMode,
    PermissionRules, PromptReply, ReadFirst, RuleStep, Ruling, Sandboxing, ToolRegistry, Verdict, Why, Workspace,
};
use serde_json::{json, Value};

const ALL: Checks = Checks {
    read_first: true,
    pre_tool_use: true,
    can_use_tool: true,
    rules: true,
    prompt: true,
    hook_rulings: reloop_tools::HookRulings {
        denied: None,
        ask_refuses: false,
        raw_stderr: false,
        bare: reloop_core::profile::BareHookTexts { denied: None, asked: None },
    },
};

/// The outside world's answers, given when asked.
#[derive(Clone)]
struct Script {
    read_first: ReadFirst,
    hooks: Vec<HookRun>,
    callback: CallbackAnswer,
    rules: Judgement,
    prompt: PromptReply,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            read_first: ReadFirst::Satisfied,
            hooks: vec![hook("guard", 0, "")],
            callback: CallbackAnswer::NoOpinion,
            rules: judged(Verdict::Allow, RuleStep::ReadOnly),
            prompt: PromptReply::Replied(json!({"behavior": "allow"})),
        }
    }
}

/// Drives `decide` as the driver does: answers each question from `script` until it rules.
/// Returns the questions in the order asked, and the ruling.
fn rule(tool: &str, input: &Value, checks: Checks, script: &Script) -> (Vec<Need>, Ruling) {
    let mut answers = Answers::default();
    let mut asked = Vec::new();
    loop {
        let need = match decide(tool, input, checks, &answers) {
            Next::Decided(ruling) => return (asked, ruling),
            Next::Need(need) => need,
        };
        assert!(asked.len() < 5, "asked more than five questions: {asked:?}");
        match &need {
            Need::ReadFirst => answers.read_first = Some(script.read_first.clone()),
            Need::PreToolUse => answers.pre_tool_use = Some(script.hooks.clone()),
            Need::CanUseTool { .. } => answers.can_use_tool = Some(script.callback.clone()),
            Need::Rules { .. } => answers.rules = Some(script.rules.clone()),
            Need::Prompt { .. } => answers.prompt = Some(script.prompt.clone()),
        }
        asked.push(need);
    }
}

fn hook(command: &str, exit_code: i32, stdout: &str) -> HookRun {
    HookRun {
        command: command.into(),
        exit_code: Some(exit_code),
        stdout: stdout.into(),
        stderr: if exit_code == 2 { "not here".into() } else { String::new() },
        timed_out: false,
    }
}

/// A hook printing a PreToolUse permission decision.
fn deciding(command: &str, decision: &str, extra: Value) -> HookRun {
    let mut output = json!({"hookEventName": "PreToolUse", "permissionDecision": decision});
    if let (Some(output), Value::Object(extra)) = (output.as_object_mut(), extra) {
        output.extend(extra);
    }
    hook(command, 0, &json!({ "hookSpecificOutput": output }).to_string())
}

fn judged(verdict: Verdict, step: RuleStep) -> Judgement {
    Judgement { verdict, step, rule: None }
}

fn ask(message: &str) -> Verdict {
    Verdict::Ask { message: message.into() }
}

fn input() -> Value {
    json!({"file_path": "a.txt", "content": "x"})
}

fn refused(message: &str, denied: bool, why: Why) -> Ruling {
    Ruling::Refuse { message: message.into(), denied, why }
}

#[test]
fn the_steps_are_asked_in_order_read_first_hooks_callback_rules_prompt() {
    let script = Script { rules: judged(ask("may I?"), RuleStep::WouldAsk), ..Script::default() };
    let (asked, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(
        asked,
        vec![
            Need::ReadFirst,
            Need::PreToolUse,
            Need::CanUseTool { input: input() },
            Need::Rules { input: input() },
            Need::Prompt { input: input(), message: "may I?".into() },
        ]
    );
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::PromptAllowed(RuleStep::WouldAsk) });
}

#[test]
fn a_step_the_session_does_not_have_is_never_asked() {
    let rules_only = Checks { rules: true, ..Checks::default() };
    let (asked, ruling) = rule("Write", &input(), rules_only, &Script::default());
    assert_eq!(asked, vec![Need::Rules { input: input() }]);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::Rules(RuleStep::ReadOnly) });
}

#[test]
fn without_rules_what_the_steps_before_let_through_runs() {
    let (asked, ruling) = rule("Bash", &json!({"command": "rm -rf /"}), Checks::default(), &Script::default());
    assert_eq!(asked, vec![]);
    assert_eq!(ruling, Ruling::Run { input: json!({"command": "rm -rf /"}), why: Why::NoRules });
}

#[test]
fn an_unread_file_is_refused_first_as_a_tool_error_not_a_denial() {
    let script = Script {
        read_first: ReadFirst::Refused { message: "read it first".into() },
        hooks: vec![deciding("guard", "allow", json!({}))],
        ..Script::default()
    };
    let (asked, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(asked, vec![Need::ReadFirst]);
    assert_eq!(ruling, refused("read it first", false, Why::ReadFirst));
}

#[test]
fn a_hook_s_block_beats_another_hook_s_allow() {
    let script = Script { hooks: vec![deciding("yes", "allow", json!({})), hook("guard", 2, "")], ..Script::default() };
    let (asked, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(asked, vec![Need::ReadFirst, Need::PreToolUse]);
    let why = Why::HookBlocked { commands: vec!["guard".into()] };
    assert_eq!(ruling, refused("PreToolUse:Write hook error: [guard]: not here", true, why));
}

#[test]
fn a_hook_s_deny_refuses_with_its_reason_or_a_sentence_naming_the_tool() {
    let reasoned = deciding("guard", "deny", json!({"permissionDecisionReason": "not on Fridays"}));
    let script = Script { hooks: vec![deciding("yes", "allow", json!({})), reasoned], ..Script::default() };
    let (_, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(ruling, refused("not on Fridays", true, Why::HookDenied { command: "guard".into() }));

    let script = Script { hooks: vec![deciding("guard", "deny", json!({}))], ..Script::default() };
    let (_, ruling) = rule("Write", &input(), ALL, &script);
    let why = Why::HookDenied { command: "guard".into() };
    assert_eq!(ruling, refused("PreToolUse:Write hook denied this tool call", true, why));
}

#[test]
fn a_hook_s_allow_skips_the_callback_and_the_rules_even_a_deny_rule() {
    let script = Script {
        hooks: vec![deciding("yes", "allow", json!({}))],
        callback: CallbackAnswer::Decided(Decision::Deny { message: "callback says no".into() }),
        rules: judged(Verdict::Deny { message: "Permission to use Write has been denied.".into() }, RuleStep::DenyRule),
        ..Script::default()
    };
    let (asked, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(asked, vec![Need::ReadFirst, Need::PreToolUse]);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::HookAllowed { command: "yes".into() } });
}

#[test]
fn a_hook_s_updated_input_is_what_every_later_step_and_the_tool_see() {
    let updated = json!({"file_path": "b.txt", "content": "y"});
    let script = Script {
        hooks: vec![deciding("rewrite", "ask", json!({"updatedInput": updated}))],
        rules: judged(ask("may I?"), RuleStep::WouldAsk),
        ..Script::default()
    };
    let (asked, ruling) = rule("Write", &input(), ALL, &script);
    assert_eq!(
        asked[2..],
        [
            Need::CanUseTool { input: updated.clone() },
            Need::Rules { input: updated.clone() },
            Need::Prompt { input: updated.clone(), message: "may I?".into() },
        ]
    );
    assert_eq!(ruling, Ruling::Run { input: updated, why: Why::PromptAllowed(RuleStep::WouldAsk) });
}

#[test]
fn a_hook_s_ask_and_a_hook_that_stops_the_loop_decide_nothing_for_the_call() {
    for hooks in [
        vec![deciding("unsure", "ask", json!({}))],
        // `continue: false` outweighs the other hook's block: the loop stops after the turn's
        // tools, and this call goes on through the rest of the chain.
        vec![hook("guard", 2, ""), hook("stopper", 0, r#"{"continue": false, "stopReason": "enough"}"#)],
    ] {
        let script = Script { hooks, ..Script::default() };
        let (asked, ruling) = rule("Write", &input(), ALL, &script);
        assert_eq!(asked.len(), 4, "{asked:?}");
        assert_eq!(ruling, Ruling::Run { input: input(), why: Why::Rules(RuleStep::ReadOnly) });
    }
}

/// Claude Code's words (tool_results/hook_rulings): 2.1.332 tells the model a hook's deny as a
/// hook error; in both versions a hook's ask, with nobody to ask, refuses with its reason.
#[test]
fn under_claude_code_s_hook_rulings_a_deny_reads_as_a_hook_error_and_an_ask_refuses_with_its_reason() {
    let rulings = reloop_tools::HookRulings {
        denied: Some("PreToolUse:{tool} hook error: {reason}"),
        ask_refuses: true,
        raw_stderr: true,
        bare: reloop_core::profile::BareHookTexts { denied: None, asked: None },
    };
    let headless = Checks { prompt: false, hook_rulings: rulings, ..ALL };
    let deny = deciding("guard", "deny", json!({"permissionDecisionReason": "HOOK-DENIES-BASH"}));
    let script = Script { hooks: vec![deny], ..Script::default() };
    let (_, ruling) = rule("Bash", &input(), headless, &script);
    let why = Why::HookDenied { command: "guard".into() };
    assert_eq!(ruling, refused("PreToolUse:Bash hook error: HOOK-DENIES-BASH", true, why.clone()));
    let script = Script { hooks: vec![deciding("guard", "deny", json!({}))], ..Script::default() };
    let (_, ruling) = rule("Bash", &input(), headless, &script);
    assert_eq!(ruling, refused("PreToolUse:Bash hook denied this tool call", true, why), "no reason: reloop's");

    let ask = deciding("unsure", "ask", json!({"permissionDecisionReason": "HOOK-ASKS-EDIT"}));
    let script = Script { hooks: vec![ask.clone()], ..Script::default() };
    let (asked, ruling) = rule("Edit", &input(), headless, &script);
    assert_eq!(asked, [Need::ReadFirst, Need::PreToolUse, Need::CanUseTool { input: input() }], "the callback first");
    assert_eq!(ruling, refused("HOOK-ASKS-EDIT", true, Why::HookAsked { command: "unsure".into() }));
    let allowing =
        Script { hooks: vec![ask.clone()], callback: CallbackAnswer::Decided(Decision::Allow), ..Script::default() };
    let (_, ruling) = rule("Edit", &input(), headless, &allowing);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::CallbackAllowed }, "the callback answers the ask");
    // Somebody to ask, or no reason: the ask decides nothing, as in reloop's own rules.
    let script = Script { hooks: vec![ask], ..Script::default() };
    let (_, ruling) = rule("Edit", &input(), Checks { hook_rulings: rulings, ..ALL }, &script);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::Rules(RuleStep::ReadOnly) });
    let script = Script { hooks: vec![deciding("unsure", "ask", json!({}))], ..Script::default() };
    let (_, ruling) = rule("Edit", &input(), headless, &script);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::Rules(RuleStep::ReadOnly) });
}

/// Under flag 34 a ruling without a reason reads in the version's words
/// (tests/print/recorded/2.1.332/tool_results/hook_no_reason): 2.1.332 denies as a hook error
/// `Blocked by hook`, and its ask refuses, naming the tool.
#[test]
fn under_2_1_332_a_hook_ruling_without_a_reason_reads_as_recorded() {
    let bare = reloop_core::profile::ProfileId::ClaudeCode2_1_332.bare_hook_texts();
    let rulings = reloop_tools::HookRulings { denied: None, ask_refuses: true, raw_stderr: true, bare };
    let headless = Checks { prompt: false, hook_rulings: rulings, ..ALL };
    let script = Script { hooks: vec![deciding("guard", "deny", json!({}))], ..Script::default() };
    let (_, ruling) = rule("Bash", &input(), headless, &script);
    let why = Why::HookDenied { command: "guard".into() };
    assert_eq!(ruling, refused("PreToolUse:Bash hook error: Blocked by hook", true, why));
    let script = Script { hooks: vec![deciding("unsure", "ask", json!({}))], ..Script::default() };
    let (_, ruling) = rule("Edit", &input(), headless, &script);
    let asked = "Hook PreToolUse:Edit asked for confirmation for this tool";
    assert_eq!(ruling, refused(asked, true, Why::HookAsked { command: "unsure".into() }));
}

#[test]
fn the_callback_s_deny_refuses_with_its_message_and_its_allow_skips_the_rules() {
    let checks = Checks { can_use_tool: true, rules: true, ..Checks::default() };
    let script = Script {
        callback: CallbackAnswer::Decided(Decision::Deny { message: "callback says no".into() }),
        ..Script::default()
    };
    assert_eq!(rule("Write", &input(), checks, &script).1, refused("callback says no", true, Why::CallbackDenied));

    let script = Script {
        callback: CallbackAnswer::Decided(Decision::Allow),
        rules: judged(Verdict::Deny { message: "no".into() }, RuleStep::DenyRule),
        ..Script::default()
    };
    let (asked, ruling) = rule("Write", &input(), checks, &script);
    assert_eq!(asked, vec![Need::CanUseTool { input: input() }]);
    assert_eq!(ruling, Ruling::Run { input: input(), why: Why::CallbackAllowed });

    let script = Script { callback: None.into(), ..Script::default() };
    assert_eq!(rule("Write", &input(), checks, &script).0.len(), 2, "no opinion goes on to the rules");
}

#[test]
fn the_rules_deny_and_with_nobody_to_ask_an_ask_is_refused_with_the_prompt_s_text() {
    let checks = Checks { rules: true, ..Checks::default() };
    let script = Script { rules: judged(ask("may I?"), RuleStep::OutsideWorkspace), ..Script::default() };
    assert_eq!(
        rule("Read", &input(), checks, &script).1,
        refused("may I?", true, Why::Rules(RuleStep::OutsideWorkspace))
    );

    // With somebody to ask, a deny is still not asked about.
    let with_prompt = Checks { prompt: true, ..checks };
    let script =
        Script { rules: judged(Verdict::Deny { message: "denied".into() }, RuleStep::DenyRule), ..Script::default() };
    let (asked, ruling) = rule("Read", &input(), with_prompt, &script);
    assert_eq!(asked, vec![Need::Rules { input: input() }]);
    assert_eq!(ruling, refused("denied", true, Why::Rules(RuleStep::DenyRule)));
}

#[test]
fn a_tool_the_flags_removed_is_refused_as_missing_which_is_no_permission_denial() {
    let gone = judged(Verdict::Deny { message: "No such tool available: Write.".into() }, RuleStep::Removed);
    let script = Script { rules: gone, ..Script::default() };
    let (_, ruling) = rule("Write", &input(), Checks { rules: true, ..Checks::default() }, &script);
    assert_eq!(ruling, refused("No such tool available: Write.", false, Why::Rules(RuleStep::Removed)));
}

#[test]
fn the_prompt_s_reply_allows_with_its_input_or_denies_with_its_message_or_the_prompt_s_text() {
    let checks = Checks { rules: true, prompt: true, ..Checks::default() };
    let asked = |reply: PromptReply| {
        let script = Script { rules: judged(ask("may I?"), RuleStep::AskRule), prompt: reply, ..Script::default() };
        rule("Write", &input(), checks, &script).1
    };
    let (allowed, denied) = (Why::PromptAllowed(RuleStep::AskRule), Why::PromptDenied(RuleStep::AskRule));
    let updated = json!({"file_path": "b.txt"});
    let reply = |value: Value| PromptReply::Replied(value);
    assert_eq!(
        asked(reply(json!({"behavior": "allow", "updatedInput": updated}))),
        Ruling::Run { input: updated, why: allowed.clone() }
    );
    // An `updatedInput` that is no object is not an input.
    assert_eq!(
        asked(reply(json!({"behavior": "allow", "updatedInput": "b.txt"}))),
        Ruling::Run { input: input(), why: allowed }
    );
    assert_eq!(
        asked(reply(json!({"behavior": "deny", "message": "nope-from-sdk"}))),
        refused("nope-from-sdk", true, denied.clone())
    );
    assert_eq!(asked(reply(json!({"behavior": "deny", "message": ""}))), refused("may I?", true, denied.clone()));
    assert_eq!(asked(reply(json!("garbage"))), refused("may I?", true, denied.clone()));
    assert_eq!(asked(PromptReply::Failed), refused("may I?", true, denied));
}

/// The rules' evidence, from a real context: the step of the order that spoke.
#[test]
fn the_rules_judgement_names_the_step_that_decided() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("a.txt"), "a\n").expect("write");
    let registry = ToolRegistry::builtin();
    let context = |mode, allow: &[&str], deny: &[&str], disallowed: &[&str]| {
        let rules = PermissionRules::parse(allow, deny, &[]).expect("rules");
        let workspace = Workspace::new(&root, &[]).expect("workspace");
        let disallowed = disallowed.iter().map(|d| d.to_string()).collect();
        PermissionContext::new(mode, rules, workspace, disallowed).expect("context")
    };
    let step = |ctx: &PermissionContext, tool: &str, input: Value| ctx.judge(&registry, tool, &input).step;
    let read = json!({"file_path": root.join("a.txt")});
    let write = json!({"file_path": root.join("a.txt"), "content": "b"});
    let default = context(PermissionMode::Default, &[], &[], &[]);
    assert_eq!(step(&default, "Read", read.clone()), RuleStep::ReadOnly);
    assert_eq!(step(&default, "Write", write.clone()), RuleStep::WouldAsk);
    assert_eq!(step(&default, "Read", json!({"file_path": "/etc/hosts"})), RuleStep::OutsideWorkspace);
    assert_eq!(step(&default, "Write", json!({})), RuleStep::Unjudged);
    assert_eq!(step(&context(PermissionMode::Plan, &[], &[], &[]), "Write", write.clone()), RuleStep::PlanMode);
    assert_eq!(
        step(&context(PermissionMode::AcceptEdits, &[], &[], &[]), "Write", write.clone()),
        RuleStep::AcceptEdits
    );
    assert_eq!(
        step(&context(PermissionMode::BypassPermissions, &[], &[], &[]), "Write", write.clone()),
        RuleStep::Bypass
    );
    assert_eq!(
        step(&context(PermissionMode::Default, &["Write"], &[], &[]), "Write", write.clone()),
        RuleStep::AllowRule
    );
    assert_eq!(
        step(&context(PermissionMode::Default, &[], &["Read(a.txt)"], &[]), "Read", read.clone()),
        RuleStep::DenyRule
    );
    assert_eq!(step(&context(PermissionMode::Default, &[], &[], &["Read"]), "Read", read), RuleStep::Removed);
    let protected = json!({"file_path": root.join(".git/config"), "content": "x"});
    assert_eq!(step(&context(PermissionMode::AcceptEdits, &[], &[], &[]), "Write", protected), RuleStep::Protected);
    // Without containment, the classifier's word alone never runs a command.
    let ls = json!({"command": "ls"});
    assert_eq!(step(&default, "Bash", ls.clone()), RuleStep::ReadOnly);
    let uncontained = PermissionContext { sandbox: Sandboxing::Unavailable, ..default };
    assert_eq!(step(&uncontained, "Bash", ls), RuleStep::WouldAsk);
}

mod total {
    //! Whatever the answers, `decide` rules or asks, never panics, asks only what the session
    //! has and has not been answered, and a driver answering its questions rules within five.

    use proptest::prelude::*;

    use super::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z ]{0,12}", any::<String>()]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z]{0,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn hook_stdout() -> impl Strategy<Value = String> {
        let decision = prop_oneof![Just("allow"), Just("deny"), Just("ask"), Just("maybe")];
        prop_oneof![
            text(),
            (decision, proptest::option::of(text()), proptest::option::of(value())).prop_map(|(d, reason, updated)| {
                json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": d,
                    "permissionDecisionReason": reason,
                    "updatedInput": updated,
                }})
                .to_string()
            }),
            proptest::option::of(text()).prop_map(|r| json!({"decision": "block", "reason": r}).to_string()),
            Just(json!({"decision": "approve"}).to_string()),
            Just(json!({"continue": false}).to_string()),
            Just("{not json".to_string()),
        ]
    }

    fn hook_run() -> impl Strategy<Value = HookRun> {
        (
            text(),
            proptest::option::of(prop_oneof![Just(0), Just(1), Just(2), any::<i32>()]),
            hook_stdout(),
            text(),
            any::<bool>(),
        )
            .prop_map(|(command, exit_code, stdout, stderr, timed_out)| HookRun {
                command,
                exit_code,
                stdout,
                stderr,
                timed_out,
            })
    }

    fn checks() -> impl Strategy<Value = Checks> {
        let words = (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(denied, ask_refuses, raw_stderr)| {
            reloop_tools::HookRulings {
                denied: denied.then_some("PreToolUse:{tool} hook error: {reason}"),
                ask_refuses,
                raw_stderr,
                bare: reloop_core::profile::BareHookTexts::default(),
            }
        });
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), words).prop_map(
            |(a, b, c, d, e, hook_rulings)| Checks {
                read_first: a,
                pre_tool_use: b,
                can_use_tool: c,
                rules: d,
                prompt: e,
                hook_rulings,
            },
        )
    }

    fn read_first() -> impl Strategy<Value = ReadFirst> {
        proptest::option::of(text()).prop_map(ReadFirst::from_refusal)
    }

    fn callback() -> impl Strategy<Value = CallbackAnswer> {
        prop_oneof![
            Just(CallbackAnswer::NoOpinion),
            Just(CallbackAnswer::Decided(Decision::Allow)),
            text().prop_map(|message| CallbackAnswer::Decided(Decision::Deny { message })),
        ]
    }

    fn judgement() -> impl Strategy<Value = Judgement> {
        let verdict = prop_oneof![
            Just(Verdict::Allow),
            text().prop_map(|message| Verdict::Deny { message }),
            text().prop_map(|message| Verdict::Ask { message }),
        ];
        let step = prop::sample::select(vec![
            RuleStep::Removed,
            RuleStep::DenyRule,
            RuleStep::Unjudged,
            RuleStep::AskRule,
            RuleStep::Bypass,
            RuleStep::Protected,
            RuleStep::AllowRule,
            RuleStep::OutsideWorkspace,
            RuleStep::BashReadsOutside,
            RuleStep::ReadOnly,
            RuleStep::PlanMode,
            RuleStep::AcceptEdits,
            RuleStep::WouldAsk,
            RuleStep::PathCheck,
        ]);
        (verdict, step).prop_map(|(verdict, step)| Judgement { verdict, step, rule: None })
    }

    fn prompt() -> impl Strategy<Value = PromptReply> {
        prop_oneof![
            Just(PromptReply::Failed),
            value().prop_map(PromptReply::Replied),
            (prop_oneof![Just("allow"), Just("deny")], proptest::option::of(value()), proptest::option::of(text()))
                .prop_map(|(b, updated, message)| PromptReply::Replied(
                    json!({"behavior": b, "updatedInput": updated, "message": message})
                )),
        ]
    }

    fn answers() -> impl Strategy<Value = Answers> {
        (
            proptest::option::of(read_first()),
            proptest::option::of(prop::collection::vec(hook_run(), 0..4)),
            proptest::option::of(callback()),
            proptest::option::of(judgement()),
            proptest::option::of(prompt()),
        )
            .prop_map(|(read_first, pre_tool_use, can_use_tool, rules, prompt)| Answers {
                read_first,
                pre_tool_use,
                can_use_tool,
                rules,
                prompt,
            })
    }

    fn tool() -> impl Strategy<Value = String> {
        prop_oneof![Just("Write".to_string()), Just("Bash".to_string()), text()]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_answers_give_a_ruling_or_a_question_not_yet_answered(
            tool in tool(), input in value(), checks in checks(), answers in answers(),
        ) {
            match decide(&tool, &input, checks, &answers) {
                Next::Decided(Ruling::Refuse { denied: false, why, .. }) => {
                    // Only a tool's own check refuses without a permission denial.
                    let own_check = matches!(why, Why::ReadFirst | Why::Rules(RuleStep::Removed | RuleStep::PathCheck));
                    prop_assert!(own_check, "{why:?}");
                }
                Next::Decided(_) => {}
                Next::Need(Need::ReadFirst) => prop_assert!(checks.read_first && answers.read_first.is_none()),
                Next::Need(Need::PreToolUse) => prop_assert!(checks.pre_tool_use && answers.pre_tool_use.is_none()),
                Next::Need(Need::CanUseTool { .. }) => {
                    prop_assert!(checks.can_use_tool && answers.can_use_tool.is_none())
                }
                Next::Need(Need::Rules { .. }) => prop_assert!(checks.rules && answers.rules.is_none()),
                Next::Need(Need::Prompt { .. }) => prop_assert!(checks.prompt && answers.prompt.is_none()),
            }
        }

        #[test]
        fn a_driver_answering_every_question_rules_within_five(
            tool in tool(), input in value(), checks in checks(),
            read_first in read_first(), hooks in prop::collection::vec(hook_run(), 0..4), callback in callback(),
            rules in judgement(), prompt in prompt(),
        ) {
            let script = Script { read_first, hooks, callback, rules, prompt };
            let (asked, _) = rule(&tool, &input, checks, &script);
            prop_assert!(asked.len() <= 5);
        }
    }
}
