"""Scenarios for issue 36's remaining behaviour items (branch sdk36): built-in and unknown slash
commands typed first and between queries of a stream-json session, `/compact` sent while a query
runs, the hooks around an automatic compaction, and every hook line `--include-hook-events`
prints. Same step format as scenarios.py, which appends these to its list. Fixtures:
tests/print/recorded/<version>/sdk36/ (record with `--out tests/print/recorded --only sdk36`)."""
from scenarios import EV, EV_SH, SUMMARY, FINAL, ev_hooks, read, txt, user_line

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
