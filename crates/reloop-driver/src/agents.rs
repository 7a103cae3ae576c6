//! Agent definitions and the `Agent` tool the model is offered.
//!
//! A definition is Claude Code's: a Markdown file in `<cwd>/.claude/agents/` whose YAML front
//! matter names the agent (`name`, `description`, `tools`, `model`) and whose body is the agent's
//! system prompt. `general-purpose` is built in; a project file of the same name replaces it.
//! The tool only describes itself here: the driver runs a call as a child session
//! (the driver's `subagent` module), never through [`Tool::call`].

use std::path::Path;
use std::sync::Arc;

use reloop_tools::{Tool, ToolContext, ToolOutput};
use serde::Deserialize;
use serde_json::{json, Value};

/// The tool's name, as Claude Code names it since 2.1 (formerly `Task`).
pub const AGENT_TOOL: &str = "Agent";

/// The agent that runs when a call names no type.
pub(crate) const GENERAL_PURPOSE: &str = "general-purpose";

/// Claude Code's description of its general-purpose agent, verbatim.
const GENERAL_PURPOSE_DESCRIPTION: &str = "General-purpose agent for researching complex questions, searching for \
code, and executing multi-step tasks. When you are searching for a keyword or file and are not confident that you \
will find the right match in the first few tries use this agent to perform the search for you.";

const GENERAL_PURPOSE_PROMPT: &str = "You are an agent for reloop, a coding agent. Given the user's message, you \
should use the tools available to complete the task. Do what has been asked; nothing more, nothing less. When you \
complete the task simply respond with a detailed writeup.

Notes:
- In your final response always share relevant file names and code snippets. Any file paths you return in your \
response MUST be absolute.
- Do not create files unless they're absolutely necessary for achieving your goal.";

/// The most agent files read from one directory, and the most bytes of one: a hostile checkout
/// cannot make startup slow or the tool description huge.
const MAX_AGENT_FILES: usize = 64;
const MAX_AGENT_FILE_BYTES: u64 = 64 * 1024;

/// One agent a call may name.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// What a call's `subagent_type` names it by (the file's front matter `name`).
    pub name: String,
    /// When to use it, shown to the model in the tool's description.
    pub description: String,
    /// The tools it may use; `None`: every tool of the session but `Agent` itself.
    pub tools: Option<Vec<String>>,
    /// Tools it may not use even where `tools` allows them (the SDKs' `disallowedTools`).
    pub disallowed: Vec<String>,
    /// Its model; `None` or `inherit`: the calling session's.
    pub model: Option<String>,
    /// Its `--max-turns` (front matter `maxTurns`, a reloop extension); `None`: the caller's.
    pub max_turns: Option<u32>,
    /// Its system prompt (the file's body).
    pub prompt: String,
}

impl AgentDefinition {
    fn general_purpose() -> Self {
        AgentDefinition {
            name: GENERAL_PURPOSE.into(),
            description: GENERAL_PURPOSE_DESCRIPTION.into(),
            tools: None,
            disallowed: Vec::new(),
            model: None,
            max_turns: None,
            prompt: GENERAL_PURPOSE_PROMPT.into(),
        }
    }

    /// A definition known only from a journaled child's header (its file is gone): the child
    /// goes on with the tools and prompt its header recorded.
    pub(crate) fn journaled(name: String) -> Self {
        AgentDefinition {
            name,
            description: String::new(),
            tools: None,
            disallowed: Vec::new(),
            model: None,
            max_turns: None,
            prompt: String::new(),
        }
    }

    /// Whether the child may use `tool` (never `Agent`: subagents do not nest, as in Claude Code).
    pub(crate) fn allows(&self, tool: &str) -> bool {
        tool != AGENT_TOOL
            && !self.disallowed.iter().any(|t| t == tool)
            && self.tools.as_ref().is_none_or(|tools| tools.iter().any(|t| t == tool || t == "*"))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    tools: Option<ToolList>,
    model: Option<String>,
    max_turns: Option<u32>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ToolList {
    Text(String),
    List(Vec<String>),
}

/// The agents of a session: the built-in one and the project's.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCatalog {
    definitions: Vec<AgentDefinition>,
    /// Files that were skipped, with why (shown to the user, never fatal).
    pub warnings: Vec<String>,
}

impl Default for AgentCatalog {
    fn default() -> Self {
        AgentCatalog { definitions: vec![AgentDefinition::general_purpose()], warnings: Vec::new() }
    }
}

impl AgentCatalog {
    /// `general-purpose` and the definitions in `<cwd>/.claude/agents/*.md`, by file name order.
    pub fn load(cwd: &Path) -> Self {
        let mut catalog = AgentCatalog::default();
        let dir = cwd.join(".claude").join("agents");
        let Ok(entries) = std::fs::read_dir(&dir) else { return catalog };
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        files.sort();
        if files.len() > MAX_AGENT_FILES {
            catalog.warnings.push(format!(
                "{}: only the first {MAX_AGENT_FILES} of {} agent files are read",
                dir.display(),
                files.len()
            ));
            files.truncate(MAX_AGENT_FILES);
        }
        for file in files {
            match read_definition(&file) {
                Ok(definition) => catalog.add(definition),
                Err(why) => catalog.warnings.push(format!("{}: {why}; skipped", file.display())),
            }
        }
        catalog
    }

