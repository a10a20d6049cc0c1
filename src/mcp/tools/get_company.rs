//! `get_company`: the whole public record, the same document as `GET /api/company`.

use serde_json::{Map, Value};

use super::arguments::NoArguments;
use super::Tool;
use crate::content::Site;
use crate::listing::{company_document, DEFAULT_LIMIT};
use crate::read_model::ReadModel;
use crate::wire::CompanyDocument;

pub(crate) struct GetCompany;

impl Tool for GetCompany {
    type Arguments = NoArguments;
    type Output<'a> = CompanyDocument<'a>;
    const NAME: &'static str = "get_company";
    const TITLE: &'static str = "Get everything about the company";
    const USE_FOR: &'static str = "for the whole record";

    fn description(company: &str) -> String {
        format!("Returns the public record of {company}: company facts, profile and contact, every division, and its pages listed with slug, title, summary and URL (the first {DEFAULT_LIMIT}; continue with list_pages and nextCursor). Same data as GET /api/company. Read a page's text with get_page.")
    }

    fn run<'a>(model: &'a ReadModel, _: &'a NoArguments) -> Result<CompanyDocument<'a>, String> {
        company_document(model.site(), model.base(), DEFAULT_LIMIT, None)
            .map_err(|error| error.to_string())
    }

    fn prepared(_: &Site) -> Vec<Map<String, Value>> {
        vec![Map::new()]
    }
}
