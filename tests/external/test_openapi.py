"""openapi.json is valid OpenAPI 3.1 (openapi-spec-validator) and the live responses match
its schemas (jsonschema, Draft 2020-12, the dialect OpenAPI 3.1 uses)."""

import json

import jsonschema
import pytest
from openapi_spec_validator import validate


@pytest.fixture(scope="module")
def spec(server):
    status, headers, body = server.get("/openapi.json")
    assert status == 200
    assert headers.get("Content-Type") == "application/json"
    return json.loads(body)


def test_openapi_document_is_valid_openapi_3_1(spec):
    assert spec["openapi"].startswith("3.1.")
    validate(spec)


def schema_for(spec, name):
    # Resolve `#/components/...` references against the whole document.
    return {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}


@pytest.mark.parametrize(
    "path, schema",
    [
        ("/api/company", "CompanyDocument"),
        ("/api/company?limit=2", "CompanyDocument"),
        ("/api/pages/about", "PageDocument"),
        ("/api/divisions/field-sensors", "DivisionDocument"),
        ("/api/search?q=calibration", "SearchResults"),
        ("/api/health", "Health"),
        ("/.well-known/api-catalog", "Linkset"),
    ],
)
def test_live_responses_match_their_schemas(server, spec, path, schema):
    status, _, body = server.get(path)
    assert status == 200
    jsonschema.Draft202012Validator(schema_for(spec, schema)).validate(json.loads(body))


def test_error_bodies_match_the_error_schema(server, spec):
    status, _, body = server.get("/no/such/path")
    assert status == 404
    jsonschema.Draft202012Validator(schema_for(spec, "Error")).validate(json.loads(body))
    status, _, body = server.get("/api/company", {"Authorization": "Bearer nope"})
    assert status == 401
    jsonschema.Draft202012Validator(schema_for(spec, "Error")).validate(json.loads(body))


def test_every_documented_get_answers(server, spec):
    examples = {"{slug}": "about", "{division_id}": "field-sensors"}
    for path, item in spec["paths"].items():
        if "get" not in item:
            continue
        for template, example in examples.items():
            path = path.replace(template, example)
        # Required query parameters get an example value too.
        required = [
            p["name"] for p in item["get"].get("parameters", [])
            if p.get("in") == "query" and p.get("required")
        ]
        if required:
            path += "?" + "&".join(f"{name}=calibration" for name in required)
        status, headers, _ = server.get(path, {"Accept": "application/json"})
        assert status in (200,) or "oauth2/authorize" in path, (path, status)


def test_auth_responses_match_their_schemas(server, spec):
    import urllib.request

    def post(path, body, content_type):
        request = urllib.request.Request(
            server.base + path, data=body.encode(), headers={"Content-Type": content_type}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    registration = post("/agent/identity", '{"type": "anonymous"}', "application/json")
    jsonschema.Draft202012Validator(schema_for(spec, "Registration")).validate(registration)
    token = post(
        "/oauth2/token", "grant_type=client_credentials", "application/x-www-form-urlencoded"
    )
    jsonschema.Draft202012Validator(schema_for(spec, "TokenResponse")).validate(token)
    for path in ("/agent/identity", "/oauth2/token", "/oauth2/revoke", "/agent/identity/claim"):
        assert "post" in spec["paths"][path], path
