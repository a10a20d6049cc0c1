//! `GET /ask`: NLWeb's question endpoint, answered by the same search as `/api/search`.
//!
//! NLWeb clients send `query` and read `results`, each with the page to cite and the
//! schema.org object it describes. There is no language model behind this service, so
//! the only mode is `list`: a request for another (`summarize`, `generate`) is answered as
//! a list, and `_meta.message` says so. `prev`, `site` and `query_id` are accepted (the
//! site is this one; `query_id` is echoed). With `streaming=true` or
//! `Accept: text/event-stream`, the same answer comes as server-sent events:
//! `begin-nlweb-response`, one `result` event per batch of results, `end-nlweb-response`.

use hyper::header::{HeaderMap, HeaderValue, ACCEPT};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{bad_request, internal, parse, ReadRefusal};
use crate::compile::documents::operation::{self, Context};
use crate::compile::documents::pages::strip_nulls;
use crate::compile::{Artifact, CachePolicy};
use crate::listing::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_CHARS};
use crate::paths;
use crate::read_model::ReadModel;
use crate::wire::{AskAnswer, AskMeta, AskResult, Hit};

/// The NLWeb protocol version these answers follow.
pub(crate) const NLWEB_VERSION: &str = "0.54";
/// Results per `result` event when streaming.
const RESULTS_PER_EVENT: usize = 5;

/// Whether the client asked for server-sent events: `streaming=true` (or `1`) or `false`
/// (or `0`) decides; without it, an `Accept` that names `text/event-stream` with a quality
/// above 0.
fn wants_events(streaming: Option<&str>, headers: &HeaderMap) -> Result<bool, ReadRefusal> {
    match streaming {
        Some("true" | "1") => Ok(true),
        Some("false" | "0") => Ok(false),
        Some(_) => Err(bad_request("`streaming` is `true` or `false`")),
        None => Ok(headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(accepts_events)),
    }
}

