//! The auth endpoints as plain functions from parsed requests to [`AuthReply`]s:
//! registration, token exchange, revocation, claim and the authorization endpoint.
//!
//! [`AuthService`] owns everything they need (keys, the revocation store, the policy and the
//! rate limiters) and takes `now` as an argument, so every rule can be tested without a
//! socket or a real clock. `serve` only turns HTTP into [`PostRequest`]s and answers back.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwap;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hyper::header::{HeaderValue, WWW_AUTHENTICATE};
use hyper::StatusCode;

use super::access::{self, AccessTokenError, VerifiedTokens};
use super::active_keys::ActiveKeys;
use super::admission::{Admitted, Limiter, Minting, RateLimits};
use super::assertion::{self, AssertionClaims, AssertionError, Expectations};
use super::form::{self, Form};
use super::keys::{Keyring, PublicJwk};
use super::limits::RateLimiter;
use super::reply::AuthReply;
use super::store::{RevocationStore, StoreError, StoreHealth};
use super::{random_id, CryptoError};
use crate::clock::{rfc3339, unix_seconds};
use crate::config::{AuthPolicy, BaseUrl, CLIENT_CREDENTIALS_GRANT, JWT_BEARER_GRANT};
use crate::paths;
use crate::wire::{IdentityBlock, Registration, RevocationRequest, TokenRequest, TokenResponse};

/// Registration types that present an assertion from another issuer (AUTH.md's
/// `identity_assertion`, the ID-JAG profile): none is trusted here.
const ASSERTION_TYPES: [&str; 2] = ["identity_assertion", "id_jag"];

/// What the auth endpoints read from an HTTP POST.
#[derive(Debug, Clone, Copy)]
pub struct PostRequest<'a> {
    pub content_type: Option<&'a str>,
    /// The `Authorization` header, if exactly one was sent.
    pub authorization: Option<&'a str>,
    pub body: &'a [u8],
}

/// Everything the auth endpoints need, shared by all requests.
pub struct AuthService {
    /// Credentials revoked, and minting requests refused by a rate limit (for `/metrics`).
    revocations: std::sync::atomic::AtomicU64,
    rate_limited: std::sync::atomic::AtomicU64,
    base_url: BaseUrl,
    audience: String,
    policy: AuthPolicy,
    /// Swapped whole when the keyring is rotated, so a request sees one keyring throughout.
    keys: ArcSwap<ActiveKeys>,
    store: Box<dyn RevocationStore>,
    verified: VerifiedTokens,
    register_limit: Limiter,
    token_limit: Limiter,
}

impl AuthService {
    pub fn new(
        base_url: BaseUrl,
        policy: AuthPolicy,
        keys: Keyring,
        store: Box<dyn RevocationStore>,
        limits: RateLimits,
    ) -> Result<AuthService, CryptoError> {
        let keys = ActiveKeys::new(keys, &policy)?;
        Ok(AuthService {
            revocations: Default::default(),
            rate_limited: Default::default(),
            audience: base_url.join("/"),
            base_url,
            policy,
            keys: ArcSwap::from_pointee(keys),
            store,
            verified: VerifiedTokens::default(),
            register_limit: Limiter::Local(RateLimiter::new(limits.register_per_minute)),
            token_limit: Limiter::Local(RateLimiter::new(limits.token_per_minute)),
        })
    }

    /// Replaces the in-process rate limits with shared ones (several instances).
    pub fn with_limiters(mut self, register: Limiter, token: Limiter) -> AuthService {
        self.register_limit = register;
        self.token_limit = token;
        self
    }

