//! The live state: one immutable value per content revision, swapped as a whole.
//!
//! A request loads the current [`Live`] once and uses that version to the end, so it never
//! sees a mix of two revisions. Producing a new `Live` (from `content/` or from a `build/`)
//! happens here, and so does swapping it in: [`LiveState`] owns the swap, so `reload` needs no
//! server and the server holds one `LiveState` it never replaces.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::{ArcSwap, Guard};

use crate::auth::keys::PublicJwk;
use crate::auth::store::StoreHealth;
use crate::compile::{
    self, output, Artifact, ArtifactSet, CachePolicy, CompileInput, Previous, Rendered,
};
use crate::config::SiteConfig;
use crate::content::{self, ContentError, ContentErrors, PageFiles, Site};
use crate::health::health_document;
pub use crate::health::ContentStatus;
use crate::mcp::Prepared;
use crate::paths;
use crate::read_model::ReadModel;
use crate::spool::Spool;

/// Where the artifacts come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Compile `content/` in memory.
    Content(PathBuf),
    /// Load a directory written by `dossier build`.
    Build(PathBuf),
}

impl Source {
    pub fn label(&self) -> &'static str {
        match self {
            Source::Content(_) => "content",
            Source::Build(_) => "build",
        }
    }

    pub fn dir(&self) -> &Path {
        match self {
            Source::Content(dir) | Source::Build(dir) => dir,
        }
    }
}

