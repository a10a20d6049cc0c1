//! Key pick-up: a running instance starts using a rotated keyring without a restart.
//!
//! Once every [`POLL`] the watcher
//! 1. with a shared store, fetches the keyring from Redis and, when it changed, writes it to
//!    the state directory's copy (so a restart without Redis still has the newest keys);
//! 2. reads the state directory's `keys.json` when the file changed (after
//!    `dossier keys rotate --state`, or step 1) and, if it differs from the keys in use,
//!    installs it: new credentials are signed with the new current key at once, and those
//!    signed by retired keys keep verifying through their overlap;
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

use crate::auth::keys::{Keyring, KEYRING_FILE};
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
                        let related = keyring.shares_a_generation(app.auth().keys().keyring());
                        match app.auth().install_keys(keyring) {
                            Ok(()) => {
                                installed = text;
                                changed = true;
                                if related {
                                    tracing::info!(%kid, "picked up a rotated keyring");
                                } else {
                                    tracing::warn!(%kid, "the keyring was replaced by unrelated keys; credentials issued before no longer verify");
                                }
                            }
                            Err(error) => problem = Some(error.to_string()),
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
                Some(error) => tracing::warn!(%error, "cannot check the keyring for rotations"),
                None => tracing::info!("checking the keyring for rotations again"),
            }
            trouble = problem;
        }
    }
}

/// Copies a keyring rotated in Redis into the state directory.
async fn follow_redis(
    shared: &SharedKeys,
    state_dir: &Path,
    installed: &str,
) -> Result<(), String> {
    let Some(text) = shared.fetch().await.map_err(|e| e.message)? else {
        return Ok(());
    };
    if text == installed {
        return Ok(());
    }
    let keyring = Keyring::parse(&text, Path::new(KEYRING_KEY)).map_err(|e| e.to_string())?;
    let state_dir = state_dir.to_path_buf();
    tokio::task::spawn_blocking(move || keyring.save(&state_dir))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}
