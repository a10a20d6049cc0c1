//! Incremental compiling: what a compile may take from the one before it.
//!
//! Most edits change one page of thousands. A page's artifacts (its HTML, its Markdown twin
//! and `/api/pages/{slug}`) are made from the page and a context every page shares: the
//! company, the divisions, the base URL and the templates. When that context is the same as
//! last time ([`PageContext`]) and the page is equal to the previous site's page of the same
//! slug, its artifacts are taken from the previous set as they are, compressed variants
//! included. Everything that lists pages (the index, division pages, the sitemap, llms.txt,
//! `/api/company`) is small next to the pages and is always made again, so the result is
//! exactly what a clean compile makes: `tests/incremental.rs` checks that over random edits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use super::templates::Templates;
use super::{Artifact, ArtifactSet, CompileInput};
use crate::content::{Page, Site};

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

/// The version a compile replaces.
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    pub artifacts: &'a ArtifactSet,
    /// The site those artifacts were compiled from and the context their pages were
    /// rendered in; `None` when they were read from a build.
    pub compiled: Option<(&'a Site, PageContext)>,
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
        let (site, context) = previous.compiled?;
        (context == now).then(|| UnchangedPages {
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
    pub(super) fn page(&self, page: &Page, html: &str, markdown: &str) -> Option<Vec<Artifact>> {
        let artifacts = self.artifacts(page, &[html, markdown])?;
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(artifacts)
    }

    pub(super) fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// The previous artifacts at `paths` if `page` is unchanged and had them all.
    pub(super) fn artifacts(&self, page: &Page, paths: &[&str]) -> Option<Vec<Artifact>> {
        let before = self.pages.get(page.slug.as_str())?;
        // A page whose file was not read again is the very same value: no need to compare.
        if !std::ptr::eq(*before, page) && *before != page {
            return None;
        }
        paths
            .iter()
            .map(|path| {
                self.artifacts
                    .get(path)
                    .map(|artifact| (**artifact).clone())
            })
            .collect()
    }
}
