//! Revocations: which credentials were revoked, kept until they would have expired anyway.
//!
//! [`RevocationStore`] is the seam for storage. [`EmbeddedStore`] keeps revocations in a
//! `redb` database in the state directory (crash-safe: a committed write survives power
//! loss) and mirrors them in memory, so checking a token on the request path never touches
//! the disk.
//!
//! Writing does touch the disk (an fsync per commit), so it never happens on an async
//! worker: one writer thread owns the database, takes every pending revocation at once and
//! commits them together (group commit), then answers each waiting request. A revocation
//! that is already on record is answered from memory and writes nothing, so repeating one
//! costs a hash lookup.
//!
//! When the disk fails (full, read-only, gone), the writer reports the store as degraded,
//! closes the database (redb refuses all further work after an I/O error) and tries to
//! reopen it every [`RETRY_INTERVAL`]; until then, revocations are refused with the time
//! to the next attempt, which is what `Retry-After` says.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use redb::backends::FileBackend;
use redb::{Database, ReadableTable, ReadableTableMetadata, StorageBackend, TableDefinition};
use tokio::sync::oneshot;

use crate::clock::unix_seconds;

pub const REVOCATIONS_FILE: &str = "revocations.redb";

/// Revoked credential id (`jti`) -> Unix second after which the credential is dead anyway.
const REVOKED: TableDefinition<&str, u64> = TableDefinition::new("revoked");

/// How long a failed store waits before it tries to reopen its database.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(2);
/// Most revocations committed in one transaction.
const MAX_BATCH: usize = 1024;

/// Why the store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("revocation store: {message}")]
pub struct StoreError {
    pub message: String,
    /// When asking again may succeed.
    pub retry_after: Duration,
}

/// Why the embedded store could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// Another process holds the database: two servers cannot share one state directory.
    #[error("revocation store: {} is in use by another process (is another dossier serving from this state directory?)", .0.display())]
    InUse(PathBuf),
    #[error(transparent)]
    Failed(#[from] StoreError),
}

impl From<OpenError> for StoreError {
    fn from(error: OpenError) -> StoreError {
        match error {
            OpenError::InUse(_) => store_error(error),
            OpenError::Failed(error) => error,
        }
    }
}

fn store_error(error: impl fmt::Display) -> StoreError {
    StoreError {
        message: error.to_string(),
        retry_after: RETRY_INTERVAL,
    }
}

/// Whether the store can take writes; shown by `/api/health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHealth {
    Ok,
    /// Writes fail; reads still answer from memory.
    Degraded {
        reason: String,
        /// The next attempt to reopen.
        retry_at: Instant,
    },
}

impl StoreHealth {
    pub fn is_ok(&self) -> bool {
        matches!(self, StoreHealth::Ok)
    }
}

pub type StoreFuture<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send>>;

pub trait RevocationStore: Send + Sync {
    /// Records that credential `id` is revoked until `expires_at`. The future resolves when
    /// the revocation is durable. Calling must never block: I/O happens elsewhere.
    fn revoke(&self, id: &str, expires_at: SystemTime) -> StoreFuture<()>;

    /// Whether `id` was revoked. Must be cheap: it runs on every authenticated request.
    fn is_revoked(&self, id: &str) -> bool;