    /// Adds a definition; one of the same name is replaced (an SDK's definition replaces a
    /// project file's, as Claude Code ranks its `--agents` above the project's).
    pub fn add(&mut self, definition: AgentDefinition) {
        match self.definitions.iter_mut().find(|d| d.name == definition.name) {
            Some(existing) => *existing = definition,
            None => self.definitions.push(definition),
        }
    }

    /// Every agent a call may name, `general-purpose` first.
    pub fn definitions(&self) -> &[AgentDefinition] {
        &self.definitions
    }

    /// The definition a call names; no name is `general-purpose`. An unknown name is Claude
    /// Code's error, which the model sees as the call's result.
    pub(crate) fn resolve(&self, subagent_type: Option<&str>) -> Result<&AgentDefinition, String> {
        let name = subagent_type.filter(|s| !s.is_empty()).unwrap_or(GENERAL_PURPOSE);
        self.definitions.iter().find(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.definitions.iter().map(|d| d.name.as_str()).collect();
            format!("Agent type '{name}' not found. Available agents: {}", names.join(", "))
        })
    }

    /// The `Agent` tool describing these agents; `background`: the session runs agents in the
    /// background unless a call asks otherwise (flag 44), which its `run_in_background` says.
    pub(crate) fn tool(&self, background: bool) -> Arc<dyn Tool> {
        Arc::new(AgentTool { description: self.describe(), background })
    }

    fn describe(&self) -> String {
        let mut text = String::from(
            "Launch a new agent to handle complex, multi-step tasks autonomously.\n\n\
             The Agent tool launches specialized agents that autonomously handle complex tasks. Each agent type \
             has specific capabilities and tools available to it.\n\n\
             Available agent types and the tools they have access to:\n",
        );
        for d in &self.definitions {
            let tools = d.tools.as_ref().map_or_else(|| "*".to_string(), |t| t.join(", "));
            text.push_str(&format!("- {}: {} (Tools: {tools})\n", d.name, d.description));
        }
        text.push_str(
            "\nWhen using the Agent tool, specify a subagent_type parameter to select which agent type to use; \
             without one, the general-purpose agent runs.\n\n\
             When you launch multiple agents for independent work, send them in a single message with multiple \
             tool uses so they run concurrently.\n\n\
             Each agent invocation starts fresh and returns a single message back to you: give it a detailed task \
             description in the prompt, and say exactly what information it should return.",
        );
        text
    }
}

/// The most agents an SDK may define, and the longest name and texts it may give one: an app's
/// definitions become tool descriptions and system prompts, so they are bounded like files.
const MAX_SDK_AGENTS: usize = 64;
const MAX_SDK_AGENT_NAME: usize = 128;
const MAX_SDK_AGENT_BYTES: usize = 64 * 1024;

