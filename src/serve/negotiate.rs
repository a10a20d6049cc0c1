//! Request header parsing: `Accept`, `Accept-Encoding` and `If-None-Match`. Every content
//! negotiation decision of the server goes through [`preferences`], one parser for both
//! `Accept` lists. Headers are parsed leniently (junk is ignored, never an error) and
//! without allocating.

use hyper::header::HeaderValue;

use crate::compile::{Encoding, Variants};

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

/// One member of an `Accept` or `Accept-Encoding` list: a media range or content coding
/// (trimmed, case as sent) and its quality in thousandths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Preference<'a> {
    pub value: &'a str,
    pub quality: u16,
}

/// The members of every `values` header, in order; empty members are skipped.
pub(super) fn preferences<'a>(
    values: impl Iterator<Item = &'a HeaderValue>,
) -> impl Iterator<Item = Preference<'a>> {
    values
        .filter_map(|value| value.to_str().ok())
        .flat_map(|text| text.split(','))
        .filter_map(|item| {
            let (value, parameters) = item.split_once(';').unwrap_or((item, ""));
            let value = value.trim();
            (!value.is_empty()).then(|| Preference {
                value,
                quality: quality(parameters),
            })
        })
}

/// How much `Accept` likes `media_type` (RFC 9110 §12.5.1): the quality of the most specific
/// range that matches it (`type/subtype`, then `type/*`, then `*/*`); 1000 when no `Accept`
/// was sent, 0 when nothing matches.
pub(super) fn media_quality<'a>(
    accept: impl Iterator<Item = &'a HeaderValue>,
    media_type: &str,
) -> u16 {
    let kind = media_type.split('/').next().unwrap_or_default();
    let mut any = false;
    let mut best: Option<(u8, u16)> = None;
    for preference in preferences(accept) {
        any = true;
        let (range_type, range_subtype) = preference.value.split_once('/').unwrap_or(("", ""));
        let specificity = if preference.value.eq_ignore_ascii_case(media_type) {
            3
        } else if range_subtype == "*" && range_type.eq_ignore_ascii_case(kind) {
            2
        } else if preference.value == "*/*" {
            1
        } else {
            continue;
        };
        if best.is_none_or(|(found, _)| specificity > found) {
            best = Some((specificity, preference.quality));
        }
    }
    match best {
        Some((_, quality)) => quality,
        None if any => 0,
        None => 1000,
    }
}

/// The quality `Accept` gives `media_type` by name (no wildcards): `None` when unnamed.
pub(super) fn named_quality<'a>(
    accept: impl Iterator<Item = &'a HeaderValue>,
    media_type: &str,
) -> Option<u16> {
    preferences(accept)
        .filter(|preference| preference.value.eq_ignore_ascii_case(media_type))
        .map(|preference| preference.quality)
        .last()
}

/// Picks the precomputed encoding to send, or `None` for the identity bytes. Among
/// acceptable encodings the highest q wins, ties go to the smaller format (br before gzip),
/// and an encoding is used only if the client likes it at least as much as identity.
pub(super) fn choose_encoding<'a>(
    accept_encoding: impl Iterator<Item = &'a HeaderValue>,
    available: &Variants,
) -> Option<Encoding> {
    if available.is_empty() {
        return None;
    }
    let mut explicit: [Option<u16>; 2] = [None, None];
    let mut identity: Option<u16> = None;
    let mut wildcard: Option<u16> = None;
    let mut seen_any = false;
    for Preference {
        value: coding,
        quality: q,
    } in preferences(accept_encoding)
    {
        seen_any = true;
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
    if !seen_any {
        return None;
    }
    let identity_q = identity.or(wildcard.filter(|q| *q == 0)).unwrap_or(1);
    let mut best: Option<(Encoding, u16)> = None;
    for (index, encoding) in Encoding::ALL.into_iter().enumerate() {
        if available.get(encoding).is_none() {
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
pub(super) fn none_match<'a>(
    if_none_match: impl Iterator<Item = &'a HeaderValue>,
    etag: &[u8],
) -> bool {
    let ours = opaque(etag);
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
    use crate::compile::Representation;
    use bytes::Bytes;

    fn accept(header: &'static str) -> Vec<HeaderValue> {
        vec![HeaderValue::from_static(header)]
    }

    #[test]
    fn the_most_specific_media_range_decides() {
        for (header, json) in [
            ("application/json", 1000),
            ("text/event-stream, application/json", 1000),
            ("application/*;q=0.5", 500),
            ("*/*;q=0.2", 200),
            ("application/json;q=0, */*", 0),
            ("application/json; q=0.000", 0),
            ("*/*;q=0, application/json;q=0.7", 700),
            ("text/html", 0),
            ("APPLICATION/JSON;Q=0.9", 900),
            (" , ", 1000),
        ] {
            assert_eq!(
                media_quality(accept(header).iter(), "application/json"),
                json,
                "{header}"
            );
        }
        assert_eq!(media_quality(std::iter::empty(), "application/json"), 1000);
    }

    #[test]
    fn named_quality_ignores_wildcards() {
        let header = accept("text/markdown;q=0.9, text/html;q=0.8, */*");
        assert_eq!(named_quality(header.iter(), "text/markdown"), Some(900));
        assert_eq!(named_quality(header.iter(), "text/html"), Some(800));
        assert_eq!(named_quality(header.iter(), "application/json"), None);
    }

    fn both() -> Variants {
        let mut variants = Variants::default();
        for e in Encoding::ALL {
            variants.insert(
                e,
                Representation::new(Bytes::from_static(e.token().as_bytes())),
            );
        }
        variants
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
        let mut only_gzip = Variants::default();
        only_gzip.insert(Encoding::Gzip, both().get(Encoding::Gzip).unwrap().clone());
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
            none_match(
                std::iter::once(&HeaderValue::from_static(header)),
                etag.as_bytes(),
            )
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
