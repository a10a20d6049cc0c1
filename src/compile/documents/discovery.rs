//! OAuth discovery: protected-resource metadata (RFC 9728) for the API and for `/mcp`,
//! authorization-server metadata (RFC 8414) with the `agent_auth` object, and the JWKS.
//!
//! Every URL is `BASE` + a path from [`crate::paths`]; `issuer` and `authorization_servers`
//! are the same string byte for byte, because clients compare them exactly.

use serde::Serialize;

use super::operation::{self, Context, Operations};
use super::JSON;
use crate::auth::keys::PublicJwk;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::config::{CLIENT_CREDENTIALS_GRANT, JWT_BEARER_GRANT};
use crate::paths;

#[derive(Serialize)]
struct ProtectedResourceMetadata<'a> {
    resource: String,
    authorization_servers: [&'a str; 1],
    scopes_supported: &'a [String],
    bearer_methods_supported: [&'static str; 1],
    resource_name: String,
    resource_documentation: String,
}

#[derive(Serialize)]
struct AuthorizationServerMetadata<'a> {
    issuer: &'a str,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    revocation_endpoint: String,
    /// RFC 8414 §2 requires the field; no response type is supported (there is no
    /// authorization-code or implicit flow), so it is the one empty array we publish.
    response_types_supported: [&'static str; 0],
    grant_types_supported: [&'static str; 2],
    token_endpoint_auth_methods_supported: [&'static str; 1],
    revocation_endpoint_auth_methods_supported: [&'static str; 1],
    scopes_supported: &'a [String],
    service_documentation: String,
    agent_auth: AgentAuth,
}

/// The auth.md extension. Both generations of field names are published, because clients
/// of each read only their own (`register_uri` vs `identity_endpoint`, and so on).
#[derive(Serialize)]
struct AgentAuth {
    skill: String,
    register_uri: String,
    identity_endpoint: String,
    claim_uri: String,
    claim_endpoint: String,
    revocation_uri: String,
    identity_types_supported: [&'static str; 1],
    anonymous: AnonymousMethod,
}

#[derive(Serialize)]
struct AnonymousMethod {
    credential_types_supported: [&'static str; 1],
}

#[derive(Serialize)]
struct JsonWebKeySet<'a> {
    keys: &'a [PublicJwk],
}

/// The JWKS document for `keys`. Also used alone, to bring a loaded `build/` up to date
/// with a key rotation.
pub fn jwks(keys: &[PublicJwk]) -> Result<Artifact, CompileError> {
    Artifact::json(
        paths::JWKS,
        JSON,
        CachePolicy::Content,
        &JsonWebKeySet { keys },
    )
    .map_err(|e| CompileError::new("JWKS", e))
}

pub fn discovery(input: &CompileInput<'_>) -> Result<Vec<Artifact>, CompileError> {
    let base = &input.config.base_url;
    let scopes = &input.config.auth.scopes;
    let company = &input.site.company.name;
    let error = |document| move |e| CompileError::new(document, e);

    let protected_resource = |resource: String, name: String| ProtectedResourceMetadata {
        resource,
        authorization_servers: [base.as_str()],
        scopes_supported: scopes,
        bearer_methods_supported: ["header"],
        resource_name: name,
        resource_documentation: base.join(paths::AUTH_MD),
    };
    let api_metadata =
        protected_resource(base.join("/"), format!("{company} company information API"));
    let mcp_metadata = protected_resource(
        base.join(paths::MCP),
        format!("{company} company information (MCP)"),
    );

    let server_metadata = AuthorizationServerMetadata {
        issuer: base.as_str(),
        authorization_endpoint: base.join(paths::OAUTH_AUTHORIZE),
        token_endpoint: base.join(paths::OAUTH_TOKEN),
        jwks_uri: base.join(paths::JWKS),
        revocation_endpoint: base.join(paths::OAUTH_REVOKE),
        response_types_supported: [],
        grant_types_supported: [JWT_BEARER_GRANT, CLIENT_CREDENTIALS_GRANT],
        token_endpoint_auth_methods_supported: ["none"],
        revocation_endpoint_auth_methods_supported: ["none"],
        scopes_supported: scopes,
        service_documentation: base.join(paths::AUTH_MD),
        agent_auth: AgentAuth {
            skill: base.join(paths::AUTH_MD),
            register_uri: base.join(paths::AGENT_IDENTITY),
            identity_endpoint: base.join(paths::AGENT_IDENTITY),
            claim_uri: base.join(paths::AGENT_IDENTITY_CLAIM),
            claim_endpoint: base.join(paths::AGENT_IDENTITY_CLAIM),
            revocation_uri: base.join(paths::OAUTH_REVOKE),
            identity_types_supported: ["anonymous"],
            anonymous: AnonymousMethod {
                credential_types_supported: ["access_token"],
            },
        },
    };

    Ok(vec![
        Artifact::json(
            paths::PROTECTED_RESOURCE,
            JSON,
            CachePolicy::Content,
            &api_metadata,
        )
        .map_err(error("protected resource metadata"))?,
        Artifact::json(
            paths::PROTECTED_RESOURCE_MCP,
            JSON,
            CachePolicy::Content,
            &mcp_metadata,
        )
        .map_err(error("MCP protected resource metadata"))?,
        Artifact::json(
            paths::AUTHORIZATION_SERVER,
            JSON,
            CachePolicy::Content,
            &server_metadata,
        )
        .map_err(error("authorization server metadata"))?,
        jwks(input.jwks)?,
    ])
}

/// The OAuth discovery documents' operations in `/openapi.json`.
pub(crate) fn operations(_: &Context<'_>) -> Operations {
    use operation::metadata;
    vec![
        (
            paths::PROTECTED_RESOURCE,
            metadata(
                "getProtectedResourceMetadata",
                "OAuth protected resource metadata (RFC 9728)",
            ),
        ),
        (
            paths::PROTECTED_RESOURCE_MCP,
            metadata(
                "getMcpProtectedResourceMetadata",
                "OAuth protected resource metadata for the MCP endpoint (RFC 9728)",
            ),
        ),
        (
            paths::AUTHORIZATION_SERVER,
            metadata(
                "getAuthorizationServerMetadata",
                "OAuth authorization server metadata (RFC 8414) with agent_auth",
            ),
        ),
        (
            paths::JWKS,
            metadata(
                "getJwks",
                "Public keys that sign identity assertions (RFC 7517)",
            ),
        ),
    ]
}
