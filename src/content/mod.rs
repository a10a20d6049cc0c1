//! Reading `content/`: files in, a validated [`Site`] out, or every problem with its location.
//!
//! Layout of a content tree:
//!
//! ```text
//! content/
//!   company.json          the company: identity, description, founding, headquarters, contact, links
//!   divisions/<id>.json   one file per division
//!   pages/<slug>.md       one Markdown page per file, TOML front matter between `+++` lines
//! ```
//!
//! This module never writes anything and never half-succeeds: it returns a whole `Site` or
//! the complete list of [`ContentError`]s.

mod address;
mod error;
mod front_matter;
pub mod model;
pub(crate) mod rules;
mod source;
mod text;
mod unchanged;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;

pub use error::{ContentError, ContentErrors};
pub use model::{Company, Contact, Division, Page, PageFrontMatter, Site};

use rules::Problems;
use source::FieldLines;
pub use text::{PageText, Text};
use unchanged::FileStamp;
pub use unchanged::PageFiles;

/// Content files larger than this are refused: they are hand-written facts, not data dumps,
/// and a runaway file must not exhaust memory.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Validates the text of one content file as [`load`] would, by where it sits in the tree
/// (`company.json`, `divisions/<name>.json` or `pages/<name>.md`), without the disk and
/// without the checks that need the other files (references, duplicates).
pub fn check_text(relative: &Path, text: &str) -> Result<(), ContentErrors> {
    let mut errors = ContentErrors::default();
    let parent = relative.parent().and_then(|p| p.to_str()).unwrap_or("");
    let extension = relative.extension().and_then(|e| e.to_str()).unwrap_or("");
    let valid = match (parent, extension) {
        ("", "json") => parse_json::<Company>(relative, text, &mut errors, Company::check)
            .is_some_and(|(_, valid)| valid),
        ("divisions", "json") => {
            parse_json::<Division>(relative, text, &mut errors, Division::check)
                .is_some_and(|(_, valid)| valid)
        }
        ("pages", "md") => parse_page(relative, text, &mut errors).is_some(),
        _ => {
            errors.push(ContentError::whole_file(relative, "not a content file"));
            false
        }
    };
    if valid && errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Reads and validates the content tree at `dir`.
pub fn load(dir: &Path) -> Result<Site, ContentErrors> {
    load_reusing(dir, None).map(|(site, _)| site)
}

/// [`load`], taking each page whose file has not changed from `previous` (a site loaded
/// from the same directory, and where its pages came from) instead of reading it again.
/// The result is the same as [`load`]'s; the [`PageFiles`] are for the next call.
pub fn load_reusing(
    dir: &Path,
    previous: Option<(&Site, &PageFiles)>,
) -> Result<(Site, PageFiles), ContentErrors> {
    load_edited(dir, previous, None)
}

/// [`load_reusing`], told by a file watcher that only the files at `edited` changed since
/// `previous` was loaded. When they are all page files that still exist and keep their
/// slug, order and title (an edit of a page's text or fields), only they are read: the
/// rest of the site is `previous`'s, and 100,000 pages are not listed and checked again
/// for one edit. Anything else (a new, removed or misnamed file, another kind of file, a
/// page with a problem) is a full [`load_reusing`], so the result and its errors are
/// always those of a clean [`load`].
pub fn load_edited(
    dir: &Path,
    previous: Option<(&Site, &PageFiles)>,
    edited: Option<&[PathBuf]>,
) -> Result<(Site, PageFiles), ContentErrors> {
    if let (Some(edited), Some((site, files))) = (edited, previous) {
        if let Some(loaded) = edited_pages(dir, site, files, edited) {
            return Ok(loaded);
        }
    }
    let mut errors = ContentErrors::default();
    if !dir.is_dir() {
        errors.push(ContentError::whole_file(dir, "content directory not found"));
        return Err(errors);
    }

    // Symbolic links are followed only while they stay inside the content directory.
    let root = match std::fs::canonicalize(dir) {
        Ok(root) => root,
        Err(error) => {
            errors.push(ContentError::whole_file(
                dir,
                format!("cannot read: {error}"),
            ));
            return Err(errors);
        }
    };
    let company_file = dir.join("company.json");
    let company = read_text(&root, &company_file, &mut errors)
        .and_then(|text| parse_json::<Company>(&company_file, &text, &mut errors, Company::check))
        .and_then(|(company, valid)| valid.then_some(company));

    let mut divisions = Vec::new();
    let mut division_files: HashMap<String, PathBuf> = HashMap::new();
    // Ids of division files that do not parse (their `id` if it can be read, else the file
    // name): their error is reported once, not again by every page that names them.
    let mut unparsed_divisions: Vec<String> = Vec::new();
    for file in list_files(&dir.join("divisions"), "json", &mut errors) {
        let Some(text) = read_text(&root, &file, &mut errors) else {
            continue;
        };
        // A division that parses but breaks a field rule still claims its id, so pages
        // that reference it are not reported as broken too.
        let Some((division, valid)) =
            parse_json::<Division>(&file, &text, &mut errors, Division::check)
        else {
            unparsed_divisions.extend(
                serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|value| value.get("id")?.as_str().map(String::from)),
            );
            unparsed_divisions.extend(
                file.file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned()),
            );
            continue;
        };
        if let Some(first) = division_files.get(&division.id) {
            errors.push(ContentError::at(
                file.clone(),
                FieldLines::from_json(&text).line_of("id"),
                "id",
                format!(
                    "duplicate division id `{}`, already used by {}",
                    division.id,
                    first.display()
                ),
            ));
            continue;
        }
        division_files.insert(division.id.clone(), file);
        if valid {
            divisions.push(division);
        }
    }

    let mut pages = Vec::new();
    let mut page_files: HashMap<String, PathBuf> = HashMap::new();
    let pages_dir = dir.join("pages");
    let listed = list_files(&pages_dir, "md", &mut errors);
    let listed_dir = ListedDir::open(&root, &pages_dir);
    for ReadPage {
        file,
        parsed,
        errors: page_errors,
        stamp,
    } in read_pages(&root, listed_dir.as_ref(), listed, previous)
    {
        for error in page_errors.0 {
            errors.push(error);
        }
        let Some(page) = parsed else {
            continue;
        };
        let mut problems = Problems::default();
        if crate::paths::RESERVED_SLUGS.contains(&page.slug.as_str()) {
            problems.add(
                "slug",
                format!(
                    "`{}` is reserved for the site's own paths; choose another slug",
                    page.slug
                ),
            );
        }
        if let Some(first) = page_files.get(&page.slug) {
            problems.add(
                "slug",
                format!(
                    "duplicate page slug `{}`, already used by {}",
                    page.slug,
                    first.display()
                ),
            );
        }
        if let Some(division) = &page.division {
            if !division_files.contains_key(division) && !unparsed_divisions.contains(division) {
                let mut known: Vec<&str> = division_files.keys().map(String::as_str).collect();
                known.sort_unstable();
                problems.add(
                    "division",
                    format!(
                        "unknown division `{division}`; known divisions: {}",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                );
            }
        }
        if !problems.0.is_empty() {
            // The lines of a page's fields are only needed for a problem, which is rare
            // enough to read the file again: working them out for every page was a tenth
            // of reading 100,000 of them.
            let lines = read_text(&root, &file, &mut errors).and_then(|text| {
                front_matter::split(&text)
                    .ok()
                    .map(|split| FieldLines::from_toml(split.front_matter, split.front_matter_line))
            });
            if let Some(lines) = lines {
                report(&file, &lines, problems, &mut errors);
            }
            continue;
        }
        page_files.insert(page.slug.clone(), file.clone());
        pages.push((page, file, stamp));
    }

    match company {
        Some(company) if errors.is_empty() => {
            divisions.sort_by(|a, b| (a.order, &a.name).cmp(&(b.order, &b.name)));
            pages.sort_by(|(a, ..), (b, ..)| (a.order, &a.title).cmp(&(b.order, &b.title)));
            let mut files = PageFiles::default();
            let pages = pages
                .into_iter()
                .enumerate()
                .map(|(position, (page, file, stamp))| {
                    files.insert(file, stamp, position);
                    page
                })
                .collect();
            Ok((
                Site {
                    company,
                    divisions,
                    pages,
                },
                files,
            ))
        }
        _ => Err(errors),
    }
}

