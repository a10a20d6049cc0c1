//! Content validation: every kind of mistake is reported as `file:line: field: message`,
//! all at once, and a broken tree never replaces a good build.

use crate::common;

use std::fs;
use std::path::Path;

use dossier::content;

/// Loads a copy of the sample content after `edit`, and returns the error lines with the
/// temporary directory prefix removed.
fn errors_after(edit: impl FnOnce(&Path)) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let content_dir = common::copy_of_sample_content(dir.path());
    edit(&content_dir);
    let errors = content::load(&content_dir).expect_err("the broken content was accepted");
    let prefix = format!("{}/", content_dir.display());
    errors
        .iter()
        .map(|e| e.to_string().replace(&prefix, ""))
        .collect()
}

fn replace_in(file: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{from:?} not in {}", file.display());
    fs::write(file, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn the_sample_content_is_valid() {
    let site = content::load(&common::sample_content()).unwrap();
    assert!(site.divisions.len() >= 4);
    assert!(site.pages.len() >= 6);
    assert!(site.company.contact.email.is_some());
    assert!(site.divisions.iter().all(|d| d.contact.is_some()));
}

#[test]
fn json_syntax_errors_name_the_line() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("divisions/public-sector.json"),
            "\"summary\":",
            "\"summary\" ",
        );
    });
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("divisions/public-sector.json:4: -: expected `:`"),
        "{errors:?}"
    );
}

#[test]
fn missing_required_fields_name_the_field() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("company.json"),
            "  \"name\": \"Cobalt Ridge Instruments\",\n",
            "",
        );
    });
    // Named, and located at the object that lacks it (here the whole file, line 1), not
    // at the end of the file where the parser noticed.
    assert_eq!(
        errors,
        ["company.json:1: name: missing: this field is required"]
    );
}

#[test]
fn a_missing_nested_field_points_at_its_object() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("company.json"),
            "    \"locality\": \"Boulder\",\n",
            "",
        );
    });
    let company = std::fs::read_to_string(common::sample_content().join("company.json")).unwrap();
    let line = company
        .lines()
        .position(|l| l.contains("\"headquarters\": {"))
        .unwrap()
        + 1;
    assert_eq!(
        errors,
        [format!(
            "company.json:{line}: headquarters.locality: missing: this field is required"
        )]
    );
}

#[test]
fn a_division_that_does_not_parse_is_reported_once() {
    let errors = errors_after(|dir| {
        // A syntax error (a trailing comma) in a division that pages refer to.
        replace_in(
            &dir.join("divisions/data-platform.json"),
            "\"id\": \"data-platform\",",
            "\"id\": \"data-platform\",,",
        );
    });
    // pages/ridgeline-security.md belongs to data-platform: it is not reported as well.
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("divisions/data-platform.json:"),
        "{errors:?}"
    );
    assert!(!errors[0].contains("unknown division"), "{errors:?}");
}

#[test]
fn a_missing_front_matter_field_is_named() {
    let errors = errors_after(|dir| {
        std::fs::write(
            dir.join("pages/short.md"),
            "+++\ntitle = \"Short\"\n+++\nSome text.\n",
        )
        .unwrap();
    });
    assert_eq!(
        errors,
        ["pages/short.md:2: summary: missing: this field is required"]
    );
}

#[test]
fn wrong_types_name_the_nested_field_and_line() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("company.json"),
            "\"year\": 2004",
            "\"year\": \"2004\"",
        );
    });
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("company.json:8: founded.year: invalid type: string \"2004\""),
        "{errors:?}"
    );
}

#[test]
fn unknown_fields_are_typos_not_silently_dropped() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("divisions/field-sensors.json"),
            "\"summary\":",
            "\"sumary\":",
        );
    });
    assert!(
        errors[0].starts_with("divisions/field-sensors.json:4: sumary: unknown field `sumary`"),
        "{errors:?}"
    );
}

