//! JSON-RPC 2.0 envelopes for MCP: parse one message, and write results and errors.
//!
//! A message is parsed once into [`Message`]; everything after works on that type. Results
//! are written by splicing a precomputed result object into the envelope, so the only
//! per-request serialization is the `id`.

use serde_json::{Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const HEADER_MISMATCH: i64 = -32020;
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// A request id: a string or a number, echoed back exactly as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Id(pub Value);

impl Id {
    fn json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_else(|_| "null".into())
    }
}

/// One incoming message.
#[derive(Debug)]
pub enum Message {
    Request {
        id: Id,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
    },
    /// A JSON-RPC response or error sent by the client; accepted and ignored.
    ClientResponse,
}

/// Why a body is not a usable message, with the id when it could be read.
#[derive(Debug)]
pub struct Invalid {
    pub id: Option<Id>,
    pub code: i64,
    pub message: &'static str,
}

pub fn parse(body: &[u8]) -> Result<Message, Invalid> {
    let value: Value = serde_json::from_slice(body).map_err(|_| Invalid {
        id: None,
        code: PARSE_ERROR,
        message: "parse error: the body is not valid JSON",
    })?;
    let Value::Object(mut object) = value else {
        let message = if value.is_array() {
            "batches are not supported: send one JSON-RPC message per request"
        } else {
            "the message must be a JSON object"
        };
        return Err(Invalid {
            id: None,
            code: INVALID_REQUEST,
            message,
        });
    };
    let id = match object.remove("id") {
        None => None,
        Some(value @ (Value::String(_) | Value::Number(_))) => Some(Id(value)),
        Some(_) => {
            return Err(Invalid {
                id: None,
                code: INVALID_REQUEST,
                message: "`id` must be a string or a number",
            })
        }
    };
    let invalid = |message| Invalid {
        id: id.clone(),
        code: INVALID_REQUEST,
        message,
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return Err(invalid("`method` must be a string")),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Ok(Message::ClientResponse)
        }
        None => return Err(invalid("`method` is required")),
    };
    let params = match object.remove("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err(Invalid {
                id: id.clone(),
                code: INVALID_PARAMS,
                message: "`params` must be an object",
            })
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method },
    })
}

/// `{"jsonrpc":"2.0","id":…,"result":<result>}` with `result` already serialized.
pub fn result(id: &Id, result: &[u8]) -> Vec<u8> {
    let id = id.json();
    let mut out = Vec::with_capacity(result.len() + id.len() + 40);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result);
    out.extend_from_slice(b"}");
    out
}

/// A JSON-RPC error object; `id` is `null` when it could not be read.
pub fn error(id: Option<&Id>, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    let envelope = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.map(|id| id.0.clone()).unwrap_or(Value::Null),
        "error": error,
    });
    serde_json::to_vec(&envelope).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses() {
        let request = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert!(matches!(request, Message::Request { ref method, .. } if method == "ping"));
        let notification =
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(notification, Message::Notification { .. }));
        let response = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(response, Message::ClientResponse));
    }

    #[test]
    fn invalid_messages_keep_the_id_when_readable() {
        let cases: [(&[u8], i64, Option<Value>); 8] = [
            (b"{", PARSE_ERROR, None),
            (b"[]", INVALID_REQUEST, None),
            (
                b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
                INVALID_REQUEST,
                None,
            ),
            (b"42", INVALID_REQUEST, None),
            (
                br#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
                INVALID_REQUEST,
                Some(3.into()),
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
            ),
            (
                br#"{"jsonrpc":"2.0","id":"x","method":5}"#,
                INVALID_REQUEST,
                Some("x".into()),
            ),
            (
                br#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
                INVALID_PARAMS,
                Some(4.into()),
            ),
        ];
        for (body, code, id) in cases {
            let invalid = parse(body).unwrap_err();
            assert_eq!(invalid.code, code, "{}", String::from_utf8_lossy(body));
            assert_eq!(invalid.id.map(|id| id.0), id);
        }
    }

    #[test]
    fn envelopes() {
        let id = Id("abc".into());
        assert_eq!(
            result(&id, b"{}"),
            br#"{"jsonrpc":"2.0","id":"abc","result":{}}"#
        );
        let error: Value = serde_json::from_slice(&error(None, PARSE_ERROR, "bad", None)).unwrap();
        assert_eq!(error["id"], Value::Null);
        assert_eq!(error["error"]["code"], PARSE_ERROR);
    }
}
