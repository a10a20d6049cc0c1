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
use xxhash_rust::xxh3::{xxh3_128, Xxh3};

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
    pub etag: Etag,
}

impl Representation {
    pub fn new(body: Bytes) -> Self {
        let etag = strong_etag(&body);
        Representation { body, etag }
    }
}

/// The length of an [`Etag`]'s text: a quote, 22 base64 characters (the 128 bits of
/// XXH3-128), a quote.
const ETAG_LEN: usize = 24;

/// A strong ETag, as the 24 bytes of its header text, held inline. A site holds one per
/// body and variant (close to a million at 100,000 pages): as `HeaderValue`s they cost
/// 40 bytes each plus a heap copy of the text, 46 MB at that size (heaptrack). The header
/// value is made when a response is (one small copy).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Etag([u8; ETAG_LEN]);

impl Etag {
    /// The header text, quotes included.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Made only from ASCII (quotes and URL-safe base64).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The `ETag` header value.
    pub fn header(&self) -> HeaderValue {
        HeaderValue::from_bytes(&self.0).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
    }
}

impl std::fmt::Debug for Etag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Etag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A strong validator derived from the bytes: equal bytes, equal tag, on every machine.
/// XXH3-128 rather than a cryptographic hash: an ETag only tells one version of a response
/// from another, and a collision would at worst have one client keep a copy it asked
/// about. SHA-256 was a twentieth of the CPU of compiling 100,000 pages (`perf`).
pub fn strong_etag(body: &[u8]) -> Etag {
    etag_of_digest(xxh3_128(body))
}

/// The strong ETag of bytes whose XXH3-128 is `digest` (for bytes hashed as they are
/// written).
pub(crate) fn etag_of_digest(digest: u128) -> Etag {
    let mut tag = [b'"'; ETAG_LEN];
    // 16 bytes are 22 base64 characters without padding: the slice always fits.
    let _ = URL_SAFE_NO_PAD.encode_slice(digest.to_be_bytes(), &mut tag[1..ETAG_LEN - 1]);
    Etag(tag)
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
const LIVE_CACHE_CONTROL: &str = "no-cache";

impl CachePolicy {
    /// The `Cache-Control` text.
    pub fn text(self) -> &'static str {
        match self {
            CachePolicy::Content => CONTENT_CACHE_CONTROL,
            CachePolicy::Live => LIVE_CACHE_CONTROL,
        }
    }

    pub fn header(self) -> HeaderValue {
        // Constants, checked when compiling: a response only copies them.
        const CONTENT: HeaderValue = HeaderValue::from_static(CONTENT_CACHE_CONTROL);
        const LIVE: HeaderValue = HeaderValue::from_static(LIVE_CACHE_CONTROL);
        match self {
            CachePolicy::Content => CONTENT,
            CachePolicy::Live => LIVE,
        }
    }

    /// The policy whose `Cache-Control` text this is (as a build's manifest records it).
    pub fn from_text(text: &str) -> Option<CachePolicy> {
        [CachePolicy::Content, CachePolicy::Live]
            .into_iter()
            .find(|policy| policy.text() == text)
    }
}

/// `Vary` for artifacts that differ only by encoding.
pub const VARY_ENCODING: &str = "Accept-Encoding";
/// `Vary` for pages that also come as Markdown under `Accept: text/markdown`.
pub const VARY_ACCEPT: &str = "Accept, Accept-Encoding";

/// What else than the path an artifact's response depends on: its `Vary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vary {
    /// The encoding only.
    Encoding,
    /// `Accept` too: a page that also comes as Markdown.
    AcceptAndEncoding,
}

