//! Every shape the service writes onto the wire, as the types that write it: the read API's
//! documents, health, the auth bodies, the one error body and the API catalog's linkset.
//!
//! The types sit low in the module graph (beside `content`, whose model they embed) so that
//! the code that fills a document, the handler that sends it and the OpenAPI document that
//! publishes its derived schema all name the same type without importing each other. The
//! functions that fill them live with their data (`listing`, `health`, `read_api`, `auth`).
//! Shapes fixed by another standard, written in one place and published in no schema of
//! ours (the OAuth discovery documents, the MCP server card, JSON-RPC) stay beside the code
//! that writes them, as do the MCP tools' results, each in its tool's file. The linkset is
//! here because `/openapi.json` publishes its schema too.

mod auth;
mod error;
mod health;
mod linkset;
mod read;

pub(crate) use auth::{
    IdentityBlock, Registration, RegistrationRequest, RevocationRequest, TokenRequest,
    TokenResponse,
};
pub(crate) use error::ErrorBody;
pub(crate) use health::{ContentHealth, Health, StoreReport};
pub(crate) use linkset::{LinkContext, LinkTarget, Linkset, LINKSET_CONTENT_TYPE};
pub use read::Hit;
pub(crate) use read::{
    AskAnswer, AskMeta, AskResult, CompanyDocument, DivisionDocument, PageDocument, PageListing,
    SearchDocument,
};

use serde::Serialize;

/// The media type of every JSON body but the linkset's.
pub(crate) const JSON: &str = "application/json";

/// `value` as JSON ending with a newline, as every JSON body here does (`curl` prints the
/// prompt on the next line).
pub(crate) fn json_line<T: Serialize>(value: &T) -> Vec<u8> {
    let mut body = serde_json::to_vec(value).unwrap_or_default();
    body.push(b'\n');
    body
}
