//! The form parser behind `/oauth2/token` and `/oauth2/revoke`: any body, any content type.
#![no_main]

use dossier::auth::form;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first line is the Content-Type, the rest the body.
    let (content_type, body) = match data.iter().position(|b| *b == b'\n') {
        Some(cut) => (std::str::from_utf8(&data[..cut]).ok(), &data[cut + 1..]),
        None => (Some("application/x-www-form-urlencoded"), data),
    };
    if let Ok(parsed) = form::parse(content_type, body) {
        // Whatever parsed can be asked for any parameter.
        let _ = parsed.get("grant_type");
        let _ = parsed.has("client_secret");
    }
});
