"""Hostile and careless clients, with Python's standard library as the client."""

import http.client
import json
import urllib.parse


def connection(server):
    url = urllib.parse.urlsplit(server.base)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def test_http_client_sees_413_after_writing_a_whole_oversized_body(server):
    # http.client writes the entire body before it reads anything; without a lingering
    # read on the server, the connection is reset and the client never sees the status.
    for path, content_type in [
        ("/oauth2/token", "application/x-www-form-urlencoded"),
        ("/oauth2/revoke", "application/x-www-form-urlencoded"),
        ("/agent/identity", "application/json"),
        ("/mcp", "application/json"),
    ]:
        conn = connection(server)
        conn.request("POST", path, body=b"a" * (2 * 1024 * 1024), headers={"Content-Type": content_type})
        response = conn.getresponse()
        assert response.status == 413, path
        response.read()
        conn.close()


def test_http_client_gets_a_working_token_and_revokes_it(server):
    conn = connection(server)
    conn.request("POST", "/oauth2/token", body="grant_type=client_credentials",
                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = conn.getresponse()
    assert response.status == 200
    token = json.loads(response.read())["access_token"]
    for _ in range(3):  # revoking again is fine and writes nothing new
        conn.request("POST", "/oauth2/revoke", body=f"token={token}",
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        assert response.status == 200
        response.read()
    conn.request("GET", "/api/company", headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    assert response.status == 401
    response.read()
    conn.close()
