//! The links in pages, checked against what the compiled site serves.
//!
//! A link that starts with `/` (or is relative to the page, like `careers` or
//! `../careers`) is internal: it must name a document of this build (a page, a division,
//! `/docs`, `/api/company`…) or a path the dynamic core answers (`/api/search`, `/ask`,
//! `/mcp`…), and a `#fragment` must name a heading of the page it points at. These are
//! checked against the compiled artifacts and the endpoint table rather than against a list
//! of known paths, so a link is good exactly when a request for it would be. Links with a
//! scheme (`https:`, `mailto:`) are external: [`external_links`] lists the `http`/`https`
//! ones for `check --external`, which fetches them; nothing else does.

use crate::compile::documents::pages::{heading_ids, MARKDOWN_OPTIONS};
use crate::compile::ArtifactSet;
use crate::content::{Page, Site};
use crate::routes::{self, AnsweredBy};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag};

/// One internal link that leads nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokenLink {
    /// The page it is in, by position in `Site::pages`.
    pub page: usize,
    /// Its line in the page's body, from 1.
    pub body_line: usize,
    /// The target as written.
    pub target: String,
    pub problem: String,
    /// The served path nearest to the target, when one is close.
    pub suggestion: Option<String>,
}

impl BrokenLink {
    /// `link: <target>: <problem>; did you mean <path>?`
    pub(crate) fn message(&self) -> String {
        let hint = self
            .suggestion
            .as_ref()
            .map(|near| format!("; did you mean {near}?"))
            .unwrap_or_default();
        format!("link: {}: {}{hint}", self.target, self.problem)
    }
}

/// A link's target and the line of the body it is on.
struct Link {
    target: String,
    body_line: usize,
}

fn links_in(markdown: &str) -> Vec<Link> {
    Parser::new_ext(markdown, MARKDOWN_OPTIONS)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some(Link {
                target: dest_url.to_string(),
                body_line: markdown[..range.start].matches('\n').count() + 1,
            }),
            _ => None,
        })
        .collect()
}

/// Whether `target` has a scheme (`https:`, `mailto:`) or is protocol-relative.
fn is_external(target: &str) -> bool {
    if target.starts_with("//") {
        return true;
    }
    let scheme_end = target.find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)));
    matches!(scheme_end, Some(end) if end > 0 && target[end..].starts_with(':'))
}

/// `target` (relative to the page at `/slug`) as an absolute path, and its fragment.
fn resolve<'a>(page_slug: &str, target: &'a str) -> (String, Option<&'a str>) {
    let (rest, fragment) = match target.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (target, None),
    };
    let rest = rest.split('?').next().unwrap_or_default();
    if rest.is_empty() {
        return (format!("/{page_slug}"), fragment);
    }
    // Every page lives at `/slug`, so a relative link resolves against `/`.
    let joined = if rest.starts_with('/') {
        rest.to_string()
    } else {
        format!("/{rest}")
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/').skip(1) {
        match segment {
            "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    (format!("/{}", segments.join("/")), fragment)
}

/// The paths a version serves, as the link check asks about them: a served artifact set, or
/// the paths `dossier build` wrote (it keeps no bodies to make a set of).
pub(crate) trait Served {
    fn serves(&self, path: &str) -> bool;
    fn paths(&self) -> impl Iterator<Item = &str>;
}

impl Served for ArtifactSet {
    fn serves(&self, path: &str) -> bool {
        self.get(path).is_some()
    }

    fn paths(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|artifact| artifact.path.as_str())
    }
}

impl Served for BTreeSet<String> {
    fn serves(&self, path: &str) -> bool {
        self.contains(path)
    }

    fn paths(&self) -> impl Iterator<Item = &str> {
        self.iter().map(String::as_str)
    }
}

/// The internal links of the pages at `positions` (in `Site::pages`) that do not reach what
/// they name.
fn broken_links_in(
    site: &Site,
    served: &impl Served,
    positions: impl Iterator<Item = usize>,
) -> Vec<BrokenLink> {
    let mut broken = Vec::new();
    for position in positions {
        let Some(page) = site.pages.get(position) else {
            continue;
        };
        for link in links_in(&page.body_markdown.get()) {
            if is_external(&link.target) {
                continue;
            }
            if let Some((problem, suggestion)) = check(site, served, page, &link.target) {
                broken.push(BrokenLink {
                    page: position,
                    body_line: link.body_line,
                    target: link.target,
                    problem,
                    suggestion,
                });
            }
        }
    }
    broken
}

/// What is wrong with one internal link, and the nearest good target.
fn check(
    site: &Site,
    served: &impl Served,
    page: &Page,
    target: &str,
) -> Option<(String, Option<String>)> {
    let (path, fragment) = resolve(&page.slug, target);
    let path_trimmed = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        &path
    };
    let answered = served.serves(path_trimmed)
        || routes::find(path_trimmed)
            .is_some_and(|id| !matches!(id.route().answered_by, AnsweredBy::Document));
    if !answered {
        let suggestion = crate::suggest::nearest(path_trimmed, served.paths()).map(str::to_string);
        return Some(("nothing is served at this path".into(), suggestion));
    }
    let fragment = fragment.filter(|fragment| !fragment.is_empty())?;
    // Anchors are checked where they are ours to know: the headings of a page.
    let slug = path_trimmed.trim_start_matches('/');
    let target_page = site.pages.iter().find(|candidate| candidate.slug == slug)?;
    let ids = heading_ids(&target_page.body_markdown.get());
    if ids.iter().any(|id| id == fragment) {
        return None;
    }
    let suggestion = crate::suggest::nearest(fragment, ids.iter().map(String::as_str))
        .map(|id| format!("{path_trimmed}#{id}"));
    Some((
        format!("no heading with the id `{fragment}` in {path_trimmed}"),
        suggestion,
    ))
}

