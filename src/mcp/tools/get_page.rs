//! `get_page`: one page's full Markdown text and the URL to cite.

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::Id;
use super::{find_page, Tool};
use crate::listing::page_document;
use crate::read_model::ReadModel;
use crate::wire::PageDocument;

pub(crate) struct GetPage;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageArguments {
    /// A page slug as returned by list_pages, e.g. "careers".
    slug: Id,
}

impl Tool for GetPage {
    type Arguments = PageArguments;
    type Output<'a> = PageDocument<'a>;
    const NAME: &'static str = "get_page";
    const TITLE: &'static str = "Get one page";
    const USE_FOR: &'static str = "for one page's text";

    fn description(_: &str) -> String {
        "Returns one page with its full Markdown text and its URL (to cite), by slug (from list_pages or search_company_info).".to_string()
    }

    fn run<'a>(
        model: &'a ReadModel,
        arguments: &'a PageArguments,
    ) -> Result<PageDocument<'a>, String> {
        let page = find_page(model.site(), arguments.slug.as_str())?;
        Ok(page_document(model.base(), page))
    }
}
