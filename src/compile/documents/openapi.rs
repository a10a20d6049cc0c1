//! `GET /openapi.json`: an OpenAPI 3.1 description of every endpoint, with schemas that
//! match the model in `content::model`. CI validates it with `openapi-spec-validator` and
//! checks live responses against its schemas.

use crate::query::{MAX_QUERY_BYTES, MAX_QUERY_PARAMETERS};
use serde_json::{json, Value};

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use schemars::JsonSchema;

use super::catalog::Linkset;
use crate::auth::wire::{
    Registration, RegistrationRequest, RevocationRequest, TokenRequest, TokenResponse,
};
use crate::error_body::ErrorBody;
use crate::health::Health;
use crate::listing::{
    CompanyDocument, DivisionDocument, PageDocument, SearchDocument, DEFAULT_SEARCH_LIMIT,
    MAX_SEARCH_CHARS, MAX_SEARCH_LIMIT,
};
use crate::paths;
use crate::read_api::AskAnswer;
use crate::schema::{name_of, Definitions, Schemas};

pub fn openapi(document: &Value) -> Result<Artifact, CompileError> {
    Artifact::json(paths::OPENAPI, JSON, CachePolicy::Content, document)
        .map_err(|e| CompileError::new("/openapi.json", e))
}

fn json_response(description: &str, schema: Value) -> Value {
    json!({
        "description": description,
        "headers": {
            "ETag": {"$ref": "#/components/headers/ETag"},
            "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
        },
        "content": {"application/json": {"schema": schema}}
    })
}

/// A `$ref` to the schema of `T` (registered in [`schemas`]; a test checks every `$ref`
/// resolves).
fn schema_ref<T: JsonSchema + ?Sized>() -> Value {
    json!({"$ref": format!("#/components/schemas/{}", name_of::<T>())})
}

