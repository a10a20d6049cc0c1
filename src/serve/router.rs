//! Dispatch: a request to its row of the endpoint table ([`crate::routes`]), 404 and 405
//! with `Allow`, CORS preflight, bearer checks, and the conversion of POST bodies into the
//! auth core's [`PostRequest`]s. The router decides where a request goes; what happens there
//! lives in `statics`, `read_api`, `auth` and `mcp_transport` (bodies are read by `body`).
//!
//! Routing is synchronous ([`route`]): documents, computed reads and refusals are answered
//! before it returns, so the common request needs no future holding the router's state
//! (which is large, as it covers every endpoint that waits). Only requests that wait for a
//! body, the store or the MCP core go on to [`answer_waiting`].

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{
    HeaderMap, HeaderValue, ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_MAX_AGE, ALLOW, AUTHORIZATION, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE,
    HOST, RETRY_AFTER, TRANSFER_ENCODING,
};
use hyper::{Method, Request, Response, StatusCode, Version};

use super::body::{
    body_timeout, client_gone, read_in_turn, room_for_answer, single_header, BodyError, RequestBody,
};
use super::mcp_transport::{check_origin, mcp_post, mcp_unauthorized};
use super::reply::{self, Body};
use super::{negotiate, origin, statics, App};
use crate::auth::access::AccessTokenError;
use crate::auth::admission::{Admitted, Minting};
use crate::auth::bearer::{self, Presented};
use crate::auth::endpoints::{self, PostRequest};
use crate::auth::form;
use crate::auth::reply::AuthReply;
use crate::auth::MAX_BODY_BYTES;
use crate::query;
use crate::read_api::{self, ReadRefusal};
use crate::routes::{self, AnsweredBy, Computed, Core, MetricLabel, Route};

/// True when `Accept` names `text/markdown` and likes it at least as much as `text/html`
/// (a wildcard alone keeps the HTML: browsers send `*/*`).
fn wants_markdown(headers: &HeaderMap) -> bool {
    let accept = || headers.get_all(ACCEPT).iter();
    let markdown = negotiate::named_quality(accept(), "text/markdown").unwrap_or(0);
    markdown > 0 && markdown >= negotiate::named_quality(accept(), "text/html").unwrap_or(0)
}

const PREFLIGHT_HEADERS: HeaderValue = HeaderValue::from_static(
    "Authorization, Content-Type, Accept, If-None-Match, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
);

/// How far the router got with a request without waiting for anything.
pub(super) enum Routed<B> {
    /// The finished response: every precompiled document, the computed reads, and every
    /// refusal (almost every request).
    Answered(Response<Body>),
    /// The rest needs the request body, the revocation store or the MCP core: see
    /// [`answer_waiting`].
    Waiting(Waiting<B>),
}

/// What a waiting request waits for.
#[derive(Clone, Copy)]
enum WaitFor {
    /// An endpoint of the dynamic core.
    Core(Core),
    /// A computed read whose parameters come in the POST body.
    PostedRead(Computed),
    /// A search that came before the search index was ready (in the moments after a
    /// start: [`crate::read_model::ReadModel::build_search_index_in_background`]).
    SearchIndex(Computed),
}

/// A request routed to an endpoint whose answer waits.
pub(super) struct Waiting<B> {
    request: Request<B>,
    wait_for: WaitFor,
    /// A bad token on `/mcp`, answered as a JSON-RPC error once the body gives its id.
    unauthorized: Option<&'static str>,
}

/// Routes one request as far as it goes without waiting, and says which label it counts
/// under (for the metrics; returned beside the response rather than in its extensions, which would
/// cost two allocations a request). Synchronous, so that answering a document needs no
/// future of the router's size: the waiting part is [`answer_waiting`].
pub(super) fn route<B>(
    app: &App,
    peer: SocketAddr,
    request: Request<B>,
) -> (Routed<B>, MetricLabel) {
    let mut label = None;
    let routed = match decide(app, peer, &request, &mut label) {
        Decision::Respond(response) => Routed::Answered(reply::finish(response)),
        Decision::Wait {
            wait_for,
            unauthorized,
        } => Routed::Waiting(Waiting {
            request,
            wait_for,
            unauthorized,
        }),
    };
    let label = match (label, &routed) {
        (Some(label), _) => label,
        (None, Routed::Answered(response)) if response.status() == StatusCode::NOT_FOUND => {
            MetricLabel::not_found()
        }
        (None, _) => MetricLabel::refused(),
    };
    (routed, label)
}

