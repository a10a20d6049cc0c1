//! Incremental compiling: what a compile may take from the one before it.
//!
//! Most edits change one page of thousands. A page's artifacts (its HTML, its Markdown twin
//! and `/api/pages/{slug}`) are made from the page and a context every page shares: the
//! company, the divisions, the base URL and the templates. When that context is the same as
//! last time ([`PageContext`]) and the page is equal to the previous site's page of the same
//! slug, its artifacts are taken from the previous set as they are, compressed variants
//! included. The other documents (listings, discovery, agent documents) never show a
//! page's text: while the pages' titles, summaries and order and everything else they are
//! made from are the same ([`SiteContext`]), they are all taken as they are too. Either way
//! the result is exactly what a clean compile makes: `tests/incremental.rs` checks that
//! over random edits.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::templates::Templates;
use super::{Artifact, ArtifactSet, CompileInput, Rendered};
use crate::content::{Page, Site};
use crate::paths;

/// A digest of everything besides the page itself that a page's artifacts are made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageContext([u8; 32]);

impl PageContext {
    pub(super) fn of(input: &CompileInput<'_>, templates: &Templates) -> PageContext {
        let mut hasher = Sha256::new();
        hasher.update(templates.digest());
        hasher.update(input.config.base_url.as_str().as_bytes());
        hasher.update([0]);
        // Serializing a company and a few divisions is cheap, and covers every field,
        // including ones added later.
        hasher.update(serde_json::to_vec(&input.site.company).unwrap_or_default());
        hasher.update([0]);
        hasher.update(serde_json::to_vec(&input.site.divisions).unwrap_or_default());
        PageContext(hasher.finalize().into())
    }
}

/// A digest of everything the documents besides the pages' own are made from: the page
/// context, the configuration, the published keys, and every page but its text, in order.
/// Listings, discovery and agent documents never show a page's text, so an edit of one
/// page's text leaves this digest, and every one of them, as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteContext([u8; 32]);

impl SiteContext {
    pub(super) fn of(input: &CompileInput<'_>, pages: PageContext) -> SiteContext {
        let mut hasher = Sha256::new();
        hasher.update(pages.0);
        hasher.update(format!("{:?}", input.config).as_bytes());
        hasher.update(serde_json::to_vec(input.jwks).unwrap_or_default());
        for page in &input.site.pages {
            // Every field of a page but its text, named one by one: a field added to `Page`
            // does not compile here until it is either hashed (documents may show it) or
            // left out with a reason, so no document can read a field this key lacks.
            let Page {
                slug,
                title,
                summary,
                division,
                updated,
                contact,
                // Shown only by the page's own artifacts, which are reused by page equality.
                body_markdown: _,
                // The pages are hashed in order, which covers it.
                order: _,
            } = page.as_ref();
            let listed = (slug, title, summary, division, updated, contact);
            hasher.update(serde_json::to_vec(&listed).unwrap_or_default());
            hasher.update([0]);
        }
        SiteContext(hasher.finalize().into())
    }
}

/// The version a compile replaces.
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    pub artifacts: &'a ArtifactSet,
    /// The site those artifacts were compiled from and how; `None` when they were read
    /// from a build.
    pub compiled: Option<(&'a Site, Rendered)>,
}

/// Every artifact of `previous` that is not one page's own, if it was made from the site
/// context `now`: then they are all exactly what compiling them again would make.
pub(super) fn site_documents(
    previous: Option<Previous<'_>>,
    now: SiteContext,
) -> Option<Vec<Arc<Artifact>>> {
    let previous = previous?;
    let (site, rendered) = previous.compiled?;
    if rendered.site != now {
        return None;
    }
    // The same context means the same slugs, so these are exactly the pages' paths.
    let page_paths: HashSet<String> = site
        .pages
        .iter()
        .flat_map(|page| {
            let path = paths::page(&page.slug);
            [format!("{path}.md"), path, paths::api_page(&page.slug)]
        })
        .collect();
    Some(
        previous
            .artifacts
            .iter()
            .filter(|artifact| !page_paths.contains(&artifact.path))
            .cloned()
            .collect(),
    )
}

/// The previous version's pages, by slug, when their context still holds.
pub struct UnchangedPages<'a> {
    artifacts: &'a ArtifactSet,
    pages: HashMap<&'a str, &'a Page>,
    /// How many pages' HTML was taken rather than rendered (for the reload log).
    reused: AtomicUsize,
}

impl<'a> UnchangedPages<'a> {
    /// `None` unless `previous` was compiled in the context `now`.
    pub(super) fn new(previous: Option<Previous<'a>>, now: PageContext) -> Option<Self> {
        let previous = previous?;
        let (site, rendered) = previous.compiled?;
        (rendered.context == now).then(|| UnchangedPages {
            artifacts: previous.artifacts,
            pages: site
                .pages
                .iter()
                .map(|page| (page.slug.as_str(), &**page))
                .collect(),
            reused: AtomicUsize::new(0),
        })
    }

    /// [`UnchangedPages::artifacts`] for a page's HTML and Markdown, counted.
    pub(super) fn page(
        &self,
        page: &Page,
        html: &str,
        markdown: &str,
    ) -> Option<Vec<Arc<Artifact>>> {
        let artifacts = self.artifacts(page, &[html, markdown])?;
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(artifacts)
    }

    pub(super) fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// The previous artifacts at `paths` if `page` is unchanged and had them all.
    pub(super) fn artifacts(&self, page: &Page, paths: &[&str]) -> Option<Vec<Arc<Artifact>>> {
        let before = self.pages.get(page.slug.as_str())?;
        // A page whose file was not read again is the very same value: no need to compare.
        if !std::ptr::eq(*before, page) && *before != page {
            return None;
        }
        paths
            .iter()
            .map(|path| self.artifacts.get(path).cloned())
            .collect()
    }
}
