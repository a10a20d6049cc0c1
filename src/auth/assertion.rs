//! Identity assertions: ES256 JWTs that `POST /agent/identity` issues and
//! `POST /oauth2/token` accepts (RFC 7523 jwt-bearer).
//!
//! Signing and verification use `ring` (already in the tree through `rcgen`) on the compact
//! JWS form directly. A general JWT library would add dozens of crates for three base64
//! segments and one signature call, and this module must refuse far more than it accepts:
//! the algorithm is pinned to ES256 before anything else is looked at, so `alg: none`, HMAC
//! with the public key and every other algorithm-confusion trick fail at the first check.
//! An independent JOSE library verifies our assertions against the JWKS in CI.

use super::CryptoError;
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, UnparsedPublicKey};
use serde::{Deserialize, Serialize};

use super::keys::IdentityKey;
use crate::clock::{from_unix_seconds, unix_seconds};

/// The `typ` header of identity assertions (the auth.md identity JWT type). Access tokens
/// are PASETO, so they can never be mistaken for one.
pub const ASSERTION_TYPE: &str = "oauth-id-jag+jwt";
const ALGORITHM: &str = "ES256";
/// Assertions longer than this are not ours; refuse before decoding.
pub const MAX_ASSERTION_BYTES: usize = 4096;

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    kid: Option<String>,
    /// Extensions the issuer says a verifier must understand (RFC 7515 §4.1.11). This
    /// service defines none, so an assertion with a `crit` member, whatever its value, is
    /// refused.
    #[serde(default, deserialize_with = "present", skip_serializing)]
    crit: bool,
}

/// True for a member that is there at all, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(member: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(member).map(|_| true)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub jti: String,
    pub iat: u64,
    pub nbf: u64,
    pub exp: u64,
    pub registration_type: String,
}

impl AssertionClaims {
    pub fn expires_at(&self) -> SystemTime {
        from_unix_seconds(self.exp)
    }
}

/// Why an assertion is refused, in the order the checks run. The descriptions are safe to
/// return to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.description())]
pub enum AssertionError {
    Malformed,
    Algorithm,
    Type,
    Signature,
    CriticalExtension,
    Issuer,
    Audience,
    Expired,
    NotYetValid,
    IssuedInFuture,
    LifetimeTooLong,
    Revoked,
}

impl AssertionError {
    pub fn description(self) -> &'static str {
        match self {
            AssertionError::Malformed => "the assertion is not a well-formed JWT",
            AssertionError::Algorithm => "the assertion must be signed with ES256",
            AssertionError::Type => "the assertion has the wrong typ header",
            AssertionError::Signature => {
                "the assertion's signature does not verify with this service's key"
            }
            AssertionError::CriticalExtension => {
                "the assertion names critical header extensions (crit) this service does not understand"
            }
            AssertionError::Issuer => "the assertion was issued by someone else",
            AssertionError::Audience => "the assertion is meant for another audience",
            AssertionError::Expired => "the assertion has expired; register again",
            AssertionError::NotYetValid => "the assertion is not valid yet",
            AssertionError::IssuedInFuture => "the assertion claims to be issued in the future",
            AssertionError::LifetimeTooLong => {
                "the assertion's lifetime exceeds what this service issues"
            }
            AssertionError::Revoked => "the assertion has been revoked; register again",
        }
    }
}

/// Signs identity assertions.
pub struct AssertionSigner {
    pair: EcdsaKeyPair,
    kid: String,
    random: SystemRandom,
}

impl AssertionSigner {
    pub fn new(key: &IdentityKey) -> Result<AssertionSigner, CryptoError> {
        let random = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            key.pkcs8_der(),
            &random,
        )
        .map_err(|e| CryptoError::Key(format!("identity key rejected by ring: {e}")))?;
        Ok(AssertionSigner {
            pair,
            kid: key.kid().to_string(),
            random,
        })
    }

    pub fn sign(&self, claims: &AssertionClaims) -> Result<String, CryptoError> {
        let header = Header {
            alg: ALGORITHM.into(),
            typ: Some(ASSERTION_TYPE.into()),
            kid: Some(self.kid.clone()),
            crit: false,
        };
        let signing_input = format!("{}.{}", encode_json(&header)?, encode_json(claims)?);
        let signature = self
            .pair
            .sign(&self.random, signing_input.as_bytes())
            .map_err(|e| CryptoError::Seal(e.to_string()))?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

fn encode_json<T: Serialize>(value: &T) -> Result<String, CryptoError> {
    Ok(URL_SAFE_NO_PAD.encode(serde_json::to_vec(value)?))
}

/// What a verifier expects of an assertion.
pub struct Expectations<'a> {
    /// Both `iss` and `aud` must equal this (the issuer, `BASE`).
    pub issuer: &'a str,
    pub now: SystemTime,
    pub skew: Duration,
    pub max_lifetime: Duration,
    /// When false, expiry checks are skipped (revocation accepts expired assertions).
    pub check_time: bool,
}

