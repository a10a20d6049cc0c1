//! The auth endpoints' request and answer bodies: registration, the token exchange and
//! revocation (`/openapi.json` derives their schemas from these types).

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{CLIENT_CREDENTIALS_GRANT, JWT_BEARER_GRANT};

/// `POST /agent/identity` body (checked field by field in `AuthService::register`, whose
/// error messages are more specific than a decoder's).
#[derive(JsonSchema)]
pub(crate) struct RegistrationRequest {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["anonymous"]))]
    #[expect(dead_code, reason = "describes the body for the published schema")]
    pub(crate) kind: &'static str,
}

/// `POST /agent/identity` answer: the assertion flat (auth.md) and nested (newer clients).
#[derive(Serialize, JsonSchema)]
pub(crate) struct Registration<'a> {
    pub(crate) registration_id: &'a str,
    #[schemars(extend("enum" = ["anonymous"]))]
    pub(crate) registration_type: &'static str,
    /// The registration id again, for newer auth.md clients.
    pub(crate) id: &'a str,
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["anonymous"]))]
    pub(crate) kind: &'static str,
    /// ES256 JWT (typ oauth-id-jag+jwt), verifiable with the JWKS.
    pub(crate) identity_assertion: &'a str,
    #[schemars(range(min = 1))]
    pub(crate) expires_in: u64,
    #[schemars(extend("format" = "date-time"))]
    pub(crate) expires_at: &'a str,
    #[schemars(extend("format" = "date-time"))]
    pub(crate) assertion_expires: &'a str,
    pub(crate) identity: IdentityBlock<'a>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct IdentityBlock<'a> {
    pub(crate) assertion: &'a str,
    #[schemars(extend("format" = "date-time"))]
    pub(crate) expires_at: &'a str,
}

/// `POST /oauth2/token` form parameters, as read from the form.
#[derive(JsonSchema)]
pub(crate) struct TokenRequest<'a> {
    #[schemars(extend("enum" = [JWT_BEARER_GRANT, CLIENT_CREDENTIALS_GRANT]))]
    pub(crate) grant_type: Option<&'a str>,
    /// The identity_assertion; required for the jwt-bearer grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) assertion: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scope: Option<&'a str>,
    /// This service's base URL or its MCP endpoint (RFC 8707); may be empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resource: Option<&'a str>,
    /// An untrusted label; never a credential.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[expect(
        dead_code,
        reason = "accepted and ignored; listed for the published schema"
    )]
    pub(crate) client_id: Option<&'a str>,
}

/// `POST /oauth2/token` answer: an opaque PASETO v4.local access token, no refresh token.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct TokenResponse<'a> {
    pub(crate) access_token: &'a str,
    #[schemars(extend("enum" = ["Bearer"]))]
    pub(crate) token_type: &'static str,
    #[schemars(range(min = 1))]
    pub(crate) expires_in: u64,
    pub(crate) scope: &'a str,
}

/// `POST /oauth2/revoke` form parameters (RFC 7009), as read from the form.
#[derive(JsonSchema)]
pub(crate) struct RevocationRequest<'a> {
    /// An access token or an identity assertion.
    #[schemars(length(min = 1))]
    pub(crate) token: Option<&'a str>,
    /// Accepted and not needed: the token's form says what it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[expect(
        dead_code,
        reason = "accepted and ignored; listed for the published schema"
    )]
    pub(crate) token_type_hint: Option<&'a str>,
}
