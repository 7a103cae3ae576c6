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

def subagent_script(**agent_input):
    """The `subagent/` scenarios' prompt and script: the main session hands logout.ts to a
    general-purpose agent (its call's input plus `agent_input`), which reads it and reports, then
    answers."""
    call_input = {"description": "Check logout", "subagent_type": "general-purpose",
                  "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report what it does."}
    call_input.update(agent_input)
    return {"prompt": "检查登录模块",
            "steps": [{"blocks": [txt("交给子代理检查 logout.ts。"), {"type": "tool_use", "name": "Agent", "input": call_input}]},
                      {"kind": "sub", "blocks": [read("src/auth/logout.ts")]},
                      {"kind": "sub", "text": "SUBAGENT REPORT: logout() is a stub with a TODO."},
                      {"text": FINAL}],
            "defaults": {"main": {"text": "子代理报告：logout() 只是一个带 TODO 的桩。"}}}


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
        "name": "overloaded_retries/default",
        "note": "529 on every request, `CLAUDE_CODE_MAX_RETRIES` not set: whether the default 10 retries "
                "run out or the run stops after three 529s in a row as with the variable set.",
        "prompt": "检查登录模块",
        "defaults": {"main": {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"}},
    },
    *[
        {
            "name": f"overloaded_retries/max_{n}",
            "note": f"529 on every request with `CLAUDE_CODE_MAX_RETRIES={n}`: which words the run ends with "
                    "after that many retries (2 gives `Repeated 529 Overloaded errors`, 10 `529 Overloaded`).",
            "prompt": "检查登录模块",
            "env": {"CLAUDE_CODE_MAX_RETRIES": str(n)},
            "defaults": {"main": {"status": 529, "error_type": "overloaded_error", "message": "Overloaded"}},
        }
        for n in (3, 4, 5)
    ],
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
        "name": "interrupt/cancel_queued",
        "note": "As `during_tool`, but a second message stamped with a uuid is sent while the Bash call runs, "
                "and the `interrupt` control_request sets `cancel_queued: true` (2.1.332 advertises "
                "`interrupt_cancel_queued_v1`); then a third prompt is answered.",
        "flags": ["--allowedTools", "Bash"],
        "input": [{"send": INIT}, {"sleep": 0.5}, {"send": user_line("检查登录模块")},
                  {"wait": "stdout", "contains": "\"tool_use\""}, {"sleep": 1.0},
                  {"send": dict(user_line("顺便看看注册模块"), uuid="0b6f2f4e-0000-4000-8000-000000000002")},
                  {"sleep": 1.0},
                  {"send": dict(INTERRUPT, request=dict(INTERRUPT["request"], cancel_queued=True))},
                  {"wait": "stdout", "contains": "\"type\":\"result\""}, {"sleep": 1.0},
                  {"send": user_line("继续")}, {"wait": "stdout", "contains": "\"type\":\"result\"", "n": 2},
                  {"sleep": 1.0}, {"close": True}],
        "steps": [{"blocks": [txt("先等一下。"), bash("sh -c 'sleep 30; echo slept'", "wait 30 seconds")]}],
        "defaults": {"main": {"text": FINAL}},
    },
    {
        "name": "interrupt/still_queued",
        "note": "As `cancel_queued`, but every message is stamped with a uuid and the `interrupt` is plain: the "
                "queued message survives it and runs as the next query; then a third prompt is answered.",
        "flags": ["--allowedTools", "Bash"],
        "input": [{"send": INIT}, {"sleep": 0.5},
                  {"send": dict(user_line("检查登录模块"), uuid="0b6f2f4e-0000-4000-8000-000000000001")},
                  {"wait": "stdout", "contains": "\"tool_use\""}, {"sleep": 1.0},
                  {"send": dict(user_line("顺便看看注册模块"), uuid="0b6f2f4e-0000-4000-8000-000000000002")},
                  {"sleep": 1.0}, {"send": INTERRUPT},
                  {"wait": "stdout", "contains": "\"type\":\"result\"", "n": 2}, {"sleep": 1.0},
                  {"send": dict(user_line("继续"), uuid="0b6f2f4e-0000-4000-8000-000000000003")},
                  {"wait": "stdout", "contains": "\"type\":\"result\"", "n": 3},
                  {"sleep": 1.0}, {"close": True}],
        "steps": [{"blocks": [txt("先等一下。"), bash("sh -c 'sleep 30; echo slept'", "wait 30 seconds")]}],
        "defaults": {"main": {"text": FINAL}},
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
        **subagent_script(),
    },
    {
        "name": "subagent/default_text",
        "note": "As `default`, printed as text (`--output-format text`): what print mode prints when a "
                "background agent's end starts a second query.",
        **subagent_script(),
        "flags": ["--output-format", "text"],
    },
    {
        "name": "subagent/default_json",
        "note": "As `default`, printed as one JSON result (`--output-format json`): which result(s) print mode "
                "prints when a background agent's end starts a second query.",
        **subagent_script(),
        "flags": ["--output-format", "json"],
    },
    {
        "name": "subagent/foreground",
        "note": "As `default`, with `run_in_background: false` in the Agent call.",
        **subagent_script(run_in_background=False),
    },
    {
        "name": "subagent/foreground_json",
        "note": "As `foreground`, printed as one JSON result (`--output-format json` after `--verbose`): "
                "whether a foreground agent's lines are in the array.",
        **subagent_script(run_in_background=False),
        "flags": ["--output-format", "json"],
    },
    {
        "name": "subagent/failed",
        "note": "As `foreground`, but the subagent's first request is refused with a 400 "
                "`invalid_request_error` (not retried): the child fails and the main session answers.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [txt("交给子代理检查 logout.ts。"),
                              {"type": "tool_use", "name": "Agent",
                               "input": {"description": "Check logout", "subagent_type": "general-purpose",
                                         "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report what it does.",
                                         "run_in_background": False}}]},
                  {"kind": "sub", "status": 400, "error_type": "invalid_request_error",
                   "message": "SUBAGENT-REFUSED: the request is invalid"},
                  {"text": FINAL}],
        "defaults": {"main": {"text": "子代理失败了。"},
                     "sub": {"status": 400, "error_type": "invalid_request_error",
                             "message": "SUBAGENT-REFUSED: the request is invalid"}},
    },
]


