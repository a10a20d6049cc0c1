//! The one error body of every HTTP surface but JSON-RPC: the read API, the auth endpoints
//! and the connection-level refusals all answer `{"error", "error_description"}` (the
//! RFC 6749 §5.2 shape), so a client handles errors one way everywhere.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Error")]
pub(crate) struct ErrorBody<'a> {
    /// Machine-readable code.
    pub error: &'a str,
    /// What went wrong and what to do.
    pub error_description: &'a str,
}
