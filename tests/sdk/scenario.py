"""Drives the real Python Claude Agent SDK (`claude-agent-sdk`) against a CLI, for tests/sdk.rs.

Usage: <venv python> tests/sdk/scenario.py NAME

Environment: RELOOP_BIN (the CLI the SDK launches, via cli_path), WORKDIR (the agent's cwd),
ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY / RELOOP_JOURNAL (inherited by the CLI).

Prints one JSON line per message the SDK yields (the parsed message turned back into a dict, with
"type" and, for system messages, the raw fields), `{"event": ...}` lines for callbacks the SDK invoked,
and `{"error": ...}` if the SDK raised (exit 1). Every scenario has a hard timeout, so a CLI that hangs
fails the test instead of hanging it.
"""

import asyncio
import dataclasses
import json
import os
import signal
import sys
import traceback

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

TIMEOUT_S = float(os.environ.get("SDK_SCENARIO_TIMEOUT", "60"))

BLOCK_TYPES = {TextBlock: "text", ThinkingBlock: "thinking", ToolUseBlock: "tool_use", ToolResultBlock: "tool_result"}
MESSAGE_TYPES = {
    UserMessage: "user",
    AssistantMessage: "assistant",
    SystemMessage: "system",
    ResultMessage: "result",
    StreamEvent: "stream_event",
}


def plain(value):
    """A dataclass tree as JSON-able dicts; content blocks get their wire `type` back."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        kind = BLOCK_TYPES.get(type(value))
        if kind:
            out = {"type": kind, **out}
        return out
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def message_dict(msg):
    kind = next((k for cls, k in MESSAGE_TYPES.items() if isinstance(msg, cls)), type(msg).__name__)
    fields = plain(msg)
    if isinstance(msg, SystemMessage):
        # SystemMessage keeps the raw line in `data`: print it flat, as the CLI wrote it.
        return {"type": "system", **fields.pop("data", {}), "subtype": msg.subtype, "sdk_class": type(msg).__name__}
    return {"type": kind, **fields}


def emit(obj):
    print(json.dumps(obj, default=str), flush=True)


def options(**extra):
    return ClaudeAgentOptions(cli_path=os.environ["RELOOP_BIN"], cwd=os.environ["WORKDIR"], **extra)


async def run_query(prompt, **extra):
    """query() once; prints every message and returns the last result."""
    last = None
    async for msg in query(prompt=prompt, options=options(**extra)):
        emit(message_dict(msg))
        if isinstance(msg, ResultMessage):
            last = msg
    return last


async def receive_turn(client):
    last = None
    async for msg in client.receive_response():
        emit(message_dict(msg))
        if isinstance(msg, ResultMessage):
            last = msg
    return last


# --- scenarios -------------------------------------------------------------------------------


async def oneshot_tool():
    await run_query("read a.txt")


async def options_scenario():
    await run_query(
        "hi",
        model="claude-haiku-4-5",
        system_prompt="SDK-SYSTEM-PROMPT-MARKER",
        allowed_tools=["Read"],
        disallowed_tools=["Bash"],
        permission_mode="acceptEdits",
        max_turns=3,
    )


async def two_turns():
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("first question")
        await receive_turn(client)
        await client.query("second question")
        await receive_turn(client)


async def can_use_tool():
    async def decide(tool_name, tool_input, context):
        path = str(tool_input.get("file_path", ""))
        allow = path.endswith("out.txt")
        emit({
            "event": "can_use_tool",
            "tool_name": tool_name,
            "input": tool_input,
            "tool_use_id": context.tool_use_id,
            "suggestions": [plain(s) for s in context.suggestions],
            "decision": "allow" if allow else "deny",
        })
        if allow:
            return PermissionResultAllow()
        return PermissionResultDeny(message="nope-from-sdk")

    await run_query("write out.txt and denied.txt", can_use_tool=decide)


async def hook_pretooluse():
    async def deny_read(hook_input, tool_use_id, context):
        emit({"event": "hook_callback", "tool_use_id": tool_use_id, "input": hook_input})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "blocked-by-sdk-hook",
            }
        }

    await run_query("read a.txt", hooks={"PreToolUse": [HookMatcher(matcher="Read", hooks=[deny_read])]})


async def hook_wrong_event():
    """The Python SDK's examples/hooks.py: a UserPromptSubmit callback answering as a
    SessionStart hook. Claude Code's session crashes on it: one error result, exit 1."""

    async def wrong_event(hook_input, tool_use_id, context):
        emit({"event": "hook_callback", "input": hook_input})
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "My favorite color is hot pink"}}

    options_ = options(hooks={"UserPromptSubmit": [HookMatcher(matcher=None, hooks=[wrong_event])]})
    async with ClaudeSDKClient(options=options_) as client:
        await client.query("What's my favorite color?")
        await receive_turn(client)


async def interrupt():
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("go")
        first_message = asyncio.Event()

        async def consume():
            async for msg in client.receive_response():
                emit(message_dict(msg))
                first_message.set()

        consumer = asyncio.create_task(consume())
        # The model's reply stalls (the fake server never finishes it): interrupt once the turn has
        # visibly started (system/init), or after 5 s if the CLI printed nothing yet.
        try:
            await asyncio.wait_for(first_message.wait(), 5)
        except asyncio.TimeoutError:
            pass
        await asyncio.sleep(0.5)
        emit({"event": "interrupt_sent"})
        await client.interrupt()
        emit({"event": "interrupt_answered"})
        await consumer
        await client.query("again")
        await receive_turn(client)


