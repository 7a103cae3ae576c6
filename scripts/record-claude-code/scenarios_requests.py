"""Scenarios for issue 39's request details (branch h39): what `CLAUDE_CODE_DISABLE_THINKING` and
`CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING` do to each version's `thinking`, its `context_management`
and its `anthropic-beta` header, with the default model and with an adaptive Sonnet. Same step
format as scenarios.py, which appends these to its list. Fixtures: tests/print/recorded/<version>/env/
(record with `--out tests/print/recorded --only env/disable_thinking ...`)."""

P = "/tmp/reloop-cc-project"
FINAL = "登录模块检查完毕。"
READ = {"type": "tool_use", "name": "Read", "input": {"file_path": P + "/src/auth/login.ts"}}

SCENARIOS = [
    {"name": "env/%s%s" % (name, suffix),
     "note": "`%s=1`%s: one Read, then the answer: each request's `thinking`, `context_management` and "
             "betas." % (var, " with `--model %s`" % model if model else ""),
     "prompt": "检查登录模块",
     "env": {var: "1"},
     "flags": ["--allowedTools", "Read"] + (["--model", model] if model else []),
     "steps": [{"blocks": [READ]}, {"text": FINAL}]}
    for (name, var) in [("disable_thinking", "CLAUDE_CODE_DISABLE_THINKING"),
                        ("disable_adaptive_thinking", "CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING")]
    for (suffix, model) in [("", None), ("_sonnet_4_6", "claude-sonnet-4-6")]
] + [
    # What disabling adaptive thinking does to the other adaptive models (recorded 2026-12-06).
    {"name": "env/disable_adaptive_thinking%s" % suffix,
     "note": "`CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING=1` with `--model %s`: one Read, then the answer: each "
             "request's `thinking`, `context_management` and betas." % model,
     "prompt": "检查登录模块",
     "env": {"CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING": "1"},
     "flags": ["--allowedTools", "Read", "--model", model],
     "steps": [{"blocks": [READ]}, {"text": FINAL}]}
    for (suffix, model) in [("_sonnet_5_5", "claude-sonnet-5-5"), ("_haiku_4_5", "claude-haiku-4-5"),
                            ("_opus_4_5", "claude-opus-4-5")]
]
