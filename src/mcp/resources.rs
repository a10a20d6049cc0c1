//! MCP resources: the company, its divisions and pages as `company://` URIs.
//!
//! - `company://company`: the whole record (`application/json`, the bytes of `/api/company`);
//! - `company://divisions` and `company://contacts`: indexes (`application/json`);
//! - `company://divisions/{division_id}`: one division (`application/json`);
//! - `company://pages/{slug}`: one page's Markdown (`text/markdown`).

use serde_json::{json, Value};

use super::tools::{all_contacts, GetDivision, ListDivisions};
use crate::content::Site;
use crate::read_model::ReadModel;

pub(super) const COMPANY: &str = "company://company";
pub(super) const DIVISIONS: &str = "company://divisions";
pub(super) const CONTACTS: &str = "company://contacts";
pub(super) const DIVISION_TEMPLATE: &str = "company://divisions/{division_id}";
pub(super) const PAGE_TEMPLATE: &str = "company://pages/{slug}";
const DIVISION_PREFIX: &str = "company://divisions/";
const PAGE_PREFIX: &str = "company://pages/";

/// The text and type of one resource.
pub(super) struct Contents {
    pub mime_type: &'static str,
    pub text: String,
}

fn json_text<T: serde::Serialize>(answer: &T) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}

/// Reads `uri`; `None` when no such resource exists. `company_json` is the record as
/// already serialized for `/api/company`.
pub(super) fn read(model: &ReadModel, company_json: &str, uri: &str) -> Option<Contents> {
    let (site, base) = (model.site(), model.base());
    let json = |text| {
        Some(Contents {
            mime_type: "application/json",
            text,
        })
    };
    match uri {
        COMPANY => json(company_json.to_string()),
        DIVISIONS => json(json_text(&ListDivisions::answer(site))),
        CONTACTS => json(json_text(&all_contacts(site, base))),
        _ => {
            if let Some(id) = uri.strip_prefix(DIVISION_PREFIX) {
                let division = site.divisions.iter().find(|d| d.id == id)?;
                return json(json_text(&GetDivision::answer(site, base, division)));
            }
            let slug = uri.strip_prefix(PAGE_PREFIX)?;
            let page = site.pages.iter().find(|p| p.slug == slug)?;
            Some(Contents {
                mime_type: "text/markdown",
                text: page.body_markdown.get().to_string(),
            })
        }
    }
}

fn listing(uri: String, name: &str, title: &str, description: &str, mime_type: &str) -> Value {
    json!({
        "uri": uri,
        "name": name,
        "title": title,
        "description": description,
        "mimeType": mime_type,
    })
}

/// How many entries `resources/list` has: three fixed ones, the divisions, the pages.
pub(super) fn listing_count(site: &Site) -> usize {
    3 + site.divisions.len() + site.pages.len()
}

/// The `resources/list` entries at `range` (of [`listing_count`]), made without the others:
/// a page of 100 entries costs the same for a site of 100,000 pages as for one of 100.
pub(super) fn listings_in(site: &Site, range: std::ops::Range<usize>) -> Vec<Value> {
    let divisions = 3..3 + site.divisions.len();
    let fixed = (range.start < 3).then(|| fixed_listings(site));
    range
        .filter_map(|at| {
            if at < 3 {
                fixed.as_ref().map(|fixed| fixed[at].clone())
            } else if divisions.contains(&at) {
                let division = &site.divisions[at - 3];
                Some(listing(
                    format!("{DIVISION_PREFIX}{}", division.id),
                    &division.id,
                    &division.name,
                    &division.summary,
                    "application/json",
                ))
            } else {
                let page = site.pages.get(at - divisions.end)?;
                let mut entry = listing(
                    format!("{PAGE_PREFIX}{}", page.slug),
                    &page.slug,
                    &page.title,
                    &page.summary,
                    "text/markdown",
                );
                entry["size"] = page.body_markdown.len().into();
                Some(entry)
            }
        })
        .collect()
}

/// The three entries every site lists first: the company, its divisions, its contacts.
fn fixed_listings(site: &Site) -> [Value; 3] {
    let company = &site.company.name;
    [
        listing(
            COMPANY.into(),
            "company",
            company,
            &format!("Everything public about {company}: company, divisions and pages (same as GET /api/company)."),
            "application/json",
        ),
        listing(
            DIVISIONS.into(),
            "divisions",
            "Divisions",
            &format!("The divisions of {company}: id, name and summary."),
            "application/json",
        ),
        listing(
            CONTACTS.into(),
            "contacts",
            "Contacts",
            &format!("How to reach {company}, its divisions and the people behind its pages."),
            "application/json",
        ),
    ]
}

pub(super) fn templates() -> Value {
    json!([
        {
            "uriTemplate": DIVISION_TEMPLATE,
            "name": "division",
            "title": "A division",
            "description": "One division by id (see company://divisions), as JSON.",
            "mimeType": "application/json"
        },
        {
            "uriTemplate": PAGE_TEMPLATE,
            "name": "page",
            "title": "A page",
            "description": "One page by slug, as Markdown.",
            "mimeType": "text/markdown"
        }
    ])
}
