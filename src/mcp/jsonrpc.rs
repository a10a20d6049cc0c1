//! JSON-RPC 2.0 envelopes for MCP: parse one message, and write results and errors.
//!
//! A message is parsed once into [`Message`]; everything after works on that type. Results
//! are written by splicing a precomputed result object into the envelope, so the only
//! per-request serialization is the `id`.
//!
//! A well-formed message is read in one pass ([`parse`]); anything that pass does not accept
//! is read again by [`parse_thoroughly`], which says exactly what is wrong. Reading every
//! message the thorough way (a `Value`, then the body again for the `id`'s exact text) was
//! 5.8% of an MCP worker's time under load.

use bytes::Bytes;
use serde_json::{Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const HEADER_MISMATCH: i64 = -32020;
/// Server-defined: the bearer token was refused (the HTTP answer is 401 with a challenge).
pub const UNAUTHORIZED: i64 = -32001;
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// A request id: a string or a number, echoed back byte for byte as sent. Parsing it into a
/// number would turn `1267650600228229401496703205376` into `1.2676506002282293e30`, and a
/// client matching responses by id would never find its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Id(Box<str>);

impl Id {
    /// The id's JSON text, as it appeared in the request.
    pub fn json(&self) -> &str {
        &self.0
    }

    /// An id from its JSON text; `None` unless it is a JSON string or number.
    pub fn from_json(text: &str) -> Option<Id> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::String(_) | Value::Number(_)) => Some(Id(text.trim().into())),
            _ => None,
        }
    }
}

/// Only the `id` of a message, as raw JSON text.
#[derive(serde::Deserialize)]
struct RawId<'a> {
    #[serde(borrow, default)]
    id: Option<&'a serde_json::value::RawValue>,
}

/// One incoming message.
#[derive(Debug, PartialEq)]
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
#[derive(Debug, PartialEq)]
pub struct Invalid {
    pub id: Option<Id>,
    pub code: i64,
    pub message: &'static str,
}

/// The `id` of the request in `body`, when there is one to read.
pub fn request_id(body: &[u8]) -> Option<Id> {
    match parse(body) {
        Ok(Message::Request { id, .. }) => Some(id),
        Err(Invalid { id, .. }) => id,
        Ok(_) => None,
    }
}

/// A message as [`parse`] reads it in one pass: every member is read in full (a member of
/// any other name fails the pass, since skipping one would not check it the way a `Value`
/// does). A member present with `null` is `Some`, so that `"id": null` is not taken for no
/// id.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    method: Option<String>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// The message in `body`, or why it is not a usable one.
pub fn parse(body: &[u8]) -> Result<Message, Invalid> {
    match parse_well_formed(body) {
        Some(message) => Ok(message),
        None => parse_thoroughly(body),
    }
}

/// A well-formed message read in one pass, or `None` for [`parse_thoroughly`] to read: for
/// every body the pass accepts, the two agree. The pass fails on a member of the wrong type
/// or of another name, and on a member given twice (where a `Value` keeps the last), so
/// what it accepts has one reading.
fn parse_well_formed(body: &[u8]) -> Option<Message> {
    // A struct is also read from an array, by position: only an object is a message.
    if body.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    // The parser's nesting limit (128) counts from where it starts; well under it, the
    // struct and a `Value` cannot disagree.
    if nests_deeper_than(body, MAX_ONE_PASS_NESTING) {
        return None;
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return None;
    }
    let id = match envelope.id {
        None => None,
        // A raw value is only delimited, not checked (a lone surrogate, `1e999`).
        Some(raw) => Some(Id::from_json(raw.get())?),
    };
    match (envelope.method, id) {
        (Some(method), Some(id)) => Some(Message::Request {
            id,
            method,
            params: envelope.params.unwrap_or_default(),
        }),
        (Some(method), None) => Some(Message::Notification { method }),
        (None, Some(_)) if envelope.result.is_some() || envelope.error.is_some() => {
            Some(Message::ClientResponse)
        }
        (None, _) => None,
    }
}

/// Messages nested deeper than this are left to [`parse_thoroughly`]: well under
/// `serde_json`'s limit of 128, so the one pass never accepts what that limit refuses.
const MAX_ONE_PASS_NESTING: usize = 64;

/// Whether the arrays and objects of the JSON text `bytes` nest deeper than `limit`
/// (brackets inside strings do not count).
fn nests_deeper_than(bytes: &[u8], limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// [`parse`] of any body, saying exactly what is wrong with one that is not a message.
pub fn parse_thoroughly(body: &[u8]) -> Result<Message, Invalid> {
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
        Some(Value::String(_) | Value::Number(_)) => {
            // Read again for the exact text; a body with two `id` members has no one id.
            let raw = serde_json::from_slice::<RawId<'_>>(body)
                .ok()
                .and_then(|raw| raw.id)
                .ok_or(Invalid {
                    id: None,
                    code: INVALID_REQUEST,
                    message: "the message must have exactly one `id`",
                })?;
            Some(Id(raw.get().into()))
        }
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
pub fn result(id: &Id, result: Bytes) -> super::Chunks {
    let start = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.json());
    super::Chunks(vec![Bytes::from(start), result, Bytes::from_static(b"}\n")])
}

/// A JSON-RPC error object; `id` is `null` when it could not be read.
pub fn error(id: Option<&Id>, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut error = Map::new();
    error.insert("code".into(), code.into());
    error.insert("message".into(), message.into());
    if let Some(data) = data {
        error.insert("data".into(), data);
    }
    let error = serde_json::to_vec(&error).unwrap_or_default();
    let id = id.map_or("null", Id::json);
    let mut out = Vec::with_capacity(error.len() + id.len() + 40);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"error\":");
    out.extend_from_slice(&error);
    out.extend_from_slice(b"}\n");
    out
}

