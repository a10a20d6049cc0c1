"""The commands the documentation gives, run as written against a real server: the agent
flow of docs/agents.md (curl and jq, step by step), its MCP example, and the README's
"own company" commands (init, check, build; serve is tested in tests/new_site.rs). A change
that breaks a documented command fails here, not in a reader's terminal."""

import json
import os
import re
import shlex
import subprocess

from conftest import ROOT, dossier_binary, running_server


def shell_blocks(document, heading):
    """The ```sh blocks of the section under `heading` (up to the next heading of its level)."""
    with open(os.path.join(ROOT, document), encoding="utf-8") as file:
        text = file.read()
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1:]
    end = re.search(rf"^{level} ", rest, re.MULTILINE)
    section = rest[: end.start()] if end else rest
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def run(script, base, cwd=None):
    script = script.replace("http://127.0.0.1:8080", base)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_the_agent_flow_in_docs_agents_md_runs_as_written():
    (script,) = shell_blocks("docs/agents.md", "## The agent flow, from the command line")
    with running_server() as server:
        result = run(script, server.base)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    # The last step: the revoked token is refused.
    assert lines[-1] == "401", result.stdout
    # The API answered with the token (step 4 prints the start of the company document).
    assert any(line.startswith('{"company":') for line in lines), result.stdout
    # Step 1 printed the agent_auth block of the metadata.
    assert '"register_uri"' in result.stdout


def test_the_mcp_example_in_docs_agents_md_answers():
    blocks = [block for block in shell_blocks("docs/agents.md", "## MCP") if "/mcp" in block]
    assert blocks, "the MCP section has a curl example"
    with running_server() as server:
        result = run(blocks[0], server.base)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["result"]["isError"] is False
    assert "calibration" in json.dumps(answer["result"]).lower()


def test_the_readme_own_company_commands_run(tmp_path):
    (block,) = shell_blocks("README.md", "## Your own company in five commands")
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands[0].startswith("dossier init ")
    binary = dossier_binary()
    cwd = str(tmp_path)
    for command in commands:
        if command.startswith("cd "):
            cwd = os.path.join(cwd, command[3:])
            continue
        if command == "dossier serve":
            continue  # a server that runs until stopped: tests/new_site.rs starts it
        result = subprocess.run(
            [binary] + shlex.split(command)[1:],
            capture_output=True, text=True, timeout=120, cwd=cwd,
        )
        assert result.returncode == 0, f"{command}: {result.stdout}{result.stderr}"
    assert os.path.isfile(os.path.join(cwd, "build", "openapi.json"))
