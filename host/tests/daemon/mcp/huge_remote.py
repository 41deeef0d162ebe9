"""A hostile remote MCP server (the standard library only). Usage: huge_remote.py PORT MODE.
`huge`: every POST is answered with an HTTP 200 JSON body of 320 MiB, written a MiB at a
time, that would be a JSON-RPC answer if it were ever read to its end. `future`: the
handshake is answered with protocol version 2026-07-28, under which rmcp's client keeps
every tool it is listed for as long as the connection lives."""

import http.server
import json
import sys

MIB = 1 << 20
PADDING = 320


class Huge(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if MODE == "future":
            return self.future(json.loads(body))
        head = b'{"jsonrpc":"2.0","id":0,"result":{},"pad":"'
        tail = b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(head) + PADDING * MIB + len(tail)))
        self.end_headers()
        chunk = b"x" * MIB
        try:
            self.wfile.write(head)
            for _ in range(PADDING):
                self.wfile.write(chunk)
            self.wfile.write(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def future(self, message):
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        result = {}
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": "2026-07-28",
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "future", "version": "1.0.0"},
            }
        elif message.get("method") == "tools/list":
            result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


MODE = sys.argv[2]
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Huge).serve_forever()