/// One page file: what it holds, or why not.
struct ReadPage {
    file: PathBuf,
    /// The page, if it is one.
    parsed: Option<Arc<Page>>,
    errors: ContentErrors,
    /// The file's stamp, when settled enough to be trusted next time.
    stamp: Option<FileStamp>,
}

/// Whether `path` names a file editors and tools leave behind (a dotfile, a `~` backup,
/// vim's `4913` probe), which never affects the content.
pub fn is_editor_leftover(path: &Path) -> bool {
    path.file_name()
        .map(|name| name.to_string_lossy())
        .is_some_and(|name| name.starts_with('.') || name.ends_with('~') || name == "4913")
}

/// `site` with the pages at `edited` read again, or `None` when that is not all that
/// changed (see [`load_edited`]).
fn edited_pages(
    dir: &Path,
    site: &Site,
    files: &PageFiles,
    edited: &[PathBuf],
) -> Option<(Site, PageFiles)> {
    let root = std::fs::canonicalize(dir).ok()?;
    let pages_dir = dir.join("pages");
    let watched_pages = std::path::absolute(&pages_dir).ok()?;
    let mut replaced = Vec::new();
    for path in edited {
        let name = path.file_name()?;
        let file = pages_dir.join(name);
        let known = files.position(&file);
        let noise = is_editor_leftover(path);
        let in_pages = path.parent() == Some(watched_pages.as_path());
        if !in_pages || noise || known.is_none() {
            // A file in pages/ that is gone again and was no page (an editor's or
            // `sed -i`'s temporary file) changed nothing; anything else (a division or
            // company.json deleted, a new file, another directory) needs a full load.
            if in_pages && known.is_none() && std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            return None;
        }
        let position = known?;
        let mut errors = ContentErrors::default();
        let text = read_text(&root, &file, &mut errors)?;
        let page = parse_page(&file, &text, &mut errors)?;
        let before = site.pages.get(position)?;
        // The same slug, order and title keep the page's place and its slug unique; its
        // division must still be one of the site's.
        let placed =
            page.slug == before.slug && page.order == before.order && page.title == before.title;
        let division_known = page
            .division
            .as_ref()
            .is_none_or(|id| site.divisions.iter().any(|division| &division.id == id));
        if !errors.is_empty() || !placed || !division_known {
            return None;
        }
        replaced.push((position, Arc::new(page)));
    }
    let mut pages = site.pages.clone();
    for (position, page) in replaced {
        pages[position] = page;
    }
    // The edited files keep their old stamps, which no longer match: a later full load
    // reads them again.
    Some((
        Site {
            company: site.company.clone(),
            divisions: site.divisions.clone(),
            pages,
        },
        files.clone(),
    ))
}

