//! Compiling: a validated [`Site`] plus configuration becomes an [`ArtifactSet`].
//!
//! Pure apart from reading nothing at all: every document family lives in its own file
//! under `documents/`, takes the model and configuration, and returns finished artifacts.
//! Anything that does not depend on the request is decided here, once per content revision.

pub mod artifact;
pub mod cdn;
pub mod dns;
pub mod documents;
pub mod manifest;
pub mod output;
pub mod reuse;
pub mod templates;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

pub use artifact::{
    exact_bytes, Artifact, ArtifactSet, Bodies, CachePolicy, Encoding, Etag, Representation,
    Variants, Vary,
};
pub use reuse::{PageContext, Previous, SiteContext};

use crate::auth::keys::PublicJwk;
use crate::config::{Compression, SiteConfig};
use crate::content::Site;
use crate::paths;

/// What the compiler needs besides the content.
pub struct CompileInput<'a> {
    pub site: &'a Site,
    pub config: &'a SiteConfig,
    /// The identity keys' public halves, published in the JWKS: the current one first, then
    /// any retired one whose assertions may still be valid.
    pub jwks: &'a [PublicJwk],
    /// The version being replaced, if any: unchanged pages are taken from it ([`reuse`]),
    /// and unchanged artifacts keep its compressed variants.
    pub previous: Option<Previous<'a>>,
}

/// A document could not be produced. Content problems are caught earlier by `content`;
/// this is about templates and serialization.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.describe())]
pub struct CompileError {
    pub document: &'static str,
    pub reason: String,
    /// The template file and line at fault, when a template is.
    pub template: Option<(PathBuf, usize)>,
}

impl CompileError {
    fn new(document: &'static str, reason: impl fmt::Display) -> Self {
        CompileError {
            document,
            reason: reason.to_string(),
            template: None,
        }
    }

    fn describe(&self) -> String {
        match &self.template {
            Some((file, line)) => format!("{}:{line}: {}", file.display(), self.reason),
            None => format!("cannot render {}: {}", self.document, self.reason),
        }
    }
}

/// Compiles every public artifact.
pub fn compile(input: &CompileInput<'_>) -> Result<ArtifactSet, CompileError> {
    compile_in_context(input).map(|(artifacts, _)| artifacts)
}

/// What [`compile_in_context`] says besides the artifacts.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The context the pages were rendered in, for the next compile to compare with.
    pub context: PageContext,
    /// What every other document was made from, likewise.
    pub site: SiteContext,
    /// The paths of the documents that are not one page's own, to remove when the next
    /// compile renders them again and some are gone (a division deleted).
    pub site_paths: Arc<[String]>,
    /// Pages taken from the previous version instead of rendered.
    pub pages_reused: usize,
}

/// [`compile`], also saying how the pages were rendered. With a previous version compiled
/// in the same page context, the result is that version patched where the content changed
/// ([`reuse`]).
pub fn compile_in_context(
    input: &CompileInput<'_>,
) -> Result<(ArtifactSet, Rendered), CompileError> {
    let started = std::time::Instant::now();
    let templates = templates::Templates::load(input.config.templates.as_deref())?;
    let context = PageContext::of(input, &templates);
    let site = SiteContext::of(input, context);
    if let Some(previous) = input.previous {
        if let Some((before, rendered)) = previous.compiled {
            if rendered.context == context {
                return patch(
                    input,
                    &templates,
                    previous.artifacts,
                    before,
                    rendered,
                    site,
                );
            }
        }
    }
    // The site's own documents are made on a thread beside the pages, which take every
    // core: alone, the home page and llms.txt of 100,000 pages left a core idle for a
    // fifth of a start.
    let (documents, pages) = std::thread::scope(|scope| {
        let documents = scope.spawn(|| site_documents(input, &templates));
        let mut pages = documents::company::api_pages(input);
        if let Ok(artifacts) = &mut pages {
            match documents::pages::pages(input, &templates) {
                Ok(rendered) => artifacts.extend(rendered),
                Err(error) => pages = Err(error),
            }
        }
        let documents = documents.join().unwrap_or_else(|_| {
            Err(CompileError::new(
                "the site's documents",
                "panicked (a bug: the log above says where)",
            ))
        });
        (documents, pages)
    });
    let documents: Vec<Arc<Artifact>> = documents?.into_iter().map(Arc::new).collect();
    let site_paths = documents.iter().map(|a| a.path.clone()).collect();
    let mut artifacts = documents;
    artifacts.extend(pages?);
    tracing::debug!(
        artifacts = artifacts.len(),
        ms = started.elapsed().as_millis() as u64,
        "documents rendered"
    );
    let previous = input.previous.map(|previous| previous.artifacts);
    let finished = finish(input, artifacts, previous);
    let rendered = Rendered {
        context,
        site,
        site_paths,
        pages_reused: 0,
    };
    Ok((ArtifactSet::from_shared(finished), rendered))
}