/// The agents an SDK defines (`agents=` in `initialize`, or `--agents JSON`): an object of
/// name to `{"description", "prompt", "tools"?, "disallowedTools"?, "model"?, "maxTurns"?}`,
/// as the SDKs' `AgentDefinition` serialises. Keys reloop does not use are ignored; a
/// definition without a description or prompt is refused with why.
pub fn sdk_definitions(agents: &Value) -> Result<Vec<AgentDefinition>, String> {
    let Some(map) = agents.as_object() else {
        return Err("agents must be an object of name to definition".into());
    };
    if map.len() > MAX_SDK_AGENTS {
        return Err(format!("{} agents defined; at most {MAX_SDK_AGENTS} are taken", map.len()));
    }
    let mut out = Vec::new();
    for (name, def) in map {
        let name = name.trim();
        if name.is_empty() || name.len() > MAX_SDK_AGENT_NAME || name.chars().any(char::is_control) {
            return Err(format!("agent name {name:?}: 1 to {MAX_SDK_AGENT_NAME} printable bytes"));
        }
        let text = |key: &str| -> Result<String, String> {
            let value = def.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default();
            if value.is_empty() {
                return Err(format!("agent {name}: no {key}"));
            }
            if value.len() > MAX_SDK_AGENT_BYTES {
                return Err(format!("agent {name}: its {key} is over {MAX_SDK_AGENT_BYTES} bytes"));
            }
            Ok(value.to_string())
        };
        let list = |key: &str| -> Result<Option<Vec<String>>, String> {
            match def.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) => items
                    .iter()
                    .take(MAX_SDK_AGENTS * 4)
                    .map(|t| {
                        t.as_str().map(|t| t.trim().to_string()).ok_or(format!("agent {name}: {key} must list names"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some),
                Some(_) => Err(format!("agent {name}: {key} must be a list of tool names")),
            }
        };
        let model = def.get("model").and_then(Value::as_str).map(str::trim);
        out.push(AgentDefinition {
            name: name.to_string(),
            description: text("description")?,
            tools: list("tools")?,
            disallowed: list("disallowedTools")?.unwrap_or_default(),
            model: model.filter(|m| !m.is_empty() && *m != "inherit").map(str::to_string),
            max_turns: def
                .get("maxTurns")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0),
            prompt: text("prompt")?,
        });
    }
    Ok(out)
}

/// The definitions back as the SDK's JSON, for the session's header: a resumed or replayed
/// session rebuilds its catalog from what was journaled, not from an app that is gone.
pub fn sdk_json(definitions: &[AgentDefinition]) -> Value {
    let map = definitions
        .iter()
        .map(|d| {
            let mut def = serde_json::Map::new();
            def.insert("description".into(), json!(d.description));
            def.insert("prompt".into(), json!(d.prompt));
            if let Some(tools) = &d.tools {
                def.insert("tools".into(), json!(tools));
            }
            if !d.disallowed.is_empty() {
                def.insert("disallowedTools".into(), json!(d.disallowed));
            }
            if let Some(model) = &d.model {
                def.insert("model".into(), json!(model));
            }
            if let Some(n) = d.max_turns {
                def.insert("maxTurns".into(), json!(n));
            }
            (d.name.clone(), Value::Object(def))
        })
        .collect();
    Value::Object(map)
}

/// Reads one agent file: front matter between `---` lines, then the prompt.
fn read_definition(file: &Path) -> Result<AgentDefinition, String> {
    let size = std::fs::metadata(file).map_err(|e| e.to_string())?.len();
    if size > MAX_AGENT_FILE_BYTES {
        return Err(format!("{size} bytes is more than an agent file may hold ({MAX_AGENT_FILE_BYTES})"));
    }
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    parse_definition(&text)
}

/// Parses an agent file's text.
pub(crate) fn parse_definition(text: &str) -> Result<AgentDefinition, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("no front matter (the file must start with a --- line)")?;
    let end = rest.find("\n---").ok_or("the front matter has no closing --- line")?;
    let (yaml, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map_or("", |(_, b)| b);
    let front: FrontMatter = serde_norway::from_str(yaml).map_err(|e| format!("bad front matter: {e}"))?;
    let name = front.name.filter(|n| !n.trim().is_empty()).ok_or("the front matter has no name")?;
    let description =
        front.description.filter(|d| !d.trim().is_empty()).ok_or("the front matter has no description")?;
    let tools = front.tools.map(|t| match t {
        ToolList::Text(text) => text.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        ToolList::List(list) => list.into_iter().map(|s| s.trim().to_string()).collect(),
    });
    Ok(AgentDefinition {
        name: name.trim().to_string(),
        description: description.trim().to_string(),
        tools,
        disallowed: Vec::new(),
        model: front.model.map(|m| m.trim().to_string()).filter(|m| !m.is_empty() && m != "inherit"),
        max_turns: front.max_turns.filter(|n| *n > 0),
        prompt: body.trim().to_string(),
    })
}

/// The `Agent` tool as the model sees it. Calls never reach [`Tool::call`]: the driver answers
/// them with a child session.
struct AgentTool {
    description: String,
    background: bool,
}

/// 2.1.332's words for `run_in_background`, where agents run in the background by default.
const IN_BACKGROUND: &str = "Agents run in the background by default; you will be notified when one completes. Set \
to false only when your very next action depends on this agent's result and nothing else could usefully happen while \
it runs \u{2014} otherwise leave it in the background so the user can hand you other work.";

