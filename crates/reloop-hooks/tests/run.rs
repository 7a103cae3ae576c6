//! Running real hook scripts: exit codes, JSON decisions, stdin, timeouts and cancellation.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{common, gone_within, hook, script};
use reloop_core::hook::{
    combine, interpret, pre_tool_use_error, stop_hook_feedback, HookEventName, HookRun, HookVerdict, Permission,
};
use reloop_hooks::{run_all, run_hook, HookInput, Settings, CANCELLED_NOTE, MAX_HOOK_OUTPUT_BYTES};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn stop_input(cwd: &Path) -> HookInput {
    HookInput::stop(common(cwd), false, Some("All done.".into()))
}

async fn run_stop_script(body: &str) -> (String, HookRun) {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = script(dir.path(), "hook.sh", body);
    let run = run_hook(&hook(&command, 1000), &stop_input(dir.path()), dir.path(), &CancellationToken::new()).await;
    (command, run)
}

#[tokio::test]
async fn exit_0_passes_and_keeps_stdout() {
    let (command, run) = run_stop_script("echo hello; exit 0").await;
    assert_eq!(
        run,
        HookRun { command, exit_code: Some(0), stdout: "hello\n".into(), stderr: String::new(), timed_out: false }
    );
    assert_eq!(interpret(HookEventName::Stop, &run), HookVerdict::Pass);
}

#[tokio::test]
async fn exit_2_blocks_the_stop_with_stderr_as_feedback() {
    let (command, run) = run_stop_script("echo 'tests failing' >&2; exit 2").await;
    assert_eq!((run.exit_code, run.stderr.as_str()), (Some(2), "tests failing\n"));
    let combined = combine(&[(command.clone(), interpret(HookEventName::Stop, &run))]);
    assert_eq!(stop_hook_feedback(&combined.blocks), format!("Stop hook feedback:\n[{command}]: tests failing"));
}

#[tokio::test]
async fn exit_1_is_a_non_blocking_error_for_the_user() {
    let (_, run) = run_stop_script("echo 'lint crashed' >&2; exit 1").await;
    assert_eq!(run.exit_code, Some(1));
    assert_eq!(
        interpret(HookEventName::Stop, &run),
        HookVerdict::NonBlockingError { message: "Failed with non-blocking status code: lint crashed".into() }
    );
}

#[tokio::test]
async fn json_decision_block_feeds_the_reason_back() {
    let (command, run) = run_stop_script(r#"echo '{"decision":"block","reason":"tests failing"}'"#).await;
    let combined = combine(&[(command, interpret(HookEventName::Stop, &run))]);
    assert_eq!(stop_hook_feedback(&combined.blocks), "Stop hook feedback:\ntests failing");
}

#[tokio::test]
async fn json_continue_false_prevents_with_the_stop_reason() {
    let (_, run) = run_stop_script(r#"echo '{"continue":false,"stopReason":"done for today"}'"#).await;
    assert_eq!(
        interpret(HookEventName::Stop, &run),
        HookVerdict::Prevent { stop_reason: Some("done for today".into()) }
    );
}

#[tokio::test]
async fn pre_tool_use_hooks_from_settings_deny_rewrite_and_block() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deny = script(
        dir.path(),
        "deny.sh",
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
"permissionDecisionReason":"rm is not allowed","updatedInput":{"command":"ls"}}}'"#,
    );
    let guard = script(dir.path(), "guard.sh", "echo 'no rm -rf' >&2; exit 2");
    let settings = Settings::from_json(
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": deny, "timeout": 1}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": guard, "timeout": 1}]},
        ]}})
        .to_string(),
        "settings.json",
    )
    .expect("settings");

    let bash = settings.hooks.matching(HookEventName::PreToolUse, Some("Bash"));
    let input = HookInput::pre_tool_use(common(dir.path()), "Bash", json!({"command": "rm -rf /"}), "toolu_1");
    let runs = run_all(&bash, &input, dir.path(), &CancellationToken::new()).await;
    let verdicts: Vec<_> = runs.iter().map(|r| (r.command.clone(), interpret(HookEventName::PreToolUse, r))).collect();
    assert_eq!(
        verdicts,
        vec![(
            deny.clone(),
            HookVerdict::PermissionDecision {
                decision: Permission::Deny,
                reason: Some("rm is not allowed".into()),
                updated_input: Some(json!({"command": "ls"})),
            }
        )]
    );
    let permission = combine(&verdicts).permission.expect("a decision");
    assert_eq!((permission.decision, permission.reason.as_deref()), (Permission::Deny, Some("rm is not allowed")));

    let write = settings.hooks.matching(HookEventName::PreToolUse, Some("Write"));
    let input = HookInput::pre_tool_use(common(dir.path()), "Write", json!({"file_path": "/x"}), "toolu_2");
    let runs = run_all(&write, &input, dir.path(), &CancellationToken::new()).await;
    let blocks = combine(&[(guard.clone(), interpret(HookEventName::PreToolUse, &runs[0]))]).blocks;
    assert_eq!(blocks.len(), 1);
    assert_eq!(
        pre_tool_use_error("Write", &blocks[0].command, &blocks[0].message),
        format!("PreToolUse:Write hook error: [{guard}]: no rm -rf")
    );
}

