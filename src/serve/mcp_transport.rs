//! `POST /mcp` over HTTP: the origin policy (the DNS-rebinding defence), `Accept` and
//! `Content-Type`, the bounded body, the 401 as a JSON-RPC error, and the hand-off to the
//! protocol core ([`crate::mcp::handle`], a plain function from headers and body to an
//! answer).

use std::net::SocketAddr;

use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderName, ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use hyper::{Request, Response, StatusCode};

use super::body::{
    body_timeout, client_gone, read_in_turn, room_for_answer, single_header, BodyError, RequestBody,
};
use super::reply::{self, Body};
use super::{negotiate, App};
use crate::auth::form;
use crate::mcp::{self, jsonrpc, McpHeaders};
use crate::paths;

/// Largest MCP request body.
const MAX_MCP_BODY_BYTES: usize = 1024 * 1024;

/// The 401 for `/mcp`: the same challenge, with a JSON-RPC error body that carries the
/// request's id when the body can be read (within the usual size and time limits).
pub(super) async fn mcp_unauthorized<B: RequestBody>(
    app: &App,
    request: Request<B>,
    description: &'static str,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    // Its body takes a turn like any other, so bad tokens cannot read more bodies at once
    // on one connection than good ones.
    let received = read_in_turn(
        &parts,
        body,
        MAX_MCP_BODY_BYTES,
        app.connections.body_timeout,
    )
    .await;
    let id = match &received {
        Err(BodyError::ClientGone) => return client_gone(),
        Err(_) => None,
        Ok(received) => jsonrpc::request_id(&received.bytes),
    };
    // Only the id is needed: the body and its turn to be read are not held while waiting.
    drop(received);
    if let Err(gone) = room_for_answer(&parts.extensions).await {
        return gone;
    }
    let data = serde_json::json!({
        "error": "invalid_token",
        "error_description": description,
        "resource_metadata": app.config.base_url.join(paths::PROTECTED_RESOURCE_MCP),
    });
    let body = jsonrpc::error(id.as_ref(), jsonrpc::UNAUTHORIZED, description, Some(data));
    let mut response = reply::invalid_token(
        &app.config.base_url,
        description,
        paths::PROTECTED_RESOURCE_MCP,
    );
    *response.body_mut() = Body::new(Bytes::from(body));
    response.headers_mut().insert(CONTENT_TYPE, reply::JSON);
    response
}

const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// An HTTP-level refusal on `/mcp`, with a JSON-RPC error body (no id: none was read).
fn mcp_refusal(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let mut response = Response::new(Body::new(Bytes::from(jsonrpc::error(
        None, code, message, None,
    ))));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, reply::JSON);
    response
}

/// Foreign origins (and, on loopback, foreign `Host` names) are refused before anything else,
/// preflight included: that is the DNS-rebinding defence.
pub(super) fn check_origin(
    app: &App,
    headers: &HeaderMap,
    authority: Option<&str>,
) -> Option<Response<Body>> {
    let origin_ok = headers
        .get_all(ORIGIN)
        .iter()
        .all(|origin| origin.to_str().is_ok_and(|o| app.origins.allows_origin(o)));
    let host_ok = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or(authority)
        .is_none_or(|host| app.origins.allows_host(host));
    if origin_ok && host_ok {
        return None;
    }
    Some(mcp_refusal(
        StatusCode::FORBIDDEN,
        jsonrpc::INVALID_REQUEST,
        "this origin may not call the MCP endpoint",
    ))
}

/// Whether `Accept` allows a JSON answer: missing, or a matching range (`application/json`,
/// `application/*`, `*/*`, the most specific deciding) with a quality above 0.
fn accepts_json(headers: &HeaderMap) -> bool {
    negotiate::media_quality(headers.get_all(ACCEPT).iter(), "application/json") > 0
}

pub(super) async fn mcp_post<B: RequestBody>(
    app: &App,
    peer: SocketAddr,
    request: Request<B>,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let content_type = single_header(&parts.headers, CONTENT_TYPE);
    if !form::is_media_type(content_type, "application/json") {
        return mcp_refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            jsonrpc::INVALID_REQUEST,
            "send JSON-RPC with Content-Type: application/json",
        );
    }
    if !accepts_json(&parts.headers) {
        return mcp_refusal(
            StatusCode::NOT_ACCEPTABLE,
            jsonrpc::INVALID_REQUEST,
            "this server answers with application/json; include it in Accept",
        );
    }
    // Any call may be a search. In the moments after a start, while the search index is
    // built, calls wait for it here, before their body is read (so a waiting call holds
    // only its connection); the answer comes from the version live once it has room.
    app.wait_for_search_index().await;
    let received = match read_in_turn(
        &parts,
        body,
        MAX_MCP_BODY_BYTES,
        app.connections.body_timeout,
    )
    .await
    {
        Ok(received) => received,
        Err(BodyError::ClientGone) => return client_gone(),
        Err(BodyError::TooLarge) => {
            return mcp_refusal(
                StatusCode::PAYLOAD_TOO_LARGE,
                jsonrpc::INVALID_REQUEST,
                "MCP requests are limited to 1 MiB",
            )
        }
        Err(BodyError::TimedOut) => return body_timeout(app.connections.body_timeout),
        Err(BodyError::Unreadable) => {
            return mcp_refusal(
                StatusCode::BAD_REQUEST,
                jsonrpc::INVALID_REQUEST,
                "the request body could not be read",
            )
        }
    };
    if let Err(gone) = room_for_answer(&parts.extensions).await {
        return gone;
    }
    let headers = McpHeaders {
        protocol_version: single_header(&parts.headers, MCP_PROTOCOL_VERSION),
        method: single_header(&parts.headers, MCP_METHOD),
        name: single_header(&parts.headers, MCP_NAME),
    };
    let client = app.proxies.client_address(peer, &parts.headers);
    let admit_search = || app.admit_search(client);
    let live = app.live();
    let answer = mcp::handle(
        &live.mcp,
        &headers,
        &received.bytes,
        mcp::SearchBudget::new(&admit_search),
    );
    match answer.body {
        Some(body) => {
            let mut response = Response::new(Body::chunks(body.0));
            *response.status_mut() = answer.status;
            response.headers_mut().insert(CONTENT_TYPE, reply::JSON);
            response
                .headers_mut()
                .insert(CACHE_CONTROL, reply::NO_STORE);
            response
        }
        None => {
            let mut response = Response::new(Body::default());
            *response.status_mut() = answer.status;
            response
        }
    }
}
