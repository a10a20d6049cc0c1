//! The checks, in the order an agent meets a deployment: discovery documents, the headers
//! they come with, the agent flow, MCP, then DNS. Paths an agent finds through a document
//! (the token endpoint, the server card, the skills) are taken from that document, not
//! assumed, so a document pointing somewhere wrong shows.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::http::Response;
use super::{Doctor, Section, MAX_REGISTRATIONS};
use crate::auth::assertion::{self, Expectations};
use crate::paths;

/// The fixes findings point to, written once.
mod fix {
    pub(super) const HEADERS: &str = "the host does not send the headers in build/_headers: upload _headers with build/ (Netlify, Cloudflare Pages); on S3 + CloudFront set them in a response-headers policy (docs/deploy.md, \"Deploy behind a CDN\")";
    pub(super) const CONTENT_TYPE: &str = "the host guesses the type from the file name: upload build/_headers (Netlify, Cloudflare Pages), or upload with `just deploy-s3`, which sets each Content-Type from manifest.json (S3)";
    pub(super) const PROXY: &str = "the dynamic paths /agent/*, /oauth2/*, /api/* and /mcp must reach `dossier serve --dynamic-only`: build with --origin-url naming the core (its _redirects and _worker.js proxy them), or on CloudFront add a behaviour per path to the core (docs/deploy.md)";
    pub(super) const UPLOAD: &str = "upload all of build/, dot-directories (.well-known) included, or run `dossier serve` where this URL points";
    pub(super) const BASE_URL: &str =
        "build and serve with --base-url set to the public origin this was checked at";
    pub(super) const STATE: &str = "build/ was made with other keys than the core signs with: build with the core's state directory (`dossier build --state DIR`, the same DIR as `serve --state`) and upload build/ again";
    pub(super) const FORWARD: &str = "the proxy in front of the core must forward Authorization, Accept, Origin, Content-Type and the MCP-* headers unchanged (CloudFront: an origin request policy with all viewer headers)";
    pub(super) const NO_CACHE: &str = "the CDN caches an answer that must come from the core each time: turn caching off for /agent/*, /oauth2/*, /api/* and /mcp";
    pub(super) const REWRITE: &str = "the host redirects where it must serve the document: apply the same-site rewrites in build/_redirects (Netlify, Cloudflare Pages), or upload with `just deploy-s3`, which stores each document at its URL path (S3)";
    pub(super) const REBUILD: &str = "rebuild with the current dossier and upload build/ again";
}

const JSON: &str = "application/json";

pub(super) async fn all(doctor: &mut Doctor) {
    let discovered = discovery(doctor).await;
    headers(doctor).await;
    agent_flow(doctor, &discovered).await;
    mcp(doctor).await;
    super::dns::check(doctor).await;
}

/// What discovery learned that later checks use.
#[derive(Default)]
struct Discovered {
    register: Option<String>,
    token: Option<String>,
    revoke: Option<String>,
    /// `(kid, uncompressed P-256 point)` from the published JWKS.
    keys: Vec<(String, Vec<u8>)>,
}

fn text_of(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// What a status means when a document is missing, for the fix.
fn missing_fix(status: StatusCode, dynamic: bool) -> &'static str {
    if status.is_redirection() {
        fix::REWRITE
    } else if dynamic
        && matches!(
            status,
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
        )
    {
        fix::PROXY
    } else {
        fix::UPLOAD
    }
}

impl Doctor {
    /// GETs a document and checks its status and media type; its answer when both hold.
    async fn document(&mut self, path: &str, media_types: &[&str]) -> Option<Response> {
        let response = self.get(path).await?;
        let check = format!("GET {}", self.shown(&self.absolute(path)));
        if response.status != StatusCode::OK {
            let dynamic = path.starts_with("/api/");
            self.fail(
                check,
                "200",
                response.status.to_string(),
                missing_fix(response.status, dynamic),
            );
            return None;
        }
        let media = response.media_type();
        if !media_types.contains(&media.as_str()) {
            self.fail(
                format!("{check}: Content-Type"),
                media_types.join(" or "),
                if media.is_empty() {
                    "none".to_string()
                } else {
                    response.header("content-type")
                },
                fix::CONTENT_TYPE,
            );
            return Some(response);
        }
        self.pass(check);
        Some(response)
    }

    /// A JSON document: its value when it answers 200 with a JSON type and parses.
    async fn json_document(&mut self, path: &str, media_types: &[&str]) -> Option<Value> {
        let response = self.document(path, media_types).await?;
        match response.json() {
            Some(value) => Some(value),
            None => {
                let check = format!("GET {}: body", self.shown(&self.absolute(path)));
                self.fail(check, "JSON", "not JSON", fix::UPLOAD);
                None
            }
        }
    }

    /// Checks that an advertised URL lies under the origin; its path then.
    fn under_origin(&mut self, what: &str, value: &Value) -> Option<String> {
        let url = value.as_str().unwrap_or_default().to_string();
        match url.strip_prefix(self.base.as_str()) {
            Some(path) if path.starts_with('/') => Some(path.to_string()),
            _ => {
                self.fail(
                    what.to_string(),
                    format!("a URL under {}", self.base),
                    text_of(value),
                    fix::BASE_URL,
                );
                None
            }
        }
    }
}

