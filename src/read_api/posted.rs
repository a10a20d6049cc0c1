//! The parameters of a read sent as a POST body instead of a query string (NLWeb clients
//! POST to `/ask`): a form body, or a JSON object of strings. Either becomes the query
//! string the read would have had, so one function answers both, and the query bounds
//! (`query::check_size`) apply to it as they do to a URL.

use hyper::StatusCode;
use serde_json::Value;

use super::{bad_request, ReadRefusal};
use crate::auth::form;

/// Largest body of a posted read.
pub const MAX_POSTED_BYTES: usize = 16 * 1024;

/// The body as a query string. JSON members must be strings, except `prev` (earlier queries,
/// a string or a list of strings, which is accepted and not used) and `query` as NLWeb 0.54
/// sends it, an object whose `text` is the query; other members are ignored.
pub fn posted_query(content_type: Option<&str>, body: &[u8]) -> Result<String, ReadRefusal> {
    if form::is_media_type(content_type, "application/x-www-form-urlencoded") {
        return std::str::from_utf8(body)
            .map(String::from)
            .map_err(|_| bad_request("the form body is not UTF-8"));
    }
    if !form::is_media_type(content_type, "application/json") {
        return Err(ReadRefusal {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code: "invalid_request",
            description: "send the parameters as JSON or as a form (application/x-www-form-urlencoded), or in the query string of a GET".into(),
        });
    }
    let Ok(Value::Object(members)) = serde_json::from_slice::<Value>(body) else {
        return Err(bad_request("the body must be a JSON object"));
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in &members {
        match (name.as_str(), value) {
            ("prev", Value::String(_)) => {}
            ("prev", Value::Array(items)) if items.iter().all(Value::is_string) => {}
            ("prev", _) => return Err(bad_request("`prev` is a string or a list of strings")),
            ("query", Value::Object(query_object)) => match query_object.get("text") {
                Some(Value::String(text)) => {
                    query.append_pair("query", text);
                }
                _ => return Err(bad_request("`query.text` must be a string")),
            },
            ("query" | "mode" | "generate_mode" | "site" | "query_id" | "streaming", value) => {
                let Value::String(text) = value else {
                    return Err(bad_request(format!("`{name}` must be a string")));
                };
                query.append_pair(name, text);
            }
            _ => {}
        }
    }
    Ok(query.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: Option<&str> = Some(crate::wire::JSON);

    #[test]
    fn forms_and_json_objects_become_query_strings() {
        let form = posted_query(
            Some("application/x-www-form-urlencoded"),
            b"query=a+b&mode=list",
        );
        assert_eq!(form.unwrap(), "query=a+b&mode=list");
        let json = posted_query(
            JSON,
            br#"{"query": "a&b", "query_id": "7", "prev": ["x"], "meta": {}}"#,
        );
        assert_eq!(json.unwrap(), "query=a%26b&query_id=7");
        let nlweb = posted_query(
            JSON,
            br#"{"query": {"text": "careers", "site": "x"}, "meta": {"version": "0.54"}}"#,
        );
        assert_eq!(nlweb.unwrap(), "query=careers");
    }

    #[test]
    fn what_cannot_be_a_query_is_refused() {
        for (content_type, body, status) in [
            (JSON, &br#"{"query": 5}"#[..], 400),
            (JSON, br#"{"prev": 5}"#, 400),
            (JSON, br#"{"query": {"text": 5}}"#, 400),
            (JSON, br#"["query"]"#, 400),
            (JSON, b"{", 400),
            (Some("text/plain"), b"query=x", 415),
            (None, b"query=x", 415),
            (
                Some("application/x-www-form-urlencoded"),
                b"query=\xff",
                400,
            ),
        ] {
            let refused = posted_query(content_type, body).unwrap_err();
            assert_eq!(refused.status.as_u16(), status, "{content_type:?} {body:?}");
        }
    }
}
