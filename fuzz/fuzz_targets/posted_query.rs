//! Bodies posted to a computed read (`POST /ask`): a form or a JSON object becomes a query
//! string. The first byte picks the content type; the rest is the body.
#![no_main]

use dossier::query::Query;
use dossier::read_api::posted_query;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((kind, body)) = data.split_first() else {
        return;
    };
    let content_type = match kind % 4 {
        0 => Some("application/json"),
        1 => Some("application/x-www-form-urlencoded"),
        2 => Some("application/json; charset=utf-8"),
        _ => None,
    };
    let Ok(query) = posted_query(content_type, body) else {
        return;
    };
    // A JSON object names each parameter once, so what it becomes is a query string the
    // URL parser reads back whenever it is within the bounds.
    let json = matches!(kind % 4, 0 | 2);
    if json && dossier::query::check_size(Some(&query)).is_ok() {
        let parsed = Query::parse(Some(&query));
        assert!(parsed.is_ok(), "{query:?}: {parsed:?}");
    }
});
