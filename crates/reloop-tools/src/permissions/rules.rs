//! Claude Code's permission rule syntax (`Tool` or `Tool(specifier)`) and how a rule matches a call.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ignore::gitignore::GitignoreBuilder;

use reloop_core::{RuleSource, SourcedRule};

use super::shell;
use super::workspace::{canonicalize_lenient, EDIT_TOOLS, READ_TOOLS};
use super::{PermissionError, RuleProblem};
use crate::paths::normalize;

/// One permission rule: a tool name and, optionally, what in the call it is about.
///
/// The specifier is kept verbatim and interpreted per tool when matching:
/// * Bash: `git diff:*` matches a command whose words start with `git diff` (whole words, so not
///   `git difftool`); anything else matches the exact command (quoting and redirections such as
///   `2>&1` aside).
/// * File tools: a gitignore-style pattern. `//abs/**` and `/abs/**` are absolute (there is no
///   settings file here for `/` to be relative to, unlike in Claude Code), `~/x` is under `$HOME`,
///   `./src/**` and `src/**` are relative to the working directory, and a pattern without a slash
///   such as `*.env` matches at any depth below it. A pattern names a folder's contents too.
/// * WebFetch: `domain:example.com` matches URLs on that host.
/// * Any other tool: a specifier cannot be interpreted, so such a rule never matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    tool: String,
    specifier: Option<String>,
    /// Where the rule came from, when known (a settings file, a flag, a slash command).
    source: Option<RuleSource>,
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`. `Tool(*)` means the whole tool, as in Claude Code.
    pub fn parse(text: &str) -> Result<Rule, PermissionError> {
        let invalid = |problem| PermissionError::InvalidRule { rule: text.to_string(), problem };
        let trimmed = text.trim();
        let (tool, specifier) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let inner = trimmed[open + 1..].strip_suffix(')').ok_or_else(|| invalid(RuleProblem::Unclosed))?;
                (&trimmed[..open], Some(inner))
            }
        };
        if tool.is_empty() {
            return Err(invalid(RuleProblem::MissingTool));
        }
        // `mcp__server__*` names every tool of a server, as in Claude Code.
        let name = if tool.starts_with("mcp__") { tool.strip_suffix("__*").unwrap_or(tool) } else { tool };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(invalid(RuleProblem::BadToolName));
        }
        let specifier = match specifier.map(str::trim) {
            Some("") => return Err(invalid(RuleProblem::EmptySpecifier)),
            Some("*") | None => None,
            Some(spec) => Some(spec.to_string()),
        };
        Ok(Rule { tool: name.to_string(), specifier, source: None })
    }

    /// Parses a rule with its origin ([`Rule::parse`]).
    pub fn parse_sourced(rule: &SourcedRule) -> Result<Rule, PermissionError> {
        Ok(Rule { source: rule.source, ..Rule::parse(&rule.text)? })
    }

    /// The same rule, from `source`.
    pub fn from_source(self, source: RuleSource) -> Rule {
        Rule { source: Some(source), ..self }
    }

    /// Where the rule came from, when known.
    pub fn source(&self) -> Option<RuleSource> {
        self.source
    }

    /// The tool the rule names (with a path, `Edit` also covers the other file-editing tools).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// What the rule is about, verbatim; `None` for the whole tool.
    pub fn specifier(&self) -> Option<&str> {
        self.specifier.as_deref()
    }

    /// Whether an allow rule lets `tool` through at all. A bare name (`Edit`, `Read`, `Edit(*)`)
    /// allows that one tool, as in Claude Code (2.1.197's `toolAlwaysAllowedRule` compares the
    /// name exactly; with `--allowedTools Bash,Read,Edit,Glob,Grep` it denied a Write, recording
    /// `tool_results/errors`); only a rule with a path applies to the whole family, Claude
    /// Code's path rules being read under the names `Edit` and `Read` for every tool of theirs.
    pub(crate) fn allows_tool(&self, tool: &str) -> bool {
        match self.specifier {
            None => self.tool == tool || covers_mcp_server(&self.tool, tool),
            Some(_) => self.covers_tool(tool),
        }
    }

    /// Whether the rule is about `tool` at all. Deny and ask rules keep the family even when
    /// bare (a bare `Edit` deny also refuses Write), which is stricter than Claude Code, whose
    /// bare deny names one tool: a deny never lets through more than the user wrote.
    pub(crate) fn covers_tool(&self, tool: &str) -> bool {
        self.tool == tool
            || (self.tool == "Edit" && EDIT_TOOLS.contains(&tool))
            || (self.tool == "Read" && READ_TOOLS.contains(&tool))
            || covers_mcp_server(&self.tool, tool)
    }

    /// Whether this rule's Bash specifier matches one simple command's words.
    pub(crate) fn matches_command(&self, words: &[String]) -> bool {
        let Some(spec) = &self.specifier else { return true };
        match spec.strip_suffix(":*") {
            Some(prefix) => words.starts_with(&shell::words(prefix)),
            None => words == shell::words(spec).as_slice(),
        }
    }

    /// Whether this rule's path pattern names the canonical `path`.
    pub(crate) fn matches_path(&self, path: &Path, cwd: &Path) -> bool {
        let Some(spec) = &self.specifier else { return true };
        PathPattern::new(spec, cwd).is_some_and(|pattern| pattern.matches(path))
    }

    /// The one canonical path this rule names, when its pattern is anchored (`./`, `/`, `//`,
    /// `~/`, or a relative path with a folder) and holds no glob: the sandbox then masks it
    /// without walking the workspace. `None` for a pattern that may match many paths.
    pub(crate) fn literal_path(&self, cwd: &Path) -> Option<PathBuf> {
        let spec = self.specifier.as_deref()?;
        let (base, rest) = if let Some(rest) = spec.strip_prefix("//") {
            (PathBuf::from("/"), rest)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (PathBuf::from(std::env::var_os("HOME")?), rest)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (PathBuf::from("/"), rest)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (cwd.to_path_buf(), rest)
        } else if spec.trim_end_matches('/').contains('/') {
            (cwd.to_path_buf(), spec)
        } else {
            return None; // no folder: gitignore matches the name at any depth
        };
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').filter(|p| !p.is_empty()).collect();
        if parts.is_empty() || parts.iter().any(|p| has_glob_meta(p)) {
            return None;
        }
        Some(canonicalize_lenient(&normalize(&parts.iter().fold(base, |b, p| b.join(p)))))
    }

    /// Whether this rule could name something at or below the canonical directory `dir`, so
    /// that a command reading every file below `dir` would reach it.
    pub(crate) fn may_match_under(&self, dir: &Path, cwd: &Path) -> bool {
        let Some(spec) = &self.specifier else { return true };
        let Some(pattern) = PathPattern::new(spec, cwd) else { return false };
        if pattern.base.starts_with(dir) {
            return true;
        }
        dir.starts_with(&pattern.base) && (pattern.deep || pattern.matches(dir))
    }

    /// Whether this rule's `domain:` specifier names the host of `url`.
    pub(crate) fn matches_url(&self, url: &str) -> bool {
        let Some(spec) = &self.specifier else { return true };
        let Some(domain) = spec.strip_prefix("domain:") else { return false };
        host(url).is_some_and(|h| h.eq_ignore_ascii_case(domain.trim()))
    }
}

