//! The read model: what every reader of one content revision answers from (the site, the
//! public origin its URLs use, and the search index over it), made once per revision and
//! owned by the live version.
//!
//! MCP, the computed reads of the REST API (`/api/company?cursor=`, `/api/search`) and the
//! pages all read the same model, so a search through MCP and one through `/api/search`
//! can never see two different indexes, and neither protocol owns the data the other
//! serves.
//!
//! The first version's model, at a start, gets its search index on a thread of its own
//! ([`ReadModel::build_search_index_in_background`]), started once the rest of the version
//! is made: at 100,000 pages the index was a seventh of the CPU a start took before its
//! first answer, and only searches need it. A search that comes sooner awaits it
//! ([`ReadModel::wait_for_search_index`]). A reload's model is made whole before it is
//! installed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::config::BaseUrl;
use crate::content::Site;
use crate::search::SearchIndex;

/// The site of one content revision, its origin and its search index.
pub struct ReadModel {
    site: Arc<Site>,
    base: BaseUrl,
    search: OnceLock<SearchIndex>,
    /// Whether a thread is building the index.
    building: AtomicBool,
    /// Wakes the searches waiting for that thread.
    built: tokio::sync::Notify,
}

impl ReadModel {
    /// The model of `site`, served at `base`, with its search index.
    pub fn build(site: Arc<Site>, base: &BaseUrl) -> ReadModel {
        let model = ReadModel::without_search_index(site, base);
        model.search();
        model
    }

    /// The model of `site`, its search index patched from `previous` (the model of the
    /// version being replaced) where the pages are the same: an edit restems only what it
    /// changed.
    pub fn build_reusing(site: Arc<Site>, base: &BaseUrl, previous: &ReadModel) -> ReadModel {
        // Terms from another origin would carry its URLs in their items; only reuse
        // same-origin ones.
        let earlier = (previous.base == *base).then(|| (previous.site.as_ref(), previous.search()));
        // An edit of pages in place patches the index; anything else builds it again,
        // reusing the stems of unchanged pages.
        let search = earlier
            .and_then(|(before, index)| index.patched(before, &site, base.as_str()))
            .unwrap_or_else(|| SearchIndex::build_reusing(&site, base.as_str(), earlier));
        let model = ReadModel::without_search_index(site, base);
        let _ = model.search.set(search);
        model
    }

    /// The model of `site` whose search index is made later: by
    /// [`ReadModel::build_search_index_in_background`], or else by the first search.
    pub fn without_search_index(site: Arc<Site>, base: &BaseUrl) -> ReadModel {
        ReadModel {
            site,
            base: base.clone(),
            search: OnceLock::new(),
            building: AtomicBool::new(false),
            built: tokio::sync::Notify::new(),
        }
    }

    /// Builds the search index of `model`, if it has none yet, on a thread of its own, and
    /// wakes the searches waiting for it. If no thread can be started, builds it here.
    pub fn build_search_index_in_background(model: &Arc<ReadModel>) {
        if model.has_search_index() {
            return;
        }
        model.building.store(true, Ordering::Release);
        let building = Arc::clone(model);
        let spawned = std::thread::Builder::new()
            .name("search-index".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    building.search();
                }));
                if built.is_err() {
                    // A bug. Searches then find nothing rather than each building the
                    // index again on a request's thread.
                    tracing::error!(
                        "building the search index panicked (a bug: the log above says where); searches find nothing until the next version"
                    );
                    let _ = building.search.set(SearchIndex::empty(building.base.as_str()));
                } else {
                    tracing::debug!(
                        ms = started.elapsed().as_millis() as u64,
                        "search index built"
                    );
                }
                building.finish_building();
            });
        if spawned.is_err() {
            model.search();
            model.finish_building();
        }
    }

    fn finish_building(&self) {
        self.building.store(false, Ordering::Release);
        self.built.notify_waiters();
    }

    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The public origin the answers' URLs use.
    pub fn base(&self) -> &BaseUrl {
        &self.base
    }

    /// The search index. While a thread builds it this blocks until it is done, so an
    /// async caller awaits [`ReadModel::wait_for_search_index`] first.
    pub fn search(&self) -> &SearchIndex {
        self.search
            .get_or_init(|| SearchIndex::build(&self.site, self.base.as_str()))
    }

    pub fn has_search_index(&self) -> bool {
        self.search.get().is_some()
    }

    /// Returns once the search index is made, or at once when no thread is making it (then
    /// [`ReadModel::search`] makes it): in practice it waits only in the moments after a
    /// start.
    pub async fn wait_for_search_index(&self) {
        let built = self.built.notified();
        tokio::pin!(built);
        // Registered before the check, so a wake-up between the two is not missed.
        built.as_mut().enable();
        if self.has_search_index() || !self.building.load(Ordering::Acquire) {
            return;
        }
        built.await;
    }

    /// Marks the index as being built without building it, until
    /// [`ReadModel::finish_building_for_test`]: what a search sees while the thread runs.
    #[cfg(test)]
    pub(crate) fn start_building_for_test(&self) {
        self.building.store(true, Ordering::Release);
    }

    #[cfg(test)]
    pub(crate) fn finish_building_for_test(&self) {
        self.search();
        self.finish_building();
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
    async fn a_search_waits_for_an_index_built_in_the_background_and_finds_what_a_built_one_finds()
    {
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let site = site(400);
        let built = ReadModel::build(Arc::clone(&site), &base);
        let model = Arc::new(ReadModel::without_search_index(site, &base));
        assert!(!model.has_search_index());
        ReadModel::build_search_index_in_background(&model);
        model.wait_for_search_index().await;
        assert!(
            model.has_search_index(),
            "the wait ended before the index was built"
        );
        for words in ["calibration", "careers in Bremen", "water"] {
            let found = keys(&model, words);
            assert!(!found.is_empty(), "{words}");
            assert_eq!(found, keys(&built, words), "{words}");
        }
    }

    #[tokio::test]
    async fn an_index_no_thread_builds_is_built_by_the_first_search() {
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let model = ReadModel::without_search_index(site(0), &base);
        // No thread builds it, so waiting would never end: it returns at once.
        model.wait_for_search_index().await;
        assert!(!model.has_search_index());
        assert!(!keys(&model, "calibration").is_empty());
        assert!(model.has_search_index());
    }
}