async fn discovery(doctor: &mut Doctor) -> Discovered {
    doctor.section = Section::Discovery;
    let mut found = Discovered::default();
    let base = doctor.base.clone();

    // Protected-resource metadata (RFC 9728), for the API and for MCP.
    if let Some(prm) = doctor
        .json_document(paths::PROTECTED_RESOURCE, &[JSON])
        .await
    {
        let resource = format!("{base}/");
        doctor.expect(
            prm["resource"] == resource.as_str(),
            "protected-resource metadata: resource",
            resource,
            text_of(&prm["resource"]),
            fix::BASE_URL,
        );
        doctor.expect(
            prm["authorization_servers"] == json!([base]),
            "protected-resource metadata: authorization_servers",
            format!("[\"{base}\"]"),
            text_of(&prm["authorization_servers"]),
            fix::BASE_URL,
        );
        doctor.expect(
            prm["bearer_methods_supported"] == json!(["header"]),
            "protected-resource metadata: bearer_methods_supported",
            "[\"header\"]",
            text_of(&prm["bearer_methods_supported"]),
            fix::REBUILD,
        );
    }
    if let Some(prm) = doctor
        .json_document(paths::PROTECTED_RESOURCE_MCP, &[JSON])
        .await
    {
        let resource = format!("{base}{}", paths::MCP);
        doctor.expect(
            prm["resource"] == resource.as_str(),
            "protected-resource metadata for /mcp: resource",
            resource,
            text_of(&prm["resource"]),
            fix::BASE_URL,
        );
    }

    // Authorization-server metadata (RFC 8414): the issuer, and every endpoint it names.
    if let Some(metadata) = doctor
        .json_document(paths::AUTHORIZATION_SERVER, &[JSON])
        .await
    {
        doctor.expect(
            metadata["issuer"] == base.as_str(),
            "authorization-server metadata: issuer equals the protected resource's authorization server",
            base.clone(),
            text_of(&metadata["issuer"]),
            fix::BASE_URL,
        );
        for (name, value) in [
            ("jwks_uri", &metadata["jwks_uri"]),
            ("service_documentation", &metadata["service_documentation"]),
            ("agent_auth.skill", &metadata["agent_auth"]["skill"]),
        ] {
            if let Some(path) = doctor.under_origin(&format!("metadata: {name}"), value) {
                if let Some(response) = doctor.get(&path).await {
                    doctor.expect(
                        response.status == StatusCode::OK,
                        format!("{name} answers: GET {path}"),
                        "200",
                        response.status.to_string(),
                        fix::UPLOAD,
                    );
                }
            }
        }
        if let Some(path) = doctor.under_origin(
            "metadata: authorization_endpoint",
            &metadata["authorization_endpoint"],
        ) {
            // No interactive login is offered: the endpoint answers, with a 400 that says so.
            if let Some(response) = doctor
                .send(Method::GET, &path, &[("accept", JSON)], Bytes::new())
                .await
            {
                doctor.expect(
                    response.status == StatusCode::BAD_REQUEST && response.json().is_some(),
                    format!("authorization_endpoint answers: GET {path}"),
                    "400 with a JSON error saying interactive authorization is not offered",
                    response.status.to_string(),
                    missing_fix(response.status, true),
                );
            }
        }
        found.token = doctor.under_origin("metadata: token_endpoint", &metadata["token_endpoint"]);
        found.revoke = doctor.under_origin(
            "metadata: revocation_endpoint",
            &metadata["revocation_endpoint"],
        );
        found.register = doctor.under_origin(
            "metadata: agent_auth.register_uri",
            &metadata["agent_auth"]["register_uri"],
        );
        if let Some(path) = doctor.under_origin(
            "metadata: agent_auth.claim_uri",
            &metadata["agent_auth"]["claim_uri"],
        ) {
            if let Some(response) = doctor
                .send(
                    Method::POST,
                    &path,
                    &[("content-type", JSON)],
                    Bytes::from_static(b"{}"),
                )
                .await
            {
                let code = response.json().map(|body| body["error"].clone());
                doctor.expect(
                    code == Some(json!("claim_not_supported")),
                    format!("claim_uri answers: POST {path}"),
                    "400 claim_not_supported",
                    format!(
                        "{} {}",
                        response.status,
                        code.map(|c| text_of(&c)).unwrap_or_default()
                    ),
                    missing_fix(response.status, true),
                );
            }
        }
    }

    // The keys that verify identity assertions.
    if let Some(jwks) = doctor.json_document(paths::JWKS, &[JSON]).await {
        for key in jwks["keys"].as_array().into_iter().flatten() {
            let point = (|| {
                if key["kty"] != "EC" || key["crv"] != "P-256" {
                    return None;
                }
                let x = URL_SAFE_NO_PAD.decode(key["x"].as_str()?).ok()?;
                let y = URL_SAFE_NO_PAD.decode(key["y"].as_str()?).ok()?;
                (x.len() == 32 && y.len() == 32).then(|| [&[4u8][..], &x, &y].concat())
            })();
            if let (Some(kid), Some(point)) = (key["kid"].as_str(), point) {
                found.keys.push((kid.to_string(), point));
            }
        }
        doctor.expect(
            !found.keys.is_empty(),
            "JWKS: P-256 keys with a kid",
            "at least one",
            format!(
                "{} usable of {}",
                found.keys.len(),
                jwks["keys"].as_array().map_or(0, Vec::len)
            ),
            fix::REBUILD,
        );
    }

    api_catalog(doctor).await;
    openapi(doctor).await;
    auth_md(doctor).await;
    ai_catalog(doctor).await;
    skills(doctor).await;
    text_documents(doctor).await;
    found
}

