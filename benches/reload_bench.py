#!/usr/bin/env python3
"""Edit-to-live latency: from the moment a content file is written until dossier serves the
new version (its health revision changes; the new body is then checked), polled every 2 ms.
Each edit changes a division, which every page shows, so every page is rendered again: the
slow path of an incremental reload (benches/scale_bench.py measures the one-page edit).
Runs 50 edits on the sample content and on a generated tree of 10,000 pages, and prints
p50/p99 for each.

Usage: python3 benches/reload_bench.py [--edits N] [--pages N]
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOSSIER = os.path.join(ROOT, "target", "release", "dossier")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_content  # noqa: E402

DIVISION = os.path.join("divisions", "field-sensors.json")


def start(content, state):
    env = dict(os.environ, DOSSIER_LOG="warn")
    process = subprocess.Popen(
        [DOSSIER, "serve", "--addr", "127.0.0.1:0", "--content", content, "--state", state],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    line = process.stdout.readline().strip()
    host, port = line.rsplit("/", 1)[-1].split(":")
    return process, host, int(port)


def revision(connection):
    connection.request("GET", "/api/health")
    response = connection.getresponse()
    return json.loads(response.read())["content"]["revision"]


def live_after(connection, before, started, limit_s, what):
    """Milliseconds from `started` until the health revision is no longer `before`. The
    revision changes in the same atomic swap as every body."""
    while revision(connection) == before:
        if time.perf_counter() > started + limit_s:
            raise SystemExit(f"{what} never went live")
        # A tight loop would take a core from the server it measures.
        time.sleep(0.002)
    return (time.perf_counter() - started) * 1000


def division_text(connection):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "get_division", "arguments": {"division_id": "field-sensors"}}})
    connection.request("POST", "/mcp", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.read()


def measure(label, content, edits):
    state = tempfile.mkdtemp(prefix="dossier-bench-state-")
    process, host, port = start(content, state)
    connection = http.client.HTTPConnection(host, port)
    path = os.path.join(content, DIVISION)
    division = json.load(open(path))
    latencies = []
    try:
        for edit in range(edits):
            marker = f"edit-{edit}-{time.time_ns()}"
            division["description"] = f"Field Sensors, {marker}."
            text = json.dumps(division, indent=2).encode()
            before = revision(connection)
            started = time.perf_counter()
            with open(path, "wb") as f:
                f.write(text)
            latencies.append(live_after(connection, before, started, 30, f"{label}: edit {edit}"))
            if marker.encode() not in division_text(connection):
                raise SystemExit(f"{label}: edit {edit}: the new revision does not serve the edit")
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(state, ignore_errors=True)
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))]
    print(f"{label:28} edits {edits:3}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  max {latencies[-1]:7.1f} ms", flush=True)
    return p50, p99


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--pages", type=int, default=10_000)
    args = parser.parse_args()
    if not os.path.exists(DOSSIER):
        raise SystemExit("build dossier first: cargo build --release")
    work = tempfile.mkdtemp(prefix="dossier-reload-")
    try:
        sample = os.path.join(work, "sample")
        shutil.copytree(os.path.join(ROOT, "content"), sample)
        measure("sample content", sample, args.edits)
        big = os.path.join(work, "big")
        gen_content.generate(big, args.pages)
        measure(f"{args.pages} generated pages", big, args.edits)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
