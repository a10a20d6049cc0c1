//! The read API's documents: what `/api/company`, `/api/pages/{slug}`,
//! `/api/divisions/{id}`, `/api/search` and `/ask` answer (and the MCP tools that return the
//! same documents). The functions that fill them live with the reads (`listing`,
//! `read_api`); the types live here so that the documents, the handlers and the schemas in
//! `/openapi.json` name one type each.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::content::{Company, Division, Page};

/// One page in a list: what it is about and where to read it, without its text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct PageListing<'a> {
    pub(crate) slug: &'a str,
    pub(crate) title: &'a str,
    pub(crate) summary: &'a str,
    /// The id of the division the page belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) division: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date"))]
    pub(crate) updated: Option<&'a str>,
    /// The page for people (HTML; `.md` for Markdown): the address to cite.
    #[schemars(url)]
    pub(crate) url: String,
    /// The page as JSON, with its Markdown.
    #[schemars(url)]
    pub(crate) api_url: String,
}

/// `GET /api/company`: the company, every division, and one page of page listings.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CompanyDocument<'a> {
    pub(crate) company: &'a Company,
    pub(crate) divisions: &'a [Division],
    pub(crate) pages: Vec<PageListing<'a>>,
    /// Present when more pages follow: pass it as `?cursor=` to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
}

/// `GET /api/pages/{slug}` and the MCP tool `get_page`: one page with its Markdown.
#[derive(Serialize, JsonSchema)]
pub(crate) struct PageDocument<'a> {
    pub(crate) page: &'a Page,
    /// The page for people: the address to cite.
    #[schemars(url)]
    pub(crate) url: String,
    /// The page of the division it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub(crate) division_url: Option<String>,
}

/// `GET /api/divisions/{id}` and the MCP tool `get_division`: one division with its pages
/// listed.
#[derive(Serialize, JsonSchema)]
pub(crate) struct DivisionDocument<'a> {
    pub(crate) division: &'a Division,
    #[schemars(url)]
    pub(crate) url: String,
    pub(crate) pages: Vec<PageListing<'a>>,
}

/// `GET /api/search`: ranked results, best first.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "SearchResults")]
pub(crate) struct SearchDocument<'a> {
    pub(crate) query: &'a str,
    pub(crate) results: Vec<Hit>,
    /// Present when more results follow: pass it as `?cursor=` to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
}

/// One search hit, as returned by `search_company_info` and `/api/search`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Hit {
    #[schemars(extend("enum" = ["division", "page", "contact"]))]
    pub(crate) kind: &'static str,
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) snippet: String,
    /// The `company://` resource with the full record.
    pub(crate) uri: String,
    /// The page for people: the address to cite.
    #[schemars(url)]
    pub(crate) url: String,
    pub(crate) score: f64,
}

/// The JSON answer.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "AskAnswer")]
pub(crate) struct AskAnswer {
    #[serde(rename = "_meta")]
    pub(crate) meta: AskMeta,
    /// The client's `query_id`, or one made from the query.
    pub(crate) query_id: String,
    /// Best first; empty without a query.
    pub(crate) results: Vec<AskResult>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct AskMeta {
    #[schemars(extend("enum" = ["answer"]))]
    pub(crate) response_type: &'static str,
    pub(crate) version: &'static str,
    /// The mode answered: always `list`.
    #[schemars(extend("enum" = ["list"]))]
    pub(crate) mode: &'static str,
    /// What the client should know: how to ask, or that another mode was answered as a list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct AskResult {
    /// The page to cite.
    #[schemars(url)]
    pub(crate) url: String,
    pub(crate) name: String,
    /// This site's origin.
    pub(crate) site: String,
    pub(crate) score: f64,
    pub(crate) description: String,
    /// The schema.org object the result is about (`Organization` for a division, `WebPage`
    /// for a page, `ContactPoint` for a contact), with `@context`.
    #[schemars(extend("type" = "object"))]
    pub(crate) schema_object: Value,
}