/// [`route`] and [`answer_waiting`] in one: the answer to one request, whatever it needs.
/// Generic over the body, so routing, CORS, 404/405, bearer rules and the MCP transport are
/// tested without a socket (see the tests below).
#[cfg(test)]
async fn handle<B: RequestBody>(
    app: &App,
    peer: SocketAddr,
    request: Request<B>,
) -> (Response<Body>, MetricLabel) {
    match route(app, peer, request) {
        (Routed::Answered(response), label) => (response, label),
        (Routed::Waiting(waiting), label) => (answer_waiting(app, peer, waiting).await, label),
    }
}

/// RFC 9112 §3.2: an HTTP/1.1 request has exactly one `Host`, and any request has at most
/// one, with a value that can be a host. Which host is not checked here (the base URL, not
/// `Host`, names this service), except on `/mcp` by the origin policy.
fn check_host<B>(request: &Request<B>) -> Option<Response<Body>> {
    let mut hosts = request.headers().get_all(HOST).iter();
    let problem = match (hosts.next(), hosts.next()) {
        // HTTP/2 names the host in the `:authority` pseudo-header instead (RFC 9113 §8.3.1).
        (None, _) if request.version() == Version::HTTP_11 => {
            "an HTTP/1.1 request needs a Host header"
        }
        (Some(_), Some(_)) => "a request may carry only one Host header",
        (Some(host), None) if !origin::is_valid_host_header(host.as_bytes()) => {
            "the Host header is not a host name or address"
        }
        _ => return None,
    };
    Some(reply::error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        problem,
    ))
}

/// What [`decide`] found.
enum Decision {
    /// The response, made without waiting.
    Respond(Response<Body>),
    /// The endpoint's answer waits (and on `/mcp`, the token was refused for this reason).
    Wait {
        wait_for: WaitFor,
        unauthorized: Option<&'static str>,
    },
}