/// A GET (and HEAD) operation on a precompiled document.
fn document_get(operation_id: &str, summary: &str, ok: Value, tag: &str) -> Value {
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

/// The OpenAPI document, as a value: `/openapi.json` serializes it and `/docs` renders it.
pub fn describe(input: &CompileInput<'_>) -> Value {
    let base = &input.config.base_url;
    let company = &input.site.company;
    let scopes: serde_json::Map<String, Value> = input
        .config
        .auth
        .scopes
        .iter()
        .map(|scope| (scope.clone(), json!("Read the public company information.")))
        .collect();

    let mut company_get = document_get(
        "getCompany",
        "The company, its divisions and its pages",
        json_response("The whole public record.", schema_ref::<CompanyDocument>()),
        "company",
    );
    company_get["get"]["description"] = json!(
        "Works without authentication. A valid bearer token gives the same bytes; a present but invalid, expired or revoked token gets 401."
    );
    company_get["get"]["security"] = read_security();
    company_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    company_get["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
    let limit = |default: usize, max: usize| json!({"name": "limit", "in": "query", "required": false, "description": "How many items at most.", "schema": {"type": "integer", "minimum": 1, "maximum": max, "default": default}});
    let cursor = json!({"name": "cursor", "in": "query", "required": false, "description": "The `next_cursor` of the previous answer (also in its `Link: rel=\"next\"`).", "schema": {"type": "string", "minLength": 1}});
    if let Some(parameters) = company_get["get"]["parameters"].as_array_mut() {
        parameters.push(limit(
            crate::listing::DEFAULT_LIMIT,
            crate::listing::MAX_LIMIT,
        ));
        parameters.push(cursor.clone());
    }
    company_get["get"]["description"] = json!(format!(
        "Works without authentication. A valid bearer token gives the same bytes; a present but invalid, expired or revoked token gets 401. Pages are listed without their text, {} at a time by default; `next_cursor` and `Link: rel=\"next\"` continue.",
        crate::listing::DEFAULT_LIMIT
    ));
    let api_document = |operation_id: &str, summary: &str, schema: Value, parameter: Value| {
        let mut item = document_get(
            operation_id,
            summary,
            json_response(summary, schema),
            "company",
        );
        item["get"]["security"] = read_security();
        item["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
        item["get"]["responses"]["404"] = json!({"$ref": "#/components/responses/NotFound"});
        if let Some(parameters) = item["get"]["parameters"].as_array_mut() {
            parameters.push(parameter.clone());
        }
        item["head"]["parameters"] = json!([parameter]);
        item
    };
    let slug = id_parameter(
        "slug",
        "A page slug",
        input.site.pages.iter().map(|p| p.slug.as_str()),
    );
    let division_id = id_parameter(
        "division_id",
        "A division id",
        input.site.divisions.iter().map(|d| d.id.as_str()),
    );
    let page_get = api_document(
        "getPage",
        "One page, with its Markdown and its URL",
        schema_ref::<PageDocument>(),
        slug.clone(),
    );
    let division_get = api_document(
        "getDivision",
        "One division, with its pages listed",
        schema_ref::<DivisionDocument>(),
        division_id.clone(),
    );
    let mut search_get = document_get(
        "searchCompany",
        "Ranked search over divisions, pages and contacts",
        json_response("Results, best first.", schema_ref::<SearchDocument>()),
        "company",
    );
    search_get["get"]["security"] = read_security();
    search_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    search_get["get"]["responses"]["401"] = json!({"$ref": "#/components/responses/InvalidToken"});
    search_get["get"]["description"] = json!(match input.config.limits.searches_per_minute {
        0 => "Searches are not rate limited on this server (`serve --search-rate-limit 0`).".to_string(),
        per_minute => format!("Each client address may run {per_minute} searches a minute (`serve --search-rate-limit`); beyond that, 429 with Retry-After."),
    });
    search_get["get"]["responses"]["429"] = rate_limited();
    if let Some(parameters) = search_get["get"]["parameters"].as_array_mut() {
        parameters.push(json!({"name": "q", "in": "query", "required": true, "description": "Words to look for.", "schema": {"type": "string", "minLength": 1, "maxLength": MAX_SEARCH_CHARS}}));
        parameters.push(limit(DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT));
        parameters.push(cursor);
    }
    let mut ask_get = document_get(
        "ask",
        "NLWeb: a question answered with the pages that answer it, best first",
        json!({
            "description": "The results (JSON), or with `streaming=true` or `Accept: text/event-stream` the same as server-sent events: `begin-nlweb-response`, one `result` per batch, `end-nlweb-response`. Without `query`, an empty list and how to ask.",
            "content": {
                "application/json": {"schema": schema_ref::<AskAnswer>()},
                "text/event-stream": {"schema": {"type": "object", "description": "The data of each event: a JSON object whose `message_type` is its event name, carrying `query_id`, and on `result` events a batch of `results`."}}
            }
        }),
        "company",
    );
    ask_get["get"]["description"] = search_get["get"]["description"].clone();
    ask_get["get"]["responses"]["400"] = json!({"$ref": "#/components/responses/BadRequest"});
    ask_get["get"]["responses"]["429"] = rate_limited();
    if let Some(parameters) = ask_get["get"]["parameters"].as_array_mut() {
        parameters.push(json!({"name": "query", "in": "query", "required": false, "description": "The question, in words.", "schema": {"type": "string", "maxLength": MAX_SEARCH_CHARS}}));
        parameters.push(json!({"name": "mode", "in": "query", "required": false, "description": "Only `list` is offered; another mode is answered as `list`, and `_meta.message` says so.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "generate_mode", "in": "query", "required": false, "description": "The same as `mode`.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "streaming", "in": "query", "required": false, "description": "`true` for server-sent events.", "schema": {"type": "string", "enum": ["true", "false", "1", "0"]}}));
        parameters.push(json!({"name": "query_id", "in": "query", "required": false, "description": "Echoed in the answer.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "site", "in": "query", "required": false, "description": "Accepted; the site is always this one.", "schema": {"type": "string"}}));
        parameters.push(json!({"name": "prev", "in": "query", "required": false, "description": "Earlier queries of the conversation; accepted, not used.", "schema": {"type": "string"}}));
    }
    // NLWeb clients POST the same parameters as a form or a JSON object.
    let text = json!({"type": "string"});
    let posted = json!({
        "type": "object",
        "properties": {
            "query": {"oneOf": [
                {"type": "string", "maxLength": MAX_SEARCH_CHARS},
                {"type": "object", "properties": {"text": {"type": "string", "maxLength": MAX_SEARCH_CHARS}}, "required": ["text"]}
            ]},
            "mode": text, "generate_mode": text, "site": text, "query_id": text,
            "streaming": {"type": "string", "enum": ["true", "false", "1", "0"]},
            "prev": {"oneOf": [text, {"type": "array", "items": text}]}
        }
    });
    let mut ask_post = ask_get["get"].clone();
    if let Some(operation) = ask_post.as_object_mut() {
        operation.insert("operationId".into(), "askPost".into());
        operation.insert(
            "summary".into(),
            "NLWeb: the same question, its parameters in the body".into(),
        );
        operation.remove("parameters");
        operation.insert("requestBody".into(), json!({
            "required": true,
            "content": {
                "application/json": {"schema": posted},
                "application/x-www-form-urlencoded": {"schema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "maxLength": MAX_SEARCH_CHARS},
                        "mode": text, "generate_mode": text, "site": text, "query_id": text, "prev": text,
                        "streaming": {"type": "string", "enum": ["true", "false", "1", "0"]}
                    }
                }}
            }
        }));
        if let Some(responses) = operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
        {
            responses.remove("304");
            responses.insert(
                "413".into(),
                error_response(&format!(
                    "`request_too_large`: bodies are limited to {} bytes.",
                    crate::read_api::MAX_POSTED_BYTES
                )),
            );
            responses.insert(
                "415".into(),
                error_response("The body is neither JSON nor a form."),
            );
        }
    }
    ask_get["post"] = ask_post;

    let metadata = |operation_id: &str, summary: &str| {
        document_get(
            operation_id,
            summary,
            json_response(summary, json!({"type": "object"})),
            "discovery",
        )
    };

    let mut catalog = document_get(
        "getApiCatalog",
        "RFC 9727 API catalog",
        json!({
            "description": "A linkset (RFC 9264) pointing at this description, the documentation, the protected resource metadata and the health check.",
            "headers": {
                "Link": {"description": "`<BASE/.well-known/api-catalog>; rel=\"api-catalog\"`", "schema": {"type": "string"}}
            },
            "content": {"application/linkset+json": {"schema": schema_ref::<Linkset>()}}
        }),
        "discovery",
    );
    catalog["head"]["responses"]["200"]["headers"] = json!({
        "Link": {"description": "`<BASE/.well-known/api-catalog>; rel=\"api-catalog\"`", "schema": {"type": "string"}}
    });

    let mut paths_object = serde_json::Map::new();
    let page = |operation_id: &str, summary: &str| {
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
    };
    let text = |operation_id: &str, summary: &str, media_type: &str| {
        document_get(
            operation_id,
            summary,
            json!({"description": summary, "content": {media_type: {"schema": {"type": "string"}}}}),
            "site",
        )
    };
    let mut division_page = page(
        "getDivisionPage",
        "One division, for people (and as Markdown)",
    );
    let mut content_page = page(
        "getContentPage",
        "One content page, for people (and as Markdown)",
    );
    for (item, parameter) in [
        (&mut division_page, &division_id),
        (&mut content_page, &slug),
    ] {
        if let Some(parameters) = item["get"]["parameters"].as_array_mut() {
            parameters.push(parameter.clone());
        }
        item["get"]["responses"]["404"] = json!({"$ref": "#/components/responses/NotFound"});
    }
    paths_object.insert(
        paths::INDEX.into(),
        page(
            "getIndex",
            "The company overview, with links to everything else",
        ),
    );
    paths_object.insert(
        paths::DOCS.into(),
        page(
            "getDocs",
            "This API described for people, with the agent flow",
        ),
    );
    paths_object.insert("/divisions/{division_id}".into(), division_page);
    paths_object.insert("/{slug}".into(), content_page);
    paths_object.insert(
        paths::LLMS_TXT.into(),
        text(
            "getLlmsTxt",
            "llms.txt: the site as a list of Markdown links",
            "text/plain",
        ),
    );
    paths_object.insert(
        paths::ROBOTS_TXT.into(),
        text(
            "getRobotsTxt",
            "robots.txt with explicit AI-crawler groups",
            "text/plain",
        ),
    );
    paths_object.insert(
        paths::SITEMAP.into(),
        text("getSitemap", "Sitemap of the HTML pages", "application/xml"),
    );
    let typed = |description: &str, media_type: &str| {
        json!({
            "description": description,
            "headers": {
                "ETag": {"$ref": "#/components/headers/ETag"},
                "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
            },
            "content": {media_type: {"schema": {"type": "object"}}}
        })
    };
    paths_object.insert(
        paths::MCP_SERVER_CARD.into(),
        document_get(
            "getMcpServerCard",
            "MCP server card (SEP-2127), at the MCP endpoint's URL + /server-card",
            typed("MCP server card.", "application/mcp-server-card+json"),
            "discovery",
        ),
    );
    paths_object.insert(
        paths::MCP_SERVER_CARD_LEGACY.into(),
        document_get(
            "getMcpServerCardLegacy",
            "The MCP server card in its earlier shape, for older scanners",
            json_response(
                "MCP server card (earlier shape).",
                json!({"type": "object"}),
            ),
            "discovery",
        ),
    );
    paths_object.insert(
        paths::AI_CATALOG.into(),
        document_get(
            "getAiCatalog",
            "AI Catalog: the artifacts this site offers (its MCP server card)",
            typed("AI Catalog.", "application/ai-catalog+json"),
            "discovery",
        ),
    );
    let mut division_llms = text(
        "getDivisionLlmsTxt",
        "llms.txt for one division: its pages as Markdown links",
        "text/plain",
    );
    if let Some(parameters) = division_llms["get"]["parameters"].as_array_mut() {
        parameters.push(division_id.clone());
    }
    division_llms["get"]["responses"]["404"] = json!({"$ref": "#/components/responses/NotFound"});
    paths_object.insert("/divisions/{division_id}/llms.txt".into(), division_llms);
    paths_object.insert(
        paths::FAVICON.into(),
        text("getFavicon", "The site's icon", "image/svg+xml"),
    );
    paths_object.insert(
        paths::AGENT_SKILL.into(),
        text(
            "getAgentSkill",
            "The skill: front matter (name, description), then auth.md's instructions",
            "text/markdown",
        ),
    );
    paths_object.insert(
        paths::AGENT_SKILLS.into(),
        document_get(
            "getAgentSkills",
            "Agent skills index (the skill below, with its digest)",
            json_response("Agent skills index.", json!({"type": "object"})),
            "discovery",
        ),
    );
    paths_object.insert(paths::API_COMPANY.into(), company_get);
    paths_object.insert("/api/pages/{slug}".into(), page_get);
    paths_object.insert("/api/divisions/{division_id}".into(), division_get);
    paths_object.insert(paths::API_SEARCH.into(), search_get);
    paths_object.insert(paths::ASK.into(), ask_get);
    paths_object.insert(
        paths::API_HEALTH.into(),
        document_get(
            "getHealth",
            "Liveness and the content revision being served",
            json_response("The service is up.", schema_ref::<Health>()),
            "service",
        ),
    );
    paths_object.insert(
        paths::OPENAPI.into(),
        document_get(
            "getOpenApi",
            "This OpenAPI description",
            json_response("OpenAPI 3.1 document.", json!({"type": "object"})),
            "service",
        ),
    );
    paths_object.insert(paths::API_CATALOG.into(), catalog);
    paths_object.insert(
        paths::PROTECTED_RESOURCE.into(),
        metadata(
            "getProtectedResourceMetadata",
            "OAuth protected resource metadata (RFC 9728)",
        ),
    );
    paths_object.insert(
        paths::PROTECTED_RESOURCE_MCP.into(),
        metadata(
            "getMcpProtectedResourceMetadata",
            "OAuth protected resource metadata for the MCP endpoint (RFC 9728)",
        ),
    );
    paths_object.insert(
        paths::AUTHORIZATION_SERVER.into(),
        metadata(
            "getAuthorizationServerMetadata",
            "OAuth authorization server metadata (RFC 8414) with agent_auth",
        ),
    );
    paths_object.insert(
        paths::JWKS.into(),
        metadata(
            "getJwks",
            "Public keys that sign identity assertions (RFC 7517)",
        ),
    );
    for (path, operation_id) in [
        (paths::AUTH_MD, "getAuthMd"),
        (paths::AUTH_MD_WELL_KNOWN, "getWellKnownAuthMd"),
    ] {
        paths_object.insert(
            path.into(),
            document_get(
                operation_id,
                "Instructions for agents: register, exchange, call, revoke",
                json!({
                    "description": "Markdown instructions.",
                    "content": {"text/markdown": {"schema": {"type": "string"}}}
                }),
                "discovery",
            ),
        );
    }

    for (path, item) in auth_paths() {
        paths_object.insert(path.into(), item);
    }
    for item in paths_object.values_mut() {
        complete_operations(item);
    }

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": format!("{} company information", company.name),
            "version": env!("CARGO_PKG_VERSION"),
            "license": {"name": "MIT", "identifier": "MIT"},
            "description": format!(
                "Public, read-only information about {}: the company, its divisions, its pages and how to contact them. No authentication is needed; agents that want a bearer token can register anonymously as described in {}.",
                company.name,
                base.join(paths::AUTH_MD)
            )
        },
        "servers": [{"url": base.as_str()}],
        "tags": [
            {"name": "company", "description": "The company's public information."},
            {"name": "discovery", "description": "Documents that let agents find and use this service."},
            {"name": "service", "description": "Operational endpoints."},
            {"name": "site", "description": "Pages for people, each also as Markdown for agents."},
            {"name": "auth", "description": "Optional anonymous registration and tokens; see auth.md."}
        ],
        "paths": paths_object,
        "components": {
            "securitySchemes": {
                "agentAuth": {
                    "type": "oauth2",
                    "description": format!("Optional. Anonymous registration and token exchange, see {}.", base.join(paths::AUTH_MD)),
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": base.join(paths::OAUTH_TOKEN),
                            "scopes": scopes
                        }
                    }
                }
            },
            "parameters": {
                "IfNoneMatch": {
                    "name": "If-None-Match",
                    "in": "header",
                    "required": false,
                    "description": "An ETag from an earlier response; a match gets 304 without a body.",
                    "schema": {"type": "string"}
                }
            },
            "headers": {
                "ETag": {"description": "Strong validator of the representation.", "schema": {"type": "string"}},
                "CacheControl": {"description": "How long the response may be reused.", "schema": {"type": "string"}}
            },
            "responses": {
                "NotModified": {"description": "The representation matches the `If-None-Match` ETag."},
                "BadRequest": {
                    "description": "Malformed request, e.g. an access token in the query string.",
                    "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
                },
                "NotFound": {
                    "description": "No page or division has this id.",
                    "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
                },
                "InvalidToken": {
                    "description": "A bearer token was sent and is invalid, expired or revoked. Retry without it, or get a new one.",
                    "headers": {"WWW-Authenticate": {"description": "`Bearer error=\"invalid_token\", error_description=\"...\", resource_metadata=\"...\"`", "schema": {"type": "string"}}},
                    "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
                }
            },
            "schemas": schemas()
        }
    })
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