    /// Whether [`RevocationStore::is_revoked`] can be trusted right now. A shared store whose
    /// view may be missing recent revocations says no, and credentials are then refused
    /// (503) rather than checked against it. A local store always can.
    fn readable(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Forgets revocations of credentials that have expired by `now`; resolves to how many.
    fn purge_expired(&self, now: SystemTime) -> StoreFuture<usize>;

    /// Whether writes currently work.
    fn health(&self) -> StoreHealth;
}

/// Whether `revoked` already keeps `id` until `expires` or later: revoking it again then
/// changes nothing, so it writes nothing.
pub(crate) fn already_kept(revoked: &RwLock<HashMap<String, u64>>, id: &str, expires: u64) -> bool {
    revoked
        .read()
        .ok()
        .and_then(|map| map.get(id).copied())
        .is_some_and(|kept| kept >= expires)
}

/// Opens the file a store lives in: the seam where tests put a failing disk.
pub type Opener = Box<dyn Fn(File) -> Result<Box<dyn StorageBackend>, redb::DatabaseError> + Send>;

/// The single-instance store: redb on disk, a map in memory, one writer thread.
pub struct EmbeddedStore {
    revoked: Arc<RwLock<HashMap<String, u64>>>,
    health: Arc<RwLock<StoreHealth>>,
    writer: Sender<Command>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for EmbeddedStore {
    /// Stops the writer and waits for it, so the file is closed (and its lock released)
    /// when the store is gone.
    fn drop(&mut self) {
        let (closed, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.writer, closed));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Command {
    Revoke {
        id: String,
        expires: u64,
        done: oneshot::Sender<Result<(), StoreError>>,
    },
    Purge {
        now: u64,
        done: oneshot::Sender<Result<usize, StoreError>>,
    },
}

/// Whatever [`Opener`] returned, as the concrete type redb's builder takes (a boxed
/// backend does not implement the trait itself).
#[derive(Debug)]
struct Backend(Box<dyn StorageBackend>);

impl StorageBackend for Backend {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.0.len()
    }
    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, std::io::Error> {
        self.0.read(offset, len)
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.0.set_len(len)
    }
    fn sync_data(&self, eventual: bool) -> Result<(), std::io::Error> {
        self.0.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.0.write(offset, data)
    }
}

/// Opens (or creates) the database at `path`. A damaged file is an error naming the file,
/// never a panic: redb asserts on some corrupt headers, so that is caught here.
fn open_database(path: &Path, opener: &Opener) -> Result<Database, OpenError> {
    let named = |why: String| StoreError {
        message: format!("{}: {why}", path.display()),
        retry_after: RETRY_INTERVAL,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| named(e.to_string()))?;
    let opened = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let backend = opener(file)?;
        redb::Builder::new().create_with_backend(Backend(backend))
    }));
    let database = match opened {
        Ok(Ok(database)) => database,
        Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) => {
            return Err(OpenError::InUse(path.to_path_buf()))
        }
        Ok(Err(error)) => return Err(named(error.to_string()).into()),
        Err(_) => {
            return Err(named(
                "the file is damaged and cannot be read as a revocation database; \
                 move it aside to start with no revocations"
                    .into(),
            )
            .into())
        }
    };
    let write = database.begin_write().map_err(|e| named(e.to_string()))?;
    write
        .open_table(REVOKED)
        .map_err(|e| named(e.to_string()))?;
    write.commit().map_err(|e| named(e.to_string()))?;
    Ok(database)
}

fn file_backend() -> Opener {
    Box::new(|file| Ok(Box::new(FileBackend::new(file)?) as Box<dyn StorageBackend>))
}

impl EmbeddedStore {
    /// Opens (or creates) `revocations.redb` in `state_dir` and loads it into memory.
    pub fn open(state_dir: &Path) -> Result<EmbeddedStore, OpenError> {
        EmbeddedStore::open_with(state_dir, file_backend())
    }

    /// Like [`EmbeddedStore::open`], with the file wrapped by `opener` (every reopen too).
    pub fn open_with(state_dir: &Path, opener: Opener) -> Result<EmbeddedStore, OpenError> {
        let path = state_dir.join(REVOCATIONS_FILE);
        let database = open_database(&path, &opener)?;
        let mut revoked = HashMap::new();
        {
            let read = database.begin_read().map_err(store_error)?;
            let table = read.open_table(REVOKED).map_err(store_error)?;
            for entry in table.iter().map_err(store_error)? {
                let (id, expires) = entry.map_err(store_error)?;
                revoked.insert(id.value().to_string(), expires.value());
            }
        }
        let revoked = Arc::new(RwLock::new(revoked));
        let health = Arc::new(RwLock::new(StoreHealth::Ok));
        let (writer, commands) = mpsc::channel();
        let thread = Writer {
            path,
            opener,
            database: Some(database),
            revoked: Arc::clone(&revoked),
            health: Arc::clone(&health),
        };
        let thread = std::thread::Builder::new()
            .name("dossier-revocations".into())
            .spawn(move || thread.run(commands))
            .map_err(store_error)?;
        Ok(EmbeddedStore {
            revoked,
            health,
            writer,
            thread: Some(thread),
        })
    }