async fn api_catalog(doctor: &mut Doctor) {
    let base = doctor.base.clone();
    let Some(response) = doctor
        .document(paths::API_CATALOG, &["application/linkset+json"])
        .await
    else {
        return;
    };
    let content_type = response.header("content-type");
    doctor.expect(
        content_type.contains("profile=\"https://www.rfc-editor.org/info/rfc9727\""),
        "api-catalog: Content-Type profile",
        "application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"",
        content_type,
        fix::CONTENT_TYPE,
    );
    let link = response.header("link");
    doctor.expect(
        link.contains("rel=\"api-catalog\""),
        "api-catalog: Link header rel=\"api-catalog\"",
        format!("<{base}{}>; rel=\"api-catalog\"", paths::API_CATALOG),
        if link.is_empty() {
            "none".to_string()
        } else {
            link
        },
        fix::HEADERS,
    );
    let Some(document) = response.json() else {
        doctor.fail("api-catalog: body", "a linkset", "not JSON", fix::UPLOAD);
        return;
    };
    let only_linkset = document
        .as_object()
        .is_some_and(|o| o.len() == 1 && o.contains_key("linkset"));
    doctor.expect(
        only_linkset,
        "api-catalog: linkset is the only member",
        "{\"linkset\": […]}",
        text_of(&document).chars().take(120).collect::<String>(),
        fix::REBUILD,
    );
    let entry = &document["linkset"][0];
    for relation in ["service-desc", "status", "service-meta"] {
        let href = entry[relation][0]["href"].clone();
        if let Some(path) = doctor.under_origin(&format!("api-catalog: {relation} href"), &href) {
            if let Some(answer) = doctor.get(&path).await {
                doctor.expect(
                    answer.status == StatusCode::OK,
                    format!("api-catalog: {relation} answers: GET {path}"),
                    "200",
                    answer.status.to_string(),
                    missing_fix(answer.status, path.starts_with("/api/")),
                );
            }
        }
    }
}

async fn openapi(doctor: &mut Doctor) {
    let base = doctor.base.clone();
    let Some(document) = doctor.json_document(paths::OPENAPI, &[JSON]).await else {
        return;
    };
    let version = text_of(&document["openapi"]);
    doctor.expect(
        version.starts_with("3.1."),
        "OpenAPI: version",
        "3.1.x",
        version,
        fix::REBUILD,
    );
    doctor.expect(
        document["servers"][0]["url"] == base.as_str(),
        "OpenAPI: servers[0].url",
        base,
        text_of(&document["servers"][0]["url"]),
        fix::BASE_URL,
    );
    // Structure an OpenAPI reader depends on: every operation has responses, and every
    // `$ref` names a schema that exists.
    let mut problems = Vec::new();
    let operations = document["paths"].as_object().map_or(0, |paths| {
        let mut count = 0;
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                if ["get", "head", "post", "put", "delete", "options", "patch"]
                    .contains(&method.as_str())
                {
                    count += 1;
                    if !operation["responses"].is_object() {
                        problems.push(format!("{method} {path} has no responses"));
                    }
                }
            }
        }
        count
    });
    let mut references = Vec::new();
    collect_references(&document, &mut references);
    for reference in references {
        let target = reference
            .strip_prefix('#')
            .map(|pointer| document.pointer(pointer).is_some())
            .unwrap_or(false);
        if !target {
            problems.push(format!("$ref {reference} does not resolve"));
        }
    }
    doctor.expect(
        operations > 0 && problems.is_empty(),
        format!("OpenAPI: {operations} operations, each with responses, every $ref resolving"),
        "a valid document",
        problems.join("; "),
        fix::REBUILD,
    );
}

fn collect_references(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                if key == "$ref" {
                    if let Some(reference) = member.as_str() {
                        into.push(reference.to_string());
                    }
                } else {
                    collect_references(member, into);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_references(item, into)),
        _ => {}
    }
}

async fn auth_md(doctor: &mut Doctor) {
    let mut bodies = Vec::new();
    for path in [paths::AUTH_MD, paths::AUTH_MD_WELL_KNOWN] {
        if let Some(response) = doctor.document(path, &["text/markdown"]).await {
            bodies.push(response.body.clone());
        }
    }
    if let Some(first) = bodies.first() {
        let heading = String::from_utf8_lossy(first)
            .lines()
            .find(|line| line.starts_with("# "))
            .unwrap_or_default()
            .to_string();
        doctor.expect(
            heading.contains("auth.md"),
            "auth.md: its H1 names auth.md",
            "# … auth.md …",
            heading,
            fix::REBUILD,
        );
    }
    if bodies.len() == 2 {
        doctor.expect(
            bodies[0] == bodies[1],
            "auth.md: /auth.md and /.well-known/auth.md are the same",
            "the same bytes",
            "different bodies",
            fix::UPLOAD,
        );
    }
}

