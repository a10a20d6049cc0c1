//! The spool: response bodies, and the text of each page, kept in files under the state
//! directory instead of on the heap.
//!
//! A large site's finished bodies outweigh its source several times over: every page as
//! HTML, Markdown and JSON, and gzip and brotli of each, about 150 MB for 10,000 pages. On
//! the heap all of it stays resident for the life of the process. In the spool each body is
//! written once into a file that is mapped read-only, so the kernel's page cache holds the
//! bodies being served and can drop the rest under memory pressure, as it does for the
//! files nginx serves. A spooled body is still a `Bytes` (a view of the mapping), so
//! serving it is the same reference-count clone as before.
//!
//! Files are segments of [`SEGMENT_BYTES`], filled in order and unlinked as soon as they
//! are created: no other process can open one, so nothing can truncate a file under its
//! mapping (which would kill the server with SIGBUS), and the kernel frees the space when
//! the last body in a segment is dropped and the segment is unmapped and closed. An edit
//! leaves the bodies it replaced dead inside their segment; once most of a full segment is
//! dead, [`Spool::take_bodies`] copies its live bodies out so that it can go, which keeps
//! disk use within about twice the live bodies.
//!
//! Anything that goes wrong (the directory is not writable, the disk is full) leaves the
//! bodies on the heap, where they were: the spool saves memory, and never loses a body.
//! That includes errors the kernel reports only when it writes the pages back (a sparse
//! file whose blocks cannot be allocated): every segment written to is synced before any
//! body in it replaces its heap copy, since a page lost after a failed writeback would read
//! back as zeros, or kill the process with SIGBUS.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use memmap2::{Mmap, MmapOptions, UncheckedAdvice};

use crate::compile::{ArtifactSet, Bodies};
use crate::content::{PageText, Site};

/// The size of one spool file. Large enough that a 10,000-page site needs only three, so
/// finding a body's segment is a short scan, and small enough that an idle segment does not
/// pin much disk.
pub const SEGMENT_BYTES: usize = 64 << 20;

/// Smaller bodies stay on the heap: the bookkeeping would weigh as much as they do.
pub const MIN_SPOOLED_BYTES: usize = 256;

/// The spool directory inside the state directory.
pub const SPOOL_DIR: &str = "spool";

/// Where finished bodies are kept; one per process.
pub struct Spool {
    dir: PathBuf,
    segment_bytes: usize,
    inner: Mutex<Segments>,
    /// Set after the first failure, so a full disk is reported once, not per body.
    failed: AtomicBool,
    /// Makes the next sync fail, as a writeback error would (tests only: no file system
    /// here fails on demand).
    #[cfg(test)]
    fail_sync: AtomicBool,
}

#[derive(Default)]
struct Segments {
    /// The segment being filled, and how far.
    current: Option<(Arc<Segment>, usize)>,
    /// Every segment some body may still be in: the current one and full ones.
    all: Vec<Weak<Segment>>,
    created: u64,
}

/// One mapped, unlinked spool file.
struct Segment {
    file: File,
    map: Mmap,
    /// Bytes of bodies written here that some `Bytes` still refers to.
    live: AtomicUsize,
    /// Bytes written here in all.
    written: AtomicUsize,
    /// Written to since it was last synced.
    dirty: AtomicBool,
}

impl Segment {
    fn contains(&self, bytes: &[u8]) -> bool {
        let start = self.map.as_ptr() as usize;
        let at = bytes.as_ptr() as usize;
        at >= start && at + bytes.len() <= start + self.map.len()
    }

    /// Whether most of this (full) segment is dead: its live bodies should move.
    fn mostly_dead(&self) -> bool {
        self.live.load(Ordering::Relaxed) * 2 < self.written.load(Ordering::Relaxed)
    }
}

/// The owner behind a spooled `Bytes`: keeps its segment mapped, and counts itself out of
/// the segment's live bytes when the last `Bytes` of it is dropped.
///
/// There is one per spooled body, close to a million at 100,000 pages, each in a heap block
/// with the `Bytes` reference count: with `u32` offsets the block is 32 bytes, not 40
/// (8 MB). Bodies of 4 GiB and more stay on the heap ([`Spool::write`]).
struct SpooledBody {
    segment: Arc<Segment>,
    start: u32,
    len: u32,
}

