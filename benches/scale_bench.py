#!/usr/bin/env python3
"""How dossier scales with the size of the company: for generated trees of 1,000, 10,000,
50,000 and 100,000 pages (benches/gen_content.py), the time and peak memory of a clean
`dossier build`, the time
from `dossier serve` starting to its first 200, the edit-to-live latency of one page
(p50/p99), the server's resident memory once its compressed variants are made and after
the edits, its peak resident memory until the variants are made (the start holds every
finished body on the heap until they move to the spool), and the size of
`GET /api/company`.

Prints a Markdown table and appends it to benches/results/scale.md.

Usage: python3 benches/scale_bench.py [--sizes 1000,10000,50000,100000] [--edits N]
"""

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOSSIER = os.environ.get("DOSSIER_BIN") or os.path.join(ROOT, "target", "release", "dossier")
RESULTS = os.path.join(ROOT, "benches", "results")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_content  # noqa: E402
from reload_bench import live_after, revision  # noqa: E402


def timed_build(content, work, precompress):
    """Seconds, bytes written and peak RSS (KiB) of one clean build. The tree stays until the
    work directory goes: on ext4 without a journal, creating files right after deleting
    hundreds of thousands costs several times more (the allocator skips inodes freed within
    the last minutes), which a measurement of a clean build must not include."""
    out = os.path.join(work, "build-pre" if precompress else "build")
    command = [DOSSIER, "build", "--content", content, "--out", out, "--state", os.path.join(work, "state"),
               "--base-url", "https://info.example.com"]
    if precompress:
        command.append("--precompress")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {process.returncode})")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(out) for f in files)
    return elapsed, size, usage.ru_maxrss


def rss_kib(pid, field="VmRSS"):
    """The process's resident memory now (VmRSS), or its peak so far (VmHWM), in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def get(connection, path, headers=None):
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    return response, response.read()


def serve_and_measure(content, work, edits):
    state = os.path.join(work, "serve-state")
    started = time.perf_counter()
    process = subprocess.Popen(
        [DOSSIER, "serve", "--addr", "127.0.0.1:0", "--content", content, "--state", state],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, DOSSIER_LOG="info"),
    )
    compressed = threading.Event()

    def watch_log():
        # The server says when the background compression of a version is done.
        for line in process.stderr:
            if "compressed variants ready" in line:
                compressed.set()

    threading.Thread(target=watch_log, daemon=True).start()
    try:
        host, port = process.stdout.readline().strip().rsplit("/", 1)[-1].split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        while True:
            try:
                response, _ = get(connection, "/api/health")
                if response.status == 200:
                    break
            except OSError:
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
                time.sleep(0.005)
        start_s = time.perf_counter() - started
        _, company = get(connection, "/api/company")
        # Memory once the background compression has finished, and edits on an idle server.
        if not compressed.wait(timeout=600):
            raise SystemExit("the server never finished compressing")
        time.sleep(1)
        rss = rss_kib(process.pid)
        peak_rss = rss_kib(process.pid, "VmHWM")
        # The server closed the idle connection meanwhile.
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        latencies = edit_latencies(connection, content, edits)
        # And after the edits, once the last one's background work (its variants, moving its
        # page text to the spool: milliseconds) is done.
        time.sleep(2)
        rss_edited = rss_kib(process.pid)
        return start_s, rss, peak_rss, rss_edited, len(company), latencies
    finally:
        process.terminate()
        process.wait(timeout=30)


def edit_latencies(connection, content, edits):
    """Edits one generated page `edits` times; each time, how long until it is served."""
    path = os.path.join(content, "pages", "generated-00007.md")
    with open(path) as f:
        original = f.read()
    latencies = []
    for edit in range(edits):
        marker = f"edit-{edit}-{time.time_ns()}"
        before = revision(connection)
        started = time.perf_counter()
        with open(path, "w") as f:
            f.write(original.replace("# Station report 7", f"# Station report 7 {marker}"))
        latencies.append(live_after(connection, before, started, 60, f"edit {edit}"))
        _, page = get(connection, "/generated-00007.md")
        if marker.encode() not in page:
            raise SystemExit(f"edit {edit}: the new revision does not serve the edit")
    latencies.sort()
    return latencies


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    parser.add_argument("--edits", type=int, default=30)
    args = parser.parse_args()
    if not os.path.exists(DOSSIER):
        raise SystemExit("build dossier first: cargo build --release")
    sizes = [int(size) for size in args.sizes.split(",")]
    machine = f"{os.cpu_count()} cores, {os.uname().sysname} {os.uname().release}"
    rows = []
    # Every size's trees stay until the end, for the reason timed_build gives.
    works = []
    try:
        for pages in sizes:
            work = tempfile.mkdtemp(prefix="dossier-scale-")
            works.append(work)
            content = gen_content.generate(os.path.join(work, "content"), pages)
            build_s, build_bytes, build_rss = timed_build(content, work, precompress=False)
            pre_s, pre_bytes, _ = timed_build(content, work, precompress=True)
            # The builds leave gigabytes of dirty pages; their writeback is not the server's
            # start, so it happens before the clock runs.
            os.sync()
            start_s, rss, peak_rss, rss_edited, company_bytes, latencies = serve_and_measure(
                content, work, args.edits)
            p50 = statistics.median(latencies)
            p99 = latencies[min(len(latencies) - 1, int(round(0.99 * (len(latencies) - 1))))]
            row = (f"| {pages:,} | {build_s:.2f} s ({build_bytes / 1e6:.0f} MB) | {build_rss / 1024:.0f} MiB"
                   f" | {pre_s:.2f} s ({pre_bytes / 1e6:.0f} MB)"
                   f" | {start_s:.2f} s | {p50:.0f} / {p99:.0f} ms | {rss / 1024:.0f} MiB | {peak_rss / 1024:.0f} MiB"
                   f" | {rss_edited / 1024:.0f} MiB | {company_bytes / 1024:.1f} KiB |")
            rows.append(row)
            print(row, flush=True)
    finally:
        for work in works:
            shutil.rmtree(work, ignore_errors=True)
    # Appended, never rewritten: the file is the history of these runs, each section saying
    # what changed before it (rewriting it lost earlier sessions' sections twice).
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    lines = ["", f"## {when} UTC: `just bench-scale --sizes {args.sizes}`", "",
             f"Measured on {machine}; {args.edits} edits of one page per size.", "",
             "| pages | `dossier build` | its peak RSS | `build --precompress` | serve: start to first 200 | one-page edit to live, p50 / p99 | RSS when compressed | serve's peak RSS until compressed | RSS after the edits | `GET /api/company` |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "scale.md"), "a") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
