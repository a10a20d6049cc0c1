//! The auth endpoints' request and answer bodies, as the types that read and write them
//! (and from which `/openapi.json` derives their schemas).

use schemars::JsonSchema;
use serde::Serialize;

use super::form::Form;
use crate::config::{CLIENT_CREDENTIALS_GRANT, JWT_BEARER_GRANT};

/// `POST /agent/identity` body (checked field by field in `AuthService::register`, whose
/// error messages are more specific than a decoder's).
#[derive(JsonSchema)]
pub(crate) struct RegistrationRequest {
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["anonymous"]))]
    #[expect(dead_code, reason = "describes the body for the published schema")]
    pub(super) kind: &'static str,
}

/// `POST /agent/identity` answer: the assertion flat (auth.md) and nested (newer clients).
#[derive(Serialize, JsonSchema)]
pub(crate) struct Registration<'a> {
    pub(super) registration_id: &'a str,
    #[schemars(extend("enum" = ["anonymous"]))]
    pub(super) registration_type: &'static str,
    /// The registration id again, for newer auth.md clients.
    pub(super) id: &'a str,
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["anonymous"]))]
    pub(super) kind: &'static str,
    /// ES256 JWT (typ oauth-id-jag+jwt), verifiable with the JWKS.
    pub(super) identity_assertion: &'a str,
    #[schemars(range(min = 1))]
    pub(super) expires_in: u64,
    #[schemars(extend("format" = "date-time"))]
    pub(super) expires_at: &'a str,
    #[schemars(extend("format" = "date-time"))]
    pub(super) assertion_expires: &'a str,
    pub(super) identity: IdentityBlock<'a>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct IdentityBlock<'a> {
    pub(super) assertion: &'a str,
    #[schemars(extend("format" = "date-time"))]
    pub(super) expires_at: &'a str,
}

/// `POST /oauth2/token` form parameters, as read from the form.
#[derive(JsonSchema)]
pub(crate) struct TokenRequest<'a> {
    #[schemars(extend("enum" = [JWT_BEARER_GRANT, CLIENT_CREDENTIALS_GRANT]))]
    pub(super) grant_type: Option<&'a str>,
    /// The identity_assertion; required for the jwt-bearer grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) assertion: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) scope: Option<&'a str>,
    /// This service's base URL or its MCP endpoint (RFC 8707); may be empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) resource: Option<&'a str>,
    /// An untrusted label; never a credential.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[expect(
        dead_code,
        reason = "accepted and ignored; listed for the published schema"
    )]
    pub(super) client_id: Option<&'a str>,
}

/// `POST /oauth2/token` answer: an opaque PASETO v4.local access token, no refresh token.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct TokenResponse<'a> {
    pub(super) access_token: &'a str,
    #[schemars(extend("enum" = ["Bearer"]))]
    pub(super) token_type: &'static str,
    #[schemars(range(min = 1))]
    pub(super) expires_in: u64,
    pub(super) scope: &'a str,
}

impl<'a> TokenRequest<'a> {
    pub(super) fn from_form(form: &'a Form) -> TokenRequest<'a> {
        TokenRequest {
            grant_type: form.get("grant_type"),
            assertion: form.get("assertion"),
            scope: form.get("scope"),
            resource: form.get("resource"),
            client_id: form.get("client_id"),
        }
    }
}

/// `POST /oauth2/revoke` form parameters (RFC 7009), as read from the form.
#[derive(JsonSchema)]
pub(crate) struct RevocationRequest<'a> {
    /// An access token or an identity assertion.
    #[schemars(length(min = 1))]
    pub(super) token: Option<&'a str>,
    /// Accepted and not needed: the token's form says what it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[expect(
        dead_code,
        reason = "accepted and ignored; listed for the published schema"
    )]
    pub(super) token_type_hint: Option<&'a str>,
}

impl<'a> RevocationRequest<'a> {
    pub(super) fn from_form(form: &'a Form) -> RevocationRequest<'a> {
        RevocationRequest {
            token: form.get("token"),
            token_type_hint: form.get("token_type_hint"),
        }
    }
}