impl Vary {
    /// The `Vary` text.
    pub fn text(self) -> &'static str {
        match self {
            Vary::Encoding => VARY_ENCODING,
            Vary::AcceptAndEncoding => VARY_ACCEPT,
        }
    }

    pub fn header(self) -> HeaderValue {
        // As for `CachePolicy::header`.
        const ENCODING: HeaderValue = HeaderValue::from_static(VARY_ENCODING);
        const ACCEPT_AND_ENCODING: HeaderValue = HeaderValue::from_static(VARY_ACCEPT);
        match self {
            Vary::Encoding => ENCODING,
            Vary::AcceptAndEncoding => ACCEPT_AND_ENCODING,
        }
    }

    /// The `Vary` whose text this is (as a build's manifest records it).
    pub fn from_text(text: &str) -> Option<Vary> {
        [Vary::Encoding, Vary::AcceptAndEncoding]
            .into_iter()
            .find(|vary| vary.text() == text)
    }
}

/// A finished response for one path.
///
/// A large site holds 300,000 of these, so the record is kept small: the cache policy and
/// `Vary` are enums, ETags inline (see [`Etag`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub path: String,
    pub content_type: HeaderValue,
    pub cache: CachePolicy,
    pub identity: Representation,
    /// Only variants that are smaller than the identity bytes are kept.
    pub encoded: Variants,
    /// Whether compressing was tried: `encoded` is then all there will be, even if empty
    /// (bytes no encoding makes smaller).
    pub compression_tried: bool,
    pub vary: Vary,
    /// Extra response headers, e.g. `Link`.
    pub headers: Vec<(HeaderName, HeaderValue)>,
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
            cache,
            identity: Representation::new(body),
            encoded: Variants::default(),
            compression_tried: false,
            vary: Vary::Encoding,
            headers: Vec::new(),
            markdown: None,
        }
    }

    /// Marks this page as having a Markdown twin at `path` (and the twin as negotiated).
    pub fn with_markdown(mut self, path: impl Into<String>) -> Self {
        self.markdown = Some(path.into());
        self.vary = Vary::AcceptAndEncoding;
        self
    }

    pub fn negotiated(mut self) -> Self {
        self.vary = Vary::AcceptAndEncoding;
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
        let body = exact_written(|body| {
            serde_json::to_writer(&mut *body, value)?;
            body.push(b'\n');
            Ok::<(), serde_json::Error>(())
        })?;
        Ok(Artifact::new(path, content_type, cache, body))
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

/// The largest buffer [`exact_written`] keeps for the next body on its thread: more than a
/// typical page's HTML; a larger one (a very long page, a listing of a large site) is freed
/// after use, so each compiling thread keeps at most this much.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// Bytes that hold exactly what `write` writes. It writes into a buffer its thread keeps
/// from one body to the next, so a body costs one allocation of its own size. A fresh,
/// growing buffer per body was a third of rendering 100,000 pages (`perf`: its reallocations
/// and the page faults of their fresh memory).
pub(crate) fn exact_written<E>(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<Bytes, E> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    // Taken out, not borrowed: a `write` that makes another body itself gets a buffer of
    // its own.
    let mut buffer = BUFFER.with(|cell| cell.take());
    buffer.clear();
    let written = write(&mut buffer).map(|()| Bytes::copy_from_slice(&buffer));
    if buffer.capacity() <= KEPT_BUFFER_BYTES {
        BUFFER.with(|cell| cell.replace(buffer));
    }
    written
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
///
/// A version made by an edit shares almost every artifact with the one before, so a set is
/// a `base` map shared between versions plus the paths changed since (`changes`): making
/// the next version costs what changed, not the size of the site (100,000 pages are 300,000
/// paths). When the changes grow to a sixteenth of the base they are folded into a new base,
/// so lookups stay one or two hash probes and the folding is paid once per many edits.
///
/// The revision is likewise kept by difference: a hash of each path with its ETag, combined
/// by XOR (order does not matter, and replacing an artifact is two XORs).
#[derive(Debug, Clone, Default)]
pub struct ArtifactSet {
    base: Arc<HashSet<ByPath>>,
    /// Paths changed since `base`: the artifact now, or `None` for a path removed.
    changes: HashMap<String, Option<Arc<Artifact>>>,
    len: usize,
    digest: [u8; 16],
    revision: String,
    /// Whether every body of `base` has been offered to [`ArtifactSet::replace_bodies`]
    /// since the base was made: until then, moving only the changed bodies would leave
    /// the base's on the heap.
    base_rehomed: bool,
    /// Whether every artifact in `changes` has been offered to
    /// [`ArtifactSet::replace_bodies`] since it was put there: then a fold keeps the base
    /// rehomed, and the next edit's install need not visit every body again.
    changes_rehomed: bool,
}

// foldhash, not SipHash: only compiling inserts paths; a request only looks one up, so
// there is nothing for a client to flood, and a lookup is every request's first step.
type HashMap<K, V> = foldhash::HashMap<K, V>;
type HashSet<T> = foldhash::HashSet<T>;

/// An artifact in a set's base, hashed and compared by its path, and found by it (`Borrow`):
/// the path is held once, in the artifact, instead of again as a map's key. At 100,000
/// pages the keys were 300,000 more strings.
#[derive(Debug, Clone)]
struct ByPath(Arc<Artifact>);

impl std::hash::Hash for ByPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // As `str` hashes, so that a lookup by `&str` finds it.
        self.0.path.as_str().hash(state);
    }
}