    /// Takes one request of `kind` from `client`'s allowance, or says why not.
    pub async fn admit(
        &self,
        kind: Minting,
        client: IpAddr,
        now: SystemTime,
    ) -> Result<Admitted, AuthReply> {
        let admitted = match kind {
            Minting::Registration => self.register_limit.admit(client, now).await,
            Minting::Token => self.token_limit.admit(client, now).await,
        };
        if let Err(refusal) = admitted {
            if refusal.status == StatusCode::TOO_MANY_REQUESTS {
                self.rate_limited
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return Err(refusal);
        }
        Ok(Admitted { kind })
    }

    /// Credentials revoked and minting requests refused by a rate limit, so far.
    pub fn counts(&self) -> (u64, u64) {
        let load = |counter: &std::sync::atomic::AtomicU64| {
            counter.load(std::sync::atomic::Ordering::Relaxed)
        };
        (load(&self.revocations), load(&self.rate_limited))
    }

    /// A permit for the wrong endpoint is a bug in the caller, answered like one.
    fn spend(admitted: Admitted, kind: Minting) -> Result<(), AuthReply> {
        if admitted.kind == kind {
            return Ok(());
        }
        tracing::error!(?kind, "a rate-limit permit was spent on the wrong endpoint");
        Err(AuthReply::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the request could not be admitted",
        ))
    }

    /// The keys in use now.
    pub fn keys(&self) -> Arc<ActiveKeys> {
        self.keys.load_full()
    }

    /// Starts using `keyring` (after a rotation) for every request from now on.
    pub fn install_keys(&self, keyring: Keyring) -> Result<(), CryptoError> {
        self.keys
            .store(Arc::new(ActiveKeys::new(keyring, &self.policy)?));
        // A token verified with a key the new keyring no longer has must not stay accepted
        // from the cache: every token is verified again with the keys now in use.
        self.verified.clear();
        Ok(())
    }

    /// The identity keys the JWKS publishes at `now`: the current one and any retired one
    /// whose assertions may still be valid.
    pub fn published_jwks(&self, now: SystemTime) -> Vec<PublicJwk> {
        self.keys
            .load()
            .keyring
            .published_jwks(&self.policy, unix_seconds(now))
    }

    /// The audience every access token carries: `BASE/`, the protected resource.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Checks a presented bearer token: authentic, unexpired, and neither it nor the
    /// assertion it came from revoked. A token seen before skips decryption (a hash lookup in
    /// [`VerifiedTokens`]); its times and revocation are still checked on every request.
    pub fn check_access_token(&self, token: &str, now: SystemTime) -> Result<(), AccessTokenError> {
        let skew = self.policy.clock_skew;
        let verified = match self.verified.get(token) {
            Some(verified) => verified,
            None => {
                let keys = self.keys.load();
                let usable = keys.keyring.access_keys(&self.policy, unix_seconds(now));
                let claims = access::verify(usable, token, &self.audience, now, skew)?;
                self.verified.insert(token, claims)?
            }
        };
        if now >= verified.expires + skew {
            return Err(AccessTokenError::Expired);
        }
        if verified.issued > now + skew {
            return Err(AccessTokenError::NotYetValid);
        }
        self.store
            .readable()
            .map_err(|_| AccessTokenError::Unverifiable)?;
        let revoked = self.store.is_revoked(&verified.jti)
            || verified
                .assertion_jti
                .as_deref()
                .is_some_and(|jti| self.store.is_revoked(jti));
        if revoked {
            return Err(AccessTokenError::Revoked);
        }
        Ok(())
    }

