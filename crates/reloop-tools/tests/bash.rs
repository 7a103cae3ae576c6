//! Bash: output, exit status, timeouts that kill the whole process group, cancellation, limits.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::Workspace;
use serde_json::json;

#[test]
fn stdout_and_stderr_arrive_interleaved_in_write_order() {
    let ws = Workspace::new();
    assert_eq!(ws.ok("Bash", json!({"command": "echo out; echo err >&2; echo out2"})), "out\nerr\nout2");
}

#[test]
fn the_command_runs_in_the_working_directory() {
    let ws = Workspace::new();
    assert_eq!(ws.ok("Bash", json!({"command": "pwd"})), ws.root.display().to_string());
}

#[test]
fn a_non_zero_exit_is_an_error_with_the_output_and_the_code() {
    let ws = Workspace::new();
    assert_eq!(ws.err("Bash", json!({"command": "echo failing; exit 3"})), "failing\nExit code 3");
    assert_eq!(ws.err("Bash", json!({"command": "exit 2"})), "Exit code 2");
}

#[test]
fn no_output_says_so() {
    let ws = Workspace::new();
    assert_eq!(ws.ok("Bash", json!({"command": "true"})), "(Bash completed with no output)");
}

#[test]
fn stdin_is_empty_so_a_reader_does_not_hang() {
    let ws = Workspace::new();
    assert_eq!(ws.ok("Bash", json!({"command": "cat", "timeout": 5000})), "(Bash completed with no output)");
}

#[test]
fn output_past_30000_characters_keeps_the_start_and_counts_the_lines_of_the_rest() {
    let ws = Workspace::new();
    let out =
        ws.ok("Bash", json!({"command": "printf 'b'; head -c 39999 /dev/zero | tr '\\0' 'a'; printf '\\nx\\ny'"}));
    assert_eq!(out, format!("b{}\n\n... [3 lines truncated] ...", "a".repeat(29_999)));
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let ws = Workspace::new();
    let started = Instant::now();
    let out = ws.err("Bash", json!({"command": "sleep 30 & echo $!; sleep 30", "timeout": 500}));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let (message, pid) = out.split_once('\n').expect("timeout message then the background pid");
    assert_eq!(message, "Command timed out after 500ms");
    let pid: u32 = pid.trim().parse().expect("pid");
    assert!(gone_within(pid, Duration::from_secs(5)), "background sleep {pid} survived the timeout");
}

/// Whether the process has exited (gone, or a zombie awaiting its new parent) within `limit`.
fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
                if state == Some("Z") || state == Some("X") {
                    return true;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn raising_the_cancel_flag_interrupts_a_running_command() {
    let ws = Workspace::new();
    let cancel = ws.ctx.cancel.clone();
    let raiser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.store(true, Ordering::SeqCst);
    });
    let started = Instant::now();
    let out = ws.err("Bash", json!({"command": "sleep 30"}));
    raiser.join().expect("raiser thread");
    assert_eq!(out, "Interrupted by user");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn an_already_cancelled_session_does_not_start_the_command() {
    let ws = Workspace::new();
    ws.ctx.cancel.store(true, Ordering::SeqCst);
    assert_eq!(ws.err("Bash", json!({"command": "touch made"})), "Interrupted by user");
    assert!(!ws.path("made").exists());
}

#[test]
fn a_background_child_holding_the_output_open_does_not_block_the_result() {
    let ws = Workspace::new();
    let started = Instant::now();
    assert_eq!(ws.ok("Bash", json!({"command": "sleep 3 & echo started"})), "started");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[test]
fn a_timeout_above_the_maximum_is_lowered_and_a_non_positive_one_refused() {
    let ws = Workspace::new();
    assert_eq!(ws.ok("Bash", json!({"command": "echo fine", "timeout": 5_000_000})), "fine");
    assert_eq!(
        ws.err("Bash", json!({"command": "echo never", "timeout": 0})),
        "<tool_use_error>timeout must be a positive number of milliseconds, got 0</tool_use_error>"
    );
}

#[test]
fn run_in_background_is_refused() {
    let ws = Workspace::new();
    assert_eq!(
        ws.err("Bash", json!({"command": "touch made", "run_in_background": true})),
        "<tool_use_error>run_in_background is not supported by reloop. Run the command in the foreground instead.</tool_use_error>"
    );
    assert!(!ws.path("made").exists());
}

#[test]
fn only_reading_commands_are_read_only_and_concurrency_safe() {
    let ws = Workspace::new();
    for (command, safe) in [("ls -la", true), ("git status && cat a", true), ("rm -rf x", false), ("echo x > f", false)]
    {
        let input = json!({"command": command});
        assert_eq!(ws.registry.is_read_only("Bash", &input), safe, "{command}");
        assert_eq!(ws.registry.is_concurrency_safe("Bash", &input), safe, "{command}");
    }
}
