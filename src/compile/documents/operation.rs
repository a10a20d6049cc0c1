//! The pieces of an OpenAPI operation, shared by the code that describes each endpoint.
//!
//! An endpoint's operation is written beside the code that makes its answer (each document
//! family's `operations`, and `read_api` for the computed reads), so adding an endpoint
//! touches its own file, its row in `routes.rs` and its path, not a central description.
//! `openapi.rs` gathers them and adds what every operation says the same way; it also
//! holds the operations of the dynamic core (`core_operations`: registration, tokens,
//! MCP), whose code lives in `auth` and `mcp`, below or beside this layer's documents.

use schemars::JsonSchema;
use serde_json::{json, Value};

use crate::compile::CompileInput;
use crate::paths;
use crate::schema::name_of;
use crate::wire::ErrorBody;

/// Operations by path (OpenAPI's path items).
pub(crate) type Operations = Vec<(&'static str, Value)>;

/// What operations are described from: the site (its ids are the path parameters' enums)
/// and the settings in force (limits are published as they are).
pub(crate) struct Context<'a> {
    pub input: &'a CompileInput<'a>,
    /// The `{slug}` path parameter.
    pub slug: Value,
    /// The `{division_id}` path parameter.
    pub division_id: Value,
}

impl<'a> Context<'a> {
    pub(crate) fn new(input: &'a CompileInput<'a>) -> Context<'a> {
        Context {
            input,
            slug: id_parameter(
                "slug",
                "A page slug",
                input.site.pages.iter().map(|p| p.slug.as_str()),
            ),
            division_id: id_parameter(
                "division_id",
                "A division id",
                input.site.divisions.iter().map(|d| d.id.as_str()),
            ),
        }
    }

    /// The rate limit of the searches as in force, for their descriptions.
    pub(crate) fn search_limit_description(&self) -> String {
        match self.input.config.limits.searches_per_minute {
            0 => "Searches are not rate limited on this server (`serve --search-rate-limit 0`).".to_string(),
            per_minute => format!("Each client address may run {per_minute} searches a minute (`serve --search-rate-limit`); beyond that, 429 with Retry-After."),
        }
    }
}

/// Path ids: an enum of the ids that exist while there are few (so clients and test
/// generators know them), else their shape. A slug never names one of the site's own paths.
fn id_parameter<'a>(
    name: &str,
    description: &str,
    ids: impl ExactSizeIterator<Item = &'a str>,
) -> Value {
    const MAX_ENUM: usize = 100;
    let schema = if ids.len() <= MAX_ENUM {
        json!({"type": "string", "enum": ids.collect::<Vec<_>>()})
    } else {
        json!({
            "type": "string",
            "pattern": crate::content::rules::ID_PATTERN,
            "not": {"enum": paths::RESERVED_SLUGS}
        })
    };
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": schema})
}

pub(crate) fn json_response(description: &str, schema: Value) -> Value {
    json!({
        "description": description,
        "headers": {
            "ETag": {"$ref": "#/components/headers/ETag"},
            "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
        },
        "content": {"application/json": {"schema": schema}}
    })
}

/// A `$ref` to the schema of `T` (registered in `openapi::schemas`; a test checks every
/// `$ref` resolves).
pub(crate) fn schema_ref<T: JsonSchema + ?Sized>() -> Value {
    json!({"$ref": format!("#/components/schemas/{}", name_of::<T>())})
}

/// A GET (and HEAD) operation on a precompiled document.
pub(crate) fn document_get(operation_id: &str, summary: &str, ok: Value, tag: &str) -> Value {
    let head_id = format!("{operation_id}Head");
    json!({
        "get": {
            "operationId": operation_id,
            "summary": summary,
            "tags": [tag],
            "parameters": [{"$ref": "#/components/parameters/IfNoneMatch"}],
            "responses": {
                "200": ok,
                "304": {"$ref": "#/components/responses/NotModified"}
            }
        },
        "head": {
            "operationId": head_id,
            "summary": format!("Headers of: {summary}"),
            "tags": [tag],
            "responses": {"200": {"description": "The headers a GET would return, without a body."}}
        }
    })
}

/// A page for people, with its Markdown twin by `Accept`.
pub(crate) fn page(operation_id: &str, summary: &str) -> Value {
    document_get(
        operation_id,
        summary,
        json!({
            "description": "HTML for people; `Accept: text/markdown` gets the Markdown twin (`Vary: Accept`).",
            "content": {
                "text/html": {"schema": {"type": "string"}},
                "text/markdown": {"schema": {"type": "string"}}
            }
        }),
        "site",
    )
}

/// A text document of the site.
pub(crate) fn text(operation_id: &str, summary: &str, media_type: &str) -> Value {
    document_get(
        operation_id,
        summary,
        json!({"description": summary, "content": {media_type: {"schema": {"type": "string"}}}}),
        "site",
    )
}

/// A JSON document of another standard's own type, with its ETag and cache headers.
pub(crate) fn typed(description: &str, media_type: &str) -> Value {
    json!({
        "description": description,
        "headers": {
            "ETag": {"$ref": "#/components/headers/ETag"},
            "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
        },
        "content": {media_type: {"schema": {"type": "object"}}}
    })
}

/// A discovery document whose shape another standard defines.
pub(crate) fn metadata(operation_id: &str, summary: &str) -> Value {
    document_get(
        operation_id,
        summary,
        json_response(summary, json!({"type": "object"})),
        "discovery",
    )
}

/// Adds a path parameter to a GET, and the 404 for an id that does not exist.
pub(crate) fn with_id(mut item: Value, parameter: &Value) -> Value {
    if let Some(parameters) = item["get"]["parameters"].as_array_mut() {
        parameters.push(parameter.clone());
    }
    item["get"]["responses"]["404"] = json!({"$ref": "#/components/responses/NotFound"});
    item
}

/// `limit`, for listings and searches.
pub(crate) fn limit(default: usize, max: usize) -> Value {
    json!({"name": "limit", "in": "query", "required": false, "description": "How many items at most.", "schema": {"type": "integer", "minimum": 1, "maximum": max, "default": default}})
}

/// `cursor`, for listings and searches.
pub(crate) fn cursor() -> Value {
    json!({"name": "cursor", "in": "query", "required": false, "description": "The `next_cursor` of the previous answer (also in its `Link: rel=\"next\"`).", "schema": {"type": "string", "minLength": 1}})
}

/// Reads work without a token, or with one of the read scope (checked when presented).
pub(crate) fn read_security() -> Value {
    json!([{}, {"agentAuth": [crate::config::SCOPE_COMPANY_READ]}])
}

pub(crate) fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {
            "Cache-Control": {"description": "`no-store`", "schema": {"type": "string"}},
            "Pragma": {"description": "`no-cache`", "schema": {"type": "string"}}
        },
        "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
    })
}

pub(crate) fn rate_limited() -> Value {
    json!({
        "description": "Too many requests from this address (`rate_limit_exceeded`).",
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
        "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
    })
}
