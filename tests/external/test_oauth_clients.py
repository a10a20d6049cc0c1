"""The agent flow driven by OAuth and JOSE libraries written by others: authlib runs
discovery, both grants, the API call and revocation; joserfc verifies the identity
assertion against the published JWKS."""

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from joserfc import jwt
from joserfc.jwk import KeySet

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def discover(base):
    """RFC 9728 then RFC 8414, with the issuer checks a careful client makes."""
    resource = requests.get(base + "/.well-known/oauth-protected-resource", timeout=10).json()
    assert resource["resource"] == base + "/"
    assert resource["bearer_methods_supported"] == ["header"]
    issuer = resource["authorization_servers"][0]
    assert issuer == base
    metadata = AuthorizationServerMetadata(
        requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=10).json()
    )
    # authlib's whole validation passes but for one rule: it wants a non-empty
    # response_types_supported, while RFC 8414 §2 only requires the field to be present.
    # A server with no authorization-code or implicit flow supports no response type.
    assert metadata["response_types_supported"] == []
    rules = [name for name in dir(metadata) if name.startswith("validate_")]
    assert len(rules) > 20, rules
    for rule in rules:
        if rule != "validate_response_types_supported":
            getattr(metadata, rule)()
    try:
        metadata.validate_response_types_supported()
    except ValueError as error:
        assert "response_types_supported" in str(error), error
    else:
        raise AssertionError("authlib accepted an empty response_types_supported")
    assert metadata["issuer"] == issuer, "RFC 8414 §3.3: issuer must match"
    return metadata


def register(metadata):
    response = requests.post(
        metadata["agent_auth"]["register_uri"], json={"type": "anonymous"}, timeout=10
    )
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    return response.json()["identity_assertion"]


def test_client_credentials_flow(server):
    metadata = discover(server.base)
    assert "client_credentials" in metadata["grant_types_supported"]
    session = OAuth2Session(
        client_id="authlib-agent", token_endpoint_auth_method="none", scope="company:read"
    )
    token = session.fetch_token(metadata["token_endpoint"], grant_type="client_credentials")
    assert token["token_type"] == "Bearer"
    assert token["scope"] == "company:read"
    assert "refresh_token" not in token

    anonymous = requests.get(server.base + "/api/company", timeout=10)
    authorized = session.get(server.base + "/api/company")
    assert authorized.status_code == 200
    assert authorized.content == anonymous.content

    session.revoke_token(metadata["revocation_endpoint"], token["access_token"]).raise_for_status()
    refused = session.get(server.base + "/api/company")
    assert refused.status_code == 401
    challenge = refused.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"')
    assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource"' in challenge


def test_jwt_bearer_flow_and_cascading_revocation(server):
    metadata = discover(server.base)
    assertion = register(metadata)
    session = OAuth2Session(client_id="authlib-agent", token_endpoint_auth_method="none")
    first = session.fetch_token(metadata["token_endpoint"], grant_type=JWT_BEARER, assertion=assertion)
    assert session.get(server.base + "/api/company").status_code == 200

    second_session = OAuth2Session(client_id="authlib-agent", token_endpoint_auth_method="none")
    second_session.fetch_token(metadata["token_endpoint"], grant_type=JWT_BEARER, assertion=assertion)
    assert second_session.get(server.base + "/api/company").status_code == 200

    # Revoking the assertion takes every access token issued from it.
    revoke = requests.post(metadata["revocation_endpoint"], data={"token": assertion}, timeout=10)
    assert revoke.status_code == 200
    assert session.get(server.base + "/api/company").status_code == 401
    assert second_session.get(server.base + "/api/company").status_code == 401
    again = requests.post(
        metadata["token_endpoint"],
        data={"grant_type": JWT_BEARER, "assertion": assertion},
        timeout=10,
    )
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert first["expires_in"] <= 900


def test_identity_assertion_verifies_with_the_published_jwks(server):
    metadata = discover(server.base)
    assertion = register(metadata)
    key_set = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    token = jwt.decode(assertion, key_set, algorithms=["ES256"])
    assert token.header["alg"] == "ES256"
    assert token.header["typ"] == "oauth-id-jag+jwt"
    assert token.header["kid"] == key_set.keys[0].kid
    registry = jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": metadata["issuer"]},
        aud={"essential": True, "value": metadata["issuer"]},
        sub={"essential": True},
        jti={"essential": True},
        exp={"essential": True},
    )
    registry.validate(token.claims)
    assert token.claims["exp"] - token.claims["iat"] == 3600


def test_a_tampered_assertion_fails_independent_verification(server):
    metadata = discover(server.base)
    assertion = register(metadata)
    header, payload, signature = assertion.split(".")
    tampered = ".".join([header, payload[:-4] + ("AAAA" if payload[-4:] != "AAAA" else "BBBB"), signature])
    key_set = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=10).json())
    try:
        jwt.decode(tampered, key_set, algorithms=["ES256"])
    except Exception:
        pass
    else:
        raise AssertionError("joserfc accepted a tampered assertion")
    refused = requests.post(
        metadata["token_endpoint"],
        data={"grant_type": JWT_BEARER, "assertion": tampered},
        timeout=10,
    )
    assert refused.json()["error"] == "invalid_grant"