#[test]
fn a_bad_company_profile_is_located_field_by_field() {
    let errors = errors_after(|dir| {
        let company = dir.join("company.json");
        // One check digit off.
        replace_in(&company, "5493001CBLTRDG0A4X19", "5493001CBLTRDG0A4X18");
        replace_in(&company, "\"US-DE\"", "\"Delaware\"");
        replace_in(&company, "\"code\": \"334519\"", "\"code\": \"33-45\"");
        replace_in(&company, "\"latitude\": 40.153", "\"latitude\": 140.153");
        replace_in(
            &company,
            "\"date\": \"2004-03-15\"",
            "\"date\": \"2005-03-15\"",
        );
        replace_in(
            &company,
            "\"valid_until\": \"2027-06-30\"",
            "\"valid_until\": \"2027-06-31\"",
        );
    });
    let expected = [
        "founded.date: `2005-03-15` is not in founded.year 2004",
        "lei: `5493001CBLTRDG0A4X18` is not a valid LEI",
        "registration.jurisdiction: `Delaware` is not a jurisdiction",
        "industry_codes[0].code: `33-45` is not a NAICS code",
        "locations[1].geo.latitude: 140.153 is not a latitude",
        "certifications[0].valid_until: `2027-06-31` is not a date",
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, expected) in errors.iter().zip(expected) {
        let (location, message) = error.split_once(": ").unwrap();
        assert!(location.starts_with("company.json:"), "{error}");
        let line: usize = location["company.json:".len()..].parse().unwrap();
        assert!(line > 1, "{error}");
        assert!(
            message.starts_with(expected),
            "{error} should say {expected}"
        );
    }
    // An unknown location type names the ones allowed.
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("company.json"),
            "\"type\": \"factory\"",
            "\"type\": \"mine\"",
        );
    });
    assert!(
        errors[0].contains("locations[1].type") && errors[0].contains("`factory`"),
        "{errors:?}"
    );
}

#[test]
fn bad_emails_urls_phones_and_countries_are_located() {
    let errors = errors_after(|dir| {
        let company = dir.join("company.json");
        replace_in(
            &company,
            "hello@cobaltridge.example",
            "hello-at-cobaltridge",
        );
        replace_in(
            &company,
            "\"url\": \"https://docs.cobaltridge.example\"",
            "\"url\": \"docs.cobaltridge.example\"",
        );
        replace_in(&company, "+1 303 555 0142", "call us");
        replace_in(&company, "\"country\": \"US\"", "\"country\": \"USA\"");
    });
    assert_eq!(
        errors,
        [
            "company.json:17: headquarters.country: `USA` is not an ISO 3166-1 alpha-2 country code like `DE` or `US`",
            "company.json:21: contact.email: `hello-at-cobaltridge` is not an email address like `press@example.com`",
            "company.json:22: contact.phone: `call us` is not a phone number like `+49 30 1234 5678`",
            "company.json:39: links[1].url: `docs.cobaltridge.example` is not an absolute http(s) URL like `https://example.com/about`",
        ]
    );
}

#[test]
fn duplicate_division_ids_and_page_slugs_are_refused() {
    let errors = errors_after(|dir| {
        fs::copy(
            dir.join("divisions/field-sensors.json"),
            dir.join("divisions/zz-copy.json"),
        )
        .unwrap();
        fs::copy(dir.join("pages/about.md"), dir.join("pages/about-copy.md")).unwrap();
        replace_in(
            &dir.join("pages/about-copy.md"),
            "title = \"About Cobalt Ridge\"",
            "title = \"About\"\nslug = \"about\"",
        );
    });
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors.iter().any(|e| e
            .starts_with("divisions/zz-copy.json:2: id: duplicate division id `field-sensors`")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.starts_with("pages/about.md:2: slug: duplicate page slug `about`, already used by pages/about-copy.md")), "{errors:?}");
}

