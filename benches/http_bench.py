#!/usr/bin/env python3
"""Load benchmark: dossier against nginx serving the same build/, in the same run.

Both servers get the same bytes: `dossier build` writes build/, dossier serves it with
`serve --from`, and nginx serves the files of that directory with the same content types,
cache, CORS and Vary headers (nginx computes its own ETag; the 304 case uses each server's
own tag). wrk hits both alternately, several rounds each, and the ratio dossier/nginx is
printed per case. Numbers are only comparable within one run on one machine.

HTTP/2 is measured with h2load (nghttp2-client): dossier speaks h2c on its port, nginx on a
second `listen ... http2` port with the same locations.

Every case's medians go to benches/results/http.json and http.md (the table in docs/testing.md),
and, when matplotlib is importable (`just bench` installs it into target/venv), a chart of
requests/s and p99 per case to benches/results/http.png.

Usage: python3 benches/http_bench.py [--rounds N] [--duration SECONDS] [--connections N]
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOSSIER = os.environ.get("DOSSIER_BIN") or os.path.join(ROOT, "target", "release", "dossier")


RESULTS = os.path.join(ROOT, "benches", "results")
# (case, server, median req/s, median p50 µs, median p99 µs), in the order measured.
ROWS = []
# (case, what the ratio compares, ratio, goal)
RATIOS = []


def ensure_tools():
    packages = {"nginx": "nginx-light", "wrk": "wrk", "h2load": "nghttp2-client", "openssl": "openssl"}
    missing = [tool for tool in packages if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}")]
    if missing:
        print(f"installing {' '.join(missing)} with apt-get", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                        *(packages[tool] for tool in missing)], check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, deadline=20):
    end = time.time() + deadline
    # The TLS servers use a certificate made for the run, which nothing verifies.
    context = ssl._create_unverified_context() if url.startswith("https:") else None
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=1, context=context):
                return
        except Exception:
            time.sleep(0.05)
    raise SystemExit(f"{url} did not come up")


def common_headers(build_dir):
    """The headers of the `/*` rule in build/_headers: what dossier adds to every response."""
    headers, inside = [], False
    with open(os.path.join(build_dir, "_headers")) as f:
        for line in f:
            if not line.startswith(" "):
                inside = line.strip() == "/*"
                continue
            name, value = line.strip().split(": ", 1)
            if inside and name != "Cache-Control":
                headers.append((name, value))
    return headers


def nginx_config(build_dir, manifest, port, h2_port, log_port, tls_port, workdir):
    """A tuned nginx config (as in shared/reference/perf.md) serving build/ like dossier."""
    locations = []
    common = common_headers(build_dir)
    for path, entry in sorted(manifest["artifacts"].items()):
        headers = [("Cache-Control", entry["cache_control"])] + common
        headers += [(name, value) for name, value in entry.get("headers", {}).items()]
        add = "\n".join(
            '            add_header {} "{}" always;'.format(name, value.replace('"', '\\"'))
            for name, value in headers
        )
        content_type = entry["content_type"].replace('"', '\\"')
        locations.append(f"""
        location = {path} {{
            types {{ }}
            default_type "{content_type}";
{add}
            try_files /{entry['file']} =404;
        }}""")
    config = f"""
