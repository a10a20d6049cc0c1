//! Access tokens: PASETO `v4.local` (encrypted and authenticated with our symmetric key).
//!
//! Only this service ever reads them, so a local token is both the fastest choice (one
//! BLAKE2b check and an XChaCha20 decryption) and opaque to clients. An implicit assertion
//! binds every token to its purpose, so no other `v4.local` token minted with the same key
//! could be replayed as an access token.
//!
//! The footer names the key (`{"kid":"k4.lid.…"}`, its PASERK id), so after a rotation the
//! right key is picked without trying each. Tokens minted before keys had ids have no footer;
//! they are tried against every key that still opens tokens.

use super::CryptoError;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use pasetors::token::UntrustedToken;
use pasetors::version4::{LocalToken, V4};
use pasetors::Local;
use serde::{Deserialize, Serialize};

use super::keys::AccessKey;
use crate::clock::rfc3339;

const IMPLICIT_ASSERTION: &[u8] = b"dossier access token v1";
/// A token longer than this is not one of ours; refuse before doing any work.
pub const MAX_TOKEN_BYTES: usize = 4096;

/// What an access token says. Times are RFC 3339 strings, as PASETO's registered claims are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub jti: String,
    pub scope: String,
    pub iat: String,
    pub exp: String,
    /// The `jti` of the identity assertion this token was exchanged for, if any; revoking
    /// that assertion revokes this token too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion_jti: Option<String>,
}

impl AccessClaims {
    pub fn expires_at(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.exp).ok()
    }
}

/// Why a presented access token is refused. The text is safe to show to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.description())]
pub enum AccessTokenError {
    Malformed,
    BadSignature,
    Expired,
    NotYetValid,
    WrongAudience,
    Revoked,
    /// Revocations cannot be confirmed right now (a shared store is unreachable).
    Unverifiable,
}

impl AccessTokenError {
    pub fn description(self) -> &'static str {
        match self {
            AccessTokenError::Malformed => "the access token is malformed",
            AccessTokenError::BadSignature => "the access token was not issued by this service",
            AccessTokenError::Expired => "the access token has expired",
            AccessTokenError::NotYetValid => "the access token is not valid yet",
            AccessTokenError::WrongAudience => "the access token is for another resource",
            AccessTokenError::Revoked => "the access token has been revoked",
            AccessTokenError::Unverifiable => {
                "the token cannot be checked right now; retry shortly"
            }
        }
    }
}

/// The footer of our tokens: which key encrypted it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Footer {
    kid: String,
}

/// Encrypts `claims` into a `v4.local.` token whose footer names `key`.
pub fn mint(key: &AccessKey, claims: &AccessClaims) -> Result<String, CryptoError> {
    let payload = serde_json::to_vec(claims)?;
    let footer = serde_json::to_vec(&Footer {
        kid: key.id().to_string(),
    })?;
    LocalToken::encrypt(key.key(), &payload, Some(&footer), Some(IMPLICIT_ASSERTION))
        .map_err(|e| CryptoError::Seal(format!("{e:?}")))
}

/// Builds the claims for a token issued at `now`.
pub fn claims(
    issuer: &str,
    audience: &str,
    subject: &str,
    scope: &str,
    lifetime: Duration,
    now: SystemTime,
    assertion_jti: Option<String>,
) -> Result<AccessClaims, getrandom::Error> {
    Ok(AccessClaims {
        iss: issuer.to_string(),
        sub: subject.to_string(),
        aud: audience.to_string(),
        jti: super::random_id("at_")?,
        scope: scope.to_string(),
        iat: rfc3339(now),
        exp: rfc3339(now + lifetime),
        assertion_jti,
    })
}

