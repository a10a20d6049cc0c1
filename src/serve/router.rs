//! Dispatch: (method, path) to a handler, 404 and 405 with `Allow`, CORS preflight.
//! The router decides where a request goes and nothing else.

use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_MAX_AGE, ALLOW, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE,
};
use hyper::{Method, Request, Response, StatusCode};

use super::reply::{self, Body};
use super::{statics, App};
use crate::auth::bearer::{self, Presented};
use crate::auth::endpoints;
use crate::paths;

/// What a path is, independent of the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    /// A precompiled artifact from the live set.
    Artifact,
    Health,
    Register,
    Claim,
    Authorize,
    Token,
    Revoke,
    Mcp,
}

impl Endpoint {
    fn allow(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Endpoint::Artifact | Endpoint::Health => "GET, HEAD, OPTIONS",
            Endpoint::Authorize => "GET, HEAD, POST, OPTIONS",
            Endpoint::Register
            | Endpoint::Claim
            | Endpoint::Token
            | Endpoint::Revoke
            | Endpoint::Mcp => "POST, OPTIONS",
        })
    }

    fn allows(self, method: &Method) -> bool {
        match self {
            Endpoint::Artifact | Endpoint::Health => {
                method == Method::GET || method == Method::HEAD
            }
            Endpoint::Authorize => {
                method == Method::GET || method == Method::HEAD || method == Method::POST
            }
            _ => method == Method::POST,
        }
    }

    /// Paths where a presented bearer token is checked (and a bad one refused).
    fn checks_bearer(path: &str) -> bool {
        path == paths::API_COMPANY || path == paths::API_HEALTH
    }
}

fn dynamic_endpoint(path: &str) -> Option<Endpoint> {
    Some(match path {
        paths::API_HEALTH => Endpoint::Health,
        paths::AGENT_IDENTITY => Endpoint::Register,
        paths::AGENT_IDENTITY_CLAIM => Endpoint::Claim,
        paths::OAUTH_AUTHORIZE => Endpoint::Authorize,
        paths::OAUTH_TOKEN => Endpoint::Token,
        paths::OAUTH_REVOKE => Endpoint::Revoke,
        paths::MCP => Endpoint::Mcp,
        _ => return None,
    })
}

const PREFLIGHT_HEADERS: HeaderValue = HeaderValue::from_static(
    "Authorization, Content-Type, Accept, If-None-Match, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
);

pub async fn handle(app: &App, request: Request<Incoming>) -> Response<Body> {
    reply::finish(route(app, request).await)
}

async fn route(app: &App, request: Request<Incoming>) -> Response<Body> {
    let live = app.live();
    let path = request.uri().path();
    let artifact = live.artifacts.get(path);
    let endpoint = match artifact {
        Some(_) => Endpoint::Artifact,
        None => match dynamic_endpoint(path) {
            Some(endpoint) => endpoint,
            None => {
                return reply::error(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    "no such resource; start at / or /.well-known/api-catalog",
                )
            }
        },
    };

    let method = request.method();
    if method == Method::OPTIONS {
        return preflight(endpoint);
    }
    if !endpoint.allows(method) {
        let mut response = reply::error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            &format!(
                "{method} is not supported here; allowed: {}",
                endpoint.allow().to_str().unwrap_or_default()
            ),
        );
        response.headers_mut().insert(ALLOW, endpoint.allow());
        return response;
    }

    if Endpoint::checks_bearer(path) {
        if let Some(refusal) = check_bearer(app, &request) {
            return refusal;
        }
    }

    match endpoint {
        Endpoint::Artifact => match artifact {
            Some(artifact) => statics::respond(artifact, request.headers()),
            None => reply::error(StatusCode::NOT_FOUND, "not_found", "no such resource"),
        },
        Endpoint::Health => statics::respond(&live.health, request.headers()),
        Endpoint::Claim => endpoints::claim().into_response(),
        Endpoint::Authorize => {
            let wants_html = request
                .headers()
                .get_all(ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|accept| accept.contains("text/html"));
            endpoints::authorize(wants_html, &app.config.base_url).into_response()
        }
        Endpoint::Register | Endpoint::Token | Endpoint::Revoke | Endpoint::Mcp => reply::error(
            StatusCode::NOT_IMPLEMENTED,
            "not_implemented",
            "this endpoint is not available in this version of the service",
        ),
    }
}

fn preflight(endpoint: Endpoint) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(ALLOW, endpoint.allow());
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, endpoint.allow());
    headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, PREFLIGHT_HEADERS);
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}

/// `None` when the request may proceed: no token, or a valid one.
fn check_bearer(app: &App, request: &Request<Incoming>) -> Option<Response<Body>> {
    if bearer::token_in_query(request.uri().query()) {
        return Some(reply::error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "access tokens are accepted only in the Authorization header, never in the query string",
        ));
    }
    let problem = match bearer::presented(request.headers().get_all(AUTHORIZATION).iter()) {
        Presented::Nothing => return None,
        Presented::Token(token) => match app.verify_access_token(token) {
            Ok(()) => return None,
            Err(error) => error.description(),
        },
        Presented::Unusable(problem) => problem,
    };
    Some(invalid_token(app, problem))
}

/// 401 with the RFC 6750 / RFC 9728 challenge that points at the metadata.
fn invalid_token(app: &App, description: &str) -> Response<Body> {
    let mut response = reply::error(StatusCode::UNAUTHORIZED, "invalid_token", description);
    let challenge = format!(
        "Bearer error=\"invalid_token\", error_description=\"{description}\", resource_metadata=\"{}\"",
        app.config.base_url.join(paths::PROTECTED_RESOURCE)
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
        .headers_mut()
        .insert(CACHE_CONTROL, reply::NO_STORE);
    response.headers_mut().insert(CONTENT_TYPE, reply::JSON);
    response
}