    /// `POST /agent/identity`: `{"type": "anonymous"}` in, an identity assertion out.
    pub fn register(
        &self,
        admitted: Admitted,
        request: PostRequest<'_>,
        now: SystemTime,
    ) -> AuthReply {
        if let Err(answer) = Self::spend(admitted, Minting::Registration) {
            return answer;
        }
        if !form::is_media_type(request.content_type, crate::wire::JSON) {
            return AuthReply::bad_request(
                "invalid_request",
                "send a JSON body with Content-Type: application/json, e.g. {\"type\": \"anonymous\"}",
            );
        }
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(request.body) else {
            return AuthReply::bad_request("invalid_request", "the body is not valid JSON");
        };
        let Some(object) = body.as_object() else {
            return AuthReply::bad_request("invalid_request", "the body must be a JSON object");
        };
        match object.get("type") {
            None => {
                return AuthReply::bad_request(
                    "invalid_request",
                    "the field `type` is required; use \"anonymous\"",
                )
            }
            Some(serde_json::Value::String(kind)) if kind == "anonymous" => {}
            // AUTH.md v0.6+ agents try `service_auth` and the assertion-based types whatever
            // the metadata says, and fall back on these codes: each gets its own.
            Some(serde_json::Value::String(kind)) if kind == "service_auth" => {
                return AuthReply::bad_request(
                    "service_auth_not_enabled",
                    "service_auth registration is not enabled here (service_auth_registration_disabled); register with {\"type\": \"anonymous\"}",
                )
            }
            Some(serde_json::Value::String(kind)) if ASSERTION_TYPES.contains(&kind.as_str()) => {
                return AuthReply::bad_request(
                    "issuer_not_enabled",
                    "no assertion issuer is enabled here; register with {\"type\": \"anonymous\"}",
                )
            }
            Some(serde_json::Value::String(_)) => {
                return AuthReply::bad_request(
                    "unsupported_identity_type",
                    "only the identity type \"anonymous\" is supported",
                )
            }
            Some(_) => {
                return AuthReply::bad_request("invalid_request", "the field `type` must be a string")
            }
        }

        let (Ok(registration_id), Ok(jti)) = (random_id("reg_"), random_id("as_")) else {
            return AuthReply::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "no randomness available",
            );
        };
        let lifetime = self.policy.identity_assertion_lifetime;
        let issued = unix_seconds(now);
        let claims = AssertionClaims {
            iss: self.base_url.to_string(),
            sub: registration_id.clone(),
            aud: self.base_url.to_string(),
            jti,
            iat: issued,
            nbf: issued,
            exp: issued + lifetime.as_secs(),
            registration_type: "anonymous".into(),
        };
        let assertion = match self.keys.load().signer.sign(&claims) {
            Ok(assertion) => assertion,
            Err(error) => {
                tracing::error!(%error, "cannot sign an identity assertion");
                return AuthReply::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "the assertion could not be signed",
                );
            }
        };
        let expires_at = rfc3339(claims.expires_at());
        tracing::info!(registration = %registration_id, "anonymous registration");
        AuthReply::json(
            StatusCode::OK,
            &Registration {
                registration_id: &registration_id,
                registration_type: "anonymous",
                id: &registration_id,
                kind: "anonymous",
                identity_assertion: &assertion,
                expires_in: lifetime.as_secs(),
                expires_at: &expires_at,
                assertion_expires: &expires_at,
                identity: IdentityBlock {
                    assertion: &assertion,
                    expires_at: &expires_at,
                },
            },
        )
    }

    /// `POST /oauth2/token`: the jwt-bearer grant and secretless `client_credentials`.
    pub fn token(
        &self,
        admitted: Admitted,
        request: PostRequest<'_>,
        now: SystemTime,
    ) -> AuthReply {
        if let Err(answer) = Self::spend(admitted, Minting::Token) {
            return answer;
        }
        let form = match form::parse(request.content_type, request.body) {
            Ok(form) => form,
            Err(error) => return AuthReply::bad_request("invalid_request", &error.description()),
        };
        if let Some(refusal) = refuse_client_authentication(&form, request.authorization) {
            return refusal;
        }
        let request = TokenRequest::from_form(&form);
        let scope = match self.granted_scope(request.scope) {
            Ok(scope) => scope,
            Err(answer) => return answer,
        };
        if let Some(resource) = request.resource {
            if !self.is_our_resource(resource) {
                return AuthReply::bad_request(
                    "invalid_target",
                    &format!(
                        "the only resources here are {} and {}",
                        self.audience,
                        self.base_url.join(paths::MCP)
                    ),
                );
            }
        }
        let lifetime = self.policy.access_token_lifetime;
        let (subject, assertion_jti, lifetime) = match request.grant_type {
            None => {
                return AuthReply::bad_request(
                    "invalid_request",
                    "the parameter `grant_type` is required",
                )
            }
            Some(JWT_BEARER_GRANT) => {
                let Some(assertion) = request.assertion else {
                    return AuthReply::bad_request(
                        "invalid_request",
                        "the jwt-bearer grant needs the parameter `assertion`",
                    );
                };
                if let Err(error) = self.store.readable() {
                    return AuthReply::unavailable(&error);
                }
                let claims = match self.check_assertion(assertion, now) {
                    Ok(claims) => claims,
                    Err(error) => {
                        return AuthReply::bad_request("invalid_grant", error.description())
                    }
                };
                // An access token never outlives its assertion, so revoking the assertion
                // (kept on record until the assertion expires) always covers it.
                let remaining = claims.expires_at().duration_since(now).unwrap_or_default();
                (claims.sub, Some(claims.jti), lifetime.min(remaining))
            }
            Some(CLIENT_CREDENTIALS_GRANT) => match random_id("anon_") {
                // The client_id is an untrusted label: every such token gets a fresh subject.
                Ok(subject) => (subject, None, lifetime),
                Err(_) => {
                    return AuthReply::error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "server_error",
                        "no randomness available",
                    )
                }
            },
            Some(_) => {
                return AuthReply::bad_request(
                    "unsupported_grant_type",
                    &format!(
                        "supported grant types: {JWT_BEARER_GRANT}, {CLIENT_CREDENTIALS_GRANT}"
                    ),
                )
            }
        };
        if lifetime.is_zero() {
            return AuthReply::bad_request("invalid_grant", AssertionError::Expired.description());
        }
        let minted = access::claims(
            self.base_url.as_str(),
            &self.audience,
            &subject,
            &scope,
            lifetime,
            now,
            assertion_jti,
        )
        .map_err(CryptoError::from)
        .and_then(|claims| access::mint(&self.keys.load().keyring.current().access, &claims));
        match minted {
            Ok(token) => AuthReply::json(
                StatusCode::OK,
                &TokenResponse {
                    access_token: &token,
                    token_type: "Bearer",
                    expires_in: lifetime.as_secs(),
                    scope: &scope,
                },
            ),
            Err(error) => {
                tracing::error!(%error, "cannot mint an access token");
                AuthReply::error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "the token could not be issued",
                )
            }
        }
    }

    /// `POST /oauth2/revoke` (RFC 7009): always 200 for a well-formed request, also for
    /// tokens we do not know. Revoking an assertion also revokes its access tokens.
    pub async fn revoke(&self, request: PostRequest<'_>, now: SystemTime) -> AuthReply {
        let form = match form::parse(request.content_type, request.body) {
            Ok(form) => form,
            Err(error) => return AuthReply::bad_request("invalid_request", &error.description()),
        };
        let Some(token) = RevocationRequest::from_form(&form).token else {
            return AuthReply::bad_request("invalid_request", "the parameter `token` is required");
        };
        let keys = self.keys.load();
        let at = unix_seconds(now);
        let usable = keys.keyring.access_keys(&self.policy, at);
        let target = if let Ok(claims) = access::open(usable, token, &self.audience) {
            claims.expires_at().map(|expires| (claims.jti, expires))
        } else {
            let key = |kid: Option<&str>| keys.identity_point(kid, at);
            assertion::verify(token, key, &self.expectations(now, false))
                .ok()
                .map(|claims| (claims.jti.clone(), claims.expires_at()))
        };
        if let Some((jti, expires)) = target {
            // Keep the record a little past expiry so clock skew cannot revive the token, but
            // never longer than any credential of ours can live: that bounds the store
            // whatever `exp` says.
            let longest = self
                .policy
                .identity_assertion_lifetime
                .max(self.policy.access_token_lifetime);
            let keep_until =
                (expires + self.policy.clock_skew).min(now + longest + self.policy.clock_skew);
            if keep_until > now {
                // Logged once per credential: a client repeating a revocation must not be
                // able to flood the log.
                let first = !self.store.is_revoked(&jti);
                if let Err(error) = self.store.revoke(&jti, keep_until).await {
                    return AuthReply::unavailable(&error);
                }
                if first {
                    self.revocations
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::info!(credential = %jti, "revoked");
                }
            }
        }
        AuthReply {
            status: StatusCode::OK,
            content_type: crate::wire::JSON,
            body: b"{}\n".to_vec(),
            headers: Vec::new(),
        }
    }

    /// Forgets revocations of credentials that have expired anyway.
    pub async fn purge_expired(&self, now: SystemTime) -> Result<usize, StoreError> {
        self.store.purge_expired(now).await
    }

    /// Whether revocations can currently be written.
    pub fn store_health(&self) -> StoreHealth {
        self.store.health()
    }

    fn check_assertion(
        &self,
        token: &str,
        now: SystemTime,
    ) -> Result<AssertionClaims, AssertionError> {
        let keys = self.keys.load();
        let key = |kid: Option<&str>| keys.identity_point(kid, unix_seconds(now));
        let claims = assertion::verify(token, key, &self.expectations(now, true))?;
        if self.store.is_revoked(&claims.jti) {
            return Err(AssertionError::Revoked);
        }
        Ok(claims)
    }

    /// What our own assertions must satisfy; revocation skips the time checks.
    fn expectations(&self, now: SystemTime, check_time: bool) -> Expectations<'_> {
        Expectations {
            issuer: self.base_url.as_str(),
            now,
            skew: self.policy.clock_skew,
            max_lifetime: self.policy.identity_assertion_lifetime,
            check_time,
        }
    }

    fn granted_scope(&self, requested: Option<&str>) -> Result<String, AuthReply> {
        let Some(requested) = requested else {
            return Ok(self.policy.scopes.join(" "));
        };
        let mut granted: Vec<&str> = Vec::new();
        for scope in requested.split(' ').filter(|s| !s.is_empty()) {
            if !self.policy.scopes.iter().any(|known| known == scope) {
                return Err(AuthReply::bad_request(
                    "invalid_scope",
                    &format!("unknown scope; supported: {}", self.policy.scopes.join(" ")),
                ));
            }
            if !granted.contains(&scope) {
                granted.push(scope);
            }
        }
        if granted.is_empty() {
            return Ok(self.policy.scopes.join(" "));
        }
        Ok(granted.join(" "))
    }

    /// RFC 8707 `resource`: the API root (with or without its slash) or the MCP endpoint.
    fn is_our_resource(&self, resource: &str) -> bool {
        resource == self.base_url.as_str()
            || resource == self.audience
            || resource == self.base_url.join(paths::MCP)
    }
}

