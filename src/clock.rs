//! One clock for everything that checks or stamps time, so tests can move time instead of
//! sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub trait Clock: Send + Sync {
    fn now(&self) -> SystemTime;
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that stands still until told to move. Millisecond resolution.
#[derive(Debug)]
pub struct ManualClock {
    millis_since_epoch: AtomicU64,
}

impl ManualClock {
    pub fn new(start: SystemTime) -> Self {
        ManualClock {
            millis_since_epoch: AtomicU64::new(millis(start)),
        }
    }

    pub fn advance(&self, by: Duration) {
        self.millis_since_epoch
            .fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }

    pub fn set(&self, to: SystemTime) {
        self.millis_since_epoch.store(millis(to), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.millis_since_epoch.load(Ordering::SeqCst))
    }
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whole seconds since the Unix epoch (0 before it).
pub fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The last second RFC 3339 can write (9999-12-31T23:59:59Z).
pub const LATEST_UNIX_SECOND: u64 = 253_402_300_799;

/// The time `seconds` after the Unix epoch. Claims from a token can say anything, up to
/// 2^64 - 1, so this saturates at [`LATEST_UNIX_SECOND`] instead of overflowing.
pub fn from_unix_seconds(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds.min(LATEST_UNIX_SECOND))
}

/// RFC 3339 in UTC with second precision, e.g. `2026-01-01T12:00:00Z`.
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_seconds_never_overflow() {
        for seconds in [u64::MAX, u64::MAX - 1, 1 << 63, LATEST_UNIX_SECOND + 1] {
            let time = from_unix_seconds(seconds);
            assert_eq!(unix_seconds(time), LATEST_UNIX_SECOND);
            assert_eq!(rfc3339(time), "9999-12-31T23:59:59Z");
        }
        assert_eq!(
            unix_seconds(from_unix_seconds(1_800_000_000)),
            1_800_000_000
        );
    }
}
