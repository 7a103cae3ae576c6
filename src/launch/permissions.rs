//! A new session's permissions: the mode and rules of the flags and the settings file, checked
//! (bypassPermissions as root needs consent), with the credentials tool processes must not see.

use std::path::PathBuf;

use reloop_core::{RuleSource, SourcedRule};
use reloop_driver::PermissionSpec;
use reloop_hooks::Settings;
use reloop_tools::{PermissionError, PermissionMode};

use crate::error::CliError;

/// The permission flags of `reloop run` and the print mode.
#[derive(Debug, Clone)]
pub struct PermissionFlags {
    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    pub mode: String,
    /// Consent to bypassPermissions when running as root.
    pub dangerously_allow_root: bool,
    /// Rules that allow calls (each argument may hold several, space separated).
    pub allowed_tools: Vec<String>,
    /// Rules or tool names that deny calls.
    pub disallowed_tools: Vec<String>,
    /// More folders the tools may use besides the working directory.
    pub add_dir: Vec<PathBuf>,
    /// Credentials tool processes keep.
    pub tool_env_keep: Vec<String>,
}

/// The permission mode and rules from the flags and the settings file. Deny wins over allow.
pub(crate) fn spec(args: &PermissionFlags, settings: &Settings) -> Result<PermissionSpec, CliError> {
    let mode: PermissionMode = args.mode.parse().map_err(|e: PermissionError| CliError::Usage(e.to_string()))?;
    if mode == PermissionMode::BypassPermissions && running_as_root() && !args.dangerously_allow_root {
        return Err(CliError::Usage(
            "--permission-mode bypassPermissions is refused when running as root: every tool could touch \
             anything on this machine. Run as another user, or pass --dangerously-allow-root if you mean it."
                .into(),
        ));
    }
    if let reloop_tools::sandbox::Availability::Unavailable(why) = reloop_tools::sandbox::Sandbox::probe() {
        crate::term::styled_errln(
            crate::term::style::WARN,
            &format!("reloop: no sandbox on this machine ({why}): every Bash command needs approval"),
        );
    }
    // The flags' rules come after the settings files', as Claude Code looks them up.
    let mut allow = settings.permissions.allow.clone();
    let flagged = args.allowed_tools.iter().flat_map(|r| split_rules(r));
    allow.extend(flagged.map(|rule| SourcedRule::new(rule, RuleSource::CliArg)));
    let deny = settings.permissions.deny.clone();
    let ask = settings.permissions.ask.clone();
    let disallowed: Vec<String> = args.disallowed_tools.iter().flat_map(|r| split_rules(r)).collect();
    Ok(PermissionSpec::new(mode.as_str())
        .with_rules(allow, deny, ask)
        .with_disallowed(disallowed)
        .with_add_dirs(args.add_dir.clone())
        .with_tool_env(secret_env_names(settings), kept_env_names(settings, &args.tool_env_keep))
        .with_sandbox_network(sandbox_network(settings)))
}

/// Whether the settings let sandboxed commands use the network: `sandbox.network.allowedDomains`
/// holding `"*"`. reloop cannot yet filter by domain, so a list of domains leaves the network
/// off, with a warning, rather than open it to every host.
fn sandbox_network(settings: &Settings) -> bool {
    let domains = settings
        .other
        .get("sandbox")
        .and_then(|s| s.get("network"))
        .and_then(|n| n.get("allowedDomains"))
        .and_then(serde_json::Value::as_array);
    let Some(domains) = domains else { return false };
    let all = domains.iter().any(|d| d.as_str() == Some("*"));
    if !all && !domains.is_empty() {
        crate::term::styled_errln(
            crate::term::style::WARN,
            "reloop: sandbox.network.allowedDomains lists domains, but reloop can only allow the network whole \
             (\"*\"): sandboxed commands have no network",
        );
    }
    all
}

/// Names in the settings `env` object that look like credentials (`*KEY*`, `*TOKEN*`,
/// `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`): tool processes run without them.
fn secret_env_names(settings: &Settings) -> Vec<String> {
    const MARKS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];
    let Some(serde_json::Value::Object(env)) = settings.other.get("env") else { return Vec::new() };
    env.keys().filter(|name| MARKS.iter().any(|mark| name.to_ascii_uppercase().contains(mark))).cloned().collect()
}

/// `--tool-env-keep`, plus the settings `env` names that are no credentials: Claude Code puts the
/// settings' `env` into its environment, so its tools see them, and a sandboxed tool's
/// environment is an allow-list that would otherwise drop them.
fn kept_env_names(settings: &Settings, flags: &[String]) -> Vec<String> {
    let secret = secret_env_names(settings);
    let mut keep = flags.to_vec();
    if let Some(serde_json::Value::Object(env)) = settings.other.get("env") {
        for name in env.keys() {
            if !secret.contains(name) && !keep.contains(name) {
                keep.push(name.clone());
            }
        }
    }
    keep
}

/// Rules may be given space separated in one argument (`"Bash(git diff:*) Edit"`); spaces
/// inside parentheses belong to the rule.
fn split_rules(text: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let (mut current, mut depth) = (String::new(), 0usize);
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

pub(crate) fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}