/// Reads and parses page files on every core (a site may have tens of thousands), keeping
/// their order so errors are reported in file order. A file unchanged since `previous` is
/// not read: its page is taken from there. Files are opened by name in `dir`, the pages
/// directory opened once, when it is inside `root` ([`read_listed_file`]).
fn read_pages(
    root: &Path,
    dir: Option<&ListedDir>,
    files: Vec<PathBuf>,
    previous: Option<(&Site, &PageFiles)>,
) -> Vec<ReadPage> {
    let now = std::time::SystemTime::now();
    let read_one = |file: PathBuf| {
        let mut errors = ContentErrors::default();
        // A reload looks at each file's stamp first, to skip the unchanged ones. A first
        // load reads every file anyway, and takes the stamp from the opened file.
        let (stamp, read) = match (previous, dir) {
            (None, Some(dir)) => match read_listed_file(root, dir, &file) {
                Ok((bytes, metadata)) => {
                    let stamp = match metadata {
                        Some(metadata) => FileStamp::of(&metadata, now),
                        None => FileStamp::settled(&file, now),
                    };
                    (stamp, Some(Ok(bytes)))
                }
                Err(error) => (None, Some(Err(error))),
            },
            _ => (FileStamp::settled(&file, now), None),
        };
        let unchanged = stamp
            .zip(previous)
            .and_then(|(stamp, (site, files))| files.unchanged(site, &file, stamp));
        let parsed = match unchanged {
            Some(page) => Some(Arc::clone(page)),
            None => {
                let read = read.unwrap_or_else(|| match dir {
                    Some(dir) => read_listed_file(root, dir, &file).map(|(bytes, _)| bytes),
                    None => read_regular_file(root, &file),
                });
                text_or_report(&file, read, &mut errors)
                    .and_then(|text| parse_page(&file, &text, &mut errors))
                    .map(Arc::new)
            }
        };
        ReadPage {
            file,
            parsed,
            errors,
            stamp,
        }
    };
    // A first load reads every file; a reload mostly looks at stamps, and shares the
    // cores with the server.
    if previous.is_none() {
        crate::parallel::map_reading(
            files,
            |next_files| {
                if let Some(dir) = dir {
                    dir.read_ahead(next_files);
                }
            },
            read_one,
        )
    } else {
        crate::parallel::map(files, read_one)
    }
}

