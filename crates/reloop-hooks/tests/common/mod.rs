//! Helpers shared by the hook runner tests: script files, inputs and process checks.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use reloop_hooks::{HookCommand, HookCommon};

/// Writes an executable bash script and returns the command that runs it.
pub fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod script");
    path.display().to_string()
}

pub fn hook(command: &str, timeout_ms: u64) -> HookCommand {
    HookCommand::command(command, Duration::from_millis(timeout_ms))
}

pub fn common(cwd: &Path) -> HookCommon {
    HookCommon {
        session_id: "sess-1".into(),
        transcript_path: "/tmp/sess-1.jsonl".into(),
        cwd: cwd.display().to_string(),
        permission_mode: "default".into(),
    }
}

/// Whether the process has exited (gone, or a zombie awaiting its new parent) within `limit`.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
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