# ---------------------------------------------------------------------------------------------
# Print mode's own families (issue 39), recorded into tests/print/recorded/ for
# tests/print_recorded.rs, never into crates/reloop-import/tests/recorded/:
#   record.py --out tests/print/recorded --only parallel_tools --only env --only error_endings --only flags ...
PRINT_MODE_SCENARIOS = [
    {
        "name": "parallel_tools/two_reads",
        "note": "One answer with two Read calls, then the final text: how `num_turns` counts them.",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [txt("两个文件一起读。"), read(), read("src/auth/logout.ts")]}, {"text": FINAL}],
    },
    {
        "name": "env/max_output_tokens",
        "note": "`CLAUDE_CODE_MAX_OUTPUT_TOKENS=8000` and every answer cut by `max_tokens`: the request's limit and "
                "the exhaustion text's number.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000"},
        "defaults": {"main": {"text": "登录模块的问题在于：login() 使用硬编码的", "stop": "max_tokens"}},
    },
    {
        "name": "env/anthropic_model",
        "note": "`ANTHROPIC_MODEL=claude-sonnet-4-6`: the model and limit of the requests and of `system/init`.",
        "prompt": "检查登录模块",
        "env": {"ANTHROPIC_MODEL": "claude-sonnet-4-6"},
        "steps": [{"text": FINAL}],
    },
    {
        "name": "error_endings/prompt_too_long_single",
        "note": "The first request gets 400 `prompt is too long`: a single exchange cannot be compacted.",
        "prompt": "检查登录模块",
        "defaults": {"main": {"status": 400, "error_type": "invalid_request_error",
                              "message": "prompt is too long: 210000 tokens > 200000 maximum"}},
    },
    {
        "name": "error_endings/prompt_too_long_no_sizes",
        "note": "The first request gets 400 `prompt is too long` with no token counts: the text Claude Code "
                "ends with when it cannot read the request's size (issue 39).",
        "prompt": "检查登录模块",
        "defaults": {"main": {"status": 400, "error_type": "invalid_request_error",
                              "message": "prompt is too long"}},
    },
    {
        "name": "error_endings/invalid_request",
        "note": "After one tool turn every request gets 400 `invalid_request_error` with a message Claude Code "
                "does not recognise: how the main loop ends on it, beside `subagent/failed` (issue 39).",
        "prompt": "检查登录模块",
        "steps": [{"blocks": [read()]}],
        "defaults": {"main": {"status": 400, "error_type": "invalid_request_error",
                              "message": "MAIN-REFUSED: the request is invalid"}},
    },
    {
        "name": "error_endings/invalid_request_no_tool_search",
        "note": "As `invalid_request`, with `ENABLE_TOOL_SEARCH=false`: no tool is deferred, so what 2.1.332 "
                "sends again after such a 400 is its guesses about the thinking betas alone (issue 39).",
        "prompt": "检查登录模块",
        "env": {"ENABLE_TOOL_SEARCH": "false"},
        "steps": [{"blocks": [read()]}],
        "defaults": {"main": {"status": 400, "error_type": "invalid_request_error",
                              "message": "MAIN-REFUSED: the request is invalid"}},
    },
    {
        "name": "error_endings/invalid_request_healed",
        "note": "One 400 `invalid_request_error` Claude Code does not recognise, after one tool turn, then answers: "
                "whether the request sent again keeps its shape for the rest of the conversation (issue 39).",
        "prompt": "检查登录模块",
        "env": {"ENABLE_TOOL_SEARCH": "false"},
        "steps": [{"blocks": [read()]},
                  {"status": 400, "error_type": "invalid_request_error",
                   "message": "MAIN-REFUSED: the request is invalid"},
                  {"blocks": [read("src/auth/logout.ts")]},
                  {"text": FINAL}],
    },
    {
        "name": "retries/retry_after_over_a_minute",
        "note": "429 with `retry-after: 61` on every request: whether a delay over 60 s is waited (the bundles "
                "throw `tengu_api_retry_after_too_long` above 60 s; issue 39).",
        "prompt": "检查登录模块",
        "defaults": {"main": {"status": 429, "error_type": "rate_limit_error", "message": "rate limited",
                              "headers": {"retry-after": "61"}}},
    },
    {
        "name": "flags/prompt_suggestions",
        "note": "`--prompt-suggestions` in print mode, with a one-answer session.",
        "prompt": "检查登录模块",
        "flags": ["--prompt-suggestions"],
        "steps": [{"text": FINAL}],
    },
    {
        "name": "flags/json_verbose",
        "note": "`--output-format json` after the recorder's `--verbose`, with a Read then an answer: what the "
                "json output prints when verbose (every message as one array, or the result alone).",
        "prompt": "检查登录模块",
        "flags": ["--output-format", "json"],
        "steps": [{"blocks": [read()]}, {"text": FINAL}],
    },
]