/// Why no artifact set could be produced.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Content(#[source] ContentErrors),
    #[error("{0}")]
    Compile(#[source] compile::CompileError),
    #[error("{0}")]
    Build(#[source] output::OutputError),
    /// The build was made for another origin or with another identity key.
    #[error("{0}")]
    Mismatch(String),
    /// Compiling panicked; the message says where to look.
    #[error("{0}")]
    Crashed(String),
}

/// Reads and compiles `content_dir` from scratch.
pub fn compile_content(
    content_dir: &Path,
    config: &SiteConfig,
    jwks: &[PublicJwk],
) -> Result<(ArtifactSet, Site), LoadError> {
    let site = content::load(content_dir).map_err(LoadError::Content)?;
    let (artifacts, _) = compile_site(&site, config, jwks, None)?;
    Ok((artifacts, site))
}

fn compile_site(
    site: &Site,
    config: &SiteConfig,
    jwks: &[PublicJwk],
    previous: Option<Previous<'_>>,
) -> Result<(ArtifactSet, Rendered), LoadError> {
    compile::compile_in_context(&CompileInput {
        site,
        config,
        jwks,
        previous,
    })
    .map_err(LoadError::Compile)
}

/// Loads a `build/` and checks that it was made for this origin and this identity key.
pub fn load_build(
    build_dir: &Path,
    config: &SiteConfig,
    jwks: &[PublicJwk],
) -> Result<(ArtifactSet, Site), LoadError> {
    let (set, base_url) = output::read_build(build_dir).map_err(LoadError::Build)?;
    if base_url != config.base_url {
        return Err(LoadError::Mismatch(format!(
            "{} was built for {base_url}, but this server's base URL is {}; rebuild with --base-url {} or serve with --base-url {base_url}",
            build_dir.display(),
            config.base_url,
            config.base_url
        )));
    }
    let set = with_current_jwks(set, jwks, build_dir)?;
    // The site model travels in the build beside the artifacts; MCP and the paginated API
    // are built from it, so they cannot disagree with the files. (Builds made before it
    // did carried the whole model as the body of /api/company.)
    let model = output::read_model(build_dir).map_err(LoadError::Build)?;
    let site = match &model {
        Some(bytes) => serde_json::from_slice::<Site>(bytes).map_err(|e| e.to_string()),
        None => set
            .get(paths::API_COMPANY)
            .ok_or_else(|| "the build has no /api/company".to_string())
            .and_then(|artifact| {
                serde_json::from_slice::<Site>(&artifact.identity.body).map_err(|e| e.to_string())
            }),
    }
    .map_err(|reason| LoadError::Mismatch(format!("{}: {reason}", build_dir.display())))?;
    Ok((set, site))
}

/// Checks that a build publishes this server's keys, and brings its JWKS up to date when
/// the keys were rotated since it was made (the new key must be published at once; the
/// build on a CDN needs a rebuild too, which the warning says).
fn with_current_jwks(
    set: ArtifactSet,
    jwks: &[PublicJwk],
    build_dir: &Path,
) -> Result<ArtifactSet, LoadError> {
    #[derive(serde::Deserialize)]
    struct Published {
        keys: Vec<Kid>,
    }
    #[derive(serde::Deserialize)]
    struct Kid {
        kid: String,
    }
    let published: Vec<String> = set
        .get(paths::JWKS)
        .and_then(|artifact| serde_json::from_slice::<Published>(&artifact.identity.body).ok())
        .map(|document| document.keys.into_iter().map(|key| key.kid).collect())
        .unwrap_or_default();
    let ours: Vec<&str> = jwks.iter().map(|key| key.kid.as_str()).collect();
    if !published.iter().any(|kid| ours.contains(&kid.as_str())) {
        return Err(LoadError::Mismatch(format!(
            "{} publishes a JWKS without this server's identity key (kid {}); build and serve with the same --state directory",
            build_dir.display(),
            ours.first().copied().unwrap_or("-")
        )));
    }
    if published == ours {
        return Ok(set);
    }
    tracing::warn!(
        build = %build_dir.display(),
        "the build's JWKS predates a key rotation; serving the current keys (rebuild before uploading it to a CDN)"
    );
    let current = compile::documents::discovery::jwks(jwks)
        .map_err(LoadError::Compile)?
        .with_encodings(None);
    Ok(set.with(current))
}

/// Everything one content revision serves, ready to be swapped in.
pub struct Version {
    pub artifacts: Arc<ArtifactSet>,
    /// The site, its origin and its search index, which MCP and the computed reads answer
    /// from.
    pub model: Arc<ReadModel>,
    pub mcp: Arc<Prepared>,
    /// What the next reload may reuse; `None` for a version read from a build.
    pub compiled: Option<Arc<Compiled>>,
}

/// What compiling `content/` leaves for the next reload besides the site model (which the
/// read model holds): where each page came from, and the context pages were rendered in.
pub struct Compiled {
    files: PageFiles,
    rendered: Rendered,
}

impl Compiled {
    /// How many pages were taken from the version before instead of rendered again.
    pub fn pages_reused(&self) -> usize {
        self.rendered.pages_reused
    }
}

/// Produces a [`Version`] from `source`. For content, the read model (with its search index)
/// and what MCP prepares from it are built on a second
/// thread while the artifacts compile: both read the same site model. Whatever `previous`
/// (the version being replaced) has that did not change is reused: page files not read
/// again, pages not rendered again, their search terms not stemmed again.
pub fn prepare(
    source: &Source,
    config: &SiteConfig,
    jwks: &[PublicJwk],
    previous: Option<&Live>,
) -> Result<Version, LoadError> {
    prepare_edited(source, config, jwks, previous, None)
}

/// [`prepare`] when a file watcher says that only the files at `edited` changed since
/// `previous` was prepared ([`content::load_edited`]). `previous` must then be a version
/// whose content loaded without errors: after a refused edit, files the watcher named
/// before may differ from it too.
pub fn prepare_edited(
    source: &Source,
    config: &SiteConfig,
    jwks: &[PublicJwk],
    previous: Option<&Live>,
    edited: Option<&[PathBuf]>,
) -> Result<Version, LoadError> {
    let edited =
        edited.filter(|_| previous.is_some_and(|live| matches!(live.status, ContentStatus::Ok)));
    match source {
        Source::Content(dir) => {
            let started = std::time::Instant::now();
            let reusable = previous.and_then(|live| {
                let compiled = live.compiled.as_deref()?;
                Some((live.model.site(), compiled))
            });
            let (site, files) = content::load_edited(
                dir,
                reusable.map(|(site, compiled)| (site, &compiled.files)),
                edited,
            )
            .map_err(LoadError::Content)?;
            let site = Arc::new(site);
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "content read");
            let previous_model = previous.map(|live| live.model.as_ref());
            std::thread::scope(|scope| {
                let readers = scope.spawn(|| {
                    let started = std::time::Instant::now();
                    // A first load's search index is built once the rest of the version
                    // is made (below); a reload's is patched from the last one.
                    let model = Arc::new(match previous_model {
                        Some(previous) => {
                            ReadModel::build_reusing(Arc::clone(&site), &config.base_url, previous)
                        }
                        None => {
                            ReadModel::without_search_index(Arc::clone(&site), &config.base_url)
                        }
                    });
                    let mcp = Prepared::build(Arc::clone(&model));
                    tracing::debug!(
                        ms = started.elapsed().as_millis() as u64,
                        "read model and MCP answers built"
                    );
                    (model, mcp)
                });
                let compile_started = std::time::Instant::now();
                let previous = previous.map(|live| Previous {
                    artifacts: &live.artifacts,
                    compiled: reusable.map(|(site, compiled)| (site, &compiled.rendered)),
                });
                let (artifacts, rendered) = compile_site(&site, config, jwks, previous)?;
                tracing::debug!(
                    ms = compile_started.elapsed().as_millis() as u64,
                    "artifacts compiled"
                );
                let (model, mcp) = readers.join().map_err(|_| {
                    LoadError::Crashed(
                        "building the read model panicked (a bug: the log above says where)".into(),
                    )
                })?;
                ReadModel::build_search_index_in_background(&model);
                Ok(Version {
                    artifacts: Arc::new(artifacts),
                    model,
                    mcp: Arc::new(mcp),
                    compiled: Some(Arc::new(Compiled { files, rendered })),
                })
            })
        }
        Source::Build(dir) => {
            let (artifacts, site) = load_build(dir, config, jwks)?;
            // At a start the index is built once the version is made; a reload (a new
            // build, a key rotation) builds it here, off the request path, so only a
            // start's searches ever wait for it.
            let model = match previous {
                None => {
                    let model = ReadModel::without_search_index(Arc::new(site), &config.base_url);
                    let model = Arc::new(model);
                    ReadModel::build_search_index_in_background(&model);
                    model
                }
                Some(_) => Arc::new(ReadModel::build(Arc::new(site), &config.base_url)),
            };
            Ok(Version {
                artifacts: Arc::new(artifacts),
                mcp: Arc::new(Prepared::build(Arc::clone(&model))),
                model,
                compiled: None,
            })
        }
    }
}

