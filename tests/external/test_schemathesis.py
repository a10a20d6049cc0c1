"""schemathesis 4 generates requests from /openapi.json and checks every answer against it:
no server errors, documented statuses, content types, headers and bodies, schema-valid
requests accepted and schema-violating ones refused. Operations refused by design are
excepted by name, with the reason, in schemathesis.toml next to this file.

The stateful phase is left out: it follows links between operations, and this API is
read-only with nothing to link (a resource created here is an anonymous registration that
the next call does not need)."""

import os
import shutil
import subprocess
import sys

from conftest import running_server

HERE = os.path.dirname(os.path.abspath(__file__))


def schemathesis_cli():
    # pip puts `st` beside the interpreter that installed it (a venv's bin/, pyenv's).
    beside = os.path.join(os.path.dirname(sys.executable), "st")
    return beside if os.path.exists(beside) else shutil.which("st") or "st"


def test_schemathesis_finds_no_failures():
    with running_server() as server:
        result = subprocess.run(
            [
                schemathesis_cli(), "--no-color", "--config-file", os.path.join(HERE, "schemathesis.toml"),
                "run", server.base + "/openapi.json", "--url", server.base,
                "--phases", "examples,coverage,fuzzing",
                "--max-examples", "25", "--seed", "1",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "unique failure" not in result.stdout, result.stdout[-3000:]