impl PartialEq for ByPath {
    fn eq(&self, other: &ByPath) -> bool {
        self.0.path == other.0.path
    }
}

impl Eq for ByPath {}

impl std::borrow::Borrow<str> for ByPath {
    fn borrow(&self) -> &str {
        &self.0.path
    }
}

/// The hash one path with its identity ETag adds to a set's digest.
fn entry_digest(artifact: &Artifact) -> [u8; 16] {
    path_digest(&artifact.path, artifact.identity.etag.as_bytes())
}

fn path_digest(path: &str, etag: &[u8]) -> [u8; 16] {
    let mut hasher = Xxh3::new();
    hasher.update(path.as_bytes());
    hasher.update(&[0]);
    hasher.update(etag);
    hasher.digest128().to_be_bytes()
}

fn xor_into(digest: &mut [u8; 16], entry: [u8; 16]) {
    for (byte, other) in digest.iter_mut().zip(entry) {
        *byte ^= other;
    }
}

impl ArtifactSet {
    pub fn new(artifacts: Vec<Artifact>) -> Self {
        ArtifactSet::from_shared(artifacts.into_iter().map(Arc::new).collect())
    }

    /// A set of artifacts already shared (for swapping in compressed variants).
    pub fn from_shared(artifacts: Vec<Arc<Artifact>>) -> Self {
        let mut digest = [0; 16];
        let mut base = HashSet::with_capacity_and_hasher(artifacts.len(), Default::default());
        for artifact in artifacts {
            xor_into(&mut digest, entry_digest(&artifact));
            if let Some(ByPath(before)) = base.replace(ByPath(artifact)) {
                xor_into(&mut digest, entry_digest(&before));
            }
        }
        ArtifactSet {
            len: base.len(),
            base: Arc::new(base),
            changes: HashMap::default(),
            revision: revision_text(&digest),
            digest,
            base_rehomed: false,
            changes_rehomed: true,
        }
    }

    /// The same set with `put` added or replacing the artifacts at their paths, and the
    /// paths in `remove` gone: what an edit makes of the version before. Costs what
    /// changes (see the type's documentation).
    pub fn patched(&self, put: Vec<Arc<Artifact>>, remove: &[String]) -> ArtifactSet {
        let mut next = self.clone();
        for path in remove {
            if let Some(before) = next.get(path).cloned() {
                xor_into(&mut next.digest, entry_digest(&before));
                next.len -= 1;
                if next.base.contains(path.as_str()) {
                    next.changes.insert(path.clone(), None);
                } else {
                    next.changes.remove(path);
                }
            }
        }
        for artifact in put {
            match next.get(&artifact.path).map(|before| entry_digest(before)) {
                Some(before) => xor_into(&mut next.digest, before),
                None => next.len += 1,
            }
            xor_into(&mut next.digest, entry_digest(&artifact));
            next.changes.insert(artifact.path.clone(), Some(artifact));
            next.changes_rehomed = false;
        }
        if next.changes.len() > next.base.len() / 16 + 64 {
            next.fold_changes();
        }
        next.revision = revision_text(&next.digest);
        next
    }

