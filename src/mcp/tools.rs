//! The MCP tools: the same data as `/api/company`, shaped for a model to pick from.
//!
//! Each tool has an object `inputSchema` (with `additionalProperties: false`), an object
//! `outputSchema`, read-only annotations, and returns `structuredContent` that conforms to its
//! output schema plus the same JSON as a text block. Arguments are checked here, by hand,
//! against the same rules the input schema states; a bad value is a tool error
//! (`isError: true`) that tells the model what would work.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::search::{Hit, SearchIndex};
use crate::content::schema::model_schemas;
use crate::content::{Contact, Division, Page, Site};

pub const MAX_SEARCH_RESULTS: u64 = 20;
const DEFAULT_SEARCH_RESULTS: u64 = 5;
const MAX_QUERY_CHARS: usize = 200;

/// Tool names in the order `tools/list` returns them.
pub const TOOL_NAMES: [&str; 7] = [
    "get_company",
    "list_divisions",
    "get_division",
    "list_pages",
    "get_page",
    "list_contacts",
    "search_company_info",
];

fn defs() -> Value {
    Value::Object(model_schemas("#/$defs/"))
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

fn division_summary_schema() -> Value {
    json!({
        "type": "object",
        "required": ["id", "name", "summary"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "summary": {"type": "string"}
        }
    })
}

fn page_summary_schema() -> Value {
    json!({
        "type": "object",
        "required": ["slug", "title", "summary"],
        "properties": {
            "slug": {"type": "string"},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "division": {"type": "string"},
            "updated": {"type": "string"}
        }
    })
}

fn with_defs(mut schema: Value) -> Value {
    schema["$defs"] = defs();
    schema
}

/// The `tools/list` entries, in [`TOOL_NAMES`] order.
pub fn definitions(company: &str) -> Vec<Value> {
    let annotations = |title: &str| {
        json!({
            "title": title,
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false
        })
    };
    let division_id = json!({"type": "string", "minLength": 1, "description": "A division id as returned by list_divisions, e.g. \"field-sensors\"."});
    let tool = |name: &str, title: &str, description: String, input: Value, output: Value| {
        json!({
            "name": name,
            "title": title,
            "description": description,
            "inputSchema": input,
            "outputSchema": output,
            "annotations": annotations(title)
        })
    };
    vec![
        tool(
            "get_company",
            "Get everything about the company",
            format!("Returns the complete public record of {company}: company facts and contact, every division and every page with its Markdown text. Same data as GET /api/company. Use it when you need broad context; use the narrower tools for one item."),
            object_schema(json!({}), &[]),
            with_defs(json!({
                "type": "object",
                "required": ["company", "divisions", "pages"],
                "properties": {
                    "company": {"$ref": "#/$defs/Company"},
                    "divisions": {"type": "array", "items": {"$ref": "#/$defs/Division"}},
                    "pages": {"type": "array", "items": {"$ref": "#/$defs/Page"}}
                }
            })),
        ),
        tool(
            "list_divisions",
            "List divisions",
            format!("Lists the divisions (business units) of {company} with id, name and a one-line summary. Use the ids with get_division, list_pages or list_contacts."),
            object_schema(json!({}), &[]),
            object_schema(json!({"divisions": {"type": "array", "items": division_summary_schema()}}), &["divisions"]),
        ),
        tool(
            "get_division",
            "Get one division",
            "Returns one division in full (description, lead, locations, contact) and the pages that belong to it.".to_string(),
            object_schema(json!({"division_id": division_id.clone()}), &["division_id"]),
            with_defs(object_schema(
                json!({
                    "division": {"$ref": "#/$defs/Division"},
                    "pages": {"type": "array", "items": page_summary_schema()}
                }),
                &["division", "pages"],
            )),
        ),
        tool(
            "list_pages",
            "List pages",
            format!("Lists the published pages of {company} (about, history, careers, press, ...) with slug, title and summary, optionally only those of one division. Read one with get_page."),
            object_schema(json!({"division_id": division_id.clone()}), &[]),
            object_schema(json!({"pages": {"type": "array", "items": page_summary_schema()}}), &["pages"]),
        ),
        tool(
            "get_page",
            "Get one page",
            "Returns one page with its full Markdown text, by slug (from list_pages).".to_string(),
            object_schema(json!({"slug": {"type": "string", "minLength": 1, "description": "A page slug as returned by list_pages, e.g. \"careers\"."}}), &["slug"]),
            with_defs(object_schema(json!({"page": {"$ref": "#/$defs/Page"}}), &["page"])),
        ),
        tool(
            "list_contacts",
            "List contacts",
            format!("Lists how to reach {company}: the company's own contact, each division's and each page's (press, careers, security, ...), with email, phone, web and address where known. Optionally only one division's."),
            object_schema(json!({"division_id": division_id}), &[]),
            with_defs(object_schema(
                json!({"contacts": {"type": "array", "items": {
                    "type": "object",
                    "required": ["scope", "id", "name", "contact"],
                    "properties": {
                        "scope": {"type": "string", "enum": ["company", "division", "page"]},
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "contact": {"$ref": "#/$defs/Contact"}
                    }
                }}}),
                &["contacts"],
            )),
        ),
        tool(
            "search_company_info",
            "Search company information",
            format!("Full-text search across the divisions, pages and contacts of {company}, best matches first. Use it when you do not know which division or page holds the answer."),
            object_schema(
                json!({
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "Words to look for, e.g. \"calibration certificate\"."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "default": DEFAULT_SEARCH_RESULTS}
                }),
                &["query"],
            ),
            object_schema(
                json!({
                    "query": {"type": "string"},
                    "results": {"type": "array", "items": {
                        "type": "object",
                        "required": ["kind", "id", "title", "snippet", "uri", "score"],
                        "properties": {
                            "kind": {"type": "string", "enum": ["division", "page", "contact"]},
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "snippet": {"type": "string"},
                            "uri": {"type": "string"},
                            "score": {"type": "number"}
                        }
                    }}
                }),
                &["query", "results"],
            ),
        ),
    ]
}

