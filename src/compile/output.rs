//! `build/`: the artifact set on disk, and back.
//!
//! Each artifact is a file at its URL path, its compressed variants beside it (`.gz`, `.br`),
//! and `manifest.json` maps every path to its files, content type, ETags and extra headers,
//! so a CDN uploader or `dossier serve --from build` can reproduce the exact responses.
//!
//! Writing is all or nothing: the tree is written to a temporary sibling directory and
//! renamed into place, so `build/` is always either the old complete build or the new one.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};

use xxhash_rust::xxh3::Xxh3;

use super::artifact::{
    etag_of_digest, revision_of_entries, strong_etag, Artifact, ArtifactSet, CachePolicy, Encoding,
    Etag, Representation, Variants, Vary,
};
pub use super::manifest::{EncodedFile, Manifest, ManifestEntry};
use crate::config::BaseUrl;
use crate::content::Site;

pub const MANIFEST_FILE: &str = "manifest.json";
pub const MODEL_FILE: &str = "_model.json";
/// 2 since the revision combines each path's hash by XOR (format 1 hashed them in order); 3
/// since ETags and the revision are XXH3-128 (format 2 used SHA-256).
const MANIFEST_FORMAT: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {reason}", path.display())]
    Manifest { path: PathBuf, reason: String },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where an artifact lives inside `build/`. A path that is also the parent of another
/// path (`/` for everything, `/.well-known/oauth-protected-resource` for its `/mcp`
/// sibling) cannot be a file, so it becomes `index.<ext>` inside that directory.
///
/// HTML pages are stored as `<path>.html`: every static host serves `/about` from
/// `about.html` with the right type, so pages need no per-path header rules however many
/// there are.
fn file_for(path: &str, directories: &HashSet<String>, content_type: &str) -> String {
    let relative = path.trim_start_matches('/');
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    if relative.is_empty() || directories.contains(path) {
        let extension = match essence {
            "text/markdown" => "md",
            "text/html" => "html",
            "text/plain" => "txt",
            _ => "json",
        };
        if relative.is_empty() {
            format!("index.{extension}")
        } else {
            format!("{relative}/index.{extension}")
        }
    } else if essence == "text/html" && !relative.ends_with(".html") {
        format!("{relative}.html")
    } else {
        relative.to_string()
    }
}

/// The entry of one artifact in `manifest.json`, stored as `file`.
fn manifest_entry(artifact: &Artifact, file: String) -> ManifestEntry {
    let encodings = artifact
        .encoded
        .iter()
        .map(|(encoding, representation)| {
            (
                encoding.token().to_string(),
                EncodedFile {
                    file: format!("{file}{}", encoding.file_suffix()),
                    etag: representation.etag.to_string(),
                },
            )
        })
        .collect();
    let headers = artifact
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_string(), header_text(value)))
        .collect();
    ManifestEntry {
        file,
        content_type: header_text(&artifact.content_type),
        etag: artifact.identity.etag.to_string(),
        cache_control: artifact.cache.text().to_string(),
        encodings,
        headers,
        vary: artifact.vary.text().to_string(),
        markdown: artifact.markdown.clone(),
    }
}

fn header_text(value: &HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// The DNS-AID records for the operator's zone (not a served file: DNS is not HTTP).
pub const DNS_RECORDS_FILE: &str = "dns-records.txt";

/// What a finished build holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// Every path served, in order.
    pub paths: std::collections::BTreeSet<String>,
    pub revision: String,
}

/// Why `dossier build` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Compile(#[from] super::CompileError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Compiles `input` into `out` (see [`write_build`]) a batch at a time: the bodies of one
/// batch are in memory at once, not the site's.
pub fn build(
    input: &super::CompileInput<'_>,
    origin: Option<&BaseUrl>,
    out: &Path,
) -> Result<Built, BuildError> {
    build_in_batches_of(input, super::PAGES_PER_BATCH, origin, out)
}

fn build_in_batches_of(
    input: &super::CompileInput<'_>,
    pages_per_batch: usize,
    origin: Option<&BaseUrl>,
    out: &Path,
) -> Result<Built, BuildError> {
    let mut writer = BuildWriter::begin(out)?;
    super::compile_in_batches(input, pages_per_batch, |batch| {
        let batch: Vec<&Artifact> = batch.iter().map(|artifact| artifact.as_ref()).collect();
        writer.write(&batch).map_err(BuildError::from)
    })?;
    Ok(writer.finish(input.site, &input.config.base_url, origin)?)
}

