"""The official MCP Python SDK (PyPI `mcp`) as a third-party client of Passepartout's MCP server.

Usage: client.py PASSEPARTOUT PORT [ARG...]  (stdio: starts `PASSEPARTOUT mcp --port PORT ARG...`)
       client.py URL TOKEN                  (streamable HTTP: the daemon's `[mcp] http`, bearer TOKEN)
Connects as an MCP client would, lists the tools and makes the calls the test asks for (one JSON
object per line on stdin: {"tool", "arguments", "timeout"?}). Prints one JSON line for the tool list, then
one per call: {"is_error", "text", "progress"} (the progress notifications' messages: the gates'
verdicts).

{"wait_list_changed": SECS} prints {"list_changed": bool} (whether the server sent
`notifications/tools/list_changed` within SECS); {"list": true} lists the tools again;
{"resources": true} prints {"resources": [URI], "templates": [URI template]}; {"read": URI}
prints {"read": text} or {"read_error": message}.

It can show a person's form (elicitation): each form asked is printed as {"elicited": message}
and answered as ELICIT_ANSWER says: "approve" (accept, approve = true), "deny" (decline), or
"cancel" (the default).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def emit(value):
    print(json.dumps(value), flush=True)


async def elicit(context, params):
    emit({"elicited": params.message})
    answer = os.environ.get("ELICIT_ANSWER", "cancel")
    if answer == "approve":
        return types.ElicitResult(action="accept", content={"approve": True})
    if answer == "deny":
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="cancel")


async def session_calls(read, write):
    list_changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            list_changed.set()

    async with ClientSession(
        read, write, elicitation_callback=elicit, message_handler=on_message
    ) as session:
        await session.initialize()

        async def list_tools():
            listed = await session.list_tools()
            emit({"tools": {t.name: t.input_schema for t in listed.tools}})

        await list_tools()
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line.strip():
                break
            call = json.loads(line)
            if "wait_list_changed" in call:
                # {"wait_list_changed": SECS}: whether the server said its tools changed.
                try:
                    await asyncio.wait_for(list_changed.wait(), call["wait_list_changed"])
                except asyncio.TimeoutError:
                    pass
                emit({"list_changed": list_changed.is_set()})
                list_changed.clear()
                continue
            if "list" in call:
                await list_tools()
                continue
            if "resources" in call:
                listed = await session.list_resources()
                templates = await session.list_resource_templates()
                emit(
                    {
                        "resources": [str(r.uri) for r in listed.resources],
                        "templates": [t.uri_template for t in templates.resource_templates],
                    }
                )
                continue
            if "read" in call:
                try:
                    read = await session.read_resource(call["read"])
                    emit({"read": "".join(getattr(c, "text", "") for c in read.contents)})
                except Exception as e:
                    emit({"read_error": str(e)})
                continue
            progress = []

            async def on_progress(done, total, message, progress=progress):
                progress.append(message)

            try:
                # With "timeout", the SDK abandons the call after that many seconds and sends
                # the server `notifications/cancelled`.
                result = await session.call_tool(
                    call["tool"],
                    call["arguments"],
                    read_timeout_seconds=call.get("timeout"),
                    progress_callback=on_progress,
                )
            except Exception as e:
                emit({"is_error": True, "abandoned": True, "text": repr(e)})
                continue
            emit(
                {
                    "is_error": result.is_error,
                    "text": "\n".join(c.text for c in result.content if c.type == "text"),
                    "progress": progress,
                }
            )


async def main():
    if sys.argv[1].startswith("http"):
        url, token = sys.argv[1], sys.argv[2]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, streamable_http_client(url, http_client=http) as streams:
            await session_calls(streams[0], streams[1])
        return
    exe, port = sys.argv[1], sys.argv[2]
    params = StdioServerParameters(
        command=exe,
        args=["mcp", "--port", port, "--approval-wait", "60", *sys.argv[3:]],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write):
        await session_calls(read, write)


asyncio.run(main())
