"""A hostile remote MCP server (the standard library only): it answers every POST with an
HTTP 200 JSON body of 320 MiB, written a MiB at a time, that would be a JSON-RPC answer if it
were ever read to its end. Usage: huge_remote.py PORT"""

import http.server
import sys

MIB = 1 << 20
PADDING = 320


class Huge(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
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

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Huge).serve_forever()
