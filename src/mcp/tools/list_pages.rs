//! `list_pages`: the published pages, optionally one division's, a page at a time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::arguments::{Id, Limit};
use super::{find_division, page, NextCursor, Tool};
use crate::content::{Page, Site};
use crate::listing::{page_listing, DEFAULT_LIMIT, MAX_LIMIT};
use crate::read_model::ReadModel;
use crate::wire::PageListing;

pub(crate) struct ListPages;

/// The arguments of the two list tools, `list_pages` and `list_contacts`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArguments {
    /// Only this division's: an id as returned by list_divisions, e.g. "field-sensors".
    pub(crate) division_id: Option<Id>,
    #[serde(default)]
    pub(crate) limit: Limit<DEFAULT_LIMIT, MAX_LIMIT>,
    /// The nextCursor of the previous answer, to continue.
    pub(crate) cursor: Option<Id>,
}

impl ListArguments {
    /// The division asked for, checked to exist.
    pub(crate) fn division<'a>(&'a self, site: &Site) -> Result<Option<&'a str>, String> {
        let division = self.division_id.as_ref().map(|id| id.as_str());
        if let Some(id) = division {
            find_division(site, id)?;
        }
        Ok(division)
    }
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct PageList<'a> {
    pages: Vec<PageListing<'a>>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
}

impl Tool for ListPages {
    type Arguments = ListArguments;
    type Output<'a> = PageList<'a>;
    const NAME: &'static str = "list_pages";
    const TITLE: &'static str = "List pages";
    const USE_FOR: &'static str = "to see the pages";

    fn description(company: &str) -> String {
        format!("Lists the published pages of {company} (about, history, careers, press, ...) with slug, title, summary and URL, optionally only those of one division, {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more). Read one with get_page.")
    }

    fn run<'a>(model: &'a ReadModel, arguments: &'a ListArguments) -> Result<PageList<'a>, String> {
        let site = model.site();
        let division = arguments.division(site)?;
        let matching: Vec<&Page> = site
            .pages
            .iter()
            .map(|page| &**page)
            .filter(|page| division.is_none() || page.division.as_deref() == division)
            .collect();
        let (pages, next_cursor) = page(
            &matching,
            |p| p.slug.as_str(),
            arguments.limit.get(),
            arguments.cursor.as_ref(),
        )?;
        Ok(PageList {
            pages: pages
                .iter()
                .map(|page| page_listing(model.base(), page))
                .collect(),
            next_cursor,
        })
    }

    fn prepared(_: &Site) -> Vec<Map<String, Value>> {
        vec![Map::new()]
    }
}