/// Decrypts a token and checks only that it is ours (authentic, for `audience`), not its
/// times: revocation must accept tokens that are about to expire or already have.
/// `keys` are those that may open tokens now, current first.
pub fn open<'k>(
    keys: impl IntoIterator<Item = &'k AccessKey>,
    token: &str,
    audience: &str,
) -> Result<AccessClaims, AccessTokenError> {
    if token.len() > MAX_TOKEN_BYTES || !token.starts_with("v4.local.") {
        return Err(AccessTokenError::Malformed);
    }
    let untrusted =
        UntrustedToken::<Local, V4>::try_from(token).map_err(|_| AccessTokenError::Malformed)?;
    let decrypt = |key: &AccessKey| {
        LocalToken::decrypt(key.key(), &untrusted, None, Some(IMPLICIT_ASSERTION)).ok()
    };
    let footer = untrusted.untrusted_footer();
    let trusted = if footer.is_empty() {
        keys.into_iter().find_map(decrypt)
    } else {
        let footer: Footer =
            serde_json::from_slice(footer).map_err(|_| AccessTokenError::Malformed)?;
        keys.into_iter()
            .find(|key| key.id() == footer.kid)
            .and_then(decrypt)
    }
    .ok_or(AccessTokenError::BadSignature)?;
    let claims: AccessClaims =
        serde_json::from_str(trusted.payload()).map_err(|_| AccessTokenError::Malformed)?;
    if claims.aud != audience {
        return Err(AccessTokenError::WrongAudience);
    }
    Ok(claims)
}

/// Decrypts and checks a token: authenticity, audience, and validity at `now` with `skew`.
/// Revocation is the caller's concern (it needs the store).
pub fn verify<'k>(
    keys: impl IntoIterator<Item = &'k AccessKey>,
    token: &str,
    audience: &str,
    now: SystemTime,
    skew: Duration,
) -> Result<AccessClaims, AccessTokenError> {
    let claims = open(keys, token, audience)?;
    let parse =
        |text: &str| humantime::parse_rfc3339(text).map_err(|_| AccessTokenError::Malformed);
    let expires = parse(&claims.exp)?;
    let issued = parse(&claims.iat)?;
    if now >= expires + skew {
        return Err(AccessTokenError::Expired);
    }
    if issued > now + skew {
        return Err(AccessTokenError::NotYetValid);
    }
    Ok(claims)
}

/// What a verified token says that later requests still need to check.
#[derive(Debug)]
pub struct Verified {
    pub jti: String,
    pub assertion_jti: Option<String>,
    pub issued: SystemTime,
    pub expires: SystemTime,
}

/// Tokens that already passed [`verify`], so a client that reuses its token (the usual case)
/// costs a hash lookup instead of a decryption. Only tokens this service minted get in, and
/// the map is emptied when it reaches [`VerifiedTokens::CAPACITY`], so it stays bounded.
#[derive(Default)]
pub struct VerifiedTokens {
    tokens: RwLock<HashMap<Box<str>, Arc<Verified>>>,
}

impl VerifiedTokens {
    pub const CAPACITY: usize = 10_000;

    /// Forgets every token (the keys changed).
    pub fn clear(&self) {
        if let Ok(mut tokens) = self.tokens.write() {
            tokens.clear();
        }
    }

    pub fn get(&self, token: &str) -> Option<Arc<Verified>> {
        self.tokens.read().ok()?.get(token).cloned()
    }

