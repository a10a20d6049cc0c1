"""A static host for tests, as Netlify serves a folder: files at their URL paths (`/about`
from `about.html`, a directory from its `index.html`), the header rules of `_headers`, and
the rewrites and proxy rules (`200`, `200!`) of `_redirects`.

It is what `dossier doctor` is tested against behind a "CDN": the same build/ and the same
rules a real host reads, on a loopback port, with the dynamic core behind it.

    python3 static_host.py DIR PORT     # prints "listening on http://127.0.0.1:PORT"
"""

import http.client
import http.server
import mimetypes
import os
import sys
import urllib.parse

ROOT = os.path.abspath(sys.argv[1])
PORT = int(sys.argv[2])


def read_rules(name):
    try:
        with open(os.path.join(ROOT, name), encoding="utf-8") as file:
            return file.read().splitlines()
    except FileNotFoundError:
        return []


def parse_headers():
    """`_headers`: a path pattern on its own line, then indented `Name: value` lines."""
    rules, current = [], None
    for line in read_rules("_headers"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            name, _, value = line.strip().partition(":")
            current[1].append((name.strip(), value.strip()))
        else:
            current = (line.strip(), [])
            rules.append(current)
    return rules


def parse_redirects():
    rules = []
    for line in read_rules("_redirects"):
        fields = line.split()
        if len(fields) >= 3 and not line.startswith("#"):
            rules.append((fields[0], fields[1], fields[2]))
    return rules


HEADERS = parse_headers()
REDIRECTS = parse_redirects()


def matches(pattern, path):
    """Netlify's patterns: exact, or with `*` matching the rest (its match is the splat)."""
    if "*" not in pattern:
        return (pattern == path, "")
    prefix, _, suffix = pattern.partition("*")
    if path.startswith(prefix) and path.endswith(suffix) and len(path) >= len(prefix) + len(suffix):
        return (True, path[len(prefix):len(path) - len(suffix)])
    return (False, "")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def route(self):
        path = urllib.parse.urlsplit(self.path).path
        for source, target, status in REDIRECTS:
            hit, splat = matches(source, path)
            if hit:
                target = target.replace(":splat", splat)
                if target.startswith("http"):
                    return self.proxy(target)
                if status.startswith("200"):
                    return self.file(target, headers_for=path)
        return self.file(path, headers_for=path)

    def proxy(self, target):
        query = urllib.parse.urlsplit(self.path).query
        url = urllib.parse.urlsplit(target + ("?" + query if query else ""))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {name: value for name, value in self.headers.items() if name.lower() not in ("host", "connection")}
        headers["X-Forwarded-For"] = self.client_address[0]
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        connection.request(self.command, url.path + ("?" + url.query if url.query else ""), body, headers)
        answer = connection.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def file(self, path, headers_for):
        relative = urllib.parse.unquote(path).lstrip("/")
        candidates = [relative, relative + ".html", os.path.join(relative, "index.html")]
        for candidate in candidates:
            full = os.path.normpath(os.path.join(ROOT, candidate))
            if full.startswith(ROOT) and os.path.isfile(full):
                break
        else:
            return self.send_plain(404, b"Not Found")
        if self.command not in ("GET", "HEAD"):
            return self.send_plain(405, b"Method Not Allowed")
        with open(full, "rb") as file:
            data = file.read()
        headers = {"Content-Type": mimetypes.guess_type(full)[0] or "application/octet-stream"}
        for pattern, rules in HEADERS:
            if matches(pattern, headers_for)[0]:
                for name, value in rules:
                    headers[name] = value
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data)

    def send_plain(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_OPTIONS = route


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
