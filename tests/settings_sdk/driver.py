"""Drives the real Python Claude Agent SDK for tests/settings_sdk.rs: setting_sources and slash commands.

Usage: <venv python> tests/settings_sdk/driver.py SOURCES PROMPT
SOURCES is `default` (setting_sources left unset, as the SDK's own e2e test_setting_sources_default
does) or a comma-separated list (`user`, `user,project,local`). Prints the `init` message's
`output_style` and `slash_commands`, then the result text, one JSON line each; `{"error": ...}` if
the SDK raised.
"""

import asyncio
import json
import os
import sys

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, SystemMessage


async def main(sources, prompt):
    extra = {} if sources == "default" else {"setting_sources": [s for s in sources.split(",") if s]}
    options = ClaudeAgentOptions(cli_path=os.environ["RELOOP_BIN"], cwd=os.environ["WORKDIR"], max_turns=1, **extra)
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, SystemMessage) and message.subtype == "init":
                print(json.dumps({"init": {"output_style": message.data.get("output_style"),
                                           "slash_commands": message.data.get("slash_commands")}}), flush=True)
            if isinstance(message, ResultMessage):
                print(json.dumps({"result": message.result}), flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2]), 60))
    except BaseException as e:  # noqa: BLE001 - reported as a line
        print(json.dumps({"error": repr(e)}), flush=True)
        sys.exit(1)