/// Answers `request` if that needs no waiting, or says where its answer waits. Sets
/// `label` once the endpoint is known (refusals before that count as 404 or refused).
fn decide<B>(
    app: &App,
    peer: SocketAddr,
    request: &Request<B>,
    label: &mut Option<MetricLabel>,
) -> Decision {
    if let Some(refusal) = check_host(request) {
        return Decision::Respond(refusal);
    }
    // Before anything reads the query (the bearer check, the computed reads, MCP), so no
    // request costs more than one bounded pass over it.
    if let Err(refused) = query::check_size(request.uri().query()) {
        return Decision::Respond(reply::error(
            refused.status(),
            "invalid_request",
            &refused.to_string(),
        ));
    }
    let not_found = || {
        Decision::Respond(reply::error(
            StatusCode::NOT_FOUND,
            "not_found",
            "no such resource; start at / or /.well-known/api-catalog",
        ))
    };
    let path = request.uri().path();
    let query = request.uri().query();
    let Some(id) = routes::find(path) else {
        return not_found();
    };
    let route = id.route();
    // With `--dynamic-only`, the compiled documents come from a CDN.
    if app.dynamic_only && !route.dynamic_only {
        return not_found();
    }
    // The live version is held only here, where nothing waits, and one request never
    // sees two versions: answers that need no waiting are produced entirely in here.
    let live = app.live();
    let computed = match route.answered_by {
        AnsweredBy::Computed(computed)
            if !(computed.document_without_query && query.is_none_or(str::is_empty)) =>
        {
            Some(computed)
        }
        _ => None,
    };
    let mut artifact = None;
    if computed.is_none()
        && matches!(
            route.answered_by,
            AnsweredBy::Document | AnsweredBy::Computed(_)
        )
    {
        artifact = live.artifacts.get(path);
        // A page asked for as Markdown is answered by its Markdown twin.
        if let Some(twin) = artifact
            .and_then(|a| a.markdown.as_deref())
            .filter(|_| wants_markdown(request.headers()))
        {
            artifact = live.artifacts.get(twin).or(artifact);
        }
        if artifact.is_none() {
            return not_found();
        }
    }
    *label = Some(id.metric(computed.is_some()));
    let core = match route.answered_by {
        AnsweredBy::Core(core) => Some(core),
        _ => None,
    };
    if core == Some(Core::Mcp) {
        if let Some(refusal) = check_origin(
            app,
            request.headers(),
            request.uri().authority().map(|a| a.as_str()),
        ) {
            return Decision::Respond(refusal);
        }
    }
    let method = request.method();
    if method == Method::OPTIONS {
        return Decision::Respond(preflight(route));
    }
    if !route.methods.contains(method) {
        return Decision::Respond(method_not_allowed(method, route));
    }
    let mut unauthorized = None;
    if let Some(metadata) = route.bearer {
        match check_bearer(app, request) {
            Ok(()) => {}
            // MCP clients show a JSON-RPC error's message; an OAuth-shaped body reaches
            // their users as "the server returned an error". The body is read for its id.
            Err(BearerRefusal::InvalidToken(description)) if core == Some(Core::Mcp) => {
                unauthorized = Some(description);
            }
            Err(BearerRefusal::InvalidToken(description)) => {
                return Decision::Respond(reply::invalid_token(
                    &app.config.base_url,
                    description,
                    metadata,
                ))
            }
            Err(BearerRefusal::Other(refusal)) => return Decision::Respond(*refusal),
        }
    }
    if let Some(artifact) = artifact {
        return Decision::Respond(statics::respond(artifact, request.headers()));
    }
    if let Some(computed) = computed {
        if computed.is_search {
            let client = app.proxies.client_address(peer, request.headers());
            if let Err(wait) = app.admit_search(client) {
                return Decision::Respond(too_many_searches(wait));
            }
        }
        // The parameters are in the body, which is read in `answer_waiting`.
        if method == Method::POST {
            return Decision::Wait {
                wait_for: WaitFor::PostedRead(computed),
                unauthorized,
            };
        }
        // In the moments after a start, searches wait for the search index instead of
        // building it here.
        if computed.is_search && !live.model.has_search_index() {
            return Decision::Wait {
                wait_for: WaitFor::SearchIndex(computed),
                unauthorized,
            };
        }
        return Decision::Respond(computed_answer(
            (computed.read)(&live.model, query, request.headers()),
            request.headers(),
        ));
    }
    let Some(core) = core else {
        return not_found();
    };
    match core {
        Core::Health => {
            let store = app.auth.store_health();
            if store.is_ok() {
                return Decision::Respond(statics::respond(&live.health, request.headers()));
            }
            let mut response = Response::new(Body::new(Bytes::from(live.health_with(&store))));
            response.headers_mut().insert(CONTENT_TYPE, reply::JSON);
            response
                .headers_mut()
                .insert(CACHE_CONTROL, reply::NO_STORE);
            Decision::Respond(response)
        }
        Core::Authorize => {
            let accept = request.headers().get_all(ACCEPT).iter();
            let wants_html = negotiate::named_quality(accept, "text/html").is_some_and(|q| q > 0);
            Decision::Respond(
                endpoints::authorize(wants_html, &app.config.base_url).into_response(),
            )
        }
        Core::Claim => Decision::Respond(endpoints::claim().into_response()),
        Core::Register | Core::Token | Core::Revoke | Core::Mcp => Decision::Wait {
            wait_for: WaitFor::Core(core),
            unauthorized,
        },
    }
}

/// Finishes a request [`route`] left waiting.
pub(super) async fn answer_waiting<B: RequestBody>(
    app: &App,
    peer: SocketAddr,
    waiting: Waiting<B>,
) -> Response<Body> {
    let Waiting {
        request,
        wait_for,
        unauthorized,
    } = waiting;
    let response = match (unauthorized, wait_for) {
        (Some(description), _) => mcp_unauthorized(app, request, description).await,
        (None, WaitFor::Core(core)) => answer_later(app, peer, request, core).await,
        (None, WaitFor::PostedRead(computed)) => posted_read(app, request, computed).await,
        (None, WaitFor::SearchIndex(computed)) => {
            let (parts, _) = request.into_parts();
            answer_when_ready(app, computed, parts.uri.query(), &parts).await
        }
    };
    reply::finish(response)
}

