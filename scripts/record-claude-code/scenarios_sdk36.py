"""Scenarios for issue 36's remaining behaviour items (branch sdk36): built-in and unknown slash
commands typed first and between queries of a stream-json session, `/compact` sent while a query
runs, the hooks around an automatic compaction, and every hook line `--include-hook-events`
prints. Same step format as scenarios.py, which appends these to its list. Fixtures:
tests/print/recorded/<version>/sdk36/ (record with `--out tests/print/recorded --only sdk36`)."""
from scenarios import EV, EV_SH, SUMMARY, FINAL, bash, ev_hooks, read, txt, user_line

P = "/tmp/reloop-cc-project"


def result_waits(*texts):
    acts = []
    for i, t in enumerate(texts):
        acts += [{"send": user_line(t)}, {"wait": "stdout", "contains": '"type":"result"', "n": i + 1}]
    return acts


SCENARIOS = [
    {"name": "sdk36/stream_local",
     "note": "stream-json input: `/compact` as the first message (no conversation yet), then `/nosuch foo`, "
             "then a question, then `/nosuch2` and `/compact extra words` between queries. Which are "
             "answered locally, with which lines, and whether UserPromptSubmit runs for them.",
     "input": result_waits("/compact", "/nosuch foo", "检查登录模块", "/nosuch2") + [{"sleep": 1.5}, {"close": True}],
     "files": {EV: EV_SH},
     "settings": ev_hooks([("UserPromptSubmit", "s", "log"), ("PreCompact", "s", "log")]),
     "steps": [{"text": "FIRST-ANSWER"}], "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk36/queued_compact",
     "note": "stream-json input: a question whose answer takes 1.5 s, and `/compact` sent while it runs. "
             "Whether the queued `/compact` compacts or reaches the model as text.",
     "input": [{"send": user_line("检查登录模块")}, {"send": user_line("/compact")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 1}, {"sleep": 4.0}, {"close": True}],
     "files": {EV: EV_SH},
     "settings": ev_hooks([("UserPromptSubmit", "s", "log"), ("PreCompact", "s", "log")]),
     "steps": [{"text": "FIRST-ANSWER", "delay": 1.5}, {"kind": "compact", "text": SUMMARY},
               {"text": "SECOND-ANSWER"}], "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk36/auto_compact_hooks",
     "note": "As compaction/auto (the third answer reports 190000 input tokens, so the next request "
             "compacts), with PreCompact and SessionStart hooks that log their input: the `trigger: auto` "
             "payload and SessionStart `source: compact`, and the hook lines printed.",
     "prompt": "检查登录模块",
     "env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
     "files": {EV: EV_SH},
     "settings": ev_hooks([("PreCompact", "s", "log"), ("SessionStart", "s", "log")]),
     "steps": [{"blocks": [txt("先读 login.ts。"), read()]},
               {"blocks": [read("src/auth/logout.ts")]},
               {"blocks": [read("README.md")], "usage": {"input_tokens": 190000}},
               {"kind": "compact", "text": SUMMARY},
               {"text": FINAL}]},
    {"name": "sdk36/include_hook_events",
     "note": "`--include-hook-events` with SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and Stop "
             "hooks (log mode; UserPromptSubmit answers additionalContext): every hook line printed.",
     "prompt": "检查登录模块",
     "flags": ["--include-hook-events"],
     "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "log"), ("UserPromptSubmit", "s", "ctx"),
                           ("PreToolUse", "s", "log"), ("PostToolUse", "s", "log"), ("Stop", "s", "log")]),
     "steps": [{"blocks": [read()]}, {"text": FINAL}]},
]

# A command file with a model and allowed-tools that let `touch` run without asking.
FM = {P + "/.claude/commands/fm.md":
      "---\ndescription: Front matter probe\nmodel: claude-haiku-4-5\nallowed-tools: Bash(touch:*)\n---\n"
      "FM-BODY $ARGUMENTS then run touch fm.txt.\n"}
ALLOW = {P + "/.claude/commands/allow.md":
         "---\ndescription: Allowed tools probe\nallowed-tools: Bash(touch:*)\n---\nALLOW-BODY $ARGUMENTS then run touch.\n"}

SCENARIOS += [
    {"name": "sdk36/queued_command_model",
     "note": "stream-json input: a question whose answer takes 1.5 s, and `/fm A B` sent while it runs "
             "(`.claude/commands/fm.md`: model claude-haiku-4-5, allowed-tools Bash(touch:*)). Which model "
             "the queued command's requests name, whether it is batched, and whether its touch runs.",
     "input": [{"send": user_line("检查登录模块")}, {"send": user_line("/fm A B")},
               {"wait": "stdout", "contains": '"type":"result"', "n": 1}, {"sleep": 5.0}, {"close": True}],
     "files": FM,
     "steps": [{"text": "FIRST-ANSWER", "delay": 1.5},
               {"blocks": [bash("touch fm.txt", "make fm.txt")]}, {"text": "FM-DONE"}],
     "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk36/command_allowed_tools",
     "note": "stream-json input: `/allow A` (`.claude/commands/allow.md`: allowed-tools Bash(touch:*), no model), "
             "whose answer runs `touch a.txt`; then a plain question whose answer runs `touch b.txt`. Whether "
             "the command's allowed-tools let the first run and only for its query.",
     "input": result_waits("/allow A", "再说一遍") + [{"sleep": 1.5}, {"close": True}],
     "files": ALLOW,
     "steps": [{"blocks": [bash("touch a.txt", "make a.txt")]}, {"text": "ALLOW-DONE"},
               {"blocks": [bash("touch b.txt", "make b.txt")]}, {"text": "AFTER-DONE"}],
     "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk36/compact_hook_events",
     "note": "`--include-hook-events`, stream-json input: a question, then `/compact`, with SessionStart and "
             "PreCompact hooks (log mode): the hook lines printed around a compaction by hand.",
     "flags": ["--include-hook-events"],
     "input": result_waits("检查登录模块", "/compact") + [{"sleep": 1.5}, {"close": True}],
     "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "log"), ("PreCompact", "s", "log")]),
     "steps": [{"blocks": [read()]}, {"text": FINAL}, {"kind": "compact", "text": SUMMARY}],
     "defaults": {"main": {"text": "MORE"}}},
    {"name": "sdk36/auto_compact_hook_events",
     "note": "As sdk36/auto_compact_hooks with `--include-hook-events`: the hook lines printed around an "
             "automatic compaction.",
     "prompt": "检查登录模块",
     "flags": ["--include-hook-events"],
     "env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
     "files": {EV: EV_SH},
     "settings": ev_hooks([("PreCompact", "s", "log"), ("SessionStart", "s", "log")]),
     "steps": [{"blocks": [txt("先读 login.ts。"), read()]},
               {"blocks": [read("src/auth/logout.ts")]},
               {"blocks": [read("README.md")], "usage": {"input_tokens": 190000}},
               {"kind": "compact", "text": SUMMARY},
               {"text": FINAL}]},
]
