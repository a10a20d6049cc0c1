//! Per-client-address rate limits for the endpoints that mint credentials.
//!
//! A token bucket per address: `per_minute` requests may come in a burst, and the bucket
//! refills continuously at `per_minute / 60` per second. IPv6 clients are grouped by their
//! /64, which is what one host usually gets. Time comes from the shared clock.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Buckets kept before idle (full) ones are dropped, so memory stays bounded.
const MAX_TRACKED: usize = 100_000;

pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: SystemTime,
}

impl RateLimiter {
    /// `per_minute == 0` turns the limit off.
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Takes one request from `address`'s bucket, or says how long to wait.
    pub fn check(&self, address: IpAddr, now: SystemTime) -> Result<(), Duration> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let capacity = f64::from(self.per_minute);
        let refill_per_second = capacity / 60.0;
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        if buckets.len() >= MAX_TRACKED {
            buckets.retain(|_, bucket| {
                let idle = now.duration_since(bucket.updated).unwrap_or_default();
                bucket.tokens + idle.as_secs_f64() * refill_per_second < capacity
            });
        }
        let bucket = buckets.entry(group(address)).or_insert(Bucket {
            tokens: capacity,
            updated: now,
        });
        let elapsed = now.duration_since(bucket.updated).unwrap_or_default();
        bucket.tokens = (bucket.tokens + elapsed.as_secs_f64() * refill_per_second).min(capacity);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = (1.0 - bucket.tokens) / refill_per_second;
            Err(Duration::from_secs_f64(wait.ceil().max(1.0)))
        }
    }
}

/// The unit one client is counted as: its IPv4 address, or its IPv6 /64.
pub fn group(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_up_to_the_limit_then_refills() {
        let limiter = RateLimiter::new(3);
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..3 {
            assert!(limiter.check(a, start).is_ok());
        }
        assert_eq!(limiter.check(a, start), Err(Duration::from_secs(20)));
        assert!(limiter.check(b, start).is_ok(), "addresses are independent");
        assert!(limiter.check(a, start + Duration::from_secs(20)).is_ok());
        assert!(limiter.check(a, start + Duration::from_secs(20)).is_err());
    }

    #[test]
    fn ipv6_hosts_share_their_slash_64() {
        let limiter = RateLimiter::new(1);
        let now = SystemTime::UNIX_EPOCH;
        assert!(limiter.check("2001:db8::1".parse().unwrap(), now).is_ok());
        assert!(limiter.check("2001:db8::2".parse().unwrap(), now).is_err());
        assert!(limiter
            .check("2001:db8:0:1::1".parse().unwrap(), now)
            .is_ok());
    }

    #[test]
    fn zero_means_unlimited() {
        let limiter = RateLimiter::new(0);
        for _ in 0..1000 {
            assert!(limiter
                .check("192.0.2.1".parse().unwrap(), SystemTime::UNIX_EPOCH)
                .is_ok());
        }
    }
}
