//! The read model: what every reader of one content revision answers from (the site, the
//! public origin its URLs use, and the search index over it), built once per revision and
//! owned by the live version.
//!
//! MCP, the computed reads of the REST API (`/api/company?cursor=`, `/api/search`) and the
//! pages all read the same model, so a search through MCP and one through `/api/search`
//! can never see two different indexes, and neither protocol owns the data the other
//! serves.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::config::BaseUrl;
use crate::content::Site;
use crate::search::SearchIndex;

/// The site of one content revision, its origin and its search index.
///
/// The index of a first load is built after the version is served
/// ([`ReadModel::deferred`]): at 100,000 pages it was a seventh of the CPU a start took
/// before the first answer, and only searches need it. A search that comes before it is
/// ready waits for it ([`ReadModel::search_ready`]), and [`ReadModel::search`] builds it
/// itself if nothing else has, so no reader can miss it.
pub struct ReadModel {
    site: Arc<Site>,
    base: BaseUrl,
    search: OnceLock<SearchIndex>,
    /// Whether a thread is building the index ([`ReadModel::build_search_later`]).
    building: AtomicBool,
    /// Wakes the searches waiting for that thread.
    ready: tokio::sync::Notify,
}

impl ReadModel {
    /// The model of `site`, served at `base`, with its search index.
    pub fn build(site: Arc<Site>, base: &BaseUrl) -> ReadModel {
        ReadModel::build_reusing(site, base, None)
    }

    /// [`ReadModel::build`], reusing what it can of `previous` (the model of the version
    /// being replaced): the search terms of unchanged pages.
    pub fn build_reusing(
        site: Arc<Site>,
        base: &BaseUrl,
        previous: Option<&ReadModel>,
    ) -> ReadModel {
        // Terms from another origin would carry its URLs in their items; only reuse
        // same-origin ones.
        let earlier = previous
            .filter(|previous| previous.base == *base)
            .map(|previous| (previous.site.as_ref(), previous.search()));
        // An edit of pages in place patches the index; anything else builds it again,
        // reusing the stems of unchanged pages.
        let search = earlier
            .and_then(|(before, index)| index.patched(before, &site, base.as_str()))
            .unwrap_or_else(|| SearchIndex::build_reusing(&site, base.as_str(), earlier));
        let model = ReadModel::deferred(site, base);
        let _ = model.search.set(search);
        model
    }

    /// The model of `site` without its search index yet: [`ReadModel::build_search_later`]
    /// builds it on a thread of its own.
    pub fn deferred(site: Arc<Site>, base: &BaseUrl) -> ReadModel {
        ReadModel {
            site,
            base: base.clone(),
            search: OnceLock::new(),
            building: AtomicBool::new(false),
            ready: tokio::sync::Notify::new(),
        }
    }

    /// Builds the search index of `model` on a thread of its own, if it has none yet, and
    /// wakes the searches waiting for it. Called once the version is served, so the work
    /// does not delay the first answer. If no thread can be started, builds it here.
    pub fn build_search_later(model: &Arc<ReadModel>) {
        if model.search_is_ready() {
            return;
        }
        model.building.store(true, Ordering::Release);
        let building = Arc::clone(model);
        let spawned = std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                // A panic leaves the index unset; a search then builds it itself, and the
                // panic goes no further than that search's request.
                let built =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| building.search()));
                building.building.store(false, Ordering::Release);
                building.ready.notify_waiters();
                match built {
                    Ok(_) => tracing::debug!(
                        ms = started.elapsed().as_millis() as u64,
                        "search index built"
                    ),
                    Err(_) => tracing::error!(
                        "building the search index panicked (a bug: the log above says where); the first search builds it again"
                    ),
                }
            });
        if spawned.is_err() {
            model.building.store(false, Ordering::Release);
            model.search();
        }
    }

    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The public origin the answers' URLs use.
    pub fn base(&self) -> &BaseUrl {
        &self.base
    }

    /// The search index. While a deferred one is being built this blocks until it is
    /// ready, so an async caller awaits [`ReadModel::search_ready`] first.
    pub fn search(&self) -> &SearchIndex {
        self.search
            .get_or_init(|| SearchIndex::build(&self.site, self.base.as_str()))
    }

    pub fn search_is_ready(&self) -> bool {
        self.search.get().is_some()
    }

    /// Returns once the search index is ready, or once no thread is building it (then
    /// [`ReadModel::search`] builds it): at once, except in the moments after a start
    /// while [`ReadModel::build_search_later`] builds it.
    pub async fn search_ready(&self) {
        let notified = self.ready.notified();
        tokio::pin!(notified);
        // Registered before the check, so a wake-up between the two is not missed.
        notified.as_mut().enable();
        if self.search_is_ready() || !self.building.load(Ordering::Acquire) {
            return;
        }
        notified.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample site with each page repeated `copies` times under new slugs: large enough
    /// that building its index takes a moment.
    fn site(copies: usize) -> Arc<Site> {
        let content = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content");
        let mut site = crate::content::load(&content).unwrap();
        let originals = site.pages.clone();
        for copy in 0..copies {
            for page in &originals {
                let mut page = Page::clone(page);
                page.slug = format!("{}-{copy}", page.slug);
                site.pages.push(Arc::new(page));
            }
        }
        Arc::new(site)
    }

    fn keys(model: &ReadModel, words: &str) -> Vec<String> {
        let index = model.search();
        let ranked = index.rank(model.site(), words);
        ranked.iter().map(|r| index.key(r).to_string()).collect()
    }

    use crate::content::Page;

    #[tokio::test]
    async fn a_search_waits_for_a_deferred_index_and_finds_what_a_built_one_finds() {
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let site = site(400);
        let built = ReadModel::build(Arc::clone(&site), &base);
        let model = Arc::new(ReadModel::deferred(site, &base));
        assert!(!model.search_is_ready());
        ReadModel::build_search_later(&model);
        model.search_ready().await;
        assert!(
            model.search_is_ready(),
            "search_ready returned before the index was"
        );
        for words in ["calibration", "careers in Bremen", "water"] {
            let found = keys(&model, words);
            assert!(!found.is_empty(), "{words}");
            assert_eq!(found, keys(&built, words), "{words}");
        }
    }

    #[tokio::test]
    async fn a_deferred_index_nothing_builds_is_built_by_the_first_search() {
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let model = ReadModel::deferred(site(0), &base);
        // No thread builds it, so waiting would never end: it returns at once.
        model.search_ready().await;
        assert!(!model.search_is_ready());
        assert!(!keys(&model, "calibration").is_empty());
        assert!(model.search_is_ready());
    }
}