SCENARIOS += PRINT_MODE_SCENARIOS

# ---- Issue 39, the request side: what Claude Code sends back to the model ----------------------
# Fixtures under tests/print/recorded/<version>/<family>/ (tests/conformance_requests.rs).
# A tool input's raw JSON is streamed exactly as written here (`raw_input`).

def raw_call(name, raw):
    return {"type": "tool_use", "name": name, "input": {}, "raw_input": raw}


# keys out of schema order, integer-like keys, numbers spelled as a model may spell them
ODD_INPUT = ('{"zeta": 15.0, "2": "two", "alpha": [1.50, -0.0, 1E3, 2.5e-3], "1": {"b": 2.0, "a": 1}, '
             '"big": 12345678901234567890, "tiny": 0.000001, "huge": 1e21, "small": 1e-7, "dup": 1, "dup": 2}')

SCENARIOS += [
    {
        "name": "tool_inputs/spelling",
        "note": "Tool inputs whose raw JSON has keys out of schema order and numbers spelled `5.0`, `1E3`, "
                "`-0.0`, a big integer, duplicate keys: a valid Read, an allowed Bash, an unknown tool and a "
                "Read the schema rejects, one per turn. What comes back in the next request's assistant "
                "message is what Claude Code re-serializes.",
        "prompt": "检查登录模块",
        "flags": ["--allowedTools", "Bash"],
        "full_texts": True,
        "steps": [
            {"blocks": [raw_call("Read", '{"limit": 5.0, "file_path": "%s/src/auth/login.ts", "offset": 1.0}' % P)]},
            {"blocks": [raw_call("Bash", '{"description": "print hi", "timeout": 60000.0, "command": "echo hi"}')]},
            {"blocks": [raw_call("NoSuchTool", ODD_INPUT)]},
            {"blocks": [raw_call("Read", '{"zz_extra": 2.0, "file_path": "%s/README.md", "2": 1}' % P)]},
            {"text": FINAL},
        ],
    },
    {
        "name": "tool_inputs/invalid",
        "note": "Tool inputs that are no JSON object: an array, a trailing comma, an empty input, one per turn "
                "(`stop_reason: tool_use`).",
        "prompt": "检查登录模块",
        "full_texts": True,
        "steps": [
            {"blocks": [raw_call("Read", '[1, 2.0]')]},
            {"blocks": [raw_call("Read", '{"file_path": "%s/src/auth/login.ts",}' % P)]},
            {"blocks": [raw_call("Read", '')]},
            {"text": FINAL},
        ],
    },
    {
        "name": "concurrent_results/slow_first",
        "note": "One message asks for a slow Bash (`sleep 2; echo slow`), then a fast one (`echo fast`), "
                "both allowed: in which order do the results go back?",
        "prompt": "检查登录模块",
        "flags": ["--allowedTools", "Bash"],
        "full_texts": True,
        "steps": [
            {"blocks": [bash("sleep 2; echo slow", "slow"), bash("echo fast", "fast")]},
            {"text": FINAL},
        ],
    },
    {
        "name": "concurrent_results/mixed",
        "note": "One message asks for a slow Bash, a Read, a Write (denied in the default mode) and another "
                "Read.",
        "prompt": "检查登录模块",
        "flags": ["--allowedTools", "Bash"],
        "full_texts": True,
        "steps": [
            {"blocks": [bash("sleep 2; echo slow", "slow"), read(),
                        {"type": "tool_use", "name": "Write", "input": {"file_path": "%s/new.txt" % P, "content": "x\n"}},
                        read("src/auth/logout.ts")]},
            {"text": FINAL},
        ],
    },
    {
        "name": "compaction/auto",
        "note": "As auto_compact/auto, with every message text kept whole: the summary request's prompt, "
                "the summary message and where cache_control sits.",
        "prompt": "检查登录模块",
        "env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
        "full_texts": True,
        "steps": [
            {"blocks": [txt("先读 login.ts。"), read()]},
            {"blocks": [read("src/auth/logout.ts")]},
            {"blocks": [read("README.md")], "usage": {"input_tokens": 190000}},
            {"kind": "compact", "text": SUMMARY},
            {"text": FINAL},
        ],
    },
    {
        "name": "compaction/reactive",
        "note": "As auto_compact/reactive (400 prompt is too long on the third main request), with every "
                "message text kept whole.",
        "prompt": "检查登录模块",
        "full_texts": True,
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
        "name": "compaction/no_persistence",
        "note": "As compaction/reactive, with `--no-session-persistence`: whether the summary message still "
                "names a transcript file when none is written.",
        "prompt": "检查登录模块",
        "flags": ["--no-session-persistence"],
        "full_texts": True,
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
        "name": "total_tokens/sonnet",
        "note": "`--model claude-sonnet-4-6`: two Reads, then the answer; usage differs per answer so the "
                "`<total_tokens>` counts can be told apart.",
        "prompt": "检查登录模块",
        "flags": ["--model", "claude-sonnet-4-6"],
        "full_texts": True,
        "steps": [
            {"blocks": [read()], "usage": {"input_tokens": 1000, "output_tokens": 50}},
            {"blocks": [read("src/auth/logout.ts")], "usage": {"input_tokens": 2000, "output_tokens": 60,
                                                               "cache_read_input_tokens": 300}},
            {"text": FINAL},
        ],
    },
]


