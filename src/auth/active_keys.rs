//! The keyring as requests use it: a signer for the current identity key and the public
//! point of every identity key still accepted, made once per keyring (and again on
//! rotation) so no request re-derives either.

use super::assertion::AssertionSigner;
use super::keys::Keyring;
use super::CryptoError;
use crate::config::AuthPolicy;

/// A keyring in the form requests use it: a signer for the current identity key and the
/// public point of every identity key, so verifying never re-derives either.
pub struct ActiveKeys {
    pub(super) keyring: Keyring,
    pub(super) signer: AssertionSigner,
    /// (kid, uncompressed point, verifies until), current first.
    pub(super) points: Vec<(String, Vec<u8>, Option<u64>)>,
}

impl ActiveKeys {
    pub fn new(keyring: Keyring, policy: &AuthPolicy) -> Result<ActiveKeys, CryptoError> {
        let signer = AssertionSigner::new(&keyring.current().identity)?;
        let points = keyring
            .generations()
            .iter()
            .rev()
            .map(|generation| {
                (
                    generation.identity.kid().to_string(),
                    generation.identity.public_point(),
                    generation.identity_until(policy),
                )
            })
            .collect();
        Ok(ActiveKeys {
            keyring,
            signer,
            points,
        })
    }

    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// The key that verifies assertions naming `kid` at `now`. Assertions without a `kid`
    /// were signed by the current key, if by ours at all.
    pub(super) fn identity_point(&self, kid: Option<&str>, now: u64) -> Option<&[u8]> {
        self.points
            .iter()
            .filter(|(_, _, until)| until.is_none_or(|until| now < until))
            .find(|(id, _, _)| kid.is_none_or(|kid| kid == id))
            .map(|(_, point, _)| point.as_slice())
    }
}
