//! The health document (`GET /api/health`): what the service says about itself, and the
//! one function that fills it (its wire type is [`crate::wire::Health`]).
//!
//! `live` fills it for every version (and again while the revocation store is degraded).

use std::time::SystemTime;

use crate::auth::store::StoreHealth;
use crate::clock::rfc3339;
use crate::content::ContentError;
use crate::wire::{ContentHealth, Health, StoreReport};

/// Whether the content on disk is what is being served.
#[derive(Debug, Clone, Default)]
pub enum ContentStatus {
    #[default]
    Ok,
    /// The latest edit did not compile; the previous version is still served.
    Error(Vec<ContentError>),
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