    pub fn len(&self) -> usize {
        self.revoked.read().map(|map| map.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn send<T: Send + 'static>(
        &self,
        command: Command,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> StoreFuture<T> {
        if self.writer.send(command).is_err() {
            return Box::pin(std::future::ready(Err(store_error(
                "the writer thread has stopped",
            ))));
        }
        Box::pin(async move {
            answer
                .await
                .unwrap_or_else(|_| Err(store_error("the writer thread has stopped")))
        })
    }
}

impl RevocationStore for EmbeddedStore {
    fn revoke(&self, id: &str, expires_at: SystemTime) -> StoreFuture<()> {
        let expires = unix_seconds(expires_at);
        if already_kept(&self.revoked, id, expires) {
            return Box::pin(std::future::ready(Ok(())));
        }
        let (done, answer) = oneshot::channel();
        self.send(
            Command::Revoke {
                id: id.to_string(),
                expires,
                done,
            },
            answer,
        )
    }

    fn is_revoked(&self, id: &str) -> bool {
        // A poisoned lock means a writer panicked mid-update; refusing is the safe answer.
        self.revoked.read().map_or(true, |map| map.contains_key(id))
    }

    fn purge_expired(&self, now: SystemTime) -> StoreFuture<usize> {
        let (done, answer) = oneshot::channel();
        self.send(
            Command::Purge {
                now: unix_seconds(now),
                done,
            },
            answer,
        )
    }

    fn health(&self) -> StoreHealth {
        self.health
            .read()
            .map(|health| health.clone())
            .unwrap_or(StoreHealth::Degraded {
                reason: "the store's state is unreadable".into(),
                retry_at: Instant::now() + RETRY_INTERVAL,
            })
    }
}

/// The thread that owns the database.
struct Writer {
    path: PathBuf,
    opener: Opener,
    /// `None` after a failure, until a reopen succeeds.
    database: Option<Database>,
    revoked: Arc<RwLock<HashMap<String, u64>>>,
    health: Arc<RwLock<StoreHealth>>,
}

impl Writer {
    fn run(mut self, commands: Receiver<Command>) {
        loop {
            let first = match self.retry_at() {
                None => match commands.recv() {
                    Ok(command) => command,
                    Err(_) => return,
                },
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    match commands.recv_timeout(wait) {
                        Ok(command) => command,
                        Err(RecvTimeoutError::Timeout) => {
                            self.reopen();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match commands.try_recv() {
                    Ok(command) => batch.push(command),
                    Err(_) => break,
                }
            }
            if self.retry_at().is_some_and(|at| Instant::now() >= at) {
                self.reopen();
            }
            self.apply(batch);
        }
    }

    fn retry_at(&self) -> Option<Instant> {
        match self.health.read().as_deref() {
            Ok(StoreHealth::Degraded { retry_at, .. }) => Some(*retry_at),
            _ => None,
        }
    }

    fn set_health(&self, health: StoreHealth) {
        if let Ok(mut current) = self.health.write() {
            *current = health;
        }
    }

    fn fail(&mut self, error: &StoreError) {
        tracing::error!(%error, "revocation store failed; retrying in {} s", RETRY_INTERVAL.as_secs());
        // redb refuses everything after an I/O error; only a fresh open recovers.
        self.database = None;
        self.set_health(StoreHealth::Degraded {
            reason: error.message.clone(),
            retry_at: Instant::now() + RETRY_INTERVAL,
        });
    }

    fn reopen(&mut self) {
        match open_database(&self.path, &self.opener) {
            Ok(database) => {
                tracing::info!(file = %self.path.display(), "revocation store recovered");
                self.database = Some(database);
                self.set_health(StoreHealth::Ok);
            }
            Err(error) => self.fail(&error.into()),
        }
    }

    /// Commits a batch in one transaction, then answers everyone in it.
    fn apply(&mut self, batch: Vec<Command>) {
        let Some(database) = &self.database else {
            let retry_after = self
                .retry_at()
                .map(|at| at.saturating_duration_since(Instant::now()))
                .unwrap_or(RETRY_INTERVAL);
            let reason = match self.health.read().as_deref() {
                Ok(StoreHealth::Degraded { reason, .. }) => reason.clone(),
                _ => "unavailable".into(),
            };
            let error = StoreError {
                message: reason,
                retry_after,
            };
            for command in batch {
                command.answer(Err(error.clone()), 0);
            }
            return;
        };
        let mut revocations: HashMap<&str, u64> = HashMap::new();
        let mut purge_before = None;
        for command in &batch {
            match command {
                Command::Revoke { id, expires, .. } => {
                    let entry = revocations.entry(id.as_str()).or_insert(0);
                    *entry = (*entry).max(*expires);
                }
                Command::Purge { now, .. } => purge_before = Some(*now),
            }
        }
        let result = commit(database, &revocations, purge_before);
        match result {
            Ok(purged) => {
                if let Ok(mut map) = self.revoked.write() {
                    for (id, expires) in &revocations {
                        let entry = map.entry((*id).to_string()).or_insert(0);
                        *entry = (*entry).max(*expires);
                    }
                    if let Some(now) = purge_before {
                        map.retain(|_, expires| *expires > now);
                    }
                }
                for command in batch {
                    command.answer(Ok(()), purged);
                }
            }
            Err(error) => {
                self.fail(&error);
                for command in batch {
                    command.answer(Err(error.clone()), 0);
                }
            }
        }
    }
}

impl Command {
    fn answer(self, result: Result<(), StoreError>, purged: usize) {
        match self {
            Command::Revoke { done, .. } => {
                let _ = done.send(result);
            }
            Command::Purge { done, .. } => {
                let _ = done.send(result.map(|()| purged));
            }
        }
    }
}

/// One write transaction: the revocations (never shortening one already kept) and the purge.
fn commit(
    database: &Database,
    revocations: &HashMap<&str, u64>,
    purge_before: Option<u64>,
) -> Result<usize, StoreError> {
    let write = database.begin_write().map_err(store_error)?;
    let purged = {
        let mut table = write.open_table(REVOKED).map_err(store_error)?;
        for (id, expires) in revocations {
            let keep = table
                .get(*id)
                .map_err(store_error)?
                .map(|existing| existing.value())
                .unwrap_or(0)
                .max(*expires);
            table.insert(*id, keep).map_err(store_error)?;
        }
        match purge_before {
            Some(now) => {
                let before = table.len().map_err(store_error)?;
                table
                    .retain(|_, expires| expires > now)
                    .map_err(store_error)?;
                (before - table.len().map_err(store_error)?) as usize
            }
            None => 0,
        }
    };
    // redb's default durability fsyncs on commit: after this line the revocations survive
    // a crash.
    write.commit().map_err(store_error)?;
    Ok(purged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<T>(future: StoreFuture<T>) -> Result<T, StoreError> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn revocations_persist_and_expire() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        {
            let store = EmbeddedStore::open(dir.path()).unwrap();
            block_on(store.revoke("at_1", now + Duration::from_secs(60))).unwrap();
            block_on(store.revoke("at_2", now + Duration::from_secs(600))).unwrap();
            assert!(store.is_revoked("at_1"));
            assert!(!store.is_revoked("at_3"));
        }
        let store = EmbeddedStore::open(dir.path()).unwrap();
        assert!(store.is_revoked("at_1") && store.is_revoked("at_2"));
        assert_eq!(
            block_on(store.purge_expired(now + Duration::from_secs(61))).unwrap(),
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
        block_on(store.revoke("x", now + Duration::from_secs(600))).unwrap();
        block_on(store.revoke("x", now + Duration::from_secs(10))).unwrap();
        assert_eq!(
            block_on(store.purge_expired(now + Duration::from_secs(11))).unwrap(),
            0
        );
        assert!(store.is_revoked("x"));
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = EmbeddedStore::open(dir.path()).unwrap();
            let later = SystemTime::now() + Duration::from_secs(600);
            for i in 0..200 {
                block_on(store.revoke(&format!("id_{i}"), later)).unwrap();
            }
        }
        let path = dir.path().join(REVOCATIONS_FILE);
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(4096).unwrap();
        drop(file);
        let error = match EmbeddedStore::open(dir.path()) {
            Ok(_) => panic!("a truncated database opened"),
            Err(error) => error,
        };
        assert!(
            error.to_string().contains(&path.display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn a_database_held_by_another_store_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let _first = EmbeddedStore::open(dir.path()).unwrap();
        match EmbeddedStore::open(dir.path()) {
            Err(OpenError::InUse(path)) => assert_eq!(path, dir.path().join(REVOCATIONS_FILE)),
            Err(other) => panic!("not recognised as in use: {other}"),
            Ok(_) => panic!("one database opened twice"),
        }
    }
}