/// The files with `extension` directly inside `dir`, sorted by name. A missing directory is
/// an empty list; editor leftovers (dotfiles, `~` backups) are skipped; anything else is an
/// error, because a misnamed file would otherwise vanish from the site without a word.
fn list_files(dir: &Path, extension: &str, errors: &mut ContentErrors) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    // Names and types as the directory lists them (no `stat` per entry), sorted once.
    let mut entries: Vec<(std::ffi::OsString, std::io::Result<std::fs::FileType>)> = Vec::new();
    // An error reading the directory ends the listing (the next read would most likely
    // fail the same way), and is reported against the directory.
    let listed = std::fs::read_dir(dir).and_then(|listing| {
        for entry in listing {
            let entry = entry?;
            entries.push((entry.file_name(), entry.file_type()));
        }
        Ok(())
    });
    if let Err(error) = listed {
        errors.push(ContentError::whole_file(
            dir,
            format!("cannot read: {error}"),
        ));
    }
    entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    let mut files = Vec::with_capacity(entries.len());
    for (name, file_type) in entries {
        let text = name.to_string_lossy();
        if text.starts_with('.') || text.ends_with('~') {
            continue;
        }
        let path = dir.join(&name);
        let file_type = match file_type {
            Ok(file_type) => file_type,
            Err(error) => {
                errors.push(ContentError::whole_file(
                    path,
                    format!("cannot read: {error}"),
                ));
                continue;
            }
        };
        // A link is listed like the file it names; reading it checks where it leads.
        let is_file_or_link = file_type.is_file() || file_type.is_symlink();
        if path.extension().and_then(|e| e.to_str()) == Some(extension) && is_file_or_link {
            files.push(path);
        } else {
            errors.push(ContentError::whole_file(
                path,
                format!("unexpected entry: this directory holds only `.{extension}` files"),
            ));
        }
    }
    files
}

/// Why a file under a source directory was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("missing: this file is required")]
    Missing,
    /// A symbolic link (somewhere on the path) that resolves outside the directory.
    #[error("a symbolic link to {}, outside the directory; only files inside it are read", .0.display())]
    Outside(PathBuf),
    /// A FIFO, device, socket or directory.
    #[error("not a regular file (a FIFO, device or directory); only regular files are read")]
    NotRegular,
    #[error("too large: {0} bytes, at most {MAX_FILE_BYTES}")]
    TooLarge(u64),
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
}

