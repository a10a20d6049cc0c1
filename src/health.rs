//! The health document (`GET /api/health`): what the service says about itself, as a wire
//! type with its derived schema and the one function that fills it.
//!
//! It lives below `live` and `compile` because both need it: `live` fills it for every
//! version, and the OpenAPI document publishes its schema.

use std::time::SystemTime;

use serde::Serialize;

use crate::auth::store::StoreHealth;
use crate::clock::rfc3339;
use crate::content::ContentError;

/// Whether the content on disk is what is being served.
#[derive(Debug, Clone, Default)]
pub enum ContentStatus {
    #[default]
    Ok,
    /// The latest edit did not compile; the previous version is still served.
    Error(Vec<ContentError>),
}

/// `GET /api/health`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct Health<'a> {
    /// `degraded` while the latest content edit does not compile (the last good version is
    /// served) or the revocation store cannot write; the service keeps answering either way.
    #[schemars(extend("enum" = ["ok", "degraded"]))]
    status: &'static str,
    version: &'static str,
    #[schemars(extend("format" = "date-time"))]
    started_at: String,
    content: ContentHealth<'a>,
    store: StoreReport<'a>,
}

#[derive(Serialize, schemars::JsonSchema)]
struct StoreReport<'a> {
    #[schemars(extend("enum" = ["ok", "degraded"]))]
    status: &'static str,
    /// Why writes fail (present while degraded).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    /// Seconds until the store tries to reopen.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_in: Option<u64>,
}

#[derive(Serialize, schemars::JsonSchema)]
struct ContentHealth<'a> {
    /// Hash of the artifact set being served.
    revision: &'a str,
    #[schemars(extend("enum" = ["ok", "error"]))]
    status: &'static str,
    #[schemars(extend("enum" = ["content", "build"]))]
    source: &'static str,
    /// Present while the latest edit does not compile; the last good revision is still served.
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [ContentError]>,
}

pub(crate) fn health_document<'a>(
    revision: &'a str,
    status: &'a ContentStatus,
    source: &'static str,
    started_at: SystemTime,
    store: &'a StoreHealth,
) -> Health<'a> {
    let errors = match status {
        ContentStatus::Ok => None,
        ContentStatus::Error(errors) => Some(errors.as_slice()),
    };
    let store = match store {
        StoreHealth::Ok => StoreReport {
            status: "ok",
            error: None,
            retry_in: None,
        },
        StoreHealth::Degraded { reason, retry_at } => StoreReport {
            status: "degraded",
            error: Some(reason),
            retry_in: Some(
                retry_at
                    .saturating_duration_since(std::time::Instant::now())
                    .as_secs()
                    .max(1),
            ),
        },
    };
    Health {
        // Liveness stays 200; the top-level status is what uptime monitors read.
        status: if store.status == "ok" && errors.is_none() {
            "ok"
        } else {
            "degraded"
        },
        version: env!("CARGO_PKG_VERSION"),
        started_at: rfc3339(started_at),
        content: ContentHealth {
            revision,
            status: if errors.is_some() { "error" } else { "ok" },
            source,
            errors,
        },
        store,
    }
}
