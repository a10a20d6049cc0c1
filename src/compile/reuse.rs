//! Incremental compiling: what a compile may take from the one before it.
//!
//! Most edits change one page of thousands. A page's artifacts (its HTML, its Markdown twin
//! and `/api/pages/{slug}`) are made from the page and a context every page shares: the
//! company, the divisions, the base URL and the templates. When that context is the same as
//! last time ([`PageContext`]), a compile starts from the previous artifact set and patches
//! it ([`super::ArtifactSet::patched`]): the pages that are new or differ
//! ([`page_changes`]) are rendered, the paths of pages that are gone removed, and nothing
//! else is visited, so an edit costs what it changes. The other documents (listings,
//! discovery, agent documents) never show a page's text: while everything else they are
//! made from is the same ([`SiteContext`]) and the pages are listed alike
//! ([`listed_alike`]), they stay as they are too. Either way the result is exactly what a
//! clean compile makes: `tests/incremental.rs` checks that over random edits.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::templates::Templates;
use super::{ArtifactSet, CompileInput, Rendered};
use crate::content::{Contact, Page, Site};
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

/// A digest of everything besides the pages that the documents other than the pages' own
/// are made from: the page context, the configuration and the published keys. The pages'
/// part is [`listed_alike`], compared page by page rather than hashed, so an edit does not
/// hash 100,000 pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteContext([u8; 32]);

impl SiteContext {
    pub(super) fn of(input: &CompileInput<'_>, pages: PageContext) -> SiteContext {
        let mut hasher = Sha256::new();
        hasher.update(pages.0);
        hasher.update(format!("{:?}", input.config).as_bytes());
        hasher.update(serde_json::to_vec(input.jwks).unwrap_or_default());
        SiteContext(hasher.finalize().into())
    }
}

/// Whether `before` and `now` list the same pages the same way: the same pages in the same
/// order with every field the listings, discovery and agent documents show. A page that is
/// the same value (its file was not read again) is not compared.
pub(super) fn listed_alike(before: &Site, now: &Site) -> bool {
    before.pages.len() == now.pages.len()
        && before
            .pages
            .iter()
            .zip(&now.pages)
            .all(|(a, b)| Arc::ptr_eq(a, b) || listed(a) == listed(b))
}

/// Every field of a page but its text, named one by one: a field added to `Page` does not
/// compile here until it is either listed (documents may show it) or left out with a reason,
/// so no document can read a field this comparison lacks.
fn listed(page: &Page) -> Listed<'_> {
    let Page {
        slug,
        title,
        summary,
        division,
        updated,
        contact,
        // Shown only by the page's own artifacts, which are rendered again when it changes.
        body_markdown: _,
        // The pages are compared in order, which covers it.
        order: _,
    } = page;
    (slug, title, summary, division, updated, contact)
}

/// A page's slug, title, summary, division, updated date and contact.
type Listed<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a Option<String>,
    &'a Option<String>,
    &'a Option<Box<Contact>>,
);

/// The paths of a page's own artifacts: its HTML, its Markdown twin, `/api/pages/{slug}`.
pub(super) fn page_paths(slug: &str) -> [String; 3] {
    let path = paths::page(slug);
    [format!("{path}.md"), paths::api_page(slug), path]
}

/// What changed in the pages from `before` to `now`: the positions in `now` of the pages
/// that are new or differ, and the slugs of `before`'s pages that are gone. With the same
/// slugs in the same order (any edit of a page's file) this is one pass comparing pointers.
pub(crate) fn page_changes(before: &Site, now: &Site) -> (Vec<usize>, Vec<String>) {
    let same = |a: &Arc<Page>, b: &Arc<Page>| Arc::ptr_eq(a, b) || a == b;
    if before.pages.len() == now.pages.len()
        && before
            .pages
            .iter()
            .zip(&now.pages)
            .all(|(a, b)| a.slug == b.slug)
    {
        let changed = (before.pages.iter().zip(&now.pages).enumerate())
            .filter(|(_, (a, b))| !same(a, b))
            .map(|(position, _)| position)
            .collect();
        return (changed, Vec::new());
    }
    let earlier: HashMap<&str, &Arc<Page>> = before
        .pages
        .iter()
        .map(|page| (page.slug.as_str(), page))
        .collect();
    let current: HashSet<&str> = now.pages.iter().map(|page| page.slug.as_str()).collect();
    let changed = now
        .pages
        .iter()
        .enumerate()
        .filter(|(_, page)| {
            earlier
                .get(page.slug.as_str())
                .is_none_or(|before| !same(before, page))
        })
        .map(|(position, _)| position)
        .collect();
    let gone = before
        .pages
        .iter()
        .filter(|page| !current.contains(page.slug.as_str()))
        .map(|page| page.slug.clone())
        .collect();
    (changed, gone)
}

/// The version a compile replaces.
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    pub artifacts: &'a ArtifactSet,
    /// The site those artifacts were compiled from and how; `None` when they were read
    /// from a build.
    pub compiled: Option<(&'a Site, &'a Rendered)>,
}