/// Reads `file`, which must resolve to a regular file inside `root` (a canonical path) and
/// hold at most [`MAX_FILE_BYTES`]. The type is checked on the opened file, not the path,
/// and opening never blocks (a FIFO with no writer would otherwise hang the compile).
pub fn read_regular_file(root: &Path, file: &Path) -> Result<Vec<u8>, ReadError> {
    let real = std::fs::canonicalize(file).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing,
        _ => ReadError::Io(error),
    })?;
    if !real.starts_with(root) {
        return Err(ReadError::Outside(real));
    }
    read_real_file(&real)
}

/// A directory inside the content root, opened once so that the files listed in it are
/// opened relative to this handle ([`read_listed_file`]). Resolving every component of every
/// path again cost a `readlink` each, a tenth of reading 100,000 pages; and a directory
/// replaced by a link while its files are read changes nothing, since the handle stays on
/// the directory that was checked.
struct ListedDir(std::fs::File);

impl ListedDir {
    /// `dir`, if it resolves inside `root` (canonical). `None` leaves each file to
    /// [`read_regular_file`]'s own check, which reports it.
    fn open(root: &Path, dir: &Path) -> Option<ListedDir> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

        let real = std::fs::canonicalize(dir).ok()?;
        if !real.starts_with(root) {
            return None;
        }
        let handle = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(&real)
            .ok()?;
        // The handle must be the directory that was resolved, not one swapped in between.
        let (opened, resolved) = (handle.metadata().ok()?, std::fs::metadata(&real).ok()?);
        let same = (opened.dev(), opened.ino()) == (resolved.dev(), resolved.ino())
            && std::fs::canonicalize(&real).ok()? == real;
        same.then_some(ListedDir(handle))
    }

    /// Opens `name` in this directory for reading, without following a link, and without
    /// blocking: a name swapped for a FIFO after the listing must not hold the load.
    fn open_file(&self, name: &std::ffi::OsStr) -> rustix::io::Result<rustix::fd::OwnedFd> {
        use rustix::fs::{Mode, OFlags};

        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
        rustix::fs::openat(&self.0, name, flags, Mode::empty())
    }

    /// Asks the kernel to start reading `files` (listed in this directory) into the page
    /// cache, so that the reads which follow wait for the disk together rather than one
    /// after another. When the first of them that opens and is not empty is cached already,
    /// most likely all are, and nothing more is asked: announcing each would cost three
    /// system calls for nothing. (Measured with every file cached and with every file, or
    /// every tenth, out of the cache; not with files leaving the cache in other patterns.)
    /// Advice only: a file that cannot be opened here is reported when it is read.
    #[cfg(target_os = "linux")]
    fn read_ahead(&self, files: &[PathBuf]) {
        use rustix::fs::Advice;
        use rustix::io::{Errno, ReadWriteFlags};

        let open = |file: &PathBuf| self.open_file(file.file_name()?).ok();
        for file in files {
            let Some(opened) = open(file) else { continue };
            let mut byte = [0u8; 1];
            let mut probe = [std::io::IoSliceMut::new(&mut byte)];
            match rustix::io::preadv2(&opened, &mut probe, 0, ReadWriteFlags::NOWAIT) {
                Ok(1) => return,
                // Not cached (or the kernel cannot say): announce them all.
                Err(Errno::AGAIN | Errno::OPNOTSUPP) => break,
                // Empty, or not a file to read: ask the next.
                Ok(_) | Err(_) => continue,
            }
        }
        for file in files {
            if let Some(opened) = open(file) {
                // No further than a page file may be read.
                let length = std::num::NonZeroU64::new(MAX_FILE_BYTES);
                let _ = rustix::fs::fadvise(&opened, 0, length, Advice::WillNeed);
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn read_ahead(&self, _files: &[PathBuf]) {}
}

/// [`read_regular_file`] for `file`, listed in `dir`: opened by name relative to the
/// directory's handle, without following a link. A file that is itself a symbolic link is
/// resolved and checked as usual.
///
/// With the bytes comes what the opened file said of itself before it was read, when it was
/// opened here (not through a link): the stamp of a first load is taken from it, which
/// saves looking the path up a second time.
fn read_listed_file(
    root: &Path,
    dir: &ListedDir,
    file: &Path,
) -> Result<(Vec<u8>, Option<std::fs::Metadata>), ReadError> {
    let Some(name) = file.file_name() else {
        return read_regular_file(root, file).map(|bytes| (bytes, None));
    };
    match dir.open_file(name) {
        Ok(opened) => read_opened(std::fs::File::from(opened))
            .map(|(bytes, metadata)| (bytes, Some(metadata))),
        // A link (Linux and macOS say ELOOP, the BSDs EMLINK).
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::MLINK) => {
            read_regular_file(root, file).map(|bytes| (bytes, None))
        }
        Err(rustix::io::Errno::NOENT) => Err(ReadError::Missing),
        Err(error) => Err(ReadError::Io(error.into())),
    }
}

/// Reads `real`, a path without symbolic links, if it names a regular file of at most
/// [`MAX_FILE_BYTES`].
fn read_real_file(real: &Path) -> Result<Vec<u8>, ReadError> {
    use std::os::unix::fs::OpenOptionsExt;

    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(real)
        .map_err(ReadError::Io)?;
    read_opened(opened).map(|(bytes, _)| bytes)
}

/// Reads `opened` if it is a regular file of at most [`MAX_FILE_BYTES`], with its metadata
/// from before the read.
fn read_opened(opened: std::fs::File) -> Result<(Vec<u8>, std::fs::Metadata), ReadError> {
    use std::io::Read;

    let metadata = opened.metadata().map_err(ReadError::Io)?;
    if !metadata.is_file() {
        return Err(ReadError::NotRegular);
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(metadata.len()));
    }
    // The file may grow between the check and the read; never read past the limit.
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    opened
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    Ok((bytes, metadata))
}