/// Where every agent runs in the foreground, the field is accepted and changes nothing.
const IN_FOREGROUND: &str = "Ignored here: every agent runs in the foreground, and the call's answer is its report.";

impl Tool for AgentTool {
    fn name(&self) -> &str {
        AGENT_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task"},
                "run_in_background": {
                    "type": "boolean",
                    "description": if self.background { IN_BACKGROUND } else { IN_FOREGROUND }
                }
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        })
    }

    /// As in Claude Code: the call itself asks no permission (each of the child's calls is
    /// checked). The driver still journals its start before the child runs.
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    /// Several agents in one message run together, as in Claude Code.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn call(&self, _input: &Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::error(
            "<tool_use_error>Error: the Agent tool runs only inside a reloop session (the driver answers it with a \
             child session)</tool_use_error>",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_reads_its_front_matter_and_body() {
        let d = parse_definition(
            "---\nname: reader\ndescription: Reads files\ntools: Read, Grep\nmodel: inherit\nmaxTurns: 3\n---\nYou read.\n",
        )
        .unwrap();
        assert_eq!(d.name, "reader");
        assert_eq!(d.tools, Some(vec!["Read".to_string(), "Grep".to_string()]));
        assert_eq!(d.model, None);
        assert_eq!(d.max_turns, Some(3));
        assert_eq!(d.prompt, "You read.");
        assert!(d.allows("Read") && !d.allows("Bash") && !d.allows(AGENT_TOOL));
    }

    #[test]
    fn files_without_a_name_or_front_matter_are_refused_with_why() {
        assert!(parse_definition("no front matter").unwrap_err().contains("front matter"));
        assert!(parse_definition("---\ndescription: x\n---\nbody").unwrap_err().contains("no name"));
        assert!(parse_definition("---\nname: [unclosed\n---\n").unwrap_err().contains("bad front matter"));
    }

    #[test]
    fn no_type_is_general_purpose_and_an_unknown_type_names_the_known_ones() {
        let catalog = AgentCatalog::default();
        assert_eq!(catalog.resolve(None).unwrap().name, GENERAL_PURPOSE);
        assert_eq!(
            catalog.resolve(Some("nope")).unwrap_err(),
            "Agent type 'nope' not found. Available agents: general-purpose"
        );
    }

    #[test]
    fn sdk_definitions_read_the_sdks_shape_and_round_trip() {
        let given = json!({"reviewer": {"description": "Reviews", "prompt": "Be strict.", "tools": ["Read", "Grep"],
            "disallowedTools": ["Grep"], "model": "haiku", "maxTurns": 4, "skills": ["x"]}});
        let defs = sdk_definitions(&given).unwrap();
        assert_eq!(defs.len(), 1);
        let d = &defs[0];
        assert_eq!((d.name.as_str(), d.model.as_deref(), d.max_turns), ("reviewer", Some("haiku"), Some(4)));
        assert!(d.allows("Read") && !d.allows("Grep") && !d.allows("Bash"));
        assert_eq!(sdk_definitions(&sdk_json(&defs)).unwrap(), defs);
        let inherit = sdk_definitions(&json!({"a": {"description": "d", "prompt": "p", "model": "inherit"}})).unwrap();
        assert_eq!(inherit[0].model, None);
        assert_eq!(inherit[0].tools, None);
    }

    #[test]
    fn bad_sdk_definitions_are_refused_with_why() {
        assert!(sdk_definitions(&json!([])).unwrap_err().contains("object"));
        assert!(sdk_definitions(&json!({"a": {"prompt": "p"}})).unwrap_err().contains("no description"));
        assert!(sdk_definitions(&json!({"a": {"description": "d"}})).unwrap_err().contains("no prompt"));
        assert!(sdk_definitions(&json!({"a": {"description": "d", "prompt": "p", "tools": "Read"}}))
            .unwrap_err()
            .contains("list"));
        let many: serde_json::Map<String, Value> =
            (0..65).map(|i| (format!("a{i}"), json!({"description": "d", "prompt": "p"}))).collect();
        assert!(sdk_definitions(&Value::Object(many)).unwrap_err().contains("at most 64"));
        let long = "x".repeat(MAX_SDK_AGENT_BYTES + 1);
        assert!(sdk_definitions(&json!({"a": {"description": "d", "prompt": long}})).unwrap_err().contains("over"));
    }
}