/// Writes `set` to `out` atomically, with the CDN files (`_headers`, `_redirects`,
/// `_routes.json`, `_worker.js`) and `dns-records.txt`; `origin` is where the dynamic core
/// runs behind a CDN.
pub fn write_build(
    set: &ArtifactSet,
    model: &Site,
    base_url: &BaseUrl,
    origin: Option<&BaseUrl>,
    out: &Path,
) -> Result<Built, OutputError> {
    let mut writer = BuildWriter::begin(out)?;
    let artifacts: Vec<&Artifact> = set.sorted().into_iter().map(|a| a.as_ref()).collect();
    writer.write(&artifacts)?;
    writer.finish(model, base_url, origin)
}

/// `build/` written a batch of artifacts at a time, into a temporary sibling directory that
/// [`BuildWriter::finish`] renames into place (dropped unfinished, it removes it). Only what
/// `manifest.json` needs is kept between batches, never a body: `dossier build` of 100,000
/// pages holds one batch of bodies (see `compile::compile_in_batches`).
pub struct BuildWriter {
    out: PathBuf,
    staging: PathBuf,
    artifacts: BTreeMap<String, ManifestEntry>,
    /// Every path that is a proper prefix of a path written: such a path is stored as
    /// `index.<ext>` inside its directory.
    prefixes: HashSet<String>,
    /// Directories made so far, so that each is made once, not once per file.
    made: HashSet<PathBuf>,
    finished: bool,
}

impl BuildWriter {
    pub fn begin(out: &Path) -> Result<BuildWriter, OutputError> {
        let parent = match out.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(io_error(&parent))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "build".into());
        let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(io_error(&staging))?;
        }
        fs::create_dir(&staging).map_err(io_error(&staging))?;
        Ok(BuildWriter {
            out: out.to_path_buf(),
            made: HashSet::from([staging.clone()]),
            staging,
            artifacts: BTreeMap::new(),
            prefixes: HashSet::new(),
            finished: false,
        })
    }

    /// Writes `batch`'s files. A path that is the prefix of another (`/a` of `/a/b`) is
    /// stored as `a/index.<ext>`, which the writer knows only once it has seen `/a/b`: a
    /// path made a prefix by a later batch has already been written under the wrong name,
    /// and this says so rather than write a build that serves nothing there. Today's paths
    /// never do that: a slug has no `/`, so no page path is a prefix, and the only prefixes
    /// (`/`, `/.well-known/oauth-protected-resource`) come with the site's documents.
    pub fn write(&mut self, batch: &[&Artifact]) -> Result<(), OutputError> {
        for artifact in batch {
            let mut path = artifact.path.as_str();
            while let Some(cut) = path.rfind('/') {
                path = &path[..cut];
                if path.is_empty() || !self.prefixes.insert(path.to_string()) {
                    break;
                }
                if self.artifacts.get(path).is_some_and(|entry| {
                    entry.file != file_for(path, &self.prefixes, &entry.content_type)
                }) {
                    return Err(OutputError::Manifest {
                        path: self.out.clone(),
                        reason: format!(
                            "{path} was written as a file before {} made it a directory (a bug in dossier's batching: please report it)",
                            artifact.path
                        ),
                    });
                }
            }
        }
        for artifact in batch {
            let content_type = artifact.content_type.to_str().unwrap_or_default();
            let file = file_for(&artifact.path, &self.prefixes, content_type);
            let entry = manifest_entry(artifact, file);
            self.write_file(&entry.file, &artifact.identity.body)?;
            for (encoding, representation) in artifact.encoded.iter() {
                if let Some(encoded) = entry.encodings.get(encoding.token()) {
                    self.write_file(&encoded.file, &representation.body)?;
                }
            }
            self.artifacts.insert(artifact.path.clone(), entry);
        }
        Ok(())
    }

    /// Writes the model, the CDN files and `manifest.json`, and moves the build into place.
    pub fn finish(
        mut self,
        model: &Site,
        base_url: &BaseUrl,
        origin: Option<&BaseUrl>,
    ) -> Result<Built, OutputError> {
        let revision = revision_of_entries(
            self.artifacts
                .iter()
                .map(|(path, entry)| (path.as_str(), entry.etag.as_bytes())),
        );
        let mut manifest = Manifest {
            format: MANIFEST_FORMAT,
            generator: format!("dossier {}", env!("CARGO_PKG_VERSION")),
            base_url: base_url.clone(),
            revision: revision.clone(),
            artifacts: std::mem::take(&mut self.artifacts),
            model: None,
        };
        let dir = self.staging.clone();
        let model_etag = write_json(&dir.join(MODEL_FILE), model, false)?;
        manifest.model = Some(EncodedFile {
            file: MODEL_FILE.into(),
            etag: model_etag.to_string(),
        });
        for (name, text) in [
            ("_headers", super::cdn::headers_file(&manifest)),
            ("_redirects", super::cdn::redirects_file(&manifest, origin)),
            ("_routes.json", super::cdn::routes_file(&manifest, origin)),
            (DNS_RECORDS_FILE, super::dns::records(base_url)),
            ("_worker.js", super::cdn::worker_file(&manifest, origin)),
        ] {
            self.write_file(name, text.as_bytes())?;
        }
        write_json(&dir.join(MANIFEST_FILE), &manifest, true)?;
        swap_into_place(&self.staging, &self.out)?;
        self.finished = true;
        Ok(Built {
            paths: manifest.artifacts.into_keys().collect(),
            revision,
        })
    }

    fn write_file(&mut self, relative: &str, bytes: &[u8]) -> Result<(), OutputError> {
        let path = self.staging.join(relative);
        if let Some(parent) = path.parent() {
            if !self.made.contains(parent) {
                fs::create_dir_all(parent).map_err(io_error(parent))?;
                self.made.insert(parent.to_path_buf());
            }
        }
        fs::write(&path, bytes).map_err(io_error(&path))
    }
}

