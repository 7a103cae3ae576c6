"""A real MCP server, written with the official MCP Python SDK, that tests/mcp.rs runs against
reloop over stdio or streamable HTTP.

    python server.py stdio
    python server.py http PORT          (streamable HTTP on 127.0.0.1:PORT/mcp)
    python server.py garbage            (writes non-JSON-RPC to stdout and never answers)

Its tools cover what reloop must handle: a plain answer, an image, links, a tool error, a call
that outlasts MCP_TOOL_TIMEOUT, and a process that dies mid-call.
"""

import base64
import os
import sys
import time


# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build():
    # The SDK is imported here, not at the top: it takes seconds to load on a busy machine, and
    # the garbage server must speak before the client's startup timeout whatever the load.
    from mcp.server.mcpserver import Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ResourceLink, TextContent, ToolAnnotations

    mcp = MCPServer("fixture")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str, times: int = 1) -> str:
        """Repeats the text."""
        return " ".join([text] * times)

    @mcp.tool()
    def write_note(name: str, body: str) -> str:
        """Writes a note (not read-only: it changes something)."""
        with open(os.path.join(os.getcwd(), name), "w") as f:
            f.write(body)
        return f"wrote {len(body)} bytes to {name}"

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def picture() -> list:
        """Answers a caption, an image and a link."""
        return [
            TextContent(type="text", text="a red pixel"),
            Image(data=PIXEL, format="png").to_image_content(),
            ResourceLink(type="resource_link", uri="file:///pixel.png", name="pixel.png", description="the pixel"),
        ]

    @mcp.tool()
    def fail(reason: str) -> str:
        """Always fails."""
        raise ToolError(f"refused: {reason}")

    @mcp.tool()
    def slow(seconds: float) -> str:
        """Sleeps, then answers."""
        time.sleep(seconds)
        return "slept"

    @mcp.tool()
    def crash() -> str:
        """The server process dies while answering."""
        sys.stderr.write("fixture: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @mcp.tool(name="a_tool_whose_name_is_far_too_long_to_be_offered_to_any_model_at_all")
    def too_long() -> str:
        """Never offered: mcp__fix__ plus this name passes 64 characters."""
        return "unreachable"

    return mcp


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        build().run(transport="stdio")
    elif mode == "http":
        build().run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode == "garbage":
        sys.stdout.write("this is not JSON-RPC\n{\"jsonrpc\": 7}\n")
        sys.stdout.flush()
        sys.stderr.write("fixture: speaking garbage\n")
        sys.stderr.flush()
        time.sleep(600)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
