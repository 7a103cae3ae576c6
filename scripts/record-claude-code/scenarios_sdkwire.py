"""Scenarios for the SDK wire details of issue 36 (branch h36b): the host's `origin` on a
streamed user message, several messages queued while a query runs, an MCP tool's result as the
app and the model see it, and a command file's front matter. Same step format as scenarios.py,
which appends these to its list. Fixtures: tests/print/recorded/<version>/sdk_wire/ (record with
`--out tests/print/recorded --only sdk_wire`)."""
import json

P = "/tmp/reloop-cc-project"
MCP_PY = "/work/main/target/mcp/venv/bin/python"


def user_line(text, **extra):
    line = {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
            "session_id": "default"}
    line.update(extra)
    return line


def tool(name, inp):
    return {"type": "tool_use", "name": name, "input": inp}


INIT = {"type": "control_request", "request_id": "req_1_init", "request": {"subtype": "initialize", "hooks": None}}
MCP_CONFIG = {"mcpServers": {"fixture": {"command": MCP_PY, "args": [P + "/mcp_server.py", "stdio"]}}}
with open(__import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..", "tests", "mcp",
                                     "server.py")) as f:
    MCP_SERVER = f.read()

SCENARIOS = [
    {"name": "sdk_wire/origin",
     "note": "stream-json input: a user message stamped `origin: {\"kind\": \"human\"}`, then one without; "
             "where the origin is echoed.",
     "input": [{"send": INIT}, {"wait": "stdout", "contains": '"control_response"', "n": 1},
               {"send": user_line("Reply with exactly: one", origin={"kind": "human"})},
               {"wait": "stdout", "contains": '"type":"result"', "n": 1},
               {"send": user_line("Reply with exactly: two")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 2},
               {"sleep": 1.0}, {"close": True}],
     "steps": [{"text": "one"}, {"text": "two"}]},
    {"name": "sdk_wire/queued",
     "note": "stream-json input: three user messages sent at once; the first answer takes 1.5 s, so the "
             "second and third arrive while it runs. How many queries, requests and results follow.",
     "input": [{"send": user_line("FIRST-QUESTION")}, {"send": user_line("SECOND-QUESTION")},
               {"send": user_line("THIRD-QUESTION")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 1},
               {"sleep": 4.0}, {"close": True}],
     "steps": [{"text": "ANSWER-1", "delay": 1.5}, {"text": "ANSWER-2"}, {"text": "ANSWER-3"}],
     "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk_wire/mcp_result",
     "note": "A stdio MCP server (tests/mcp/server.py) under `--mcp-config`; the model calls its `echo` "
             "tool (text) and then its `picture` tool (text, image, resource link): the `user` lines' "
             "tool_result content and what the next request sends.",
     "prompt": "检查 MCP",
     "files": {P + "/mcp_server.py": MCP_SERVER},
     "flags": ["--mcp-config", json.dumps(MCP_CONFIG), "--allowedTools", "mcp__fixture__echo,mcp__fixture__picture"],
     "steps": [{"blocks": [tool("mcp__fixture__echo", {"text": "hi", "times": 2})]},
               {"blocks": [tool("mcp__fixture__picture", {})]},
               {"text": "MCP-DONE"}],
     "full_texts": True},
    {"name": "sdk_wire/command_frontmatter",
     "note": "`initialize`, then `/fm A B` where `.claude/commands/fm.md` sets description, argument-hint, "
             "model (claude-haiku-4-5) and allowed-tools (Bash(echo:*)); `.claude/commands/nomodel.md` sets "
             "disable-model-invocation. What `initialize` lists, which model the requests name, whether "
             "Bash runs.",
     "files": {P + "/.claude/commands/fm.md":
               "---\ndescription: Front matter probe\nargument-hint: FIRST SECOND\nmodel: claude-haiku-4-5\n"
               "allowed-tools: Bash(echo:*)\n---\nFM-BODY $ARGUMENTS then run echo fm.\n",
               P + "/.claude/commands/nomodel.md":
               "---\ndescription: Not for the model\ndisable-model-invocation: true\n---\nNOMODEL-BODY $ARGUMENTS\n"},
     "input": [{"send": INIT}, {"wait": "stdout", "contains": '"control_response"', "n": 1},
               {"send": user_line("/fm A B")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 1},
               {"send": user_line("/nomodel C")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 2},
               {"sleep": 1.0}, {"close": True}],
     "steps": [{"blocks": [tool("Bash", {"command": "echo fm", "description": "say fm"})]},
               {"text": "FM-DONE"}, {"text": "NOMODEL-DONE"}],
     "defaults": {"main": {"text": "MORE"}}},
]

# A server whose tool answers text content only (no structuredContent): what an SDK in-process
# tool answers.
TEXT_SERVER = '''from mcp.server.mcpserver import MCPServer
from mcp_types import TextContent

mcp = MCPServer("plain")


@mcp.tool()
def words() -> list:
    """Answers two text blocks."""
    return [TextContent(type="text", text="FIRST-WORD"), TextContent(type="text", text="SECOND-WORD")]


@mcp.tool()
def word() -> list:
    """Answers one text block."""
    return [TextContent(type="text", text="ONLY-WORD")]


mcp.run(transport="stdio")
'''
TEXT_CONFIG = {"mcpServers": {"plain": {"command": MCP_PY, "args": [P + "/text_server.py"]}}}

SCENARIOS += [
    {"name": "sdk_wire/mcp_text",
     "note": "A stdio MCP server whose tools answer text content only, no structuredContent (as an SDK "
             "in-process tool answers): `word` (one block), then `words` (two).",
     "prompt": "检查 MCP",
     "files": {P + "/text_server.py": TEXT_SERVER},
     "flags": ["--mcp-config", json.dumps(TEXT_CONFIG), "--allowedTools", "mcp__plain__word,mcp__plain__words"],
     "steps": [{"blocks": [tool("mcp__plain__word", {})]}, {"blocks": [tool("mcp__plain__words", {})]},
               {"text": "MCP-DONE"}],
     "full_texts": True},
]

# `/compact` between queries with no hook configured (settings_slash/stream_compact has a
# PreCompact hook, whose words the local-command line carries).
SUMMARY = ("<analysis>The user asked to check the login module; login.ts was read.</analysis>\n"
           "<summary>FAKE COMPACT SUMMARY: the user asked to check the login module.</summary>")
SCENARIOS += [
    {"name": "sdk_wire/stream_compact",
     "note": "stream-json input: a question (the model reads login.ts, then answers), `/compact`, another "
             "question; no hooks.",
     "input": [{"send": user_line("检查登录模块")}, {"wait": "stdout", "contains": '"type":"result"', "n": 1},
               {"send": user_line("/compact")}, {"wait": "stdout", "contains": '"type":"result"', "n": 2},
               {"send": user_line("再说一遍")}, {"wait": "stdout", "contains": '"type":"result"', "n": 3},
               {"sleep": 1.0}, {"close": True}],
     "steps": [{"blocks": [tool("Read", {"file_path": P + "/src/auth/login.ts"})]}, {"text": "FIRST-ANSWER"},
               {"kind": "compact", "text": SUMMARY}, {"text": "SECOND-ANSWER"}],
     "defaults": {"main": {"text": "MORE"}}},
]