/// A JSON-RPC error: code, message and data (the era gives it its HTTP status). Here, with
/// the envelope, so that every part of MCP can raise one without depending on `dispatch`.
pub(super) struct Failure {
    pub(super) code: i64,
    pub(super) message: String,
    pub(super) data: Option<serde_json::Value>,
}

impl Failure {
    pub(super) fn new(code: i64, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(super) fn with_data(mut self, data: serde_json::Value) -> Failure {
        self.data = Some(data);
        self
    }
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
            let id = id.map(|id| Id::from_json(&id.to_string()).unwrap());
            assert_eq!(invalid.id, id);
        }
    }

    #[test]
    fn ids_are_echoed_byte_for_byte() {
        for id in [
            "1267650600228229401496703205376",
            "-0",
            "1.50",
            "1e3",
            "12345678901234567890123456789012345678901234567890",
            r#""\u0041b\"c""#,
            r#""é""#,
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let Message::Request { id: parsed, .. } = parse(body.as_bytes()).unwrap() else {
                panic!("{body}")
            };
            let answer = result(&parsed, Bytes::from_static(b"{}")).to_vec();
            let expected = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
            assert_eq!(String::from_utf8(answer).unwrap(), expected);
            let failed = error(Some(&parsed), INVALID_PARAMS, "x", None);
            assert!(String::from_utf8(failed)
                .unwrap()
                .contains(&format!("\"id\":{id},")));
        }
        let twice = parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#).unwrap_err();
        assert_eq!(twice.code, INVALID_REQUEST);
    }

    /// The one pass and the thorough reading agree on every body the one pass accepts (the
    /// fuzz target `jsonrpc` checks the same on any bytes).
    #[test]
    fn the_one_pass_agrees_with_the_thorough_reading() {
        let bodies: &[&[u8]] = &[
            br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            br#" {"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]}},"id":"q","jsonrpc":"2.0"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":"a","result":null}"#,
            br#"{"jsonrpc":"2.0","id":"a","error":{"code":1}}"#,
            br#"{"jsonrpc":"2.0","id":1.5e3,"method":"ping","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            br#"{"jsonrpc":"2.0","method":"n","params":3}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0"}"#,
            br#"["2.0",1,"ping"]"#,
            br#"[1,"2.0","ping"]"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            b"\x0c{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            b"",
            // In members the pass ignores: bytes that are not UTF-8, a lone surrogate, a
            // control character, nesting past the parser's limit.
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"x\":\"\xf6\"}",
            br#"{"jsonrpc":"2.0","id":3,"method":"m","x":"\ud800"}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"x\":\"\x01\"}",
            br#"{"jsonrpc":"2.0","id":3,"method":"m","x":1e999}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"m","x":01}"#,
            br#"{"jsonrpc":"2.0","id":1e999,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":"\udc00","method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":"\ud800"}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":1e999}}"#,
            br#"{"jsonrpc":"2.0","id":3,"result":1e999}"#,
        ];
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"m","x":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            parse(deep.as_bytes()),
            parse_thoroughly(deep.as_bytes()),
            "deep"
        );
        for body in bodies {
            let text = String::from_utf8_lossy(body);
            assert_eq!(parse(body), parse_thoroughly(body), "{text}");
        }
        // And the one pass did read the well-formed ones.
        assert!(parse_well_formed(bodies[0]).is_some());
        assert!(parse_well_formed(bodies[1]).is_some());
        assert!(parse_well_formed(bodies[3]).is_some());
        assert!(parse_well_formed(bodies[9]).is_none());
        assert!(parse_well_formed(bodies[17]).is_none());
        let extra = br#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":"\ud800"}"#;
        assert!(parse_well_formed(extra).is_none());
        assert_eq!(parse(extra), parse_thoroughly(extra));
    }

    #[test]
    fn nesting_is_counted_outside_strings() {
        assert!(!nests_deeper_than(br#"{"a":[{}]}"#, 3));
        assert!(nests_deeper_than(br#"{"a":[{"b":[]}]}"#, 3));
        assert!(!nests_deeper_than(br#"{"a":"[[[[\"[["}"#, 1));
        assert!(nests_deeper_than(br#"{"a":"\\",[[]]}"#, 2));
    }

    #[test]
    fn envelopes() {
        let id = Id::from_json("\"abc\"").unwrap();
        assert_eq!(
            result(&id, Bytes::from_static(b"{}")).to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}\n"
        );
        let error: Value = serde_json::from_slice(&error(None, PARSE_ERROR, "bad", None)).unwrap();
        assert_eq!(error["id"], Value::Null);
        assert_eq!(error["error"]["code"], PARSE_ERROR);
    }
}
