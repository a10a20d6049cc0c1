//! The one prompt, `company_briefing`, and argument completion for it and for the resource
//! templates.

use serde_json::{json, Value};

use super::resources::{DIVISION_TEMPLATE, PAGE_TEMPLATE};
use crate::content::Site;

pub(super) const BRIEFING: &str = "company_briefing";
/// Completion answers carry at most this many values (the MCP limit).
const MAX_COMPLETIONS: usize = 100;

pub(super) fn list(company: &str) -> Value {
    json!([{
        "name": BRIEFING,
        "title": "Company briefing",
        "description": format!("A briefing on {company} (or one of its divisions) for a conversation: what it does, how it is organised and whom to contact."),
        "arguments": [{
            "name": "division",
            "description": "Optional division id to focus on, e.g. \"field-sensors\".",
            "required": false
        }]
    }])
}

/// `prompts/get company_briefing`; `Err` is an invalid-params message.
pub(super) fn briefing(site: &Site, division: Option<&str>) -> Result<Value, String> {
    let company = &site.company;
    let mut text = format!(
        "Brief me on {name}. Use only the facts below, say where something is not stated, and end with whom to contact.\n\n# {name}\n\n{description}\n\nFounded {year}{place}. Headquarters: {locality}, {country}.\nContact: {email}\n",
        name = company.name,
        description = company.description,
        year = company.founded.year,
        place = company.founded.place.as_ref().map(|p| format!(" in {p}")).unwrap_or_default(),
        locality = company.headquarters.locality,
        country = company.headquarters.country,
        email = company.contact.email.as_deref().unwrap_or("not stated"),
    );
    let description = match division {
        Some(id) => {
            let division = super::tools::find_division(site, id)?;
            text.push_str(&format!(
                "\n## Focus: {}\n\n{}\n",
                division.name, division.description
            ));
            if let Some(lead) = &division.lead {
                text.push_str(&format!("\nLed by {}, {}.\n", lead.name, lead.title));
            }
            if let Some(email) = division.contact.as_ref().and_then(|c| c.email.as_deref()) {
                text.push_str(&format!("Division contact: {email}\n"));
            }
            format!("Briefing on {}'s {}", company.name, division.name)
        }
        None => {
            text.push_str("\n## Divisions\n\n");
            for division in &site.divisions {
                text.push_str(&format!(
                    "- **{}** (`{}`): {}\n",
                    division.name, division.id, division.summary
                ));
            }
            format!("Briefing on {}", company.name)
        }
    };
    Ok(json!({
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}]
    }))
}

/// `completion/complete`: values for the briefing's `division` argument and for the
/// template variables. `Err` is an invalid-params message.
pub(super) fn complete(
    site: &Site,
    reference: &Value,
    argument: &str,
    prefix: &str,
) -> Result<Value, String> {
    let candidates: Vec<&str> = match (reference["type"].as_str(), argument) {
        (Some("ref/prompt"), "division") if reference["name"] == BRIEFING => {
            site.divisions.iter().map(|d| d.id.as_str()).collect()
        }
        (Some("ref/prompt"), _) if reference["name"] == BRIEFING => {
            return Err(format!(
                "the prompt {BRIEFING} has no argument `{argument}`"
            ))
        }
        (Some("ref/prompt"), _) => return Err(format!("unknown prompt {}", reference["name"])),
        (Some("ref/resource"), "division_id") if reference["uri"] == DIVISION_TEMPLATE => {
            site.divisions.iter().map(|d| d.id.as_str()).collect()
        }
        (Some("ref/resource"), "slug") if reference["uri"] == PAGE_TEMPLATE => {
            site.pages.iter().map(|p| p.slug.as_str()).collect()
        }
        (Some("ref/resource"), _) => {
            return Err(format!(
                "no completion for `{argument}` of {}",
                reference["uri"]
            ))
        }
        _ => return Err("`ref` must be a ref/prompt or ref/resource".into()),
    };
    let matches: Vec<&str> = candidates
        .into_iter()
        .filter(|candidate| candidate.starts_with(prefix))
        .collect();
    let total = matches.len();
    let values: Vec<&str> = matches.into_iter().take(MAX_COMPLETIONS).collect();
    Ok(
        json!({"completion": {"values": values, "total": total, "hasMore": total > MAX_COMPLETIONS}}),
    )
}
