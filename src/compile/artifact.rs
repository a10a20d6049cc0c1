//! Artifacts: finished responses, computed once per content revision and served as is.
//!
//! An artifact is everything about a response that does not depend on the request: the
//! bytes, their content type, a strong ETag, precompressed variants and extra headers. The
//! server only chooses a variant and clones `Bytes` (a reference count, not a copy).

use std::io::Write;
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use sha2::{Digest, Sha256};

/// A content coding we precompute. Ordered by preference when a client accepts several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encoding {
    Brotli,
    Gzip,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::Brotli, Encoding::Gzip];

    /// The token used in `Accept-Encoding` and `Content-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// File suffix used in `build/`.
    pub fn file_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => ".br",
            Encoding::Gzip => ".gz",
        }
    }

    pub fn from_token(token: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.token() == token)
    }

    fn slot(self) -> usize {
        match self {
            Encoding::Brotli => 0,
            Encoding::Gzip => 1,
        }
    }
}

/// The compressed variants of one artifact: one slot per encoding, inline. A map would cost
/// more than the variants of a small page: a `BTreeMap`'s first node is about 800 bytes,
/// 24 MB over the 30,000 artifacts of a 10,000-page site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variants([Option<Representation>; 2]);

impl Variants {
    pub fn get(&self, encoding: Encoding) -> Option<&Representation> {
        self.0[encoding.slot()].as_ref()
    }

    pub fn get_mut(&mut self, encoding: Encoding) -> Option<&mut Representation> {
        self.0[encoding.slot()].as_mut()
    }

    pub fn insert(&mut self, encoding: Encoding, representation: Representation) {
        self.0[encoding.slot()] = Some(representation);
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    /// The variants there are, in order of preference.
    pub fn iter(&self) -> impl Iterator<Item = (Encoding, &Representation)> {
        Encoding::ALL
            .into_iter()
            .filter_map(|encoding| Some((encoding, self.get(encoding)?)))
    }
}

/// One representation of an artifact: bytes plus the strong ETag of exactly those bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Representation {
    pub body: Bytes,
    pub etag: HeaderValue,
}

impl Representation {
    pub fn new(body: Bytes) -> Self {
        let etag = strong_etag(&body);
        Representation { body, etag }
    }
}

/// A strong validator derived from the bytes: equal bytes, equal tag, on every machine.
pub fn strong_etag(body: &[u8]) -> HeaderValue {
    etag_of_digest(&Sha256::digest(body))
}

/// The strong ETag of bytes whose SHA-256 is `digest` (for bytes hashed as they are written).
pub(crate) fn etag_of_digest(digest: &[u8]) -> HeaderValue {
    let tag = format!("\"{}\"", URL_SAFE_NO_PAD.encode(&digest[..18]));
    HeaderValue::from_str(&tag).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
}

/// How long clients and shared caches may reuse an artifact without asking again.
///
/// Every compiled document shares one policy: short, because any edit is live within
/// moments, and revalidation is cheap (strong ETags, 304). One value also keeps CDN header
/// rules simple: a `/*` rule can carry it without ever combining with another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePolicy {
    /// Compiled documents.
    Content,
    /// Liveness: always revalidate.
    Live,
}

pub const CONTENT_CACHE_CONTROL: &str = "public, max-age=60";

impl CachePolicy {
    pub fn header(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            CachePolicy::Content => CONTENT_CACHE_CONTROL,
            CachePolicy::Live => "no-cache",
        })
    }
}

/// `Vary` for artifacts that differ only by encoding.
pub const VARY_ENCODING: &str = "Accept-Encoding";
/// `Vary` for pages that also come as Markdown under `Accept: text/markdown`.
pub const VARY_ACCEPT: &str = "Accept, Accept-Encoding";

/// A finished response for one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub path: String,
    pub content_type: HeaderValue,
    pub cache_control: HeaderValue,
    pub identity: Representation,
    /// Only variants that are smaller than the identity bytes are kept.
    pub encoded: Variants,
    /// Whether compressing was tried: `encoded` is then all there will be, even if empty
    /// (bytes no encoding makes smaller).
    pub compression_tried: bool,
    /// Extra response headers, e.g. `Link`.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub vary: HeaderValue,
    /// The path of the same page as Markdown, served instead for `Accept: text/markdown`.
    pub markdown: Option<String>,
}

