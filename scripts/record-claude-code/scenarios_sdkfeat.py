"""Scenarios for the SDK features of issue 36: model aliases, SDK-defined subagents, structured
output, partial messages and extended thinking from the environment. Same step format as
scenarios.py, which appends these to its list."""

P = "/tmp/reloop-cc-project"
FINAL = "登录模块检查完毕。"


def txt(t):
    return {"type": "text", "text": t}


def read(path="src/auth/login.ts"):
    return {"type": "tool_use", "name": "Read", "input": {"file_path": "%s/%s" % (P, path)}}


def alias(name):
    return {
        "name": "model_alias/" + name.replace("[", "_").replace("]", ""),
        "note": "`--model %s`: which model id the request carries, and what `system/init` says." % name,
        "prompt": "检查登录模块",
        "flags": ["--model", name],
        "defaults": {"main": {"text": FINAL}},
    }


SCHEMA = {"type": "object", "properties": {"file": {"type": "string"}, "issues": {"type": "integer"}},
          "required": ["file", "issues"]}


def structured(kind, inputs):
    steps = [{"blocks": [{"type": "tool_use", "name": "StructuredOutput", "input": i}]} for i in inputs]
    return {
        "name": "structured_output/" + kind,
        "note": "`--json-schema` with an object schema; the model answers through the StructuredOutput "
                "tool with inputs %s in turn." % inputs,
        "prompt": "检查登录模块",
        "flags": ["--json-schema", __import__("json").dumps(SCHEMA)],
        "steps": [{"blocks": [read()]}] + steps,
        "defaults": {"main": {"text": FINAL}},
    }


AGENTS = {"reviewer": {"description": "Reviews one file and reports problems.",
                       "prompt": "You are a strict code reviewer.", "tools": ["Read"], "model": "haiku"}}

SCENARIOS = [alias(a) for a in ["opus", "sonnet", "haiku", "opusplan", "opus[1m]", "sonnet[1m]", "best", "default"]] + [
    structured("valid", [{"file": "login.ts", "issues": 1}]),
    structured("invalid_then_valid", [{"file": "login.ts"}, {"file": "login.ts", "issues": 1}]),
    structured("always_invalid", [{"file": "login.ts"}] * 8),
    structured("text_only", []),
    {
        "name": "partial_messages/tool_and_text",
        "note": "`--include-partial-messages`: a text+tool_use answer, then a text answer; every "
                "stream_event line and where the assistant messages fall among them.",
        "prompt": "检查登录模块",
        "flags": ["--include-partial-messages"],
        "steps": [{"blocks": [txt("先读 login.ts。"), read()]}, {"text": FINAL}],
    },
    {
        "name": "partial_messages/thinking_env",
        "note": "`MAX_THINKING_TOKENS=8000` in the environment with `--include-partial-messages`: the "
                "request's `thinking` and the thinking block's stream events.",
        "prompt": "检查登录模块",
        "env": {"MAX_THINKING_TOKENS": "8000"},
        "flags": ["--include-partial-messages"],
        "steps": [{"blocks": [{"type": "thinking", "thinking": "Read login.ts first.", "signature": "sig-fake-001"},
                              txt(FINAL)]}],
    },
    {
        "name": "sdk_agents/flag",
        "note": "`--agents JSON` defines `reviewer` (tools Read, model haiku); the model calls Agent with "
                "subagent_type reviewer, the subagent reads logout.ts and reports.",
        "prompt": "检查登录模块",
        "flags": ["--agents", __import__("json").dumps(AGENTS)],
        "steps": [{"blocks": [txt("交给 reviewer。"),
                              {"type": "tool_use", "name": "Agent",
                               "input": {"description": "Review logout", "subagent_type": "reviewer",
                                         "run_in_background": False,
                                         "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report."}}]},
                  {"kind": "sub", "blocks": [read("src/auth/logout.ts")]},
                  {"kind": "sub", "text": "SUBAGENT REPORT: logout() is a stub."},
                  {"text": FINAL}],
        "defaults": {"main": {"text": FINAL}},
    },
] + [
    {
        "name": "thinking_env/%s_%s" % (model.replace("-", "_"), tokens),
        "note": "`MAX_THINKING_TOKENS=%s` with `--model %s`: the request's `thinking` and `max_tokens`." % (tokens, model),
        "prompt": "检查登录模块",
        "env": {"MAX_THINKING_TOKENS": tokens},
        "flags": ["--model", model],
        "defaults": {"main": {"text": FINAL}},
    }
    for model in ["claude-sonnet-4-6", "haiku", "claude-opus-4-5", "claude-opus-5-5", "claude-sonnet-5-5"]
    for tokens in ["8000", "0"]
] + [
    {
        "name": "budget/max_budget_usd",
        "note": "`--max-budget-usd 0.0001`: the first answer (a Read call) already costs more; what the "
                "session does next and how its result reads.",
        "prompt": "检查登录模块",
        "flags": ["--max-budget-usd", "0.0001"],
        "steps": [{"blocks": [read()]}, {"blocks": [read("src/auth/logout.ts")]}],
        "defaults": {"main": {"text": FINAL}},
    },
]
