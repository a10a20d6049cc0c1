//! dossier: a public, read-only company information service for AI agents.
//!
//! Data flows one way: [`content`] reads and validates `content/` into a typed site model,
//! [`compile`] turns the model into finished responses (artifacts), and [`serve`] answers
//! HTTP from those artifacts beside the dynamic [`auth`] core. [`live`] holds the version
//! being served; [`config`] and [`paths`] are the facts every stage shares.

#![warn(unreachable_pub)]
// The documentation is for contributors, built with `--document-private-items` (`just doc`),
// where links between private items resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod auth;
pub mod cli;
pub mod clock;
pub mod compile;
pub mod config;
pub mod content;
pub mod doctor;
pub(crate) mod health;
pub(crate) mod key_watch;
#[cfg(test)]
mod layering;
pub(crate) mod links;
pub(crate) mod listing;
pub mod live;
pub mod mcp;
pub(crate) mod parallel;
pub(crate) mod paths;
pub mod query;
pub mod read_api;
pub mod read_model;
pub mod reload;
pub(crate) mod routes;
pub(crate) mod schema;
pub mod search;
pub mod serve;
pub mod spool;
pub(crate) mod suggest;
pub mod wire;