/// Whether one `Accept` range is `text/event-stream` with a quality above 0.
fn accepts_events(range: &str) -> bool {
    let mut parts = range.split(';').map(str::trim);
    let media_type = parts.next().unwrap_or_default();
    if !media_type.eq_ignore_ascii_case("text/event-stream") {
        return false;
    }
    parts
        .filter_map(|parameter| parameter.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
        .is_none_or(|(_, quality)| quality.trim().parse::<f32>().is_ok_and(|q| q > 0.0))
}

/// The answer to `GET /ask?query=…`, as JSON or as server-sent events.
pub(crate) fn ask(
    model: &ReadModel,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Result<Artifact, ReadRefusal> {
    let query = parse(query)?;
    // Every parameter is checked before the search runs.
    let streamed = wants_events(query.get("streaming"), headers)?;
    let text = query.get("query").map(str::trim).unwrap_or_default();
    if text.chars().count() > MAX_SEARCH_CHARS {
        return Err(bad_request(format!(
            "`query` is longer than {MAX_SEARCH_CHARS} characters"
        )));
    }
    let mode = query
        .get("mode")
        .or_else(|| query.get("generate_mode"))
        .unwrap_or("list");
    let mut message = None;
    if mode != "list" {
        message = Some(format!(
            "mode `{mode}` is not offered here (no language model answers); answered as `list`"
        ));
    }
    let results = if text.is_empty() {
        message = Some(format!(
            "ask with `query`, e.g. {}?query=careers; the answer lists the pages that answer it, best first",
            paths::ASK
        ));
        Vec::new()
    } else {
        let index = model.search();
        let ranked = index.rank(model.site(), text);
        let chosen = &ranked[..ranked.len().min(DEFAULT_SEARCH_LIMIT)];
        index
            .hits(model.site(), text, chosen)
            .into_iter()
            .map(|hit| result(model, hit))
            .collect()
    };
    let query_id = query
        .get("query_id")
        .filter(|id| !id.is_empty())
        .map(String::from)
        .unwrap_or_else(|| {
            let digest = Sha256::digest(text.as_bytes());
            digest[..8].iter().map(|b| format!("{b:02x}")).collect()
        });
    let answer = AskAnswer {
        meta: AskMeta {
            response_type: "answer",
            version: NLWEB_VERSION,
            mode: "list",
            message,
        },
        query_id,
        results,
    };
    let artifact = if streamed {
        Artifact::new(
            paths::ASK,
            "text/event-stream",
            CachePolicy::Content,
            events(&answer).map_err(|e| internal(e.to_string()))?,
        )
    } else {
        Artifact::json(
            paths::ASK,
            "application/json",
            CachePolicy::Content,
            &answer,
        )
        .map_err(|e| internal(e.to_string()))?
    };
    // The same URL answers JSON or events, by `Accept`.
    Ok(artifact.negotiated().with_header(
        hyper::header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    ))
}

/// The answer as server-sent events: one to begin, one per batch of results, one to end.
fn events(answer: &AskAnswer) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    let mut event = |name: &str, data: Value| -> Result<(), serde_json::Error> {
        out.extend_from_slice(format!("event: {name}\ndata: ").as_bytes());
        serde_json::to_writer(&mut out, &data)?;
        out.extend_from_slice(b"\n\n");
        Ok(())
    };
    event(
        "begin-nlweb-response",
        json!({"message_type": "begin-nlweb-response", "query_id": answer.query_id, "_meta": answer.meta}),
    )?;
    for batch in answer.results.chunks(RESULTS_PER_EVENT) {
        event(
            "result",
            json!({"message_type": "result", "query_id": answer.query_id, "results": batch}),
        )?;
    }
    event(
        "end-nlweb-response",
        json!({"message_type": "end-nlweb-response", "query_id": answer.query_id}),
    )?;
    Ok(out)
}

/// One search hit as an NLWeb result, with the schema.org object it is about.
fn result(model: &ReadModel, hit: Hit) -> AskResult {
    let site = model.site();
    let context = "https://schema.org";
    let schema_object = match hit.kind {
        "division" => json!({
            "@context": context,
            "@type": "Organization",
            "name": hit.title,
            "url": hit.url,
            "description": site.divisions.iter().find(|d| d.id == hit.id).map(|d| d.summary.as_str()),
            "parentOrganization": {"@type": "Organization", "name": site.company.name, "url": model.base().as_str()},
        }),
        "page" => {
            let page = site.pages.iter().find(|p| p.slug == hit.id);
            json!({
                "@context": context,
                "@type": "WebPage",
                "name": hit.title,
                "url": hit.url,
                "description": page.map(|p| p.summary.as_str()),
                "dateModified": page.and_then(|p| p.updated.as_deref()),
                "publisher": {"@type": "Organization", "name": site.company.name},
            })
        }
        _ => {
            let contact = site
                .divisions
                .iter()
                .find(|d| d.id == hit.id)
                .and_then(|d| d.contact.as_ref())
                .or_else(|| {
                    site.pages
                        .iter()
                        .find(|p| p.slug == hit.id)
                        .and_then(|p| p.contact.as_deref())
                });
            json!({
                "@context": context,
                "@type": "ContactPoint",
                "name": hit.title,
                "url": hit.url,
                "email": contact.and_then(|c| c.email.as_deref()),
                "telephone": contact.and_then(|c| c.phone.as_deref()),
            })
        }
    };
    AskResult {
        url: hit.url,
        name: hit.title,
        site: model.base().as_str().to_string(),
        score: hit.score,
        description: hit.snippet,
        schema_object: strip_nulls(schema_object),
    }
}

/// `/ask`'s operations (GET and POST) in `/openapi.json`.
pub(crate) fn operation(context: &Context<'_>) -> Value {
    let mut ask_get = operation::document_get(
        "ask",
        "NLWeb: a question answered with the pages that answer it, best first",
        json!({
            "description": "The results (JSON), or with `streaming=true` or `Accept: text/event-stream` the same as server-sent events: `begin-nlweb-response`, one `result` per batch, `end-nlweb-response`. Without `query`, an empty list and how to ask.",
            "content": {
                "application/json": {"schema": operation::schema_ref::<AskAnswer>()},
                "text/event-stream": {"schema": {"type": "object", "description": "The data of each event: a JSON object whose `message_type` is its event name, carrying `query_id`, and on `result` events a batch of `results`."}}
            }
        }),
        "company",
    );
    ask_get["get"]["description"] = json!(context.search_limit_description());
    ask_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    ask_get["get"]["responses"]["429"] = operation::rate_limited();
    if let Some(parameters) = ask_get["get"]["parameters"].as_array_mut() {
        parameters.push(json!({"name": "query", "in": "query", "required": false, "description": "The question, in words.", "schema": {"type": "string", "maxLength": MAX_SEARCH_CHARS}}));
        parameters.push(json!({"name": "mode", "in": "query", "required": false, "description": "Only `list` is offered; another mode is answered as `list`, and `_meta.message` says so.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "generate_mode", "in": "query", "required": false, "description": "The same as `mode`.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "streaming", "in": "query", "required": false, "description": "`true` for server-sent events.", "schema": {"type": "string", "enum": ["true", "false", "1", "0"]}}));
        parameters.push(json!({"name": "query_id", "in": "query", "required": false, "description": "Echoed in the answer.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "site", "in": "query", "required": false, "description": "Accepted; the site is always this one.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "prev", "in": "query", "required": false, "description": "Earlier queries of the conversation; accepted, not used.", "schema": {"type": "string"}}));
    }
    // NLWeb clients POST the same parameters as a form or a JSON object.
    let text = json!({"type": "string"});
    let posted = json!({
        "type": "object",
        "properties": {
            "query": {"oneOf": [
                {"type": "string", "maxLength": MAX_SEARCH_CHARS},
                {"type": "object", "properties": {"text": {"type": "string", "maxLength": MAX_SEARCH_CHARS}}, "required": ["text"]}
            ]},
            "mode": text, "generate_mode": text, "site": text, "query_id": text,
            "streaming": {"type": "string", "enum": ["true", "false", "1", "0"]},
            "prev": {"oneOf": [text, {"type": "array", "items": text}]}
        }
    });
    let mut ask_post = ask_get["get"].clone();
    if let Some(operation) = ask_post.as_object_mut() {
        operation.insert("operationId".into(), "askPost".into());
        operation.insert(
            "summary".into(),
            "NLWeb: the same question, its parameters in the body".into(),
        );
        operation.remove("parameters");
        operation.insert("requestBody".into(), json!({
            "required": true,
            "content": {
                "application/json": {"schema": posted},
                "application/x-www-form-urlencoded": {"schema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "maxLength": MAX_SEARCH_CHARS},
                        "mode": text, "generate_mode": text, "site": text, "query_id": text, "prev": text,
                        "streaming": {"type": "string", "enum": ["true", "false", "1", "0"]}
                    }
                }}
            }
        }));
        if let Some(responses) = operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
        {
            responses.remove("304");
            responses.insert(
                "413".into(),
                operation::error_response(&format!(
                    "`request_too_large`: bodies are limited to {} bytes.",
                    crate::read_api::MAX_POSTED_BYTES
                )),
            );
            responses.insert(
                "415".into(),
                operation::error_response("The body is neither JSON nor a form."),
            );
        }
    }
    ask_get["post"] = ask_post;
    ask_get
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::BaseUrl;

    fn model() -> ReadModel {
        let content = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content");
        let site = crate::content::load(&content).unwrap();
        ReadModel::build(
            Arc::new(site),
            &BaseUrl::parse("https://x.example").unwrap(),
        )
    }

    fn body(artifact: &Artifact) -> String {
        String::from_utf8(artifact.identity.body.to_vec()).unwrap()
    }

    #[test]
    fn a_question_is_answered_with_results_to_cite() {
        let model = model();
        let answer = ask(&model, Some("query=careers&query_id=q1"), &HeaderMap::new()).unwrap();
        assert_eq!(answer.content_type, "application/json");
        let json: Value = serde_json::from_str(&body(&answer)).unwrap();
        assert_eq!(json["_meta"]["response_type"], "answer");
        assert_eq!(json["query_id"], "q1");
        let first = &json["results"][0];
        assert_eq!(first["url"], "https://x.example/careers");
        assert_eq!(first["site"], "https://x.example");
        assert_eq!(first["schema_object"]["@type"], "WebPage");
        assert!(json["_meta"].get("message").is_none(), "{json}");
        for result in json["results"].as_array().unwrap() {
            assert!(result["schema_object"]["@context"] == "https://schema.org");
        }
    }

    #[test]
    fn no_query_says_how_to_ask_and_other_modes_are_answered_as_lists() {
        let model = model();
        let empty = ask(&model, None, &HeaderMap::new()).unwrap();
        let json: Value = serde_json::from_str(&body(&empty)).unwrap();
        assert_eq!(json["results"], json!([]));
        assert!(json["_meta"]["message"]
            .as_str()
            .unwrap()
            .contains("/ask?query="));
        let summarize = ask(
            &model,
            Some("query=sensors&mode=summarize"),
            &HeaderMap::new(),
        )
        .unwrap();
        let json: Value = serde_json::from_str(&body(&summarize)).unwrap();
        assert_eq!(json["_meta"]["mode"], "list");
        assert!(json["_meta"]["message"]
            .as_str()
            .unwrap()
            .contains("summarize"));
        assert!(!json["results"].as_array().unwrap().is_empty());
        let bad = ask(&model, Some("query=x&streaming=maybe"), &HeaderMap::new());
        assert_eq!(bad.unwrap_err().status, 400);
        let long = format!("query={}", "a".repeat(MAX_SEARCH_CHARS + 1));
        assert_eq!(
            ask(&model, Some(&long), &HeaderMap::new())
                .unwrap_err()
                .status,
            400
        );
    }

    #[test]
    fn the_streaming_parameter_decides_then_accept() {
        let accept = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static(value));
            headers
        };
        for (streaming, headers, events) in [
            (None, HeaderMap::new(), false),
            (None, accept("text/event-stream"), true),
            (None, accept("application/json, text/event-stream"), true),
            (
                None,
                accept("text/event-stream;q=0, application/json"),
                false,
            ),
            (None, accept("Text/Event-Stream ; q=0.5"), true),
            (
                Some("false"),
                accept("application/json, text/event-stream"),
                false,
            ),
            (Some("1"), HeaderMap::new(), true),
        ] {
            assert_eq!(
                wants_events(streaming, &headers).unwrap(),
                events,
                "{streaming:?} {headers:?}"
            );
        }
    }

    #[test]
    fn events_begin_carry_every_result_in_batches_and_end() {
        let model = model();
        let json: Value = serde_json::from_str(&body(
            &ask(&model, Some("query=calibration"), &HeaderMap::new()).unwrap(),
        ))
        .unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        for (query, headers) in [
            ("query=calibration", headers),
            ("query=calibration&streaming=true", HeaderMap::new()),
        ] {
            let stream = ask(&model, Some(query), &headers).unwrap();
            assert_eq!(stream.content_type, "text/event-stream");
            let text = body(&stream);
            let events: Vec<(&str, Value)> = text
                .split("\n\n")
                .filter(|block| !block.is_empty())
                .map(|block| {
                    let (name, data) = block.split_once('\n').unwrap();
                    let name = name.strip_prefix("event: ").unwrap();
                    let data = data.strip_prefix("data: ").unwrap();
                    (name, serde_json::from_str(data).unwrap())
                })
                .collect();
            assert_eq!(events.first().unwrap().0, "begin-nlweb-response");
            assert_eq!(events.last().unwrap().0, "end-nlweb-response");
            let streamed: Vec<Value> = events
                .iter()
                .filter(|(name, _)| *name == "result")
                .flat_map(|(_, data)| data["results"].as_array().unwrap().clone())
                .collect();
            assert_eq!(&Value::from(streamed), &json["results"], "{query}");
        }
    }
}
