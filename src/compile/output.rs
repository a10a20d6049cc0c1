//! `build/`: the artifact set on disk, and back.
//!
//! Each artifact is a file at its URL path, its compressed variants beside it (`.gz`, `.br`),
//! and `manifest.json` maps every path to its files, content type, ETags and extra headers,
//! so a CDN uploader or `dossier serve --from build` can reproduce the exact responses.
//!
//! Writing is all or nothing: the tree is written to a temporary sibling directory and
//! renamed into place, so `build/` is always either the old complete build or the new one.

use std::collections::HashSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};

use super::artifact::{strong_etag, Artifact, ArtifactSet, Encoding, Representation, Variants};
pub use super::manifest::{EncodedFile, Manifest, ManifestEntry};
use crate::config::BaseUrl;
use crate::content::Site;

pub const MANIFEST_FILE: &str = "manifest.json";
pub const MODEL_FILE: &str = "_model.json";
const MANIFEST_FORMAT: u32 = 1;

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
fn file_for(path: &str, directories: &HashSet<&str>, content_type: &str) -> String {
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

/// Paths that are a directory prefix of some other path.
fn directory_paths(set: &ArtifactSet) -> HashSet<&str> {
    let mut directories = HashSet::new();
    for artifact in set.sorted() {
        let mut path = artifact.path.as_str();
        while let Some(cut) = path.rfind('/') {
            path = &path[..cut];
            if path.is_empty() {
                break;
            }
            directories.insert(path);
        }
    }
    directories
        .into_iter()
        .filter_map(|dir| set.get(dir).map(|a| a.path.as_str()))
        .collect()
}

pub fn manifest_of(set: &ArtifactSet, base_url: &BaseUrl) -> Manifest {
    let directories = directory_paths(set);
    let artifacts = set
        .sorted()
        .into_iter()
        .map(|artifact| {
            let content_type = artifact.content_type.to_str().unwrap_or_default();
            let file = file_for(&artifact.path, &directories, content_type);
            let encodings = artifact
                .encoded
                .iter()
                .map(|(encoding, representation)| {
                    (
                        encoding.token().to_string(),
                        EncodedFile {
                            file: format!("{file}{}", encoding.file_suffix()),
                            etag: header_text(&representation.etag),
                        },
                    )
                })
                .collect();
            let headers = artifact
                .headers
                .iter()
                .map(|(name, value)| (name.as_str().to_string(), header_text(value)))
                .collect();
            (
                artifact.path.clone(),
                ManifestEntry {
                    file,
                    content_type: content_type.to_string(),
                    etag: header_text(&artifact.identity.etag),
                    cache_control: header_text(&artifact.cache_control),
                    encodings,
                    headers,
                    vary: header_text(&artifact.vary),
                    markdown: artifact.markdown.clone(),
                },
            )
        })
        .collect();
    Manifest {
        format: MANIFEST_FORMAT,
        generator: format!("dossier {}", env!("CARGO_PKG_VERSION")),
        base_url: base_url.clone(),
        revision: set.revision().to_string(),
        artifacts,
        model: None,
    }
}

fn header_text(value: &HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// The DNS-AID records for the operator's zone (not a served file: DNS is not HTTP).
pub const DNS_RECORDS_FILE: &str = "dns-records.txt";

/// Writes `set` to `out` atomically, with the CDN files (`_headers`, `_redirects`,
/// `_routes.json`, `_worker.js`) and `dns-records.txt`; `origin` is where the dynamic core
/// runs behind a CDN.
pub fn write_build(
    set: &ArtifactSet,
    model: &Site,
    base_url: &BaseUrl,
    origin: Option<&BaseUrl>,
    out: &Path,
) -> Result<(), OutputError> {
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
    let result = write_tree(set, model, base_url, origin, &staging)
        .and_then(|()| swap_into_place(&staging, out));
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

fn write_tree(
    set: &ArtifactSet,
    model: &Site,
    base_url: &BaseUrl,
    origin: Option<&BaseUrl>,
    dir: &Path,
) -> Result<(), OutputError> {
    let mut manifest = manifest_of(set, base_url);
    let model_bytes = serde_json::to_vec(model).map_err(|e| OutputError::Manifest {
        path: dir.join(MODEL_FILE),
        reason: e.to_string(),
    })?;
    write_file(dir, MODEL_FILE, &model_bytes)?;
    manifest.model = Some(EncodedFile {
        file: MODEL_FILE.into(),
        etag: header_text(&strong_etag(&model_bytes)),
    });
    write_file(
        dir,
        "_headers",
        super::cdn::headers_file(&manifest).as_bytes(),
    )?;
    write_file(
        dir,
        "_redirects",
        super::cdn::redirects_file(&manifest, origin).as_bytes(),
    )?;
    write_file(
        dir,
        "_routes.json",
        super::cdn::routes_file(&manifest, origin).as_bytes(),
    )?;
    write_file(
        dir,
        DNS_RECORDS_FILE,
        super::dns::records(base_url).as_bytes(),
    )?;
    write_file(
        dir,
        "_worker.js",
        super::cdn::worker_file(&manifest, origin).as_bytes(),
    )?;
    for artifact in set.sorted() {
        let entry = &manifest.artifacts[&artifact.path];
        write_file(dir, &entry.file, &artifact.identity.body)?;
        for (encoding, representation) in artifact.encoded.iter() {
            if let Some(encoded) = entry.encodings.get(encoding.token()) {
                write_file(dir, &encoded.file, &representation.body)?;
            }
        }
    }
    let mut text = serde_json::to_vec_pretty(&manifest).map_err(|e| OutputError::Manifest {
        path: dir.join(MANIFEST_FILE),
        reason: e.to_string(),
    })?;
    text.push(b'\n');
    write_file(dir, MANIFEST_FILE, &text)
}

fn write_file(dir: &Path, relative: &str, bytes: &[u8]) -> Result<(), OutputError> {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    fs::write(&path, bytes).map_err(io_error(&path))
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
            cache_control: header(&entry.cache_control)?,
            identity,
            // A build written without --precompress lists no variants: make them later.
            compression_tried: !encoded.is_empty(),
            encoded,
            headers,
            vary: header(&entry.vary)?,
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