    /// Remembers a verified token; fails only if its times cannot be read (they were just
    /// checked, so that would be a bug, reported as a malformed token).
    pub fn insert(
        &self,
        token: &str,
        claims: AccessClaims,
    ) -> Result<Arc<Verified>, AccessTokenError> {
        let time =
            |text: &str| humantime::parse_rfc3339(text).map_err(|_| AccessTokenError::Malformed);
        let verified = Arc::new(Verified {
            issued: time(&claims.iat)?,
            expires: time(&claims.exp)?,
            jti: claims.jti,
            assertion_jti: claims.assertion_jti,
        });
        if let Ok(mut tokens) = self.tokens.write() {
            if tokens.len() >= Self::CAPACITY {
                tokens.clear();
            }
            tokens.insert(token.into(), Arc::clone(&verified));
        }
        Ok(verified)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::keys::Keyring;
    use crate::config::AuthPolicy;

    fn keys() -> Keyring {
        Keyring::generate(1_800_000_000).unwrap()
    }

    #[test]
    fn minted_tokens_verify_until_they_expire() {
        let keys = keys();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let claims = claims(
            "https://x.example",
            "https://x.example/",
            "anon_1",
            "company:read",
            Duration::from_secs(900),
            now,
            None,
        )
        .unwrap();
        let token = mint(&keys.current().access, &claims).unwrap();
        assert!(token.starts_with("v4.local."));
        let skew = Duration::from_secs(60);
        assert_eq!(
            verify(
                [&keys.current().access],
                &token,
                "https://x.example/",
                now,
                skew
            )
            .unwrap(),
            claims
        );
        let later = now + Duration::from_secs(900 + 59);
        assert!(verify(
            [&keys.current().access],
            &token,
            "https://x.example/",
            later,
            skew
        )
        .is_ok());
        let expired = now + Duration::from_secs(900 + 60);
        assert_eq!(
            verify(
                [&keys.current().access],
                &token,
                "https://x.example/",
                expired,
                skew
            ),
            Err(AccessTokenError::Expired)
        );
        assert_eq!(
            verify(
                [&keys.current().access],
                &token,
                "https://other/",
                now,
                skew
            ),
            Err(AccessTokenError::WrongAudience)
        );
        let early = now - Duration::from_secs(61);
        assert_eq!(
            verify(
                [&keys.current().access],
                &token,
                "https://x.example/",
                early,
                skew
            ),
            Err(AccessTokenError::NotYetValid)
        );
    }

    #[test]
    fn foreign_and_tampered_tokens_are_refused() {
        let (ours, theirs) = (keys(), keys());
        let now = SystemTime::now();
        let claims = claims(
            "i",
            "a",
            "s",
            "company:read",
            Duration::from_secs(60),
            now,
            None,
        )
        .unwrap();
        let token = mint(&theirs.current().access, &claims).unwrap();
        let skew = Duration::from_secs(60);
        assert_eq!(
            verify([&ours.current().access], &token, "a", now, skew),
            Err(AccessTokenError::BadSignature)
        );
        let mut tampered = mint(&ours.current().access, &claims).unwrap().into_bytes();
        let middle = tampered.len() / 2;
        tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert!(verify([&ours.current().access], &tampered, "a", now, skew).is_err());
        for junk in [
            "",
            "v4.local.",
            "v4.public.abc",
            "Bearer",
            &"v4.local.".repeat(1000),
        ] {
            assert!(
                verify([&ours.current().access], junk, "a", now, skew).is_err(),
                "{junk:?}"
            );
        }
    }

    #[test]
    fn tokens_of_a_retired_key_open_until_they_expire_and_the_footer_picks_the_key() {
        let policy = AuthPolicy::default();
        let before = keys();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let claims = claims(
            "i",
            "a",
            "s",
            "company:read",
            policy.access_token_lifetime,
            now,
            None,
        )
        .unwrap();
        let old_token = mint(&before.current().access, &claims).unwrap();
        let after = before.rotate(&policy, 1_800_000_000).unwrap();
        let keys: Vec<_> = after.access_keys(&policy, 1_800_000_000).collect();
        assert_eq!(keys.len(), 2);
        let skew = policy.clock_skew;
        assert_eq!(
            verify(keys.clone(), &old_token, "a", now, skew).unwrap(),
            claims
        );
        let new_token = mint(&after.current().access, &claims).unwrap();
        assert_eq!(
            verify(keys.clone(), &new_token, "a", now, skew).unwrap(),
            claims
        );
        assert_ne!(old_token.rsplit('.').next(), new_token.rsplit('.').next());

        // A footer naming a key we do not have, or not ours at all, is refused.
        let payload = serde_json::to_vec(&claims).unwrap();
        let key = after.current().access.key();
        let other = LocalToken::encrypt(
            key,
            &payload,
            Some(br#"{"kid":"k4.lid.nope"}"#),
            Some(IMPLICIT_ASSERTION),
        )
        .unwrap();
        assert_eq!(
            verify(keys.clone(), &other, "a", now, skew),
            Err(AccessTokenError::BadSignature)
        );
        let odd = LocalToken::encrypt(key, &payload, Some(b"not json"), Some(IMPLICIT_ASSERTION))
            .unwrap();
        assert_eq!(
            verify(keys.clone(), &odd, "a", now, skew),
            Err(AccessTokenError::Malformed)
        );
        // Tokens from before key ids (no footer) are tried against every key.
        let legacy = LocalToken::encrypt(
            before.current().access.key(),
            &payload,
            None,
            Some(IMPLICIT_ASSERTION),
        )
        .unwrap();
        assert_eq!(verify(keys, &legacy, "a", now, skew).unwrap(), claims);
        let only_new: Vec<_> = after.access_keys(&policy, 1_800_000_000 + 3600).collect();
        assert_eq!(
            verify(only_new, &legacy, "a", now, skew),
            Err(AccessTokenError::BadSignature)
        );
    }
}
