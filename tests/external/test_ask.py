"""NLWeb `/ask` against the running binary, read by clients written by others: `requests`
for the JSON answer and `sseclient-py` for the server-sent events, with the answer checked
against the schema `/openapi.json` publishes for it."""

import json

import jsonschema
import requests
import sseclient


def published_schema(server):
    document = requests.get(server.base + "/openapi.json", timeout=10).json()
    return {
        "$ref": "#/components/schemas/AskAnswer",
        "components": document["components"],
    }


def test_ask_answers_json_with_results_to_cite(server):
    response = requests.get(server.base + "/ask", params={"query": "careers"}, timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert "Accept" in response.headers["Vary"]
    answer = response.json()
    jsonschema.validate(answer, published_schema(server))
    assert answer["_meta"]["response_type"] == "answer"
    assert answer["results"], answer
    first = answer["results"][0]
    assert first["url"].startswith(server.base)
    assert first["schema_object"]["@context"] == "https://schema.org"


def test_ask_without_a_query_says_how(server):
    answer = requests.get(server.base + "/ask", timeout=10).json()
    assert answer["results"] == []
    assert "query=" in answer["_meta"]["message"]


def test_ask_streams_the_same_answer_as_server_sent_events(server):
    whole = requests.get(server.base + "/ask", params={"query": "calibration"}, timeout=10).json()
    response = requests.get(
        server.base + "/ask",
        params={"query": "calibration"},
        headers={"Accept": "text/event-stream"},
        stream=True,
        timeout=10,
    )
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = [(event.event, json.loads(event.data)) for event in sseclient.SSEClient(response).events()]
    names = [name for name, _ in events]
    assert names[0] == "begin-nlweb-response" and names[-1] == "end-nlweb-response", names
    streamed = [result for name, data in events if name == "result" for result in data["results"]]
    assert streamed == whole["results"]


def test_ask_takes_its_parameters_posted_as_json_or_a_form(server):
    whole = requests.get(server.base + "/ask", params={"query": "careers", "query_id": "q"}, timeout=10).json()
    for body in [
        {"json": {"query": "careers", "query_id": "q", "prev": ["about"]}},
        {"json": {"query": {"text": "careers"}, "query_id": "q", "meta": {"version": "0.54"}}},
        {"data": {"query": "careers", "query_id": "q"}},
    ]:
        response = requests.post(server.base + "/ask", timeout=10, **body)
        assert response.status_code == 200, (body, response.text)
        assert response.json() == whole, body
    wrong = requests.post(server.base + "/ask", json={"query": 5}, timeout=10)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_request"
    large = requests.post(server.base + "/ask", json={"query": "x" * 20_000}, timeout=10)
    assert large.status_code == 413