impl AsRef<[u8]> for SpooledBody {
    fn as_ref(&self) -> &[u8] {
        let start = self.start as usize;
        &self.segment.map[start..start + self.len as usize]
    }
}

impl Drop for SpooledBody {
    fn drop(&mut self) {
        // Release: the bytes are no longer read once the count shows them dead.
        self.segment
            .live
            .fetch_sub(self.len as usize, Ordering::Release);
    }
}

impl Spool {
    /// A spool in `<state>/spool`, created if missing. Files a crashed process left behind
    /// (between creating one and unlinking it) are removed.
    pub fn open(state: &Path) -> std::io::Result<Spool> {
        Spool::with_segment_bytes(state, SEGMENT_BYTES)
    }

    /// [`Spool::open`] with segments of another size (tests use small ones).
    pub fn with_segment_bytes(state: &Path, segment_bytes: usize) -> std::io::Result<Spool> {
        let dir = state.join(SPOOL_DIR);
        fs::create_dir_all(&dir)?;
        for entry in fs::read_dir(&dir)?.flatten() {
            if entry.file_name().to_string_lossy().starts_with("segment-") {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(Spool {
            dir,
            segment_bytes: segment_bytes.max(MIN_SPOOLED_BYTES),
            inner: Mutex::new(Segments::default()),
            failed: AtomicBool::new(false),
            #[cfg(test)]
            fail_sync: AtomicBool::new(false),
        })
    }

    /// False once a write has failed: from then on bodies stay on the heap, until a restart
    /// opens the spool again.
    pub fn works(&self) -> bool {
        !self.failed.load(Ordering::Relaxed)
    }

    /// Moves every body of `set` that is not spooled yet (or sits in a segment that is
    /// mostly dead) into the spool. Bodies keep their bytes, so ETags and the revision
    /// stay as they are.
    pub fn take_bodies(&self, set: &mut ArtifactSet) {
        self.take(set, Bodies::All);
    }

    /// [`Spool::take_bodies`] that visits only the changed artifacts of a set whose base
    /// was spooled already (a version after an edit, or after a round of compression).
    /// Every body is visited when the base is new (a full compile, changes folded into a
    /// new base) or some segment is mostly dead and its bodies must move.
    pub fn take_new_bodies(&self, set: &mut ArtifactSet) {
        let compacting = {
            let segments = self.lock();
            let current = segments.current.as_ref().map(|(segment, _)| segment);
            segments
                .all
                .iter()
                .filter_map(Weak::upgrade)
                .any(|segment| {
                    !current.is_some_and(|c| Arc::ptr_eq(c, &segment)) && segment.mostly_dead()
                })
        };
        self.take(
            set,
            if compacting || !set.base_rehomed() {
                Bodies::All
            } else {
                Bodies::Changed
            },
        );
    }

    /// The segments whose bodies stay where they are: the one being filled, and every other
    /// that is not mostly dead. A body anywhere else is (re)written.
    fn settled(segments: &mut Segments) -> Vec<Arc<Segment>> {
        segments.all.retain(|segment| segment.strong_count() > 0);
        let current = segments
            .current
            .as_ref()
            .map(|(segment, _)| Arc::clone(segment));
        segments
            .all
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|segment| {
                current.as_ref().is_some_and(|c| Arc::ptr_eq(c, segment)) || !segment.mostly_dead()
            })
            .collect()
    }

    /// Moves the text of each page of `site` into the spool, as [`Spool::take_bodies`]
    /// does bodies: a text already in a settled segment stays, any other is written, and
    /// the copies replace the heap texts once their segments are synced. The pass is over
    /// every page, so it belongs off the edit path (the background compression runs it),
    /// and it looks for texts to move without the lock; it also moves texts out of mostly
    /// dead segments, which a text could otherwise keep alive for good. Texts are checked
    /// again, written and replaced under the lock, so two passes never write one text twice.
    pub fn take_texts(&self, site: &Site) {
        let unsettled = |text: &Bytes, settled: &[Arc<Segment>]| {
            text.len() >= MIN_SPOOLED_BYTES && !settled.iter().any(|s| s.contains(text))
        };
        let settled = Spool::settled(&mut self.lock());
        let pending: Vec<&PageText> = site
            .pages
            .iter()
            .map(|page| &page.body_markdown)
            .filter(|text| unsettled(&text.bytes(), &settled))
            .collect();
        drop(settled);
        if pending.is_empty() {
            return;
        }
        let mut segments = self.lock();
        let settled = Spool::settled(&mut segments);
        let mut copies = Vec::new();
        for text in pending {
            let bytes = text.bytes();
            if !unsettled(&bytes, &settled) {
                continue;
            }
            match self.write(&mut segments, &bytes) {
                Some(copy) => copies.push((text, copy)),
                None => break,
            }
        }
        if copies.is_empty() {
            return;
        }
        if let Err(error) = self.sync(&segments) {
            drop(copies);
            self.fail(&error);
            return;
        }
        for (text, copy) in copies {
            text.move_to(copy);
        }
    }

    fn take(&self, set: &mut ArtifactSet, which: Bodies) {
        let mut segments = self.lock();
        let settled = Spool::settled(&mut segments);
        // Two passes over the same bodies in the same order: write them all, sync, and only
        // then let the spooled copies replace the heap ones.
        let mut spooled: Vec<Option<Bytes>> = Vec::new();
        set.replace_bodies(which, |body| {
            let copy = if body.len() < MIN_SPOOLED_BYTES || settled.iter().any(|s| s.contains(body))
            {
                None
            } else {
                self.write(&mut segments, body)
            };
            spooled.push(copy);
            None
        });
        if let Err(error) = self.sync(&segments) {
            // Dropping the copies gives their space back; the heap bodies stay.
            drop(spooled);
            self.fail(&error);
            return;
        }
        let mut spooled = spooled.into_iter();
        set.replace_bodies(which, |_| spooled.next().flatten());
    }

    /// Writes back every segment written to since its last sync, and waits for the disk.
    fn sync(&self, segments: &Segments) -> std::io::Result<()> {
        #[cfg(test)]
        if self.fail_sync.swap(false, Ordering::Relaxed) {
            return Err(std::io::Error::other("injected writeback error"));
        }
        for segment in segments.all.iter().filter_map(Weak::upgrade) {
            if segment.dirty.swap(false, Ordering::AcqRel) {
                if let Err(error) = segment.file.sync_data() {
                    segment.dirty.store(true, Ordering::Release);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// Lets the kernel take back the spool pages this process has read (compressing reads
    /// every body once). They stay in the page cache; the next request for one maps it
    /// again without reading the disk.
    pub fn release_resident(&self) {
        let segments = self.lock();
        for segment in segments.all.iter().filter_map(Weak::upgrade) {
            // SAFETY: the mapping is shared and read-only, backed by a file: dropping its
            // pages loses nothing, and the next access reads the same bytes back.
            let _ = unsafe { segment.map.unchecked_advise(UncheckedAdvice::DontNeed) };
        }
    }

    /// How many segments some body is still in (for tests).
    pub fn segments(&self) -> usize {
        self.held_segments().len()
    }

    /// Bytes written into the segments some body is still in: the disk they take, since a
    /// segment file is sparse until written (for tests).
    pub fn held_bytes(&self) -> usize {
        self.held_segments()
            .iter()
            .map(|segment| segment.written.load(Ordering::Relaxed))
            .sum()
    }

    /// The segments some body is still in.
    fn held_segments(&self) -> Vec<Arc<Segment>> {
        self.lock()
            .all
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|segment| segment.live.load(Ordering::Relaxed) > 0)
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Segments> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `body` copied into the spool, or `None` (it stays on the heap) on any failure.
    fn write(&self, segments: &mut Segments, body: &[u8]) -> Option<Bytes> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let len = u32::try_from(body.len()).ok()?;
        if let Some((segment, used)) = segments.current.as_mut() {
            // Every body written here was dropped (a full rebuild replaced them all): write
            // over them instead of growing the file. Nothing refers to those bytes any more.
            if segment.live.load(Ordering::Acquire) == 0 {
                *used = 0;
                segment.written.store(0, Ordering::Relaxed);
            }
        }
        let fits = segments
            .current
            .as_ref()
            .is_some_and(|(segment, used)| used + body.len() <= segment.map.len());
        if !fits {
            match self.new_segment(segments, body.len().max(self.segment_bytes)) {
                Ok(segment) => {
                    segments.all.push(Arc::downgrade(&segment));
                    segments.current = Some((segment, 0));
                }
                Err(error) => return self.fail(&error),
            }
        }
        let (segment, used) = segments.current.as_mut()?;
        // A segment holding a body of almost 4 GiB could reach past `u32` offsets.
        let start = u32::try_from(*used).ok()?;
        if let Err(error) = segment.file.write_all_at(body, u64::from(start)) {
            return self.fail(&error);
        }
        *used += body.len();
        segment.dirty.store(true, Ordering::Release);
        segment.written.fetch_add(body.len(), Ordering::Relaxed);
        segment.live.fetch_add(body.len(), Ordering::Relaxed);
        Some(Bytes::from_owner(SpooledBody {
            segment: Arc::clone(segment),
            start,
            len,
        }))
    }

    fn new_segment(&self, segments: &mut Segments, len: usize) -> std::io::Result<Arc<Segment>> {
        segments.created += 1;
        // Unique across processes too: instances sharing a state directory (with a Redis
        // store) may have the same process id in different containers.
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).map_err(std::io::Error::other)?;
        let path = self.dir.join(format!(
            "segment-{}-{}-{:016x}",
            std::process::id(),
            segments.created,
            u64::from_le_bytes(nonce)
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        // Unlinked at once: the open file and its mapping are all that is left of it. (Another
        // instance starting on the same directory may have removed it already.)
        match fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        file.set_len(len as u64)?;
        // SAFETY: nobody else can open the file (it has no name), and this process writes
        // only where no referenced body lies (past the last one, or over a segment whose
        // bodies were all dropped), so the mapped bytes of a body never change while it is
        // referenced.
        let map = unsafe { MmapOptions::new().len(len).map(&file)? };
        Ok(Arc::new(Segment {
            file,
            map,
            live: AtomicUsize::new(0),
            written: AtomicUsize::new(0),
            dirty: AtomicBool::new(false),
        }))
    }

    fn fail(&self, error: &std::io::Error) -> Option<Bytes> {
        if !self.failed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                dir = %self.dir.display(),
                %error,
                "cannot write to the spool; response bodies stay in memory"
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{Artifact, CachePolicy, Encoding};

    fn artifact(path: &str, body: Vec<u8>) -> Artifact {
        Artifact::new(path, "text/plain", CachePolicy::Content, body).with_encodings(None)
    }

    fn text(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| b'a' + ((i * 7 + seed as usize) % 26) as u8)
            .collect()
    }

    fn bodies(set: &ArtifactSet) -> Vec<(String, Option<Encoding>, Bytes)> {
        let mut all = Vec::new();
        for artifact in set.sorted() {
            all.push((artifact.path.clone(), None, artifact.identity.body.clone()));
            for (encoding, variant) in artifact.encoded.iter() {
                all.push((artifact.path.clone(), Some(encoding), variant.body.clone()));
            }
        }
        all
    }

    fn on_heap(spool: &Spool, body: &Bytes) -> bool {
        let segments = spool.lock();
        !segments
            .all
            .iter()
            .filter_map(Weak::upgrade)
            .any(|segment| segment.contains(body))
    }

    /// After an edit only the changed artifacts are visited: their bodies are spooled, and
    /// the base shared with the version before is neither copied nor touched.
    #[test]
    fn new_bodies_are_spooled_without_touching_the_shared_base() {
        let state = tempfile::tempdir().unwrap();
        let spool = Spool::open(state.path()).unwrap();
        let mut first = ArtifactSet::new(vec![
            artifact("/a", text(3000, 1)),
            artifact("/b", text(3000, 2)),
        ]);
        // A set made from scratch (a full compile): its base is new, so every body moves.
        spool.take_new_bodies(&mut first);
        for (path, encoding, body) in bodies(&first) {
            let expect_heap = body.len() < MIN_SPOOLED_BYTES;
            assert_eq!(on_heap(&spool, &body), expect_heap, "{path} {encoding:?}");
        }
        let kept = Arc::clone(first.get("/a").unwrap());
        let mut second = first.patched(
            vec![
                Arc::new(artifact("/b", text(3000, 3))),
                Arc::new(artifact("/c", text(3000, 4))),
            ],
            &[],
        );
        spool.take_new_bodies(&mut second);
        for (path, encoding, body) in bodies(&second) {
            let expect_heap = body.len() < MIN_SPOOLED_BYTES;
            assert_eq!(on_heap(&spool, &body), expect_heap, "{path} {encoding:?}");
        }
        assert!(
            Arc::ptr_eq(second.get("/a").unwrap(), &kept),
            "the base was copied"
        );
        assert_eq!(bodies(&second)[0].2, kept.identity.body);
        // Folding a set whose every body went through the spool keeps it so: the next
        // install visits only its changes. A fold over changes not offered yet does not.
        assert!(second.folded().base_rehomed());
        let unspooled = second.patched(vec![Arc::new(artifact("/d", text(3000, 5)))], &[]);
        assert!(!unspooled.folded().base_rehomed());
    }

    #[test]
    fn spooled_bodies_keep_their_bytes_and_leave_the_heap() {
        let state = tempfile::tempdir().unwrap();
        let state = state.path();
        let spool = Spool::open(state).unwrap();
        let mut set = ArtifactSet::new(vec![
            artifact("/big", text(5000, 1)),
            artifact("/medium", text(700, 2)),
            artifact("/tiny", b"ok".to_vec()),
        ]);
        let before = bodies(&set);
        let revision = set.revision().to_string();
        spool.take_bodies(&mut set);
        assert_eq!(bodies(&set), before);
        assert_eq!(set.revision(), revision);
        for (path, encoding, body) in bodies(&set) {
            let expect_heap = body.len() < MIN_SPOOLED_BYTES;
            assert_eq!(on_heap(&spool, &body), expect_heap, "{path} {encoding:?}");
        }
        // Spooling again finds them in place and moves nothing.
        let spooled = bodies(&set);
        spool.take_bodies(&mut set);
        for ((_, _, a), (_, _, b)) in spooled.iter().zip(bodies(&set)) {
            assert_eq!(a.as_ptr(), b.as_ptr());
        }
        // Segment files have no names: nothing else can open or truncate them.
        assert_eq!(std::fs::read_dir(state.join(SPOOL_DIR)).unwrap().count(), 0);
        assert_eq!(spool.segments(), 1);
        drop(set);
        drop(spooled);
        assert_eq!(spool.segments(), 0, "a segment outlived its bodies");
    }

    #[test]
    fn live_bodies_move_out_of_a_mostly_dead_segment() {
        let state = tempfile::tempdir().unwrap();
        let state = state.path();
        let spool = Spool::with_segment_bytes(state, 4096).unwrap();
        let kept = Artifact::new("/kept", "text/plain", CachePolicy::Content, text(1000, 3));
        let edited = |seed| {
            Artifact::new(
                "/edited",
                "text/plain",
                CachePolicy::Content,
                text(2500, seed),
            )
        };
        let mut first = ArtifactSet::new(vec![kept.clone(), edited(4)]);
        spool.take_bodies(&mut first);
        // The edit's new body does not fit in the first segment: a second one starts.
        let mut second = ArtifactSet::new(vec![
            first.get("/kept").unwrap().as_ref().clone(),
            edited(5),
        ]);
        spool.take_bodies(&mut second);
        assert_eq!(spool.segments(), 2);
        drop(first);
        // 1,000 of the first segment's 3,500 bytes are live: the next pass moves them.
        let copy = |set: &ArtifactSet| -> Vec<Vec<u8>> {
            bodies(set)
                .iter()
                .map(|(_, _, body)| body.to_vec())
                .collect()
        };
        let before = copy(&second);
        spool.take_bodies(&mut second);
        assert_eq!(copy(&second), before);
        assert_eq!(spool.segments(), 1, "the mostly dead segment is still held");
    }

    /// The sample site with one page, whose text is `len` bytes.
    fn site_of_one_page(len: usize) -> Site {
        let content = Path::new(env!("CARGO_MANIFEST_DIR")).join("content");
        let mut site = crate::content::load(&content).unwrap();
        site.pages.truncate(1);
        Arc::make_mut(&mut site.pages[0]).body_markdown =
            String::from_utf8(text(len, 1)).unwrap().into();
        site
    }

    #[test]
    fn page_texts_move_once_and_out_of_a_mostly_dead_segment() {
        let state = tempfile::tempdir().unwrap();
        let spool = Spool::with_segment_bytes(state.path(), 4096).unwrap();
        let mut first = ArtifactSet::new(vec![Artifact::new(
            "/a",
            "text/plain",
            CachePolicy::Content,
            text(3000, 2),
        )]);
        spool.take_bodies(&mut first);
        let site = site_of_one_page(1000);
        let expected = site.pages[0].body_markdown.get().to_string();
        spool.take_texts(&site);
        let page_text = || site.pages[0].body_markdown.bytes();
        assert!(!on_heap(&spool, &page_text()));
        assert_eq!(&*site.pages[0].body_markdown.get(), expected);
        // Already where it stays: not written again.
        let held = spool.held_bytes();
        spool.take_texts(&site);
        assert_eq!(spool.held_bytes(), held);
        // A body too large for what is left starts a second segment; once the first
        // segment's body dies, its 1,000 live bytes of 4,000 are the text, which moves.
        let mut second = ArtifactSet::new(vec![Artifact::new(
            "/b",
            "text/plain",
            CachePolicy::Content,
            text(2500, 3),
        )]);
        spool.take_bodies(&mut second);
        drop(first);
        assert_eq!(spool.segments(), 2);
        spool.take_texts(&site);
        assert_eq!(spool.segments(), 1, "the text still holds the dead segment");
        assert!(!on_heap(&spool, &page_text()));
        assert_eq!(&*site.pages[0].body_markdown.get(), expected);
    }

    #[test]
    fn page_texts_stay_on_the_heap_when_the_spool_cannot_be_synced() {
        let state = tempfile::tempdir().unwrap();
        let spool = Spool::open(state.path()).unwrap();
        spool.fail_sync.store(true, Ordering::Relaxed);
        let site = site_of_one_page(1000);
        spool.take_texts(&site);
        assert!(on_heap(&spool, &site.pages[0].body_markdown.bytes()));
        assert_eq!(spool.held_bytes(), 0);
        assert!(!spool.works());
    }

    #[test]
    fn a_segment_whose_bodies_all_died_is_written_over() {
        let state = tempfile::tempdir().unwrap();
        let spool = Spool::open(state.path()).unwrap();
        let mut first = ArtifactSet::new(vec![artifact("/a", text(3000, 8))]);
        spool.take_bodies(&mut first);
        let at = first.get("/a").unwrap().identity.body.as_ptr();
        drop(first);
        let mut second = ArtifactSet::new(vec![artifact("/b", text(3000, 9))]);
        let expected = second.get("/b").unwrap().identity.body.clone();
        spool.take_bodies(&mut second);
        let body = &second.get("/b").unwrap().identity.body;
        assert_eq!(body.as_ptr(), at);
        assert_eq!(body, &expected);
    }

    #[test]
    fn a_spool_that_cannot_write_leaves_bodies_on_the_heap() {
        let state = tempfile::tempdir().unwrap();
        let state = state.path();
        let spool = Spool::open(state).unwrap();
        std::fs::remove_dir_all(state.join(SPOOL_DIR)).unwrap();
        let mut set = ArtifactSet::new(vec![artifact("/big", text(5000, 6))]);
        takes_nothing(&spool, &mut set);
        assert_eq!(spool.segments(), 0);
    }

    #[test]
    fn bodies_stay_on_the_heap_when_the_spool_cannot_be_synced() {
        let state = tempfile::tempdir().unwrap();
        let spool = Spool::open(state.path()).unwrap();
        spool.fail_sync.store(true, Ordering::Relaxed);
        let mut set = ArtifactSet::new(vec![artifact("/big", text(5000, 7))]);
        takes_nothing(&spool, &mut set);
        // The copies written before the sync failed were dropped with it.
        assert_eq!(spool.held_bytes(), 0);
    }

    /// `take_bodies` on a spool that fails: every body keeps its bytes on the heap, and the
    /// spool is off from then on.
    fn takes_nothing(spool: &Spool, set: &mut ArtifactSet) {
        let before = bodies(set);
        spool.take_bodies(set);
        assert_eq!(bodies(set), before);
        assert!(bodies(set).iter().all(|(_, _, body)| on_heap(spool, body)));
        assert!(!spool.works());
    }

    #[test]
    fn release_resident_keeps_the_bytes() {
        let state = tempfile::tempdir().unwrap();
        let state = state.path();
        let spool = Spool::open(state).unwrap();
        let mut set = ArtifactSet::new(vec![artifact("/big", text(50_000, 7))]);
        let before = bodies(&set);
        spool.take_bodies(&mut set);
        spool.release_resident();
        assert_eq!(bodies(&set), before);
    }
}