/// What every operation of a path item says the same way: HEAD takes GET's parameters and
/// answers with its statuses, and an operation without a `security` works without one
/// (`security: []`, stated so tools need not guess).
fn complete_operations(item: &mut Value) {
    if let (Some(get), Some(_)) = (item.get("get").cloned(), item.get("head")) {
        let head = &mut item["head"];
        if let Some(parameters) = get.get("parameters") {
            head["parameters"] = parameters.clone();
        }
        if let (Some(responses), Some(head_responses)) = (
            get.get("responses").and_then(Value::as_object),
            head.get_mut("responses").and_then(Value::as_object_mut),
        ) {
            for (status, response) in responses {
                if status != "200" {
                    head_responses
                        .entry(status.clone())
                        .or_insert_with(|| response.clone());
                }
            }
        }
    }
    if let Some(operations) = item.as_object_mut() {
        for operation in operations.values_mut() {
            if let Some(operation) = operation.as_object_mut() {
                operation.entry("security").or_insert_with(|| json!([]));
                // Every endpoint bounds its query string before anything else reads it.
                if let Some(responses) = operation
                    .get_mut("responses")
                    .and_then(Value::as_object_mut)
                {
                    responses.entry("400").or_insert_with(|| {
                        error_response(&format!(
                            "`invalid_request`: more than {MAX_QUERY_PARAMETERS} query parameters."
                        ))
                    });
                    responses.entry("414").or_insert_with(|| {
                        error_response(&format!(
                            "`invalid_request`: the query string is over {MAX_QUERY_BYTES} bytes."
                        ))
                    });
                }
            }
        }
    }
}