async def set_model_and_mode():
    async with ClaudeSDKClient(options=options()) as client:
        await client.query("first question")
        await receive_turn(client)
        await client.set_model("claude-haiku-4-5")
        emit({"event": "set_model_answered"})
        await client.set_permission_mode("acceptEdits")
        emit({"event": "set_permission_mode_answered"})
        await client.query("second question")
        await receive_turn(client)


async def resume():
    first = await run_query("remember the word banana")
    if first is None:
        raise RuntimeError("the first query yielded no result message")
    emit({"event": "resuming", "session_id": first.session_id})
    await run_query("what was the word?", resume=first.session_id)


async def max_turns():
    await run_query("keep reading", max_turns=2)


async def sdk_mcp():
    """An in-process MCP server: `echo` answers with what only this process knows (its pid),
    `explode` raises."""

    @tool("echo", "Echoes its text from inside the SDK process", {"text": str})
    async def echo(args):
        emit({"event": "tool_ran", "tool": "echo", "args": args, "pid": os.getpid()})
        return {"content": [{"type": "text", "text": f"sdk-echo[{os.getpid()}]: {args['text']}"}]}

    @tool("explode", "Always raises", {"why": str})
    async def explode(args):
        emit({"event": "tool_ran", "tool": "explode", "args": args})
        raise RuntimeError(f"exploded: {args['why']}")

    calc = create_sdk_mcp_server("calc", tools=[echo, explode])
    await run_query(
        "use the calc tools",
        mcp_servers={"calc": calc},
        allowed_tools=["mcp__calc__echo", "mcp__calc__explode"],
    )


SCHEMA = {"type": "object", "properties": {"file": {"type": "string"}, "issues": {"type": "integer"}},
          "required": ["file", "issues"]}


async def structured():
    """output_format: the answer comes back as structured_output."""
    await run_query("review a.txt", output_format={"type": "json_schema", "schema": SCHEMA})


async def sdk_agents():
    """agents= (sent in initialize) with a model alias, as the SDK's own examples define them."""
    from claude_agent_sdk import AgentDefinition

    reviewer = AgentDefinition(description="Reviews one file.", prompt="You are a strict reviewer.",
                               tools=["Read"], model="haiku")
    await run_query("review a.txt with the reviewer", model="sonnet", agents={"reviewer": reviewer})


async def sdk_agents_forwarded():
    """sdk_agents with forward_subagent_text=True (initialize's forwardSubagentText)."""
    from claude_agent_sdk import AgentDefinition

    reviewer = AgentDefinition(description="Reviews one file.", prompt="You are a strict reviewer.",
                               tools=["Read"], model="haiku")
    await run_query("review a.txt with the reviewer", model="sonnet", agents={"reviewer": reviewer},
                    forward_subagent_text=True)


async def session_store():
    """sdk_agents with a session_store: the CLI mirrors its session files (--session-mirror)."""
    from claude_agent_sdk import (AgentDefinition, InMemorySessionStore, get_session_messages_from_store,
                                  get_subagent_messages_from_store, list_subagents_from_store)

    store = InMemorySessionStore()
    reviewer = AgentDefinition(description="Reviews one file.", prompt="You are a strict reviewer.",
                               tools=["Read"], model="haiku")
    result = await run_query("review a.txt with the reviewer", model="sonnet", agents={"reviewer": reviewer},
                             session_store=store)
    sid, cwd = result.session_id, os.environ["WORKDIR"]
    main = await get_session_messages_from_store(store, sid, directory=cwd)
    subagents = {}
    for agent in await list_subagents_from_store(store, sid, directory=cwd):
        messages = await get_subagent_messages_from_store(store, sid, agent, directory=cwd)
        subagents[agent] = sorted({m.parent_tool_use_id or "" for m in messages})
    emit({"store": {"main": [m.type for m in main], "subagents": subagents}})


SCENARIOS = {
    "structured": structured,
    "sdk_agents": sdk_agents,
    "sdk_agents_forwarded": sdk_agents_forwarded,
    "session_store": session_store,
    "oneshot_tool": oneshot_tool,
    "options": options_scenario,
    "two_turns": two_turns,
    "can_use_tool": can_use_tool,
    "hook_pretooluse": hook_pretooluse,
    "hook_wrong_event": hook_wrong_event,
    "interrupt": interrupt,
    "set_model_and_mode": set_model_and_mode,
    "resume": resume,
    "max_turns": max_turns,
    "sdk_mcp": sdk_mcp,
}


def hard_timeout(*_):
    from claude_agent_sdk._internal.transport import subprocess_cli

    for child in list(subprocess_cli._ACTIVE_CHILDREN):
        try:
            child.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass
    emit({"error": "hard timeout", "error_type": "Timeout"})
    os._exit(3)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        print(f"usage: scenario.py {{{'|'.join(SCENARIOS)}}}", file=sys.stderr)
        return 2
    # Backstop: if even the asyncio timeout cannot fire (a blocked loop), kill the CLI and die anyway.
    signal.signal(signal.SIGALRM, hard_timeout)
    signal.alarm(int(TIMEOUT_S) + 15)
    try:
        asyncio.run(asyncio.wait_for(SCENARIOS[sys.argv[1]](), TIMEOUT_S))
    except asyncio.TimeoutError:
        emit({"error": f"scenario timed out after {TIMEOUT_S:.0f} s", "error_type": "Timeout"})
        return 1
    except BaseException as e:  # noqa: BLE001 - any SDK failure is reported as a line
        emit({"error": str(e), "error_type": type(e).__name__})
        traceback.print_exc(file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