/// A computed read whose parameters are a form or JSON body (NLWeb clients POST to
/// `/ask`): the body, bounded like every body, becomes the query string the read takes.
async fn posted_read<B: RequestBody>(
    app: &App,
    request: Request<B>,
    computed: Computed,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let timeout = app.connections.body_timeout;
    let received = match read_in_turn(&parts, body, read_api::MAX_POSTED_BYTES, timeout).await {
        Ok(received) => received,
        Err(BodyError::ClientGone) => return client_gone(),
        Err(BodyError::TooLarge) => {
            return reply::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &format!("the body is over {} bytes", read_api::MAX_POSTED_BYTES),
            )
        }
        Err(BodyError::TimedOut) => return body_timeout(timeout),
        Err(BodyError::Unreadable) => {
            return reply::error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the request body could not be read",
            )
        }
    };
    let query = match read_api::posted_query(
        single_header(&parts.headers, CONTENT_TYPE),
        &received.bytes,
    ) {
        Ok(query) => query,
        Err(refusal) => return reply::error(refusal.status, refusal.code, &refusal.description),
    };
    // The same bounds as a query string in a URL.
    if let Err(refused) = query::check_size(Some(&query)) {
        return reply::error(refused.status(), "invalid_request", &refused.to_string());
    }
    // The body (and its turn to be read) is not held while the answer waits.
    drop(received);
    answer_when_ready(app, computed, Some(&query), &parts).await
}

/// A computed read answered after a wait: for a search, until the live version's search
/// index is built (only in the moments after a start); then, on HTTP/2, until its
/// connection has room for the answer. It comes from the version live then
/// ([`App::wait_for_search_index`] says why).
async fn answer_when_ready(
    app: &App,
    computed: Computed,
    query: Option<&str>,
    parts: &hyper::http::request::Parts,
) -> Response<Body> {
    if computed.is_search {
        app.wait_for_search_index().await;
    }
    if let Err(gone) = room_for_answer(&parts.extensions).await {
        return gone;
    }
    let live = app.live();
    computed_answer(
        (computed.read)(&live.model, query, &parts.headers),
        &parts.headers,
    )
}

async fn answer_later<B: RequestBody>(
    app: &App,
    peer: SocketAddr,
    request: Request<B>,
    core: Core,
) -> Response<Body> {
    match core {
        Core::Register | Core::Token => {
            let kind = if core == Core::Register {
                Minting::Registration
            } else {
                Minting::Token
            };
            // Resolved only here: forwarding headers matter for rate limits, not for reads.
            let client = app.proxies.client_address(peer, request.headers());
            match app.auth.admit(kind, client, app.clock.now()).await {
                Ok(admitted) => with_body(app, request, AuthPost::Mint(admitted)).await,
                Err(refusal) => refusal.into_response(),
            }
        }
        Core::Revoke => with_body(app, request, AuthPost::Revoke).await,
        Core::Mcp => mcp_post(app, peer, request).await,
        // Answered without waiting, in `decide`.
        Core::Health | Core::Authorize | Core::Claim => {
            reply::error(StatusCode::NOT_FOUND, "not_found", "no such resource")
        }
    }
}

/// What an auth POST is, once admitted.
enum AuthPost {
    /// Registration or token, within its client's rate limit.
    Mint(Admitted),
    Revoke,
}

/// Reads a bounded body and hands the request to the auth core.
async fn with_body<B: RequestBody>(
    app: &App,
    request: Request<B>,
    post: AuthPost,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let received =
        match read_in_turn(&parts, body, MAX_BODY_BYTES, app.connections.body_timeout).await {
            Ok(received) => received,
            Err(BodyError::ClientGone) => return client_gone(),
            Err(BodyError::TooLarge) => return AuthReply::too_large().into_response(),
            Err(BodyError::TimedOut) => return body_timeout(app.connections.body_timeout),
            Err(BodyError::Unreadable) => {
                return AuthReply::error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "the request body could not be read",
                )
                .into_response()
            }
        };
    // A registration's or a token's answer waits for room before it is made. A revocation's
    // is empty: it is stored at once, not lost if the connection ends while it would wait.
    if !matches!(post, AuthPost::Revoke) {
        if let Err(gone) = room_for_answer(&parts.extensions).await {
            return gone;
        }
    }
    let request = PostRequest {
        content_type: single_header(&parts.headers, CONTENT_TYPE),
        authorization: single_header(&parts.headers, AUTHORIZATION),
        body: &received.bytes,
    };
    let now = app.clock.now();
    let answer = match post {
        AuthPost::Mint(admitted) if admitted.kind() == Minting::Registration => {
            app.auth.register(admitted, request, now)
        }
        AuthPost::Mint(admitted) => app.auth.token(admitted, request, now),
        AuthPost::Revoke => app.auth.revoke(request, now).await,
    };
    answer.into_response()
}

