"""A small MCP server written with the official MCP Python SDK (PyPI `mcp`), put behind
Passepartout's gates in gateway mode by host/tests/daemon/gateway.rs.

Its tool `note` appends its text to the file NOTES_LOG names, so the test sees exactly which
calls reached it (a call a gate rejects must never appear there); `probe` says what it can
reach: its user, whether the daemon's environment leaked into its own, and whether it can read
the daemon's client key (KEYS_PATH).
"""

import json
import os

from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")


@app.tool()
def note(text: str) -> str:
    """Adds a note."""
    with open(os.environ["NOTES_LOG"], "a", encoding="utf-8") as log:
        log.write(text + "\n")
    return f"noted: {text}"


@app.tool()
def probe() -> str:
    """Says what this server can reach (the test checks its confinement)."""
    try:
        with open(os.environ["KEYS_PATH"], encoding="utf-8") as f:
            keys = f.read() != ""
    except OSError:
        keys = False
    return json.dumps(
        {
            "uid": os.getuid(),
            "marker": os.environ.get("DAEMON_MARKER"),
            "keys_readable": keys,
        }
    )


if __name__ == "__main__":
    app.run()
