//! The keyring shared by several instances through Redis.
//!
//! Every instance must sign and verify with the same keys, so with `--store redis://…` the
//! keyring lives in Redis under [`KEYRING_KEY`] and each instance keeps a copy in its state
//! directory (its backup, and what it starts from when Redis is slow). At start
//! [`share_keys`] makes the two agree: the first instance publishes its keyring, later ones
//! take it, and one whose keyring has nothing in common with Redis's refuses to start rather
//! than mint credentials the others reject. A rotation (`dossier keys rotate --store …`)
//! replaces the keyring in Redis with a compare-and-set, so two rotations at once cannot
//! lose a key; running instances fetch it every second ([`SharedKeys::fetch`]) and write
//! it to their copy, where the key watcher picks it up.
//!
//! Redis is a cache of the deployment's keys, not their owner: it can lose its data (a
//! flush, a failover to an empty replica), and anyone who can write to it could plant keys.
//! So a fresh keyring is made only when asked for (`serve --create-keyring`, the first start
//! of a deployment); a running instance never takes a keyring that shares no generation
//! with its own, and publishes its own again when Redis has none.

use std::path::Path;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::Script;

use super::keys::{KeyError, Keyring, Relation, KEYRING_FILE};
use super::redis_store::{client, unavailable};
use super::store::StoreError;
use crate::config::AuthPolicy;

/// Where the keyring is kept in Redis.
pub const KEYRING_KEY: &str = "dossier:keys:keyring";
/// The longest one exchange with Redis about keys may take.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Replaces the keyring only if it is still the one the rotation started from.
const COMPARE_AND_SET: &str = r#"
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"#;

fn key_error(error: KeyError) -> StoreError {
    StoreError {
        message: error.to_string(),
        retry_after: Duration::from_secs(1),
    }
}

/// A connection for reading and replacing the shared keyring.
#[derive(Clone)]
pub struct SharedKeys {
    connection: MultiplexedConnection,
}

impl SharedKeys {
    pub async fn connect(url: &str) -> Result<SharedKeys, StoreError> {
        let client = client(url)?;
        let connection = tokio::time::timeout(TIMEOUT, client.get_multiplexed_async_connection())
            .await
            .map_err(|_| unavailable("connecting timed out"))?
            .map_err(unavailable)?;
        Ok(SharedKeys { connection })
    }

    /// The keyring's text as kept in Redis, if any.
    pub async fn fetch(&self) -> Result<Option<String>, StoreError> {
        let mut connection = self.connection.clone();
        tokio::time::timeout(
            TIMEOUT,
            redis::cmd("GET")
                .arg(KEYRING_KEY)
                .query_async::<Option<String>>(&mut connection),
        )
        .await
        .map_err(|_| unavailable("timed out"))?
        .map_err(unavailable)
    }

    /// Replaces `expected` (`None`: nothing kept yet, or Redis lost it) with `keyring`;
    /// false when another writer got there first.
    pub(crate) async fn replace(
        &self,
        expected: Option<&str>,
        keyring: &str,
    ) -> Result<bool, StoreError> {
        let mut connection = self.connection.clone();
        let swapped: i64 = tokio::time::timeout(
            TIMEOUT,
            Script::new(COMPARE_AND_SET)
                .key(KEYRING_KEY)
                .arg(expected.unwrap_or(""))
                .arg(keyring)
                .invoke_async(&mut connection),
        )
        .await
        .map_err(|_| unavailable("timed out"))?
        .map_err(unavailable)?;
        Ok(swapped == 1)
    }

    /// The shared keyring, parsed; `None` when no instance has published one yet.
    pub async fn load(&self) -> Result<Option<Keyring>, StoreError> {
        self.fetch()
            .await?
            .map(|text| Keyring::parse(&text, Path::new(KEYRING_KEY)).map_err(key_error))
            .transpose()
    }

