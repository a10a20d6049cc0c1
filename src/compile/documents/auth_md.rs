//! `GET /auth.md`: the instructions an agent reads to register, exchange and revoke.
//!
//! Rendered with minijinja from `templates/auth.md`, fed from the same configuration as the
//! OAuth metadata, so lifetimes, scopes and URLs cannot drift from what the service does.

use minijinja::{context, Environment};

use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;

pub const MARKDOWN: &str = "text/markdown; charset=utf-8";

const TEMPLATE: &str = include_str!("../../../templates/auth.md");

pub fn auth_md(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let host = base
        .as_str()
        .split_once("://")
        .map(|(_, host)| host)
        .unwrap_or(base.as_str());
    let mut environment = Environment::new();
    environment.set_keep_trailing_newline(true);
    environment
        .add_template("auth.md", TEMPLATE)
        .map_err(|e| CompileError::new("/auth.md", e))?;
    let text = environment
        .get_template("auth.md")
        .and_then(|template| {
            template.render(context! {
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
            })
        })
        .map_err(|e| CompileError::new("/auth.md", e))?;
    Ok(Artifact::new(
        paths::AUTH_MD,
        MARKDOWN,
        CachePolicy::Discovery,
        text,
    ))
}