async fn ai_catalog(doctor: &mut Doctor) {
    let Some(catalog) = doctor
        .json_document(paths::AI_CATALOG, &["application/ai-catalog+json", JSON])
        .await
    else {
        return;
    };
    let entries = catalog["entries"].as_array().cloned().unwrap_or_default();
    let complete = |entry: &Value| {
        ["identifier", "displayName", "url"]
            .iter()
            .all(|field| entry[field].is_string())
            && (entry["type"].is_string() || entry["mediaType"].is_string())
    };
    doctor.expect(
        catalog["specVersion"].is_string()
            && catalog["host"]["displayName"].is_string()
            && !entries.is_empty()
            && entries.iter().all(complete),
        "AI catalog: specVersion, host and entries with identifier, displayName, type and url",
        "every required field",
        text_of(&catalog).chars().take(160).collect::<String>(),
        fix::REBUILD,
    );
    let card_url = entries
        .iter()
        .find(|entry| {
            entry["type"] == "application/mcp-server-card+json"
                || entry["mediaType"] == "application/mcp-server-card+json"
        })
        .map(|entry| entry["url"].clone());
    let Some(card_url) = card_url else {
        doctor.fail(
            "AI catalog: names the MCP server card",
            "an entry of type application/mcp-server-card+json",
            "none",
            fix::REBUILD,
        );
        return;
    };
    let Some(path) = doctor.under_origin("AI catalog: server card url", &card_url) else {
        return;
    };
    let Some(card) = doctor
        .json_document(&path, &["application/mcp-server-card+json", JSON])
        .await
    else {
        return;
    };
    let mcp_url = format!("{}{}", doctor.base, paths::MCP);
    let remote = card["remotes"].as_array().and_then(|remotes| {
        remotes
            .iter()
            .find(|remote| remote["url"] == mcp_url.as_str())
    });
    doctor.expect(
        card["name"].is_string()
            && card["version"].is_string()
            && remote.is_some_and(|remote| remote["type"] == "streamable-http"),
        "server card: name, version and a streamable-http remote at /mcp",
        format!("remotes: [{{\"type\": \"streamable-http\", \"url\": \"{mcp_url}\"}}]"),
        text_of(&card["remotes"]),
        fix::BASE_URL,
    );
}