    /// The same set with its changes folded into a base of its own: one hash probe per
    /// lookup again. For a version that will serve a while (compression finished).
    pub fn folded(&self) -> ArtifactSet {
        let mut folded = self.clone();
        if !folded.changes.is_empty() {
            folded.fold_changes();
        }
        folded
    }

    /// Makes the changes part of a base of this set's own.
    fn fold_changes(&mut self) {
        let mut base = Arc::unwrap_or_clone(std::mem::take(&mut self.base));
        for (path, change) in self.changes.drain() {
            match change {
                Some(artifact) => {
                    base.replace(ByPath(artifact));
                }
                None => {
                    base.remove(path.as_str());
                }
            }
        }
        self.base = Arc::new(base);
        self.base_rehomed &= self.changes_rehomed;
        self.changes_rehomed = true;
    }

    /// The same set with `artifact` added, or replacing the one at its path.
    pub fn with(&self, artifact: Artifact) -> ArtifactSet {
        self.patched(vec![Arc::new(artifact)], &[])
    }

    /// The same set with `artifacts` in place of those at their paths, which must have the
    /// same identity bytes (they only add compressed variants): the revision stays.
    pub fn with_variants(&self, artifacts: Vec<Arc<Artifact>>) -> ArtifactSet {
        for artifact in &artifacts {
            debug_assert_eq!(
                self.get(&artifact.path).map(|a| &a.identity.etag),
                Some(&artifact.identity.etag)
            );
        }
        self.patched(artifacts, &[])
    }

    /// Whether this set and `other` share their base: then they differ at most at the
    /// paths either changed since it.
    fn shares_base(&self, other: &ArtifactSet) -> bool {
        Arc::ptr_eq(&self.base, &other.base)
    }

    /// How many paths differ between `self` and `other` (added, removed or with other
    /// bytes): by the changes alone when both come from the same base.
    pub fn differing_paths(&self, other: &ArtifactSet) -> usize {
        let differs = |path: &str| match (self.get(path), other.get(path)) {
            (Some(a), Some(b)) => a.identity.etag != b.identity.etag,
            (None, None) => false,
            _ => true,
        };
        if self.shares_base(other) {
            let mut paths: Vec<&str> = self
                .changes
                .keys()
                .chain(other.changes.keys())
                .map(String::as_str)
                .collect();
            paths.sort_unstable();
            paths.dedup();
            return paths.into_iter().filter(|path| differs(path)).count();
        }
        let changed = self
            .iter()
            .filter(|artifact| differs(&artifact.path))
            .count();
        let removed = other
            .iter()
            .filter(|artifact| self.get(&artifact.path).is_none())
            .count();
        changed + removed
    }

    /// Moves bodies to where `rehome` keeps them (see [`crate::spool`]): it returns the same
    /// bytes held elsewhere, or `None` to leave a body where it is. The bytes stay the same,
    /// so ETags and the revision do too. `rehome` sees each body of `which` once, in an order
    /// that is the same for two calls on an unchanged set; the base shared with other
    /// versions is copied only when one of its bodies moves.
    pub fn replace_bodies(
        &mut self,
        which: Bodies,
        mut rehome: impl FnMut(&Bytes) -> Option<Bytes>,
    ) {
        let mut moved_in_base = Vec::new();
        let base = match which {
            Bodies::All => self.base.iter(),
            Bodies::Changed => Default::default(),
        };
        for ByPath(artifact) in base {
            if self.changes.contains_key(&artifact.path) {
                continue;
            }
            let moved = rehomed(artifact, &mut rehome);
            if moved.iter().any(Option::is_some) {
                moved_in_base.push((artifact.path.clone(), moved));
            }
        }
        if !moved_in_base.is_empty() {
            let base = Arc::make_mut(&mut self.base);
            for (path, moved) in moved_in_base {
                if let Some(ByPath(mut artifact)) = base.take(path.as_str()) {
                    move_bodies(&mut artifact, moved);
                    base.insert(ByPath(artifact));
                }
            }
        }
        for artifact in self.changes.values_mut().flatten() {
            let moved = rehomed(artifact, &mut rehome);
            move_bodies(artifact, moved);
        }
        if which == Bodies::All {
            self.base_rehomed = true;
        }
        self.changes_rehomed = true;
    }

