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
use crate::config::BaseUrl;
use crate::content::schema::model_schemas;
use crate::content::{Contact, Division, Page, Site};
use crate::listing::{
    company_document, division_url, page_listing, page_url, paginate, PageListing, DEFAULT_LIMIT,
    MAX_LIMIT,
};

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

/// A page in a list: the same `PageListing` the read API publishes (in `$defs`).
fn page_summary_schema() -> Value {
    json!({"$ref": "#/$defs/PageListing"})
}

/// `limit` and `cursor` for a tool that lists, as input schema properties.
fn paging_inputs(default: usize, max: usize) -> Value {
    json!({
        "limit": {"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": "How many to return at most."},
        "cursor": {"type": "string", "minLength": 1, "description": "The nextCursor of the previous answer, to continue."}
    })
}

fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

const NEXT_CURSOR: &str = "nextCursor";

fn next_cursor_schema() -> Value {
    json!({"type": "string", "description": "Pass as `cursor` to get the next items; absent on the last page."})
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
            format!("Returns the public record of {company}: company facts, profile and contact, every division, and its pages listed with slug, title, summary and URL (the first {DEFAULT_LIMIT}; continue with list_pages and nextCursor). Same data as GET /api/company. Read a page's text with get_page."),
            object_schema(json!({}), &[]),
            with_defs(json!({
                "type": "object",
                "required": ["company", "divisions", "pages"],
                "properties": {
                    "company": {"$ref": "#/$defs/Company"},
                    "divisions": {"type": "array", "items": {"$ref": "#/$defs/Division"}},
                    "pages": {"type": "array", "items": page_summary_schema()},
                    "next_cursor": next_cursor_schema()
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
            "Returns one division in full (description, lead, locations, contact), its URL, and the pages that belong to it (the first {DEFAULT_LIMIT}; list_pages with division_id gives the rest).".replace("{DEFAULT_LIMIT}", &DEFAULT_LIMIT.to_string()),
            object_schema(json!({"division_id": division_id.clone()}), &["division_id"]),
            with_defs(object_schema(
                json!({
                    "division": {"$ref": "#/$defs/Division"},
                    "url": {"type": "string", "format": "uri"},
                    "pages": {"type": "array", "items": page_summary_schema()}
                }),
                &["division", "url", "pages"],
            )),
        ),
        tool(
            "list_pages",
            "List pages",
            format!("Lists the published pages of {company} (about, history, careers, press, ...) with slug, title, summary and URL, optionally only those of one division, {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more). Read one with get_page."),
            object_schema(merged(json!({"division_id": division_id.clone()}), paging_inputs(DEFAULT_LIMIT, MAX_LIMIT)), &[]),
            with_defs(json!({
                "type": "object",
                "required": ["pages"],
                "additionalProperties": false,
                "properties": {"pages": {"type": "array", "items": page_summary_schema()}, "nextCursor": next_cursor_schema()}
            })),
        ),
        tool(
            "get_page",
            "Get one page",
            "Returns one page with its full Markdown text and its URL (to cite), by slug (from list_pages or search_company_info).".to_string(),
            object_schema(json!({"slug": {"type": "string", "minLength": 1, "description": "A page slug as returned by list_pages, e.g. \"careers\"."}}), &["slug"]),
            with_defs(object_schema(json!({"page": {"$ref": "#/$defs/Page"}, "url": {"type": "string", "format": "uri"}}), &["page", "url"])),
        ),
        tool(
            "list_contacts",
            "List contacts",
            format!("Lists how to reach {company}: the company's own contact, each division's and each page's (press, careers, security, ...), with email, phone, web and address where known, and the URL of where it is published. Optionally only one division's; {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more)."),
            object_schema(merged(json!({"division_id": division_id}), paging_inputs(DEFAULT_LIMIT, MAX_LIMIT)), &[]),
            with_defs(json!({
                "type": "object",
                "required": ["contacts"],
                "additionalProperties": false,
                "properties": {
                    "contacts": {"type": "array", "items": {
                        "type": "object",
                        "required": ["scope", "id", "name", "contact", "url"],
                        "properties": {
                            "scope": {"type": "string", "enum": ["company", "division", "page"]},
                            "id": {"type": "string"},
                            "name": {"type": "string"},
                            "contact": {"$ref": "#/$defs/Contact"},
                            "url": {"type": "string", "format": "uri"}
                        }
                    }},
                    "nextCursor": next_cursor_schema()
                }
            })),
        ),
        tool(
            "search_company_info",
            "Search company information",
            format!("Full-text search across the divisions, pages and contacts of {company}, ranked (BM25 with stemming; an exact title first, phrases above scattered words). Each result has a snippet, the company:// resource and the URL to cite. Use it when you do not know which division or page holds the answer."),
            object_schema(
                merged(
                    json!({"query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "Words to look for, e.g. \"calibration certificate\"."}}),
                    paging_inputs(DEFAULT_SEARCH_RESULTS as usize, MAX_SEARCH_RESULTS as usize),
                ),
                &["query"],
            ),
            json!({
                "type": "object",
                "required": ["query", "results"],
                "additionalProperties": false,
                "properties": {
                    "query": {"type": "string"},
                    "results": {"type": "array", "items": {
                        "type": "object",
                        "required": ["kind", "id", "title", "snippet", "uri", "url", "score"],
                        "properties": {
                            "kind": {"type": "string", "enum": ["division", "page", "contact"]},
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "snippet": {"type": "string"},
                            "uri": {"type": "string"},
                            "url": {"type": "string", "format": "uri"},
                            "score": {"type": "number"}
                        }
                    }},
                    "nextCursor": next_cursor_schema()
                }
            }),
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
pub struct ContactEntry<'a> {
    scope: &'static str,
    id: &'a str,
    name: &'a str,
    contact: &'a Contact,
    url: String,
}

fn division_summary(division: &Division) -> DivisionSummary<'_> {
    DivisionSummary {
        id: &division.id,
        name: &division.name,
        summary: &division.summary,
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

/// `data` with `nextCursor` added when there is more.
fn with_next(mut data: Value, next: Option<String>) -> Value {
    if let (Some(object), Some(next)) = (data.as_object_mut(), next) {
        object.insert(NEXT_CURSOR.into(), Value::String(next));
    }
    data
}

/// Where to continue in a list, as the tool arguments say.
#[derive(Debug, Clone, Copy)]
pub struct Paging<'a> {
    pub limit: usize,
    pub cursor: Option<&'a str>,
}

fn page<'a, T, K: AsRef<str>>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
    paging: Paging<'_>,
) -> Result<(&'a [T], Option<String>), String> {
    paginate(items, key, paging.limit, paging.cursor).map_err(|e| e.description().to_string())
}

fn listings<'a>(base: &BaseUrl, pages: impl Iterator<Item = &'a Page>) -> Vec<PageListing<'a>> {
    pages.map(|page| page_listing(base, page)).collect()
}

