//! `GET /api/health`: what the service says about itself (filled by
//! [`crate::health::health_document`]).

use serde::Serialize;

use crate::content::ContentError;

/// `GET /api/health`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Health<'a> {
    /// `degraded` while the latest content edit does not compile (the last good version is
    /// served) or the revocation store cannot write; the service keeps answering either way.
    #[schemars(extend("enum" = ["ok", "degraded"]))]
    pub(crate) status: &'static str,
    pub(crate) version: &'static str,
    #[schemars(extend("format" = "date-time"))]
    pub(crate) started_at: String,
    pub(crate) content: ContentHealth<'a>,
    pub(crate) store: StoreReport<'a>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct StoreReport<'a> {
    #[schemars(extend("enum" = ["ok", "degraded"]))]
    pub(crate) status: &'static str,
    /// Why writes fail (present while degraded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<&'a str>,
    /// Seconds until the store tries to reopen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) retry_in: Option<u64>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct ContentHealth<'a> {
    /// Hash of the artifact set being served.
    pub(crate) revision: &'a str,
    #[schemars(extend("enum" = ["ok", "error"]))]
    pub(crate) status: &'static str,
    #[schemars(extend("enum" = ["content", "build"]))]
    pub(crate) source: &'static str,
    /// Present while the latest edit does not compile; the last good revision is still served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) errors: Option<&'a [ContentError]>,
}