#[test]
fn references_to_unknown_divisions_list_the_known_ones() {
    let errors = errors_after(|dir| {
        replace_in(
            &dir.join("pages/support.md"),
            "division = \"customer-care\"",
            "division = \"customer-service\"",
        );
    });
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("pages/support.md:4: division: unknown division `customer-service`; known divisions: calibration-labs, customer-care"), "{errors:?}");
}

#[test]
fn front_matter_problems_are_located() {
    let errors = errors_after(|dir| {
        fs::write(dir.join("pages/no-front-matter.md"), "# Just text\n").unwrap();
        fs::write(dir.join("pages/unclosed.md"), "+++\ntitle = \"x\"\n").unwrap();
        replace_in(
            &dir.join("pages/history.md"),
            "updated = \"2026-03-02\"",
            "updated = \"March 2026\"",
        );
        replace_in(&dir.join("pages/press.md"), "summary = ", "summary = 42 #");
        replace_in(
            &dir.join("pages/careers.md"),
            "email = \"careers@cobaltridge.example\"",
            "email = \"careers\"",
        );
        fs::write(
            dir.join("pages/Bad_Name.md"),
            "+++\ntitle = \"t\"\nsummary = \"s\"\n+++\ntext\n",
        )
        .unwrap();
        fs::write(
            dir.join("pages/empty.md"),
            "+++\ntitle = \"t\"\nsummary = \"s\"\n+++\n\n",
        )
        .unwrap();
    });
    let expected = [
        "pages/Bad_Name.md:2: slug: the file name `Bad_Name` is not a usable slug",
        "pages/careers.md:8: contact.email: `careers` is not an email address",
        "pages/empty.md:5: body: empty",
        "pages/history.md:4: updated: `March 2026` is not a date in the form YYYY-MM-DD",
        "pages/no-front-matter.md:1: -: missing front matter",
        "pages/press.md:3: summary: invalid type: integer `42`",
        "pages/unclosed.md:1: -: unclosed front matter",
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, prefix) in errors.iter().zip(expected) {
        assert!(
            error.starts_with(prefix),
            "{error:?} should start with {prefix:?}"
        );
    }
}

#[test]
fn unreadable_and_unexpected_files_are_errors() {
    let errors = errors_after(|dir| {
        fs::remove_file(dir.join("company.json")).unwrap();
        fs::write(dir.join("divisions/notes.txt"), "todo").unwrap();
        fs::write(dir.join("divisions/.swap.json"), "{").unwrap();
        fs::write(dir.join("divisions/backup.json~"), "{").unwrap();
        fs::write(dir.join("pages/binary.md"), [0xff, 0xfe, 0x00]).unwrap();
        fs::write(dir.join("pages/huge.md"), vec![b'a'; 2 * 1024 * 1024]).unwrap();
    });
    assert_eq!(
        errors,
        [
            "company.json:0: -: missing: this file is required",
            "divisions/notes.txt:0: -: unexpected entry: this directory holds only `.json` files",
            "pages/binary.md:1: -: not valid UTF-8",
            "pages/huge.md:0: -: too large: 2097152 bytes, at most 1048576",
        ]
    );
}

#[test]
fn hostile_json_does_not_crash_the_loader() {
    let errors = errors_after(|dir| {
        fs::write(dir.join("divisions/deep.json"), "[".repeat(100_000)).unwrap();
        fs::write(dir.join("divisions/empty.json"), "").unwrap();
        fs::write(dir.join("divisions/trailing.json"), "{\"id\": \"x\"} {}").unwrap();
        let company = fs::read_to_string(dir.join("company.json")).unwrap();
        fs::write(dir.join("company.json"), company + "\n{}\n").unwrap();
    });
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(
        errors[0].starts_with("company.json:198: -: trailing characters"),
        "{errors:?}"
    );
    let errors = &errors[1..];
    assert_eq!(errors.len(), 3);
    assert!(
        errors[0].starts_with("divisions/deep.json:1: "),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("divisions/empty.json:1: -: EOF while parsing"),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with("divisions/trailing.json:1: name: missing: this field is required"),
        "{errors:?}"
    );
}

