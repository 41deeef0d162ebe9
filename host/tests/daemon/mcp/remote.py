"""A remote MCP server written with the official MCP Python SDK (PyPI `mcp`), served over
streamable HTTP on loopback, for gateway mode's `url` servers (host/tests/daemon/gateway.rs).

Usage: remote.py PORT TOKEN LOG. Every HTTP request must carry `Authorization: Bearer TOKEN`
(else 401). Its tool `shout` appends its text to LOG, so the test sees which calls reached it.
"""

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

PORT, TOKEN, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]

app = MCPServer("remote")


@app.tool()
def shout(text: str) -> str:
    """Says the text louder."""
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(text + "\n")
    return text.upper()


inner = app.streamable_http_app()


async def guarded(scope, receive, send):
    """The SDK's app, behind a bearer token."""
    if scope["type"] == "http":
        said = dict(scope["headers"]).get(b"authorization", b"")
        if said != f"Bearer {TOKEN}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
    await inner(scope, receive, send)


if __name__ == "__main__":
    uvicorn.run(guarded, host="127.0.0.1", port=PORT, log_level="warning")
