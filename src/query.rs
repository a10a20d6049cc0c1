//! The query string: bounded before anything reads it, then parsed once into a [`Query`].
//!
//! Every endpoint runs [`check_size`] before its query is looked at, so no request costs
//! more than a pass over at most [`MAX_QUERY_BYTES`] bytes and [`MAX_QUERY_PARAMETERS`]
//! parameters before a limit has admitted it. The endpoints that read a query (the
//! computed reads of `/api/company` and `/api/search`) take a handful of short parameters;
//! a longer query is a mistake or an attempt to make the server work, and gets a clear
//! 414 or 400 instead.
//!
//! It sits low in the module graph, beside `paths`, because both the server (which
//! enforces the bounds) and the OpenAPI document (which states them) need it.

use std::collections::HashSet;

use hyper::StatusCode;

/// Longest query string accepted, in bytes: a search of 200 characters, each
/// percent-encoded from four bytes of UTF-8, fits with room for a cursor.
pub const MAX_QUERY_BYTES: usize = 4096;
/// Most `&`-separated parameters accepted in one query string.
pub const MAX_QUERY_PARAMETERS: usize = 16;

/// Why a query string is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("the query string is {0} bytes; at most {MAX_QUERY_BYTES} are accepted")]
    TooLong(usize),
    #[error("the query string has more than {MAX_QUERY_PARAMETERS} parameters")]
    TooManyParameters,
    #[error("the parameter `{0}` was given twice")]
    Repeated(String),
}

impl QueryError {
    /// 414 for a query that is too long (RFC 9110 §15.5.15), 400 otherwise.
    pub fn status(&self) -> StatusCode {
        match self {
            QueryError::TooLong(_) => StatusCode::URI_TOO_LONG,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

/// Refuses a query string beyond the bounds, without decoding it: one pass, stopping at
/// the first bound crossed.
pub fn check_size(query: Option<&str>) -> Result<(), QueryError> {
    let Some(query) = query else {
        return Ok(());
    };
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong(query.len()));
    }
    if query.split('&').filter(|pair| !pair.is_empty()).count() > MAX_QUERY_PARAMETERS {
        return Err(QueryError::TooManyParameters);
    }
    Ok(())
}

/// A query's parameters, decoded; a parameter given twice is refused (which one would
/// count?). Linear in the query's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    pub fn parse(query: Option<&str>) -> Result<Query, QueryError> {
        check_size(query)?;
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(query.unwrap_or_default().as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
        let mut seen = HashSet::with_capacity(pairs.len());
        for (name, _) in &pairs {
            if !seen.insert(name.as_str()) {
                return Err(QueryError::Repeated(name.clone()));
            }
        }
        Ok(Query(pairs))
    }

    /// The value of parameter `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The parameters in the order given.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_within_the_bounds_parse() {
        let query = Query::parse(Some("q=r%C3%A9sum%C3%A9&limit=5")).unwrap();
        assert_eq!(query.get("q"), Some("résumé"));
        assert_eq!(query.get("limit"), Some("5"));
        assert_eq!(query.get("cursor"), None);
        assert_eq!(Query::parse(None).unwrap().pairs(), &[]);
        // Empty pieces (`a=1&&b=2`) are not parameters.
        let sparse = "&".repeat(100) + "a=1";
        assert_eq!(Query::parse(Some(&sparse)).unwrap().pairs().len(), 1);
    }

    #[test]
    fn each_bound_is_refused_with_its_own_status() {
        let long = "q=".to_string() + &"a".repeat(MAX_QUERY_BYTES);
        assert_eq!(
            Query::parse(Some(&long)).unwrap_err(),
            QueryError::TooLong(long.len())
        );
        assert_eq!(QueryError::TooLong(1).status(), StatusCode::URI_TOO_LONG);
        let at_most: Vec<String> = (0..MAX_QUERY_PARAMETERS)
            .map(|i| format!("p{i}=1"))
            .collect();
        assert!(Query::parse(Some(&at_most.join("&"))).is_ok());
        let many: Vec<String> = (0..=MAX_QUERY_PARAMETERS)
            .map(|i| format!("p{i}=1"))
            .collect();
        let refused = Query::parse(Some(&many.join("&"))).unwrap_err();
        assert_eq!(refused, QueryError::TooManyParameters);
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            Query::parse(Some("limit=1&q=x&limit=2")).unwrap_err(),
            QueryError::Repeated("limit".into())
        );
        // Percent-encoding does not hide a repeat.
        assert_eq!(
            Query::parse(Some("q=a&%71=b")).unwrap_err(),
            QueryError::Repeated("q".into())
        );
    }
}
