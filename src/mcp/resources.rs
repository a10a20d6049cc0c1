//! MCP resources: the company, its divisions and pages as `company://` URIs.
//!
//! - `company://company`: the whole record (`application/json`, same as `/api/company`);
//! - `company://divisions` and `company://contacts`: indexes (`application/json`);
//! - `company://divisions/{division_id}`: one division (`application/json`);
//! - `company://pages/{slug}`: one page's Markdown (`text/markdown`).

use serde_json::{json, Value};

use super::tools::{self, Outcome};
use crate::content::Site;

pub const DIVISION_TEMPLATE: &str = "company://divisions/{division_id}";
pub const PAGE_TEMPLATE: &str = "company://pages/{slug}";

/// One readable resource: its `resources/list` entry and its `resources/read` contents.
pub struct Resource {
    pub uri: String,
    pub listing: Value,
    pub mime_type: &'static str,
    pub text: String,
}

fn json_text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Data(value) => serde_json::to_string_pretty(&value).unwrap_or_default(),
        Outcome::ToolError(message) => message,
    }
}

fn resource(
    uri: String,
    name: &str,
    title: &str,
    description: &str,
    mime_type: &'static str,
    text: String,
) -> Resource {
    let listing = json!({
        "uri": uri,
        "name": name,
        "title": title,
        "description": description,
        "mimeType": mime_type,
        "size": text.len(),
    });
    Resource {
        uri,
        listing,
        mime_type,
        text,
    }
}

/// Every resource, in listing order.
pub fn all(site: &Site) -> Vec<Resource> {
    let company = &site.company.name;
    let mut resources = vec![
        resource(
            "company://company".into(),
            "company",
            company,
            &format!("Everything public about {company}: company, divisions and pages (same as GET /api/company)."),
            "application/json",
            json_text(tools::get_company(site)),
        ),
        resource(
            "company://divisions".into(),
            "divisions",
            "Divisions",
            &format!("The divisions of {company}: id, name and summary."),
            "application/json",
            json_text(tools::list_divisions(site)),
        ),
        resource(
            "company://contacts".into(),
            "contacts",
            "Contacts",
            &format!("How to reach {company}, its divisions and the people behind its pages."),
            "application/json",
            json_text(tools::list_contacts(site, None)),
        ),
    ];
    for division in &site.divisions {
        resources.push(resource(
            format!("company://divisions/{}", division.id),
            &division.id,
            &division.name,
            &division.summary,
            "application/json",
            json_text(tools::get_division(site, division)),
        ));
    }
    for page in &site.pages {
        resources.push(resource(
            format!("company://pages/{}", page.slug),
            &page.slug,
            &page.title,
            &page.summary,
            "text/markdown",
            page.body_markdown.clone(),
        ));
    }
    resources
}

pub fn templates() -> Value {
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
