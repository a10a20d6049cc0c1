//! `GET /auth.md`: the instructions an agent reads to register, exchange and revoke.
//!
//! Rendered from the `auth.md` template (overridable in `templates/`), fed from the same configuration as the
//! OAuth metadata, so lifetimes, scopes and URLs cannot drift from what the service does.

use minijinja::context;

use super::operation::{self, Context, Operations};
use crate::compile::templates::Templates;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;
use serde_json::json;

pub const MARKDOWN: &str = "text/markdown; charset=utf-8";

pub fn auth_md(input: &CompileInput<'_>, templates: &Templates) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let host = base
        .as_str()
        .split_once("://")
        .map(|(_, host)| host)
        .unwrap_or(base.as_str());
    let text = templates.render(
        "auth.md",
        context! {
            company => &input.site.company.name,
            base => base.as_str(),
            host => host,
            scopes => &input.config.auth.scopes,
            assertion_lifetime => input.config.auth.identity_assertion_lifetime.as_secs(),
            access_lifetime => input.config.auth.access_token_lifetime.as_secs(),
            paths => context! {
                api_company => paths::API_COMPANY,
                protected_resource => paths::PROTECTED_RESOURCE,
                protected_resource_mcp => paths::PROTECTED_RESOURCE_MCP,
                authorization_server => paths::AUTHORIZATION_SERVER,
                jwks => paths::JWKS,
                agent_identity => paths::AGENT_IDENTITY,
                agent_identity_claim => paths::AGENT_IDENTITY_CLAIM,
                oauth_token => paths::OAUTH_TOKEN,
                oauth_revoke => paths::OAUTH_REVOKE,
                oauth_authorize => paths::OAUTH_AUTHORIZE,
                mcp => paths::MCP,
            },
        },
    )?;
    Ok(Artifact::new(
        paths::AUTH_MD,
        MARKDOWN,
        CachePolicy::Content,
        text,
    ))
}

/// auth.md's operations in `/openapi.json`, at both its paths.
pub(crate) fn operations(_: &Context<'_>) -> Operations {
    [
        (paths::AUTH_MD, "getAuthMd"),
        (paths::AUTH_MD_WELL_KNOWN, "getWellKnownAuthMd"),
    ]
    .into_iter()
    .map(|(path, operation_id)| {
        (
            path,
            operation::document_get(
                operation_id,
                "Instructions for agents: register, exchange, call, revoke",
                json!({
                    "description": "Markdown instructions.",
                    "content": {"text/markdown": {"schema": {"type": "string"}}}
                }),
                "discovery",
            ),
        )
    })
    .collect()
}