impl Drop for BuildWriter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// `value` as JSON in `path` (ending with a newline when `pretty`), written as it is
/// serialized rather than held whole; the strong ETag of the bytes written.
fn write_json<T: serde::Serialize>(
    path: &Path,
    value: &T,
    pretty: bool,
) -> Result<Etag, OutputError> {
    let file = fs::File::create(path).map_err(io_error(path))?;
    let mut writer = EtagWriter {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        hasher: Xxh3::new(),
    };
    let written = if pretty {
        serde_json::to_writer_pretty(&mut writer, value)
            .map_err(std::io::Error::from)
            .and_then(|()| writer.write_all(b"\n"))
    } else {
        serde_json::to_writer(&mut writer, value).map_err(std::io::Error::from)
    };
    written
        .and_then(|()| writer.inner.flush())
        .map_err(io_error(path))?;
    Ok(etag_of_digest(writer.hasher.digest128()))
}

/// A writer that hashes what passes through it, for the ETag of a file written in pieces.
struct EtagWriter<W> {
    inner: W,
    hasher: Xxh3,
}

impl<W: Write> Write for EtagWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Replaces `out` with `staging`. The old tree is moved aside first and removed only after
/// the new one is in place, so an interruption leaves one complete build at `out` or beside it.
fn swap_into_place(staging: &Path, out: &Path) -> Result<(), OutputError> {
    if out.exists() {
        if !out.join(MANIFEST_FILE).exists()
            && fs::read_dir(out).map_err(io_error(out))?.next().is_some()
        {
            return Err(OutputError::Manifest {
                path: out.to_path_buf(),
                reason: "exists, is not empty and holds no manifest.json; refusing to replace a directory dossier did not write".into(),
            });
        }
        let old = staging.with_extension("old");
        if old.exists() {
            fs::remove_dir_all(&old).map_err(io_error(&old))?;
        }
        fs::rename(out, &old).map_err(io_error(out))?;
        fs::rename(staging, out).map_err(io_error(out))?;
        fs::remove_dir_all(&old).map_err(io_error(&old))?;
    } else {
        fs::rename(staging, out).map_err(io_error(out))?;
    }
    Ok(())
}

