//! The content loader's parsers: company and division JSON (with the line scanner), page
//! front matter and body, and the Markdown renderer, on any text.
#![no_main]

use std::path::Path;

use dossier::compile::documents::pages::markdown_to_html;
use dossier::content;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let file = match kind % 3 {
        0 => "company.json",
        1 => "divisions/fuzz.json",
        _ => "pages/fuzz.md",
    };
    if let Err(errors) = content::check_text(Path::new(file), text) {
        // Every problem names the file.
        for error in errors.iter() {
            assert!(error.to_string().starts_with(file));
        }
    }
    if kind % 3 == 2 && content::check_text(Path::new(file), text).is_ok() {
        // Pages that pass validation are rendered, as a reload would.
        let _ = markdown_to_html(text);
    }
});