/// The same document as `GET /api/company`.
pub fn get_company(site: &Site, base: &BaseUrl) -> Outcome {
    match company_document(site, base, DEFAULT_LIMIT, None) {
        Ok(document) => to_value(&document),
        Err(error) => Outcome::ToolError(error.to_string()),
    }
}

pub fn list_divisions(site: &Site) -> Outcome {
    let divisions: Vec<_> = site.divisions.iter().map(division_summary).collect();
    to_value(&json!({ "divisions": divisions }))
}

pub fn get_division(site: &Site, base: &BaseUrl, division: &Division) -> Outcome {
    let pages: Vec<_> = site
        .pages
        .iter()
        .filter(|page| page.division.as_deref() == Some(division.id.as_str()))
        .take(DEFAULT_LIMIT)
        .map(|page| page_listing(base, page))
        .collect();
    to_value(&json!({
        "division": division,
        "url": division_url(base, &division.id),
        "pages": pages,
    }))
}

pub fn list_pages(
    site: &Site,
    base: &BaseUrl,
    division: Option<&str>,
    paging: Paging<'_>,
) -> Result<Outcome, String> {
    let matching: Vec<&Page> = site
        .pages
        .iter()
        .filter(|page| division.is_none() || page.division.as_deref() == division)
        .collect();
    let (pages, next) = page(&matching, |p| p.slug.as_str(), paging)?;
    Ok(to_value(&with_next(
        json!({ "pages": listings(base, pages.iter().copied()) }),
        next,
    )))
}

pub fn get_page(base: &BaseUrl, page: &Page) -> Outcome {
    to_value(&json!({ "page": page, "url": page_url(base, &page.slug) }))
}

pub fn list_contacts(
    site: &Site,
    base: &BaseUrl,
    division: Option<&str>,
    paging: Paging<'_>,
) -> Result<Outcome, String> {
    let mut contacts = Vec::new();
    if division.is_none() {
        contacts.push(ContactEntry {
            scope: "company",
            id: "company",
            name: &site.company.name,
            contact: &site.company.contact,
            url: base.join("/#contact"),
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
                url: division_url(base, &entry.id),
            });
        }
    }
    for entry in &site.pages {
        if division.is_some_and(|id| entry.division.as_deref() != Some(id)) {
            continue;
        }
        if let Some(contact) = &entry.contact {
            contacts.push(ContactEntry {
                scope: "page",
                id: &entry.slug,
                name: &entry.title,
                contact,
                url: page_url(base, &entry.slug),
            });
        }
    }
    // `scope:id` is unique: a division and a page may share an id.
    let keys: Vec<String> = contacts
        .iter()
        .map(|c| format!("{}:{}", c.scope, c.id))
        .collect();
    let positions: Vec<usize> = (0..contacts.len()).collect();
    let (chosen, next) = page(&positions, |i| keys[*i].as_str(), paging)?;
    let chosen: Vec<&ContactEntry<'_>> = chosen.iter().map(|i| &contacts[*i]).collect();
    Ok(to_value(&with_next(json!({ "contacts": chosen }), next)))
}