/// The JSON Schemas of every body, derived from the types that serialize them.
fn schemas() -> Value {
    let mut schemas = Schemas::new(Definitions::OpenApi);
    schemas.schema_for::<ErrorBody>();
    schemas.schema_for::<Health>();
    schemas.schema_for::<RegistrationRequest>();
    schemas.schema_for::<Registration>();
    schemas.schema_for::<TokenRequest>();
    schemas.schema_for::<TokenResponse>();
    schemas.schema_for::<RevocationRequest>();
    schemas.schema_for::<Linkset>();
    schemas.schema_for::<CompanyDocument>();
    schemas.schema_for::<PageDocument>();
    schemas.schema_for::<DivisionDocument>();
    schemas.schema_for::<SearchDocument>();
    schemas.schema_for::<AskAnswer>();
    Value::Object(schemas.into_definitions())
}

/// Reads work without a token, or with one of the read scope (checked when presented).
fn read_security() -> Value {
    json!([{}, {"agentAuth": [crate::config::SCOPE_COMPANY_READ]}])
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {
            "Cache-Control": {"description": "`no-store`", "schema": {"type": "string"}},
            "Pragma": {"description": "`no-cache`", "schema": {"type": "string"}}
        },
        "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
    })
}

fn rate_limited() -> Value {
    json!({
        "description": "Too many requests from this address (`rate_limit_exceeded`).",
        "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
        "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
    })
}