/// Bodies smaller than this are not worth compressing: the headers dominate.
const MIN_COMPRESS_BYTES: usize = 256;
/// Up to this size strong settings are used: gzip 9 and brotli 6. The brotli crate sizes
/// its match finder by quality, not by input: from quality 7 up it allocates and zeroes
/// 8 to 32 MB per call, which was two thirds of the time `build --precompress` spent on
/// 1,000 pages (perf). At quality 6, with a window of at least 128 KiB (which selects the
/// finder sized for it), the table is 2 MB: that build went from 2.4 s to under 1.5 s,
/// `serve` compresses 10,000 pages in 4 s, and the brotli files came out 0.2% smaller
/// than at quality 9. Brotli 11 is about 2.5 times slower again for 10% less; below
/// quality 4 brotli is no smaller than gzip. Above this size compression time would
/// dominate a content reload, so faster settings are used.
const BEST_MAX_BYTES: usize = 64 * 1024;
/// Above this size the fastest settings are used, and both encodings run in parallel.
const LARGE_MIN_BYTES: usize = 1024 * 1024;

/// (gzip level, brotli quality) for a body of `len` bytes.
fn levels(len: usize) -> (u32, u32) {
    if len <= BEST_MAX_BYTES {
        (9, 6)
    } else if len < LARGE_MIN_BYTES {
        (6, 5)
    } else {
        (1, 1)
    }
}