fn read_text(root: &Path, file: &Path, errors: &mut ContentErrors) -> Option<String> {
    text_or_report(file, read_regular_file(root, file), errors)
}

/// `read`'s bytes as UTF-8 text, or `None` after reporting why `file` gave none.
fn text_or_report(
    file: &Path,
    read: Result<Vec<u8>, ReadError>,
    errors: &mut ContentErrors,
) -> Option<String> {
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(error) => {
            errors.push(ContentError::whole_file(file, error.to_string()));
            return None;
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let line = 1 + error.as_bytes()[..offset]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            errors.push(ContentError::at_line(file, line, "not valid UTF-8"));
            None
        }
    }
}

/// Parses a JSON file into `T` and runs its field rules. `None` when it does not parse;
/// otherwise the value and whether it passed every rule (problems are already reported).
fn parse_json<T: DeserializeOwned>(
    file: &Path,
    text: &str,
    errors: &mut ContentErrors,
    check: fn(&T, &mut Problems),
) -> Option<(T, bool)> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|error| (field_name(&error.path().to_string()), error.into_inner()))
        .and_then(|value| {
            deserializer
                .end()
                .map(|()| value)
                .map_err(|error| ("-".to_string(), error))
        });
    match parsed {
        Ok(value) => {
            let mut problems = Problems::default();
            check(&value, &mut problems);
            let valid = problems.0.is_empty();
            report(file, &FieldLines::from_json(text), problems, errors);
            Some((value, valid))
        }
        Err((field, inner)) => {
            let message = without_location(&inner.to_string());
            errors.push(match missing_field(&field, &message) {
                Some((object, missing)) => ContentError::at(
                    file,
                    object.map_or(1, |object| FieldLines::from_json(text).line_of(&object)),
                    missing,
                    MISSING_FIELD,
                ),
                None => ContentError::at(file, inner.line(), field, message),
            });
            None
        }
    }
}

const MISSING_FIELD: &str = "missing: this field is required";