/// Reads a `build/` written by [`write_build`] back into an artifact set, checking every
/// file against the ETag the manifest records for it.
pub fn read_build(dir: &Path) -> Result<(ArtifactSet, BaseUrl), OutputError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest_error = |reason: String| OutputError::Manifest {
        path: manifest_path.clone(),
        reason,
    };
    let text = fs::read(&manifest_path).map_err(io_error(&manifest_path))?;
    let manifest: Manifest =
        serde_json::from_slice(&text).map_err(|e| manifest_error(e.to_string()))?;
    if manifest.format != MANIFEST_FORMAT {
        return Err(manifest_error(format!(
            "format {} is not supported (expected {MANIFEST_FORMAT}); rebuild with this dossier",
            manifest.format
        )));
    }
    let mut artifacts = Vec::with_capacity(manifest.artifacts.len());
    for (path, entry) in &manifest.artifacts {
        let entry_error = |reason: String| manifest_error(format!("{path}: {reason}"));
        if !path.starts_with('/') {
            return Err(entry_error("path must start with /".into()));
        }
        let identity = read_representation(dir, &entry.file, &entry.etag).map_err(entry_error)?;
        let mut encoded = Variants::default();
        for (token, file) in &entry.encodings {
            let encoding = Encoding::from_token(token)
                .ok_or_else(|| entry_error(format!("unknown encoding `{token}`")))?;
            encoded.insert(
                encoding,
                read_representation(dir, &file.file, &file.etag).map_err(entry_error)?,
            );
        }
        let header = |text: &str| {
            HeaderValue::from_str(text)
                .map_err(|_| entry_error(format!("invalid header value `{text}`")))
        };
        let mut headers = Vec::new();
        for (name, value) in &entry.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| entry_error(format!("invalid header name `{name}`")))?;
            headers.push((name, header(value)?));
        }
        artifacts.push(Artifact {
            path: path.clone(),
            content_type: header(&entry.content_type)?,
            cache: CachePolicy::from_text(&entry.cache_control).ok_or_else(|| {
                entry_error(format!(
                    "unknown Cache-Control `{}`; rebuild with this dossier",
                    entry.cache_control
                ))
            })?,
            identity,
            // A build written without --precompress lists no variants: make them later.
            compression_tried: !encoded.is_empty(),
            encoded,
            headers,
            vary: Vary::from_text(&entry.vary).ok_or_else(|| {
                entry_error(format!(
                    "unknown Vary `{}`; rebuild with this dossier",
                    entry.vary
                ))
            })?,
            markdown: entry.markdown.clone(),
        });
    }
    let set = ArtifactSet::new(artifacts);
    if set.revision() != manifest.revision {
        return Err(manifest_error(format!(
            "revision {} does not match the files (computed {})",
            manifest.revision,
            set.revision()
        )));
    }
    Ok((set, manifest.base_url))
}

/// The site model a build carries, checked against its ETag; `None` for a build made
/// before builds carried it.
pub fn read_model(dir: &Path) -> Result<Option<Bytes>, OutputError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = fs::read(&manifest_path).map_err(io_error(&manifest_path))?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| OutputError::Manifest {
        path: manifest_path.clone(),
        reason: e.to_string(),
    })?;
    manifest
        .model
        .map(|model| {
            read_representation(dir, &model.file, &model.etag)
                .map(|representation| representation.body)
                .map_err(|reason| OutputError::Manifest {
                    path: manifest_path.clone(),
                    reason,
                })
        })
        .transpose()
}