pub fn search(
    site: &Site,
    index: &SearchIndex,
    query: &str,
    paging: Paging<'_>,
) -> Result<Outcome, String> {
    let ranked = index.rank(site, query);
    let (chosen, next) = page(&ranked, |r| index.key(r), paging)?;
    let results: Vec<Hit> = index.hits(site, query, chosen);
    Ok(to_value(&with_next(
        json!({ "query": query, "results": results }),
        next,
    )))
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

    /// `limit` (from 1 to `max`, `default` when absent) and `cursor`.
    pub fn paging(&self, default: usize, max: usize) -> Result<Paging<'a>, String> {
        Ok(Paging {
            limit: self
                .integer("limit", 1, max as u64)?
                .map_or(default, |n| n as usize),
            cursor: self.string("cursor", false)?,
        })
    }
}

/// Runs tool `name` with `arguments`. `None` for an unknown tool (a protocol error);
/// bad arguments are a tool error the model can act on.
pub fn call(
    site: &Site,
    base: &BaseUrl,
    index: &SearchIndex,
    name: &str,
    arguments: &Map<String, Value>,
) -> Option<Outcome> {
    if !TOOL_NAMES.contains(&name) {
        return None;
    }
    Some(run(site, base, index, name, arguments).unwrap_or_else(Outcome::ToolError))
}

fn run(
    site: &Site,
    base: &BaseUrl,
    index: &SearchIndex,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Outcome, String> {
    Ok(match name {
        "get_company" => {
            Arguments::new(arguments, &[])?;
            get_company(site, base)
        }
        "list_divisions" => {
            Arguments::new(arguments, &[])?;
            list_divisions(site)
        }
        "get_division" => {
            let args = Arguments::new(arguments, &["division_id"])?;
            let id = args.string("division_id", true)?.unwrap_or_default();
            get_division(site, base, find_division(site, id)?)
        }
        "list_pages" => {
            let args = Arguments::new(arguments, &["division_id", "limit", "cursor"])?;
            let division = args.string("division_id", false)?;
            if let Some(id) = division {
                find_division(site, id)?;
            }
            list_pages(site, base, division, args.paging(DEFAULT_LIMIT, MAX_LIMIT)?)?
        }
        "get_page" => {
            let args = Arguments::new(arguments, &["slug"])?;
            let slug = args.string("slug", true)?.unwrap_or_default();
            get_page(base, find_page(site, slug)?)
        }
        "list_contacts" => {
            let args = Arguments::new(arguments, &["division_id", "limit", "cursor"])?;
            let division = args.string("division_id", false)?;
            if let Some(id) = division {
                find_division(site, id)?;
            }
            list_contacts(site, base, division, args.paging(DEFAULT_LIMIT, MAX_LIMIT)?)?
        }
        "search_company_info" => {
            let args = Arguments::new(arguments, &["query", "limit", "cursor"])?;
            let query = args.string("query", true)?.unwrap_or_default();
            if query.chars().count() > MAX_QUERY_CHARS {
                return Err(format!(
                    "argument `query` is longer than {MAX_QUERY_CHARS} characters"
                ));
            }
            let paging =
                args.paging(DEFAULT_SEARCH_RESULTS as usize, MAX_SEARCH_RESULTS as usize)?;
            search(site, index, query, paging)?
        }
        other => return Err(format!("unknown tool `{other}`")),
    })
}

/// At most this many valid ids are named in an error; beyond that, the model is told how
/// to find the one it wants.
pub const MAX_IDS_IN_ERRORS: usize = 20;

/// "a, b, c" for the first [`MAX_IDS_IN_ERRORS`] of `ids`, and how many more there are.
fn some_of<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> String {
    let total = ids.len();
    let shown: Vec<&str> = ids.take(MAX_IDS_IN_ERRORS).collect();
    let mut text = shown.join(", ");
    if total > shown.len() {
        text.push_str(&format!(" and {} more", total - shown.len()));
    }
    text
}

pub fn find_page<'a>(site: &'a Site, slug: &str) -> Result<&'a Page, String> {
    site.pages
        .iter()
        .find(|page| page.slug == slug)
        .ok_or_else(|| {
            format!(
                "unknown page `{slug}`; valid slugs include: {}. Find the one you want with search_company_info or list_pages.",
                some_of(site.pages.iter().map(|p| p.slug.as_str()))
            )
        })
}

pub fn find_division<'a>(site: &'a Site, id: &str) -> Result<&'a Division, String> {
    site.divisions.iter().find(|d| d.id == id).ok_or_else(|| {
        format!(
            "unknown division `{id}`; valid division ids include: {}. See them all with list_divisions.",
            some_of(site.divisions.iter().map(|d| d.id.as_str()))
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_at_most_twenty_ids_and_how_to_find_the_rest() {
        let ids: Vec<String> = (0..30).map(|i| format!("id-{i}")).collect();
        let text = some_of(ids.iter().map(String::as_str));
        assert_eq!(text.matches("id-").count(), MAX_IDS_IN_ERRORS);
        assert!(text.ends_with("and 10 more"), "{text}");
        let few = some_of(["a", "b"].into_iter());
        assert_eq!(few, "a, b");
    }
}
