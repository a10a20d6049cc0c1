//! Hot reload: watch the source directory, recompile on change, swap the new version in.
//!
//! One thread owns the watcher and does the compiling, so the async workers never block on
//! it. Bursts of events (one editor save raises several, a `git checkout` hundreds) are
//! debounced: after the first event the thread waits until the directory has been quiet for
//! [`QUIET`], or at most [`MAX_WAIT`], then compiles once. The new version replaces the old
//! one as a single value ([`LiveState::install`](crate::live::LiveState::install)); a version that fails to compile never replaces
//! anything, and `/api/health` reports its errors until a good version arrives.
//!
//! Editors save in different ways: write a temporary file and rename it over the original
//! (vim, most IDEs), truncate and rewrite, or delete and create. All of them end in events
//! under the watched directory. The directory itself may be replaced (`mv new content`, or
//! `dossier build` renaming a fresh `build/` into place), so the parent is watched too and the
//! recursive watch is re-established when the directory's identity changes.

use std::os::unix::fs::MetadataExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{Event, EventKind, RecursiveMode, Watcher};

use crate::auth::keys::PublicJwk;
use crate::config::Compression;
use crate::config::SiteConfig;
use crate::content::{is_editor_leftover, ContentError};
use crate::live::{self, ContentStatus, Live, LiveState, LoadError, Version};

/// What a reload needs of whatever serves the live version (`serve::App`): the live state
/// to swap into, the site's configuration, and the keys to publish in the new JWKS. Reload
/// knows nothing else of the server.
pub trait Host: Send + Sync + 'static {
    fn live_state(&self) -> &LiveState;
    fn config(&self) -> &SiteConfig;
    /// The public keys the JWKS of a version compiled now must list.
    fn published_jwks(&self) -> Vec<PublicJwk>;
}

/// How long the directory must be quiet before a batch of events is compiled.
pub const QUIET: Duration = Duration::from_millis(25);
/// The longest a batch waits for quiet, so a steady trickle of writes still gets compiled.
pub const MAX_WAIT: Duration = Duration::from_millis(250);

#[derive(Debug, thiserror::Error)]
#[error("cannot watch for changes: {0}")]
pub struct WatchError(String);