fn read_representation(dir: &Path, file: &str, etag: &str) -> Result<Representation, String> {
    let relative = Path::new(file);
    if file.is_empty()
        || !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(format!("file `{file}` is not a plain relative path"));
    }
    let bytes = fs::read(dir.join(relative)).map_err(|e| format!("{file}: {e}"))?;
    let actual = strong_etag(&bytes);
    if actual.as_bytes() != etag.as_bytes() {
        return Err(format!(
            "{file}: content does not match its ETag {etag}; the build was modified or is incomplete"
        ));
    }
    Ok(Representation {
        body: Bytes::from(bytes),
        etag: actual,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{compile, CompileInput};
    use crate::config::{AuthPolicy, Compression, Limits, SiteConfig};

    fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(next) = pending.pop() {
            for entry in fs::read_dir(&next).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    let relative = path.strip_prefix(dir).unwrap().to_path_buf();
                    files.insert(relative, fs::read(&path).unwrap());
                }
            }
        }
        files
    }

    /// A path that is a prefix of another is stored as `<path>/index.<ext>`: fine when the
    /// longer path comes first or in the same batch, refused (not written wrong) when it
    /// comes in a later batch.
    #[test]
    fn a_path_made_a_directory_by_a_later_batch_is_refused() {
        use crate::compile::CachePolicy;
        let scratch = std::env::temp_dir().join(format!("dossier-prefix-{}", std::process::id()));
        let site =
            crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content")).unwrap();
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let doc = |path: &str| Artifact::new(path, "text/plain", CachePolicy::Content, "x");
        let (a, ab) = (doc("/a"), doc("/a/b"));
        for (name, batches, ok) in [
            ("together", vec![vec![&a, &ab]], true),
            ("longer first", vec![vec![&ab], vec![&a]], true),
            ("prefix first", vec![vec![&a], vec![&ab]], false),
        ] {
            let out = scratch.join(name);
            let mut writer = BuildWriter::begin(&out).unwrap();
            let written: Result<(), OutputError> =
                batches.iter().try_for_each(|batch| writer.write(batch));
            match &written {
                Ok(()) => assert!(ok, "{name}"),
                Err(error) => assert!(
                    !ok && error
                        .to_string()
                        .contains("/a was written as a file before /a/b made it a directory"),
                    "{name}: {error}"
                ),
            }
            if ok {
                writer.finish(&site, &base, None).unwrap();
                assert_eq!(
                    fs::read_to_string(out.join("a/index.txt")).unwrap(),
                    "x",
                    "{name}"
                );
                assert_eq!(fs::read_to_string(out.join("a/b")).unwrap(), "x", "{name}");
            } else {
                drop(writer);
                let left: Vec<_> = fs::read_dir(&scratch)
                    .unwrap()
                    .flatten()
                    .filter(|entry| entry.file_name().to_string_lossy().contains(name))
                    .collect();
                assert!(left.is_empty(), "{name}: nothing is left behind");
            }
        }
        let _ = fs::remove_dir_all(&scratch);
    }

    /// A build read back serves what was written (cache policy and `Vary` included); a
    /// manifest edited to another `Cache-Control` or `Vary` is refused, naming the entry, and
    /// one of another format asks for a rebuild.
    #[test]
    fn a_manifest_of_another_format_or_with_headers_this_dossier_never_writes_is_refused() {
        let site =
            crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content")).unwrap();
        let config = SiteConfig {
            limits: Limits::default(),
            base_url: BaseUrl::parse("https://info.example.com").unwrap(),
            auth: AuthPolicy::default(),
            templates: None,
            compression: Compression::Deferred,
        };
        let input = CompileInput {
            site: &site,
            config: &config,
            jwks: &[],
            previous: None,
        };
        let set = compile(&input).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_build(&set, &site, &config.base_url, None, dir.path()).unwrap();
        let (read, _) = read_build(dir.path()).unwrap();
        for artifact in set.sorted() {
            let back = read.get(&artifact.path).unwrap();
            assert_eq!(
                (back.cache, back.vary, &back.identity.etag),
                (artifact.cache, artifact.vary, &artifact.identity.etag),
                "{}",
                artifact.path
            );
        }
        let manifest_path = dir.path().join(MANIFEST_FILE);
        let original = fs::read_to_string(&manifest_path).unwrap();
        for (field, value) in [("cache_control", "no-store"), ("vary", "Origin")] {
            let mut manifest: serde_json::Value = serde_json::from_str(&original).unwrap();
            manifest["artifacts"]["/api/company"][field] = value.into();
            fs::write(&manifest_path, manifest.to_string()).unwrap();
            let Err(refused) = read_build(dir.path()) else {
                panic!("a manifest with {field} `{value}` was read");
            };
            let refused = refused.to_string();
            assert!(
                refused.contains("/api/company") && refused.contains(value),
                "{refused}"
            );
        }
        // A build of the format before (SHA-256 ETags) asks to be rebuilt rather than
        // failing on its first file's ETag.
        let mut manifest: serde_json::Value = serde_json::from_str(&original).unwrap();
        manifest["format"] = 2.into();
        fs::write(&manifest_path, manifest.to_string()).unwrap();
        let Err(refused) = read_build(dir.path()) else {
            panic!("a manifest of format 2 was read");
        };
        assert!(
            refused.to_string().contains("format 2 is not supported")
                && refused.to_string().contains("rebuild with this dossier"),
            "{refused}"
        );
    }

    /// `dossier build` writes batch by batch; the tree must be the one a whole set makes,
    /// file for file and byte for byte, also when a batch is a single page, and with
    /// compressed variants.
    #[test]
    fn a_build_written_in_batches_is_the_build_of_the_whole_set() {
        let site =
            crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content")).unwrap();
        assert!(site.pages.len() > 2, "the sample needs several pages");
        let scratch = std::env::temp_dir().join(format!("dossier-batches-{}", std::process::id()));
        for compression in [Compression::Deferred, Compression::WhileCompiling] {
            let config = SiteConfig {
                limits: Limits::default(),
                base_url: BaseUrl::parse("https://info.example.com").unwrap(),
                auth: AuthPolicy::default(),
                templates: None,
                compression,
            };
            let input = CompileInput {
                site: &site,
                config: &config,
                jwks: &[],
                previous: None,
            };
            let whole = scratch.join("whole");
            let set = compile(&input).unwrap();
            let written = write_build(&set, &site, &config.base_url, None, &whole).unwrap();
            assert_eq!(written.revision, set.revision());
            for per_batch in [1, 2, 4096] {
                let batched = scratch.join(format!("batched-{per_batch}"));
                let built = build_in_batches_of(&input, per_batch, None, &batched).unwrap();
                assert_eq!(built, written);
                assert!(
                    tree(&batched) == tree(&whole),
                    "batches of {per_batch} differ"
                );
                let (read, _) = read_build(&batched).unwrap();
                assert_eq!(read.revision(), set.revision());
            }
        }
        fs::remove_dir_all(&scratch).unwrap();
    }
}
