//! `get_division`: one division in full, with its first pages.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::arguments::Id;
use super::{find_division, Tool};
use crate::config::BaseUrl;
use crate::content::{Division, Site};
use crate::listing::{division_document, DEFAULT_LIMIT};
use crate::read_model::ReadModel;
use crate::wire::DivisionDocument;

pub(crate) struct GetDivision;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DivisionArguments {
    /// A division id as returned by list_divisions, e.g. "field-sensors".
    division_id: Id,
}

impl GetDivision {
    /// The answer for `division`, also the text of its `company://divisions/…` resource.
    pub(crate) fn answer<'a>(
        site: &'a Site,
        base: &BaseUrl,
        division: &'a Division,
    ) -> DivisionDocument<'a> {
        division_document(site, base, division, DEFAULT_LIMIT)
    }
}

impl Tool for GetDivision {
    type Arguments = DivisionArguments;
    type Output<'a> = DivisionDocument<'a>;
    const NAME: &'static str = "get_division";
    const TITLE: &'static str = "Get one division";
    const USE_FOR: &'static str = "for one of them";

    fn description(_: &str) -> String {
        format!("Returns one division in full (description, lead, locations, contact), its URL, and the pages that belong to it (the first {DEFAULT_LIMIT}; list_pages with division_id gives the rest).")
    }

    fn run<'a>(
        model: &'a ReadModel,
        arguments: &'a DivisionArguments,
    ) -> Result<DivisionDocument<'a>, String> {
        let site = model.site();
        let division = find_division(site, arguments.division_id.as_str())?;
        Ok(GetDivision::answer(site, model.base(), division))
    }

    /// Every division: there are few, and agents read them often.
    fn prepared(site: &Site) -> Vec<Map<String, Value>> {
        site.divisions
            .iter()
            .map(|division| {
                let mut arguments = Map::new();
                arguments.insert("division_id".into(), division.id.clone().into());
                arguments
            })
            .collect()
    }
}
