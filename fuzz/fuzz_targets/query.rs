//! Query strings: the size check every endpoint runs first, and the parser behind it.
#![no_main]

use dossier::query::{check_size, Query, QueryError, MAX_QUERY_BYTES, MAX_QUERY_PARAMETERS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let checked = check_size(Some(text));
    match Query::parse(Some(text)) {
        Ok(query) => {
            // Whatever parses passed the bounds, and names each parameter once.
            assert!(checked.is_ok());
            assert!(text.len() <= MAX_QUERY_BYTES);
            assert!(query.pairs().len() <= MAX_QUERY_PARAMETERS);
            for (index, (name, value)) in query.pairs().iter().enumerate() {
                assert_eq!(query.get(name), Some(value.as_str()));
                assert!(query.pairs()[..index].iter().all(|(other, _)| other != name));
            }
        }
        Err(QueryError::Repeated(_)) => assert!(checked.is_ok()),
        Err(error) => assert_eq!(checked, Err(error)),
    }
});