/// serde reports a missing field as "missing field `x`" at the end of the object that lacks
/// it, under the object's path: the object's path (`None` at the top) and the field's full
/// path, so the error names the field and points at the object.
fn missing_field(object: &str, message: &str) -> Option<(Option<String>, String)> {
    let name = message.strip_prefix("missing field `")?.strip_suffix('`')?;
    if object == "-" {
        return Some((None, name.to_string()));
    }
    Some((Some(object.to_string()), format!("{object}.{name}")))
}

/// Parses a page: front matter, field rules, and the body.
fn parse_page(file: &Path, text: &str, errors: &mut ContentErrors) -> Option<Page> {
    let split = match front_matter::split(text) {
        Ok(split) => split,
        Err(problem) => {
            errors.push(ContentError::at_line(file, problem.line, problem.message));
            return None;
        }
    };
    let lines = || FieldLines::from_toml(split.front_matter, split.front_matter_line);
    let parsed: Result<PageFrontMatter, _> = toml::de::Deserializer::parse(split.front_matter)
        .map_err(|e| (String::new(), e))
        .and_then(|deserializer| {
            serde_path_to_error::deserialize(deserializer)
                .map_err(|e| (e.path().to_string(), e.into_inner()))
        });
    let front = match parsed {
        Ok(front) => front,
        Err((path, error)) => {
            let line = error
                .span()
                .map(|span| {
                    split.front_matter_line
                        + split.front_matter[..span.start.min(split.front_matter.len())]
                            .matches('\n')
                            .count()
                })
                .unwrap_or(split.front_matter_line);
            let message = error.message().trim();
            errors.push(match missing_field(&field_name(&path), message) {
                Some((object, missing)) => ContentError::at(
                    file,
                    object.map_or(split.front_matter_line, |object| lines().line_of(&object)),
                    missing,
                    MISSING_FIELD,
                ),
                None => ContentError::at(file, line, field_name(&path), message),
            });
            return None;
        }
    };
    let mut problems = Problems::default();
    front.check(&mut problems);
    let slug = front.slug.clone().unwrap_or_else(|| {
        file.file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    if front.slug.is_none() {
        let mut slug_problems = Problems::default();
        rules::slug(&mut slug_problems, "slug", &slug);
        if !slug_problems.0.is_empty() {
            problems.add(
                "slug",
                format!("the file name `{slug}` is not a usable slug; rename the file or set `slug` in the front matter"),
            );
        }
    }
    if split.body.trim().is_empty() {
        problems.add("body", "empty: the page has no text after its front matter");
    }
    let mut body_problem_line = split.body_line;
    if let Some((offset, depth)) = deepest_nesting(split.body) {
        body_problem_line = split.body_line + offset;
        problems.add(
            "body",
            format!(
                "nested {depth} levels deep (block quotes and lists); at most {MAX_NESTING} are allowed, since deeper nesting makes rendering slow"
            ),
        );
    }
    if !problems.0.is_empty() {
        let body_line = body_problem_line;
        let lines = lines();
        let lines_for_body = |field: &str| {
            if field == "body" {
                body_line
            } else {
                lines.line_of(field)
            }
        };
        for (field, message) in problems.0 {
            errors.push(ContentError::at(
                file,
                lines_for_body(&field),
                field,
                message,
            ));
        }
        return None;
    }
    let page = Page {
        slug,
        title: front.title,
        summary: front.summary,
        division: front.division,
        updated: front.updated,
        contact: front.contact.map(Box::new),
        body_markdown: split.body.trim_start_matches(['\n', '\r']).into(),
        order: front.order,
    };
    Some(page)
}

/// Deepest nesting of block quotes and lists a page may use. Real pages stay under ten;
/// the Markdown parser's time grows with the square of the depth, so one line of 100,000
/// `> ` would stall every reload for seconds.
pub const MAX_NESTING: usize = 32;

/// The first line (0-based within `body`) whose container markers (`>`, `-`, `*`, `+`,
/// `1.`, `1)`) nest deeper than [`MAX_NESTING`], with its depth.
fn deepest_nesting(body: &str) -> Option<(usize, usize)> {
    body.lines().enumerate().find_map(|(index, line)| {
        let depth = nesting_depth(line);
        (depth > MAX_NESTING).then_some((index, depth))
    })
}

fn nesting_depth(line: &str) -> usize {
    let bytes = line.as_bytes();
    // `* * * *` and `- - - -` alone on a line are a thematic break, not nested lists.
    // Checked without collecting the marks: this runs for every line of every page.
    let mut marks = bytes.iter().filter(|b| !b" \t".contains(b));
    if let Some(first) = marks.next().filter(|first| b"-*_".contains(first)) {
        let mut count = 1;
        if marks.all(|mark| {
            count += 1;
            mark == first
        }) && count >= 3
        {
            return 0;
        }
    }
    let mut depth = 0;
    let mut at = 0;
    let ends_marker = |at: usize| at >= bytes.len() || bytes[at] == b' ' || bytes[at] == b'\t';
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' => at += 1,
            b'>' => {
                depth += 1;
                at += 1;
            }
            b'-' | b'*' | b'+' if ends_marker(at + 1) => {
                depth += 1;
                at += 1;
            }
            b'0'..=b'9' => {
                let digits = bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                let after = at + digits;
                if digits <= 9
                    && after < bytes.len()
                    && (bytes[after] == b'.' || bytes[after] == b')')
                    && ends_marker(after + 1)
                {
                    depth += 1;
                    at = after + 1;
                } else {
                    break;
                }
            }
            _ => break,
        }
    }
    depth
}