/// A computed read, served like a precompiled one (ETag, 304, HEAD), or its refusal.
fn computed_answer(
    answer: Result<crate::compile::Artifact, ReadRefusal>,
    headers: &HeaderMap,
) -> Response<Body> {
    match answer {
        Ok(artifact) => statics::respond(&artifact, headers),
        Err(refusal) => reply::error(refusal.status, refusal.code, &refusal.description),
    }
}

/// 429 for a client over its share of searches, like the minting endpoints' limit.
fn too_many_searches(wait: Duration) -> Response<Body> {
    let seconds = wait.as_secs().max(1);
    let mut response = reply::error(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_exceeded",
        &format!("too many searches from this address; retry in {seconds} s"),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// The `Allow` value of `route`: its methods and `OPTIONS`.
fn allow(route: &Route) -> HeaderValue {
    let mut names: Vec<&str> = route.methods.iter().map(Method::as_str).collect();
    names.push("OPTIONS");
    HeaderValue::from_str(&names.join(", ")).unwrap_or(HeaderValue::from_static("OPTIONS"))
}

fn method_not_allowed(method: &Method, route: &Route) -> Response<Body> {
    let allow = allow(route);
    let mut response = reply::error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        &format!(
            "{method} is not supported here; allowed: {}",
            allow.to_str().unwrap_or_default()
        ),
    );
    response.headers_mut().insert(ALLOW, allow);
    response
}

fn preflight(route: &Route) -> Response<Body> {
    let mut response = Response::new(Body::default());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(ALLOW, allow(route));
    headers.insert(ACCESS_CONTROL_ALLOW_METHODS, allow(route));
    headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, PREFLIGHT_HEADERS);
    headers.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}

/// Why a request's bearer credentials are refused.
enum BearerRefusal {
    /// A 401 with this description.
    InvalidToken(&'static str),
    /// Any other answer (a token in the wrong place, the store unreachable).
    Other(Box<Response<Body>>),
}

fn check_bearer<B>(app: &App, request: &Request<B>) -> Result<(), BearerRefusal> {
    if bearer::token_in_query(request.uri().query()) {
        return Err(BearerRefusal::Other(Box::new(reply::error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "access tokens are accepted only in the Authorization header, never in the query string",
        ))));
    }
    // RFC 6750 §2.2 form-body tokens: a GET has no form body, so any form body here can only
    // be an attempt to send one. (A POST to /mcp must be JSON and is refused with 415 later.)
    let headers = request.headers();
    let is_read = request.method() == Method::GET || request.method() == Method::HEAD;
    let has_body = headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() != b"0");
    if is_read
        && has_body
        && form::is_media_type(
            headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            "application/x-www-form-urlencoded",
        )
    {
        return Err(BearerRefusal::Other(Box::new(reply::error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "access tokens are accepted only in the Authorization header, never in a form body",
        ))));
    }
    let problem = match bearer::presented(headers.get_all(AUTHORIZATION).iter()) {
        Presented::Nothing => return Ok(()),
        Presented::Token(token) => match app.auth.check_access_token(token, app.clock.now()) {
            Ok(()) => return Ok(()),
            // Fail closed: a token that may have been revoked is never accepted.
            Err(AccessTokenError::Unverifiable) => {
                let mut response = reply::error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    AccessTokenError::Unverifiable.description(),
                );
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
                return Err(BearerRefusal::Other(Box::new(response)));
            }
            Err(error) => error.description(),
        },
        Presented::Unusable(problem) => problem,
    };
    Err(BearerRefusal::InvalidToken(problem))
}