/// One `http` or `https` link of a page, to be fetched by `check --external`.
pub(crate) struct ExternalLink {
    /// The page it is in, by position in `Site::pages`.
    pub page: usize,
    pub body_line: usize,
    /// The URL without its fragment (fragments never reach the server).
    pub url: String,
}

/// Every `http` and `https` link of every page, in page order.
pub(crate) fn external_links(site: &Site) -> Vec<ExternalLink> {
    let mut found = Vec::new();
    for (position, page) in site.pages.iter().enumerate() {
        for link in links_in(&page.body_markdown.get()) {
            let lower = link.target.to_ascii_lowercase();
            if lower.starts_with("http://") || lower.starts_with("https://") {
                let url = link
                    .target
                    .split('#')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                found.push(ExternalLink {
                    page: position,
                    body_line: link.body_line,
                    url,
                });
            }
        }
    }
    found
}

/// How many links (internal and external) a page's Markdown holds.
pub(crate) fn count(markdown: &str) -> usize {
    links_in(markdown).len()
}

/// Every broken internal link as `file:line: link: …`, ordered by file and line: the line
/// counted in the page's file (`content_dir/pages/…`), front matter included, as content
/// errors count it.
pub(crate) fn report(site: &Site, served: &impl Served, content_dir: &Path) -> Vec<String> {
    report_pages(site, served, content_dir, 0..site.pages.len())
}

/// [`report`] for the pages at `positions` only: after an edit, the pages that changed.
pub(crate) fn report_pages(
    site: &Site,
    served: &impl Served,
    content_dir: &Path,
    positions: impl Iterator<Item = usize>,
) -> Vec<String> {
    let broken = broken_links_in(site, served, positions)
        .into_iter()
        .map(|link| LineMessage {
            page: link.page,
            body_line: link.body_line,
            message: link.message(),
        })
        .collect();
    locate(site, content_dir, broken)
}

/// A message about one line of a page's body, before it is placed in the page's file.
pub(crate) struct LineMessage {
    /// The page's position in `Site::pages`.
    pub(crate) page: usize,
    /// The line within the page's body (1-based).
    pub(crate) body_line: usize,
    pub(crate) message: String,
}

/// Messages about lines of pages as `file:line: message`, ordered by file and line.
pub(crate) fn locate(site: &Site, content_dir: &Path, messages: Vec<LineMessage>) -> Vec<String> {
    if messages.is_empty() {
        return Vec::new();
    }
    let sources = page_sources(site, &content_dir.join("pages"));
    let mut located: Vec<(String, usize, String)> = messages
        .into_iter()
        .map(
            |LineMessage {
                 page,
                 body_line,
                 message,
             }| {
                let (file, before) = match &sources[page] {
                    Some((file, before)) => (file.display().to_string(), *before),
                    None => (format!("page {}", site.pages[page].slug), 0),
                };
                (file, before + body_line, message)
            },
        )
        .collect();
    located.sort();
    located
        .into_iter()
        .map(|(file, line, message)| format!("{file}:{line}: {message}"))
        .collect()
}

/// For each page, its file and how many lines precede its body there: the file named after
/// the slug when its text ends with the page's body, else any file that does (a page whose
/// front matter sets another slug).
fn page_sources(site: &Site, pages_dir: &Path) -> Vec<Option<(PathBuf, usize)>> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(pages_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .filter_map(|path| Some((path.clone(), std::fs::read_to_string(&path).ok()?)))
        .collect();
    files.sort();
    let lines_before =
        |text: &str, body: &str| text[..text.len() - body.len()].matches('\n').count();
    site.pages
        .iter()
        .map(|page| {
            let body = page.body_markdown.get();
            let body = &*body;
            let named = files.iter().find(|(path, text)| {
                path.file_stem()
                    .is_some_and(|stem| stem == page.slug.as_str())
                    && text.ends_with(body)
            });
            named
                .or_else(|| files.iter().find(|(_, text)| text.ends_with(body)))
                .map(|(path, text)| (path.clone(), lines_before(text, body)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_absolute_targets_resolve_from_the_page() {
        assert_eq!(resolve("about", "/careers"), ("/careers".into(), None));
        assert_eq!(
            resolve("about", "careers#how"),
            ("/careers".into(), Some("how"))
        );
        assert_eq!(resolve("about", "../careers"), ("/careers".into(), None));
        assert_eq!(resolve("about", "#team"), ("/about".into(), Some("team")));
        assert_eq!(
            resolve("about", "/api/search?q=x"),
            ("/api/search".into(), None)
        );
        assert!(is_external("https://example.com"));
        assert!(is_external("mailto:a@b.example"));
        assert!(is_external("//cdn.example.com/x"));
        assert!(!is_external("/careers"));
        assert!(!is_external("careers"));
    }

    #[test]
    fn link_lines_count_from_the_start_of_the_body() {
        let links =
            links_in("# Title\n\nSee [a](/a).\n\n![b](/b.png) and [c](https://c.example)\n");
        let found: Vec<(&str, usize)> = links
            .iter()
            .map(|link| (link.target.as_str(), link.body_line))
            .collect();
        assert_eq!(found, [("/a", 3), ("/b.png", 5), ("https://c.example", 5)]);
    }
}