/// This token endpoint takes no client credentials. A client that sends a secret, a client
/// assertion or a Basic password expects them to be checked; refusing says clearly that
/// they are not (RFC 6749 §5.2 `invalid_client`, 401 with a challenge for header auth).
fn refuse_client_authentication(form: &Form, authorization: Option<&str>) -> Option<AuthReply> {
    if form.has("client_secret")
        || form.has("client_assertion")
        || form.has("client_assertion_type")
    {
        return Some(AuthReply::error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "this service takes no client credentials; drop client_secret / client_assertion",
        ));
    }
    let header = authorization?;
    let refusal = AuthReply::error(
        StatusCode::UNAUTHORIZED,
        "invalid_client",
        "this service takes no client credentials; drop the Authorization header",
    )
    .with_header(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"dossier\""),
    );
    let (scheme, credentials) = header.trim().split_once(' ').unwrap_or((header, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return Some(refusal);
    }
    // Basic with an empty password is how some libraries send a public client's id.
    let decoded = STANDARD
        .decode(credentials.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    match decoded.as_deref().and_then(|text| text.split_once(':')) {
        Some((_, "")) => None,
        _ => Some(refusal),
    }
}

/// `POST /agent/identity/claim`: this service is anonymous-only, so every claim fails the
/// same way, whatever the body.
pub fn claim() -> AuthReply {
    AuthReply::error(
        StatusCode::BAD_REQUEST,
        "claim_not_supported",
        "this service offers anonymous access only; registrations cannot be claimed or linked to an account",
    )
}

/// The `authorization_endpoint`: there is no interactive login, so it explains where to go
/// instead. Browsers get a page, programs get JSON.
pub fn authorize(wants_html: bool, base: &BaseUrl) -> AuthReply {
    let auth_md = base.join(paths::AUTH_MD);
    if wants_html {
        let page = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>No interactive login</title></head>\n<body><main><h1>No interactive login</h1><p>This service has no user login, so there is nothing to authorize here.</p><p>Agents register anonymously and exchange their identity for an access token; the steps are in <a href=\"{auth_md}\">auth.md</a>. Reading the public company information needs no token at all.</p></main></body></html>\n"
        );
        AuthReply {
            status: StatusCode::BAD_REQUEST,
            content_type: "text/html; charset=utf-8",
            body: page.into_bytes(),
            headers: Vec::new(),
        }
    } else {
        AuthReply::bad_request(
            "unsupported_response_type",
            &format!("interactive authorization is not offered; agents register anonymously as described in {auth_md}"),
        )
    }
}