/// Runs a hook that saves its stdin, and returns exactly the bytes it received.
async fn received_stdin(input: &HookInput, dir: &Path) -> String {
    let saved = dir.join("input.json");
    let command = script(dir, "save.sh", &format!("cat > '{}'", saved.display()));
    let run = run_hook(&hook(&command, 1000), input, dir, &CancellationToken::new()).await;
    assert_eq!(run.exit_code, Some(0), "{run:?}");
    std::fs::read_to_string(saved).expect("saved input")
}

#[tokio::test]
async fn stop_input_has_exactly_the_documented_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().display();
    let got = received_stdin(&HookInput::stop(common(dir.path()), true, Some("All done.".into())), dir.path()).await;
    assert_eq!(
        got,
        format!(
            r#"{{"session_id":"sess-1","transcript_path":"/tmp/sess-1.jsonl","cwd":"{cwd}","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"All done."}}"#
        )
    );
    let got = received_stdin(&HookInput::stop(common(dir.path()), false, None), dir.path()).await;
    assert!(got.ends_with(r#""hook_event_name":"Stop","stop_hook_active":false}"#), "{got}");
}

#[tokio::test]
async fn tool_inputs_have_exactly_the_documented_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().display();
    let head = format!(
        r#"{{"session_id":"sess-1","transcript_path":"/tmp/sess-1.jsonl","cwd":"{cwd}","permission_mode":"default","#
    );
    let pre = HookInput::pre_tool_use(common(dir.path()), "Bash", json!({"command": "ls"}), "toolu_1");
    assert_eq!(
        received_stdin(&pre, dir.path()).await,
        format!(
            r#"{head}"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"ls"}},"tool_use_id":"toolu_1"}}"#
        )
    );
    let post = HookInput::post_tool_use(
        common(dir.path()),
        "Bash",
        json!({"command": "ls"}),
        "toolu_1",
        json!({"stdout": "a\n", "is_error": false}),
    );
    assert_eq!(
        received_stdin(&post, dir.path()).await,
        format!(
            r#"{head}"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"ls"}},"tool_response":{{"stdout":"a\n","is_error":false}},"tool_use_id":"toolu_1"}}"#
        )
    );
}

#[tokio::test]
async fn a_hook_runs_in_the_session_cwd_with_bash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().join("project");
    std::fs::create_dir(&cwd).expect("mkdir");
    let command = script(dir.path(), "where.sh", r#"pwd -P; echo "${BASH_VERSION:+bash}""#);
    let run = run_hook(&hook(&command, 1000), &stop_input(&cwd), &cwd, &CancellationToken::new()).await;
    let expected = cwd.canonicalize().expect("canonical cwd");
    assert_eq!(run.stdout, format!("{}\nbash\n", expected.display()));
}

#[tokio::test]
async fn a_hook_that_ignores_a_large_stdin_still_passes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = script(dir.path(), "quiet.sh", "exit 0");
    let big = json!({"content": "x".repeat(512 * 1024)});
    let input = HookInput::pre_tool_use(common(dir.path()), "Write", big, "toolu_1");
    let run = run_hook(&hook(&command, 1000), &input, dir.path(), &CancellationToken::new()).await;
    assert_eq!((run.exit_code, run.timed_out), (Some(0), false));
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = script(dir.path(), "slow.sh", "sleep 30 & echo $!; echo started >&2; sleep 30");
    let started = Instant::now();
    let run = run_hook(&hook(&command, 500), &stop_input(dir.path()), dir.path(), &CancellationToken::new()).await;
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!((run.exit_code, run.timed_out), (None, true));
    assert_eq!(run.stderr, "started\nHook timed out after 500ms");
    let pid: u32 = run.stdout.trim().parse().expect("the background pid");
    assert!(gone_within(pid, Duration::from_secs(5)), "background sleep {pid} survived the timeout");
    assert_eq!(
        interpret(HookEventName::Stop, &run),
        HookVerdict::NonBlockingError { message: "started\nHook timed out after 500ms".into() }
    );
}