/// One served version: the artifacts, the read model and MCP's answers built from the same
/// site, and
/// the health document that describes them.
pub struct Live {
    pub artifacts: Arc<ArtifactSet>,
    pub model: Arc<ReadModel>,
    pub mcp: Arc<Prepared>,
    compiled: Option<Arc<Compiled>>,
    /// The health document while the revocation store is fine (the usual case), compiled
    /// once per version.
    pub health: Arc<Artifact>,
    pub status: ContentStatus,
    source: &'static str,
    started_at: SystemTime,
}

impl Live {
    pub fn new(
        version: &Version,
        status: ContentStatus,
        source: &Source,
        started_at: SystemTime,
    ) -> Live {
        let health = health_document(
            version.artifacts.revision(),
            &status,
            source.label(),
            started_at,
            &StoreHealth::Ok,
        );
        let health = Artifact::json(
            paths::API_HEALTH,
            crate::wire::JSON,
            CachePolicy::Live,
            &health,
        )
        .unwrap_or_else(|_| {
            Artifact::new(
                paths::API_HEALTH,
                crate::wire::JSON,
                CachePolicy::Live,
                "{\"status\":\"ok\"}\n",
            )
        })
        .with_encodings(None);
        Live {
            artifacts: Arc::clone(&version.artifacts),
            model: Arc::clone(&version.model),
            mcp: Arc::clone(&version.mcp),
            compiled: version.compiled.clone(),
            health: Arc::new(health),
            status,
            source: source.label(),
            started_at,
        }
    }

    /// The health document with the store's current state, for when it is not fine (not
    /// cached: it changes as the store recovers).
    pub fn health_with(&self, store: &StoreHealth) -> Vec<u8> {
        let document = health_document(
            self.artifacts.revision(),
            &self.status,
            self.source,
            self.started_at,
            store,
        );
        crate::wire::json_line(&document)
    }

    pub fn version(&self) -> Version {
        Version {
            artifacts: Arc::clone(&self.artifacts),
            model: Arc::clone(&self.model),
            mcp: Arc::clone(&self.mcp),
            compiled: self.compiled.clone(),
        }
    }
}

/// The version being served, swapped as one value. Requests load it once each; reloads,
/// background compression and content errors replace it.
pub struct LiveState {
    live: ArcSwap<Live>,
    source: Source,
    started_at: SystemTime,
    /// Versions swapped in by reloads, and edits refused (for `/metrics`).
    reloads: std::sync::atomic::AtomicU64,
    refused: std::sync::atomic::AtomicU64,
    /// Where installed versions keep their bodies, if not on the heap.
    spool: Option<Spool>,
    /// A spool was asked for and could not be opened.
    spool_unavailable: bool,
    /// [`LiveState::first_version_spooled`] has run.
    first_spooled: std::sync::atomic::AtomicBool,
}

/// Where response bodies are kept, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpoolState {
    /// In the spool, as asked.
    Up,
    /// On the heap although a spool was asked for: it could not be opened, or a write
    /// failed (full or read-only disk). Serving goes on; memory use grows with the site.
    Down,
    /// On the heap, as asked (`--no-spool`).
    Off,
}