    /// Whether the base's bodies have all been through [`ArtifactSet::replace_bodies`]
    /// (see [`Bodies::Changed`]).
    pub fn base_rehomed(&self) -> bool {
        self.base_rehomed
    }

    pub fn get(&self, path: &str) -> Option<&Arc<Artifact>> {
        if !self.changes.is_empty() {
            if let Some(change) = self.changes.get(path) {
                return change.as_ref();
            }
        }
        self.base.get(path).map(|ByPath(artifact)| artifact)
    }

    /// A short hash over every path and ETag: changes exactly when some response changes.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// Artifacts in path order, for output and comparison.
    pub fn sorted(&self) -> Vec<&Arc<Artifact>> {
        let mut all: Vec<&Arc<Artifact>> = self.iter().collect();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// Every artifact, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Artifact>> {
        let changes = &self.changes;
        self.base
            .iter()
            .map(|ByPath(artifact)| artifact)
            .filter(move |artifact| changes.is_empty() || !changes.contains_key(&artifact.path))
            .chain(changes.values().flatten())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Which bodies [`ArtifactSet::replace_bodies`] visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bodies {
    All,
    /// Those of the artifacts changed since the base the set shares with the versions
    /// before it: after an edit or a round of compression, the only ones not yet moved,
    /// once the base itself has been ([`ArtifactSet::base_rehomed`]).
    Changed,
}

/// Where `rehome` puts an artifact's bodies: identity first, then each encoding's slot.
fn rehomed(
    artifact: &Artifact,
    rehome: &mut impl FnMut(&Bytes) -> Option<Bytes>,
) -> [Option<Bytes>; 3] {
    let identity = rehome(&artifact.identity.body);
    let [brotli, gzip] = Encoding::ALL.map(|encoding| {
        artifact
            .encoded
            .get(encoding)
            .and_then(|variant| rehome(&variant.body))
    });
    [identity, brotli, gzip]
}

/// Puts the bodies [`rehomed`] returned in place (the same bytes, held elsewhere).
fn move_bodies(artifact: &mut Arc<Artifact>, moved: [Option<Bytes>; 3]) {
    if moved.iter().all(Option::is_none) {
        return;
    }
    let artifact = Arc::make_mut(artifact);
    let [identity, variants @ ..] = moved;
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

/// The revision of `(path, identity ETag)` pairs, as [`ArtifactSet::revision`] computes it
/// (for `build/`, whose writer keeps no artifacts).
pub(crate) fn revision_of_entries<'a>(
    entries: impl Iterator<Item = (&'a str, &'a [u8])>,
) -> String {
    let mut digest = [0; 16];
    for (path, etag) in entries {
        xor_into(&mut digest, path_digest(path, etag));
    }
    revision_text(&digest)
}

fn revision_text(digest: &[u8; 16]) -> String {
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
    fn a_written_body_is_exact_and_one_inside_another_is_its_own() {
        let outer = exact_written(|out| {
            out.extend_from_slice(b"outer ");
            let inner = exact_written(|inner| {
                inner.extend_from_slice(b"inner");
                Ok::<(), ()>(())
            })?;
            out.extend_from_slice(&inner);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(&outer[..], b"outer inner");
        // The next body starts from an empty buffer, whatever the last one left.
        let after = exact_written(|out| {
            out.push(b'z');
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(&after[..], b"z");
        let big = exact_written(|out| {
            out.resize(KEPT_BUFFER_BYTES * 2, b'x');
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(big.len(), KEPT_BUFFER_BYTES * 2);
        let small = exact_written(|out| {
            out.push(b'y');
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(&small[..], b"y");
        assert!(exact_written(|_| Err::<(), _>("refused")).is_err());
    }

    #[test]
    fn the_etag_of_known_bytes_is_pinned() {
        // A build's manifest records ETags and `serve --from` checks every file against its
        // own: a change of algorithm needs a new manifest format, so the value is pinned.
        assert_eq!(
            strong_etag(b"dossier").as_str(),
            "\"KFrrQqOZdHfHx5V4jfF7kQ\""
        );
        assert_eq!(strong_etag(b"").as_bytes().len(), ETAG_LEN);
    }

    /// A site of 100,000 pages holds 300,000 artifacts: each byte here is 300 KB there. The
    /// record was 416 bytes with its ETags, cache policy and `Vary` as `HeaderValue`s.
    #[test]
    fn the_artifact_record_stays_small() {
        assert!(std::mem::size_of::<Artifact>() <= 320);
        assert!(std::mem::size_of::<Representation>() <= 64);
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
        previous.encoded.get_mut(Encoding::Gzip).unwrap().etag = strong_etag(b"marker");
        let reused = Artifact::new("/x", "text/plain", CachePolicy::Content, body)
            .with_encodings(Some(&previous));
        assert_eq!(
            reused.encoded.get(Encoding::Gzip).unwrap().etag,
            strong_etag(b"marker")
        );
        let changed = Artifact::new("/x", "text/plain", CachePolicy::Content, "y".repeat(1000))
            .with_encodings(Some(&previous));
        assert_ne!(
            changed.encoded.get(Encoding::Gzip).unwrap().etag,
            strong_etag(b"marker")
        );
    }

    /// A set patched edit after edit (through several foldings of its changes) is the set
    /// made from scratch of the same artifacts: same lookups, length, iteration and revision.
    #[test]
    fn a_patched_set_is_the_set_made_from_scratch() {
        let artifact = |path: &str, body: String| {
            Arc::new(Artifact::new(
                path,
                "text/plain",
                CachePolicy::Content,
                body,
            ))
        };
        let mut expected: std::collections::BTreeMap<String, Arc<Artifact>> = (0..500)
            .map(|n| {
                (
                    format!("/p{n}"),
                    artifact(&format!("/p{n}"), format!("v0 {n}")),
                )
            })
            .collect();
        let mut set = ArtifactSet::from_shared(expected.values().cloned().collect());
        let before = set.clone();
        for round in 1..=40 {
            let put: Vec<Arc<Artifact>> = (0..round * 7)
                .map(|n| {
                    let path = format!("/p{}", (n * 37 + round) % 700);
                    artifact(&path, format!("v{round} {n}"))
                })
                .collect();
            let remove: Vec<String> = (0..round).map(|n| format!("/p{}", n * 13 % 600)).collect();
            for path in &remove {
                expected.remove(path);
            }
            for artifact in &put {
                expected.insert(artifact.path.clone(), Arc::clone(artifact));
            }
            set = set.patched(put, &remove);
            let scratch = ArtifactSet::from_shared(expected.values().cloned().collect());
            assert_eq!(set.revision(), scratch.revision(), "round {round}");
            assert_eq!(set.len(), expected.len());
            let paths: Vec<&str> = set.sorted().iter().map(|a| a.path.as_str()).collect();
            assert_eq!(
                paths,
                expected.keys().map(String::as_str).collect::<Vec<_>>()
            );
            for (path, artifact) in &expected {
                assert!(Arc::ptr_eq(set.get(path).unwrap(), artifact), "{path}");
            }
            assert!(set.get("/p-none").is_none());
        }
        assert!(set.differing_paths(&before) > 0);
        assert_eq!(set.differing_paths(&set.clone()), 0);
        assert_eq!(before.differing_paths(&before.patched(Vec::new(), &[])), 0);
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