/// Whether `rule` names a whole MCP server (`mcp__github`, written `mcp__github` or
/// `mcp__github__*`) and `tool` is one of its tools (`mcp__github__create_issue`).
fn covers_mcp_server(rule: &str, tool: &str) -> bool {
    let Some(server) = rule.strip_prefix("mcp__") else { return false };
    !server.is_empty()
        && !server.contains("__")
        && tool.strip_prefix(rule).and_then(|rest| rest.strip_prefix("__")).is_some_and(|t| !t.is_empty())
}

impl FromStr for Rule {
    type Err = PermissionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Rule::parse(text)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(spec) => write!(f, "{}({spec})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// The allow, deny and ask lists of a session (`--allowedTools`, settings, and so on).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionRules {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    ask: Vec<Rule>,
}

impl PermissionRules {
    /// Parses the three lists; the first malformed rule is reported by its text.
    pub fn parse<S: AsRef<str>>(allow: &[S], deny: &[S], ask: &[S]) -> Result<Self, PermissionError> {
        let list = |rules: &[S]| rules.iter().map(|r| Rule::parse(r.as_ref())).collect::<Result<Vec<_>, _>>();
        Ok(PermissionRules { allow: list(allow)?, deny: list(deny)?, ask: list(ask)? })
    }

    /// Parses the three lists, keeping each rule's origin.
    pub fn parse_sourced(
        allow: &[SourcedRule],
        deny: &[SourcedRule],
        ask: &[SourcedRule],
    ) -> Result<Self, PermissionError> {
        let list = |rules: &[SourcedRule]| rules.iter().map(Rule::parse_sourced).collect::<Result<Vec<_>, _>>();
        Ok(PermissionRules { allow: list(allow)?, deny: list(deny)?, ask: list(ask)? })
    }

