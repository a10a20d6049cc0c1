//! `GET /openapi.json`: an OpenAPI 3.1 description of every endpoint, with schemas that
//! match the model in `content::model`. CI validates it with `openapi-spec-validator` and
//! checks live responses against its schemas.

use crate::query::{MAX_QUERY_BYTES, MAX_QUERY_PARAMETERS};
use serde_json::{json, Value};

use super::JSON;
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};

use crate::paths;
use crate::schema::{Definitions, Schemas};
use crate::wire::{
    AskAnswer, CompanyDocument, DivisionDocument, ErrorBody, Health, Linkset, PageDocument,
    Registration, RegistrationRequest, RevocationRequest, SearchDocument, TokenRequest,
    TokenResponse,
};

use super::operation::{
    document_get, error_response, json_response, rate_limited, read_security, schema_ref, Context,
    Operations,
};

pub fn openapi(document: &Value) -> Result<Artifact, CompileError> {
    Artifact::json(paths::OPENAPI, JSON, CachePolicy::Content, document)
        .map_err(|e| CompileError::new("/openapi.json", e))
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

    // Each endpoint's operation is written beside the code that answers it.
    let context = Context::new(input);
    let mut paths_object = serde_json::Map::new();
    let described = [
        super::pages::operations(&context),
        super::agents::operations(&context),
        super::company::operations(&context),
        super::catalog::operations(&context),
        super::discovery::operations(&context),
        super::auth_md::operations(&context),
        crate::read_api::operations(&context),
        service_operations(),
        core_operations(),
    ];
    for (path, item) in described.into_iter().flatten() {
        let previous = paths_object.insert(path.into(), item);
        debug_assert!(previous.is_none(), "{path} is described twice");
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

/// The service's own documents: health and this description.
fn service_operations() -> Operations {
    vec![
        (
            paths::API_HEALTH,
            document_get(
                "getHealth",
                "Liveness and the content revision being served",
                json_response("The service is up.", schema_ref::<Health>()),
                "service",
            ),
        ),
        (
            paths::OPENAPI,
            document_get(
                "getOpenApi",
                "This OpenAPI description",
                json_response("OpenAPI 3.1 document.", json!({"type": "object"})),
                "service",
            ),
        ),
    ]
}

/// The dynamic endpoints: MCP, registration, claim, token, revocation, authorization.
fn core_operations() -> Operations {
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
