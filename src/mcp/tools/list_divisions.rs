//! `list_divisions`: every division's id, name and one-line summary.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::arguments::NoArguments;
use super::Tool;
use crate::content::Site;
use crate::read_model::ReadModel;

pub(crate) struct ListDivisions;

#[derive(Serialize, JsonSchema)]
pub(crate) struct DivisionSummary<'a> {
    id: &'a str,
    name: &'a str,
    summary: &'a str,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct DivisionList<'a> {
    divisions: Vec<DivisionSummary<'a>>,
}

impl ListDivisions {
    /// The answer, also the text of the `company://divisions` resource.
    pub(crate) fn answer(site: &Site) -> DivisionList<'_> {
        DivisionList {
            divisions: site
                .divisions
                .iter()
                .map(|division| DivisionSummary {
                    id: &division.id,
                    name: &division.name,
                    summary: &division.summary,
                })
                .collect(),
        }
    }
}

impl Tool for ListDivisions {
    type Arguments = NoArguments;
    type Output<'a> = DivisionList<'a>;
    const NAME: &'static str = "list_divisions";
    const TITLE: &'static str = "List divisions";
    const USE_FOR: &'static str = "to see the business units";

    fn description(company: &str) -> String {
        format!("Lists the divisions (business units) of {company} with id, name and a one-line summary. Use the ids with get_division, list_pages or list_contacts.")
    }

    fn run<'a>(model: &'a ReadModel, _: &'a NoArguments) -> Result<DivisionList<'a>, String> {
        Ok(ListDivisions::answer(model.site()))
    }

    fn prepared(_: &Site) -> Vec<Map<String, Value>> {
        vec![Map::new()]
    }
}