    /// Rules from already parsed lists.
    pub fn new(allow: Vec<Rule>, deny: Vec<Rule>, ask: Vec<Rule>) -> Self {
        PermissionRules { allow, deny, ask }
    }

    /// These rules with `extra` allowed too (a slash command's `allowed-tools` for its query,
    /// whose origin is the command); an entry that is no rule allows nothing.
    pub fn allowing<S: AsRef<str>>(&self, extra: &[S]) -> Self {
        let mut rules = self.clone();
        let parsed = extra.iter().filter_map(|r| Rule::parse(r.as_ref()).ok());
        rules.allow.extend(parsed.map(|rule| rule.from_source(RuleSource::Command)));
        rules
    }

    pub(crate) fn allow(&self) -> &[Rule] {
        &self.allow
    }

    pub(crate) fn deny(&self) -> &[Rule] {
        &self.deny
    }

    pub(crate) fn ask(&self) -> &[Rule] {
        &self.ask
    }
}

/// A file rule's pattern, compiled against the folder it is relative to.
struct PathPattern {
    base: PathBuf,
    matcher: ignore::gitignore::Gitignore,
    /// `dir/**` also names `dir` itself, so Glob/Grep over that folder match.
    names_base: bool,
    /// The pattern may match at any depth below its base (`**`, or no slash as in `*.env`).
    deep: bool,
}

impl PathPattern {
    /// `None` when the pattern cannot be used (no `$HOME` for `~/`, invalid glob): the rule then
    /// matches nothing.
    fn new(spec: &str, cwd: &Path) -> Option<PathPattern> {
        let (base, rest, anchored) = if let Some(rest) = spec.strip_prefix("//") {
            (PathBuf::from("/"), rest, true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (PathBuf::from(std::env::var_os("HOME")?), rest, true)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (PathBuf::from("/"), rest, true)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (cwd.to_path_buf(), rest, true)
        } else {
            (cwd.to_path_buf(), spec, spec.trim_end_matches('/').contains('/'))
        };
        let rest = rest.trim_end_matches('/');
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        // Literal leading folders join the base, so `..` folds and symlinks resolve like paths do.
        let literal = if anchored { parts.iter().take_while(|p| !has_glob_meta(p)).count() } else { 0 };
        let literal = literal.min(parts.len().saturating_sub(1));
        let base = canonicalize_lenient(&normalize(&parts[..literal].iter().fold(base, |b, p| b.join(p))));
        let mut glob = parts[literal..].join("/");
        if glob.is_empty() {
            glob = "**".to_string(); // `./` alone: the whole folder
        }
        let names_base = glob == "**";
        let mut builder = GitignoreBuilder::new(&base);
        let line = if anchored { format!("/{glob}") } else { glob };
        let deep = line.contains("**") || !line.starts_with('/');
        builder.add_line(None, &line).ok()?;
        if let Some(dir) = line.strip_suffix("/**").filter(|d| !d.is_empty()) {
            builder.add_line(None, dir).ok()?;
        }
        Some(PathPattern { base, matcher: builder.build().ok()?, names_base, deep })
    }

    fn matches(&self, path: &Path) -> bool {
        if path == self.base {
            return self.names_base;
        }
        // The matcher requires a path under its base (it panics otherwise), so check first.
        path.starts_with(&self.base) && self.matcher.matched_path_or_any_parents(path, path.is_dir()).is_ignore()
    }
}

fn has_glob_meta(part: &str) -> bool {
    part.contains(['*', '?', '[', ']', '{', '}', '\\', '!'])
}

/// The host of an `http(s)://user@host:port/path` URL.
fn host(url: &str) -> Option<&str> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host_port.split(':').next()?;
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_from_urls() {
        assert_eq!(host("https://user@docs.rs:443/x?y"), Some("docs.rs"));
        assert_eq!(host("http://example.com"), Some("example.com"));
        assert_eq!(host("https:///nothing"), None);
    }

    #[test]
    fn only_an_anchored_pattern_without_a_glob_names_one_path() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let literal = |spec: &str| Rule::parse(&format!("Read({spec})")).unwrap().literal_path(&cwd);
        assert_eq!(literal("./secret.txt"), Some(cwd.join("secret.txt")));
        assert_eq!(literal("src/../a.txt"), Some(cwd.join("a.txt")));
        assert_eq!(literal("//etc/hosts"), Some(PathBuf::from("/etc/hosts")));
        for spec in [".env", "*.pem", "./src/**", "./[s]ecret.txt", "src/*.rs"] {
            assert_eq!(literal(spec), None, "{spec} may name many paths");
        }
    }
}
