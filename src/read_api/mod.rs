//! The read API's answers that depend on the query string: `/api/company?limit=&cursor=`
//! (the next pages of page listings) and `/api/search?q=` (ranked results, shared with the
//! MCP tool `search_company_info`).
//!
//! `/ask` (NLWeb) is the same search in NLWeb's shape ([`ask()`]).
//!
//! Plain functions from the query to a finished [`Artifact`] or an error, so every rule is
//! tested without a socket; the router serves the artifact like a precompiled one (ETag,
//! 304, HEAD, CORS).

mod ask;
pub mod posted;

pub(crate) use ask::ask;

use serde_json::json;

use crate::compile::documents::operation::{self, Context, Operations};
pub use posted::{posted_query, MAX_POSTED_BYTES};

use hyper::header::LINK;
use hyper::StatusCode;

use crate::compile::documents::company::next_link;
use crate::compile::{Artifact, CachePolicy};
use crate::listing::{
    self, paginate, DEFAULT_LIMIT, DEFAULT_SEARCH_LIMIT, MAX_LIMIT, MAX_SEARCH_CHARS,
    MAX_SEARCH_LIMIT,
};
use crate::paths;
use crate::query::Query;
use crate::read_model::ReadModel;
use crate::wire::{SearchDocument, JSON};

/// A refused request: status, error code and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRefusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub description: String,
}

fn bad_request(description: impl Into<String>) -> ReadRefusal {
    ReadRefusal {
        status: StatusCode::BAD_REQUEST,
        code: "invalid_request",
        description: description.into(),
    }
}

/// The query, parsed; the bounds were checked by the router before anything ran.
fn parse(query: Option<&str>) -> Result<Query, ReadRefusal> {
    Query::parse(query).map_err(|error| ReadRefusal {
        status: error.status(),
        code: "invalid_request",
        description: error.to_string(),
    })
}

/// `limit`: how many items, from 1 to `max` (`default` when not given).
fn limit(query: &Query, default: usize, max: usize) -> Result<usize, ReadRefusal> {
    match query.get("limit") {
        None => Ok(default),
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(bad_request(format!(
                "`limit` must be a whole number from 1 to {max}"
            ))),
        },
    }
}

/// `cursor`: where an earlier answer left off (never empty).
fn cursor(query: &Query) -> Result<Option<&str>, ReadRefusal> {
    match query.get("cursor") {
        Some("") => Err(bad_request(
            "`cursor` is empty; leave it out to start at the beginning",
        )),
        other => Ok(other),
    }
}

fn page_error(error: listing::PageError) -> ReadRefusal {
    bad_request(error.description())
}

/// `GET /api/company?limit=&cursor=`.
pub(crate) fn company_page(
    model: &ReadModel,
    query: Option<&str>,
) -> Result<Artifact, ReadRefusal> {
    let query = parse(query)?;
    let limit = limit(&query, DEFAULT_LIMIT, MAX_LIMIT)?;
    let document = listing::company_document(model.site(), model.base(), limit, cursor(&query)?)
        .map_err(page_error)?;
    let next = document.next_cursor.clone();
    let artifact = Artifact::json(paths::API_COMPANY, JSON, CachePolicy::Content, &document)
        .map_err(|e| internal(e.to_string()))?;
    Ok(with_next(artifact, model, paths::API_COMPANY, next))
}

/// The computed reads' operations in `/openapi.json` (`/api/company`'s is its document's).
pub(crate) fn operations(context: &Context<'_>) -> Operations {
    vec![
        (paths::API_SEARCH, search_operation(context)),
        (paths::ASK, ask::operation(context)),
    ]
}

