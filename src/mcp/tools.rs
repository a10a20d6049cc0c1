//! The MCP tools: the same data as `/api/company`, shaped for a model to pick from.
//!
//! Each tool is a [`Tool`], its arguments one typed struct (`deny_unknown_fields`) and its
//! result one serde type; the `inputSchema` and `outputSchema` that `tools/list` publishes
//! are derived from those same types ([`crate::schema`]), so what is checked, what is sent
//! and what is described cannot drift apart. A bad argument is a tool error
//! (`isError: true`) that tells the model what would work.

use std::borrow::Cow;
use std::sync::LazyLock;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Map, Value};

use super::search::{Hit, SearchIndex};
use crate::config::BaseUrl;
use crate::content::{Contact, Division, Page, Site};
use crate::listing::{
    company_document, division_document, division_url, page_document, page_listing, page_url,
    paginate, CompanyDocument, DivisionDocument, PageDocument, PageListing, DEFAULT_LIMIT,
    MAX_LIMIT,
};
use crate::schema::{accepted, standalone};

pub const MAX_SEARCH_RESULTS: usize = 20;
const DEFAULT_SEARCH_RESULTS: usize = 5;
/// Longest query accepted, shared with `GET /api/search`.
const MAX_QUERY_CHARS: usize = crate::listing::MAX_SEARCH_CHARS;

/// The tools, in the order `tools/list` returns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    GetCompany,
    ListDivisions,
    GetDivision,
    ListPages,
    GetPage,
    ListContacts,
    SearchCompanyInfo,
}

impl Tool {
    pub const ALL: [Tool; 7] = [
        Tool::GetCompany,
        Tool::ListDivisions,
        Tool::GetDivision,
        Tool::ListPages,
        Tool::GetPage,
        Tool::ListContacts,
        Tool::SearchCompanyInfo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::GetCompany => "get_company",
            Tool::ListDivisions => "list_divisions",
            Tool::GetDivision => "get_division",
            Tool::ListPages => "list_pages",
            Tool::GetPage => "get_page",
            Tool::ListContacts => "list_contacts",
            Tool::SearchCompanyInfo => "search_company_info",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// "get_company, list_divisions, …", for messages.
    pub fn names() -> String {
        Tool::ALL.map(Tool::name).join(", ")
    }

    fn title(self) -> &'static str {
        match self {
            Tool::GetCompany => "Get everything about the company",
            Tool::ListDivisions => "List divisions",
            Tool::GetDivision => "Get one division",
            Tool::ListPages => "List pages",
            Tool::GetPage => "Get one page",
            Tool::ListContacts => "List contacts",
            Tool::SearchCompanyInfo => "Search company information",
        }
    }

    fn description(self, company: &str) -> String {
        match self {
            Tool::GetCompany => format!("Returns the public record of {company}: company facts, profile and contact, every division, and its pages listed with slug, title, summary and URL (the first {DEFAULT_LIMIT}; continue with list_pages and nextCursor). Same data as GET /api/company. Read a page's text with get_page."),
            Tool::ListDivisions => format!("Lists the divisions (business units) of {company} with id, name and a one-line summary. Use the ids with get_division, list_pages or list_contacts."),
            Tool::GetDivision => format!("Returns one division in full (description, lead, locations, contact), its URL, and the pages that belong to it (the first {DEFAULT_LIMIT}; list_pages with division_id gives the rest)."),
            Tool::ListPages => format!("Lists the published pages of {company} (about, history, careers, press, ...) with slug, title, summary and URL, optionally only those of one division, {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more). Read one with get_page."),
            Tool::GetPage => "Returns one page with its full Markdown text and its URL (to cite), by slug (from list_pages or search_company_info).".to_string(),
            Tool::ListContacts => format!("Lists how to reach {company}: the company's own contact, each division's and each page's (press, careers, security, ...), with email, phone, web and address where known, and the URL of where it is published. Optionally only one division's; {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more)."),
            Tool::SearchCompanyInfo => format!("Full-text search across the divisions, pages and contacts of {company}, ranked (BM25 with stemming; an exact title first, phrases above scattered words). Each result has a snippet, the company:// resource and the URL to cite. Use it when you do not know which division or page holds the answer."),
        }
    }

    /// The input schema, derived from the tool's argument type.
    fn input_schema(self) -> &'static Value {
        &INPUT_SCHEMAS[self as usize]
    }

    fn output_schema(self) -> Value {
        match self {
            Tool::GetCompany => standalone::<CompanyDocument>(),
            Tool::ListDivisions => standalone::<DivisionList>(),
            Tool::GetDivision => standalone::<DivisionDocument>(),
            Tool::ListPages => standalone::<PageList>(),
            Tool::GetPage => standalone::<PageDocument>(),
            Tool::ListContacts => standalone::<ContactList>(),
            Tool::SearchCompanyInfo => standalone::<SearchAnswer>(),
        }
    }
}

