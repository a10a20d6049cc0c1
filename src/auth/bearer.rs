//! How a client presents an access token (RFC 6750), parsed once into a [`Presented`] value.
//!
//! Only the `Authorization` header method exists. A token in the query string or a form
//! body is refused outright, so it never ends up in logs or caches by accident.

use hyper::header::HeaderValue;

/// What the request carries.
#[derive(Debug, PartialEq, Eq)]
pub enum Presented<'a> {
    /// No `Authorization` header: the public API serves anonymous callers.
    Nothing,
    /// `Authorization: Bearer <token>`.
    Token(&'a str),
    /// An `Authorization` header we cannot use (another scheme, no token, several headers).
    Unusable(&'static str),
}

/// Reads the `Authorization` header(s).
pub fn presented<'a>(mut values: impl Iterator<Item = &'a HeaderValue>) -> Presented<'a> {
    let Some(value) = values.next() else {
        return Presented::Nothing;
    };
    if values.next().is_some() {
        return Presented::Unusable("send one Authorization header");
    }
    let Ok(text) = value.to_str() else {
        return Presented::Unusable("the Authorization header is not ASCII");
    };
    let text = text.trim();
    let (scheme, token) = match text.split_once(' ') {
        Some((scheme, token)) => (scheme, token.trim_start_matches(' ')),
        None => (text, ""),
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Presented::Unusable("only the Bearer scheme is accepted");
    }
    // RFC 6750 b64token: one token, no spaces inside.
    if token.is_empty() || token.contains(' ') {
        return Presented::Unusable("the Bearer scheme takes exactly one token");
    }
    Presented::Token(token)
}

/// True when the query string carries an `access_token` parameter (RFC 6750 §2.3), which
/// this service refuses.
pub fn token_in_query(query: Option<&str>) -> bool {
    query.is_some_and(|query| {
        query.split('&').any(|pair| {
            let name = pair.split('=').next().unwrap_or_default();
            name == "access_token" || name.eq_ignore_ascii_case("access%5Ftoken")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&'static str]) -> Presented<'static> {
        let values: &'static [HeaderValue] = Box::leak(
            values
                .iter()
                .map(|v| HeaderValue::from_static(v))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        presented(values.iter())
    }

    #[test]
    fn header_forms() {
        assert_eq!(parse(&[]), Presented::Nothing);
        assert_eq!(parse(&["Bearer abc"]), Presented::Token("abc"));
        assert_eq!(parse(&["bEaReR abc"]), Presented::Token("abc"));
        assert_eq!(parse(&["Bearer   abc "]), Presented::Token("abc"));
        assert!(matches!(
            parse(&["Basic dXNlcjpwYXNz"]),
            Presented::Unusable(_)
        ));
        assert!(matches!(parse(&["Bearer"]), Presented::Unusable(_)));
        assert!(matches!(parse(&["Bearer a b"]), Presented::Unusable(_)));
        assert!(matches!(
            parse(&["Bearer a", "Bearer b"]),
            Presented::Unusable(_)
        ));
    }

    #[test]
    fn query_tokens() {
        assert!(token_in_query(Some("access_token=x")));
        assert!(token_in_query(Some("a=1&access_token")));
        assert!(token_in_query(Some("access%5Ftoken=x")));
        assert!(!token_in_query(Some("access_tokens=x")));
        assert!(!token_in_query(None));
    }
}
