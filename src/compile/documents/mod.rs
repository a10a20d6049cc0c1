//! One file per document family. Each renders from the site model and configuration only.

pub mod agents;
pub mod auth_md;
pub mod catalog;
pub mod company;
pub mod discovery;
pub mod openapi;
pub mod operation;
pub mod pages;

pub(crate) use crate::wire::JSON;