/// Input schemas are consulted on every call (to name unknown and missing arguments), so
/// they are derived once.
static INPUT_SCHEMAS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    Tool::ALL
        .iter()
        .map(|tool| match tool {
            Tool::GetCompany | Tool::ListDivisions => accepted::<NoArguments>(),
            Tool::GetDivision => accepted::<DivisionArguments>(),
            Tool::ListPages | Tool::ListContacts => accepted::<ListArguments>(),
            Tool::GetPage => accepted::<PageArguments>(),
            Tool::SearchCompanyInfo => accepted::<SearchArguments>(),
        })
        .map(|mut schema| {
            // Some clients read `properties` without checking it is there.
            if let Some(object) = schema.as_object_mut() {
                object.entry("properties").or_insert_with(|| json!({}));
            }
            schema
        })
        .collect()
});

/// The `tools/list` entries, in [`Tool::ALL`] order.
pub fn definitions(company: &str) -> Vec<Value> {
    Tool::ALL
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name(),
                "title": tool.title(),
                "description": tool.description(company),
                "inputSchema": tool.input_schema(),
                "outputSchema": tool.output_schema(),
                "annotations": {
                    "title": tool.title(),
                    "readOnlyHint": true,
                    "destructiveHint": false,
                    "idempotentHint": true,
                    "openWorldHint": false
                }
            })
        })
        .collect()
}

/// A non-empty text argument of at most `MAX` characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<const MAX: usize>(String);

/// An id or slug argument: any non-empty text (unknown ids are answered with the known ones).
type Id = Text<{ usize::MAX }>;

impl<const MAX: usize> Text<MAX> {
    fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) if text.trim().is_empty() => {
                Err(D::Error::custom("must not be empty"))
            }
            Value::String(text) if MAX < usize::MAX && text.chars().count() > MAX => {
                Err(D::Error::custom(format!("is longer than {MAX} characters")))
            }
            Value::String(text) => Ok(Text(text)),
            _ => Err(D::Error::custom("must be a string")),
        }
    }
}

impl<const MAX: usize> JsonSchema for Text<MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = json_schema!({"type": "string", "minLength": 1});
        if MAX < usize::MAX {
            schema.insert("maxLength".into(), MAX.into());
        }
        schema
    }
}

/// How many items to return: from 1 to `MAX`, `DEFAULT` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit<const DEFAULT: usize, const MAX: usize>(usize);

impl<const DEFAULT: usize, const MAX: usize> Default for Limit<DEFAULT, MAX> {
    fn default() -> Self {
        Limit(DEFAULT)
    }
}

impl<'de, const DEFAULT: usize, const MAX: usize> Deserialize<'de> for Limit<DEFAULT, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)?.as_u64() {
            Some(n) if (1..=MAX as u64).contains(&n) => Ok(Limit(n as usize)),
            _ => Err(D::Error::custom(format!(
                "must be an integer from 1 to {MAX}"
            ))),
        }
    }
}