#[derive(Serialize)]
pub struct DivisionSummary<'a> {
    id: &'a str,
    name: &'a str,
    summary: &'a str,
}

#[derive(Serialize)]
pub struct PageSummary<'a> {
    slug: &'a str,
    title: &'a str,
    summary: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    division: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<&'a str>,
}

#[derive(Serialize)]
pub struct ContactEntry<'a> {
    scope: &'static str,
    id: &'a str,
    name: &'a str,
    contact: &'a Contact,
}

fn division_summary(division: &Division) -> DivisionSummary<'_> {
    DivisionSummary {
        id: &division.id,
        name: &division.name,
        summary: &division.summary,
    }
}

fn page_summary(page: &Page) -> PageSummary<'_> {
    PageSummary {
        slug: &page.slug,
        title: &page.title,
        summary: &page.summary,
        division: page.division.as_deref(),
        updated: page.updated.as_deref(),
    }
}

/// What a tool call produced: structured data, or a message for the model.
pub enum Outcome {
    Data(Value),
    ToolError(String),
}

fn to_value<T: Serialize>(value: &T) -> Outcome {
    match serde_json::to_value(value) {
        Ok(value) => Outcome::Data(value),
        Err(error) => Outcome::ToolError(format!("internal error: {error}")),
    }
}

pub fn get_company(site: &Site) -> Outcome {
    to_value(&json!({
        "company": site.company,
        "divisions": site.divisions,
        "pages": site.pages,
    }))
}

pub fn list_divisions(site: &Site) -> Outcome {
    let divisions: Vec<_> = site.divisions.iter().map(division_summary).collect();
    to_value(&json!({ "divisions": divisions }))
}

pub fn get_division(site: &Site, division: &Division) -> Outcome {
    let pages: Vec<_> = site
        .pages
        .iter()
        .filter(|page| page.division.as_deref() == Some(division.id.as_str()))
        .map(page_summary)
        .collect();
    to_value(&json!({ "division": division, "pages": pages }))
}

pub fn list_pages(site: &Site, division: Option<&str>) -> Outcome {
    let pages: Vec<_> = site
        .pages
        .iter()
        .filter(|page| division.is_none() || page.division.as_deref() == division)
        .map(page_summary)
        .collect();
    to_value(&json!({ "pages": pages }))
}

pub fn get_page(page: &Page) -> Outcome {
    to_value(&json!({ "page": page }))
}

pub fn list_contacts(site: &Site, division: Option<&str>) -> Outcome {
    let mut contacts = Vec::new();
    if division.is_none() {
        contacts.push(ContactEntry {
            scope: "company",
            id: "company",
            name: &site.company.name,
            contact: &site.company.contact,
        });
    }
    for entry in &site.divisions {
        if division.is_some_and(|id| id != entry.id) {
            continue;
        }
        if let Some(contact) = &entry.contact {
            contacts.push(ContactEntry {
                scope: "division",
                id: &entry.id,
                name: &entry.name,
                contact,
            });
        }
    }
    for page in &site.pages {
        if division.is_some_and(|id| page.division.as_deref() != Some(id)) {
            continue;
        }
        if let Some(contact) = &page.contact {
            contacts.push(ContactEntry {
                scope: "page",
                id: &page.slug,
                name: &page.title,
                contact,
            });
        }
    }
    to_value(&json!({ "contacts": contacts }))
}