/// Routing rules, one a row, through [`handle`] with an in-memory body: no socket.
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use http_body_util::{BodyExt, Full};

    use super::*;
    use crate::auth::admission::RateLimits;
    use crate::auth::endpoints::AuthService;
    use crate::auth::keys::Keyring;
    use crate::auth::store::EmbeddedStore;
    use crate::clock::{Clock, SystemClock};
    use crate::config::{AuthPolicy, BaseUrl, Compression, SiteConfig};
    use crate::live::{self, Source};
    use crate::read_model::ReadModel;
    use crate::serve::origin::OriginPolicy;

    const BASE: &str = "http://127.0.0.1:8080";

    fn app(state: &std::path::Path) -> App {
        app_with(state, |_| {})
    }

    /// [`app`], with its first version changed by `adjust` before it is served.
    fn app_with(state: &std::path::Path, adjust: impl FnOnce(&mut live::Version)) -> App {
        let config = SiteConfig {
            limits: crate::config::Limits::default(),
            base_url: BaseUrl::parse(BASE).unwrap(),
            auth: AuthPolicy::default(),
            templates: None,
            compression: Compression::Deferred,
        };
        let now = crate::clock::unix_seconds(SystemClock.now());
        let keys = Keyring::generate(now).unwrap();
        let source =
            Source::Content(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content"));
        let jwks = keys.published_jwks(&config.auth, now);
        let mut version = live::prepare(&source, &config, &jwks, None).unwrap();
        adjust(&mut version);
        let auth = AuthService::new(
            config.base_url.clone(),
            config.auth.clone(),
            keys,
            Box::new(EmbeddedStore::open(state).unwrap()),
            RateLimits::default(),
        )
        .unwrap();
        let origins = OriginPolicy::new(&config.base_url, &[], true);
        App::new(
            config,
            auth,
            Arc::new(SystemClock),
            source,
            version,
            origins,
        )
    }

    struct Received {
        status: u16,
        headers: HeaderMap,
        body: String,
    }

    /// An app whose search index is being built until the test calls
    /// `finish_building_for_test` on its model, as in the moments after a start.
    fn app_building_its_search_index(state: &std::path::Path) -> App {
        app_with(state, |version| {
            let (site, base) = (version.model.site().clone(), version.model.base().clone());
            let model = ReadModel::without_search_index(Arc::new(site), &base);
            model.start_building_for_test();
            version.model = Arc::new(model);
        })
    }

    async fn send(app: &App, request: Request<Full<Bytes>>) -> Received {
        let peer: SocketAddr = "192.0.2.7:40000".parse().unwrap();
        let (response, _) = handle(app, peer, request).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Received {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    fn request(
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Request<Full<Bytes>> {
        let mut builder = Request::builder().method(method).uri(path);
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            builder = builder.header(HOST, "127.0.0.1:8080");
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap()
    }

    const MCP_JSON: [(&str, &str); 2] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];

    /// A rule, the request, the status and a header or body piece it must produce.
    #[tokio::test]
    async fn routing_rules() {
        let state = tempfile::tempdir().unwrap();
        let app = app(state.path());
        let ping = r#"{"jsonrpc":"2.0","id":41,"method":"ping"}"#;
        let rows: Vec<(&str, Request<Full<Bytes>>, u16, &str)> = vec![
            (
                "an unknown path is a JSON 404",
                request("GET", "/nope", &[], ""),
                404,
                r#""error":"not_found""#,
            ),
            (
                "a document refuses POST and says what it allows",
                request("POST", "/api/company", &[], ""),
                405,
                "allow: GET, HEAD, OPTIONS",
            ),
            (
                "the token endpoint takes only POST",
                request("GET", "/oauth2/token", &[], ""),
                405,
                "allow: POST, OPTIONS",
            ),
            (
                "authorize answers GET, HEAD and POST",
                request("DELETE", "/oauth2/authorize", &[], ""),
                405,
                "allow: GET, HEAD, POST, OPTIONS",
            ),
            (
                "a preflight lists the methods",
                request(
                    "OPTIONS",
                    "/mcp",
                    &[("origin", "http://127.0.0.1:8080")],
                    "",
                ),
                204,
                "access-control-allow-methods: POST, OPTIONS",
            ),
            (
                "every answer allows any origin",
                request("GET", "/api/company", &[], ""),
                200,
                "access-control-allow-origin: *",
            ),
            (
                "Markdown is chosen by Accept",
                request("GET", "/", &[("accept", "text/markdown")], ""),
                200,
                "content-type: text/markdown",
            ),
            (
                "a wildcard keeps the HTML",
                request("GET", "/", &[("accept", "*/*")], ""),
                200,
                "content-type: text/html",
            ),
            (
                "two Host headers are refused",
                request("GET", "/", &[("host", "a"), ("host", "b")], ""),
                400,
                "one Host header",
            ),
            (
                "a bad bearer token is 401 with a challenge",
                request(
                    "GET",
                    "/api/company",
                    &[("authorization", "Bearer junk")],
                    "",
                ),
                401,
                "www-authenticate: Bearer error=\"invalid_token\"",
            ),
            (
                "a token in the query is refused",
                request("GET", "/api/company?access_token=x", &[], ""),
                400,
                "only in the Authorization header",
            ),
            (
                "pages of /api/company are computed",
                request("GET", "/api/company?limit=1", &[], ""),
                200,
                "link: <",
            ),
            (
                "search is computed",
                request("GET", "/api/search?q=calibration", &[], ""),
                200,
                r#""results":["#,
            ),
            (
                "MCP needs JSON",
                request("POST", "/mcp", &[("content-type", "text/plain")], ping),
                415,
                "-32600",
            ),
            (
                "MCP needs an Accept that allows JSON",
                request(
                    "POST",
                    "/mcp",
                    &[
                        ("content-type", "application/json"),
                        ("accept", "text/html"),
                    ],
                    ping,
                ),
                406,
                "-32600",
            ),
            (
                "MCP answers over the transport",
                request("POST", "/mcp", &MCP_JSON, ping),
                200,
                r#""id":41,"result":{}"#,
            ),
            (
                "MCP refuses a foreign Origin",
                request(
                    "POST",
                    "/mcp",
                    &[MCP_JSON[0], MCP_JSON[1], ("origin", "https://evil.example")],
                    ping,
                ),
                403,
                "origin",
            ),
            (
                "a bad token on MCP is a JSON-RPC 401 with the id",
                request(
                    "POST",
                    "/mcp",
                    &[MCP_JSON[0], MCP_JSON[1], ("authorization", "Bearer junk")],
                    ping,
                ),
                401,
                r#""id":41"#,
            ),
            (
                "revoking an unknown token is 200",
                request(
                    "POST",
                    "/oauth2/revoke",
                    &[("content-type", "application/x-www-form-urlencoded")],
                    "token=unknown",
                ),
                200,
                "{}",
            ),
            (
                "claiming is not offered",
                request("POST", "/agent/identity/claim", &[], ""),
                400,
                "claim_not_supported",
            ),
        ];
        for (rule, request, status, expected) in rows {
            let answer = send(&app, request).await;
            let headers: String = answer
                .headers
                .iter()
                .map(|(name, value)| format!("{name}: {}\n", value.to_str().unwrap_or_default()))
                .collect();
            assert_eq!(answer.status, status, "{rule}: {headers}{}", answer.body);
            assert!(
                headers.contains(expected) || answer.body.contains(expected),
                "{rule}: {expected:?} not in\n{headers}{}",
                answer.body
            );
            if headers.contains("content-type: application/json") {
                assert!(
                    answer.body.ends_with('\n'),
                    "{rule}: JSON ends with a newline"
                );
            }
        }
    }

    /// Searches that come while a start's search index is still being built
    /// ([`crate::read_model::ReadModel::build_search_index_in_background`]) wait for it
    /// without holding up their worker (a search that built or waited for the index on
    /// the worker would answer here at once), then answer as any other search: by URL, by
    /// POST and through MCP.
    #[tokio::test]
    async fn searches_wait_while_the_search_index_is_built() {
        let state = tempfile::tempdir().unwrap();
        let app = app_building_its_search_index(state.path());
        let form = [("content-type", "application/x-www-form-urlencoded")];
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_company_info","arguments":{"query":"calibration"}}}"#;
        let search = send(&app, request("GET", "/api/search?q=calibration", &[], ""));
        let asked = send(&app, request("POST", "/ask", &form, "query=calibration"));
        let mcp = send(&app, request("POST", "/mcp", &MCP_JSON, call));
        tokio::pin!(search, asked, mcp);
        tokio::select! {
            biased;
            _ = &mut search => panic!("GET /api/search answered before the index was built"),
            _ = &mut asked => panic!("POST /ask answered before the index was built"),
            _ = &mut mcp => panic!("MCP answered before the index was built"),
            // Completes on its second poll: by then each request was polled twice.
            _ = tokio::task::yield_now() => {}
        }
        app.live().model.finish_building_for_test();
        let (search, asked, mcp) = tokio::join!(search, asked, mcp);
        for (what, answer) in [("GET", &search), ("POST /ask", &asked), ("MCP", &mcp)] {
            assert_eq!(answer.status, 200, "{what}: {}", answer.body);
            assert!(
                answer.body.contains("quality-and-accreditation"),
                "{what}: the calibration page is not among the results: {}",
                answer.body
            );
        }
    }

    /// On HTTP/2, an answer made after an await (its body, the search index) waits for room
    /// in its connection's queue of unread answers, however much room there was when its
    /// handler was called: otherwise every stream of a connection could pass the first check
    /// while the queue is empty, then all answer at once past the cap.
    #[tokio::test]
    async fn answers_made_after_waiting_wait_for_room_in_their_http2_connection() {
        use crate::serve::connection::AnswerRoom;

        let state = tempfile::tempdir().unwrap();
        let app = app_building_its_search_index(state.path());
        let room = AnswerRoom::full_for_test();
        let in_room = |mut request: Request<Full<Bytes>>| {
            request.extensions_mut().insert(room.clone());
            request
        };
        let form = [("content-type", "application/x-www-form-urlencoded")];
        let json = [("content-type", "application/json")];
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_company_info","arguments":{"query":"calibration"}}}"#;
        let search = send(
            &app,
            in_room(request("GET", "/api/search?q=calibration", &[], "")),
        );
        let asked = send(
            &app,
            in_room(request("POST", "/ask", &form, "query=calibration")),
        );
        let mcp = send(&app, in_room(request("POST", "/mcp", &MCP_JSON, call)));
        let registered = send(
            &app,
            in_room(request(
                "POST",
                "/agent/identity",
                &json,
                r#"{"type":"anonymous"}"#,
            )),
        );
        let bad_token = [
            MCP_JSON[0],
            MCP_JSON[1],
            ("authorization", "Bearer not-a-token"),
        ];
        let refused = send(&app, in_room(request("POST", "/mcp", &bad_token, call)));
        tokio::pin!(search, asked, mcp, registered, refused);
        // Round 0: the searches wait for the index. It is built before round 1, so from
        // then on everything waits for room; further rounds give each request more polls
        // than it needs to reach that wait.
        for round in 0..4 {
            if round == 1 {
                app.live().model.finish_building_for_test();
            }
            tokio::select! {
                biased;
                _ = &mut search => panic!("GET /api/search answered while the queue was full"),
                _ = &mut asked => panic!("POST /ask answered while the queue was full"),
                _ = &mut mcp => panic!("MCP answered while the queue was full"),
                _ = &mut registered => panic!("a registration answered while the queue was full"),
                _ = &mut refused => panic!("a bad token answered while the queue was full"),
                _ = tokio::task::yield_now() => {}
            }
        }
        // A revocation is stored and answered (empty) without waiting for room.
        let revoked = send(
            &app,
            in_room(request("POST", "/oauth2/revoke", &form, "token=unknown")),
        )
        .await;
        assert_eq!(revoked.status, 200, "{}", revoked.body);
        room.drain_for_test();
        let (search, asked, mcp, registered, refused) =
            tokio::join!(search, asked, mcp, registered, refused);
        for (what, answer) in [
            ("GET /api/search", &search),
            ("POST /ask", &asked),
            ("MCP", &mcp),
            ("registration", &registered),
        ] {
            assert_eq!(answer.status, 200, "{what}: {}", answer.body);
        }
        assert_eq!(refused.status, 401, "{}", refused.body);
        assert!(
            asked.body.contains("quality-and-accreditation"),
            "{}",
            asked.body
        );
    }

    #[tokio::test]
    async fn a_registration_then_a_token_then_a_bearer_read() {
        let state = tempfile::tempdir().unwrap();
        let app = app(state.path());
        let json = [("content-type", "application/json")];
        let registration = send(
            &app,
            request("POST", "/agent/identity", &json, r#"{"type":"anonymous"}"#),
        )
        .await;
        assert_eq!(registration.status, 200, "{}", registration.body);
        let registration: serde_json::Value = serde_json::from_str(&registration.body).unwrap();
        let assertion = registration["identity_assertion"].as_str().unwrap();
        let form = [("content-type", "application/x-www-form-urlencoded")];
        let grant = format!(
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}"
        );
        let token = send(&app, request("POST", "/oauth2/token", &form, &grant)).await;
        assert_eq!(token.status, 200, "{}", token.body);
        let token: serde_json::Value = serde_json::from_str(&token.body).unwrap();
        let bearer = format!("Bearer {}", token["access_token"].as_str().unwrap());
        let read = send(
            &app,
            request("GET", "/api/company", &[("authorization", &bearer)], ""),
        )
        .await;
        assert_eq!(read.status, 200);
    }
}
