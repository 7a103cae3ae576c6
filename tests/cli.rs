//! The CLI behaves like a good Rust CLI: a closed pipe ends an inspect command quietly with
//! exit 0; long output goes through the pager only on a terminal; colour only on a terminal
//! (or when forced) and never with `NO_COLOR`; a spinner only in text mode on a terminal; a
//! local model server that is not running fails fast with a message that says what to do;
//! completions and a man page come from the same clap definition.
//!
//! Terminal cases run under util-linux `script`, which gives reloop a pseudo-terminal.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{call, response, stderr, stdout, text, Workspace};
use serde_json::json;

const RELOOP: &str = env!("CARGO_BIN_EXE_reloop");

/// A journal holding a session whose `show`, `export` and replayed stream run to megabytes:
/// eight reads of a 2000-line file, far more than a pipe buffers.
fn big_session() -> Workspace {
    let ws = Workspace::seed();
    let line = "the quick brown fox jumps over the lazy dog, again and again and again\n";
    std::fs::write(ws.cwd().join("big.txt"), line.repeat(2000)).unwrap();
    let path = ws.cwd().join("big.txt").display().to_string();
    let calls: Vec<_> = (0..8).map(|i| call(&format!("toolu_{i}"), "Read", json!({"file_path": path}))).collect();
    let responses = vec![
        response("msg_1", json!(calls), "tool_use", 10),
        response("msg_2", text("I read it eight times."), "end_turn", 5),
    ];
    let out = run_cassette(&ws, "read it", responses, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    ws
}

/// `reloop run PROMPT` on `responses` as a cassette, text output.
fn run_cassette(ws: &Workspace, prompt: &str, responses: Vec<serde_json::Value>, extra: &[&str]) -> Output {
    let path = ws.dir.path().join("cassette.json");
    std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
    let cwd = ws.cwd();
    let mut args = vec!["run", prompt, "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap()];
    args.extend_from_slice(extra);
    ws.reloop(&args)
}

/// Runs `reloop ARGS` with stdout piped, reads one line (or none when `read_first` is false),
/// closes the pipe and waits: the exit code and stderr.
fn closed_after_one_line(ws: &Workspace, args: &[&str], read_first: bool) -> (Option<i32>, String) {
    let mut child = common::reloop_bin()
        .args(args)
        .env("RELOOP_JOURNAL", ws.journal())
        .current_dir(ws.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    if read_first {
        let mut first = String::new();
        BufReader::new(out).read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "reloop {args:?} wrote nothing");
    } else {
        drop(out);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "reloop {args:?} did not end once its stdout was closed");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

#[test]
fn every_inspect_command_ends_quietly_with_exit_0_when_its_reader_goes_away() {
    let ws = big_session();
    let families: &[&[&str]] = &[
        &["show", "last"],
        &["show", "last", "--json"],
        &["show", "last", "--steps"],
        &["show", "last", "--steps", "--json"],
        &["show", "last", "--turn", "1"],
        &["why", "last"],
        &["why", "last", "--dot"],
        &["why", "last", "--json"],
        &["sessions"],
        &["sessions", "--json"],
        &["export", "last"],
        &["export", "last", "--format", "stream-json"],
        &["export", "last", "--format", "journal"],
        &["replay", "last"],
        &["replay", "last", "--output-format", "stream-json"],
        &["replay", "last", "--output-format", "text"],
        &["completions", "bash"],
        &["man"],
    ];
    for args in families {
        for read_first in [true, false] {
            let (code, err) = closed_after_one_line(&ws, args, read_first);
            assert_eq!(code, Some(0), "reloop {args:?} (read a line first: {read_first}): {err}");
            assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "reloop {args:?}: {err}");
        }
    }
}

/// Whether util-linux `script` is here to give reloop a terminal.
fn have_script() -> bool {
    let found = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: util-linux `script` is not installed, so no terminal can be given to reloop");
    }
    found
}

/// Runs `reloop ARGS` on a pseudo-terminal (stdout and stderr both), in `ws`, with `env`;
/// returns what the terminal showed.
fn on_terminal(ws: &Workspace, args: &[&str], env: &[(&str, &str)], unset: &[&str]) -> String {
    let quoted: Vec<String> = std::iter::once(RELOOP)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut cmd = Command::new("script");
    common::hermetic(&mut cmd)
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .env("RELOOP_JOURNAL", ws.journal())
        .env("TERM", "xterm-256color")
        .current_dir(ws.dir.path())
        .stdin(Stdio::null());
    for name in unset {
        cmd.env_remove(name);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    format!("{}{}", stdout(&out), stderr(&out))
}

#[test]
fn long_output_goes_through_the_pager_on_a_terminal_only() {
    let ws = Workspace::seed();
    let out = ws.reloop(&["run", "--demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    if !have_script() {
        return;
    }
    let pager = ("RELOOP_PAGER", "sed s/^/PAGED:/");
    let shown = on_terminal(&ws, &["show", "last"], &[pager], &[]);
    assert!(shown.contains("PAGED:session "), "the pager did not get `show`:\n{shown}");
    let shown = on_terminal(&ws, &["why", "last"], &[pager], &[]);
    assert!(shown.contains("PAGED:"), "the pager did not get `why`:\n{shown}");
    // PAGER is the fallback, as for git.
    let shown = on_terminal(&ws, &["sessions"], &[("PAGER", "sed s/^/VIA-PAGER:/")], &["RELOOP_PAGER"]);
    assert!(shown.contains("VIA-PAGER:"), "PAGER was not used:\n{shown}");
    // Turned off: by the flag, by an empty RELOOP_PAGER, by an empty PAGER.
    for (args, env, unset) in [
        (&["show", "last", "--no-pager"][..], &[pager][..], &[][..]),
        (&["show", "last"], &[("RELOOP_PAGER", "")], &[]),
        (&["show", "last"], &[("PAGER", "")], &["RELOOP_PAGER"]),
    ] {
        let shown = on_terminal(&ws, args, env, unset);
        assert!(shown.contains("session ") && !shown.contains("PAGED:"), "{args:?} {env:?}:\n{shown}");
    }
    // Piped: never a pager, whatever the environment says.
    let piped = ws.reloop_env(&["show", "last"], &[pager]);
    assert!(stdout(&piped).starts_with("session ") && !stdout(&piped).contains("PAGED:"), "{}", stdout(&piped));
    // A run is never paged.
    let shown = on_terminal(&ws, &["run", "--demo"], &[pager], &[]);
    assert!(!shown.contains("PAGED:"), "{shown}");
}

#[test]
fn colour_only_on_a_terminal_or_when_forced_and_never_with_no_color() {
    let ws = Workspace::seed();
    let piped = ws.reloop(&["run", "--demo"]);
    assert!(!stdout(&piped).contains('\x1b') && !stderr(&piped).contains('\x1b'), "escape codes in a pipe");
    let forced = ws.reloop_env(&["run", "--demo"], &[("CLICOLOR_FORCE", "1")]);
    assert!(stdout(&forced).contains("\x1b[1m⏺ "), "CLICOLOR_FORCE gives no colour:\n{}", stdout(&forced));
    let refused = ws.reloop_env(&["run", "--demo"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!stdout(&refused).contains('\x1b'), "NO_COLOR is not honoured");
    if !have_script() {
        return;
    }
    let shown = on_terminal(&ws, &["run", "--demo"], &[], &[]);
    assert!(shown.contains("\x1b[1m⏺ "), "no colour on a terminal:\n{shown}");
    let shown = on_terminal(&ws, &["run", "--demo"], &[("NO_COLOR", "1")], &[]);
    assert!(!shown.contains("\x1b[1m"), "NO_COLOR is not honoured on a terminal:\n{shown}");
}

/// A run whose one tool call takes 1.5 s, so a spinner has time to show.
fn slow_tool(ws: &Workspace) -> Vec<serde_json::Value> {
    let _ = ws;
    vec![
        response("msg_1", json!([call("toolu_1", "Bash", json!({"command": "sleep 1.5"}))]), "tool_use", 10),
        response("msg_2", text("slept"), "end_turn", 5),
    ]
}

#[test]
fn a_spinner_shows_what_the_run_waits_for_on_a_terminal_in_text_mode_only() {
    let ws = Workspace::seed();
    let allow = ["--allowed-tools", "Bash(sleep:*)"];
    // Not a terminal: no spinner.
    let piped = run_cassette(&ws, "sleep", slow_tool(&ws), &allow);
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    assert!(stdout(&piped).contains("slept"), "{}", stdout(&piped));
    assert!(!stderr(&piped).contains("running Bash"), "a spinner in a pipe:\n{}", stderr(&piped));
    if !have_script() {
        return;
    }
    let path = ws.dir.path().join("slow.json");
    std::fs::write(&path, json!({ "responses": slow_tool(&ws) }).to_string()).unwrap();
    let cwd = ws.cwd();
    let base = ["run", "sleep", "--script", path.to_str().unwrap(), "--cwd", cwd.to_str().unwrap(), allow[0], allow[1]];
    let shown = on_terminal(&ws, &base, &[], &[]);
    assert!(shown.contains("running Bash"), "no spinner while Bash ran:\n{shown}");
    assert!(shown.contains("slept"), "{shown}");
    for format in ["json", "stream-json"] {
        let mut args = base.to_vec();
        args.extend(["--output-format", format]);
        let shown = on_terminal(&ws, &args, &[], &[]);
        assert!(!shown.contains("running Bash") && !shown.contains("waiting for the model"), "{format}:\n{shown}");
    }
}

#[test]
fn a_local_model_server_that_is_not_running_fails_fast_and_says_how_to_start_one() {
    let ws = Workspace::seed();
    // A port that was just free: bound, then released, so nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let cwd = ws.cwd();
    let out = ws.reloop(&[
        "run",
        "hello",
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "qwen3",
        "--cwd",
        cwd.to_str().unwrap(),
        "--output-format",
        "stream-json",
    ]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let lines = common::json_lines(&out);
    let retries: Vec<_> = lines.iter().filter(|l| l["subtype"] == "api_retry").collect();
    assert_eq!(retries.len(), 2, "{lines:#?}");
    assert!(retries.iter().all(|r| r["max_retries"] == 2 && r["error"] == "connection_error"), "{retries:#?}");
    let result = lines.last().unwrap();
    let message = result["result"].as_str().unwrap();
    assert!(
        message.contains(&format!("nothing is listening at {url} — start your model server there (ollama serve, vllm serve and llama-server speak the OpenAI wire: --provider openai)")),
        "{message}"
    );
    // The session replays identically and `why` names the decision.
    assert!(ws.replays_identical());
    assert!(ws.why().contains("nothing answers at the local model server"), "{}", ws.why());
    // Without its flag the same journal would have gone on retrying: the flag is what bites.
    let flipped = ws.reloop(&["replay", "last", "--flip-flag", "3", "--json"]);
    assert_eq!(flipped.status.code(), Some(3), "{}", stdout(&flipped));
    let report: serde_json::Value = serde_json::from_slice(&flipped.stdout).unwrap();
    assert_eq!(report["divergence"]["event_kind"], "model_failed", "{report:#}");
}

#[test]
fn completions_and_the_man_page_come_from_clap() {
    let ws = Workspace::seed();
    let bash = ws.reloop(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0), "{}", stderr(&bash));
    let script = stdout(&bash);
    assert!(script.contains("_reloop()") && script.contains("--no-pager"), "{script}");
    let file = ws.dir.path().join("reloop.bash");
    std::fs::write(&file, &script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(syntax.status.success(), "bash -n: {}", stderr(&syntax));
    let zsh = stdout(&ws.reloop(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef reloop"), "{zsh}");
    let fish = stdout(&ws.reloop(&["completions", "fish"]));
    assert!(fish.contains("complete -c reloop"), "{fish}");
    let bad = ws.reloop(&["completions", "cmd.exe"]);
    assert_eq!(bad.status.code(), Some(2));

    let man = ws.reloop(&["man"]);
    assert_eq!(man.status.code(), Some(0), "{}", stderr(&man));
    let page = stdout(&man);
    assert!(page.contains(".TH reloop 1"), "{page}");
    for sub in ["reloop-run", "reloop-why", "reloop-replay"] {
        assert!(page.contains(&format!(".TH {sub} 1")), "no page for {sub}");
    }
    assert!(page.contains("no\\-pager") && page.contains("max\\-retries"), "options missing from the man page");
    // When man(1) is here, the page renders without a warning.
    if Path::new("/usr/bin/man").exists() {
        let file = ws.dir.path().join("reloop.1");
        std::fs::write(&file, &page).unwrap();
        let shown =
            Command::new("man").args(["-l", "--warnings", "-P", "cat"]).arg(&file).env("MANWIDTH", "100").output();
        if let Ok(shown) = shown {
            assert!(stdout(&shown).contains("reloop"), "{}", stderr(&shown));
        }
    }
}

/// `why` writes its decisions as it finds them, never holding a session's lines: the JSON is
/// still serde_json's pretty array byte for byte, and a filter that matches nothing still
/// says so.
#[test]
fn why_written_as_found_is_the_same_output() {
    let ws = big_session();
    let json_text = stdout(&ws.reloop(&["why", "last", "--json"]));
    let lines: serde_json::Value = serde_json::from_str(&json_text).unwrap();
    assert!(lines.as_array().is_some_and(|l| l.len() >= 2), "{json_text}");
    assert_eq!(json_text, format!("{}\n", serde_json::to_string_pretty(&lines).unwrap()));
    assert_eq!(stdout(&ws.reloop(&["why", "last", "--json", "--turn", "999"])), "[]\n");
    assert_eq!(stdout(&ws.reloop(&["why", "last", "--turn", "999"])), "no decisions match\n");
    let text = stdout(&ws.reloop(&["why", "last"]));
    assert!(text.starts_with("rules: ") && text.contains("\nprompt 1 (#"), "{text}");
}
