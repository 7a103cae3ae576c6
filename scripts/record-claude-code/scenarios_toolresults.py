"""Scenarios for issue 39 (branch p39a): the `tool_use_result` and `tool_result_meta` Claude Code
prints on each tool-result `user` line, per tool and for the error cases, and the
`compact_boundary` line's metadata. Same step format as scenarios.py, which appends these to its
list. Fixtures: tests/print/recorded/<version>/tool_results/ (record with
`--out tests/print/recorded --only tool_results`)."""

P = "/tmp/reloop-cc-project"
FINAL = "登录模块检查完毕。"


def tool(name, **inp):
    return {"type": "tool_use", "name": name, "input": inp}


def one_each(*calls):
    """One call per response, in order, then the final answer: results never race."""
    return [{"blocks": [c]} for c in calls] + [{"text": FINAL}]


SCENARIOS = [
    {"name": "tool_results/success",
     "note": "Every built-in file tool once, each allowed, one call per response: Write (create), Read, "
             "Edit, Write (update), Read with offset/limit, Glob, Grep in its three modes, Bash with "
             "stdout and stderr, Bash with no output.",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Bash,Read,Write,Edit,Glob,Grep"],
     "full_texts": True,
     "steps": one_each(
         tool("Write", file_path=P + "/notes.txt", content="alpha\nbeta\ngamma\n"),
         tool("Read", file_path=P + "/notes.txt"),
         tool("Edit", file_path=P + "/notes.txt", old_string="beta", new_string="BETA"),
         tool("Write", file_path=P + "/notes.txt", content="one\ntwo\n"),
         tool("Read", file_path=P + "/src/auth/login.ts", offset=2, limit=3),
         tool("Glob", pattern="**/*.ts"),
         tool("Grep", pattern="login"),
         tool("Grep", pattern="login", output_mode="content", **{"-n": True}),
         tool("Grep", pattern="export", output_mode="count"),
         {"type": "tool_use", "name": "Bash",
          "input": {"command": "echo out; echo err >&2", "description": "both streams"}},
         {"type": "tool_use", "name": "Bash", "input": {"command": "mkdir -p made", "description": "quiet"}},
     )},
    {"name": "tool_results/errors",
     "note": "Tool errors, one per response: Read of a missing file, Edit whose old_string is absent, "
             "Edit of an unread file, Bash exiting 2 with output on both streams, Glob matching nothing, "
             "Grep matching nothing, a call of an unknown tool, a Read missing its file_path, a Write "
             "denied in the default mode (not allowed).",
     "prompt": "检查登录模块",
     "flags": ["--allowedTools", "Bash,Read,Edit,Glob,Grep"],
     "full_texts": True,
     "steps": one_each(
         tool("Read", file_path=P + "/missing.txt"),
         tool("Read", file_path=P + "/README.md"),
         tool("Edit", file_path=P + "/README.md", old_string="no such text", new_string="x"),
         tool("Edit", file_path=P + "/src/auth/logout.ts", old_string="TODO", new_string="DONE"),
         {"type": "tool_use", "name": "Bash",
          "input": {"command": "echo partial; echo bad >&2; exit 2", "description": "fails"}},
         tool("Glob", pattern="**/*.nothing"),
         tool("Grep", pattern="zzz_no_match_zzz"),
         tool("NoSuchTool", x=1),
         tool("Read", path="README.md"),
         tool("Write", file_path=P + "/denied.txt", content="x\n"),
     )},
    {"name": "tool_results/dont_ask",
     "note": "dontAsk mode: an allowed Read, a read-only Bash (no rule), a Bash that writes (denied).",
     "prompt": "检查登录模块",
     "flags": ["--permission-mode", "dontAsk", "--allowedTools", "Read"],
     "full_texts": True,
     "steps": one_each(
         tool("Read", file_path=P + "/README.md"),
         {"type": "tool_use", "name": "Bash", "input": {"command": "ls src", "description": "list"}},
         {"type": "tool_use", "name": "Bash", "input": {"command": "touch made.txt", "description": "write"}},
     )},
]
