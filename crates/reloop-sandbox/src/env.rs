//! The environment of a tool process: an allow-list, never reloop's own environment minus a
//! few names, because every variable a tool sees can end up in a tool result, the journal and
//! every export (API keys, cloud tokens, a CI's secrets).

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Variables a tool process inherits from reloop when they are set: what programs need to find
/// themselves, speak the user's language and draw on the terminal. Every `LC_*` too.
pub const BASE_VARS: &[&str] =
    &["PATH", "HOME", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ", "USER", "LOGNAME", "SHELL"];

/// Credentials reloop itself uses: no process it starts for a tool or a hook sees them unless
/// the user keeps one.
pub const CREDENTIAL_VARS: &[&str] = &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"];

/// Which variables of reloop's environment a tool process may have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Names allowed besides [`BASE_VARS`]: the user's `--tool-env-keep` choices.
    pub extra: Vec<String>,
}

impl EnvPolicy {
    /// Whether a variable of this name may pass.
    pub fn allows(&self, name: &OsStr) -> bool {
        let Some(name) = name.to_str() else { return false };
        BASE_VARS.contains(&name) || name.starts_with("LC_") || self.extra.iter().any(|e| e == name)
    }

    /// The environment of a tool process from `vars` (reloop's, as `std::env::vars_os` gives
    /// it): the allowed names. `HOME` points at `/tmp` when `home_visible` says the real home is
    /// not visible to the process, and `TMPDIR` at `/tmp`, the call's private scratch.
    pub fn build(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        home_visible: impl Fn(&Path) -> bool,
    ) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = vars.into_iter().filter(|(name, _)| self.allows(name)).collect();
        match env.iter_mut().find(|(n, _)| n == "HOME") {
            Some((_, home)) if !home_visible(Path::new(home)) => *home = "/tmp".into(),
            Some(_) => {}
            None => env.push(("HOME".into(), "/tmp".into())),
        }
        env.retain(|(n, _)| n != "TMPDIR");
        env.push(("TMPDIR".into(), "/tmp".into()));
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn only_allowed_names_pass_whatever_they_are_called() {
        let policy = EnvPolicy { extra: vec!["MY_FLAG".into()] };
        let env = policy.build(
            vars(&[
                ("PATH", "/usr/bin"),
                ("LC_TIME", "C"),
                ("ANTHROPIC_API_KEY", "sk"),
                ("GITHUB_TOKEN", "ghp"),
                ("AWS_SESSION_TOKEN", "a"),
                ("CDPATH", "/outside"),
                ("GIT_CONFIG_COUNT", "1"),
                ("MY_FLAG", "1"),
            ]),
            |_| true,
        );
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["PATH", "LC_TIME", "MY_FLAG", "HOME", "TMPDIR"]);
    }

    #[test]
    fn an_invisible_home_becomes_the_scratch_directory() {
        let policy = EnvPolicy::default();
        let env = policy.build(vars(&[("PATH", "/usr/bin"), ("HOME", "/root")]), |home| home != Path::new("/root"));
        assert!(env.contains(&("PATH".into(), "/usr/bin".into())));
        assert!(env.contains(&("HOME".into(), "/tmp".into())));
        assert!(env.contains(&("TMPDIR".into(), "/tmp".into())));
    }
}
