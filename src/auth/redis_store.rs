//! Revocations and rate limits shared by several instances through Redis (or Valkey).
//!
//! Every instance keeps the whole revocation list in memory, as the embedded store does, so
//! checking a token never waits on the network. The list is fed by Redis:
//!
//! - a revocation is one atomic script: `SET dossier:revoked:<id> <expiry> EXAT <expiry>`
//!   (never shortening an existing one) and `PUBLISH` on [`CHANNEL`]; the 200 goes out only
//!   after Redis acknowledged both, and the key expires when the credential would have;
//! - each instance subscribes to [`CHANNEL`], and on every (re)connection first subscribes,
//!   then reads every `dossier:revoked:*` key, so nothing published in between is missed;
//! - each instance publishes a heartbeat on the same channel every [`HEARTBEAT`]. Redis
//!   delivers a channel's messages in the order it accepted them, so when an instance
//!   receives its own heartbeat, it has received every revocation acknowledged before that
//!   heartbeat was sent. The view counts as fresh for [`MAX_STALENESS`] after the send time
//!   of the last heartbeat that came back: that is the staleness bound.
//!
//! When the view is not fresh (Redis down, a partition, a dead subscription), the store
//! says so through [`RevocationStore::readable`]: requests that carry a credential are
//! refused with 503 rather than checked against a list that may be missing a revocation.
//! Reads without a credential never touch the store.
//!
//! Rate limits are a token bucket per client address held in Redis and updated by one
//! script, so every instance draws from the same bucket.
//!
//! Keys are shared through Redis too, by [`super::shared_keys`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Client, Script};

use super::limits::group;
use super::store::{already_kept, RevocationStore, StoreError, StoreFuture, StoreHealth};
use crate::clock::unix_seconds;

/// The channel revocations and heartbeats travel on.
pub const CHANNEL: &str = "dossier:revocations";
const KEY_PREFIX: &str = "dossier:revoked:";
const RATE_PREFIX: &str = "dossier:rate:";
/// How often each instance checks its subscription end to end.
pub const HEARTBEAT: Duration = Duration::from_millis(200);
/// The most a fresh view can lag behind Redis.
pub const MAX_STALENESS: Duration = Duration::from_secs(1);
/// The longest a request waits on Redis before it is answered 503.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(800);
/// Pause between reconnection attempts.
const RECONNECT_DELAY: Duration = Duration::from_millis(250);

/// Records a revocation unless a longer one is already kept, then announces it.
const REVOKE_SCRIPT: &str = r#"
local current = tonumber(redis.call('GET', KEYS[1]))
local expires = tonumber(ARGV[1])
if current == nil or current < expires then
  redis.call('SET', KEYS[1], ARGV[1], 'EXAT', ARGV[1])
else
  expires = current
end
redis.call('PUBLISH', ARGV[2], 'r ' .. expires .. ' ' .. ARGV[3])
return expires
"#;

/// One token bucket: takes a token or says how many milliseconds until one is there.
/// ARGV: capacity, refill per millisecond, now (Unix milliseconds, from the instance's clock:
/// the one clock every rule uses, so tests can move it; a clock behind never refills less
/// than zero).
const BUCKET_SCRIPT: &str = r#"
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(state[1]) or capacity
local updated = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - updated) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate) + 1000)
return wait
"#;

/// What the subscriber and the request path share.
struct View {
    revoked: RwLock<HashMap<String, u64>>,
    /// Milliseconds after `epoch` before which the view is fresh (0: never yet).
    fresh_until: AtomicU64,
    epoch: Instant,
    connected: AtomicBool,
}

impl View {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn is_fresh(&self) -> bool {
        // Strictly before: `fresh_until` starts at 0, which must not count as fresh.
        self.now_ms() < self.fresh_until.load(Ordering::Acquire)
    }

    fn record(&self, id: &str, expires: u64) {
        if let Ok(mut map) = self.revoked.write() {
            let entry = map.entry(id.to_string()).or_insert(0);
            *entry = (*entry).max(expires);
        }
    }
}

/// The shared store: Redis for durability and fan-out, memory for every check.
pub struct RedisStore {
    connection: ConnectionManager,
    revoke: Script,
    view: Arc<View>,
    subscriber: tokio::task::JoinHandle<()>,
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        self.subscriber.abort();
    }
}

pub(crate) fn unavailable(why: impl std::fmt::Display) -> StoreError {
    StoreError {
        message: format!("the shared store (Redis) is unavailable: {why}"),
        retry_after: Duration::from_secs(1),
    }
}

/// Opens a Redis client for `url` (`redis://`, `rediss://`, with an optional password).
pub(crate) fn client(url: &str) -> Result<Client, StoreError> {
    // rustls needs one process-wide crypto provider for `rediss://`; ring is already here.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::open(url).map_err(|error| StoreError {
        message: format!("--store: {error}"),
        retry_after: Duration::from_secs(1),
    })
}

