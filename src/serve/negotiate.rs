//! Request header parsing for static responses: `Accept-Encoding` and `If-None-Match`.
//! Both are parsed leniently (junk is ignored, never an error) and never allocate.

use std::collections::BTreeMap;

use hyper::header::HeaderValue;

use crate::compile::{Encoding, Representation};

/// Quality values in thousandths, as RFC 9110 §12.4.2 allows three decimals.
fn quality(parameters: &str) -> u16 {
    for parameter in parameters.split(';') {
        let parameter = parameter.trim();
        if let Some(value) = parameter
            .strip_prefix("q=")
            .or_else(|| parameter.strip_prefix("Q="))
        {
            return parse_qvalue(value.trim());
        }
    }
    1000
}

fn parse_qvalue(value: &str) -> u16 {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    match whole {
        "1" => 1000,
        "0" => {
            let mut thousandths = 0u16;
            for (i, digit) in fraction.bytes().take(3).enumerate() {
                if !digit.is_ascii_digit() {
                    return 0;
                }
                thousandths += u16::from(digit - b'0') * [100, 10, 1][i];
            }
            thousandths
        }
        _ => 0,
    }
}

/// Picks the precomputed encoding to send, or `None` for the identity bytes. Among
/// acceptable encodings the highest q wins, ties go to the smaller format (br before gzip),
/// and an encoding is used only if the client likes it at least as much as identity.
pub fn choose_encoding<'a>(
    accept_encoding: impl Iterator<Item = &'a HeaderValue>,
    available: &BTreeMap<Encoding, Representation>,
) -> Option<Encoding> {
    if available.is_empty() {
        return None;
    }
    let mut explicit: [Option<u16>; 2] = [None, None];
    let mut identity: Option<u16> = None;
    let mut wildcard: Option<u16> = None;
    let mut seen_any = false;
    for value in accept_encoding {
        let Ok(text) = value.to_str() else { continue };
        for item in text.split(',') {
            let (coding, parameters) = item.split_once(';').unwrap_or((item, ""));
            let coding = coding.trim();
            if coding.is_empty() {
                continue;
            }
            seen_any = true;
            let q = quality(parameters);
            if coding.eq_ignore_ascii_case("br") {
                explicit[0] = Some(q);
            } else if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                explicit[1] = Some(q);
            } else if coding.eq_ignore_ascii_case("identity") {
                identity = Some(q);
            } else if coding == "*" {
                wildcard = Some(q);
            }
        }
    }
    if !seen_any {
        return None;
    }
    let identity_q = identity.or(wildcard.filter(|q| *q == 0)).unwrap_or(1);
    let mut best: Option<(Encoding, u16)> = None;
    for (index, encoding) in Encoding::ALL.into_iter().enumerate() {
        if !available.contains_key(&encoding) {
            continue;
        }
        let q = explicit[index].or(wildcard).unwrap_or(0);
        if q == 0 {
            continue;
        }
        if best.is_none_or(|(_, best_q)| q > best_q) {
            best = Some((encoding, q));
        }
    }
    best.filter(|(_, q)| *q >= identity_q)
        .map(|(encoding, _)| encoding)
}

/// RFC 9110 §13.1.2: does `If-None-Match` match `etag`? Uses the weak comparison the
/// header calls for, and understands `*` and lists.
pub fn none_match<'a>(
    if_none_match: impl Iterator<Item = &'a HeaderValue>,
    etag: &HeaderValue,
) -> bool {
    let ours = opaque(etag.as_bytes());
    for value in if_none_match {
        let mut rest = value.as_bytes();
        loop {
            while let [b' ' | b'\t' | b',', tail @ ..] = rest {
                rest = tail;
            }
            if rest.is_empty() {
                break;
            }
            if rest[0] == b'*' {
                return true;
            }
            if let [b'W', b'/', tail @ ..] = rest {
                rest = tail;
            }
            let [b'"', tail @ ..] = rest else {
                break;
            };
            let Some(end) = tail.iter().position(|b| *b == b'"') else {
                break;
            };
            if tail[..end] == *ours {
                return true;
            }
            rest = &tail[end + 1..];
        }
    }
    false
}

fn opaque(tag: &[u8]) -> &[u8] {
    let tag = tag.strip_prefix(b"W/").unwrap_or(tag);
    tag.strip_prefix(b"\"")
        .and_then(|t| t.strip_suffix(b"\""))
        .unwrap_or(tag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn both() -> BTreeMap<Encoding, Representation> {
        Encoding::ALL
            .into_iter()
            .map(|e| {
                (
                    e,
                    Representation::new(Bytes::from_static(e.token().as_bytes())),
                )
            })
            .collect()
    }

    fn choose(header: &'static str) -> Option<Encoding> {
        let value = HeaderValue::from_static(header);
        choose_encoding(std::iter::once(&value), &both())
    }

    #[test]
    fn accept_encoding_preferences() {
        assert_eq!(choose_encoding(std::iter::empty(), &both()), None);
        assert_eq!(choose("gzip, deflate, br"), Some(Encoding::Brotli));
        assert_eq!(choose("gzip"), Some(Encoding::Gzip));
        assert_eq!(choose("br;q=0.5, gzip;q=0.8"), Some(Encoding::Gzip));
        assert_eq!(choose("br;q=0, gzip;q=0"), None);
        assert_eq!(choose("*"), Some(Encoding::Brotli));
        assert_eq!(choose("*;q=0.5, br;q=0"), Some(Encoding::Gzip));
        assert_eq!(choose("identity"), None);
        assert_eq!(choose("deflate"), None);
        assert_eq!(choose("gzip;q=0.5, identity;q=1"), None);
        assert_eq!(choose("GZIP;Q=1"), Some(Encoding::Gzip));
        assert_eq!(choose("x-gzip"), Some(Encoding::Gzip));
        assert_eq!(choose(",,;q=,br;q=abc"), None);
        let only_gzip: BTreeMap<_, _> = both()
            .into_iter()
            .filter(|(e, _)| *e == Encoding::Gzip)
            .collect();
        let value = HeaderValue::from_static("br, gzip;q=0.1");
        assert_eq!(
            choose_encoding(std::iter::once(&value), &only_gzip),
            Some(Encoding::Gzip)
        );
    }

    #[test]
    fn if_none_match_forms() {
        let etag = HeaderValue::from_static("\"abc\"");
        let check = |header: &'static str| {
            none_match(std::iter::once(&HeaderValue::from_static(header)), &etag)
        };
        assert!(check("\"abc\""));
        assert!(check("W/\"abc\""));
        assert!(check("\"x\", \"abc\""));
        assert!(check("*"));
        assert!(!check("\"abcd\""));
        assert!(!check("abc"));
        assert!(!check("\"ab"));
        assert!(!check(""));
    }
}