/// The precompressed variants worth keeping (smaller than the body).
fn encode_all(body: &Bytes) -> Variants {
    let mut encoded = Variants::default();
    if body.len() < MIN_COMPRESS_BYTES {
        return encoded;
    }
    let results: Vec<(Encoding, Vec<u8>)> = if body.len() >= LARGE_MIN_BYTES {
        std::thread::scope(|scope| {
            let handles: Vec<_> = Encoding::ALL
                .into_iter()
                .map(|encoding| scope.spawn(move || (encoding, compress(encoding, body))))
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    } else {
        Encoding::ALL
            .into_iter()
            .map(|encoding| (encoding, compress(encoding, body)))
            .collect()
    };
    for (encoding, compressed) in results {
        if compressed.len() < body.len() {
            encoded.insert(encoding, Representation::new(exact_bytes(compressed)));
        }
    }
    encoded
}

impl Artifact {
    /// Builds an artifact with its identity bytes only; [`Artifact::with_encodings`] adds the
    /// compressed variants.
    pub fn new(
        path: impl Into<String>,
        content_type: &'static str,
        cache: CachePolicy,
        body: impl Into<Bytes>,
    ) -> Self {
        let body: Bytes = body.into();
        Artifact {
            path: path.into(),
            content_type: HeaderValue::from_static(content_type),
            cache_control: cache.header(),
            identity: Representation::new(body),
            encoded: Variants::default(),
            compression_tried: false,
            headers: Vec::new(),
            vary: HeaderValue::from_static(VARY_ENCODING),
            markdown: None,
        }
    }

    /// Marks this page as having a Markdown twin at `path` (and the twin as negotiated).
    pub fn with_markdown(mut self, path: impl Into<String>) -> Self {
        self.markdown = Some(path.into());
        self.vary = HeaderValue::from_static(VARY_ACCEPT);
        self
    }

    pub fn negotiated(mut self) -> Self {
        self.vary = HeaderValue::from_static(VARY_ACCEPT);
        self
    }

    /// Adds the precompressed variants. When `previous` (the same path in the version being
    /// replaced) had exactly these bytes, its variants are reused: compression is the costly
    /// part of a rebuild, and unchanged documents keep their ETags for free.
    pub fn with_encodings(mut self, previous: Option<&Artifact>) -> Self {
        self.encoded = match previous {
            Some(previous)
                if previous.compression_tried && previous.identity.body == self.identity.body =>
            {
                previous.encoded.clone()
            }
            _ => encode_all(&self.identity.body),
        };
        self.compression_tried = true;
        self
    }

    /// Serializes `value` as compact JSON into an artifact.
    pub fn json<T: serde::Serialize>(
        path: impl Into<String>,
        content_type: &'static str,
        cache: CachePolicy,
        value: &T,
    ) -> Result<Self, serde_json::Error> {
        let mut body = serde_json::to_vec(value)?;
        body.push(b'\n');
        Ok(Artifact::new(path, content_type, cache, exact_bytes(body)))
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Whether compressing was not tried yet and could give smaller variants.
    pub fn lacks_encodings(&self) -> bool {
        !self.compression_tried && self.identity.body.len() >= MIN_COMPRESS_BYTES
    }

    pub fn representation(&self, encoding: Option<Encoding>) -> &Representation {
        encoding
            .and_then(|e| self.encoded.get(e))
            .unwrap_or(&self.identity)
    }
}

/// Bytes that hold exactly `bytes`. `Bytes::from(Vec)` keeps the vector's spare capacity,
/// which a growing buffer leaves at up to half its size; over every body and variant of a
/// large site that spare room was more memory than the bodies themselves.
pub fn exact_bytes(bytes: impl Into<Vec<u8>>) -> Bytes {
    Bytes::from(bytes.into().into_boxed_slice())
}

pub fn compress(encoding: Encoding, body: &[u8]) -> Vec<u8> {
    let (gzip_level, brotli_quality) = levels(body.len());
    match encoding {
        Encoding::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(gzip_level));
            // Writing into a Vec cannot fail.
            let _ = encoder.write_all(body);
            encoder.finish().unwrap_or_default()
        }
        Encoding::Brotli => {
            // A window about the body's size, but at least 2^17: with a smaller one the
            // crate falls back to a match finder of fixed (32 MB) size whatever the quality.
            let params = brotli::enc::BrotliEncoderParams {
                quality: brotli_quality as i32,
                lgwin: (usize::BITS - body.len().leading_zeros()).clamp(17, 22) as i32,
                size_hint: body.len(),
                ..Default::default()
            };
            let mut out = Vec::new();
            let _ = brotli::BrotliCompress(&mut &body[..], &mut out, &params);
            out
        }
    }
}

/// Every artifact of one content revision, looked up by request path.
#[derive(Debug, Clone, Default)]
pub struct ArtifactSet {
    by_path: std::collections::HashMap<String, Arc<Artifact>>,
    revision: String,
}

impl ArtifactSet {
    pub fn new(artifacts: Vec<Artifact>) -> Self {
        let by_path: std::collections::HashMap<String, Arc<Artifact>> = artifacts
            .into_iter()
            .map(|a| (a.path.clone(), Arc::new(a)))
            .collect();
        let revision = revision_of(by_path.values().map(|a| a.as_ref()));
        ArtifactSet { by_path, revision }
    }

    /// A set of artifacts already shared (for swapping in compressed variants).
    pub fn from_shared(artifacts: Vec<Arc<Artifact>>) -> Self {
        let by_path: std::collections::HashMap<String, Arc<Artifact>> =
            artifacts.into_iter().map(|a| (a.path.clone(), a)).collect();
        let revision = revision_of(by_path.values().map(|a| a.as_ref()));
        ArtifactSet { by_path, revision }
    }

    /// The same set with `artifact` added, or replacing the one at its path.
    pub fn with(&self, artifact: Artifact) -> ArtifactSet {
        let mut by_path = self.by_path.clone();
        by_path.insert(artifact.path.clone(), Arc::new(artifact));
        let revision = revision_of(by_path.values().map(|a| a.as_ref()));
        ArtifactSet { by_path, revision }
    }

    /// The same set with `artifacts` in place of those at their paths, which must have the
    /// same identity bytes (they only add compressed variants): the revision stays.
    pub fn with_variants(&self, artifacts: Vec<Arc<Artifact>>) -> ArtifactSet {
        let mut by_path = self.by_path.clone();
        for artifact in artifacts {
            debug_assert_eq!(
                by_path.get(&artifact.path).map(|a| &a.identity.etag),
                Some(&artifact.identity.etag)
            );
            by_path.insert(artifact.path.clone(), artifact);
        }
        ArtifactSet {
            by_path,
            revision: self.revision.clone(),
        }
    }

    /// Moves bodies to where `rehome` keeps them (see [`crate::spool`]): it returns the same
    /// bytes held elsewhere, or `None` to leave a body where it is. The bytes stay the same,
    /// so ETags and the revision do too.
    pub fn replace_bodies(&mut self, mut rehome: impl FnMut(&Bytes) -> Option<Bytes>) {
        for artifact in self.by_path.values_mut() {
            let identity = rehome(&artifact.identity.body);
            let variants = Encoding::ALL.map(|encoding| {
                artifact
                    .encoded
                    .get(encoding)
                    .and_then(|variant| rehome(&variant.body))
            });
            if identity.is_none() && variants.iter().all(Option::is_none) {
                continue;
            }
            let artifact = Arc::make_mut(artifact);
            if let Some(body) = identity {
                debug_assert_eq!(body, artifact.identity.body);
                artifact.identity.body = body;
            }
            for (encoding, body) in Encoding::ALL.into_iter().zip(variants) {
                if let (Some(body), Some(variant)) = (body, artifact.encoded.get_mut(encoding)) {
                    debug_assert_eq!(body, variant.body);
                    variant.body = body;
                }
            }
        }
    }

    pub fn get(&self, path: &str) -> Option<&Arc<Artifact>> {
        self.by_path.get(path)
    }

    /// A short hash over every path and ETag: changes exactly when some response changes.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// Artifacts in path order, for output and comparison.
    pub fn sorted(&self) -> Vec<&Arc<Artifact>> {
        let mut all: Vec<&Arc<Artifact>> = self.by_path.values().collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// Every artifact, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Artifact>> {
        self.by_path.values()
    }

    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }
}

