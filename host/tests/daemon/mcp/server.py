"""A small MCP server written with the official MCP Python SDK (PyPI `mcp`), put behind
Passepartout's gates in gateway mode by host/tests/daemon/gateway.rs.

Its one tool, `note`, appends its text to the file NOTES_LOG names, so the test sees exactly
which calls reached it (a call a gate rejects must never appear there).
"""

import os

from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")


@app.tool()
def note(text: str) -> str:
    """Adds a note."""
    with open(os.environ["NOTES_LOG"], "a", encoding="utf-8") as log:
        log.write(text + "\n")
    return f"noted: {text}"


if __name__ == "__main__":
    app.run()
