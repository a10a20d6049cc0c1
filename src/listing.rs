//! Lists sized for agents: page listings with their URLs, and pagination by opaque cursor.
//!
//! `/api/company`, `/api/search` and the MCP tools answer long lists a page at a time, the
//! same way: at most `limit` items, and a cursor that continues after the last one. A
//! cursor names the last item's key (a slug, or a position for ranked results), not an
//! offset, so an edit between two requests neither repeats nor skips an item that stayed.
//! Cursors are base64url so clients treat them as opaque; a cursor that no longer matches
//! (its item was deleted) is an error that says to start again.

use crate::config::BaseUrl;
use crate::content::{Division, Page, Site};
use crate::paths;
use crate::wire::{CompanyDocument, DivisionDocument, PageDocument, PageListing};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Page listings per answer when the client does not say: fits a model's context easily.
pub(crate) const DEFAULT_LIMIT: usize = 100;
/// The most a client may ask for in one answer.
pub(crate) const MAX_LIMIT: usize = 1000;
/// Search results per `GET /api/search` answer unless the client asks for fewer or more
/// (the MCP tool has its own, smaller page for a model's context).
pub(crate) const DEFAULT_SEARCH_LIMIT: usize = 10;
pub(crate) const MAX_SEARCH_LIMIT: usize = 50;
/// Longest search accepted, in characters (REST and MCP alike).
pub(crate) const MAX_SEARCH_CHARS: usize = 200;

pub(crate) fn page_url(base: &BaseUrl, slug: &str) -> String {
    base.join(&paths::page(slug))
}

pub(crate) fn division_url(base: &BaseUrl, id: &str) -> String {
    base.join(&paths::division(id))
}

pub(crate) fn page_listing<'a>(base: &BaseUrl, page: &'a Page) -> PageListing<'a> {
    PageListing {
        slug: &page.slug,
        title: &page.title,
        summary: &page.summary,
        division: page.division.as_deref(),
        updated: page.updated.as_deref(),
        url: page_url(base, &page.slug),
        api_url: base.join(&paths::api_page(&page.slug)),
    }
}

/// Why a page of a list cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.description())]
pub(crate) enum PageError {
    /// The cursor is not one of ours.
    BadCursor,
    /// The cursor's item is gone (deleted or renamed since).
    StaleCursor,
}

impl PageError {
    pub(crate) fn description(&self) -> &'static str {
        match self {
            PageError::BadCursor => "the cursor is not valid; pass back a next cursor exactly as given",
            PageError::StaleCursor => {
                "the cursor's item no longer exists (the content changed); start again without a cursor"
            }
        }
    }
}

/// The cursor that continues after the item with `key`.
pub(crate) fn cursor_after(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("after:{key}"))
}

fn key_of(cursor: &str) -> Result<String, PageError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| PageError::BadCursor)?;
    let text = String::from_utf8(bytes).map_err(|_| PageError::BadCursor)?;
    text.strip_prefix("after:")
        .map(str::to_string)
        .ok_or(PageError::BadCursor)
}

/// The items after `cursor` (from the start without one), at most `limit`, and the cursor
/// for the rest when there is more. `key` names each item uniquely.
pub(crate) fn paginate<'a, T, K: AsRef<str>>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
    limit: usize,
    cursor: Option<&str>,
) -> Result<(&'a [T], Option<String>), PageError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let after = key_of(cursor)?;
            items
                .iter()
                .position(|item| key(item).as_ref() == after)
                .map(|position| position + 1)
                .ok_or(PageError::StaleCursor)?
        }
    };
    let limit = limit.clamp(1, MAX_LIMIT);
    let end = (start + limit).min(items.len());
    let page = &items[start.min(end)..end];
    let next = (end < items.len())
        .then(|| page.last().map(|last| cursor_after(key(last).as_ref())))
        .flatten();
    Ok((page, next))
}

/// The `/api/company` answer for `limit` and `cursor`.
pub(crate) fn company_document<'a>(
    site: &'a Site,
    base: &BaseUrl,
    limit: usize,
    cursor: Option<&str>,
) -> Result<CompanyDocument<'a>, PageError> {
    let (pages, next_cursor) = paginate(&site.pages, |p| p.slug.as_str(), limit, cursor)?;
    Ok(CompanyDocument {
        company: &site.company,
        divisions: &site.divisions,
        pages: pages.iter().map(|page| page_listing(base, page)).collect(),
        next_cursor,
    })
}

pub(crate) fn page_document<'a>(base: &BaseUrl, page: &'a Page) -> PageDocument<'a> {
    PageDocument {
        page,
        url: page_url(base, &page.slug),
        division_url: page.division.as_deref().map(|id| division_url(base, id)),
    }
}

/// The division with at most `limit` of its pages listed.
pub(crate) fn division_document<'a>(
    site: &'a Site,
    base: &BaseUrl,
    division: &'a Division,
    limit: usize,
) -> DivisionDocument<'a> {
    DivisionDocument {
        division,
        url: division_url(base, &division.id),
        pages: site
            .pages
            .iter()
            .filter(|page| page.division.as_deref() == Some(division.id.as_str()))
            .take(limit)
            .map(|page| page_listing(base, page))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_visits_every_item_exactly_once() {
        let items: Vec<String> = (0..257).map(|i| format!("item-{i}")).collect();
        for limit in [1, 7, 100, 256, 257, 1000] {
            let mut seen = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let (page, next) =
                    paginate(&items, |s| s.as_str(), limit, cursor.as_deref()).unwrap();
                assert!(page.len() <= limit);
                seen.extend(page.iter().cloned());
                match next {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            assert_eq!(seen, items, "limit {limit}");
        }
    }

    #[test]
    fn bad_and_stale_cursors_are_refused() {
        let items = ["a", "b", "c"];
        let key = |s: &&'static str| -> &'static str { s };
        assert_eq!(
            paginate(&items, key, 2, Some("%%%")),
            Err(PageError::BadCursor)
        );
        assert_eq!(
            paginate(&items, key, 2, Some(&URL_SAFE_NO_PAD.encode("before:a"))),
            Err(PageError::BadCursor)
        );
        assert_eq!(
            paginate(&items, key, 2, Some(&cursor_after("zz"))),
            Err(PageError::StaleCursor)
        );
        let (page, next) = paginate(&items, key, 2, Some(&cursor_after("b"))).unwrap();
        assert_eq!((page, next), (&items[2..], None));
        let empty: [&str; 0] = [];
        assert_eq!(paginate(&empty, key, 5, None), Ok((&empty[..], None)));
    }
}