/// `artifacts` with their compressed variants: made now with
/// [`Compression::WhileCompiling`], else taken from `previous` where the bytes are the same.
fn finish(
    input: &CompileInput<'_>,
    artifacts: Vec<Arc<Artifact>>,
    previous: Option<&ArtifactSet>,
) -> Vec<Arc<Artifact>> {
    match input.config.compression {
        Compression::WhileCompiling => with_encodings(artifacts, previous),
        Compression::Deferred => reuse_encodings(artifacts, previous),
    }
}

/// The previous version patched: the pages that are new or changed rendered, the paths of
/// pages that are gone removed, and the site's own documents rendered again only when what
/// they show changed.
fn patch(
    input: &CompileInput<'_>,
    templates: &templates::Templates,
    artifacts: &ArtifactSet,
    before: &Site,
    rendered: &Rendered,
    site: SiteContext,
) -> Result<(ArtifactSet, Rendered), CompileError> {
    let started = std::time::Instant::now();
    let (changed, gone) = reuse::page_changes(before, input.site);
    let pages: Vec<Arc<crate::content::Page>> = changed
        .iter()
        .map(|&position| Arc::clone(&input.site.pages[position]))
        .collect();
    let mut put = documents::company::api_pages_of(input, &pages)?;
    put.extend(documents::pages::pages_of(input, templates, &pages)?);
    let mut remove: Vec<String> = gone
        .iter()
        .flat_map(|slug| reuse::page_paths(slug))
        .collect();
    let site_paths = if rendered.site == site && reuse::listed_alike(before, input.site) {
        Arc::clone(&rendered.site_paths)
    } else {
        let documents = site_documents(input, templates)?;
        let paths: Arc<[String]> = documents.iter().map(|a| a.path.clone()).collect();
        remove.extend(
            rendered
                .site_paths
                .iter()
                .filter(|path| !paths.contains(path))
                .cloned(),
        );
        put.extend(documents.into_iter().map(Arc::new));
        paths
    };
    let put = finish(input, put, Some(artifacts));
    tracing::debug!(
        rendered = put.len(),
        removed = remove.len(),
        ms = started.elapsed().as_millis() as u64,
        "documents patched"
    );
    let rendered = Rendered {
        context: rendered.context,
        site,
        site_paths,
        pages_reused: input.site.pages.len() - pages.len(),
    };
    Ok((artifacts.patched(put, &remove), rendered))
}

/// Content pages per batch of [`compile_in_batches`] in `dossier build`: enough to keep both
/// cores busy, few enough that a batch's bodies (about 7 KB a page, more with variants) stay
/// a few tens of MB.
pub(crate) const PAGES_PER_BATCH: usize = 4096;

/// The artifacts of [`compile`], handed to `each` a batch at a time and kept by nobody here:
/// the site's own documents first, then the content pages `pages_per_batch` at a time,
/// rendered on every core (and compressed, with [`Compression::WhileCompiling`]).
/// `dossier build` writes each batch and keeps only what its manifest needs, so its memory
/// follows a batch, not the site. Nothing is reused: there is no previous version.
pub(crate) fn compile_in_batches<E: From<CompileError>>(
    input: &CompileInput<'_>,
    pages_per_batch: usize,
    mut each: impl FnMut(Vec<Arc<Artifact>>) -> Result<(), E>,
) -> Result<(), E> {
    let started = std::time::Instant::now();
    let templates = templates::Templates::load(input.config.templates.as_deref())?;
    let finish = |batch: Vec<Arc<Artifact>>| match input.config.compression {
        Compression::WhileCompiling => with_encodings(batch, None),
        Compression::Deferred => batch,
    };
    let documents = site_documents(input, &templates)?
        .into_iter()
        .map(Arc::new)
        .collect();
    each(finish(documents))?;
    for pages in input.site.pages.chunks(pages_per_batch.max(1)) {
        let mut batch = documents::company::api_pages_of(input, pages)?;
        batch.extend(documents::pages::pages_of(input, &templates, pages)?);
        each(finish(batch))?;
    }
    tracing::debug!(
        pages = input.site.pages.len(),
        ms = started.elapsed().as_millis() as u64,
        "documents rendered and handed over in batches"
    );
    Ok(())
}