/// (device, inode) of a directory, to notice when it is replaced by another one; `serve`
/// takes it before loading, for [`watch_in_background`].
pub fn identity(dir: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

fn relevant(event: &Event, targets: &[PathBuf]) -> bool {
    !matches!(event.kind, EventKind::Access(_))
        && event.paths.iter().any(|path| {
            targets.iter().any(|target| path.starts_with(target)) && !is_editor_leftover(path)
        })
}

/// A watch on a source directory (and the user's templates). Setting it up walks the tree
/// (0.3 s at 100,000 pages), so `serve` makes it after the first load, beside the serving
/// ([`watch_in_background`]). Not before the load: inotify reports every file the load
/// opens, and at that size those events cost the load a fifth of its time and overflow the
/// queue. An edit made before the watch exists is not lost: the first reload looks at
/// every file's stamp.
struct Watch {
    watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<notify::Result<Event>>,
    target: PathBuf,
    /// (device, inode) of `target` when its watch was set.
    watched: Option<(u64, u64)>,
    targets: Vec<PathBuf>,
}

impl Watch {
    /// Watches `source` (and its parent, to notice it being replaced) and `templates`.
    fn start(source: &Path, templates: Option<&Path>) -> Result<Watch, WatchError> {
        let started = Instant::now();
        let target = std::path::absolute(source).map_err(|e| WatchError(e.to_string()))?;
        let parent = target
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let (sender, events) = mpsc::channel();
        // Reads raise access events (every reload opens the files it reads while the
        // watch exists): dropped here, so the queue holds only what a reload looks at.
        let forward = move |event: notify::Result<Event>| {
            if !matches!(&event, Ok(event) if matches!(event.kind, EventKind::Access(_))) {
                let _ = sender.send(event);
            }
        };
        let mut watcher =
            notify::recommended_watcher(forward).map_err(|e| WatchError(e.to_string()))?;
        watcher
            .watch(&parent, RecursiveMode::NonRecursive)
            .map_err(|e| WatchError(format!("{}: {e}", parent.display())))?;
        // Which directory the recursive watch is on: taken before it is set, so a
        // replacement in between shows as a change of identity at the next batch.
        let watched = identity(&target);
        watcher
            .watch(&target, RecursiveMode::Recursive)
            .map_err(|e| WatchError(format!("{}: {e}", target.display())))?;
        let mut targets = vec![target.clone()];
        // User templates are part of the site: editing one recompiles like editing content.
        if let Some(templates) = templates {
            let templates =
                std::path::absolute(templates).map_err(|e| WatchError(e.to_string()))?;
            watcher
                .watch(&templates, RecursiveMode::Recursive)
                .map_err(|e| WatchError(format!("{}: {e}", templates.display())))?;
            tracing::info!(dir = %templates.display(), "watching templates");
            targets.push(templates);
        }
        tracing::debug!(ms = started.elapsed().as_millis() as u64, "watch set up");
        Ok(Watch {
            watcher,
            events,
            target,
            watched,
            targets,
        })
    }
}

/// Starts watching the app's source directory. The thread ends when the process does.
pub fn watch<H: Host>(app: Arc<H>) -> Result<JoinHandle<()>, WatchError> {
    watch_since(app, None)
}

/// [`watch`] for a version whose source directory had identity `loaded` (device, inode)
/// when it was read: a build directory replaced since, before the watch existed, is read
/// again at once.
fn watch_since<H: Host>(
    app: Arc<H>,
    loaded: Option<(u64, u64)>,
) -> Result<JoinHandle<()>, WatchError> {
    let watch = Watch::start(
        app.live_state().source().dir(),
        app.config().templates.as_deref(),
    )?;
    reload_on_change(app, watch, loaded)
}

/// [`watch`] on a thread of its own, so the server answers while the watch is set up. If it
/// cannot be set up, the server goes on serving what it loaded, and says so. `loaded` is
/// the [`identity`] of the source directory taken before the version being served was read.
pub fn watch_in_background<H: Host>(app: Arc<H>, loaded: Option<(u64, u64)>) {
    let spawned = std::thread::Builder::new()
        .name("dossier-watch".into())
        .spawn(move || {
            let watched = std::panic::catch_unwind(AssertUnwindSafe(|| watch_since(app, loaded)))
                .unwrap_or_else(|panic| Err(WatchError(panic_message(panic.as_ref()))));
            if let Err(error) = watched {
                tracing::error!(%error, "hot reload is off; restart to pick up edits");
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "hot reload is off; restart to pick up edits");
    }
}

/// Reloads `app` whenever `watch` sees its sources change, on a thread of its own that ends
/// with the process. For content, its first reload comes at once: the watch begins after
/// the version being served was read, and an edit in between raised no event. With the
/// unchanged pages taken from that version by their stamps, a reload that finds nothing
/// changed reads no page again. A build is read whole, so it is read again at once only
/// when the directory is no longer the one `loaded` names (`dossier build` replaces it by
/// a rename).
fn reload_on_change<H: Host>(
    app: Arc<H>,
    watch: Watch,
    loaded: Option<(u64, u64)>,
) -> Result<JoinHandle<()>, WatchError> {
    let Watch {
        mut watcher,
        events,
        target,
        mut watched,
        targets,
    } = watch;
    tracing::info!(dir = %target.display(), "watching for changes");
    let thread = std::thread::Builder::new()
        .name("dossier-reload".into())
        .spawn(move || {
            let replaced = loaded.is_some() && loaded != watched;
            if matches!(app.live_state().source(), live::Source::Content(_)) || replaced {
                reload_changed(&app, "", None);
            }
            // Whether some change may have gone unseen since the last reload (an error, or
            // a queue overflow the watcher reports as "rescan"): then the next reload looks
            // at every file rather than at the paths the events named.
            let mut missed = false;
            loop {
                // Wait for the first relevant event of a batch.
                let mut changed = std::collections::BTreeSet::new();
                match events.recv() {
                    Ok(Ok(event)) if event.need_rescan() => {
                        missed = true;
                        changed.extend(event.paths);
                    }
                    Ok(Ok(event)) if relevant(&event, &targets) => {
                        changed.extend(event.paths);
                    }
                    Ok(Ok(_)) => continue,
                    Ok(Err(error)) => {
                        tracing::warn!(%error, "file watcher error");
                        missed = true;
                        continue;
                    }
                    Err(_) => return,
                }
                // Quiet means no *relevant* event for QUIET: the compiler's own reads raise
                // access events, which must not hold the next reload back.
                let first = Instant::now();
                let mut last = first;
                loop {
                    let deadline = (last + QUIET).min(first + MAX_WAIT);
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    match events.recv_timeout(deadline - now) {
                        Ok(Ok(event)) if event.need_rescan() || relevant(&event, &targets) => {
                            missed |= event.need_rescan();
                            changed.extend(event.paths);
                            last = Instant::now();
                        }
                        Ok(Err(error)) => {
                            tracing::warn!(%error, "file watcher error");
                            missed = true;
                        }
                        Ok(_) => {}
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                let now = identity(&target);
                if now.is_some() && now != watched {
                    missed = true;
                    let _ = watcher.unwatch(&target);
                    match watcher.watch(&target, RecursiveMode::Recursive) {
                        Ok(()) => watched = now,
                        Err(error) => tracing::warn!(%error, "cannot watch the replaced directory"),
                    }
                }
                let edited: Vec<PathBuf> = changed.iter().cloned().collect();
                reload_changed(
                    &app,
                    &files_list(&changed, &targets),
                    (!missed).then_some(edited.as_slice()),
                );
                missed = false;
            }
        })
        .map_err(|e| WatchError(e.to_string()))?;
    Ok(thread)
}

/// "content/divisions/a.json, content/pages/b.md and 4 more": the files of a batch for one
/// log line, relative to the watched directory that holds them. An editor's or `sed -i`'s
/// temporary file (gone by now, and not a kind of file the site is made of) is left out.
fn files_list(changed: &std::collections::BTreeSet<PathBuf>, targets: &[PathBuf]) -> String {
    const SITE_FILES: [&str; 5] = ["json", "md", "html", "css", "txt"];
    const SHOWN: usize = 5;
    let names: Vec<String> = changed
        .iter()
        .filter(|path| !is_editor_leftover(path))
        .filter(|path| {
            path.exists()
                || path
                    .extension()
                    .is_some_and(|ext| SITE_FILES.contains(&ext.to_string_lossy().as_ref()))
        })
        .filter_map(|path| {
            targets.iter().find_map(|target| {
                let relative = path.strip_prefix(target).ok()?;
                let base = target.file_name()?.to_string_lossy();
                Some(format!("{base}/{}", relative.display()))
            })
        })
        .collect();
    let mut text: Vec<String> = names.iter().take(SHOWN).cloned().collect();
    if names.len() > SHOWN {
        text.push(format!("and {} more", names.len() - SHOWN));
    }
    text.join(", ")
}

/// The text a panic was raised with (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Held while a reload compiles and swaps: an edit and a key rotation can ask at once, and
/// the later request must not install a version compiled before the earlier one.
static RELOADING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Compiles the source once, with the keys published now, and swaps the result in, or
/// reports why not; then compresses the new version's variants in the background.
pub fn reload<H: Host>(app: &Arc<H>) {
    reload_changed(app, "", None);
}

/// [`reload`] after an edit of `files` (named in the log lines). `edited` is every path the
/// watcher saw change, when it saw all of them (no overflow or error since the last
/// reload): then a page edit reads only that page ([`live::prepare_edited`]).
pub fn reload_changed<H: Host>(app: &Arc<H>, files: &str, edited: Option<&[PathBuf]>) {
    let installed = {
        let _one_at_a_time = RELOADING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let jwks = app.published_jwks();
        let live = app.live_state();
        reload_files(live, files, |previous| {
            live::prepare_edited(live.source(), app.config(), &jwks, Some(previous), edited)
        })
    };
    // Nothing new to compress otherwise; the job of the version still live goes on.
    if installed {
        compress_in_background(Arc::clone(app));
    }
}

/// Which background compression is the latest asked for: an older one stops early.
static COMPRESSION_JOB: AtomicU64 = AtomicU64::new(0);

/// Artifacts compressed per round before the result is swapped in. Small enough that a
/// reload never waits long for the cores, and that variants made before an edit are kept:
/// the next version takes them over with every unchanged artifact.
const COMPRESSION_ROUND: usize = 256;

/// Makes the live version's missing gzip and brotli variants on a background thread and
/// swaps them in round by round, until a newer version goes live (whose own job then goes
/// on from there). Until then responses are sent without compression: a response never
/// waits for it, and never gets a variant of other bytes (each variant has its own ETag,
/// made with it).
///
/// Its first act, once per process, is moving the first version's bodies to the spool
/// (whatever the compression setting), under the reload lock: no reload can install a
/// version of the same revision in between, whose variants or spooled bodies it would
/// replace. Its second is moving the live version's page texts there too.
pub fn compress_in_background<H: Host>(app: Arc<H>) {
    let deferred = app.config().compression == Compression::Deferred;
    let job = COMPRESSION_JOB.fetch_add(1, Ordering::SeqCst) + 1;
    let spawned = std::thread::Builder::new()
        .name("dossier-compress".into())
        .spawn(move || {
            lowest_priority();
            let started = Instant::now();
            let spooled_first = {
                let _one_at_a_time = RELOADING
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                app.live_state()
                    .first_version_spooled()
                    .map(|spooled| {
                        let revision = spooled.revision().to_string();
                        app.live_state().install_encodings(&revision, spooled)
                    })
                    .is_some()
            };
            // The pages' texts follow the bodies: those of the first version, then those
            // each edit brings (a newer job will see those of its own version).
            if COMPRESSION_JOB.load(Ordering::SeqCst) == job {
                app.live_state().spool_texts();
            }
            if spooled_first {
                // Every body's and text's heap copy was just freed (1.3 GB at 100,000
                // pages): the largest free of the process's life, given back before
                // compressing.
                release_free_memory();
            }
            if !deferred {
                return;
            }
            let mut rounds = 0;
            loop {
                if COMPRESSION_JOB.load(Ordering::SeqCst) != job {
                    return;
                }
                let artifacts = Arc::clone(&app.live_state().current().artifacts);
                let Some(mut compressed) =
                    crate::compile::add_encodings(&artifacts, COMPRESSION_ROUND)
                else {
                    // After a large job (a start, or an edit every page shows), fold its
                    // many changes so a lookup is one probe again. That costs time in the
                    // size of the site, so not after the few variants of a page edit.
                    let large = rounds > 1;
                    if large {
                        let folded = artifacts.folded();
                        let _one_at_a_time = RELOADING
                            .lock()
                            .unwrap_or_else(|poisoned| poisoned.into_inner());
                        app.live_state()
                            .install_encodings(artifacts.revision(), folded);
                    }
                    tracing::info!(
                        revision = artifacts.revision(),
                        compress_ms = started.elapsed().as_millis() as u64,
                        "compressed variants ready"
                    );
                    drop(artifacts);
                    // Also after a page edit: making a version frees copies of shared parts
                    // (the search index's lists, the map of page files) that otherwise
                    // stayed resident, 50 to 150 MiB more after 30 edits at 100,000 pages.
                    // It takes 3 to 18 ms there, on this thread at nice 19.
                    release_free_memory();
                    return;
                };
                rounds += 1;
                app.live_state().spool_bodies(&mut compressed);
                let installed = {
                    let _one_at_a_time = RELOADING
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    app.live_state()
                        .install_encodings(artifacts.revision(), compressed)
                };
                // Compressing read every body of the round.
                app.live_state().release_resident();
                if !installed {
                    return;
                }
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start compressing; responses stay uncompressed");
    }
}

/// Hands memory that compiling and compressing freed back to the system. The allocator
/// (mimalloc, see `main.rs`) returns freed pages only when the thread that freed them
/// allocates again, and the threads that compiled a version are idle once it is swapped in.
fn release_free_memory() {
    // SAFETY: mi_collect takes no pointers; `force` also purges what other threads freed.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Lowers the calling thread, and the threads it starts, to the lowest CPU priority
/// (nice 19): compressing 10,000 pages keeps every core busy for seconds, and requests and
/// reloads must not wait behind it. On Linux the nice value belongs to each thread and new
/// threads inherit it. Failing to lower it is harmless.
fn lowest_priority() {
    // SAFETY: setpriority only reads its arguments; `who = 0` names the calling thread.
    let result = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
    if result != 0 {
        tracing::debug!("cannot lower the compression thread's priority");
    }
}

/// Swaps in what `compile` makes of the source, or reports why not. A panic inside
/// `compile` (a bug, or a library choking on some input) is reported like a content error:
/// the last good version keeps serving and `/api/health` says what happened.
pub fn reload_with(live: &LiveState, compile: impl FnOnce(&Live) -> Result<Version, LoadError>) {
    let _installed = reload_files(live, "", compile);
}

/// Whether a new version was installed.
fn reload_files(
    live: &LiveState,
    files: &str,
    compile: impl FnOnce(&Live) -> Result<Version, LoadError>,
) -> bool {
    let started = Instant::now();
    let current = live.current();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| compile(&current)))
        .unwrap_or_else(|panic| {
            let message = panic_message(panic.as_ref());
            Err(LoadError::Crashed(format!(
                "compiling the content failed unexpectedly ({message}); this is a bug in dossier, please report it with the file that triggers it"
            )))
        });
    let elapsed = started.elapsed();
    match result {
        Ok(version) => {
            let changed = version.artifacts.differing_paths(&current.artifacts);
            let was_broken = matches!(current.status, ContentStatus::Error(_));
            if changed == 0 && !was_broken {
                tracing::debug!("files changed but no response did; nothing to swap");
                return false;
            }
            let previous = current.artifacts.revision().to_string();
            let revision = version.artifacts.revision().to_string();
            let pages_reused = version.compiled.as_ref().map_or(0, |c| c.pages_reused());
            // Links are checked in the pages that changed, so an edit costs what it changes;
            // a link broken by removing its target shows in `dossier check` and at startup.
            let broken = match live.source() {
                crate::live::Source::Content(dir) => crate::links::report_pages(
                    version.model.site(),
                    version.artifacts.as_ref(),
                    dir,
                    crate::compile::reuse::page_changes(current.model.site(), version.model.site())
                        .0
                        .into_iter(),
                ),
                crate::live::Source::Build(_) => Vec::new(),
            };
            drop(current);
            live.install(version);
            tracing::info!(
                %revision,
                %previous,
                changed,
                pages_reused,
                compile_ms = elapsed.as_millis() as u64,
                files,
                "reloaded"
            );
            if was_broken {
                tracing::info!("the content errors reported earlier are fixed");
            }
            for line in broken {
                tracing::warn!("{line}");
            }
            true
        }
        Err(error) => {
            let errors = match error {
                LoadError::Content(errors) => errors.0,
                // A template error names the template file and line, like content errors.
                LoadError::Compile(crate::compile::CompileError {
                    reason,
                    template: Some((file, line)),
                    ..
                }) => vec![ContentError::at_line(file, line, reason)],
                other => vec![ContentError::whole_file(
                    live.source().dir(),
                    other.to_string(),
                )],
            };
            for error in &errors {
                tracing::warn!("{error}");
            }
            tracing::warn!(
                serving = current.artifacts.revision(),
                problems = errors.len(),
                files,
                "reload refused; still serving the last good version"
            );
            drop(current);
            live.report_errors(errors);
            false
        }
    }
}

#[cfg(test)]
mod file_list_tests {
    use std::collections::BTreeSet;
    use std::fs;

    use super::*;

    #[test]
    fn a_batch_names_its_site_files_and_not_editor_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("content");
        fs::create_dir_all(content.join("pages")).unwrap();
        fs::write(content.join("pages/kept.md"), "x").unwrap();
        let changed: BTreeSet<PathBuf> = [
            content.join("pages/kept.md"),
            content.join("pages/deleted.md"),
            content.join("pages/sedX1a2b3"),
            content.join("pages/.kept.md.swp"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            files_list(&changed, std::slice::from_ref(&content)),
            "content/pages/deleted.md, content/pages/kept.md"
        );
        let many: BTreeSet<PathBuf> = (0..8)
            .map(|i| content.join(format!("pages/p{i}.md")))
            .collect();
        assert!(files_list(&many, &[content]).ends_with("and 3 more"));
    }
}
