//! Admission to the endpoints that mint credentials: each request passes its client's rate
//! limit, kept in this process or shared through Redis, before anything else is read, and
//! gets an [`Admitted`] that registration and token exchange require.

use std::net::IpAddr;
use std::time::SystemTime;

use super::limits::RateLimiter;
use super::redis_store::SharedLimiter;
use super::reply::AuthReply;

/// Where a rate limit keeps its buckets.
pub enum Limiter {
    /// In this process: right for a single instance.
    Local(RateLimiter),
    /// In Redis, shared by every instance.
    Shared(SharedLimiter),
}

impl Limiter {
    /// `Ok` to proceed, or the refusal to send: 429 over the limit, 503 (fail closed) when
    /// a shared limit cannot be consulted.
    pub async fn admit(&self, client: IpAddr, now: SystemTime) -> Result<(), AuthReply> {
        match self {
            Limiter::Local(limiter) => limiter.check(client, now).map_err(AuthReply::rate_limited),
            Limiter::Shared(limiter) => match limiter.check(client, now).await {
                Ok(None) => Ok(()),
                Ok(Some(wait)) => Err(AuthReply::rate_limited(wait)),
                Err(error) => Err(AuthReply::unavailable(&error)),
            },
        }
    }
}

/// The endpoints that mint credentials, each with its own limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minting {
    Registration,
    Token,
}

/// Proof that one request passed its client's rate limit: [`AuthService::register`](super::endpoints::AuthService::register) and
/// [`AuthService::token`](super::endpoints::AuthService::token) each take one, so no caller can mint a credential without the
/// limit. Only [`AuthService::admit`](super::endpoints::AuthService::admit) makes them, before the body is read, so a client
/// over its limit costs no body read.
#[derive(Debug)]
#[must_use = "a permit is spent by register or token"]
pub struct Admitted {
    pub(super) kind: Minting,
}

impl Admitted {
    /// The endpoint this permit is for.
    pub fn kind(&self) -> Minting {
        self.kind
    }
}

/// Per-address limits for the endpoints that mint credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    pub register_per_minute: u32,
    pub token_per_minute: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            register_per_minute: 20,
            token_per_minute: 120,
        }
    }
}
