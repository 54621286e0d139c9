#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for Grafana Pyroscope's HTTP ingest API, for sp-push's tests.

usage: receiver.py DIR [--port N] [--fail N] [--status CODE] [--delay S]
                   [--tenant ID] [--basic USER:PASSWORD] [--bearer TOKEN]

Serves POST /ingest on 127.0.0.1 and checks each request as Pyroscope's API
is documented (docs/FLEET.md): a name parameter APP{k=v,...}, from and until
in milliseconds (13 digits, from <= until), format=pprof, a numeric
sampleRate if any, a gzip body of Content-Length bytes.  A request that
breaks a rule gets 400 and a line in DIR/errors; one without the tenant
header or credentials asked for gets 401 and a line in DIR/denied; a good one is kept as DIR/N.pb.gz with its query in
DIR/requests (one line each, N from 1) and gets 200, unless --fail N asks
to answer the first N good requests with --status (500; 429 comes with
Retry-After: 1) instead, without keeping them.  --delay waits S seconds
before answering.  Prints "port N" once listening (--port 0: any).
"""
import argparse
import base64
import http.server
import os
import re
import sys
import threading
import time
import urllib.parse

NAME = re.compile(r"^[A-Za-z0-9_.\-/]+\{([A-Za-z0-9_.]+=[^,}=]*(,[A-Za-z0-9_.]+=[^,}=]*)*)?\}$")
MILLIS = re.compile(r"^[0-9]{13}$")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.kept = 0
        self.failed = 0


def problem(h, st):
    """What is wrong with the request, or None."""
    a = st.args
    url = urllib.parse.urlsplit(h.path)
    if url.path != "/ingest":
        return "path %r is not /ingest" % url.path
    q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
    for k, v in q.items():
        if len(v) != 1:
            return "parameter %s given %d times" % (k, len(v))
    q = {k: v[0] for k, v in q.items()}
    if not NAME.match(q.get("name", "")):
        return "bad name %r" % q.get("name")
    for k in ("from", "until"):
        if not MILLIS.match(q.get(k, "")):
            return "%s %r is not 13 digits of milliseconds" % (k, q.get(k))
    if int(q["from"]) > int(q["until"]):
        return "from %s after until %s" % (q["from"], q["until"])
    if q.get("format") != "pprof":
        return "format %r is not pprof" % q.get("format")
    if "sampleRate" in q and not q["sampleRate"].isdigit():
        return "sampleRate %r" % q["sampleRate"]
    return None


def unauthorized(h, st):
    """What is wrong with the tenant or the credentials, or None."""
    a = st.args
    if a.tenant and h.headers.get("X-Scope-OrgID") != a.tenant:
        return "X-Scope-OrgID %r" % h.headers.get("X-Scope-OrgID")
    auth = h.headers.get("Authorization", "")
    if a.basic and auth != "Basic " + base64.b64encode(a.basic.encode()).decode():
        return "Authorization %r" % auth
    if a.bearer and auth != "Bearer " + a.bearer:
        return "Authorization %r" % auth
    return None


def keep(st, name, line):
    """Append line to the file name of the receiver's folder."""
    with st.lock:
        with open(os.path.join(st.args.dir, name), "a") as f:
            f.write(line + "\n")


def handler(st):
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def answer(self, code, body=b"", extra=None):
            self.send_response(code)
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
            why = problem(self, st)
            if not why and (len(body) != n or body[:2] != b"\x1f\x8b"):
                why = "body of %d bytes is not gzip" % len(body)
            if st.args.delay:
                time.sleep(st.args.delay)
            denied = unauthorized(self, st)
            if denied:
                keep(st, "denied", denied)
                self.answer(401, b'{"code":"unauthenticated","message":"%s"}' % denied.encode())
                return
            if why:
                keep(st, "errors", why)
                self.answer(400, b'{"code":"invalid_argument","message":"%s"}' % why.encode())
                return
            with st.lock:
                if st.failed < st.args.fail:
                    st.failed += 1
                    extra = {"Retry-After": "1"} if st.args.status == 429 else None
                    self.answer(st.args.status, b'{"code":"unavailable","message":"try later"}', extra)
                    return
                st.kept += 1
                path = os.path.join(st.args.dir, "%d.pb.gz" % st.kept)
                with open(path + ".tmp", "wb") as f:
                    f.write(body)
                os.rename(path + ".tmp", path)
                with open(os.path.join(st.args.dir, "requests"), "a") as f:
                    f.write("%d %s\n" % (st.kept, urllib.parse.urlsplit(self.path).query))
            self.answer(200)

        def do_GET(self):
            self.answer(405)

    return H


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--fail", type=int, default=0)
    p.add_argument("--status", type=int, default=500)
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--tenant")
    p.add_argument("--basic")
    p.add_argument("--bearer")
    args = p.parse_args()
    st = State(args)
    # numbering goes on where an earlier receiver in DIR left off
    try:
        with open(os.path.join(args.dir, "requests")) as f:
            st.kept = sum(1 for _ in f)
    except FileNotFoundError:
        pass
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler(st))
    print("port %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