def for_version(sc, version):
    """The scenario with its per-version overrides applied."""
    out = copy.deepcopy(sc)
    out.update(copy.deepcopy(sc.get("by_version", {}).get(version, {})))
    out.pop("by_version", None)
    return out


# ---------------------------------------------------------------------------------------------
# Settings hierarchy, slash commands and hook events (issue 36, branch `settings`).
# Fixtures: tests/print/recorded/<version>/settings_*/ and hooks_*/ (record with
# `--out tests/print/recorded --only settings_sources --only settings_slash --only hooks_events`).
# Every hook here is `ev.sh EVENT TAG MODE`: it saves `{"_tag","_env","input"}` (the hook input,
# the tag naming which settings file declared it, and $PROBE_ALL as the hook saw it) as the next
# hook-inputs.jsonl line, then answers by MODE.
# ---------------------------------------------------------------------------------------------
HOME_DIR = "/tmp/reloop-cc-home"
EV = "/tmp/reloop-cc-hooks/ev.sh"
EV_SH = r"""#!/bin/sh
# usage: ev.sh EVENT TAG MODE
ev=$1; tag=$2; mode=$3; d=/tmp/reloop-cc-hooks
exec 9>$d/lock; flock 9
c=$(cat $d/count 2>/dev/null || echo 0); c=$((c+1)); echo $c > $d/count
{ printf '{"_tag":"%s","_env":"%s","input":' "$tag" "$PROBE_ALL"; cat; printf '}'; } > $d/input-$c.json
flock -u 9
case $mode in
  ctx) printf '{"systemMessage":"SYSMSG-%s-%s","hookSpecificOutput":{"hookEventName":"%s","additionalContext":"CTX-%s-%s"}}\n' $ev $tag $ev $ev $tag ;;
  sysmsg) printf '{"systemMessage":"SYSMSG-%s-%s"}\n' $ev $tag ;;
  plain) echo "PLAIN-STDOUT-$ev-$tag" ;;
  block) printf '{"decision":"block","reason":"BLOCK-REASON-%s-%s"}\n' $ev $tag ;;
  stop) printf '{"continue":false,"stopReason":"STOP-REASON-%s-%s"}\n' $ev $tag ;;
  exit2) echo "EXIT2-STDERR-$ev-$tag" >&2; exit 2 ;;
esac
exit 0
"""


def ev_hooks(spec):
    """{"hooks": ...} from [(event, tag, mode[, matcher])]; one matcher group per entry."""
    out = {}
    for item in spec:
        event, tag, mode = item[:3]
        group = {"hooks": [{"type": "command", "command": "%s %s %s %s" % (EV, event, tag, mode)}]}
        if len(item) > 3:
            group["matcher"] = item[3]
        out.setdefault(event, []).append(group)
    return {"hooks": out}