async fn skills(doctor: &mut Doctor) {
    let Some(index) = doctor.json_document(paths::AGENT_SKILLS, &[JSON]).await else {
        return;
    };
    let skills = index["skills"].as_array().cloned().unwrap_or_default();
    if skills.is_empty() {
        doctor.fail(
            "skills index: skills",
            "at least one skill",
            "none",
            fix::REBUILD,
        );
    }
    for skill in skills {
        let name = text_of(&skill["name"]);
        let Some(path) = doctor.under_origin(&format!("skill {name}: url"), &skill["url"]) else {
            continue;
        };
        let Some(response) = doctor.document(&path, &["text/markdown"]).await else {
            continue;
        };
        let digest = format!("sha256:{}", hex(&Sha256::digest(&response.body)));
        doctor.expect(
            skill["digest"] == digest.as_str(),
            format!("skill {name}: the digest matches the bytes served"),
            text_of(&skill["digest"]),
            digest,
            "the index and the skill come from different builds: upload all of one build/",
        );
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

async fn text_documents(doctor: &mut Doctor) {
    let base = doctor.base.clone();
    if let Some(llms) = doctor
        .document(paths::LLMS_TXT, &["text/plain", "text/markdown"])
        .await
    {
        let text = llms.text();
        doctor.expect(
            text.starts_with("# "),
            "llms.txt: starts with an H1",
            "# <company>",
            text.lines().next().unwrap_or_default().to_string(),
            fix::REBUILD,
        );
    }
    if let Some(robots) = doctor.document(paths::ROBOTS_TXT, &["text/plain"]).await {
        let text = robots.text();
        let sitemap = format!("Sitemap: {base}{}", paths::SITEMAP);
        if text.contains(&sitemap) {
            doctor.pass("robots.txt: names the sitemap");
        } else {
            doctor.warn(
                "robots.txt: names the sitemap",
                sitemap,
                "no such line",
                fix::BASE_URL,
            );
        }
    }
    if let Some(sitemap) = doctor
        .document(paths::SITEMAP, &["application/xml", "text/xml"])
        .await
    {
        let text = sitemap.text();
        let first = format!("<loc>{base}/");
        doctor.expect(
            text.contains("<urlset") && text.contains(&first),
            "sitemap.xml: a urlset of this origin's pages",
            format!("<urlset> with {first}…"),
            text.chars().take(120).collect::<String>(),
            fix::BASE_URL,
        );
    }
    if let Some(home) = doctor.document(paths::INDEX, &["text/html"]).await {
        let html = home.text();
        let json_ld = html
            .split_once("<script type=\"application/ld+json\">")
            .and_then(|(_, rest)| rest.split_once("</script>"))
            .and_then(|(data, _)| serde_json::from_str::<Value>(data).ok());
        doctor.expect(
            json_ld.as_ref().is_some_and(|data| {
                text_of(&data["@context"]).contains("schema.org") && data["@type"].is_string()
            }),
            "/: JSON-LD (schema.org) in the page",
            "<script type=\"application/ld+json\"> with a schema.org @context",
            json_ld.map_or("none".to_string(), |data| text_of(&data["@type"])),
            fix::REBUILD,
        );
    }
}

async fn headers(doctor: &mut Doctor) {
    doctor.section = Section::Headers;
    let base = doctor.base.clone();

    // CORS on a read, as a browser-based agent sends it.
    let origin = [("origin", "https://agent.example")];
    if let Some(response) = doctor
        .send(Method::GET, paths::API_COMPANY, &origin, Bytes::new())
        .await
    {
        let allow = response.header("access-control-allow-origin");
        doctor.expect(
            allow == "*",
            "CORS: Access-Control-Allow-Origin on GET /api/company",
            "*",
            if allow.is_empty() {
                "none".to_string()
            } else {
                allow
            },
            fix::HEADERS,
        );
        let exposed = response
            .header("access-control-expose-headers")
            .to_ascii_lowercase();
        doctor.expect(
            exposed.contains("www-authenticate") && exposed.contains("etag"),
            "CORS: Access-Control-Expose-Headers names WWW-Authenticate and ETag",
            "ETag, Link, WWW-Authenticate, …",
            if exposed.is_empty() {
                "none".to_string()
            } else {
                exposed
            },
            fix::HEADERS,
        );
        let vary = response.header("vary").to_ascii_lowercase();
        doctor.expect(
            vary.contains("accept-encoding"),
            "Vary: Accept-Encoding on GET /api/company",
            "Accept-Encoding",
            if vary.is_empty() {
                "none".to_string()
            } else {
                vary
            },
            fix::HEADERS,
        );
        let etag = response.header("etag");
        if doctor.expect(
            etag.starts_with('"'),
            "ETag: a strong validator on GET /api/company",
            "\"…\"",
            if etag.is_empty() {
                "none".to_string()
            } else {
                etag.clone()
            },
            fix::HEADERS,
        ) {
            if let Some(again) = doctor
                .send(
                    Method::GET,
                    paths::API_COMPANY,
                    &[("if-none-match", &etag)],
                    Bytes::new(),
                )
                .await
            {
                doctor.expect(
                    again.status == StatusCode::NOT_MODIFIED,
                    "If-None-Match with that ETag: 304",
                    "304",
                    again.status.to_string(),
                    fix::HEADERS,
                );
            }
        }
    }

    // Preflights, answered before any authentication. MCP refuses foreign origins (the
    // DNS-rebinding defence), so its preflight comes from the site's own.
    for (path, method, headers, from) in [
        (
            paths::API_COMPANY,
            "GET",
            "authorization",
            "https://agent.example",
        ),
        (
            paths::MCP,
            "POST",
            "content-type, mcp-protocol-version, authorization",
            base.as_str(),
        ),
    ] {
        let request = [
            ("origin", from),
            ("access-control-request-method", method),
            ("access-control-request-headers", headers),
        ];
        let Some(response) = doctor
            .send(Method::OPTIONS, path, &request, Bytes::new())
            .await
        else {
            continue;
        };
        let allowed = response
            .header("access-control-allow-headers")
            .to_ascii_lowercase();
        let ok = response.status.is_success()
            && response.header("access-control-allow-origin") == "*"
            && headers.split(", ").all(|header| allowed.contains(header));
        doctor.expect(
            ok,
            format!("CORS preflight: OPTIONS {path} for {method} with {headers}"),
            format!(
                "2xx, Access-Control-Allow-Origin: *, Access-Control-Allow-Headers with {headers}"
            ),
            format!(
                "{}, allow-origin {:?}, allow-headers {:?}",
                response.status,
                response.header("access-control-allow-origin"),
                allowed
            ),
            if path == paths::MCP {
                fix::PROXY
            } else {
                fix::HEADERS
            },
        );
    }

    // Compression of a large document.
    if let Some(response) = doctor
        .send(
            Method::GET,
            paths::OPENAPI,
            &[("accept-encoding", "br, gzip")],
            Bytes::new(),
        )
        .await
    {
        let encoding = response.header("content-encoding");
        if matches!(encoding.as_str(), "br" | "gzip") {
            doctor.pass(format!("compression: GET /openapi.json sent as {encoding}"));
        } else {
            doctor.warn(
                "compression: GET /openapi.json with Accept-Encoding: br, gzip",
                "Content-Encoding: br or gzip",
                if encoding.is_empty() {
                    "identity".to_string()
                } else {
                    encoding
                },
                "turn on compression at the host, or build with --precompress for `serve --from`",
            );
        }
    }

    // Nothing dynamic cached: health comes from the core at every request.
    if let Some(response) = doctor.get(paths::API_HEALTH).await {
        let hit = ["age", "x-cache", "cf-cache-status", "x-cache-status"]
            .iter()
            .map(|name| (name, response.header(name)))
            .find(|(name, value)| {
                !value.is_empty() && (**name == "age" || value.to_ascii_lowercase().contains("hit"))
            });
        doctor.expect(
            response.status == StatusCode::OK && hit.is_none(),
            "GET /api/health comes from the core, not a cache",
            "200 with no Age and no cache hit",
            match hit {
                Some((name, value)) => format!("{} {name}: {value}", response.status),
                None => response.status.to_string(),
            },
            if response.status == StatusCode::OK {
                fix::NO_CACHE
            } else {
                missing_fix(response.status, true)
            },
        );
    }

    // The home page: discovery links and security headers.
    if let Some(home) = doctor.get(paths::INDEX).await {
        let link = home.header("link");
        doctor.expect(
            link.contains("rel=\"api-catalog\"") && link.contains("rel=\"service-desc\""),
            "Link header on /: api-catalog and service-desc",
            format!("<{base}{}>; rel=\"api-catalog\", …", paths::API_CATALOG),
            if link.is_empty() {
                "none".to_string()
            } else {
                link
            },
            fix::HEADERS,
        );
        for (name, wanted) in [
            ("x-content-type-options", "nosniff"),
            ("content-security-policy", "default-src"),
            ("referrer-policy", ""),
        ] {
            let value = home.header(name);
            if !value.is_empty() && value.contains(wanted) {
                doctor.pass(format!("security header on /: {name}"));
            } else {
                doctor.warn(
                    format!("security header on /: {name}"),
                    if wanted.is_empty() {
                        "present".to_string()
                    } else {
                        wanted.to_string()
                    },
                    if value.is_empty() {
                        "none".to_string()
                    } else {
                        value
                    },
                    fix::HEADERS,
                );
            }
        }
    }
    if let Some(twin) = doctor.get(paths::INDEX_MD).await {
        doctor.expect(
            twin.status == StatusCode::OK && twin.media_type() == "text/markdown",
            "GET /index.md: text/markdown",
            "200 text/markdown",
            format!("{} {}", twin.status, twin.header("content-type")),
            fix::CONTENT_TYPE,
        );
    }
}

fn form(pairs: &[(&str, &str)]) -> Bytes {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        serializer.append_pair(name, value);
    }
    Bytes::from(serializer.finish())
}

const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

fn no_store(response: &Response) -> bool {
    response.header("cache-control").contains("no-store")
}

async fn agent_flow(doctor: &mut Doctor, found: &Discovered) {
    doctor.section = Section::AgentFlow;
    let base = doctor.base.clone();
    let register = found
        .register
        .clone()
        .unwrap_or_else(|| paths::AGENT_IDENTITY.to_string());
    let token_path = found
        .token
        .clone()
        .unwrap_or_else(|| paths::OAUTH_TOKEN.to_string());
    let revoke_path = found
        .revoke
        .clone()
        .unwrap_or_else(|| paths::OAUTH_REVOKE.to_string());

    // Register anonymously.
    if doctor.registrations >= MAX_REGISTRATIONS {
        return;
    }
    doctor.registrations += 1;
    let Some(response) = doctor
        .send(
            Method::POST,
            &register,
            &[("content-type", JSON)],
            Bytes::from_static(br#"{"type":"anonymous"}"#),
        )
        .await
    else {
        return;
    };
    let assertion = response
        .json()
        .and_then(|body| body["identity_assertion"].as_str().map(str::to_string));
    let Some(assertion) = assertion.filter(|_| response.status == StatusCode::OK) else {
        doctor.fail(
            format!("register: POST {register}"),
            "200 with an identity_assertion",
            format!("{} {}", response.status, response.media_type()),
            missing_fix(response.status, true),
        );
        return;
    };
    doctor.pass(format!("register: POST {register}"));
    doctor.expect(
        no_store(&response),
        "register: Cache-Control: no-store",
        "no-store",
        response.header("cache-control"),
        fix::NO_CACHE,
    );

    // The assertion verifies against the JWKS that is published.
    let verified = assertion::verify(
        &assertion,
        |kid| {
            found
                .keys
                .iter()
                .find(|(id, _)| Some(id.as_str()) == kid)
                .map(|(_, point)| point.as_slice())
        },
        &Expectations {
            issuer: &base,
            now: std::time::SystemTime::now(),
            skew: std::time::Duration::from_secs(300),
            max_lifetime: std::time::Duration::from_secs(366 * 24 * 3600),
            check_time: true,
        },
    );
    let kid = assertion
        .split('.')
        .next()
        .and_then(|header| URL_SAFE_NO_PAD.decode(header).ok())
        .and_then(|header| serde_json::from_slice::<Value>(&header).ok())
        .map(|header| text_of(&header["kid"]))
        .unwrap_or_default();
    let published: Vec<&str> = found.keys.iter().map(|(kid, _)| kid.as_str()).collect();
    doctor.expect(
        verified.is_ok(),
        "identity assertion verifies against the published JWKS",
        format!(
            "signed by a key in {} ({})",
            paths::JWKS,
            published.join(", ")
        ),
        match &verified {
            Ok(_) => String::new(),
            Err(_) if !published.contains(&kid.as_str()) => {
                format!("signed with kid {kid}, which the JWKS does not publish")
            }
            Err(error) => format!("kid {kid}: {}", error.description()),
        },
        fix::STATE,
    );

    // Exchange it for an access token.
    let Some(response) = doctor
        .send(
            Method::POST,
            &token_path,
            &[FORM],
            form(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", &assertion),
            ]),
        )
        .await
    else {
        return;
    };
    let token = response
        .json()
        .and_then(|body| body["access_token"].as_str().map(str::to_string))
        .filter(|_| response.status == StatusCode::OK);
    let Some(token) = token else {
        let error = response
            .json()
            .map(|body| text_of(&body["error"]))
            .unwrap_or_default();
        doctor.fail(
            format!("token: POST {token_path} (jwt-bearer)"),
            "200 with an access_token",
            format!("{} {error}", response.status),
            if error == "invalid_grant" {
                fix::STATE
            } else {
                missing_fix(response.status, true)
            },
        );
        return;
    };
    doctor.pass(format!("token: POST {token_path} (jwt-bearer)"));
    doctor.expect(
        no_store(&response) && response.header("pragma").contains("no-cache"),
        "token: Cache-Control: no-store and Pragma: no-cache",
        "no-store, no-cache",
        format!(
            "{:?}, {:?}",
            response.header("cache-control"),
            response.header("pragma")
        ),
        fix::NO_CACHE,
    );

    // Use it; an invalid one must be refused (which also shows Authorization reaches the core).
    let bearer = format!("Bearer {token}");
    if let Some(response) = doctor
        .send(
            Method::GET,
            paths::API_COMPANY,
            &[("authorization", &bearer)],
            Bytes::new(),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::OK,
            "GET /api/company with the token",
            "200",
            response.status.to_string(),
            fix::PROXY,
        );
    }
    let prm = format!("resource_metadata=\"{base}{}\"", paths::PROTECTED_RESOURCE);
    challenge(
        doctor,
        paths::API_COMPANY,
        "Bearer doctor-invalid-token",
        &prm,
        "an invalid token",
    )
    .await;

    // Revoke it; it must then be refused.
    if let Some(response) = doctor
        .send(
            Method::POST,
            &revoke_path,
            &[FORM],
            form(&[("token", &token)]),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::OK,
            format!("revoke: POST {revoke_path}"),
            "200",
            response.status.to_string(),
            missing_fix(response.status, true),
        );
    }
    challenge(
        doctor,
        paths::API_COMPANY,
        &bearer,
        &prm,
        "the revoked token",
    )
    .await;

    // client_credentials needs no secret.
    if let Some(response) = doctor
        .send(
            Method::POST,
            &token_path,
            &[FORM],
            form(&[("grant_type", "client_credentials")]),
        )
        .await
    {
        let ok = response.status == StatusCode::OK
            && response
                .json()
                .is_some_and(|body| body["access_token"].is_string());
        doctor.expect(
            ok,
            format!("token: POST {token_path} (client_credentials)"),
            "200 with an access_token",
            response.status.to_string(),
            missing_fix(response.status, true),
        );
    }
}