#[tokio::test]
async fn a_background_process_holding_the_pipes_keeps_the_hook_running_until_its_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = script(dir.path(), "detach.sh", "sleep 30 & echo $!; exit 0");
    let run = run_hook(&hook(&command, 300), &stop_input(dir.path()), dir.path(), &CancellationToken::new()).await;
    assert!(run.timed_out, "{run:?}");
    let pid: u32 = run.stdout.trim().parse().expect("the background pid");
    assert!(gone_within(pid, Duration::from_secs(5)), "background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn cancelling_kills_the_hook_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = script(dir.path(), "slow.sh", "sleep 30 & echo $!; sleep 30");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let run = run_hook(&hook(&command, 60_000), &stop_input(dir.path()), dir.path(), &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert_eq!((run.exit_code, run.timed_out, run.stderr.as_str()), (None, false, CANCELLED_NOTE));
    let pid: u32 = run.stdout.trim().parse().expect("the background pid");
    assert!(gone_within(pid, Duration::from_secs(5)), "background sleep {pid} survived the cancel");
}

#[tokio::test]
async fn an_already_cancelled_token_runs_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let command = script(dir.path(), "mark.sh", &format!("touch '{}'", marker.display()));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let run = run_hook(&hook(&command, 1000), &stop_input(dir.path()), dir.path(), &cancel).await;
    assert_eq!((run.exit_code, run.stderr.as_str()), (None, CANCELLED_NOTE));
    assert!(!marker.exists());
}

#[tokio::test]
async fn a_hook_that_cannot_start_is_a_non_blocking_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("gone");
    let run = run_hook(&hook("exit 0", 1000), &stop_input(dir.path()), &missing, &CancellationToken::new()).await;
    assert_eq!(run.exit_code, None);
    assert!(run.stderr.starts_with(&format!("Failed to run hook in {}: ", missing.display())), "{}", run.stderr);
    assert!(matches!(interpret(HookEventName::Stop, &run), HookVerdict::NonBlockingError { .. }));
}

#[tokio::test]
async fn a_missing_script_is_exit_127_not_a_block() {
    let (_, run) = run_stop_script("/no/such/hook.sh").await;
    assert_eq!(run.exit_code, Some(127));
    assert!(matches!(interpret(HookEventName::Stop, &run), HookVerdict::NonBlockingError { .. }));
}

#[tokio::test]
async fn a_hook_killed_by_a_signal_has_no_exit_code() {
    let (_, run) = run_stop_script("kill -9 $$").await;
    assert_eq!((run.exit_code, run.timed_out, run.stderr.as_str()), (None, false, "Hook killed by signal 9"));
}

#[tokio::test]
async fn output_beyond_the_bound_is_counted_not_kept() {
    let (_, run) = run_stop_script("head -c 1100000 /dev/zero | tr '\\0' a").await;
    assert_eq!(run.exit_code, Some(0));
    let dropped = 1_100_000 - MAX_HOOK_OUTPUT_BYTES;
    assert_eq!(run.stdout, format!("{}\n... [{dropped} bytes truncated]", "a".repeat(MAX_HOOK_OUTPUT_BYTES)));
}

#[tokio::test]
async fn run_all_runs_in_parallel_and_reports_in_hook_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hooks = vec![
        hook(&script(dir.path(), "a.sh", "sleep 0.6; echo a"), 1000),
        hook(&script(dir.path(), "b.sh", "sleep 0.4; echo b >&2; exit 2"), 1000),
        hook(&script(dir.path(), "c.sh", "echo c"), 1000),
    ];
    let started = Instant::now();
    let runs = run_all(&hooks, &stop_input(dir.path()), dir.path(), &CancellationToken::new()).await;
    assert!(started.elapsed() < Duration::from_millis(950), "ran one after another: {:?}", started.elapsed());
    let got: Vec<_> = runs.iter().map(|r| (r.exit_code, r.stdout.as_str(), r.stderr.as_str())).collect();
    assert_eq!(got, vec![(Some(0), "a\n", ""), (Some(2), "", "b\n"), (Some(0), "c\n", "")]);
    let commands: Vec<_> = runs.iter().map(|r| r.command.clone()).collect();
    assert_eq!(commands, hooks.iter().map(|h| h.command.clone()).collect::<Vec<_>>());
}
