//! The dynamic auth core: keys, credentials and the rules for presenting them.
//!
//! Everything here is plain functions over parsed values and a clock; the HTTP layer in
//! `serve` converts requests into these values and results back into responses.

pub mod access;
pub mod active_keys;
pub mod admission;
pub mod assertion;
pub mod bearer;
pub mod endpoints;
pub mod form;
pub mod keys;
pub mod limits;
pub mod redis_store;
pub mod reply;
pub mod shared_keys;
pub mod store;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Largest request body the auth endpoints read.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A credential could not be made: a key is unusable, the system has no randomness, or
/// encoding failed. Never the client's doing: logged, and answered with a 500.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("the key is not usable: {0}")]
    Key(String),
    #[error("no randomness available: {0}")]
    Random(#[from] getrandom::Error),
    #[error("cannot encode the claims: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("cannot sign or encrypt: {0}")]
    Seal(String),
}

/// A fresh random identifier with a readable prefix (`reg_`, `at_`, ...): 128 random bits.
pub fn random_id(prefix: &str) -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}