/// Every document that is not one content page's: listings, discovery, agent documents,
/// `/docs` and `auth.md`.
fn site_documents(
    input: &CompileInput<'_>,
    templates: &templates::Templates,
) -> Result<Vec<Artifact>, CompileError> {
    let openapi = documents::openapi::describe(input);
    let auth_md = documents::auth_md::auth_md(input, templates)?;
    let auth_text = String::from_utf8_lossy(&auth_md.identity.body).into_owned();
    let mut artifacts = vec![
        documents::company::api_company(input)?,
        documents::catalog::api_catalog(input)?,
        documents::openapi::openapi(&openapi)?,
    ];
    artifacts.extend(documents::company::api_divisions(input)?);
    artifacts.extend(documents::discovery::discovery(input)?);
    artifacts.extend(documents::pages::site_pages(
        input, templates, &openapi, &auth_text,
    )?);
    artifacts.extend(documents::agents::all(input, &auth_md.identity.body)?);
    let mut well_known_auth_md = auth_md.clone();
    well_known_auth_md.path = paths::AUTH_MD_WELL_KNOWN.into();
    artifacts.push(well_known_auth_md);
    artifacts.push(auth_md);
    Ok(artifacts)
}

/// Keeps `previous`'s variants where the bytes did not change; the rest wait for
/// [`add_encodings`].
fn reuse_encodings(
    artifacts: Vec<Arc<Artifact>>,
    previous: Option<&ArtifactSet>,
) -> Vec<Arc<Artifact>> {
    artifacts
        .into_iter()
        .map(|mut artifact| {
            // An artifact taken from the previous version came with its variants.
            if artifact.compression_tried {
                return artifact;
            }
            if let Some(before) = previous.and_then(|set| set.get(&artifact.path)) {
                // Equal strong ETags (XXH3-128) and lengths mean equal bytes: the bytes are
                // the site authors', and a chance collision at 128 bits is out of reach.
                // Comparing them is much cheaper than comparing 100 MB of bodies.
                if before.compression_tried
                    && before.identity.etag == artifact.identity.etag
                    && before.identity.body.len() == artifact.identity.body.len()
                {
                    let artifact = Arc::make_mut(&mut artifact);
                    artifact.encoded = before.encoded.clone();
                    artifact.compression_tried = true;
                }
            }
            artifact
        })
        .collect()
}

/// `set` with compressed variants for up to `limit` of the artifacts that lack them (any
/// of them: each round takes what is still missing), made on every core; `None` when none lacks them. Identity bytes and
/// ETags are untouched, so the set's revision is too. Called in rounds, so a newer version
/// can take over between two of them and keep the variants made so far.
pub fn add_encodings(set: &ArtifactSet, limit: usize) -> Option<ArtifactSet> {
    let lacking: Vec<Arc<Artifact>> = set
        .iter()
        .filter(|artifact| artifact.lacks_encodings())
        .take(limit)
        .cloned()
        .collect();
    if lacking.is_empty() {
        return None;
    }
    let finished = crate::parallel::map(lacking, |artifact| {
        Arc::new(artifact.as_ref().clone().with_encodings(None))
    });
    Some(set.with_variants(finished))
}

/// Adds compressed variants to every artifact, reusing `previous`'s where the bytes did not
/// change, on every core: a large site has tens of thousands of artifacts.
fn with_encodings(
    artifacts: Vec<Arc<Artifact>>,
    previous: Option<&ArtifactSet>,
) -> Vec<Arc<Artifact>> {
    crate::parallel::map(artifacts, |artifact| {
        if !artifact.lacks_encodings() {
            return artifact;
        }
        let before = previous.and_then(|set| set.get(&artifact.path));
        let artifact = Arc::unwrap_or_clone(artifact);
        Arc::new(artifact.with_encodings(before.map(|a| a.as_ref())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Background compression runs in rounds until nothing lacks variants: a body that no
    /// encoding makes smaller must count as done, or the rounds would never end.
    #[test]
    fn compression_rounds_end_even_for_bytes_that_do_not_shrink() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let text = "the same sentence again and again. ".repeat(40);
        let set = ArtifactSet::new(vec![
            Artifact::new(
                "/noise",
                "application/octet-stream",
                CachePolicy::Content,
                noise,
            ),
            Artifact::new("/text", "text/plain", CachePolicy::Content, text),
        ]);
        let mut rounds = 0;
        let mut current = set.clone();
        while let Some(next) = add_encodings(&current, 1) {
            current = next;
            rounds += 1;
            assert!(rounds <= 2, "compression never finishes");
        }
        assert_eq!(rounds, 2);
        assert!(current.get("/noise").unwrap().encoded.is_empty());
        assert!(!current.get("/text").unwrap().encoded.is_empty());
        assert_eq!(current.revision(), set.revision());
    }
}
