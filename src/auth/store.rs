//! Revocations: which credentials were revoked, kept until they would have expired anyway.
//!
//! [`RevocationStore`] is the seam for storage. [`EmbeddedStore`] keeps revocations in a
//! `redb` database in the state directory (crash-safe: a committed write survives power
//! loss) and mirrors them in memory, so checking a token on the request path never touches
//! the disk. A later networked store for several instances implements the same trait.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::RwLock;
use std::time::SystemTime;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::clock::unix_seconds;

pub const REVOCATIONS_FILE: &str = "revocations.redb";

/// Revoked credential id (`jti`) -> Unix second after which the credential is dead anyway.
const REVOKED: TableDefinition<&str, u64> = TableDefinition::new("revoked");

#[derive(Debug)]
pub struct StoreError(String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "revocation store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

fn store_error(error: impl fmt::Display) -> StoreError {
    StoreError(error.to_string())
}

pub trait RevocationStore: Send + Sync {
    /// Records that credential `id` is revoked until `expires_at`. When this returns `Ok`,
    /// the revocation is durable.
    fn revoke(&self, id: &str, expires_at: SystemTime) -> Result<(), StoreError>;

    /// Whether `id` was revoked. Must be cheap: it runs on every authenticated request.
    fn is_revoked(&self, id: &str) -> bool;

    /// Forgets revocations of credentials that have expired by `now`; returns how many.
    fn purge_expired(&self, now: SystemTime) -> Result<usize, StoreError>;
}

/// The single-instance store: redb on disk, a map in memory.
pub struct EmbeddedStore {
    database: Database,
    revoked: RwLock<HashMap<String, u64>>,
}

impl EmbeddedStore {
    /// Opens (or creates) `revocations.redb` in `state_dir` and loads it into memory.
    pub fn open(state_dir: &Path) -> Result<EmbeddedStore, StoreError> {
        let path = state_dir.join(REVOCATIONS_FILE);
        let database =
            Database::create(&path).map_err(|e| StoreError(format!("{}: {e}", path.display())))?;
        let write = database.begin_write().map_err(store_error)?;
        write.open_table(REVOKED).map_err(store_error)?;
        write.commit().map_err(store_error)?;

        let mut revoked = HashMap::new();
        let read = database.begin_read().map_err(store_error)?;
        let table = read.open_table(REVOKED).map_err(store_error)?;
        for entry in table.iter().map_err(store_error)? {
            let (id, expires) = entry.map_err(store_error)?;
            revoked.insert(id.value().to_string(), expires.value());
        }
        Ok(EmbeddedStore {
            database,
            revoked: RwLock::new(revoked),
        })
    }

    pub fn len(&self) -> usize {
        self.revoked.read().map(|map| map.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RevocationStore for EmbeddedStore {
    fn revoke(&self, id: &str, expires_at: SystemTime) -> Result<(), StoreError> {
        let expires = unix_seconds(expires_at);
        let write = self.database.begin_write().map_err(store_error)?;
        {
            let mut table = write.open_table(REVOKED).map_err(store_error)?;
            let keep = table
                .get(id)
                .map_err(store_error)?
                .map(|existing| existing.value())
                .unwrap_or(0)
                .max(expires);
            table.insert(id, keep).map_err(store_error)?;
        }
        // redb's default durability fsyncs on commit: after this line the revocation
        // survives a crash.
        write.commit().map_err(store_error)?;
        if let Ok(mut map) = self.revoked.write() {
            let entry = map.entry(id.to_string()).or_insert(0);
            *entry = (*entry).max(expires);
        }
        Ok(())
    }

    fn is_revoked(&self, id: &str) -> bool {
        // A poisoned lock means a writer panicked mid-update; refusing is the safe answer.
        self.revoked.read().map_or(true, |map| map.contains_key(id))
    }

    fn purge_expired(&self, now: SystemTime) -> Result<usize, StoreError> {
        let now = unix_seconds(now);
        let write = self.database.begin_write().map_err(store_error)?;
        let purged = {
            let mut table = write.open_table(REVOKED).map_err(store_error)?;
            let before = table.len().map_err(store_error)?;
            table
                .retain(|_, expires| expires > now)
                .map_err(store_error)?;
            before - table.len().map_err(store_error)?
        };
        write.commit().map_err(store_error)?;
        if let Ok(mut map) = self.revoked.write() {
            map.retain(|_, expires| *expires > now);
        }
        Ok(purged as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn revocations_persist_and_expire() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        {
            let store = EmbeddedStore::open(dir.path()).unwrap();
            store.revoke("at_1", now + Duration::from_secs(60)).unwrap();
            store
                .revoke("at_2", now + Duration::from_secs(600))
                .unwrap();
            assert!(store.is_revoked("at_1"));
            assert!(!store.is_revoked("at_3"));
        }
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert!(store.is_revoked("at_1") && store.is_revoked("at_2"));
        assert_eq!(
            store.purge_expired(now + Duration::from_secs(61)).unwrap(),
            1
        );
        assert!(!store.is_revoked("at_1"));
        assert!(store.is_revoked("at_2"));
        drop(store);
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_second_revocation_never_shortens_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        store.revoke("x", now + Duration::from_secs(600)).unwrap();
        store.revoke("x", now + Duration::from_secs(10)).unwrap();
        assert_eq!(
            store.purge_expired(now + Duration::from_secs(11)).unwrap(),
            0
        );
        assert!(store.is_revoked("x"));
    }
}