#[test]
fn only_regular_files_inside_the_content_directory_are_read() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    fs::write(
        &secret,
        "+++\ntitle = \"S\"\nsummary = \"s\"\n+++\nsecret\n",
    )
    .unwrap();
    let errors = errors_after(|dir| {
        // A FIFO with no writer would block a plain read forever.
        let company = dir.join("company.json");
        fs::remove_file(&company).unwrap();
        let fifo = std::ffi::CString::new(company.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        // Among pages, the listing refuses it before any page file is opened (to be read,
        // or announced to the kernel ahead of the read: `ListedDir::read_ahead`).
        let page_fifo =
            std::ffi::CString::new(dir.join("pages/0-pipe.md").to_str().unwrap()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::mkfifo(page_fifo.as_ptr(), 0o644) }, 0);
        // /dev/zero would be read until memory runs out.
        std::os::unix::fs::symlink("/dev/zero", dir.join("divisions/zero.json")).unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("pages/leak.md")).unwrap();
        std::os::unix::fs::symlink("../../../../../../etc/passwd", dir.join("pages/up.md"))
            .unwrap();
        // A link that stays inside is fine.
        std::os::unix::fs::symlink("about.md", dir.join("pages/about-us.md")).unwrap();
    });
    let real_secret = fs::canonicalize(&secret).unwrap();
    assert_eq!(errors.len(), 5, "{errors:?}");
    assert_eq!(
        errors[0],
        "company.json:0: -: not a regular file (a FIFO, device or directory); only regular files are read"
    );
    assert!(
        errors[1].starts_with("divisions/zero.json:0: -: a symbolic link to /dev/zero, outside"),
        "{errors:?}"
    );
    assert_eq!(
        errors[2],
        "pages/0-pipe.md:0: -: unexpected entry: this directory holds only `.md` files"
    );
    assert!(
        errors[3].starts_with(&format!(
            "pages/leak.md:0: -: a symbolic link to {}, outside",
            real_secret.display()
        )),
        "{errors:?}"
    );
    assert!(
        errors[4].starts_with("pages/up.md:0: -: a symbolic link to /etc/passwd, outside"),
        "{errors:?}"
    );
}

#[test]
fn a_link_inside_the_content_directory_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let content_dir = common::copy_of_sample_content(dir.path());
    fs::rename(
        content_dir.join("pages/history.md"),
        content_dir.join("history.md.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../history.md.txt", content_dir.join("pages/history.md")).unwrap();
    let site = content::load(&content_dir).unwrap();
    assert!(site.pages.iter().any(|page| page.slug == "history"));
}

#[test]
fn pathologically_deep_markdown_is_refused_at_its_line() {
    let errors = errors_after(|dir| {
        // 240 KB of nesting, which the Markdown parser takes seconds to render.
        let n = 60_000;
        let body = format!("Intro\n\n{}{}x\n", "> ".repeat(n), "- ".repeat(n));
        fs::write(
            dir.join("pages/deep.md"),
            format!("+++\ntitle = \"Deep\"\nsummary = \"d\"\n+++\n{body}"),
        )
        .unwrap();
        // Thematic breaks and ordinary nesting are fine.
        fs::write(
            dir.join("pages/fine.md"),
            format!(
                "+++\ntitle = \"Fine\"\nsummary = \"f\"\n+++\n{}\n\n> - 1. > quoted list\n",
                "* ".repeat(100)
            ),
        )
        .unwrap();
    });
    assert_eq!(
        errors,
        ["pages/deep.md:7: body: nested 120000 levels deep (block quotes and lists); at most 32 are allowed, since deeper nesting makes rendering slow"]
    );
}