async fn connection_manager(client: &Client) -> Result<ConnectionManager, StoreError> {
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(1)))
        .set_response_timeout(Some(COMMAND_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(500));
    client
        .get_connection_manager_with_config(config)
        .await
        .map_err(unavailable)
}

impl RedisStore {
    /// Connects to Redis at `url`, loads every revocation, and starts following the channel.
    /// Fails when Redis cannot be reached now (a typo in the URL should stop startup); later
    /// outages are survived.
    pub async fn connect(url: &str) -> Result<RedisStore, StoreError> {
        let client = client(url)?;
        let connection = connection_manager(&client).await?;
        let view = Arc::new(View {
            revoked: RwLock::new(HashMap::new()),
            fresh_until: AtomicU64::new(0),
            epoch: Instant::now(),
            connected: AtomicBool::new(false),
        });
        let subscriber = tokio::spawn(follow(client, connection.clone(), Arc::clone(&view)));
        let store = RedisStore {
            connection,
            revoke: Script::new(REVOKE_SCRIPT),
            view,
            subscriber,
        };
        // Serve only once the first resync is done and a heartbeat came back.
        let started = Instant::now();
        while !store.view.is_fresh() {
            if started.elapsed() > Duration::from_secs(5) {
                return Err(unavailable("no heartbeat came back within 5 s"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(store)
    }

    /// A rate limiter on the same Redis.
    pub fn limiter(&self, kind: &'static str, per_minute: u32) -> SharedLimiter {
        SharedLimiter {
            connection: self.connection.clone(),
            script: Script::new(BUCKET_SCRIPT),
            kind,
            per_minute,
        }
    }
}

impl RevocationStore for RedisStore {
    fn revoke(&self, id: &str, expires_at: SystemTime) -> StoreFuture<()> {
        let expires = unix_seconds(expires_at);
        if already_kept(&self.view.revoked, id, expires) {
            return Box::pin(std::future::ready(Ok(())));
        }
        let mut connection = self.connection.clone();
        let script = self.revoke.clone();
        let view = Arc::clone(&self.view);
        let id = id.to_string();
        Box::pin(async move {
            let mut invocation = script.key(format!("{KEY_PREFIX}{id}"));
            invocation.arg(expires).arg(CHANNEL).arg(&id);
            let stored: u64 =
                tokio::time::timeout(COMMAND_TIMEOUT, invocation.invoke_async(&mut connection))
                    .await
                    .map_err(|_| unavailable("Redis did not answer in time"))?
                    .map_err(unavailable)?;
            view.record(&id, stored);
            Ok(())
        })
    }

    fn is_revoked(&self, id: &str) -> bool {
        self.view
            .revoked
            .read()
            .map_or(true, |map| map.contains_key(id))
    }

    fn readable(&self) -> Result<(), StoreError> {
        if self.view.is_fresh() {
            Ok(())
        } else {
            Err(unavailable(
                "revocations cannot be confirmed; credentials are refused until it is back",
            ))
        }
    }

    fn purge_expired(&self, now: SystemTime) -> StoreFuture<usize> {
        // Redis expires its keys itself; only the memory view needs trimming.
        let now = unix_seconds(now);
        let purged = self.view.revoked.write().map_or(0, |mut map| {
            let before = map.len();
            map.retain(|_, expires| *expires > now);
            before - map.len()
        });
        Box::pin(std::future::ready(Ok(purged)))
    }

    fn health(&self) -> StoreHealth {
        if self.view.is_fresh() {
            StoreHealth::Ok
        } else {
            StoreHealth::Degraded {
                reason: "the shared store (Redis) is unreachable".into(),
                retry_at: Instant::now() + RECONNECT_DELAY,
            }
        }
    }
}

/// Keeps the view in step with Redis for as long as the store lives.
async fn follow(client: Client, connection: ConnectionManager, view: Arc<View>) {
    let instance = super::random_id("i_").unwrap_or_else(|_| "i_unknown".into());
    loop {
        let error = follow_once(&client, connection.clone(), &view, &instance).await;
        if view.connected.swap(false, Ordering::AcqRel) {
            tracing::warn!(%error, "shared store lost; credentials are refused until it is back");
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

/// One subscription, from connecting to losing it; returns why it ended.
async fn follow_once(
    client: &Client,
    mut connection: ConnectionManager,
    view: &View,
    instance: &str,
) -> String {
    let subscribed = tokio::time::timeout(Duration::from_secs(2), async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(CHANNEL).await?;
        Ok::<_, redis::RedisError>(pubsub)
    })
    .await;
    let pubsub = match subscribed {
        Ok(Ok(pubsub)) => pubsub,
        Ok(Err(error)) => return error.to_string(),
        Err(_) => return "subscribing timed out".into(),
    };
    // Subscribed first, then read: a revocation made in between arrives on the channel.
    let count =
        match tokio::time::timeout(Duration::from_secs(10), resync(&mut connection, view)).await {
            Ok(Ok(count)) => count,
            Ok(Err(error)) => return error.to_string(),
            Err(_) => return "reading the revocations timed out".into(),
        };
    if !view.connected.swap(true, Ordering::AcqRel) {
        tracing::info!(revocations = count, "shared store connected and resynced");
    }
    let mut messages = pubsub.into_on_message();
    let subscribed_at = Instant::now();
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            message = messages.next() => {
                let Some(message) = message else {
                    return "the subscription closed".into();
                };
                let payload: String = message.get_payload().unwrap_or_default();
                apply(view, instance, &payload);
            }
            _ = heartbeat.tick() => {
                let beat = format!("h {instance} {}", view.now_ms());
                let sent = tokio::time::timeout(
                    COMMAND_TIMEOUT,
                    connection.publish::<_, _, i64>(CHANNEL, beat),
                )
                .await;
                if !matches!(sent, Ok(Ok(_))) && !view.is_fresh() {
                    return "heartbeats are not getting through".into();
                }
                // Publishing works but nothing comes back: the subscription is dead without
                // having said so. Start over rather than stay stale.
                if !view.is_fresh() && subscribed_at.elapsed() > 2 * MAX_STALENESS {
                    return "heartbeats are not coming back on the subscription".into();
                }
            }
        }
    }
}

/// Applies one channel message: `r <expires> <id>` or `h <instance> <sent-ms>`.
fn apply(view: &View, instance: &str, payload: &str) {
    let mut parts = payload.splitn(3, ' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("r"), Some(expires), Some(id)) => {
            if let Ok(expires) = expires.parse::<u64>() {
                view.record(id, expires);
            }
        }
        (Some("h"), Some(from), Some(sent)) if from == instance => {
            if let Ok(sent) = sent.parse::<u64>() {
                let fresh_until = sent + MAX_STALENESS.as_millis() as u64;
                view.fresh_until.fetch_max(fresh_until, Ordering::AcqRel);
            }
        }
        _ => {}
    }
}

/// Reads every revocation key into the view; returns how many there are.
async fn resync(connection: &mut ConnectionManager, view: &View) -> redis::RedisResult<usize> {
    let mut keys: Vec<String> = Vec::new();
    {
        let mut scan = connection
            .scan_match::<_, String>(format!("{KEY_PREFIX}*"))
            .await?;
        while let Some(key) = scan.next().await {
            keys.push(key?);
        }
    }
    for chunk in keys.chunks(500) {
        let values: Vec<Option<u64>> = connection.mget(chunk).await?;
        for (key, value) in chunk.iter().zip(values) {
            if let (Some(id), Some(expires)) = (key.strip_prefix(KEY_PREFIX), value) {
                view.record(id, expires);
            }
        }
    }
    Ok(keys.len())
}

/// A per-address token bucket kept in Redis, shared by every instance.
pub struct SharedLimiter {
    connection: ConnectionManager,
    script: Script,
    kind: &'static str,
    per_minute: u32,
}

impl SharedLimiter {
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Takes one request from `address`'s bucket: `Ok(None)` when allowed, `Ok(Some(wait))`
    /// when over the limit, `Err` when Redis cannot be asked (the caller refuses: fail closed).
    pub async fn check(
        &self,
        address: IpAddr,
        now: SystemTime,
    ) -> Result<Option<Duration>, StoreError> {
        if self.per_minute == 0 {
            return Ok(None);
        }
        let capacity = f64::from(self.per_minute);
        let per_ms = capacity / 60_000.0;
        let mut invocation =
            self.script
                .key(format!("{RATE_PREFIX}{}:{}", self.kind, group(address)));
        let now_ms = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        invocation.arg(capacity).arg(per_ms).arg(now_ms);
        let mut connection = self.connection.clone();
        let wait_ms: u64 =
            tokio::time::timeout(COMMAND_TIMEOUT, invocation.invoke_async(&mut connection))
                .await
                .map_err(|_| unavailable("Redis did not answer in time"))?
                .map_err(unavailable)?;
        // Whole seconds, rounded up, as `Retry-After` says them.
        Ok((wait_ms > 0).then(|| Duration::from_secs(wait_ms.div_ceil(1000).max(1))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> View {
        View {
            revoked: RwLock::new(HashMap::new()),
            fresh_until: AtomicU64::new(0),
            epoch: Instant::now(),
            connected: AtomicBool::new(false),
        }
    }

    #[test]
    fn only_our_own_heartbeat_makes_the_view_fresh() {
        let view = view();
        assert!(
            !view.is_fresh(),
            "a new view is not fresh, even in its first millisecond"
        );
        apply(&view, "i_me", "h i_other 0");
        assert!(!view.is_fresh());
        apply(&view, "i_me", &format!("h i_me {}", view.now_ms()));
        assert!(view.is_fresh());
    }

    #[test]
    fn revocation_messages_never_shorten_what_is_known() {
        let view = view();
        apply(&view, "i_me", "r 200 at_1");
        apply(&view, "i_me", "r 100 at_1");
        apply(&view, "i_me", "r nonsense at_2");
        apply(&view, "i_me", "garbage");
        let map = view.revoked.read().unwrap();
        assert_eq!(map.get("at_1"), Some(&200));
        assert!(!map.contains_key("at_2"));
    }
}