/// A request with a bad token must get the 401 challenge naming the metadata.
async fn challenge(
    doctor: &mut Doctor,
    path: &str,
    authorization: &str,
    metadata: &str,
    what: &str,
) {
    let (method, headers, body) = if path == paths::MCP {
        (
            Method::POST,
            vec![
                ("authorization", authorization),
                ("content-type", JSON),
                ("accept", "application/json, text/event-stream"),
            ],
            Bytes::from(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string()),
        )
    } else {
        (
            Method::GET,
            vec![("authorization", authorization)],
            Bytes::new(),
        )
    };
    let Some(response) = doctor.send(method.clone(), path, &headers, body).await else {
        return;
    };
    let challenge = response.header("www-authenticate");
    let ok = response.status == StatusCode::UNAUTHORIZED
        && challenge.contains("error=\"invalid_token\"")
        && challenge.contains(metadata);
    doctor.expect(
        ok,
        format!("{method} {path} with {what}: 401 challenge"),
        format!("401, WWW-Authenticate: Bearer error=\"invalid_token\", …, {metadata}"),
        format!("{} {:?}", response.status, challenge),
        if response.status == StatusCode::OK {
            fix::FORWARD
        } else {
            fix::PROXY
        },
    );
}

async fn mcp(doctor: &mut Doctor) {
    doctor.section = Section::Mcp;
    let base = doctor.base.clone();
    const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");
    const TYPE: (&str, &str) = ("content-type", JSON);

    // The legacy era: initialize, tools/list, one tools/call.
    let request = |method: &str, params: Value| {
        Bytes::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
        )
    };
    let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE],
            request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "dossier-doctor", "version": env!("CARGO_PKG_VERSION")}}),
            ),
        )
        .await
    else {
        return;
    };
    let result = response
        .json()
        .map(|body| body["result"].clone())
        .unwrap_or(Value::Null);
    if !doctor.expect(
        response.status == StatusCode::OK && result["protocolVersion"].is_string(),
        "legacy era: initialize",
        "200 with a result naming the protocol version",
        format!(
            "{} {}",
            response.status,
            text_of(&result).chars().take(80).collect::<String>()
        ),
        missing_fix(response.status, true),
    ) {
        return;
    }
    let tools = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE],
            request("tools/list", json!({})),
        )
        .await
        .and_then(|response| response.json())
        .and_then(|body| body["result"]["tools"].as_array().cloned())
        .unwrap_or_default();
    doctor.expect(
        !tools.is_empty(),
        "legacy era: tools/list",
        "at least one tool",
        format!("{} tools", tools.len()),
        fix::REBUILD,
    );
    // A tool that needs no arguments, so the call cannot fail for want of one.
    let tool = tools
        .iter()
        .find(|tool| {
            tool["inputSchema"]["required"]
                .as_array()
                .is_none_or(Vec::is_empty)
        })
        .and_then(|tool| tool["name"].as_str())
        .map(str::to_string);
    if let Some(name) = &tool {
        let answer = doctor
            .send(
                Method::POST,
                paths::MCP,
                &[ACCEPT, TYPE],
                request("tools/call", json!({"name": name, "arguments": {}})),
            )
            .await;
        if let Some(answer) = answer {
            let result = answer
                .json()
                .map(|body| body["result"].clone())
                .unwrap_or(Value::Null);
            doctor.expect(
                answer.status == StatusCode::OK && result.is_object() && result["isError"] != true,
                format!("legacy era: tools/call {name}"),
                "200 with a result",
                format!(
                    "{} {}",
                    answer.status,
                    text_of(&result).chars().take(80).collect::<String>()
                ),
                fix::PROXY,
            );
        }
    }

    // The modern era: server/discover, then the same call, with its headers and `_meta`.
    let modern = crate::mcp::MODERN_VERSIONS[0];
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": modern,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[
                ACCEPT,
                TYPE,
                ("mcp-protocol-version", modern),
                ("mcp-method", "server/discover"),
            ],
            request("server/discover", json!({"_meta": meta})),
        )
        .await
    else {
        return;
    };
    let result = response
        .json()
        .map(|body| body["result"].clone())
        .unwrap_or(Value::Null);
    doctor.expect(
        response.status == StatusCode::OK && result.is_object(),
        format!("modern era ({modern}): server/discover"),
        "200 with a result",
        format!(
            "{} {}",
            response.status,
            text_of(&response.json().unwrap_or(Value::Null))
                .chars()
                .take(120)
                .collect::<String>()
        ),
        fix::FORWARD,
    );
    if let Some(name) = &tool {
        if let Some(answer) = doctor
            .send(
                Method::POST,
                paths::MCP,
                &[
                    ACCEPT,
                    TYPE,
                    ("mcp-protocol-version", modern),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", name),
                ],
                request(
                    "tools/call",
                    json!({"name": name, "arguments": {}, "_meta": meta}),
                ),
            )
            .await
        {
            let result = answer
                .json()
                .map(|body| body["result"].clone())
                .unwrap_or(Value::Null);
            doctor.expect(
                answer.status == StatusCode::OK && result.is_object() && result["isError"] != true,
                format!("modern era ({modern}): tools/call {name}"),
                "200 with a result",
                format!(
                    "{} {}",
                    answer.status,
                    text_of(&answer.json().unwrap_or(Value::Null))
                        .chars()
                        .take(120)
                        .collect::<String>()
                ),
                fix::FORWARD,
            );
        }
    }

    // Headers that must reach the core: each request below is refused by the core, and
    // accepted only when a proxy drops the header.
    let unknown_version = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE, ("mcp-protocol-version", "1999-01-01")],
            request("tools/list", json!({})),
        )
        .await;
    if let Some(response) = unknown_version {
        let refused = response.status.is_client_error()
            || response
                .json()
                .is_some_and(|body| body["error"].is_object());
        doctor.expect(
            refused,
            "MCP-Protocol-Version reaches the core (an unknown version is refused)",
            "an error for version 1999-01-01",
            format!("{} with a result", response.status),
            fix::FORWARD,
        );
    }
    if let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[("accept", "text/html"), TYPE],
            request("ping", json!({})),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::NOT_ACCEPTABLE,
            "Accept reaches the core (Accept: text/html is refused with 406)",
            "406",
            response.status.to_string(),
            fix::FORWARD,
        );
    }
    if let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE, ("origin", "https://doctor.invalid")],
            request("ping", json!({})),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::FORBIDDEN,
            "Origin reaches the core (a foreign Origin is refused with 403)",
            "403",
            response.status.to_string(),
            fix::FORWARD,
        );
    }
    let metadata = format!(
        "resource_metadata=\"{base}{}\"",
        paths::PROTECTED_RESOURCE_MCP
    );
    challenge(
        doctor,
        paths::MCP,
        "Bearer doctor-invalid-token",
        &metadata,
        "an invalid token",
    )
    .await;
}