fn search_operation(context: &Context<'_>) -> serde_json::Value {
    let mut search_get = operation::document_get(
        "searchCompany",
        "Ranked search over divisions, pages and contacts",
        operation::json_response(
            "Results, best first.",
            operation::schema_ref::<SearchDocument>(),
        ),
        "company",
    );
    search_get["get"]["security"] = operation::read_security();
    search_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    search_get["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
    search_get["get"]["description"] = json!(context.search_limit_description());
    search_get["get"]["responses"]["429"] = operation::rate_limited();
    if let Some(parameters) = search_get["get"]["parameters"].as_array_mut() {
        parameters.push(json!({"name": "q", "in": "query", "required": true, "description": "Words to look for.", "schema": {"type": "string", "minLength": 1, "maxLength": MAX_SEARCH_CHARS}}));
        parameters.push(operation::limit(DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT));
        parameters.push(operation::cursor());
    }
    search_get
}

/// `GET /api/search?q=&limit=&cursor=`.
pub(crate) fn search(model: &ReadModel, query: Option<&str>) -> Result<Artifact, ReadRefusal> {
    let query = parse(query)?;
    let words = query.get("q").map(str::trim).unwrap_or_default();
    if words.is_empty() {
        return Err(bad_request(
            "give the words to look for as `q`, e.g. /api/search?q=calibration",
        ));
    }
    if words.chars().count() > MAX_SEARCH_CHARS {
        return Err(bad_request(format!(
            "`q` is longer than {MAX_SEARCH_CHARS} characters"
        )));
    }
    let limit = limit(&query, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)?;
    let index = model.search();
    let ranked = index.rank(model.site(), words);
    let (chosen, next_cursor) =
        paginate(&ranked, |r| index.key(r), limit, cursor(&query)?).map_err(page_error)?;
    let document = SearchDocument {
        query: words,
        results: index.hits(model.site(), words, chosen),
        next_cursor: next_cursor.clone(),
    };
    let artifact = Artifact::json(paths::API_SEARCH, JSON, CachePolicy::Content, &document)
        .map_err(|e| internal(e.to_string()))?;
    // The next link repeats the query, so following it needs nothing else.
    let next = next_cursor.map(|cursor| {
        let q: String = form_urlencoded::byte_serialize(words.as_bytes()).collect();
        format!("{cursor}&q={q}&limit={limit}")
    });
    Ok(with_next(artifact, model, paths::API_SEARCH, next))
}

fn with_next(artifact: Artifact, model: &ReadModel, path: &str, next: Option<String>) -> Artifact {
    match next.and_then(|cursor| next_link(model.base(), path, &cursor)) {
        Some(link) => artifact.with_header(LINK, link),
        None => artifact,
    }
}

fn internal(reason: String) -> ReadRefusal {
    tracing::error!(%reason, "cannot serialize an API answer");
    ReadRefusal {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        code: "server_error",
        description: "the answer could not be produced".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::BaseUrl;

    fn model() -> ReadModel {
        let site =
            crate::content::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content"))
                .unwrap();
        ReadModel::build(
            Arc::new(site),
            &BaseUrl::parse("https://x.example").unwrap(),
        )
    }

    fn json(artifact: &Artifact) -> serde_json::Value {
        serde_json::from_slice(&artifact.identity.body).unwrap()
    }

    #[test]
    fn company_pages_visit_every_page_once() {
        let model = model();
        let total = model.site().pages.len();
        let mut seen = Vec::new();
        let mut query = "limit=3".to_string();
        loop {
            let page = company_page(&model, Some(&query)).unwrap();
            let body = json(&page);
            assert!(body["pages"].as_array().unwrap().len() <= 3);
            for listing in body["pages"].as_array().unwrap() {
                assert!(listing.get("body_markdown").is_none());
                assert!(listing["url"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://x.example/"));
                seen.push(listing["slug"].as_str().unwrap().to_string());
            }
            match body["next_cursor"].as_str() {
                Some(cursor) => {
                    let link = page
                        .headers
                        .iter()
                        .find(|(n, _)| n == LINK)
                        .unwrap()
                        .1
                        .to_str()
                        .unwrap();
                    assert!(link.ends_with("rel=\"next\""), "{link}");
                    assert!(link.contains(cursor));
                    query = format!("limit=3&cursor={cursor}");
                }
                None => break,
            }
        }
        assert_eq!(seen.len(), total);
        let unique: std::collections::HashSet<_> = seen.iter().collect();
        assert_eq!(unique.len(), total);
    }

    #[test]
    fn bad_queries_say_what_would_work() {
        let model = model();
        for (query, expected) in [
            ("limit=0", "`limit` must be"),
            ("limit=abc", "`limit` must be"),
            ("limit=100000", "`limit` must be"),
            ("cursor=!!!", "cursor is not valid"),
            ("cursor=", "`cursor` is empty"),
            ("limit=1&limit=2", "given twice"),
        ] {
            let refusal = company_page(&model, Some(query)).unwrap_err();
            assert_eq!(refusal.status, StatusCode::BAD_REQUEST, "{query}");
            assert!(
                refusal.description.contains(expected),
                "{query}: {}",
                refusal.description
            );
        }
        let stale = listing::cursor_after("no-such-page");
        let refusal = company_page(&model, Some(&format!("cursor={stale}"))).unwrap_err();
        assert!(refusal.description.contains("start again"));
    }

    #[test]
    fn search_ranks_and_paginates() {
        let model = model();
        let careers = json(&search(&model, Some("q=Careers&limit=1")).unwrap());
        assert_eq!(careers["results"][0]["id"], "careers");
        assert_eq!(careers["results"][0]["url"], "https://x.example/careers");
        let first = json(&search(&model, Some("q=calibration&limit=1")).unwrap());
        let cursor = first["next_cursor"].as_str().unwrap();
        let second = json(
            &search(
                &model,
                Some(&format!("q=calibration&limit=1&cursor={cursor}")),
            )
            .unwrap(),
        );
        assert_ne!(second["results"][0], first["results"][0]);
        for bad in [None, Some(""), Some("q="), Some("q=%20%20")] {
            assert_eq!(
                search(&model, bad).unwrap_err().status,
                StatusCode::BAD_REQUEST
            );
        }
        let long = format!("q={}", "a".repeat(201));
        assert!(search(&model, Some(&long))
            .unwrap_err()
            .description
            .contains("longer"));
        let none = json(&search(&model, Some("q=xyzzyquux")).unwrap());
        assert_eq!(none["results"], serde_json::json!([]));
        assert!(none.get("next_cursor").is_none());
    }
}
