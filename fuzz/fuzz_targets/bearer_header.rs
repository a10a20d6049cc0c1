//! The `Authorization` header parser, with one or two header values.
#![no_main]

use dossier::auth::bearer::{self, Presented};
use hyper::header::HeaderValue;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let values: Vec<HeaderValue> = data
        .split(|b| *b == b'\n')
        .take(3)
        .filter_map(|line| HeaderValue::from_bytes(line).ok())
        .collect();
    match bearer::presented(values.iter()) {
        Presented::Token(token) => assert!(!token.is_empty() && !token.contains(' ')),
        Presented::Nothing => assert!(values.is_empty()),
        Presented::Unusable(_) => {}
    }
    let _ = bearer::token_in_query(std::str::from_utf8(data).ok());
});
