//! What built-in commands said before a prompt ([`reloop_core::local_lines`]), in the session
//! file as Claude Code keeps it (`settings_slash/stream_*`, `sdk36/stream_local`, both
//! versions): the caveat a meta `user` line, the command a `user` line, its output a `user` line
//! (a compaction's) or a `system` `local_command` line (`/clear`'s, a failure's), 2.1.332
//! naming the command on it, and the failure.

use std::io::Write;

use reloop_core::local_lines::LocalLine;
use reloop_core::Message;
use serde_json::{json, Map};

use super::JsonlWriter;
use crate::error::ExportError;

impl JsonlWriter<'_> {
    /// Writes `local`'s lines; `newer`: 2.1.332's file.
    pub(super) fn local_lines(
        &mut self,
        local: &[LocalLine],
        newer: bool,
        at_ms: u64,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        let mut command = None;
        for line in local {
            if let Some(named) = command_of(&line.text) {
                command = Some(named);
            }
            if !line.system {
                let meta: &[&str] = if line.text.starts_with("<local-command-caveat>") { &["isMeta"] } else { &[] };
                self.push("user", json!({"role": "user", "content": line.text}), at_ms, meta, out)?;
                continue;
            }
            let mut fields = Map::new();
            fields.insert("subtype".into(), json!("local_command"));
            fields.insert("content".into(), json!(line.text));
            fields.insert("level".into(), json!("info"));
            fields.insert("isMeta".into(), json!(false));
            if let (true, Some((name, args))) = (newer, &command) {
                fields.insert("commandRun".into(), json!({"command": name, "args": args}));
                if line.failed {
                    fields.insert("commandOutcome".into(), json!({"kind": "failed"}));
                }
            }
            self.push_line("system", fields, at_ms, out)?;
        }
        Ok(())
    }
}

/// `<command-name>/NAME</command-name> … <command-args>ARGS</command-args>` → (NAME, ARGS).
fn command_of(text: &str) -> Option<(String, String)> {
    let name = text.strip_prefix("<command-name>/")?.split("</command-name>").next()?;
    let args = text.split("<command-args>").nth(1)?.split("</command-args>").next()?;
    Some((name.to_string(), args.to_string()))
}

/// `message` without the `count` local lines the core put after its opening reminders; `None`
/// when there are none.
pub(super) fn without_local(message: &Message, count: usize) -> Option<Message> {
    if count == 0 {
        return None;
    }
    let at = reloop_core::local_lines::lines_at(&message.content);
    let mut kept = message.clone();
    kept.content.drain(at..(at + count).min(kept.content.len()));
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_names_its_command_and_arguments() {
        let line = reloop_core::local_lines::command("compact", "keep it short");
        assert_eq!(command_of(&line), Some(("compact".into(), "keep it short".into())));
        assert_eq!(command_of("<local-command-stdout>x</local-command-stdout>"), None);
    }
}