/// The auth rules, one a row, against the service itself: no HTTP.
#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::*;
    use crate::auth::store::EmbeddedStore;

    const BASE: &str = "https://info.example.com";
    use crate::wire::JSON;
    const FORM: &str = "application/x-www-form-urlencoded";

    fn service(state: &std::path::Path, limits: RateLimits) -> AuthService {
        let now = crate::clock::unix_seconds(SystemTime::now());
        AuthService::new(
            BaseUrl::parse(BASE).unwrap(),
            AuthPolicy::default(),
            Keyring::generate(now).unwrap(),
            Box::new(EmbeddedStore::open(state).unwrap()),
            limits,
        )
        .unwrap()
    }

    fn post<'a>(content_type: &'a str, body: &'a str) -> PostRequest<'a> {
        PostRequest {
            content_type: Some(content_type),
            authorization: None,
            body: body.as_bytes(),
        }
    }

    fn json(answer: &AuthReply) -> serde_json::Value {
        serde_json::from_slice(&answer.body).unwrap()
    }

    const CLIENT: [u8; 4] = [192, 0, 2, 9];

    async fn register(service: &AuthService, request: PostRequest<'_>) -> AuthReply {
        let now = SystemTime::now();
        let admitted = service
            .admit(Minting::Registration, IpAddr::from(CLIENT), now)
            .await
            .unwrap();
        service.register(admitted, request, now)
    }

    async fn token(service: &AuthService, request: PostRequest<'_>) -> AuthReply {
        let now = SystemTime::now();
        let admitted = service
            .admit(Minting::Token, IpAddr::from(CLIENT), now)
            .await
            .unwrap();
        service.token(admitted, request, now)
    }

    async fn assertion(service: &AuthService) -> String {
        let answer = register(service, post(JSON, r#"{"type":"anonymous"}"#)).await;
        json(&answer)["identity_assertion"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[tokio::test]
    async fn a_token_is_checked_again_when_the_keys_change() {
        let state = tempfile::tempdir().unwrap();
        let service = service(state.path(), RateLimits::default());
        let now = SystemTime::now();
        let access = json(&token(&service, post(FORM, "grant_type=client_credentials")).await)
            ["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        // Verified once, so the next check is answered from the cache.
        assert!(service.check_access_token(&access, now).is_ok());
        assert!(service.check_access_token(&access, now).is_ok());
        let unix = crate::clock::unix_seconds(now);
        service
            .install_keys(Keyring::generate(unix).unwrap())
            .unwrap();
        assert!(
            service.check_access_token(&access, now).is_err(),
            "a token whose key is gone is refused at once, not served from the cache"
        );
    }

    #[tokio::test]
    async fn registration_rules() {
        let state = tempfile::tempdir().unwrap();
        let service = service(state.path(), RateLimits::default());
        for (rule, request, status, code) in [
            (
                "anonymous registration works",
                post(JSON, r#"{"type":"anonymous"}"#),
                200,
                None,
            ),
            (
                "the body must be JSON by its type",
                post("text/plain", r#"{"type":"anonymous"}"#),
                400,
                Some("invalid_request"),
            ),
            (
                "the body must parse",
                post(JSON, "{"),
                400,
                Some("invalid_request"),
            ),
            (
                "the body must be an object",
                post(JSON, "[]"),
                400,
                Some("invalid_request"),
            ),
            (
                "the type is required",
                post(JSON, "{}"),
                400,
                Some("invalid_request"),
            ),
            (
                "only anonymous identities",
                post(JSON, r#"{"type":"human"}"#),
                400,
                Some("unsupported_identity_type"),
            ),
            (
                "the type is a string",
                post(JSON, r#"{"type":1}"#),
                400,
                Some("invalid_request"),
            ),
            (
                "service_auth has its own code",
                post(JSON, r#"{"type":"service_auth"}"#),
                400,
                Some("service_auth_not_enabled"),
            ),
            (
                "assertion types have theirs",
                post(JSON, r#"{"type":"identity_assertion"}"#),
                400,
                Some("issuer_not_enabled"),
            ),
        ] {
            let answer = register(&service, request).await;
            assert_eq!(answer.status.as_u16(), status, "{rule}");
            assert_eq!(json(&answer)["error"].as_str(), code, "{rule}");
        }
    }

    #[tokio::test]
    async fn token_rules() {
        let state = tempfile::tempdir().unwrap();
        let service = service(state.path(), RateLimits::default());
        let assertion = assertion(&service).await;
        let jwt_bearer = format!("grant_type={JWT_BEARER_GRANT}&assertion={assertion}");
        let foreign_resource = format!("{jwt_bearer}&resource=https%3A%2F%2Fother.example");
        let own_resource = format!("{jwt_bearer}&resource={BASE}/mcp");
        let without_assertion = format!("grant_type={JWT_BEARER_GRANT}");
        let forged = format!("grant_type={JWT_BEARER_GRANT}&assertion=a.b.c");
        let rows: Vec<(&str, PostRequest, u16, Option<&str>)> = vec![
            (
                "the jwt-bearer grant exchanges an assertion",
                post(FORM, &jwt_bearer),
                200,
                None,
            ),
            (
                "client_credentials needs no secret",
                post(FORM, "grant_type=client_credentials"),
                200,
                None,
            ),
            (
                "the MCP endpoint is a resource of ours",
                post(FORM, &own_resource),
                200,
                None,
            ),
            (
                "the grant type is required",
                post(FORM, "scope=company%3Aread"),
                400,
                Some("invalid_request"),
            ),
            (
                "other grants are unsupported",
                post(FORM, "grant_type=password"),
                400,
                Some("unsupported_grant_type"),
            ),
            (
                "jwt-bearer needs its assertion",
                post(FORM, &without_assertion),
                400,
                Some("invalid_request"),
            ),
            (
                "a forged assertion is an invalid grant",
                post(FORM, &forged),
                400,
                Some("invalid_grant"),
            ),
            (
                "unknown scopes are refused",
                post(FORM, "grant_type=client_credentials&scope=admin"),
                400,
                Some("invalid_scope"),
            ),
            (
                "other resources are refused",
                post(FORM, &foreign_resource),
                400,
                Some("invalid_target"),
            ),
            (
                "a parameter may appear once",
                post(
                    FORM,
                    "grant_type=client_credentials&grant_type=client_credentials",
                ),
                400,
                Some("invalid_request"),
            ),
            (
                "forms only",
                post(JSON, r#"{"grant_type":"client_credentials"}"#),
                400,
                Some("invalid_request"),
            ),
            (
                "client secrets are refused",
                post(
                    FORM,
                    "grant_type=client_credentials&client_id=a&client_secret=b",
                ),
                401,
                Some("invalid_client"),
            ),
        ];
        for (rule, request, status, code) in rows {
            let answer = token(&service, request).await;
            assert_eq!(
                answer.status.as_u16(),
                status,
                "{rule}: {:?}",
                json(&answer)
            );
            assert_eq!(json(&answer)["error"].as_str(), code, "{rule}");
        }
    }

    #[tokio::test]
    async fn revocation_rules() {
        let state = tempfile::tempdir().unwrap();
        let service = service(state.path(), RateLimits::default());
        let now = SystemTime::now();
        let missing = service
            .revoke(post(FORM, "token_type_hint=access_token"), now)
            .await;
        assert_eq!(
            (missing.status.as_u16(), json(&missing)["error"].as_str()),
            (400, Some("invalid_request")),
            "the token is required"
        );
        let unknown = service
            .revoke(post(FORM, "token=nothing-of-ours"), now)
            .await;
        assert_eq!(
            (unknown.status.as_u16(), unknown.body.as_slice()),
            (200, &b"{}\n"[..]),
            "unknown tokens revoke quietly"
        );

        let assertion = assertion(&service).await;
        let exchange = format!("grant_type={JWT_BEARER_GRANT}&assertion={assertion}");
        let access = json(&token(&service, post(FORM, &exchange)).await)["access_token"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(service.check_access_token(&access, now).is_ok());
        let revoked = service
            .revoke(post(FORM, &format!("token={assertion}")), now)
            .await;
        assert_eq!(revoked.status.as_u16(), 200);
        assert_eq!(
            service.check_access_token(&access, now),
            Err(AccessTokenError::Revoked),
            "revoking an assertion revokes the tokens issued from it"
        );
        let again = token(&service, post(FORM, &exchange)).await;
        assert_eq!(
            json(&again)["error"],
            "invalid_grant",
            "a revoked assertion is not exchanged"
        );
    }

    #[tokio::test]
    async fn each_client_has_its_own_minting_allowance() {
        let state = tempfile::tempdir().unwrap();
        let limits = RateLimits {
            register_per_minute: 2,
            token_per_minute: 120,
        };
        let service = service(state.path(), limits);
        let now = SystemTime::now();
        let one = IpAddr::from([192, 0, 2, 1]);
        let other = IpAddr::from([192, 0, 2, 2]);
        for _ in 0..2 {
            assert!(service.admit(Minting::Registration, one, now).await.is_ok());
        }
        let refused = service
            .admit(Minting::Registration, one, now)
            .await
            .unwrap_err();
        assert_eq!(refused.status.as_u16(), 429);
        assert!(refused
            .headers
            .iter()
            .any(|(name, _)| name == hyper::header::RETRY_AFTER));
        assert!(
            service
                .admit(Minting::Registration, other, now)
                .await
                .is_ok(),
            "another client is unaffected"
        );
        assert!(
            service.admit(Minting::Token, one, now).await.is_ok(),
            "tokens have their own allowance"
        );
    }

    #[tokio::test]
    async fn a_permit_is_for_one_endpoint() {
        let state = tempfile::tempdir().unwrap();
        let service = service(state.path(), RateLimits::default());
        let now = SystemTime::now();
        let for_tokens = service
            .admit(Minting::Token, IpAddr::from(CLIENT), now)
            .await
            .unwrap();
        let answer = service.register(for_tokens, post(JSON, r#"{"type":"anonymous"}"#), now);
        assert_eq!(answer.status.as_u16(), 500);
    }
}
