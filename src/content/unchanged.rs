//! Which page files a reload need not read again.
//!
//! A site of 10,000 pages takes longer to read and parse than to render one edited page, so
//! [`super::load_reusing`] notes which page of the [`Site`] each file became, with a
//! [`FileStamp`] of the file, and takes the page from the previous site while the stamp is
//! the same. The stamp is what `make` and git trust: size, modification and change times,
//! inode and device. A file whose stamp is too recent is never trusted (git's "racily clean"
//! rule): a second write in the same clock tick as the read could leave every field as it
//! was.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Page, Site};

/// How old a file's last change must be before its stamp is trusted: far more than any
/// filesystem's timestamp granularity.
const SETTLED: Duration = Duration::from_secs(2);

/// What identifies one version of a file without reading it.
///
/// Times are nanoseconds since 1970 in an `i64` (good until 2262; later ones saturate, and
/// the change time, which the kernel sets to now on every write, never gets there): one
/// per page file, and `i128`'s alignment made every entry of the map 112 bytes, not 80.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileStamp {
    len: u64,
    modified_ns: i64,
    changed_ns: i64,
    inode: u64,
    device: u64,
}

impl FileStamp {
    /// The stamp of what `path` names (links followed), if it can be read and has settled.
    pub(super) fn settled(path: &Path, now: SystemTime) -> Option<FileStamp> {
        FileStamp::of(&std::fs::metadata(path).ok()?, now)
    }

    /// The stamp `metadata` gives, if it has settled.
    pub(super) fn of(metadata: &std::fs::Metadata, now: SystemTime) -> Option<FileStamp> {
        let nanos =
            |seconds: i64, nanos: i64| seconds.saturating_mul(1_000_000_000).saturating_add(nanos);
        let stamp = FileStamp {
            len: metadata.len(),
            modified_ns: nanos(metadata.mtime(), metadata.mtime_nsec()),
            changed_ns: nanos(metadata.ctime(), metadata.ctime_nsec()),
            inode: metadata.ino(),
            device: metadata.dev(),
        };
        let now_ns = now.duration_since(UNIX_EPOCH).map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        });
        let newest = stamp.modified_ns.max(stamp.changed_ns);
        (now_ns.saturating_sub(newest) >= SETTLED.as_nanos() as i64).then_some(stamp)
    }
}

/// Where each page of one [`Site`] came from: file, stamp, and position in `Site::pages`.
/// Only the positions are kept, not the pages: the site holds them already. Shared, so a
/// version made by an edit of one page keeps the map of the one before without copying it.
#[derive(Debug, Clone, Default)]
pub struct PageFiles(Arc<HashMap<PathBuf, (Option<FileStamp>, usize)>>);

impl PageFiles {
    /// The page `site` (the site these files were recorded with) has from `file`, if the
    /// file has not changed since.
    pub(super) fn unchanged<'a>(
        &self,
        site: &'a Site,
        file: &Path,
        stamp: FileStamp,
    ) -> Option<&'a Arc<Page>> {
        self.0
            .get(file)
            .filter(|(before, _)| *before == Some(stamp))
            .and_then(|(_, position)| site.pages.get(*position))
    }

    /// Records that `file` became the page at `position`; `stamp` is `None` for a file
    /// changed too recently to trust (it is read again next time).
    pub(super) fn insert(&mut self, file: PathBuf, stamp: Option<FileStamp>, position: usize) {
        Arc::make_mut(&mut self.0).insert(file, (stamp, position));
    }

    /// The position in `Site::pages` of the page read from `file`.
    pub(super) fn position(&self, file: &Path) -> Option<usize> {
        self.0.get(file).map(|(_, position)| *position)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_file_is_not_trusted_and_a_settled_one_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("page.md");
        std::fs::write(&file, "text").unwrap();
        let now = SystemTime::now();
        assert_eq!(FileStamp::settled(&file, now), None);
        let later = now + SETTLED + Duration::from_millis(10);
        let stamp = FileStamp::settled(&file, later).unwrap();
        std::fs::write(&file, "other").unwrap();
        let after_edit = SystemTime::now() + SETTLED + Duration::from_millis(10);
        assert_ne!(FileStamp::settled(&file, after_edit), Some(stamp));
        assert_eq!(FileStamp::settled(&dir.path().join("gone.md"), later), None);
    }
}