/// Verifies `token` in the documented order: alg, typ, signature, iss, aud, exp/nbf/iat,
/// maximum lifetime. Revocation is the caller's last step (it needs the store).
///
/// `public_key` finds the verifying key (an uncompressed P-256 point) for the header's `kid`;
/// `None` means no key of ours has that id, and the signature is refused.
pub fn verify<'p>(
    token: &str,
    public_key: impl FnOnce(Option<&str>) -> Option<&'p [u8]>,
    expect: &Expectations<'_>,
) -> Result<AssertionClaims, AssertionError> {
    if token.len() > MAX_ASSERTION_BYTES {
        return Err(AssertionError::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header_b64), Some(claims_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(AssertionError::Malformed);
    };
    let decode = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| AssertionError::Malformed)
    };
    let header: Header =
        serde_json::from_slice(&decode(header_b64)?).map_err(|_| AssertionError::Malformed)?;
    if header.alg != ALGORITHM {
        return Err(AssertionError::Algorithm);
    }
    if header.typ.as_deref() != Some(ASSERTION_TYPE) {
        return Err(AssertionError::Type);
    }
    if header.crit {
        return Err(AssertionError::CriticalExtension);
    }
    let signature = decode(signature_b64)?;
    let signing_input = &token[..header_b64.len() + 1 + claims_b64.len()];
    let public_point = public_key(header.kid.as_deref()).ok_or(AssertionError::Signature)?;
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public_point)
        .verify(signing_input.as_bytes(), &signature)
        .map_err(|_| AssertionError::Signature)?;
    let claims: AssertionClaims =
        serde_json::from_slice(&decode(claims_b64)?).map_err(|_| AssertionError::Malformed)?;
    if claims.iss != expect.issuer {
        return Err(AssertionError::Issuer);
    }
    if claims.aud != expect.issuer {
        return Err(AssertionError::Audience);
    }
    if expect.check_time {
        let now = unix_seconds(expect.now);
        let skew = expect.skew.as_secs();
        if now >= claims.exp.saturating_add(skew) {
            return Err(AssertionError::Expired);
        }
        if claims.nbf > now.saturating_add(skew) {
            return Err(AssertionError::NotYetValid);
        }
        if claims.iat > now.saturating_add(skew) {
            return Err(AssertionError::IssuedInFuture);
        }
    }
    if claims.exp.saturating_sub(claims.iat) > expect.max_lifetime.as_secs()
        || claims.exp < claims.iat
    {
        return Err(AssertionError::LifetimeTooLong);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::keys::Keyring;

    const ISSUER: &str = "https://info.example.com";

    fn setup() -> (Keyring, AssertionSigner, SystemTime) {
        let keys = Keyring::generate(1_800_000_000).unwrap();
        let signer = AssertionSigner::new(&keys.current().identity).unwrap();
        (
            keys,
            signer,
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        )
    }

    fn claims(now: SystemTime, lifetime: u64) -> AssertionClaims {
        let now = unix_seconds(now);
        AssertionClaims {
            iss: ISSUER.into(),
            sub: "reg_1".into(),
            aud: ISSUER.into(),
            jti: "as_1".into(),
            iat: now,
            nbf: now,
            exp: now + lifetime,
            registration_type: "anonymous".into(),
        }
    }

    fn expect(now: SystemTime) -> Expectations<'static> {
        Expectations {
            issuer: ISSUER,
            now,
            skew: Duration::from_secs(60),
            max_lifetime: Duration::from_secs(3600),
            check_time: true,
        }
    }

    /// Re-signs arbitrary header and claims JSON with our key (for tests of later checks).
    fn forge(signer: &AssertionSigner, header: &str, claims: &str) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(claims)
        );
        let signature = signer.pair.sign(&signer.random, input.as_bytes()).unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }

    #[test]
    fn a_critical_extension_is_refused_even_when_signed_by_us() {
        let (keys, signer, now) = setup();
        let point = keys.current().identity.public_point();
        for crit in [
            json_value(r#"["x-unknown"]"#),
            json_value("[]"),
            json_value("null"),
        ] {
            let header = format!(
                r#"{{"alg":"ES256","typ":"{ASSERTION_TYPE}","kid":"{}","crit":{crit}}}"#,
                signer.kid
            );
            let input = format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(header),
                encode_json(&claims(now, 3600)).unwrap()
            );
            let signature = signer.pair.sign(&signer.random, input.as_bytes()).unwrap();
            let token = format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()));
            let verified = verify(&token, |_| Some(&point[..]), &expect(now));
            assert_eq!(verified, Err(AssertionError::CriticalExtension), "{crit}");
        }
    }

    fn json_value(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn signed_assertions_verify_within_their_lifetime() {
        let (keys, signer, now) = setup();
        let token = signer.sign(&claims(now, 3600)).unwrap();
        let point = keys.current().identity.public_point();
        assert_eq!(
            verify(&token, |_| Some(&point[..]), &expect(now)).unwrap(),
            claims(now, 3600)
        );
        let late = now + Duration::from_secs(3600 + 59);
        assert!(verify(&token, |_| Some(&point[..]), &expect(late)).is_ok());
        let expired = now + Duration::from_secs(3600 + 60);
        assert_eq!(
            verify(&token, |_| Some(&point[..]), &expect(expired)),
            Err(AssertionError::Expired)
        );
        let early = now - Duration::from_secs(61);
        assert_eq!(
            verify(&token, |_| Some(&point[..]), &expect(early)),
            Err(AssertionError::NotYetValid)
        );
    }

    #[test]
    fn algorithm_confusion_and_forgery_are_refused() {
        let (keys, signer, now) = setup();
        let point = keys.current().identity.public_point();
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(now, 60)).unwrap());
        let none = format!(
            "{}.{body}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"oauth-id-jag+jwt"}"#)
        );
        assert_eq!(
            verify(&none, |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Algorithm)
        );

        // HS256 "signed" with the public key as the HMAC secret.
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"oauth-id-jag+jwt"}"#);
        let input = format!("{header}.{body}");
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &point);
        let mac = ring::hmac::sign(&key, input.as_bytes());
        let hs256 = format!("{input}.{}", URL_SAFE_NO_PAD.encode(mac.as_ref()));
        assert_eq!(
            verify(&hs256, |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Algorithm)
        );

        let (_, other_signer, _) = setup();
        let foreign = other_signer.sign(&claims(now, 60)).unwrap();
        assert_eq!(
            verify(&foreign, |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Signature)
        );

        let genuine = signer.sign(&claims(now, 60)).unwrap();
        let mut parts: Vec<String> = genuine.split('.').map(String::from).collect();
        let mut tampered_claims = claims(now, 60);
        tampered_claims.sub = "reg_admin".into();
        parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&tampered_claims).unwrap());
        assert_eq!(
            verify(&parts.join("."), |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Signature)
        );

        let untyped = forge(
            &signer,
            r#"{"alg":"ES256"}"#,
            &serde_json::to_string(&claims(now, 60)).unwrap(),
        );
        assert_eq!(
            verify(&untyped, |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Type)
        );
        let wrong_type = forge(
            &signer,
            r#"{"alg":"ES256","typ":"JWT"}"#,
            &serde_json::to_string(&claims(now, 60)).unwrap(),
        );
        assert_eq!(
            verify(&wrong_type, |_| Some(&point[..]), &expect(now)),
            Err(AssertionError::Type)
        );

        for junk in [
            "",
            "a.b",
            "a.b.c.d",
            "v4.local.abc",
            "!!.!!.!!",
            "e30.e30.e30",
        ] {
            assert!(
                verify(junk, |_| Some(&point[..]), &expect(now)).is_err(),
                "{junk}"
            );
        }
    }

    #[test]
    fn claims_are_checked_after_the_signature() {
        let (keys, signer, now) = setup();
        let point = keys.current().identity.public_point();
        let mut other_issuer = claims(now, 60);
        other_issuer.iss = "https://evil.example".into();
        assert_eq!(
            verify(
                &signer.sign(&other_issuer).unwrap(),
                |_| Some(&point[..]),
                &expect(now)
            ),
            Err(AssertionError::Issuer)
        );
        let mut other_audience = claims(now, 60);
        other_audience.aud = "https://info.example.com/".into();
        assert_eq!(
            verify(
                &signer.sign(&other_audience).unwrap(),
                |_| Some(&point[..]),
                &expect(now)
            ),
            Err(AssertionError::Audience)
        );
        let too_long = claims(now, 3601);
        assert_eq!(
            verify(
                &signer.sign(&too_long).unwrap(),
                |_| Some(&point[..]),
                &expect(now)
            ),
            Err(AssertionError::LifetimeTooLong)
        );
        let mut future = claims(now + Duration::from_secs(120), 60);
        future.nbf = unix_seconds(now);
        assert_eq!(
            verify(
                &signer.sign(&future).unwrap(),
                |_| Some(&point[..]),
                &expect(now)
            ),
            Err(AssertionError::IssuedInFuture)
        );
    }

    #[test]
    fn the_kid_picks_the_key_and_an_unknown_kid_is_refused() {
        let (keys, signer, now) = setup();
        let token = signer.sign(&claims(now, 60)).unwrap();
        let point = keys.current().identity.public_point();
        let kid = keys.current().identity.kid().to_string();
        let lookup = |asked: Option<&str>| (asked == Some(kid.as_str())).then_some(&point[..]);
        assert!(verify(&token, lookup, &expect(now)).is_ok());
        assert_eq!(
            verify(&token, |_| None, &expect(now)),
            Err(AssertionError::Signature)
        );
    }
}
