//! Responses for precompiled artifacts: conditional GET, encoding negotiation, HEAD.
//! Nothing here computes a body; it picks one and clones its `Bytes`.

use hyper::header::{
    HeaderMap, HeaderValue, ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG,
    IF_NONE_MATCH, VARY,
};
use hyper::{Response, StatusCode};

use super::negotiate::{choose_encoding, none_match};
use super::reply::{self, Body};
use crate::compile::Artifact;

/// The response for `artifact` given the request headers. HEAD gets the same response;
/// hyper sends its headers (with the body's `Content-Length`) and drops the body.
pub(super) fn respond(artifact: &Artifact, request: &HeaderMap) -> Response<Body> {
    let encoding = choose_encoding(request.get_all(ACCEPT_ENCODING).iter(), &artifact.encoded);
    let representation = artifact.representation(encoding);

    let not_modified = request.contains_key(IF_NONE_MATCH)
        && none_match(
            request.get_all(IF_NONE_MATCH).iter(),
            representation.etag.as_bytes(),
        );
    let mut response = if not_modified {
        let mut response = Response::new(Body::Empty);
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(Body::new(representation.body.clone()));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, artifact.content_type.clone());
        if let Some(encoding) = encoding {
            response
                .headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static(encoding.token()));
        }
        response
    };
    let headers = response.headers_mut();
    // Room for all of them at once (these, the artifact's, and the common ones added by
    // `reply::finish`), instead of growing the map twice on every request.
    headers.reserve(8 + artifact.headers.len() + reply::COMMON_COUNT);
    headers.insert(ETAG, representation.etag.header());
    headers.insert(CACHE_CONTROL, artifact.cache.header());
    headers.insert(VARY, artifact.vary.header());
    for (name, value) in &artifact.headers {
        headers.append(name.clone(), value.clone());
    }
    response
}
