//! The MCP tools: the same data as `/api/company`, shaped for a model to pick from.
//!
//! One file per tool, each a [`Tool`]: its name, title, description, the clause it adds to
//! the server's instructions, its argument type and its `Output` type, and `run`, a plain
//! function from the read model and the arguments to the answer. [`TOOLS`] lists them in the
//! order `tools/list` returns them; everything else (the `tools/list` entries, the
//! instructions, which results are prepared once per revision, which calls are rate
//! limited) is derived from that list, so adding a tool is one new file and one line here.
//!
//! The `inputSchema` and `outputSchema` that `tools/list` publishes are derived from the
//! argument and `Output` types ([`crate::schema`]), and arguments are read through those same
//! types, so what is checked, what is sent and what is described cannot drift apart. A bad
//! argument is a tool error (`isError: true`) that tells the model what would work.

mod arguments;
mod get_company;
mod get_division;
mod get_page;
mod list_contacts;
mod list_divisions;
mod list_pages;
mod search_company_info;

use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::content::{Division, Page, Site};
use crate::listing::paginate;
use crate::read_model::ReadModel;
use crate::schema::{accepted, standalone};

pub(crate) use get_division::GetDivision;
pub(crate) use list_contacts::all_contacts;
pub(crate) use list_divisions::ListDivisions;

/// One MCP tool. Implemented by a unit struct in a file of its own, and listed in
/// [`TOOLS`].
pub(crate) trait Tool: Sync + 'static {
    /// What the arguments are read into; its schema is the published `inputSchema`.
    /// `#[serde(deny_unknown_fields)]`, so an argument the schema does not name is refused.
    type Arguments: DeserializeOwned + JsonSchema;
    /// What a call answers; its schema is the published `outputSchema`.
    type Output<'a>: Serialize + JsonSchema;

    /// The name clients call it by.
    const NAME: &'static str;
    const TITLE: &'static str;
    /// What the server's instructions say the tool is for, after its name: for example
    /// "for one page's text" makes "get_page for one page's text".
    const USE_FOR: &'static str;
    /// A search: computed per request rather than prepared, so each call is counted
    /// against the caller's share of searches (`--search-rate-limit`), as the search
    /// routes are ([`crate::routes::Computed::is_search`]). Unlike the routes' flag, it
    /// has no say in waiting for the search index after a start: every `/mcp` call waits.
    const IS_SEARCH: bool = false;

    /// What the tool does, for the model choosing one; `company` is the company's name.
    fn description(company: &str) -> String;

    /// The answer to one call, or a message for the model saying what would work.
    fn run<'a>(
        model: &'a ReadModel,
        arguments: &'a Self::Arguments,
    ) -> Result<Self::Output<'a>, String>;

    /// Argument sets whose results are prepared once per content revision and then
    /// answered from memory: the calls most clients make.
    fn prepared(_site: &Site) -> Vec<Map<String, Value>> {
        Vec::new()
    }
}

/// The tools, in the order `tools/list` returns them.
pub(crate) static TOOLS: [&dyn Registered; 7] = [
    &get_company::GetCompany,
    &ListDivisions,
    &GetDivision,
    &list_pages::ListPages,
    &get_page::GetPage,
    &list_contacts::ListContacts,
    &search_company_info::SearchCompanyInfo,
];

/// A [`Tool`] as the registry holds it: the same, without the types, so that tools of
/// different argument and `Output` types can sit in one list.
pub(crate) trait Registered: Sync {
    fn name(&self) -> &'static str;
    fn is_search(&self) -> bool;
    /// The clause the tool adds to the server's instructions: its name, then what it is for.
    fn instruction(&self) -> String;
    /// The `tools/list` entry.
    fn definition(&self, company: &str) -> Value;
    fn input_schema(&self) -> Value;
    fn output_schema(&self) -> Value;
    /// Runs the tool; `input_schema` is this tool's, derived once by the caller.
    fn call(
        &self,
        model: &ReadModel,
        input_schema: &Value,
        arguments: &Map<String, Value>,
    ) -> Outcome;
    fn prepared(&self, site: &Site) -> Vec<Map<String, Value>>;
}

