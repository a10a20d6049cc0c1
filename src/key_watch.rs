//! Key pick-up: a running instance starts using a rotated keyring without a restart.
//!
//! Once every [`POLL`] the watcher
//! 1. with a shared store, fetches the keyring from Redis and, when it changed, writes it to
//!    the state directory's copy (so a restart without Redis still has the newest keys).
//!    A keyring that shares no generation with the one in use is not taken (it was planted,
//!    or made by an instance that met an emptied Redis): the error is logged and this
//!    instance keeps its keys. When Redis holds no keyring at all (it lost its data), or
//!    an older one (without the current generation in use here: a replica that lagged
//!    behind a rotation), the one in use is published again;
//! 2. reads the state directory's `keys.json` when the file changed (after
//!    `dossier keys rotate --state`, or step 1) and, if it differs from the keys in use and
//!    shares a generation with them, installs it: new credentials are signed with the new
//!    current key at once, and those signed by retired keys keep verifying through their
//!    overlap. Unrelated keys in the file are refused the same way (a restart takes them);
//! 3. recompiles when the keys were installed, or when a retired key's overlap has just
//!    ended, so the JWKS always lists exactly the keys that verify.
//!
//! Polling one small file and one Redis key a second costs nothing measurable and has no
//! failure modes of its own (a missed notification, a watch on a replaced directory).
//! Problems are logged when they start and when they end, never once a second.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::auth::keys::{Keyring, Relation, KEYRING_FILE};
use crate::auth::shared_keys::{SharedKeys, KEYRING_KEY};
use crate::reload;
use crate::serve::App;

/// How often the keyring is checked: the longest a rotation takes to be picked up.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// What identifies one version of a file: a rotation renames a new file into place.
fn stamp(path: &Path) -> Option<(u64, u64, i64, i64)> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// Starts watching; the task ends with the runtime.
pub(crate) fn spawn(app: Arc<App>, state_dir: PathBuf, shared: Option<SharedKeys>) {
    tokio::spawn(run(app, state_dir, shared));
}

async fn run(app: Arc<App>, state_dir: PathBuf, shared: Option<SharedKeys>) {
    let path = state_dir.join(KEYRING_FILE);
    let mut installed = app.auth().keys().keyring().to_text();
    let mut file = stamp(&path);
    let mut published = app.auth().published_jwks(app.clock().now());
    let mut trouble: Option<String> = None;
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let mut problem = None;
        if let Some(shared) = &shared {
            if let Err(error) = follow_redis(shared, &state_dir, &installed).await {
                problem = Some(error);
            }
        }
        let mut changed = false;
        let now_stamp = stamp(&path);
        if now_stamp != file {
            file = now_stamp;
            match Keyring::load(&state_dir) {
                Ok(Some(keyring)) => {
                    let text = keyring.to_text();
                    if text != installed {
                        let kid = keyring.current().identity.kid().to_string();
                        // An operator's own file may be older (a restored backup), never
                        // another deployment's.
                        let relation = keyring.relation_to(app.auth().keys().keyring());
                        if relation == Relation::Unrelated {
                            problem = Some(format!(
                                "{} now holds keys unrelated to those in use (current {kid}); \
                                 keeping the keys in use. Restart to take the new file",
                                path.display()
                            ));
                        } else {
                            match app.auth().install_keys(keyring) {
                                Ok(()) => {
                                    installed = text;
                                    changed = true;
                                    tracing::info!(%kid, "picked up a rotated keyring");
                                }
                                Err(error) => problem = Some(error.to_string()),
                            }
                        }
                    }
                }
                // Deleted: keep signing with the keys in memory; the next start makes new ones.
                Ok(None) => {}
                Err(error) => problem = Some(error.to_string()),
            }
        }
        let now_published = app.auth().published_jwks(app.clock().now());
        if changed || now_published != published {
            published = now_published;
            let app = Arc::clone(&app);
            let _ = tokio::task::spawn_blocking(move || reload::reload(&app)).await;
        }
        if problem != trouble {
            match &problem {
                Some(error) => tracing::error!(%error, "cannot check the keyring for rotations"),
                None => tracing::info!("checking the keyring for rotations again"),
            }
            trouble = problem;
        }
    }
}

/// Copies a keyring rotated in Redis into the state directory, or publishes the one in use
/// when Redis has lost it. A keyring unrelated to the one in use is refused.
async fn follow_redis(
    shared: &SharedKeys,
    state_dir: &Path,
    installed: &str,
) -> Result<(), String> {
    let Some(text) = shared.fetch().await.map_err(|e| e.message)? else {
        if shared
            .replace(None, installed)
            .await
            .map_err(|e| e.message)?
        {
            tracing::warn!(
                "Redis held no keyring (it lost its data?); published this instance's keys again"
            );
        }
        return Ok(());
    };
    if text == installed {
        return Ok(());
    }
    let keyring = Keyring::parse(&text, Path::new(KEYRING_KEY)).map_err(|e| e.to_string())?;
    let ours = Keyring::parse(installed, Path::new(KEYRING_FILE)).map_err(|e| e.to_string())?;
    match keyring.relation_to(&ours) {
        Relation::Follows => {}
        // A replica that lagged behind a rotation: taking it would make a retired key sign
        // again. Ours goes back, unless it changed meanwhile.
        Relation::Older => {
            if shared
                .replace(Some(&text), installed)
                .await
                .map_err(|e| e.message)?
            {
                tracing::warn!(
                    "Redis held an older keyring than this instance's; published this instance's again"
                );
            }
            return Ok(());
        }
        Relation::Unrelated => {
            return Err(format!(
                "Redis ({KEYRING_KEY}) holds a keyring unrelated to this instance's (current {}); \
                 keeping this instance's keys. If the deployment's keys were replaced on purpose, \
                 restart the instances with state directories without {KEYRING_FILE}",
                keyring.current().identity.kid()
            ))
        }
    }
    let state_dir = state_dir.to_path_buf();
    tokio::task::spawn_blocking(move || keyring.save(&state_dir))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}
