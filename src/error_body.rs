//! The one error body of every HTTP surface but JSON-RPC: the read API, the auth endpoints
//! and the connection-level refusals all answer `{"error", "error_description"}` (the
//! RFC 6749 §5.2 shape), so a client handles errors one way everywhere. And [`json_line`],
//! the form of every JSON body written per request.

use schemars::JsonSchema;
use serde::Serialize;

/// `value` as JSON ending with a newline, as every JSON body here does (`curl` prints the
/// prompt on the next line).
pub(crate) fn json_line<T: Serialize>(value: &T) -> Vec<u8> {
    let mut body = serde_json::to_vec(value).unwrap_or_default();
    body.push(b'\n');
    body
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub(crate) struct ErrorBody<'a> {
    /// Machine-readable code.
    pub error: &'a str,
    /// What went wrong and what to do.
    pub error_description: &'a str,
}
