"""The scenarios record.py plays: prompt, flags, env, stdin actions and the fake server's script.

A step is one answer of the fake server. `kind` picks which requests it answers: `main` (the
session's own requests, default), `compact` (the summarising request), `sub` (a subagent's requests,
recognised by SUBAGENT-TASK in its first user message), `side` (requests without tools). Steps of a
kind are used in order; `defaults[kind]` answers once they run out.
Step fields: `text` or `blocks` (text / tool_use / thinking / redacted_thinking; a tool_use's
`raw_input` streams that exact partial JSON), `stop` (stop_reason, default from the blocks), `usage`,
`model` (the model the response names; default the request's),
`status`+`error_type`+`message`+`headers` (an HTTP error instead), `hang` (stream the text's first
chunk, then stall N seconds), `sse_error` (end the stream with an SSE `error` event instead of
`message_delta`; `"start"`: right after `message_start`), `delay` (seconds before answering).
"""
import copy

P = "/tmp/reloop-cc-project"
HOOK = "sh /tmp/reloop-cc-hooks/stop.sh"


def read(path="src/auth/login.ts", **kw):
    return dict({"type": "tool_use", "name": "Read", "input": {"file_path": "%s/%s" % (P, path)}}, **kw)


def bash(cmd, desc="run a command"):
    return {"type": "tool_use", "name": "Bash", "input": {"command": cmd, "description": desc}}


def txt(t):
    return {"type": "text", "text": t}


def stop_hooks(mode, n):
    return {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "%s %s %s" % (HOOK, mode, n)}]}]}}


SUMMARY = ("<analysis>The user asked to check the login module; login.ts was read.</analysis>\n"
           "<summary>FAKE COMPACT SUMMARY: the user asked to check the login module.</summary>")

FINAL = "登录模块检查完毕：login() 使用硬编码的用户名和密码（admin/secret），应替换为真正的认证后端。"


def user_line(text):
    return {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
            "session_id": "default"}


INIT = {"type": "control_request", "request_id": "req_1_init", "request": {"subtype": "initialize", "hooks": None}}
INTERRUPT = {"type": "control_request", "request_id": "req_2_interrupt", "request": {"subtype": "interrupt"}}

