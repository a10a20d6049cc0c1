//! TLS on the public listener: rustls (no OpenSSL), the certificate chain and key read from
//! PEM files, and ALPN offering HTTP/2 and HTTP/1.1.
//!
//! Certificates are renewed in place (certbot, an ACME client, a mounted Kubernetes
//! secret), so the files are checked for changes every [`RECHECK`] and a new pair is used
//! for every handshake after it loads. A pair that fails to load (half-written, or a key
//! that does not match the certificate) is reported and the last good one keeps serving,
//! like content.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// How often the certificate and key files are looked at for changes.
pub const RECHECK: Duration = Duration::from_secs(2);

/// The protocols offered by ALPN, preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// The certificate chain and private key files given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Why a certificate and key could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", file.display())]
pub struct TlsError {
    pub file: PathBuf,
    pub reason: String,
}

impl TlsError {
    fn new(file: &Path, reason: impl std::fmt::Display) -> TlsError {
        TlsError {
            file: file.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// When each file last changed, and its size: what a renewal changes.
type Stamp = [(Option<SystemTime>, u64); 2];

fn stamp(files: &TlsFiles) -> Stamp {
    [&files.cert, &files.key].map(|path| {
        std::fs::metadata(path)
            .map(|meta| (meta.modified().ok(), meta.len()))
            .unwrap_or((None, 0))
    })
}

impl TlsFiles {
    /// Reads and checks the pair: at least one certificate, a private key rustls can sign
    /// with, and the key belonging to the first certificate.
    pub fn load(&self) -> Result<CertifiedKey, TlsError> {
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| TlsError::new(&self.cert, pem_problem(&e)))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsError::new(&self.cert, pem_problem(&e)))?;
        if chain.is_empty() {
            return Err(TlsError::new(
                &self.cert,
                "no PEM certificate (-----BEGIN CERTIFICATE-----) in the file",
            ));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| {
            TlsError::new(
                &self.key,
                format!("no usable PEM private key ({})", pem_problem(&e)),
            )
        })?;
        let provider = rustls::crypto::ring::default_provider();
        CertifiedKey::from_der(chain, key, &provider).map_err(|e| {
            TlsError::new(
                &self.key,
                format!("does not fit {}: {e}", self.cert.display()),
            )
        })
    }
}

/// A PEM error in words (the library's own text lists the marker as raw bytes).
fn pem_problem(error: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match error {
        Error::MissingSectionEnd { .. } => "a PEM section has no END line".into(),
        Error::NoItemsFound => "no PRIVATE KEY section".into(),
        other => other.to_string(),
    }
}

/// Hands every handshake the pair loaded last.
#[derive(Debug)]
struct CurrentCertificate(ArcSwap<CertifiedKey>);

impl ResolvesServerCert for CurrentCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.load_full())
    }
}

/// The TLS side of the listener: an acceptor whose certificate follows the files.
pub struct Tls {
    acceptor: TlsAcceptor,
    current: Arc<CurrentCertificate>,
    files: TlsFiles,
}

impl Tls {
    /// Loads the pair once; an error here stops startup.
    pub fn new(files: TlsFiles) -> Result<Tls, TlsError> {
        let current = Arc::new(CurrentCertificate(ArcSwap::from_pointee(files.load()?)));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::new(&files.cert, e))?
            .with_no_client_auth()
            .with_cert_resolver(current.clone());
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            current,
            files,
        })
    }

    pub fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }

    /// Loads the pair again if `before` no longer describes the files; returns the stamp
    /// to compare with next time. A pair that fails to load keeps the old one serving.
    fn reload_if_changed(&self, before: Stamp) -> Stamp {
        let now = stamp(&self.files);
        if now == before {
            return now;
        }
        match self.files.load() {
            Ok(pair) => {
                self.current.0.store(Arc::new(pair));
                tracing::info!(cert = %self.files.cert.display(), "TLS certificate reloaded");
            }
            Err(error) => {
                tracing::warn!(%error, "TLS certificate not reloaded; the previous one keeps serving");
            }
        }
        now
    }

    /// Watches the files for as long as the process runs.
    pub fn watch(self: &Arc<Self>) {
        let tls = Arc::clone(self);
        tokio::spawn(async move {
            let mut seen = stamp(&tls.files);
            loop {
                tokio::time::sleep(RECHECK).await;
                let files = tls.clone();
                seen = match tokio::task::spawn_blocking(move || files.reload_if_changed(seen))
                    .await
                {
                    Ok(stamp) => stamp,
                    Err(_) => seen,
                };
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> TlsFiles {
        let certified = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
        let files = TlsFiles {
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        };
        std::fs::write(&files.cert, certified.cert.pem()).unwrap();
        std::fs::write(&files.key, certified.signing_key.serialize_pem()).unwrap();
        files
    }

    #[test]
    fn a_pair_loads_and_mismatched_or_missing_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "localhost");
        assert!(files.load().is_ok());

        let other = tempfile::tempdir().unwrap();
        let stranger = write_pair(other.path(), "localhost");
        let mismatched = TlsFiles {
            cert: files.cert.clone(),
            key: stranger.key.clone(),
        };
        let error = mismatched.load().unwrap_err();
        assert_eq!(error.file, stranger.key);
        assert!(error.to_string().contains("does not fit"), "{error}");

        let swapped = TlsFiles {
            cert: files.key.clone(),
            key: files.cert.clone(),
        };
        assert_eq!(swapped.load().unwrap_err().file, files.key);
        let missing = TlsFiles {
            cert: dir.path().join("absent.pem"),
            key: files.key.clone(),
        };
        assert_eq!(missing.load().unwrap_err().file, missing.cert);
    }

    #[test]
    fn a_renewed_pair_replaces_the_old_one_and_a_broken_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "first.example");
        let tls = Tls::new(files.clone()).unwrap();
        let serving = || tls.current.0.load_full().cert[0].clone();
        let first = serving();
        let seen = stamp(&files);
        assert_eq!(tls.reload_if_changed(seen), seen);

        std::fs::write(&files.key, "-----BEGIN PRIVATE KEY-----\nbroken\n").unwrap();
        let seen = tls.reload_if_changed(seen);
        assert_eq!(
            serving(),
            first,
            "a broken key must not replace a good pair"
        );

        write_pair(dir.path(), "second.example");
        tls.reload_if_changed(seen);
        assert_ne!(serving(), first);
    }
}