impl<const DEFAULT: usize, const MAX: usize> JsonSchema for Limit<DEFAULT, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer",
            "minimum": 1,
            "maximum": MAX,
            "default": DEFAULT,
            "description": "How many to return at most."
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArguments {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DivisionArguments {
    /// A division id as returned by list_divisions, e.g. "field-sensors".
    division_id: Id,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArguments {
    /// Only this division's: an id as returned by list_divisions, e.g. "field-sensors".
    division_id: Option<Id>,
    #[serde(default)]
    limit: Limit<DEFAULT_LIMIT, MAX_LIMIT>,
    /// The nextCursor of the previous answer, to continue.
    cursor: Option<Id>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PageArguments {
    /// A page slug as returned by list_pages, e.g. "careers".
    slug: Id,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArguments {
    /// Words to look for, e.g. "calibration certificate".
    query: Text<MAX_QUERY_CHARS>,
    #[serde(default)]
    limit: Limit<DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS>,
    /// The nextCursor of the previous answer, to continue.
    cursor: Option<Id>,
}

/// The arguments of `tool` as `T`, or a message naming what is wrong: an unknown or missing
/// argument (by the input schema derived from `T`), or a value of the wrong kind.
fn arguments<T: DeserializeOwned>(tool: Tool, map: &Map<String, Value>) -> Result<T, String> {
    let schema = tool.input_schema();
    let names = |key: &str| -> Vec<&str> {
        match schema.get(key) {
            Some(Value::Object(properties)) => properties.keys().map(String::as_str).collect(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    };
    let allowed = names("properties");
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
    if let Some(missing) = names("required")
        .into_iter()
        .find(|name| !map.contains_key(*name))
    {
        return Err(format!("missing required argument `{missing}`"));
    }
    serde_path_to_error::deserialize(Value::Object(map.clone()))
        .map_err(|error| format!("argument `{}` {}", error.path(), error.inner()))
}

#[derive(Serialize, JsonSchema)]
pub struct DivisionSummary<'a> {
    id: &'a str,
    name: &'a str,
    summary: &'a str,
}

#[derive(Serialize, JsonSchema)]
struct DivisionList<'a> {
    divisions: Vec<DivisionSummary<'a>>,
}

#[derive(Serialize, JsonSchema)]
pub struct ContactEntry<'a> {
    #[schemars(extend("enum" = ["company", "division", "page"]))]
    scope: &'static str,
    id: &'a str,
    name: &'a str,
    contact: &'a Contact,
    /// Where the contact is published.
    #[schemars(url)]
    url: String,
}

/// Pass it as `cursor` to get the next items; absent on the last page.
type NextCursor = Option<String>;

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
struct PageList<'a> {
    pages: Vec<PageListing<'a>>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ContactList<'a> {
    contacts: Vec<&'a ContactEntry<'a>>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
struct SearchAnswer<'a> {
    query: &'a str,
    /// Best first.
    results: Vec<Hit>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
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

/// The same document as `GET /api/company`.
pub fn get_company(site: &Site, base: &BaseUrl) -> Outcome {
    match company_document(site, base, DEFAULT_LIMIT, None) {
        Ok(document) => to_value(&document),
        Err(error) => Outcome::ToolError(error.to_string()),
    }
}

pub fn list_divisions(site: &Site) -> Outcome {
    to_value(&DivisionList {
        divisions: site.divisions.iter().map(division_summary).collect(),
    })
}

pub fn get_division(site: &Site, base: &BaseUrl, division: &Division) -> Outcome {
    to_value(&division_document(site, base, division, DEFAULT_LIMIT))
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
        .map(|page| &**page)
        .filter(|page| division.is_none() || page.division.as_deref() == division)
        .collect();
    let (pages, next_cursor) = page(&matching, |p| p.slug.as_str(), paging)?;
    Ok(to_value(&PageList {
        pages: pages.iter().map(|page| page_listing(base, page)).collect(),
        next_cursor,
    }))
}

pub fn get_page(base: &BaseUrl, page: &Page) -> Outcome {
    to_value(&page_document(base, page))
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
    let (chosen, next_cursor) = page(&positions, |i| keys[*i].as_str(), paging)?;
    Ok(to_value(&ContactList {
        contacts: chosen.iter().map(|i| &contacts[*i]).collect(),
        next_cursor,
    }))
}

pub fn search(
    site: &Site,
    index: &SearchIndex,
    query: &str,
    paging: Paging<'_>,
) -> Result<Outcome, String> {
    let ranked = index.rank(site, query);
    let (chosen, next_cursor) = page(&ranked, |r| index.key(r), paging)?;
    Ok(to_value(&SearchAnswer {
        query,
        results: index.hits(site, query, chosen),
        next_cursor,
    }))
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
    let tool = Tool::from_name(name)?;
    Some(run(site, base, index, tool, arguments).unwrap_or_else(Outcome::ToolError))
}

fn paging(limit: usize, cursor: &Option<Id>) -> Paging<'_> {
    Paging {
        limit,
        cursor: cursor.as_ref().map(Text::as_str),
    }
}

fn run(
    site: &Site,
    base: &BaseUrl,
    index: &SearchIndex,
    tool: Tool,
    map: &Map<String, Value>,
) -> Result<Outcome, String> {
    Ok(match tool {
        Tool::GetCompany => {
            arguments::<NoArguments>(tool, map)?;
            get_company(site, base)
        }
        Tool::ListDivisions => {
            arguments::<NoArguments>(tool, map)?;
            list_divisions(site)
        }
        Tool::GetDivision => {
            let args: DivisionArguments = arguments(tool, map)?;
            get_division(site, base, find_division(site, args.division_id.as_str())?)
        }
        Tool::ListPages | Tool::ListContacts => {
            let args: ListArguments = arguments(tool, map)?;
            let division = args.division_id.as_ref().map(Text::as_str);
            if let Some(id) = division {
                find_division(site, id)?;
            }
            let paging = paging(args.limit.0, &args.cursor);
            if tool == Tool::ListPages {
                list_pages(site, base, division, paging)?
            } else {
                list_contacts(site, base, division, paging)?
            }
        }
        Tool::GetPage => {
            let args: PageArguments = arguments(tool, map)?;
            get_page(base, find_page(site, args.slug.as_str())?)
        }
        Tool::SearchCompanyInfo => {
            let args: SearchArguments = arguments(tool, map)?;
            search(
                site,
                index,
                args.query.as_str(),
                paging(args.limit.0, &args.cursor),
            )?
        }
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
        .map(|page| &**page)
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
    use std::path::Path;

    fn site() -> Site {
        crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content")).unwrap()
    }

    fn run_tool(site: &Site, name: &str, arguments: Value) -> Outcome {
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        let index = SearchIndex::build(site, base.as_str());
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        call(site, &base, &index, name, &arguments).expect("a known tool")
    }

    #[test]
    fn every_result_matches_the_output_schema_derived_from_its_type() {
        let site = site();
        let division = site.divisions[0].id.clone();
        let slug = site.pages[0].slug.clone();
        for (tool, arguments) in [
            (Tool::GetCompany, json!({})),
            (Tool::ListDivisions, json!({})),
            (Tool::GetDivision, json!({"division_id": division})),
            (Tool::ListPages, json!({"limit": 1})),
            (Tool::ListPages, json!({"division_id": division})),
            (Tool::GetPage, json!({"slug": slug})),
            (Tool::ListContacts, json!({"limit": 2})),
            (
                Tool::SearchCompanyInfo,
                json!({"query": "calibration", "limit": 1}),
            ),
        ] {
            let Outcome::Data(data) = run_tool(&site, tool.name(), arguments.clone()) else {
                panic!("{} {arguments} failed", tool.name())
            };
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&tool.output_schema())
                .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&data)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{} {arguments}: {errors:?}", tool.name());
            let input = jsonschema::validator_for(tool.input_schema()).unwrap();
            assert!(input.is_valid(&arguments), "{} {arguments}", tool.name());
        }
    }

    /// One argument rule a row: the tool, the arguments, and what the model is told.
    #[test]
    fn bad_arguments_are_explained() {
        let site = site();
        for (rule, tool, arguments, told) in [
            (
                "no arguments means none",
                "get_company",
                json!({"verbose": true}),
                "unknown argument `verbose`: this tool takes no arguments",
            ),
            (
                "unknown names list the known",
                "list_pages",
                json!({"page": 2}),
                "this tool takes: cursor, division_id, limit",
            ),
            (
                "required arguments are named",
                "get_division",
                json!({}),
                "missing required argument `division_id`",
            ),
            (
                "ids are strings",
                "get_page",
                json!({"slug": 7}),
                "argument `slug` must be a string",
            ),
            (
                "text is not blank",
                "search_company_info",
                json!({"query": "  "}),
                "argument `query` must not be empty",
            ),
            (
                "queries are bounded",
                "search_company_info",
                json!({"query": "a".repeat(201)}),
                "argument `query` is longer than 200 characters",
            ),
            (
                "limits are bounded",
                "search_company_info",
                json!({"query": "x", "limit": 21}),
                "argument `limit` must be an integer from 1 to 20",
            ),
            (
                "limits are integers",
                "list_pages",
                json!({"limit": 1.5}),
                "must be an integer from 1 to 1000",
            ),
            (
                "cursors are ours",
                "list_pages",
                json!({"cursor": "nope"}),
                "the cursor is not valid",
            ),
            (
                "unknown divisions name the known",
                "list_contacts",
                json!({"division_id": "sales"}),
                "valid division ids include",
            ),
            (
                "unknown pages say how to find one",
                "get_page",
                json!({"slug": "nope"}),
                "search_company_info",
            ),
        ] {
            match run_tool(&site, tool, arguments.clone()) {
                Outcome::ToolError(message) => {
                    assert!(
                        message.contains(told),
                        "{rule}: {tool} {arguments}: {message}"
                    )
                }
                Outcome::Data(data) => panic!("{rule}: {tool} {arguments} answered {data}"),
            }
        }
    }

    #[test]
    fn input_schemas_state_the_rules_the_types_enforce() {
        let search = Tool::SearchCompanyInfo.input_schema();
        assert_eq!(search["additionalProperties"], false);
        assert_eq!(search["required"], json!(["query"]));
        assert_eq!(search["properties"]["query"]["maxLength"], MAX_QUERY_CHARS);
        assert_eq!(search["properties"]["limit"]["maximum"], MAX_SEARCH_RESULTS);
        assert_eq!(
            search["properties"]["limit"]["default"],
            DEFAULT_SEARCH_RESULTS
        );
        let none = Tool::GetCompany.input_schema();
        assert_eq!(none["type"], "object");
        assert_eq!(none["additionalProperties"], false);
    }

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
