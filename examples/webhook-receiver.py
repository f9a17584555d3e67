#!/usr/bin/env python3
"""A webhook receiver for trying the service on one machine (the README's walk-through).

Listens on 127.0.0.1:PORT, checks each delivery's Standard Webhooks signature
(https://www.standardwebhooks.com/: HMAC-SHA256 over "webhook-id.webhook-timestamp.body" with the
endpoint's secret, base64 after "whsec_"), prints one JSON line per delivery to stdout and answers
204; a delivery whose signature does not verify, or whose timestamp is more than five minutes
away, is answered 401 and printed with "verified": false.

Usage: python3 examples/webhook-receiver.py PORT SECRET
The server must be allowed to deliver to this machine: FILING_WEBHOOK_ALLOW_PRIVATE_TARGETS=true
(development only). In production use a Standard Webhooks library for your language.
Only the Python standard library is needed.
"""

import base64
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECS = 300


def verify(secrets, headers, body):
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    signatures = headers.get("webhook-signature", "")
    try:
        if abs(time.time() - int(timestamp)) > TOLERANCE_SECS:
            return False
    except ValueError:
        return False
    signed = f"{msg_id}.{timestamp}.".encode() + body
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix("whsec_"))
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        # The header lists "v1,<base64>" entries separated by spaces (two during a rotation).
        for entry in signatures.split():
            version, _, value = entry.partition(",")
            if version == "v1" and hmac.compare_digest(value, expected):
                return True
    return False


class Receiver(BaseHTTPRequestHandler):
    secrets = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        ok = verify(self.secrets, self.headers, body)
        try:
            event = json.loads(body)
        except ValueError:
            event = None
        line = {
            "verified": ok,
            "webhook_id": self.headers.get("webhook-id"),
            "type": event.get("type") if isinstance(event, dict) else None,
            "data": event.get("data") if isinstance(event, dict) else None,
        }
        print(json.dumps(line, ensure_ascii=False), flush=True)
        self.send_response(204 if ok else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: webhook-receiver.py PORT SECRET [SECRET...]")
    Receiver.secrets = sys.argv[2:]
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver)
    print(json.dumps({"listening": f"http://127.0.0.1:{sys.argv[1]}/"}), file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