def json_file(obj):
    import json
    return json.dumps(obj, indent=1)


def layered(with_flag=False):
    """User, project and local settings that each set env, a model, permission rules and a
    UserPromptSubmit hook, so which files were read and which value won shows in the requests."""
    def one(tag, model, perms):
        d = {"env": {"PROBE_" + tag[0].upper(): tag, "PROBE_ALL": tag}, "model": model, "permissions": perms}
        d.update(ev_hooks([("UserPromptSubmit", tag, "log")]))
        return d
    return {
        "%s/.claude/settings.json" % HOME_DIR: json_file(one("user", "claude-opus-4-1", {"allow": ["Bash(echo:*)"]})),
        "%s/.claude/settings.json" % P: json_file(one("project", "claude-sonnet-4-5", {"deny": ["Bash(echo denied:*)"]})),
        "%s/.claude/settings.local.json" % P: json_file(one("local", "claude-haiku-4-5", {"ask": ["Bash(echo asked:*)"]})),
        EV: EV_SH,
    }


LAYER_STEPS = [
    {"blocks": [bash("echo U=$PROBE_U P=$PROBE_P L=$PROBE_L ALL=$PROBE_ALL", "print the probes")]},
    {"blocks": [bash("echo denied now", "a denied echo")]},
    {"blocks": [bash("echo asked now", "an asked echo")]},
    {"text": "SETTINGS-DONE"},
]

COMMANDS = {
    "%s/.claude/commands/greet.md" % P: "---\ndescription: Greet someone\nargument-hint: NAME\n"
    "allowed-tools: Bash(echo:*)\n---\nGreet $ARGUMENTS warmly. First word: $1. Then run echo hi.\n",
    "%s/.claude/commands/ns/sub.md" % P: "NAMESPACED-COMMAND-BODY args=[$ARGUMENTS]\n",
    "%s/.claude/commands/ucmd.md" % HOME_DIR: "USER-COMMAND-BODY args=[$ARGUMENTS]\n",
    EV: EV_SH,
}

ALL_EVENTS = ["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
              "PostToolUseFailure", "Notification", "Stop", "SubagentStart", "SubagentStop", "PreCompact",
              "PermissionRequest"]


def by_hand_compaction(calls, between=None):
    """A stream-json session that asks, makes `calls` one a turn and answers, (asks `between` and
    is answered,) then `/compact`s and asks again: what the compaction gives back."""
    asked = ["检查登录模块"] + ([between] if between else []) + ["/compact", "再说一遍"]
    answers = [{"text": "FIRST-ANSWER"}] + ([{"text": "NOTHING-MORE"}] if between else [])
    return {"input": stream(*asked),
            "steps": [{"blocks": [call]} for call in calls] + answers
            + [{"kind": "compact", "text": SUMMARY}, {"text": "SECOND-ANSWER"}],
            "defaults": {"main": {"text": "MORE"}}}


SIX_FILES = {"%s/src/%s.ts" % (P, n): "export const %s = 1;\n" % n for n in "abcdef"}


def stream(*texts, wait_secs=1.5):
    acts = []
    for i, t in enumerate(texts):
        acts += [{"send": user_line(t)}, {"wait": "stdout", "contains": '"type":"result"', "n": i + 1}]
    return acts + [{"sleep": wait_secs}, {"close": True}]


