//! dossier's integration tests: one test binary (one link of the crate instead of one per
//! file, which is most of a test build on 2 cores), one module per area, as ripgrep's
//! `tests/tests.rs`. Run one area with `cargo test --test tests <module>::`.

mod common;

mod adversarial;
mod agent_standards;
mod auth_flow;
mod cli;
mod content_errors;
mod doctor;
mod hardening;
mod http_api;
mod incremental;
mod key_rotation;
mod mcp_http;
mod new_site;
mod redis_store;
mod reload;
mod site;
mod tls_http2;
