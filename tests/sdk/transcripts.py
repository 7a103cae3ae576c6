"""Reads reloop's session files back with the Python Agent SDK's own session readers, for
tests/sdk_transcripts.rs.

Usage: <venv python> tests/sdk/transcripts.py NAME   (environment as for scenario.py)

Prints what the SDK yielded (scenario.py's lines), then `{"event": ...}` lines with what
`list_sessions`, `get_session_messages`, `list_subagents` and `get_subagent_messages` returned,
and the result of a truncating resume (`resume_session_at` one of those messages' uuids).
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from claude_agent_sdk import (  # noqa: E402
    ClaudeSDKClient,
    ResultMessage,
    get_session_messages,
    get_subagent_messages,
    list_sessions,
    list_subagents,
)

import scenario  # noqa: E402
from scenario import emit, options, receive_turn, run_query  # noqa: E402


def session_messages(messages):
    return [
        {"type": m.type, "uuid": m.uuid, "session_id": m.session_id, "message": m.message,
         "parent_tool_use_id": m.parent_tool_use_id}
        for m in messages
    ]


def read_back(session_id):
    cwd = os.environ["WORKDIR"]
    emit({"event": "list_sessions", "ids": [s.session_id for s in list_sessions(directory=cwd)]})
    messages = get_session_messages(session_id, directory=cwd)
    emit({"event": "session_messages", "messages": session_messages(messages)})
    agents = list_subagents(session_id, directory=cwd)
    emit({"event": "subagents", "ids": agents})
    for agent in agents:
        emit({"event": "subagent_messages", "agent_id": agent,
              "messages": session_messages(get_subagent_messages(session_id, agent, directory=cwd))})
    return messages


async def client_then_truncating_resume():
    """Two queries in one client; then a fork resumed at the first query's last message."""
    async with ClaudeSDKClient(options=options(allowed_tools=["Read"])) as client:
        await client.query("read a.txt")
        first = await receive_turn(client)
        await client.query("and now say done")
        await receive_turn(client)
    messages = read_back(first.session_id)
    # The first query's answer: the last assistant message before the second prompt.
    second_prompt = next(i for i, m in enumerate(messages) if m.type == "user"
                         and m.message.get("content") == "and now say done")
    at = [m for m in messages[:second_prompt] if m.type == "assistant"][-1].uuid
    emit({"event": "resume_at", "uuid": at})
    last = await run_query("what did a.txt say?", resume=first.session_id, resume_session_at=at, fork_session=True)
    if isinstance(last, ResultMessage):
        read_back(last.session_id)


async def subagent():
    last = await run_query("ask the reader about a.txt", allowed_tools=["Read", "Agent"])
    read_back(last.session_id)


scenario.SCENARIOS.clear()
scenario.SCENARIOS.update({"client_then_truncating_resume": client_then_truncating_resume, "subagent": subagent})

if __name__ == "__main__":
    sys.exit(scenario.main())
