//! Incremental reloads: after any sequence of edits, the version compiled from the previous
//! one (unchanged page files not read, unchanged pages not rendered, their search terms not
//! stemmed) is byte for byte the version a clean compile of the same tree makes, and ranks
//! every search the same way.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use dossier::compile::{add_encodings, Encoding};
use dossier::config::{AuthPolicy, BaseUrl, Compression, SiteConfig};
use dossier::live::{self, ContentStatus, Live, Source, Version};
use dossier::spool::Spool;

/// A small deterministic generator (xorshift64*): the same seed, the same edits.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn words(&mut self, count: usize) -> String {
        const WORDS: [&str; 12] = [
            "river",
            "sensor",
            "calibration",
            "flood",
            "telemetry",
            "station",
            "nitrate",
            "firmware",
            "archive",
            "companies",
            "company",
            "laboratory",
        ];
        (0..count)
            .map(|_| WORDS[self.below(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const DIVISIONS: [&str; 3] = ["data-platform", "field-sensors", "calibration-labs"];

fn page_text(title: &str, order: i64, division: Option<&str>, body: &str) -> String {
    let division = division.map_or(String::new(), |d| format!("division = \"{d}\"\n"));
    format!(
        "+++\ntitle = \"{title}\"\nsummary = \"A page about {title}.\"\n{division}order = {order}\n+++\n\n{body}\n"
    )
}

fn pages(content: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(content.join("pages"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Applies one random edit to the tree; says what it did.
/// One random edit: what it was, and the paths it wrote (as a file watcher would name them).
fn edit(
    random: &mut Random,
    content: &Path,
    templates: &Path,
    step: usize,
) -> (String, Vec<PathBuf>) {
    let files = pages(content);
    let file = files[random.below(files.len())].clone();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    match random.below(10) {
        0 | 1 => {
            let text = std::fs::read_to_string(&file).unwrap();
            std::fs::write(&file, format!("{text}\n{}\n", random.words(8))).unwrap();
            (format!("body of {name}"), vec![file])
        }
        2 => {
            let text = std::fs::read_to_string(&file).unwrap();
            let retitled =
                text.replacen("title = \"", &format!("title = \"{} ", random.words(1)), 1);
            std::fs::write(&file, retitled).unwrap();
            (format!("title of {name}"), vec![file])
        }
        3 => {
            let division = DIVISIONS[random.below(DIVISIONS.len())];
            let title = format!("Added {step} {}", random.words(2));
            let text = page_text(
                &title,
                random.below(50) as i64,
                Some(division),
                &random.words(30),
            );
            let added = content.join(format!("pages/added-{step}.md"));
            std::fs::write(&added, text).unwrap();
            (format!("added added-{step}.md"), vec![added])
        }
        4 if files.len() > 6 => {
            std::fs::remove_file(&file).unwrap();
            (format!("removed {name}"), vec![file])
        }
        5 => {
            let division = DIVISIONS[random.below(DIVISIONS.len())];
            let title = format!("Moved {step}");
            let text = page_text(
                &title,
                random.below(50) as i64,
                Some(division),
                &random.words(20),
            );
            std::fs::write(&file, text).unwrap();
            (format!("{name} rewritten into {division}"), vec![file])
        }
        6 => {
            let path = content.join(format!("divisions/{}.json", DIVISIONS[random.below(3)]));
            let mut division: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            division["name"] = format!("Division {step} {}", random.words(1)).into();
            std::fs::write(&path, serde_json::to_vec_pretty(&division).unwrap()).unwrap();
            (format!("name of {}", path.display()), vec![path])
        }
        7 => {
            let path = content.join("company.json");
            let mut company: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            company["tagline"] = format!("Tagline {step}").into();
            std::fs::write(&path, serde_json::to_vec_pretty(&company).unwrap()).unwrap();
            ("company tagline".into(), vec![path])
        }
        8 => {
            let path = templates.join("page.html");
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, format!("{text}<!-- edit {step} -->\n")).unwrap();
            ("page template".into(), vec![path])
        }
        _ => {
            // The same bytes again: a new modification time, nothing else.
            let text = std::fs::read(&file).unwrap();
            std::fs::write(&file, text).unwrap();
            (format!("rewrote {name} unchanged"), vec![file])
        }
    }
}

fn prepare(source: &Source, config: &SiteConfig, previous: Option<&Live>) -> Option<Version> {
    live::prepare(source, config, &[], previous).ok()
}

/// [`prepare`] told which paths changed since `previous`, as the file watcher tells it.
fn prepare_edited(
    source: &Source,
    config: &SiteConfig,
    previous: &Live,
    edited: &[PathBuf],
) -> Option<Version> {
    live::prepare_edited(source, config, &[], Some(previous), Some(edited)).ok()
}

fn decoded(encoding: Encoding, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding {
        Encoding::Gzip => {
            flate2::read::GzDecoder::new(bytes)
                .read_to_end(&mut out)
                .unwrap();
        }
        Encoding::Brotli => {
            brotli::Decompressor::new(bytes, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
    }
    out
}

/// The incremental version equals the clean one: the same paths, bytes and headers, every
/// compressed variant decoding to its identity bytes, and the same search results.
fn assert_same(incremental: &Version, clean: &Version, what: &str) {
    let ours = incremental.artifacts.sorted();
    let theirs = clean.artifacts.sorted();
    let paths = |set: &[&std::sync::Arc<dossier::compile::Artifact>]| {
        set.iter().map(|a| a.path.clone()).collect::<Vec<_>>()
    };
    assert_eq!(paths(&ours), paths(&theirs), "after {what}");
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a.identity.body, b.identity.body, "{} after {what}", a.path);
        assert_eq!(a.identity.etag, b.identity.etag, "{} after {what}", a.path);
        assert_eq!(a.headers, b.headers, "{} after {what}", a.path);
        assert_eq!(
            (&a.content_type, &a.vary, &a.markdown),
            (&b.content_type, &b.vary, &b.markdown),
            "{} after {what}",
            a.path
        );
        for (encoding, variant) in a.encoded.iter() {
            assert_eq!(
                decoded(encoding, &variant.body),
                a.identity.body,
                "{} {encoding:?} variant after {what}",
                a.path
            );
        }
    }
    assert_eq!(
        incremental.artifacts.revision(),
        clean.artifacts.revision(),
        "after {what}"
    );
    for query in [
        "river",
        "calibration station",
        "companies",
        "report",
        "labor",
        "added",
    ] {
        let search = |version: &Version| version.model.search().search(version.model.site(), query);
        assert_eq!(search(incremental), search(clean), "{query:?} after {what}");
    }
}

#[test]
fn incremental_reloads_equal_clean_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let templates = dir.path().join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/page.html"),
        templates.join("page.html"),
    )
    .unwrap();
    let mut random = Random(0x5eed_1234_abcd_0001);
    for n in 0..30 {
        let division = DIVISIONS[n % 3];
        let text = page_text(
            &format!("Report {n}"),
            (n % 7) as i64,
            Some(division),
            &random.words(40),
        );
        std::fs::write(content.join(format!("pages/report-{n}.md")), text).unwrap();
    }
    let source = Source::Content(content.clone());
    let config = SiteConfig {
        limits: dossier::config::Limits::default(),
        base_url: BaseUrl::parse("https://info.example.com").unwrap(),
        auth: AuthPolicy::default(),
        templates: Some(templates.clone()),
        compression: Compression::Deferred,
    };
    // A file changed in the last two seconds is always read again (its stamp could hide a
    // second write); let the tree settle so the edits below really reuse the rest.
    std::thread::sleep(Duration::from_millis(2100));
    let first = prepare(&source, &config, None).unwrap();
    // As in a server, each live version keeps its bodies in a spool; small segments, so
    // that edits fill, abandon and compact several of them.
    let spool_dir = tempfile::tempdir().unwrap();
    let spool = Spool::with_segment_bytes(spool_dir.path(), 64 * 1024).unwrap();
    let live_of = |version: &Version| {
        let mut artifacts = version.artifacts.as_ref().clone();
        spool.take_bodies(&mut artifacts);
        let version = Version {
            artifacts: std::sync::Arc::new(artifacts),
            model: version.model.clone(),
            mcp: version.mcp.clone(),
            compiled: version.compiled.clone(),
        };
        Live::new(&version, ContentStatus::Ok, &source, SystemTime::now())
    };
    let mut live = live_of(&first);
    let page_count = first.model.site().pages.len();

    // One body edit: every other page is taken as it was.
    let edited = content.join("pages/report-3.md");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, format!("{text}\nOne more line.\n")).unwrap();
    let incremental = prepare(&source, &config, Some(&live)).unwrap();
    assert_same(
        &incremental,
        &prepare(&source, &config, None).unwrap(),
        "one edit",
    );
    let reused = incremental.compiled.as_ref().unwrap().pages_reused();
    assert_eq!(reused, page_count - 1);
    live = live_of(&incremental);

    let mut total_reused = 0;
    // Every path written since the live version was prepared: after an edit that fails, the
    // next one must still look at the file that failed (the server reads every file then).
    let mut edited_since: Vec<PathBuf> = Vec::new();
    for step in 0..60 {
        let (what, written) = edit(&mut random, &content, &templates, step);
        edited_since.extend(written);
        // Now and then the live version gets its compressed variants, as in a server, so
        // reused pages carry theirs into the next version.
        if step % 4 == 0 {
            if let Some(compressed) = add_encodings(&live.artifacts, 40) {
                let version = Version {
                    artifacts: std::sync::Arc::new(compressed),
                    ..live.version()
                };
                live = live_of(&version);
            }
        }
        let clean = prepare(&source, &config, None);
        // Half the steps as a reload after a watcher's events (only the edited files read),
        // half with every file's stamp checked.
        let incremental = if step % 2 == 0 {
            prepare_edited(&source, &config, &live, &edited_since)
        } else {
            prepare(&source, &config, Some(&live))
        };
        match (incremental, clean) {
            (Some(incremental), Some(clean)) => {
                assert_same(&incremental, &clean, &what);
                total_reused += incremental.compiled.as_ref().unwrap().pages_reused();
                live = live_of(&incremental);
                edited_since.clear();
            }
            (None, None) => {}
            (incremental, clean) => panic!(
                "after {what}: incremental {} but clean {}",
                if incremental.is_some() {
                    "compiled"
                } else {
                    "failed"
                },
                if clean.is_some() {
                    "compiled"
                } else {
                    "failed"
                },
            ),
        }
    }
    assert!(total_reused > 0, "no step reused a page");
    // A deleted file that is not a page is never taken for "nothing changed".
    for gone in [
        content.join(format!("divisions/{}.json", DIVISIONS[0])),
        content.join("company.json"),
    ] {
        let saved = std::fs::read(&gone).unwrap();
        std::fs::remove_file(&gone).unwrap();
        let clean = prepare(&source, &config, None);
        let incremental = prepare_edited(&source, &config, &live, std::slice::from_ref(&gone));
        assert_eq!(
            incremental.is_some(),
            clean.is_some(),
            "after deleting {}",
            gone.display()
        );
        if let (Some(incremental), Some(clean)) = (&incremental, &clean) {
            assert_same(incremental, clean, "a deletion");
        }
        std::fs::write(&gone, saved).unwrap();
    }
    // Edits leave dead bodies behind in the spool, and compaction bounds them: once the
    // versions before it are gone, the disk the spool takes is at most about twice the
    // bodies the live version serves. (Written bytes, not whole segments: a segment file
    // is sparse, and the unused end of a segment left when a body did not fit takes no
    // disk. Counting whole segments made this depend on the order bodies were written.)
    live = live_of(&live.version());
    let live_bytes: usize = live
        .artifacts
        .iter()
        .flat_map(|a| std::iter::once(&a.identity).chain(a.encoded.iter().map(|(_, v)| v)))
        .map(|representation| representation.body.len())
        .sum();
    let held = spool.held_bytes();
    assert!(
        held <= 2 * live_bytes + 2 * 64 * 1024,
        "{held} bytes in segments for {live_bytes} bytes of live bodies ({} segments)",
        spool.segments()
    );
}

/// A broken page is reported the same way whether the rest was reused or read.
#[test]
fn an_error_after_reuse_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let content = common::copy_of_sample_content(dir.path());
    let source = Source::Content(content.clone());
    let config = SiteConfig {
        limits: dossier::config::Limits::default(),
        base_url: BaseUrl::parse("https://info.example.com").unwrap(),
        auth: AuthPolicy::default(),
        templates: None,
        compression: Compression::Deferred,
    };
    std::thread::sleep(Duration::from_millis(2100));
    let first = prepare(&source, &config, None).unwrap();
    let live = Live::new(&first, ContentStatus::Ok, &source, SystemTime::now());
    // Removing a division makes every unchanged page that names it wrong.
    std::fs::remove_file(content.join("divisions/calibration-labs.json")).unwrap();
    let errors = |previous: Option<&Live>| match live::prepare(&source, &config, &[], previous) {
        Err(live::LoadError::Content(errors)) => {
            errors.0.iter().map(ToString::to_string).collect::<Vec<_>>()
        }
        other => panic!("expected content errors, got {:?}", other.err()),
    };
    let clean = errors(None);
    assert!(
        clean
            .iter()
            .any(|e| e.contains(".md:") && e.contains("unknown division")),
        "{clean:?}"
    );
    assert_eq!(errors(Some(&live)), clean);
}
