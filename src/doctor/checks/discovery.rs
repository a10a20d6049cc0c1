//! Discovery: the documents an agent reads first, and every endpoint they name.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{fix, missing_fix, text_of, JSON};
use crate::doctor::{Doctor, Section};
use crate::paths;

/// What discovery learned that later checks use.
#[derive(Default)]
pub(crate) struct Discovered {
    pub(super) register: Option<String>,
    pub(super) token: Option<String>,
    pub(super) revoke: Option<String>,
    /// `(kid, uncompressed P-256 point)` from the published JWKS.
    pub(super) keys: Vec<(String, Vec<u8>)>,
}

pub(super) async fn check(doctor: &mut Doctor) -> Discovered {
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
    // dossier publishes one skill; a few are checked, so a long index cannot spend the
    // request budget the agent flow and MCP need.
    const SKILLS_CHECKED: usize = 4;
    if skills.len() > SKILLS_CHECKED {
        doctor.warn(
            "skills index: skills",
            format!("at most {SKILLS_CHECKED} checked"),
            format!(
                "{} listed; the first {SKILLS_CHECKED} checked",
                skills.len()
            ),
            fix::REBUILD,
        );
    }
    for skill in skills.into_iter().take(SKILLS_CHECKED) {
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
