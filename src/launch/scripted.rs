//! The scripted model provider of a cassette, with `{{cwd}}` read as the working directory: `run`
//! builds one for a new session and `resume` rebuilds it for a recorded one, so it sits below both.

use reloop_model::ScriptedProvider;

use crate::error::CliError;

/// The scripted provider of a cassette file, read from it one response at a time; `{{cwd}}`
/// in it reads as the working directory. `what` names the file in a read error ("the script").
pub(crate) fn scripted_file(
    script: &std::path::Path,
    cwd: &std::path::Path,
    what: &str,
) -> Result<ScriptedProvider, CliError> {
    let inner = cwd_in_json(cwd);
    ScriptedProvider::from_file_replacing(script, Some((CWD_PLACEHOLDER, &inner))).map_err(|e| match e {
        reloop_model::ScriptError::Read { source, .. } => {
            CliError::Usage(format!("cannot read {what} {}: {source}", script.display()))
        }
        other => CliError::Usage(format!("{}: {other}", script.display())),
    })
}

/// The scripted provider of a cassette's text, `{{cwd}}` read as the working directory.
pub(crate) fn scripted_text(text: &str, cwd: &std::path::Path) -> Result<ScriptedProvider, reloop_model::ScriptError> {
    ScriptedProvider::from_json(&substitute_cwd(text, cwd))
}

/// Cassettes name files by absolute path; `{{cwd}}` lets one cassette serve any workspace.
fn substitute_cwd(cassette: &str, cwd: &std::path::Path) -> String {
    cassette.replace(CWD_PLACEHOLDER, &cwd_in_json(cwd))
}

/// The working directory as the inside of a JSON string.
fn cwd_in_json(cwd: &std::path::Path) -> String {
    let quoted = serde_json::to_string(&cwd.display().to_string()).unwrap_or_default();
    quoted.trim_matches('"').to_string()
}

/// What a cassette writes for the working directory.
const CWD_PLACEHOLDER: &str = "{{cwd}}";