fn report(file: &Path, lines: &FieldLines, problems: Problems, errors: &mut ContentErrors) {
    for (field, message) in problems.0 {
        errors.push(ContentError::at(
            file,
            lines.line_of(&field),
            field,
            message,
        ));
    }
}

/// serde_path_to_error prints the root as `.` (and an unknown position as `?`); content
/// errors use `-` for "no field".
fn field_name(path: &str) -> String {
    if path.is_empty() || path == "." || path == "?" {
        "-".to_string()
    } else {
        path.to_string()
    }
}

/// serde_json appends " at line L column C"; the line is reported separately.
fn without_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::nesting_depth;

    /// Announcing files ahead never blocks or fails on names that are not regular files to
    /// read (the load reports those when it reads them): a FIFO with no writer, a missing
    /// name, a link out of the directory, an empty file, a directory.
    #[test]
    fn read_ahead_passes_over_what_is_not_a_page_file() {
        let temporary = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temporary.path()).unwrap();
        let pages = root.join("pages");
        std::fs::create_dir(&pages).unwrap();
        let fifo = std::ffi::CString::new(pages.join("a.md").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        std::os::unix::fs::symlink("/etc/passwd", pages.join("c.md")).unwrap();
        std::fs::write(pages.join("d.md"), "").unwrap();
        std::fs::create_dir(pages.join("e.md")).unwrap();
        std::fs::write(pages.join("f.md"), "+++\ntitle = \"F\"\n+++\nf\n").unwrap();
        let dir = super::ListedDir::open(&root, &pages).expect("the pages directory");
        let files: Vec<std::path::PathBuf> = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"]
            .iter()
            .map(|name| pages.join(name))
            .collect();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            dir.read_ahead(&files);
            let _ = done.send(());
        });
        assert!(
            finished
                .recv_timeout(std::time::Duration::from_secs(10))
                .is_ok(),
            "read_ahead blocked"
        );
    }

    #[test]
    fn nesting_counts_markers_but_not_thematic_breaks() {
        for (line, depth) in [
            ("plain text", 0),
            ("> > > quoted", 3),
            ("- - item", 2),
            ("  1. 2) item", 2),
            // Three or more of one mark alone on a line are a thematic break.
            ("* * * *", 0),
            ("- - -", 0),
            ("___", 0),
            ("- -", 2),
            ("- * -", 3),
            ("- - - x", 3),
        ] {
            assert_eq!(nesting_depth(line), depth, "{line:?}");
        }
    }
}