impl<T: Tool> Registered for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn is_search(&self) -> bool {
        T::IS_SEARCH
    }

    fn instruction(&self) -> String {
        format!("{} {}", T::NAME, T::USE_FOR)
    }

    fn definition(&self, company: &str) -> Value {
        json!({
            "name": T::NAME,
            "title": T::TITLE,
            "description": T::description(company),
            "inputSchema": self.input_schema(),
            "outputSchema": self.output_schema(),
            "annotations": {
                "title": T::TITLE,
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false
            }
        })
    }

    fn input_schema(&self) -> Value {
        let mut schema = accepted::<T::Arguments>();
        // Some clients read `properties` without checking it is there.
        if let Some(object) = schema.as_object_mut() {
            object.entry("properties").or_insert_with(|| json!({}));
        }
        schema
    }

    fn output_schema(&self) -> Value {
        standalone::<T::Output<'static>>()
    }

    fn call(
        &self,
        model: &ReadModel,
        input_schema: &Value,
        arguments: &Map<String, Value>,
    ) -> Outcome {
        let answer = arguments::parse::<T::Arguments>(input_schema, arguments)
            .and_then(|arguments| Outcome::of(T::run(model, &arguments)));
        answer.unwrap_or_else(Outcome::ToolError)
    }

    fn prepared(&self, site: &Site) -> Vec<Map<String, Value>> {
        T::prepared(site)
    }
}

/// Input schemas are consulted on every call (to name unknown and missing arguments), so
/// they are derived once, in [`TOOLS`] order.
static INPUT_SCHEMAS: LazyLock<Vec<Value>> =
    LazyLock::new(|| TOOLS.iter().map(|tool| tool.input_schema()).collect());

/// The place of tool `name` in [`TOOLS`].
pub(crate) fn position(name: &str) -> Option<usize> {
    TOOLS.iter().position(|tool| tool.name() == name)
}

/// "get_company, list_divisions, …", for messages.
pub(crate) fn names() -> String {
    TOOLS.map(|tool| tool.name()).join(", ")
}

/// The `tools/list` entries, in [`TOOLS`] order.
pub(crate) fn definitions(company: &str) -> Vec<Value> {
    TOOLS.iter().map(|tool| tool.definition(company)).collect()
}

/// The server's instructions, which name every tool and what it is for.
pub(crate) fn instructions(company: &str) -> String {
    let clauses: Vec<String> = TOOLS.iter().map(|tool| tool.instruction()).collect();
    let Some((last, rest)) = clauses.split_last() else {
        return format!("Public, read-only information about {company}.");
    };
    format!(
        "Public, read-only information about {company}. Call {}, and {last}. The same data is available as company:// resources. No authentication is needed.",
        rest.join(", ")
    )
}

/// Runs the tool at `position` in [`TOOLS`] with `arguments`.
pub(crate) fn call_at(
    position: usize,
    model: &ReadModel,
    arguments: &Map<String, Value>,
) -> Outcome {
    TOOLS[position].call(model, &INPUT_SCHEMAS[position], arguments)
}

/// Runs tool `name` with `arguments`. `None` for an unknown tool (a protocol error);
/// bad arguments are a tool error the model can act on.
#[cfg(test)]
fn call(model: &ReadModel, name: &str, arguments: &Map<String, Value>) -> Option<Outcome> {
    position(name).map(|position| call_at(position, model, arguments))
}

/// What a tool call produced: an answer serialized as JSON, or a message for the model.
pub(crate) enum Outcome {
    Data(String),
    ToolError(String),
}

impl Outcome {
    fn of<T: Serialize>(answer: Result<T, String>) -> Result<Outcome, String> {
        let answer = answer?;
        serde_json::to_string(&answer)
            .map(Outcome::Data)
            .map_err(|error| format!("internal error: {error}"))
    }

    /// The `tools/call` result (legacy era's shape): the answer as text and as
    /// `structuredContent`, or the message with `isError`.
    pub(crate) fn result_bytes(&self) -> Vec<u8> {
        let literal = |text: &str| serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
        match self {
            Outcome::Data(data) => format!(
                "{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"structuredContent\":{data},\"isError\":false}}",
                literal(data)
            ),
            Outcome::ToolError(message) => format!(
                "{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"isError\":true}}",
                literal(message)
            ),
        }
        .into_bytes()
    }
}

/// Pass it as `cursor` to get the next items; absent on the last page.
type NextCursor = Option<String>;

/// One page of `items` after `cursor`, keyed by `key`, and the cursor of the next.
fn page<'a, T, K: AsRef<str>>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
    limit: usize,
    cursor: Option<&arguments::Id>,
) -> Result<(&'a [T], NextCursor), String> {
    paginate(items, key, limit, cursor.map(arguments::Text::as_str))
        .map_err(|e| e.description().to_string())
}

