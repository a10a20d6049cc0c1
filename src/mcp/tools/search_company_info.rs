//! `search_company_info`: ranked full-text search over divisions, pages and contacts, the
//! same index and ranking as `GET /api/search`. Computed per call, so rate limited.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arguments::{Id, Limit, Text};
use super::{page, NextCursor, Tool};
use crate::listing::MAX_SEARCH_CHARS;
use crate::read_model::ReadModel;
use crate::wire::Hit;

pub(crate) const MAX_SEARCH_RESULTS: usize = 20;
const DEFAULT_SEARCH_RESULTS: usize = 5;

pub(crate) struct SearchCompanyInfo;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArguments {
    /// Words to look for, e.g. "calibration certificate".
    query: Text<MAX_SEARCH_CHARS>,
    #[serde(default)]
    limit: Limit<DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS>,
    /// The nextCursor of the previous answer, to continue.
    cursor: Option<Id>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SearchAnswer<'a> {
    query: &'a str,
    /// Best first.
    results: Vec<Hit>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
}

impl Tool for SearchCompanyInfo {
    type Arguments = SearchArguments;
    type Output<'a> = SearchAnswer<'a>;
    const NAME: &'static str = "search_company_info";
    const TITLE: &'static str = "Search company information";
    const USE_FOR: &'static str = "when unsure where an answer lives";
    const IS_SEARCH: bool = true;

    fn description(company: &str) -> String {
        format!("Full-text search across the divisions, pages and contacts of {company}, ranked (BM25 with stemming; an exact title first, phrases above scattered words). Each result has a snippet, the company:// resource and the URL to cite. Use it when you do not know which division or page holds the answer.")
    }

    fn run<'a>(
        model: &'a ReadModel,
        arguments: &'a SearchArguments,
    ) -> Result<SearchAnswer<'a>, String> {
        let (site, index) = (model.site(), model.search());
        let query = arguments.query.as_str();
        let ranked = index.rank(site, query);
        let (chosen, next_cursor) = page(
            &ranked,
            |r| index.key(r),
            arguments.limit.get(),
            arguments.cursor.as_ref(),
        )?;
        Ok(SearchAnswer {
            query,
            results: index.hits(site, query, chosen),
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::Registered;
    use serde_json::json;

    #[test]
    fn the_input_schema_states_the_rules_the_types_enforce() {
        let search = SearchCompanyInfo.input_schema();
        assert_eq!(search["additionalProperties"], false);
        assert_eq!(search["required"], json!(["query"]));
        assert_eq!(search["properties"]["query"]["maxLength"], MAX_SEARCH_CHARS);
        assert_eq!(search["properties"]["limit"]["maximum"], MAX_SEARCH_RESULTS);
        assert_eq!(
            search["properties"]["limit"]["default"],
            DEFAULT_SEARCH_RESULTS
        );
    }
}