impl LiveState {
    pub fn new(version: &Version, source: Source, started_at: SystemTime) -> LiveState {
        let live = Live::new(version, ContentStatus::Ok, &source, started_at);
        LiveState {
            live: ArcSwap::from_pointee(live),
            source,
            started_at,
            reloads: Default::default(),
            refused: Default::default(),
            spool: None,
            spool_unavailable: false,
            first_spooled: Default::default(),
        }
    }

    /// Keeps the bodies of every later version in `spool`, and those of this one once
    /// [`LiveState::first_version_spooled`] has run: moving them takes seconds on a large
    /// site (2 s at 100,000 pages), and the first response need not wait for it.
    pub fn use_spool(&mut self, spool: Spool) {
        self.spool = Some(spool);
    }

    /// The version that was live when the spool was opened, with its bodies moved into
    /// the spool, once. The background compression asks first and installs it with
    /// [`LiveState::install_encodings`], holding the reload lock from before the call, so
    /// that no version of the same revision can go live in between. `None` with no spool,
    /// or the second time.
    pub fn first_version_spooled(&self) -> Option<ArtifactSet> {
        let spool = self.spool.as_ref()?;
        if self
            .first_spooled
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return None;
        }
        let mut artifacts = self.live.load().artifacts.as_ref().clone();
        spool.take_bodies(&mut artifacts);
        Some(artifacts)
    }

    /// Records that the spool asked for could not be opened (bodies stay on the heap).
    pub fn spool_unavailable(&mut self) {
        self.spool_unavailable = true;
    }

    pub fn spool_state(&self) -> SpoolState {
        match &self.spool {
            Some(spool) if spool.works() => SpoolState::Up,
            Some(_) => SpoolState::Down,
            None if self.spool_unavailable => SpoolState::Down,
            None => SpoolState::Off,
        }
    }

    /// Moves `set`'s bodies into the spool, if there is one (see [`crate::spool`]).
    pub fn spool_bodies(&self, set: &mut ArtifactSet) {
        if let Some(spool) = &self.spool {
            spool.take_new_bodies(set);
        }
    }

    /// Moves the page texts of the current version into the spool, once the first
    /// version's bodies are there (before that, the texts wait with them): see
    /// [`Spool::take_texts`]. A pass over every page, for the background thread.
    pub fn spool_texts(&self) {
        if let Some(spool) = &self.spool {
            if self
                .first_spooled
                .load(std::sync::atomic::Ordering::Acquire)
            {
                spool.take_texts(self.live.load().model.site());
            }
        }
    }

    /// Lets the kernel take back spooled pages read since the last call.
    pub fn release_resident(&self) {
        if let Some(spool) = &self.spool {
            spool.release_resident();
        }
    }

    /// The current version. Hold the guard for the whole request.
    pub fn current(&self) -> Guard<Arc<Live>> {
        self.live.load()
    }

    /// Where versions are made from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Swaps in a new version as one value; requests already running keep the old one.
    pub fn install(&self, mut version: Version) {
        self.spool_bodies(Arc::make_mut(&mut version.artifacts));
        let live = Live::new(&version, ContentStatus::Ok, &self.source, self.started_at);
        self.live.store(Arc::new(live));
        self.reloads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many versions were swapped in and how many edits were refused, so far.
    pub fn reload_counts(&self) -> (u64, u64) {
        let load = |counter: &std::sync::atomic::AtomicU64| {
            counter.load(std::sync::atomic::Ordering::Relaxed)
        };
        (load(&self.reloads), load(&self.refused))
    }

    /// Replaces the live artifacts with the same ones plus compressed variants, if the live
    /// version is still `revision`; false when a newer version was installed meanwhile.
    pub fn install_encodings(&self, revision: &str, artifacts: ArtifactSet) -> bool {
        let current = self.live.load();
        if current.artifacts.revision() != revision || artifacts.revision() != revision {
            return false;
        }
        self.replace_artifacts(&current, artifacts);
        true
    }

    /// Swaps in `current` with other artifacts of the same revision.
    fn replace_artifacts(&self, current: &Live, artifacts: ArtifactSet) {
        let version = Version {
            artifacts: Arc::new(artifacts),
            model: Arc::clone(&current.model),
            mcp: Arc::clone(&current.mcp),
            compiled: current.compiled.clone(),
        };
        let live = Live::new(
            &version,
            current.status.clone(),
            &self.source,
            self.started_at,
        );
        self.live.store(Arc::new(live));
    }

    /// Keeps serving the current version and reports why the latest edit was not taken.
    pub fn report_errors(&self, errors: Vec<ContentError>) {
        self.refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let current = self.live.load().version();
        let live = Live::new(
            &current,
            ContentStatus::Error(errors),
            &self.source,
            self.started_at,
        );
        self.live.store(Arc::new(live));
    }
}