fn revision_of<'a>(artifacts: impl Iterator<Item = &'a Artifact>) -> String {
    let mut entries: Vec<(&str, &[u8])> = artifacts
        .map(|a| (a.path.as_str(), a.identity.etag.as_bytes()))
        .collect();
    entries.sort_unstable();
    revision_of_sorted(entries.into_iter())
}

/// The revision of `(path, identity ETag)` pairs given in path order (as `build/`'s
/// manifest holds them).
pub(crate) fn revision_of_sorted<'a>(entries: impl Iterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut hasher = Sha256::new();
    for (path, etag) in entries {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(etag);
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn variants_decompress_to_the_identity_bytes_and_have_their_own_etags() {
        let body = "{\"company\": \"Cobalt Ridge\"}".repeat(50);
        let artifact = Artifact::new("/x", "application/json", CachePolicy::Content, body.clone())
            .with_encodings(None);
        let gzip = &artifact.encoded.get(Encoding::Gzip).unwrap();
        let mut decoded = String::new();
        flate2::read::GzDecoder::new(&gzip.body[..])
            .read_to_string(&mut decoded)
            .unwrap();
        assert_eq!(decoded, body);
        let br = &artifact.encoded.get(Encoding::Brotli).unwrap();
        let mut decoded = Vec::new();
        brotli::Decompressor::new(&br.body[..], 4096)
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, body.as_bytes());
        assert_ne!(gzip.etag, artifact.identity.etag);
        assert_ne!(br.etag, gzip.etag);
    }

    #[test]
    fn tiny_bodies_are_not_compressed() {
        let artifact =
            Artifact::new("/x", "text/plain", CachePolicy::Content, "ok").with_encodings(None);
        assert!(artifact.encoded.is_empty());
    }

    #[test]
    fn unchanged_bodies_reuse_their_variants() {
        let body = "x".repeat(1000);
        let first = Artifact::new("/x", "text/plain", CachePolicy::Content, body.clone())
            .with_encodings(None);
        let mut previous = first.clone();
        previous.encoded.get_mut(Encoding::Gzip).unwrap().etag =
            HeaderValue::from_static("\"marker\"");
        let reused = Artifact::new("/x", "text/plain", CachePolicy::Content, body)
            .with_encodings(Some(&previous));
        assert_eq!(
            reused.encoded.get(Encoding::Gzip).unwrap().etag,
            "\"marker\""
        );
        let changed = Artifact::new("/x", "text/plain", CachePolicy::Content, "y".repeat(1000))
            .with_encodings(Some(&previous));
        assert_ne!(
            changed.encoded.get(Encoding::Gzip).unwrap().etag,
            "\"marker\""
        );
    }

    #[test]
    fn revision_changes_with_any_body() {
        let a = ArtifactSet::new(vec![Artifact::new(
            "/a",
            "text/plain",
            CachePolicy::Content,
            "1",
        )]);
        let b = ArtifactSet::new(vec![Artifact::new(
            "/a",
            "text/plain",
            CachePolicy::Content,
            "2",
        )]);
        assert_ne!(a.revision(), b.revision());
        assert_eq!(a.revision().len(), 12);
    }
}