/// The dynamic endpoints: MCP, registration, claim, token, revocation, authorization.
fn auth_paths() -> Vec<(&'static str, Value)> {
    let mut legacy = crate::mcp::LEGACY_VERSIONS;
    legacy.reverse();
    let mcp_description = format!(
        "One JSON-RPC 2.0 message per request. Serves the legacy era ({}: initialize, ping) and the {} era (server/discover, _meta and MCP-Protocol-Version / Mcp-Method / Mcp-Name headers). Tools: {}. Resources: company://company, company://divisions/{{division_id}}, company://pages/{{slug}}. A bearer token is optional; a bad one gets 401 pointing at {}.",
        legacy.join(", "),
        crate::mcp::MODERN_VERSIONS.join(", "),
        crate::mcp::tools::names(),
        paths::PROTECTED_RESOURCE_MCP,
    );
    let form = |schema: Value| {
        json!({
            "required": true,
            "content": {"application/x-www-form-urlencoded": {"schema": schema}}
        })
    };
    vec![
        (
            paths::AGENT_IDENTITY,
            json!({"post": {
                "operationId": "registerAnonymousAgent",
                "summary": "Register anonymously and receive an identity assertion",
                "tags": ["auth"],
                "requestBody": {"required": true, "content": {"application/json": {"schema": schema_ref::<RegistrationRequest>()}}},
                "responses": {
                    "200": {
                        "description": "The identity assertion, flat and nested.",
                        "headers": {"Cache-Control": {"description": "`no-store`", "schema": {"type": "string"}}},
                        "content": {"application/json": {"schema": schema_ref::<Registration>()}}
                    },
                    "400": error_response("`invalid_request` (bad JSON, missing `type`, wrong content type) `service_auth_not_enabled`, `issuer_not_enabled` (an assertion-based type) or `unsupported_identity_type`."),
                    "413": error_response("`request_too_large`: bodies are limited to 64 KiB."),
                    "429": rate_limited()
                }
            }}),
        ),
        (
            paths::AGENT_IDENTITY_CLAIM,
            json!({"post": {
                "operationId": "claimRegistration",
                "summary": "Claiming is not offered",
                "tags": ["auth"],
                "responses": {"400": error_response("Always `claim_not_supported`.")}
            }}),
        ),
        (
            paths::OAUTH_TOKEN,
            json!({"post": {
                "operationId": "issueAccessToken",
                "summary": "Exchange an identity assertion (jwt-bearer) or use client_credentials without a secret",
                "tags": ["auth"],
                "requestBody": form(schema_ref::<TokenRequest>()),
                "responses": {
                    "200": {
                        "description": "An access token (PASETO v4.local, opaque). No refresh token.",
                        "content": {"application/json": {"schema": schema_ref::<TokenResponse>()}}
                    },
                    "400": error_response("`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope` or `invalid_target`."),
                    "401": error_response("`invalid_client`: client secrets, client assertions and Basic passwords are refused."),
                    "413": error_response("`request_too_large`."),
                    "429": rate_limited()
                }
            }}),
        ),
        (
            paths::OAUTH_REVOKE,
            json!({"post": {
                "operationId": "revokeToken",
                "summary": "Revoke an access token, or an identity assertion and every token issued from it (RFC 7009)",
                "tags": ["auth"],
                "requestBody": form(schema_ref::<RevocationRequest>()),
                "responses": {
                    "200": {"description": "Revoked, or unknown: the answer is the same."},
                    "400": error_response("`invalid_request`: no `token`, a repeated parameter or a wrong content type."),
                    "408": error_response("`request_timeout`: the body did not arrive in time."),
                    "413": error_response("`request_too_large`: bodies are limited to 64 KiB."),
                    "503": {
                        "description": "`temporarily_unavailable`: the revocation store cannot write right now; nothing was revoked.",
                        "headers": {"Retry-After": {"description": "Seconds until the store tries again.", "schema": {"type": "integer"}}},
                        "content": {"application/json": {"schema": schema_ref::<ErrorBody>()}}
                    }
                }
            }}),
        ),
        (
            paths::MCP,
            json!({"post": {
                "operationId": "mcp",
                "summary": "Model Context Protocol (Streamable HTTP, stateless, JSON responses)",
                "description": mcp_description,
                "tags": ["company"],
                "security": read_security(),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "oneOf": [
                        {
                            "title": "Request",
                            "type": "object",
                            "required": ["jsonrpc", "id", "method"],
                            "properties": {
                                "jsonrpc": {"const": "2.0"},
                                "id": {"type": ["string", "integer"]},
                                "method": {"type": "string", "minLength": 1},
                                "params": {"type": "object"}
                            }
                        },
                        {
                            "title": "Notification",
                            "type": "object",
                            "required": ["jsonrpc", "method"],
                            "not": {"required": ["id"]},
                            "properties": {
                                "jsonrpc": {"const": "2.0"},
                                "method": {"type": "string", "minLength": 1},
                                "params": {"type": "object"}
                            }
                        }
                    ]
                }}}},
                "responses": {
                    "200": {"description": "A JSON-RPC result or error (legacy-era errors other than parse and invalid request use 200).", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "202": {"description": "A notification or client response was accepted; no body."},
                    "400": {"description": "Parse error, invalid request, batch, invalid params (modern era), header mismatch (-32020) or unsupported version (-32022).", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "401": {"$ref": "#/components/responses/InvalidToken"},
                    "403": {"description": "A foreign Origin (DNS-rebinding protection).", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "404": {"description": "Unknown method in the modern era (-32601).", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "406": {"description": "Accept excludes application/json."},
                    "413": {"description": "Body over 1 MiB."},
                    "415": {"description": "Content-Type is not application/json."}
                }
            }}),
        ),
        (
            paths::OAUTH_AUTHORIZE,
            json!({
                "get": {
                    "operationId": "authorize",
                    "summary": "There is no interactive login; explains where to go instead",
                    "tags": ["auth"],
                    "responses": {"400": {
                        "description": "`unsupported_response_type`, as JSON, or an HTML page for browsers.",
                        "content": {
                            "application/json": {"schema": schema_ref::<ErrorBody>()},
                            "text/html": {"schema": {"type": "string"}}
                        }
                    }}
                },
                "head": {
                    "operationId": "authorizeHead",
                    "summary": "Same as GET, without a body",
                    "tags": ["auth"],
                    "responses": {"400": {"description": "`unsupported_response_type`."}}
                },
                "post": {
                    "operationId": "authorizePost",
                    "summary": "Same as GET",
                    "tags": ["auth"],
                    "responses": {"400": error_response("`unsupported_response_type`.")}
                }
            }),
        ),
    ]
}