worker_processes 2;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    gzip_static on;
    gzip_vary on;
    client_body_temp_path {workdir}/body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
    server {{
        listen 127.0.0.1:{port} reuseport;
        root {build_dir};
{''.join(locations)}
    }}
    server {{
        listen 127.0.0.1:{log_port} reuseport;
        access_log {workdir}/nginx-access.log;
        root {build_dir};
{''.join(locations)}
    }}
    server {{
        listen 127.0.0.1:{tls_port} ssl http2 reuseport;
        ssl_certificate {workdir}/cert.pem;
        ssl_certificate_key {workdir}/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:SSL:10m;
        access_log {workdir}/nginx-tls-access.log;
        root {build_dir};
{''.join(locations)}
    }}
    server {{
        listen 127.0.0.1:{h2_port} http2 reuseport;
        http2_max_concurrent_streams 100;
        root {build_dir};
{''.join(locations)}
    }}
}}
"""
    path = os.path.join(workdir, "nginx.conf")
    with open(path, "w") as f:
        f.write(config)
    return path


def to_micros(value):
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()
    return float(number) * {"us": 1, "ms": 1000, "s": 1_000_000}[unit]


def run_wrk(url, headers, duration, connections, script=None):
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    if script:
        command += ["-s", script]
    output = subprocess.run(command + [url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = to_micros(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = to_micros(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"{url}: {errors.group(1)} error responses\n{output}")
    return rps, p50, p99


def run_h2load(url, duration, connections, workdir):
    """HTTP/2 (h2c by prior knowledge): `connections` connections, 10 streams each."""
    log = os.path.join(workdir, "h2load.log")
    command = ["h2load", "-t2", f"-c{connections}", "-m10", f"-D{duration}", "--log-file", log, url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output).group(1))
    done = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                     output)
    if done is None or done.group(2) != "0" or done.group(3) != "0":
        raise SystemExit(f"{url}: h2load saw failures\n{output}")
    with open(log) as f:
        times = sorted(int(line.split("\t")[2]) for line in f if line.strip())
    os.remove(log)
    return rps, times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]


def ratio(case, what, value, goal=None):
    RATIOS.append((case, what, value, goal))
    target = f" (goal >= {goal:.2f})" if goal is not None else ""
    print(f"{case:32} ratio {what}: {value:.2f}x{target}", flush=True)


def save_results(args):
    """The medians as JSON and a Markdown table, and a chart when matplotlib is there."""
    os.makedirs(RESULTS, exist_ok=True)
    machine = f"{os.cpu_count()} cores, {os.uname().sysname} {os.uname().release}"
    setup = (f"wrk -t2 -c{args.connections} -d{args.duration}s (HTTP/2: h2load -t2 -c{args.connections} -m10), "
             f"{args.rounds} alternating rounds per server, medians")
    with open(os.path.join(RESULTS, "http.json"), "w") as f:
        json.dump({"machine": machine, "setup": setup,
                   "rows": [dict(zip(("case", "server", "rps", "p50_us", "p99_us"), row)) for row in ROWS],
                   "ratios": [dict(zip(("case", "compares", "ratio", "goal"), r)) for r in RATIOS]}, f, indent=2)
    lines = [f"Measured by `just bench` on {machine}; {setup}.", "",
             "| case | server | req/s | p50 µs | p99 µs |", "|---|---|---:|---:|---:|"]
    lines += [f"| {case} | {server} | {rps:,.0f} | {p50:,.0f} | {p99:,.0f} |" for case, server, rps, p50, p99 in ROWS]
    lines += ["", "| case | ratio | value | goal |", "|---|---|---:|---:|"]
    lines += [f"| {case} | {what} | {value:.2f}x | {'' if goal is None else f'>= {goal:.2f}x'} |"
              for case, what, value, goal in RATIOS]
    with open(os.path.join(RESULTS, "http.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (just bench installs it)", flush=True)
        return
    labels = [f"{case}\n{server}" for case, server, *_ in ROWS]
    colours = ["#1f5fa8" if server == "dossier" else "#9aa5b1" for _, server, *_ in ROWS]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 0.42 * len(ROWS) + 1.5), sharey=True)
    positions = range(len(ROWS))
    left.barh(positions, [row[2] for row in ROWS], color=colours)
    left.set_title("requests/s (more is better)")
    right.barh(positions, [row[4] / 1000 for row in ROWS], color=colours)
    right.set_title("p99 latency, ms (less is better)")
    left.set_yticks(list(positions), labels, fontsize=8)
    left.invert_yaxis()
    for axis in (left, right):
        axis.grid(axis="x", alpha=0.3)
    figure.suptitle(f"dossier (blue) vs. nginx and itself (grey): {machine}", fontsize=10)
    figure.tight_layout()
    figure.savefig(os.path.join(RESULTS, "http.png"), dpi=110)
    print(f"chart: {os.path.join(RESULTS, 'http.png')}", flush=True)


def report(case, results):
    """Prints each server's median requests/s, p50 and p99 over its rounds; returns the
    median requests/s by name, for the ratio."""
    medians = {}
    for name, runs in results.items():
        medians[name] = statistics.median(r[0] for r in runs)
        p50 = statistics.median(r[1] for r in runs)
        p99 = statistics.median(r[2] for r in runs)
        ROWS.append((case, name, medians[name], p50, p99))
        print(f"{case:32} {name[:8]:8} {medians[name]:10.0f} {p50:9.0f} {p99:9.0f}   rounds: "
              + ", ".join(f"{r[0]:.0f}" for r in runs), flush=True)
    return medians


def fetch(url, headers):
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request) as response:
        return response.read(), response.headers


def check_same_responses(servers):
    """Refuse to compare servers that do not send the same bytes and content headers."""
    for headers in ({}, {"Accept-Encoding": "gzip"}):
        answers = {name: fetch(url + "/api/company", headers) for name, url in servers.items()}
        (a_body, a_headers), (b_body, b_headers) = answers.values()
        if a_body != b_body:
            raise SystemExit(f"servers send different bodies for {headers}")
        for name in ("Content-Type", "Content-Encoding", "Cache-Control", "Vary", "Access-Control-Allow-Origin",
                     "Content-Security-Policy"):
            if a_headers.get(name) != b_headers.get(name):
                raise SystemExit(f"servers differ in {name}: {a_headers.get(name)!r} vs {b_headers.get(name)!r}")


def access_token(base):
    request = urllib.request.Request(
        base + "/oauth2/token", data=b"grant_type=client_credentials",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)["access_token"]


class RevokeFlood:
    """One client revoking its own token over and over on `connections` keep-alive
    connections, at up to `rate` requests per second in total, in a thread of its own.
    (The rate is capped so the flood measures blocking, not the two cores being shared
    with the flooding client itself.)"""

    def __init__(self, base, token, connections, rate):
        import threading
        self.host, self.port = base.removeprefix("http://").split(":")
        self.request = (
            f"POST /oauth2/revoke HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len('token=') + len(token)}\r\n\r\ntoken={token}"
        ).encode()
        self.connections, self.rate = connections, rate
        self.sent = self.failed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.started = time.time()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.elapsed = time.time() - self.started

    def run(self):
        import asyncio
        asyncio.run(self.flood())

    async def flood(self):
        import asyncio
        interval = self.connections / self.rate

        async def one():
            reader, writer = await asyncio.open_connection(self.host, int(self.port))
            next_at = time.monotonic()
            while not self.stop.is_set():
                writer.write(self.request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
                await reader.readexactly(length)
                self.sent += 1
                if not head.startswith(b"HTTP/1.1 200"):
                    self.failed += 1
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            writer.close()

        await asyncio.gather(*(one() for _ in range(self.connections)))


def etag_of(url):
    with urllib.request.urlopen(url) as response:
        return response.headers["ETag"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--flood-rate", type=int, default=2000,
                        help="revocations per second in the revoke-flood case")
    parser.add_argument("--only", help="run only the cases whose name contains this text")
    args = parser.parse_args()

    ensure_tools()
    if not os.path.exists(DOSSIER):
        raise SystemExit("build dossier first: cargo build --release")
    workdir = tempfile.mkdtemp(prefix="dossier-bench-")
    os.chmod(workdir, 0o755)  # nginx workers run as an unprivileged user
    dossier_port, nginx_port, nginx_h2_port = free_port(), free_port(), free_port()
    logging_port, nginx_logging_port = free_port(), free_port()
    tls_port, nginx_tls_port = free_port(), free_port()
    base = f"http://127.0.0.1:{dossier_port}"
    build_dir = os.path.join(workdir, "build")
    state = os.path.join(workdir, "state")
    subprocess.run([DOSSIER, "build", "--content", os.path.join(ROOT, "content"), "--out", build_dir,
                    "--base-url", base, "--state", state, "--precompress"], check=True, stderr=subprocess.DEVNULL)
    with open(os.path.join(build_dir, "manifest.json")) as f:
        manifest = json.load(f)
    # A second instance with its default access log needs a state directory of its own (the
    # embedded store is one process's), holding the same keys as the build's.
    logging_state = os.path.join(workdir, "state-logging")
    shutil.copytree(state, logging_state)
    tls_state = os.path.join(workdir, "state-tls")
    shutil.copytree(state, tls_state)
    # A P-256 certificate for 127.0.0.1, for both TLS servers.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", os.path.join(workdir, "key.pem"), "-out", os.path.join(workdir, "cert.pem"),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)

    env = dict(os.environ, DOSSIER_LOG="warn")
    dossier = subprocess.Popen([DOSSIER, "serve", "--from", build_dir, "--addr", f"127.0.0.1:{dossier_port}",
                                "--state", state,
                                # wrk is one address with many connections
                                "--max-connections-per-client", "100000"],
                               stdout=subprocess.DEVNULL, env=env)
    nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
    # Production defaults: dossier's access log (one text line per request, on stderr, sent
    # to a file here) against nginx's access_log to a file.
    logging_output = open(os.path.join(workdir, "dossier-access.log"), "wb")
    logging = subprocess.Popen([DOSSIER, "serve", "--from", build_dir, "--addr", f"127.0.0.1:{logging_port}",
                                "--state", logging_state, "--max-connections-per-client", "100000"],
                               stdout=subprocess.DEVNULL, stderr=logging_output,
                               env={k: v for k, v in os.environ.items() if k != "DOSSIER_LOG"})
    # The same over TLS (rustls against nginx's OpenSSL), access logs on both sides.
    tls_output = open(os.path.join(workdir, "dossier-tls-access.log"), "wb")
    tls = subprocess.Popen([DOSSIER, "serve", "--from", build_dir, "--addr", f"127.0.0.1:{tls_port}",
                            "--base-url", base, "--state", tls_state,
                            "--tls-cert", os.path.join(workdir, "cert.pem"),
                            "--tls-key", os.path.join(workdir, "key.pem"),
                            "--max-connections-per-client", "100000"],
                           stdout=subprocess.DEVNULL, stderr=tls_output,
                           env={k: v for k, v in os.environ.items() if k != "DOSSIER_LOG"})
    nginx = subprocess.Popen([nginx_bin, "-c", nginx_config(build_dir, manifest, nginx_port, nginx_h2_port,
                                                            nginx_logging_port, nginx_tls_port, workdir)])
    servers = {"dossier": f"http://127.0.0.1:{dossier_port}", "nginx": f"http://127.0.0.1:{nginx_port}"}
    logging_servers = {"dossier": f"http://127.0.0.1:{logging_port}",
                       "nginx": f"http://127.0.0.1:{nginx_logging_port}"}
    tls_servers = {"dossier": f"https://127.0.0.1:{tls_port}", "nginx": f"https://127.0.0.1:{nginx_tls_port}"}
    try:
        for url in list(servers.values()) + list(logging_servers.values()) + list(tls_servers.values()):
            wait_for(url + "/api/company")
        check_same_responses(servers)
        token = access_token(servers["dossier"])
        cases = {
            "GET /api/company (identity)": lambda server: [],
            # nginx ignores the header; dossier decrypts and checks the token on every request.
            "GET /api/company (bearer)": lambda server: [f"Authorization: Bearer {token}"],
            "GET /api/company (gzip)": lambda server: ["Accept-Encoding: gzip"],
            "GET /api/company (304)": lambda server: [f"If-None-Match: {etag_of(server + '/api/company')}"],
        }
        print(f"wrk -t2 -c{args.connections} -d{args.duration}s, {args.rounds} alternating rounds per server; "
              f"body {len(open(os.path.join(build_dir, 'api/company'), 'rb').read())} bytes", flush=True)
        print(f"{'case':32} {'server':8} {'req/s':>10} {'p50 µs':>9} {'p99 µs':>9}")
        goals = {"GET /api/company (identity)": 1.05, "GET /api/company (gzip)": 1.05,
                 "GET /api/company (304)": 1.0}
        by_case = {}
        for case, headers_for in cases.items():
            if args.only and args.only not in case:
                continue
            results = {name: [] for name in servers}
            for _ in range(args.rounds):
                for name, server in servers.items():
                    results[name].append(run_wrk(server + "/api/company", headers_for(server),
                                                 args.duration, args.connections))
            by_case[case] = medians = report(case, results)
            ratio(case, "dossier/nginx", medians["dossier"] / medians["nginx"], goals.get(case))
        case = "GET /api/company (access logs on)"
        if not (args.only and args.only not in case):
            results = {name: [] for name in logging_servers}
            for _ in range(args.rounds):
                for name, server in logging_servers.items():
                    results[name].append(run_wrk(server + "/api/company", [], args.duration, args.connections))
            by_case[case] = medians = report(case, results)
            ratio(case, "dossier/nginx", medians["dossier"] / medians["nginx"], 1.05)
        def against_nginx(case, servers_of_case, measure, goal):
            """`measure(url)` of each server in alternating rounds, reported with its ratio."""
            if args.only and args.only not in case:
                return
            results = {name: [] for name in servers_of_case}
            for _ in range(args.rounds):
                for name, server in servers_of_case.items():
                    results[name].append(measure(server + "/api/company"))
            medians = report(case, results)
            ratio(case, "dossier/nginx", medians["dossier"] / medians["nginx"], goal)

        def h2load(url):
            return run_h2load(url, args.duration, args.connections, workdir)

        against_nginx("GET /api/company (TLS, logs on)", tls_servers,
                      lambda url: run_wrk(url, [], args.duration, args.connections), 1.05)
        against_nginx("GET /api/company (TLS, HTTP/2, logs on)", tls_servers, h2load, 1.05)
        if "GET /api/company (identity)" in by_case and "GET /api/company (bearer)" in by_case:
            ratio("GET /api/company (bearer)", "bearer/anonymous",
                  by_case["GET /api/company (bearer)"]["dossier"] / by_case["GET /api/company (identity)"]["dossier"],
                  0.90)

        # The same GET over HTTP/2 without TLS: dossier's h2c against nginx's `http2` port.
        against_nginx("GET /api/company (HTTP/2)",
                      {"dossier": servers["dossier"], "nginx": f"http://127.0.0.1:{nginx_h2_port}"},
                      h2load, 1.0)

        # MCP `tools/call get_company` answers the same record as GET /api/company, from a
        # result cached per revision inside a JSON-RPC envelope: same run, alternating.
        case = "POST /mcp get_company"
        if not (args.only and args.only not in case):
            script = os.path.join(workdir, "mcp.lua")
            with open(script, "w") as f:
                f.write('wrk.method = "POST"\n'
                        'wrk.headers["Content-Type"] = "application/json"\n'
                        'wrk.headers["Accept"] = "application/json, text/event-stream"\n'
                        'wrk.body = \'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                        '"params":{"name":"get_company","arguments":{}}}\'\n')
            results = {"get": [], "mcp": []}
            for _ in range(args.rounds):
                results["get"].append(
                    run_wrk(servers["dossier"] + "/api/company", [], args.duration, args.connections))
                results["mcp"].append(
                    run_wrk(servers["dossier"] + "/mcp", [], args.duration, args.connections, script))
            medians = report(case, results)
            ratio(case, "mcp/get", medians["mcp"] / medians["get"], 0.80)

        # Bearer GETs on an instance whose revocations live in Redis, against the embedded
        # store: the token check must stay in memory either way.
        if args.only and args.only not in "GET /api/company (bearer, store)":
            pass
        elif shutil.which("redis-server"):
            redis_port, shared_port = free_port(), free_port()
            redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port),
                                      "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
            shared = None
            try:
                time.sleep(0.3)
                shared = subprocess.Popen(
                    [DOSSIER, "serve", "--from", build_dir, "--addr", f"127.0.0.1:{shared_port}",
                     "--state", state, "--store", f"redis://127.0.0.1:{redis_port}/0",
                     "--max-connections-per-client", "100000"],
                    stdout=subprocess.DEVNULL, env=env)
                shared_url = f"http://127.0.0.1:{shared_port}"
                wait_for(shared_url + "/api/company")
                targets = {"embedded": (servers["dossier"], token),
                           "redis": (shared_url, access_token(shared_url))}
                case = "GET /api/company (bearer, store)"
                results = {name: [] for name in targets}
                for _ in range(args.rounds):
                    for name, (url, bearer) in targets.items():
                        results[name].append(run_wrk(url + "/api/company", [f"Authorization: Bearer {bearer}"],
                                                     args.duration, args.connections))
                medians = report(case, results)
                ratio(case, "redis/embedded", medians["redis"] / medians["embedded"], 0.90)
            finally:
                if shared:
                    shared.send_signal(signal.SIGTERM)
                    shared.wait(timeout=15)
                redis.terminate()
                redis.wait(timeout=15)
        else:
            print("redis-server not installed: skipping the shared-store case", flush=True)

        # One anonymous client floods /oauth2/revoke with its own token on 32 connections;
        # GET throughput must not depend on the disk (only the first revocation writes).
        # Rounds alternate without and with the flood, so drift affects both alike.
        flood_token = access_token(servers["dossier"])
        case = "GET /api/company (revoke flood)"
        if args.only and args.only not in case:
            save_results(args)
            return
        alone_runs, flood_runs, flood_rates = [], [], []
        for _ in range(args.rounds):
            alone_runs.append(run_wrk(servers["dossier"] + "/api/company", [], args.duration,
                                      args.connections))
            with RevokeFlood(servers["dossier"], flood_token, 32, args.flood_rate) as flood:
                flood_runs.append(run_wrk(servers["dossier"] + "/api/company", [], args.duration,
                                          args.connections))
            if flood.failed:
                raise SystemExit(f"{flood.failed} revocations failed")
            flood_rates.append(flood.sent / flood.elapsed)
        medians = report(case, {"alone": alone_runs, "flood": flood_runs})
        print(f"{case:32} flood {statistics.median(flood_rates):.0f} revocations/s", flush=True)
        ratio(case, "flood/alone", medians["flood"] / medians["alone"], 0.80)
        save_results(args)
    finally:
        dossier.send_signal(signal.SIGTERM)
        logging.send_signal(signal.SIGTERM)
        tls.send_signal(signal.SIGTERM)
        nginx.send_signal(signal.SIGQUIT)
        dossier.wait(timeout=15)
        logging.wait(timeout=15)
        logging_output.close()
        tls.wait(timeout=15)
        tls_output.close()
        nginx.wait(timeout=15)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