/// At most this many valid ids are named in an error; beyond that, the model is told how
/// to find the one it wants.
pub(crate) const MAX_IDS_IN_ERRORS: usize = 20;

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

pub(crate) fn find_page<'a>(site: &'a Site, slug: &str) -> Result<&'a Page, String> {
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

pub(crate) fn find_division<'a>(site: &'a Site, id: &str) -> Result<&'a Division, String> {
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
    use crate::config::BaseUrl;
    use std::path::Path;
    use std::sync::Arc;

    fn model() -> ReadModel {
        let site =
            crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content")).unwrap();
        let base = BaseUrl::parse("https://info.example.com").unwrap();
        ReadModel::build(Arc::new(site), &base)
    }

    fn run_tool(model: &ReadModel, name: &str, arguments: &Value) -> Outcome {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        call(model, name, arguments).expect("a known tool")
    }

    #[test]
    fn every_result_matches_the_output_schema_derived_from_its_type() {
        let model = model();
        let division = model.site().divisions[0].id.clone();
        let slug = model.site().pages[0].slug.clone();
        let calls = [
            ("get_company", json!({})),
            ("list_divisions", json!({})),
            ("get_division", json!({"division_id": division})),
            ("list_pages", json!({"limit": 1})),
            ("list_pages", json!({"division_id": division})),
            ("get_page", json!({"slug": slug})),
            ("list_contacts", json!({"limit": 2})),
            (
                "list_contacts",
                json!({"limit": 2, "division_id": division}),
            ),
            (
                "search_company_info",
                json!({"query": "calibration", "limit": 1}),
            ),
        ];
        for tool in TOOLS {
            assert!(
                calls.iter().any(|(name, _)| *name == tool.name()),
                "{} is not called here",
                tool.name()
            );
        }
        for (name, arguments) in calls {
            let tool = TOOLS[position(name).unwrap()];
            let Outcome::Data(data) = run_tool(&model, name, &arguments) else {
                panic!("{name} {arguments} failed")
            };
            let data: Value = serde_json::from_str(&data).unwrap();
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&tool.output_schema())
                .unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&data)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{name} {arguments}: {errors:?}");
            let input = jsonschema::validator_for(&tool.input_schema()).unwrap();
            assert!(input.is_valid(&arguments), "{name} {arguments}");
        }
    }

    #[test]
    fn a_division_s_contacts_page_like_the_rest() {
        let model = model();
        let all = |arguments: Value| -> Vec<Value> {
            let Outcome::Data(data) = run_tool(&model, "list_contacts", &arguments) else {
                panic!("list_contacts {arguments} failed")
            };
            let data: Value = serde_json::from_str(&data).unwrap();
            data["contacts"].as_array().unwrap().clone()
        };
        let everything = all(json!({"limit": 1000}));
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut arguments = json!({"limit": 2});
            if let Some(cursor) = &cursor {
                arguments["cursor"] = cursor.clone().into();
            }
            let Outcome::Data(data) = run_tool(&model, "list_contacts", &arguments) else {
                panic!("list_contacts {arguments} failed")
            };
            let data: Value = serde_json::from_str(&data).unwrap();
            paged.extend(data["contacts"].as_array().unwrap().iter().cloned());
            match data["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
        }
        assert!(everything.len() > 2);
        assert_eq!(paged, everything);
    }

    /// One argument rule a row: the tool, the arguments, and what the model is told.
    #[test]
    fn bad_arguments_are_explained() {
        let model = model();
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
                "ids are bounded",
                "get_division",
                json!({"division_id": "x".repeat(arguments::MAX_ID_CHARS + 1)}),
                "argument `division_id` is longer than 1000 characters",
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
            match run_tool(&model, tool, &arguments) {
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
    fn a_tool_without_arguments_publishes_an_empty_closed_object() {
        let none = get_company::GetCompany.input_schema();
        assert_eq!(none["type"], "object");
        assert_eq!(none["additionalProperties"], false);
        assert_eq!(none["properties"], json!({}));
    }

    #[test]
    fn the_instructions_name_every_tool_once() {
        let text = instructions("Acme");
        for tool in TOOLS {
            assert_eq!(text.matches(&tool.instruction()).count(), 1, "{text}");
        }
        // The last clause follows "and".
        let last = TOOLS[TOOLS.len() - 1].instruction();
        assert!(text.contains(&format!(", and {last}.")), "{text}");
    }

    #[test]
    fn tool_names_are_unique() {
        let mut names: Vec<&str> = TOOLS.iter().map(|tool| tool.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
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