SCENARIOS = [
    # 1. stop hooks
    {
        "name": "stop_hook_block/exit2",
        "note": "A Stop hook (exit 2 + stderr) blocks the first 3 stops, then lets the turn end.",
        "prompt": "检查登录模块",
        "settings": stop_hooks("exit2", 3),
        "steps": [{"blocks": [read()]}],
        "defaults": {"main": {"text": FINAL}},
    },
    {
        "name": "stop_hook_block/json",
        "note": "A Stop hook answering `{\"decision\":\"block\",\"reason\":...}` on stdout (exit 0) blocks the "
                "first 3 stops, then lets the turn end.",
        "prompt": "检查登录模块",
        "settings": stop_hooks("json", 3),
        "steps": [{"blocks": [read()]}],
        "defaults": {"main": {"text": FINAL}},
    },
    {
        "name": "stop_hook_block/cap",
        "note": "A Stop hook (exit 2) that always blocks: Claude Code's own block cap ends the turn.",
        "prompt": "检查登录模块",
        "settings": stop_hooks("exit2", "always"),
        "defaults": {"main": {"text": FINAL}},
    },
    {
        "name": "stop_hook_block/json_cap",
        "note": "A Stop hook that always blocks with the JSON form: Claude Code's own block cap ends the turn.",
        "prompt": "检查登录模块",
        "settings": stop_hooks("json", "always"),
        "defaults": {"main": {"text": FINAL}},
    },
    # 2. compaction
    {
        "name": "auto_compact/auto",
        "note": "`CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000`; after three tool turns the fake server reports "
                "190000 input tokens, so Claude Code auto-compacts before the next request (the summarising "
                "request is answered with a `<summary>`), then the session continues. (Without the env, "
                "2.1.197 did not compact at 985000 reported tokens of its 1M window; 2.1.332 did.)",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
        "steps": [
            {"blocks": [txt("先读 login.ts。"), read()]},
            {"blocks": [read("src/auth/logout.ts")]},
            {"blocks": [read("README.md")], "usage": {"input_tokens": 190000}},
            {"kind": "compact", "text": SUMMARY},
            {"text": FINAL},
        ],
    },
    {
        "name": "auto_compact/auto_too_few_groups",
        "note": "As `auto`, but the usage spike comes after the first tool turn: Claude Code starts the "
                "compaction and gives it up without a summarising request (`compact_error` "
                "`too_few_groups`), then goes on.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
        "steps": [
            {"blocks": [txt("先读 login.ts。"), read()], "usage": {"input_tokens": 190000}},
            {"kind": "compact", "text": SUMMARY},
            {"blocks": [read("src/auth/logout.ts")]},
            {"text": FINAL},
        ],
    },
    {
        "name": "auto_compact/reactive",
        "note": "The third main request gets 400 `prompt is too long: 210000 tokens > 200000 maximum`; Claude "
                "Code compacts reactively and retries.",
        "prompt": "检查登录模块",
        "steps": [
            {"blocks": [read()]},
            {"blocks": [read("src/auth/logout.ts")]},
            {"status": 400, "error_type": "invalid_request_error",
             "message": "prompt is too long: 210000 tokens > 200000 maximum"},
            {"kind": "compact", "text": SUMMARY},
            {"text": FINAL},
        ],
    },
    {
        "name": "auto_compact/reactive_failed",
        "note": "As `reactive`, but the summarising request itself gets 400 prompt is too long: the compaction "
                "fails and the session ends.",
        "prompt": "检查登录模块",
        "steps": [
            {"blocks": [read()]},
            {"blocks": [read("src/auth/logout.ts")]},
            {"status": 400, "error_type": "invalid_request_error",
             "message": "prompt is too long: 210000 tokens > 200000 maximum"},
        ],
        "defaults": {
            "compact": {"status": 400, "error_type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum"},
            "main": {"status": 400, "error_type": "invalid_request_error",
                     "message": "prompt is too long: 210000 tokens > 200000 maximum"},
        },
    },
    {
        "name": "auto_compact/auto_failed",
        "note": "As `auto` (auto-compaction after three tool turns), but every summarising request gets a "
                "500 with `x-should-retry: false`.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_MAX_RETRIES": "1", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
        "steps": [
            {"blocks": [read()]},
            {"blocks": [read("src/auth/logout.ts")]},
            {"blocks": [read("README.md")], "usage": {"input_tokens": 190000}},
            {"text": FINAL},
        ],
        "defaults": {"compact": {"status": 500, "error_type": "api_error", "message": "Internal server error",
                                 "headers": {"x-should-retry": "false"}}},
    },
    # 3. max turns
    {
        "name": "max_turns",
        "note": "`--max-turns 2` with a model that asks for a Read every turn.",
        "prompt": "检查登录模块",
        "flags": ["--max-turns", "2"],
        "defaults": {"main": {"blocks": [txt("继续读文件。"), read()]}},
    },
    # 4. output limit
    {
        "name": "output_limit/resumed",
        "note": "One text answer cut by `stop_reason: max_tokens`, then the resumed answer ends normally.",
        "prompt": "检查登录模块",
        "steps": [
            {"text": "登录模块的问题在于：login() 使用硬编码的", "stop": "max_tokens"},
            {"text": "用户名和密码（admin/secret）。"},
        ],
    },
    {
        "name": "output_limit/exhausted",
        "note": "Every answer is cut by `max_tokens`: after the resumes Claude Code ends with the "
                "`exceeded the N output token maximum` API error (N is the request's max_tokens).",
        "prompt": "检查登录模块",
        "defaults": {"main": {"text": "登录模块的问题在于：login() 使用硬编码的", "stop": "max_tokens"}},
    },
    {
        "name": "output_limit/tool_use_cut",
        "note": "A tool_use whose input JSON is cut by `max_tokens` (the partial JSON streamed as is).",
        "prompt": "检查登录模块",
        "steps": [
            {"blocks": [{"type": "tool_use", "name": "Read", "input": {},
                         "raw_input": "{\"file_path\": \"%s/src/au" % P}], "stop": "max_tokens"},
            {"text": FINAL},
        ],
    },
    # 5. API errors
    {
        "name": "api_errors/retried_then_ok",
        "note": "529, then 500, then 429 with `retry-after: 1`, then success.",
        "prompt": "检查登录模块",
        "steps": [
            {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"},
            {"status": 500, "error_type": "api_error", "message": "Internal server error"},
            {"status": 429, "error_type": "rate_limit_error", "message": "rate limited", "headers": {"retry-after": "1"}},
            {"text": FINAL},
        ],
    },
    {
        "name": "api_errors/overloaded_exhausted",
        "note": "529 on every request; `CLAUDE_CODE_MAX_RETRIES=2` keeps the retries short.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_MAX_RETRIES": "2"},
        "defaults": {"main": {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"}},
    },
    {
        "name": "api_errors/rate_limited_exhausted",
        "note": "429 with `retry-after: 1` on every request; `CLAUDE_CODE_MAX_RETRIES=2`.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_MAX_RETRIES": "2"},
        "defaults": {"main": {"status": 429, "error_type": "rate_limit_error", "message": "rate limited",
                              "headers": {"retry-after": "1"}}},
    },
    {
        "name": "api_errors/no_retry_500",
        "note": "500 with `x-should-retry: false` after one successful tool turn: no retry.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [read()]}],
        "defaults": {"main": {"status": 500, "error_type": "api_error", "message": "Internal server error",
                              "headers": {"x-should-retry": "false"}}},
    },
    {
        "name": "api_errors/sse_overloaded",
        "note": "HTTP 200 streams that send an SSE `error` event (`overloaded_error`) after `message_start` and "
                "the first text block, three times; then a normal answer (facts §7: Claude Code falls back to a "
                "non-streaming request).",
        "prompt": "检查登录模块",
        "steps": [{"text": "部分回答", "sse_error": True}, {"text": "部分回答", "sse_error": True},
                  {"text": "部分回答", "sse_error": True}],
        "defaults": {"main": {"text": FINAL}},
    },
    {
        "name": "api_errors/sse_overloaded_at_start",
        "note": "As `sse_overloaded`, but the SSE `error` event comes right after `message_start`, before any "
                "content block (the case in facts §7).",
        "prompt": "检查登录模块",
        "steps": [{"text": "x", "sse_error": "start"}, {"text": "x", "sse_error": "start"},
                  {"text": "x", "sse_error": "start"}],
        "defaults": {"main": {"text": FINAL}},
    },
    # 6. interrupts
    {
        "name": "interrupt/mid_stream",
        "note": "stream-json input as the Agent SDK sends it; the answer streams its first text chunk and "
                "stalls; an `interrupt` control_request arrives; then a second prompt is answered.",
        "input": [{"send": INIT}, {"sleep": 0.5}, {"send": user_line("检查登录模块")}, {"wait": "hang"},
                  {"sleep": 1.0}, {"send": INTERRUPT}, {"wait": "stdout", "contains": "\"type\":\"result\""},
                  {"sleep": 0.5}, {"send": user_line("继续")}, {"wait": "stdout", "contains": "\"type\":\"result\"",
                                                               "n": 2}, {"close": True}],
        "steps": [{"text": "登录模块的问题在于：login() 使用硬编码的用户名和密码，这一段会在流中途停住。", "hang": 30},
                  {"text": FINAL}],
    },
    {
        "name": "interrupt/during_tool",
        "note": "stream-json input; the model runs Bash `sh -c 'sleep 30; echo slept'` (allowed); an "
                "`interrupt` control_request arrives while it runs; then a second prompt is answered. (2.1.332 "
                "refuses a bare `sleep 30` as a tool_use_error, hence the `sh -c`.)",
        "flags": ["--allowedTools", "Bash"],
        "input": [{"send": INIT}, {"sleep": 0.5}, {"send": user_line("检查登录模块")},
                  {"wait": "stdout", "contains": "\"tool_use\""}, {"sleep": 2.0}, {"send": INTERRUPT},
                  {"wait": "stdout", "contains": "\"type\":\"result\""}, {"sleep": 0.5},
                  {"send": user_line("继续")}, {"wait": "stdout", "contains": "\"type\":\"result\"", "n": 2},
                  {"close": True}],
        "steps": [{"blocks": [txt("先等一下。"), bash("sh -c 'sleep 30; echo slept'", "wait 30 seconds")]}, {"text": FINAL}],
    },
    {
        "name": "interrupt/sigint",
        "note": "Print mode (`-p PROMPT`); the answer stalls mid-stream and the CLI gets SIGINT.",
        "prompt": "检查登录模块",
        "actions": [{"wait": "hang"}, {"sleep": 1.0}, {"signal": "SIGINT"}],
        "steps": [{"text": "登录模块的问题在于：login() 使用硬编码的用户名和密码，这一段会在流中途停住。", "hang": 30}],
    },
    # 7. permission denials and tool errors
    {
        "name": "permission_denied/default_mode",
        "note": "Default permission mode in -p: Bash `touch` inside the project and a Write are denied.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [bash("touch %s/created_by_bash.txt" % P, "create a file")]},
                  {"blocks": [{"type": "tool_use", "name": "Write",
                               "input": {"file_path": "%s/new.txt" % P, "content": "hello\n"}}]},
                  {"text": FINAL}],
    },
    {
        "name": "permission_denied/dont_ask",
        "note": "`--permission-mode dontAsk`: a Bash call is denied by the mode.",
        "prompt": "检查登录模块",
        "flags": ["--permission-mode", "dontAsk"],
        "steps": [{"blocks": [bash("touch %s/created_by_bash.txt" % P, "create a file")]}, {"text": FINAL}],
    },
    {
        "name": "permission_denied/disallowed",
        "note": "`--disallowedTools Write`, then the model calls Write anyway.",
        "prompt": "检查登录模块",
        "flags": ["--disallowedTools", "Write"],
        "steps": [{"blocks": [{"type": "tool_use", "name": "Write",
                               "input": {"file_path": "%s/new.txt" % P, "content": "hello\n"}}]},
                  {"text": FINAL}],
    },
    {
        "name": "tool_error",
        "note": "A Read of a missing file, then an allowed Bash command that exits 1.",
        "prompt": "检查登录模块",
        "flags": ["--allowedTools", "Bash"],
        "steps": [{"blocks": [read("src/auth/missing.ts")]},
                  {"blocks": [bash("echo failing >&2; exit 1", "fail on purpose")]},
                  {"text": FINAL}],
    },
    # 8. malformed tool calls
    {
        "name": "malformed_tool_call/no_block_exhausted",
        "note": "Every answer has `stop_reason: tool_use` but no tool_use block.",
        "prompt": "检查登录模块",
        "defaults": {"main": {"text": "我来读取文件。", "stop": "tool_use"}},
    },
    {
        "name": "malformed_tool_call/no_block_recovered",
        "note": "One answer with `stop_reason: tool_use` but no tool_use block, then a proper tool call.",
        "prompt": "检查登录模块",
        "steps": [{"text": "我来读取文件。", "stop": "tool_use"}, {"blocks": [read()]}, {"text": FINAL}],
    },
    {
        "name": "malformed_tool_call/schema_rejected",
        "note": "A Read whose input the schema rejects (`path` instead of `file_path`), then one with a "
                "wrong type, then an unknown tool.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [{"type": "tool_use", "name": "Read", "input": {"path": "%s/src/auth/login.ts" % P}}]},
                  {"blocks": [{"type": "tool_use", "name": "Read", "input": {"file_path": 42}}]},
                  {"blocks": [{"type": "tool_use", "name": "NoSuchTool", "input": {"x": 1}}]},
                  {"text": FINAL}],
    },
    # 9. model fallback
    {
        "name": "model_fallback",
        "note": "`--fallback-model claude-sonnet-4-6`; the main model answers 529 three times, then the "
                "fallback model's request succeeds.",
        "prompt": "检查登录模块",
        "flags": ["--fallback-model", "claude-sonnet-4-6"],
        "steps": [{"status": 529, "error_type": "overloaded_error", "message": "Overloaded"},
                  {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"},
                  {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"},
                  {"text": FINAL}],
    },
    # 9b. the response names another model than the one asked
    {
        "name": "model_fallback/answered_by_other_model",
        "note": "The request asks the default model; the response names `claude-sonnet-4-6` (a proxy "
                "routing elsewhere): which model `modelUsage` keys the usage by and prices it at.",
        "prompt": "检查登录模块",
        "steps": [{"text": FINAL, "model": "claude-sonnet-4-6", "usage": {"input_tokens": 1000000, "output_tokens": 0}}],
    },
    # 10. queued command
    {
        "name": "queued_command",
        "note": "stream-json input; while the first turn's Bash `sh -c 'sleep 4; echo slept'` runs, a second user message is sent.",
        "flags": ["--allowedTools", "Bash"],
        "input": [{"send": INIT}, {"sleep": 0.5}, {"send": user_line("检查登录模块")},
                  {"wait": "stdout", "contains": "\"tool_use\""}, {"sleep": 1.0},
                  {"send": user_line("顺便也看看 logout.ts")}, {"wait": "idle", "secs": 4}, {"close": True}],
        "steps": [{"blocks": [txt("先等一下。"), bash("sh -c 'sleep 4; echo slept'", "wait 4 seconds")]},
                  {"blocks": [read("src/auth/logout.ts")]}, {"text": FINAL}],
        "defaults": {"main": {"text": "logout.ts 只有一个 TODO。"}},
    },
    # 11. thinking
    {
        "name": "thinking",
        "note": "Answers with thinking blocks (with signatures) before the tool_use and before the final "
                "text; the second also has a redacted_thinking block.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [{"type": "thinking", "thinking": "The user wants the login module checked. Read it first.",
                               "signature": "sig-fake-001"}, read()]},
                  {"blocks": [{"type": "thinking", "thinking": "login() compares against hard-coded credentials.",
                               "signature": "sig-fake-002"},
                              {"type": "redacted_thinking", "data": "cmVkYWN0ZWQtZmFrZQ=="},
                              txt(FINAL)]}],
    },
    # 12. subagents
    {
        "name": "subagent/default",
        "note": "The model calls the Agent tool (general-purpose) without saying foreground or background; "
                "the subagent reads logout.ts and reports; the main session then answers. (2.1.197 runs it in "
                "the foreground; 2.1.332 launches it in the background and later feeds its "
                "`<task-notification>` back as a new user turn.)",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [txt("交给子代理检查 logout.ts。"),
                              {"type": "tool_use", "name": "Agent",
                               "input": {"description": "Check logout", "subagent_type": "general-purpose",
                                         "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report what it does."}}]},
                  {"kind": "sub", "blocks": [read("src/auth/logout.ts")]},
                  {"kind": "sub", "text": "SUBAGENT REPORT: logout() is a stub with a TODO."},
                  {"text": FINAL}],
        "defaults": {"main": {"text": "子代理报告：logout() 只是一个带 TODO 的桩。"}},
    },
    {
        "name": "subagent/foreground",
        "note": "As `default`, with `run_in_background: false` in the Agent call.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [txt("交给子代理检查 logout.ts。"),
                              {"type": "tool_use", "name": "Agent",
                               "input": {"description": "Check logout", "subagent_type": "general-purpose",
                                         "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report what it does.",
                                         "run_in_background": False}}]},
                  {"kind": "sub", "blocks": [read("src/auth/logout.ts")]},
                  {"kind": "sub", "text": "SUBAGENT REPORT: logout() is a stub with a TODO."},
                  {"text": FINAL}],
        "defaults": {"main": {"text": "子代理报告：logout() 只是一个带 TODO 的桩。"}},
    },
]


def for_version(sc, version):
    """The scenario with its per-version overrides applied."""
    out = copy.deepcopy(sc)
    out.update(copy.deepcopy(sc.get("by_version", {}).get(version, {})))
    out.pop("by_version", None)
    return out