SCENARIOS += [
    {"name": "settings_sources/default",
     "note": "User, project and local settings files (env, model, permissions, a UserPromptSubmit hook each), "
             "no --setting-sources: which files the version reads by default, and which value wins.",
     "prompt": "检查设置", "files": layered(), "steps": LAYER_STEPS},
    {"name": "settings_sources/user",
     "note": "As `default` with `--setting-sources user`.",
     "prompt": "检查设置", "files": layered(), "steps": LAYER_STEPS, "flags": ["--setting-sources", "user"]},
    {"name": "settings_sources/project_local",
     "note": "As `default` with `--setting-sources project,local`.",
     "prompt": "检查设置", "files": layered(), "steps": LAYER_STEPS,
     "flags": ["--setting-sources", "project,local"]},
    {"name": "settings_sources/empty",
     "note": "As `default` with `--setting-sources=` (an empty list).",
     "prompt": "检查设置", "files": layered(), "steps": LAYER_STEPS, "flags": ["--setting-sources="]},
    {"name": "settings_sources/flag",
     "note": "As `default` plus `--settings FILE` setting PROBE_ALL=flag, a model and a UserPromptSubmit hook.",
     "prompt": "检查设置", "files": layered(), "steps": LAYER_STEPS,
     "settings": dict({"env": {"PROBE_ALL": "flag"}, "model": "claude-3-7-sonnet-latest"},
                      **ev_hooks([("UserPromptSubmit", "flag", "log")]))},
    {"name": "settings_sources/user_model",
     "note": "Only a user settings file, setting `model` to claude-sonnet-4-5 (is a user `model` honoured? "
             "`user` above asked for claude-opus-4-1 and got the default).",
     "prompt": "检查设置", "files": {"%s/.claude/settings.json" % HOME_DIR: json_file({"model": "claude-sonnet-4-5"})},
     "steps": [{"text": "SETTINGS-DONE"}]},
    {"name": "settings_slash/clear",
     "note": "The prompt is `/clear` in print mode.", "prompt": "/clear", "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "log"), ("UserPromptSubmit", "s", "log"), ("SessionEnd", "s", "log")]),
     "defaults": {"main": {"text": "CLEAR-REACHED-MODEL"}}},
    {"name": "settings_slash/compact",
     "note": "The prompt is `/compact` in print mode, with no conversation yet.", "prompt": "/compact",
     "files": {EV: EV_SH}, "settings": ev_hooks([("PreCompact", "s", "log"), ("UserPromptSubmit", "s", "log")]),
     "steps": [{"kind": "compact", "text": SUMMARY}], "defaults": {"main": {"text": "COMPACT-REACHED-MODEL"}}},
    {"name": "settings_slash/stream_clear",
     "note": "stream-json input: a question, then `/clear`, then another question.",
     "input": stream("检查登录模块", "/clear", "再说一遍"), "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "log"), ("SessionEnd", "s", "log"), ("UserPromptSubmit", "s", "log")]),
     "steps": [{"text": "FIRST-ANSWER"}, {"text": "SECOND-ANSWER"}], "defaults": {"main": {"text": "MORE"}}},
    {"name": "settings_slash/stream_compact",
     "note": "stream-json input: a question answered after a Read, then `/compact`, then another question.",
     "input": stream("检查登录模块", "/compact", "再说一遍"), "files": {EV: EV_SH},
     "settings": ev_hooks([("PreCompact", "s", "log"), ("SessionStart", "s", "log"), ("UserPromptSubmit", "s", "log")]),
     "steps": [{"blocks": [read()]}, {"text": "FIRST-ANSWER"}, {"kind": "compact", "text": SUMMARY},
               {"text": "SECOND-ANSWER"}], "defaults": {"main": {"text": "MORE"}}},
    {"name": "settings_slash/stream_compact_two_reads",
     "note": "As `stream_compact`, the first question answered after two Reads in a row (one file each) and a "
             "Read of the first again: how the files a `/compact` gives back are sent with the next question.",
     **by_hand_compaction([read(), read("src/auth/logout.ts"), read("README.md")])},
    {"name": "settings_slash/stream_compact_read_order",
     "note": "As `stream_compact_two_reads`, the files read in another order (README.md, logout.ts, login.ts): "
             "in which order a `/compact` gives them back.",
     **by_hand_compaction([read("README.md"), read("src/auth/logout.ts"), read()])},
    {"name": "settings_slash/stream_compact_mtimes",
     "note": "As `stream_compact_six_reads`, the files dated apart (the recorder sets their modification "
             "times: c newest, then d, b, f, e, a): whether a `/compact` gives files back by when they "
             "were read or when they were changed.",
     "files": SIX_FILES,
     "mtimes": {"src/%s.ts" % n: 1700000000 + 1000 * rank for n, rank in zip("cdbfea", range(6, 0, -1))},
     **by_hand_compaction([read("src/%s.ts" % n) for n in "abcdef"])},
    {"name": "settings_slash/stream_compact_six_reads",
     "note": "As `stream_compact_two_reads`, with six small files read one a turn (a.ts to f.ts): which "
             "of them a `/compact` gives back, and in which order.",
     "files": SIX_FILES, **by_hand_compaction([read("src/%s.ts" % n) for n in "abcdef"])},
    {"name": "settings_slash/stream_compact_later_query",
     "note": "As `stream_compact_two_reads`, with a question answered without tools between the reads and "
             "`/compact`: whether a new query changes the order in which the files are given back.",
     **by_hand_compaction([read(), read("src/auth/logout.ts"), read("README.md")], between="还有吗")},
    {"name": "settings_slash/stream_compact_written",
     "note": "As `stream_compact_two_reads`, with `--permission-mode acceptEdits`: a Read of login.ts, a Write "
             "of a new file and an Edit of README.md never read: which of them a `/compact` gives back.",
     "flags": ["--permission-mode", "acceptEdits"],
     **by_hand_compaction([read(),
                           {"type": "tool_use", "name": "Write",
                            "input": {"file_path": "%s/src/new.ts" % P, "content": "export const n = 1;\n"}},
                           read("README.md"),
                           {"type": "tool_use", "name": "Edit",
                            "input": {"file_path": "%s/README.md" % P, "old_string": "# demo", "new_string": "# shop"}}])},
    {"name": "settings_slash/stream_compact_hooks",
     "note": "As `stream_compact`, with two PreCompact hooks: one printing plain stdout, one answering "
             "`decision: block`. What the compaction shows of them, and whether a block cancels it.",
     "input": stream("检查登录模块", "/compact", "再说一遍"), "files": {EV: EV_SH},
     "settings": ev_hooks([("PreCompact", "p", "plain"), ("PreCompact", "b", "block"), ("SessionStart", "s", "log")]),
     "steps": [{"text": "FIRST-ANSWER"}, {"kind": "compact", "text": SUMMARY},
               {"text": "SECOND-ANSWER"}], "defaults": {"main": {"text": "MORE"}}},
    {"name": "settings_slash/custom",
     "note": "Project command `.claude/commands/greet.md` (frontmatter, $ARGUMENTS, $1, allowed-tools) run as "
             "`/greet Alice Bob`.", "prompt": "/greet Alice Bob", "files": COMMANDS,
     "settings": ev_hooks([("UserPromptSubmit", "s", "log")]),
     "steps": [{"blocks": [bash("echo hi", "say hi")]}, {"text": "GREETED"}]},
    {"name": "settings_slash/namespaced",
     "note": "Project command in a subfolder, `.claude/commands/ns/sub.md`, run as `/ns:sub a b`.",
     "prompt": "/ns:sub a b", "files": COMMANDS, "steps": [{"text": "NS-DONE"}]},
    {"name": "settings_slash/user_command",
     "note": "User command `~/.claude/commands/ucmd.md` run as `/ucmd x y`.",
     "prompt": "/ucmd x y", "files": COMMANDS, "steps": [{"text": "UCMD-DONE"}]},
    {"name": "settings_slash/custom_user_only",
     "note": "As `custom` with `--setting-sources user`: is the project command still found?",
     "prompt": "/greet Alice Bob", "files": COMMANDS, "flags": ["--setting-sources", "user"],
     "steps": [{"text": "GREETED"}]},
    {"name": "settings_slash/unknown",
     "note": "An unknown slash command, `/nosuch foo`.", "prompt": "/nosuch foo", "files": COMMANDS,
     "defaults": {"main": {"text": "UNKNOWN-REACHED-MODEL"}}},
    {"name": "settings_slash/typo",
     "note": "A typo of a command, `/gret Alice` (`/greet` is a project command, two edits off the typo "
             "`/grete` is not): whether the nearest command is named.", "prompt": "/gret Alice", "files": COMMANDS,
     "defaults": {"main": {"text": "TYPO-REACHED-MODEL"}}},
    {"name": "settings_slash/typo_hidden",
     "note": "As `typo`, with `disable-model-invocation: true` in greet.md's front matter: whether the command "
             "the model may not run is still suggested and named in 2.1.332's reminder (its bundle filters "
             "such commands out of both, but counts them).", "prompt": "/gret Alice",
     "files": dict(COMMANDS, **{"%s/.claude/commands/greet.md" % P: "---\ndescription: Greet someone\n"
                                "disable-model-invocation: true\n---\nGreet $ARGUMENTS warmly.\n"}),
     "defaults": {"main": {"text": "TYPO-REACHED-MODEL"}}},
    {"name": "hooks_events/all_log",
     "note": "Every hook event configured with a logging hook; the model reads a file, runs a failing "
             "command, runs a command that needs permission, starts a foreground subagent, then answers.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([(e, "s", "log") for e in ALL_EVENTS]),
     "steps": [{"blocks": [read()]}, {"blocks": [bash("false", "fail")]},
               {"blocks": [bash("touch newfile.txt", "needs permission")]},
               {"blocks": [{"type": "tool_use", "name": "Agent",
                            "input": {"description": "Check logout", "subagent_type": "general-purpose",
                                      "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report.",
                                      "run_in_background": False}}]},
               {"kind": "sub", "blocks": [read("src/auth/logout.ts")]},
               {"kind": "sub", "text": "SUBAGENT REPORT: logout() is a stub."},
               {"text": FINAL}]},
    {"name": "hooks_events/context",
     "note": "SessionStart, UserPromptSubmit and PostToolUse hooks answer additionalContext + systemMessage; "
             "PreToolUse and Stop answer systemMessage only.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "ctx"), ("UserPromptSubmit", "s", "ctx"), ("PostToolUse", "s", "ctx"),
                           ("PreToolUse", "s", "sysmsg"), ("Stop", "s", "sysmsg")]),
     "steps": [{"blocks": [read()]}, {"text": FINAL}]},
    {"name": "hooks_events/plain",
     "note": "SessionStart and UserPromptSubmit hooks print plain text on stdout (exit 0).",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([("SessionStart", "s", "plain"), ("UserPromptSubmit", "s", "plain")]),
     "steps": [{"text": FINAL}]},
    {"name": "hooks_events/prompt_block",
     "note": "A UserPromptSubmit hook answers {\"decision\":\"block\",\"reason\":...}.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([("UserPromptSubmit", "s", "block")]), "defaults": {"main": {"text": "REACHED-MODEL"}}},
    {"name": "hooks_events/prompt_exit2",
     "note": "A UserPromptSubmit hook exits 2 with a stderr text.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([("UserPromptSubmit", "s", "exit2")]), "defaults": {"main": {"text": "REACHED-MODEL"}}},
    {"name": "hooks_events/prompt_stop",
     "note": "A UserPromptSubmit hook answers {\"continue\":false,\"stopReason\":...}.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": ev_hooks([("UserPromptSubmit", "s", "stop")]), "defaults": {"main": {"text": "REACHED-MODEL"}}},
    {"name": "hooks_events/include_hook_events",
     "note": "As `context`, with `--include-hook-events`: which hook lines the version prints then.",
     "prompt": "检查登录模块", "files": {EV: EV_SH}, "flags": ["--include-hook-events"],
     "settings": ev_hooks([("SessionStart", "s", "ctx"), ("UserPromptSubmit", "s", "ctx"), ("PostToolUse", "s", "ctx"),
                           ("PreToolUse", "s", "sysmsg"), ("Stop", "s", "sysmsg"), ("SessionEnd", "s", "log")]),
     "steps": [{"blocks": [read()]}, {"text": FINAL}]},
    {"name": "hooks_events/prompt_wrong_event",
     "note": "A UserPromptSubmit hook answers additionalContext under hookEventName SessionStart, as the "
             "Python SDK's examples/hooks.py does: what a mismatched event name does to the prompt.",
     "prompt": "检查登录模块",
     "files": {"/tmp/reloop-cc-hooks/wrong.sh": "#!/bin/sh\ncat > /tmp/reloop-cc-hooks/input-1.json\n"
               "printf '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"WRONG-CTX\"}}\\n'\n"},
     "settings": {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/tmp/reloop-cc-hooks/wrong.sh"}]}]}},
     "steps": [{"text": FINAL}], "defaults": {"main": {"text": "REACHED-MODEL"}}},
    {"name": "hooks_events/subagent_stop_block",
     "note": "A foreground subagent whose SubagentStop hook (stop.sh exit2 2: the count is shared with the SubagentStart hook) blocks once; SubagentStart "
             "logged. What the subagent is sent after the block, and what the hooks read.",
     "prompt": "检查登录模块", "files": {EV: EV_SH},
     "settings": {"hooks": {"SubagentStart": [{"hooks": [{"type": "command", "command": "%s SubagentStart s log" % EV}]}],
                            "SubagentStop": [{"hooks": [{"type": "command", "command": HOOK + " exit2 2"}]}]}},
     "steps": [{"blocks": [{"type": "tool_use", "name": "Agent",
                            "input": {"description": "Check logout", "subagent_type": "general-purpose",
                                      "prompt": "SUBAGENT-TASK: read src/auth/logout.ts and report.",
                                      "run_in_background": False}}]},
               {"kind": "sub", "text": "SUBAGENT FIRST REPORT."},
               {"kind": "sub", "text": "SUBAGENT SECOND REPORT."},
               {"text": FINAL}]},
    {"name": "hooks_events/stream",
     "note": "stream-json input with two messages; every event logged.",
     "input": stream("检查登录模块", "再说一遍"), "files": {EV: EV_SH},
     "settings": ev_hooks([(e, "s", "log") for e in ALL_EVENTS]),
     "steps": [{"text": "FIRST-ANSWER"}, {"text": "SECOND-ANSWER"}]},
]


# Issue 36's SDK features (model aliases, SDK agents, structured output, partial messages).
import scenarios_sdkfeat  # noqa: E402

SCENARIOS += scenarios_sdkfeat.SCENARIOS

# Issue 36's SDK wire details (origin, queued messages, MCP results, command front matter).
import scenarios_sdkwire  # noqa: E402

SCENARIOS += scenarios_sdkwire.SCENARIOS

# Issue 36's remaining behaviour items (local slash commands, compaction hooks, hook lines).
import scenarios_sdk36  # noqa: E402

SCENARIOS += scenarios_sdk36.SCENARIOS

# Issue 39's tool results (`tool_use_result`, `tool_result_meta`) per tool and error case.
import scenarios_toolresults  # noqa: E402

SCENARIOS += scenarios_toolresults.SCENARIOS

# Issue 39's rulings: `tool_result_meta` for a PreToolUse hook's ruling and a deny rule's.
import scenarios_rulings  # noqa: E402

SCENARIOS += scenarios_rulings.SCENARIOS

# Issue 39's request details: the thinking switches in the environment.
import scenarios_requests  # noqa: E402

SCENARIOS += scenarios_requests.SCENARIOS