pub fn search(site: &Site, index: &SearchIndex, query: &str, limit: usize) -> Outcome {
    let results: Vec<Hit> = index.search(site, query, limit);
    to_value(&json!({ "query": query, "results": results }))
}

/// Arguments, checked against the tool's input schema by hand: only the listed names,
/// each of the right type.
pub struct Arguments<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Arguments<'a> {
    pub fn new(map: &'a Map<String, Value>, allowed: &[&str]) -> Result<Arguments<'a>, String> {
        if let Some(unknown) = map.keys().find(|key| !allowed.contains(&key.as_str())) {
            return Err(if allowed.is_empty() {
                format!("unknown argument `{unknown}`: this tool takes no arguments")
            } else {
                format!(
                    "unknown argument `{unknown}`; this tool takes: {}",
                    allowed.join(", ")
                )
            });
        }
        Ok(Arguments { map })
    }

    pub fn string(&self, name: &str, required: bool) -> Result<Option<&'a str>, String> {
        match self.map.get(name) {
            None if required => Err(format!("missing required argument `{name}`")),
            None => Ok(None),
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.as_str())),
            Some(Value::String(_)) => Err(format!("argument `{name}` must not be empty")),
            Some(_) => Err(format!("argument `{name}` must be a string")),
        }
    }

    pub fn integer(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
        match self.map.get(name) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(format!(
                    "argument `{name}` must be an integer from {min} to {max}"
                )),
            },
        }
    }
}

/// Runs tool `name` with `arguments`. `None` for an unknown tool (a protocol error);
/// bad arguments are a tool error the model can act on.
pub fn call(
    site: &Site,
    index: &SearchIndex,
    name: &str,
    arguments: &Map<String, Value>,
) -> Option<Outcome> {
    if !TOOL_NAMES.contains(&name) {
        return None;
    }
    Some(run(site, index, name, arguments).unwrap_or_else(Outcome::ToolError))
}

fn run(
    site: &Site,
    index: &SearchIndex,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Outcome, String> {
    Ok(match name {
        "get_company" => {
            Arguments::new(arguments, &[])?;
            get_company(site)
        }
        "list_divisions" => {
            Arguments::new(arguments, &[])?;
            list_divisions(site)
        }
        "get_division" => {
            let args = Arguments::new(arguments, &["division_id"])?;
            let id = args.string("division_id", true)?.unwrap_or_default();
            get_division(site, find_division(site, id)?)
        }
        "list_pages" => {
            let args = Arguments::new(arguments, &["division_id"])?;
            let division = args.string("division_id", false)?;
            if let Some(id) = division {
                find_division(site, id)?;
            }
            list_pages(site, division)
        }
        "get_page" => {
            let args = Arguments::new(arguments, &["slug"])?;
            let slug = args.string("slug", true)?.unwrap_or_default();
            get_page(find_page(site, slug)?)
        }
        "list_contacts" => {
            let args = Arguments::new(arguments, &["division_id"])?;
            let division = args.string("division_id", false)?;
            if let Some(id) = division {
                find_division(site, id)?;
            }
            list_contacts(site, division)
        }
        "search_company_info" => {
            let args = Arguments::new(arguments, &["query", "limit"])?;
            let query = args.string("query", true)?.unwrap_or_default();
            if query.chars().count() > MAX_QUERY_CHARS {
                return Err(format!(
                    "argument `query` is longer than {MAX_QUERY_CHARS} characters"
                ));
            }
            let limit = args
                .integer("limit", 1, MAX_SEARCH_RESULTS)?
                .unwrap_or(DEFAULT_SEARCH_RESULTS);
            search(site, index, query, limit as usize)
        }
        other => return Err(format!("unknown tool `{other}`")),
    })
}

pub fn find_page<'a>(site: &'a Site, slug: &str) -> Result<&'a Page, String> {
    site.pages
        .iter()
        .find(|page| page.slug == slug)
        .ok_or_else(|| {
            format!(
                "unknown page `{slug}`; valid slugs: {}",
                site.pages
                    .iter()
                    .map(|p| p.slug.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

pub fn find_division<'a>(site: &'a Site, id: &str) -> Result<&'a Division, String> {
    site.divisions.iter().find(|d| d.id == id).ok_or_else(|| {
        format!(
            "unknown division `{id}`; valid division ids: {}",
            site.divisions
                .iter()
                .map(|d| d.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