    /// Rotates the shared keyring (see [`Keyring::rotate`]) and returns the new one.
    pub async fn rotate(&self, policy: &AuthPolicy, now: u64) -> Result<Keyring, StoreError> {
        // A competing rotation makes the swap fail; start again from what it wrote.
        for _ in 0..10 {
            let text = self.fetch().await?;
            let current = match &text {
                Some(text) => Keyring::parse(text, Path::new(KEYRING_KEY)).map_err(key_error)?,
                None => {
                    return Err(StoreError {
                        message: format!(
                            "Redis holds no keyring ({KEYRING_KEY}); start an instance with this store first"
                        ),
                        retry_after: Duration::from_secs(1),
                    })
                }
            };
            let rotated = current.rotate(policy, now).map_err(key_error)?;
            if self.replace(text.as_deref(), &rotated.to_text()).await? {
                return Ok(rotated);
            }
        }
        Err(unavailable("the keyring kept changing during the rotation"))
    }
}

/// Makes the keyring in `state_dir` and the one in Redis the same, and returns it. Redis is
/// the truth once it has one: a missing or older local copy is replaced by it. A local
/// keyring is published when Redis has none (first come wins); a fresh one is created when
/// neither has one only if `create` says so (else that is an error: Redis may have lost
/// the deployment's keys, which a running instance will publish again). Keyrings with no
/// generation in common belong to different deployments: that is an error naming the file,
/// and nothing is changed.
pub async fn share_keys(
    shared: &SharedKeys,
    state_dir: &Path,
    now: u64,
    create: bool,
) -> Result<Keyring, StoreError> {
    let local_path = state_dir.join(KEYRING_FILE);
    for _ in 0..10 {
        let local = Keyring::load(state_dir).map_err(key_error)?;
        let text = shared.fetch().await?;
        let theirs = text
            .as_deref()
            .map(|text| Keyring::parse(text, Path::new(KEYRING_KEY)).map_err(key_error))
            .transpose()?;
        match (theirs, local) {
            (Some(theirs), None) => {
                theirs.save(state_dir).map_err(key_error)?;
                tracing::info!(file = %local_path.display(), "took the shared keyring from Redis");
                return Ok(theirs);
            }
            (Some(theirs), Some(ours)) => {
                if theirs.to_text() == ours.to_text() {
                    return Ok(ours);
                }
                match theirs.relation_to(&ours) {
                    Relation::Follows => {
                        theirs.save(state_dir).map_err(key_error)?;
                        tracing::info!(file = %local_path.display(), "updated the keyring from Redis");
                        return Ok(theirs);
                    }
                    // A replica behind a rotation: ours is the newer truth.
                    Relation::Older => {
                        if shared.replace(text.as_deref(), &ours.to_text()).await? {
                            tracing::warn!("Redis held an older keyring than this state directory's; published this one");
                            return Ok(ours);
                        }
                        // Changed meanwhile: go round and look again.
                    }
                    Relation::Unrelated => {
                        return Err(StoreError {
                            message: format!(
                                "{}: these keys differ from the ones the other instances use (in Redis); \
                                 start with a state directory without {KEYRING_FILE} to take theirs",
                                local_path.display()
                            ),
                            retry_after: Duration::from_secs(1),
                        })
                    }
                }
            }
            (None, local) => {
                // A keyring made here is saved only once it is the shared one, so losing
                // the race to publish leaves nothing behind to disagree with the winner.
                let fresh = local.is_none();
                let ours = match local {
                    Some(ours) => ours,
                    None if create => Keyring::generate(now).map_err(key_error)?,
                    None => {
                        return Err(StoreError {
                            message: format!(
                                "neither Redis ({KEYRING_KEY}) nor {} holds a keyring. On the first start \
                                 of a deployment, add --create-keyring to make one. If the deployment \
                                 already has keys, Redis has lost them: a running instance publishes \
                                 them again within a second, or copy {KEYRING_FILE} from another \
                                 instance or a backup into the state directory",
                                state_dir.display()
                            ),
                            retry_after: Duration::from_secs(1),
                        })
                    }
                };
                if shared.replace(None, &ours.to_text()).await? {
                    if fresh {
                        ours.save(state_dir).map_err(key_error)?;
                    }
                    tracing::info!("published this instance's keyring to Redis");
                    return Ok(ours);
                }
                // Another instance published first: go round and take (or check) theirs.
            }
        }
    }
    Err(unavailable("the shared keyring kept changing"))
}
