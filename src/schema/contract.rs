//! The published schemas against the bytes: compiles the sample company, then validates
//! every JSON answer (precompiled, computed, auth) against the schema `/openapi.json`
//! gives for it. A field added to a response without its schema, or the reverse, fails
//! here, in `cargo test`, before any external tool runs.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::auth::admission::{Minting, RateLimits};
use crate::auth::endpoints::{AuthService, PostRequest};
use crate::auth::keys::Keyring;
use crate::auth::store::{EmbeddedStore, StoreHealth};
use crate::compile::{compile, ArtifactSet, CompileInput};
use crate::config::{AuthPolicy, BaseUrl, Compression, SiteConfig};
use crate::content::{ContentError, Site};
use crate::health::{health_document, ContentStatus};
use crate::paths;
use crate::read_model::ReadModel;

const BASE: &str = "https://info.example.com";

struct Fixture {
    site: Arc<Site>,
    artifacts: ArtifactSet,
    openapi: Value,
}

fn fixture() -> Fixture {
    let site = crate::content::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("content"))
        .expect("the sample content compiles");
    let config = SiteConfig {
        limits: crate::config::Limits::default(),
        base_url: BaseUrl::parse(BASE).unwrap(),
        auth: AuthPolicy::default(),
        templates: None,
        compression: Compression::Deferred,
    };
    let artifacts = compile(&CompileInput {
        site: &site,
        config: &config,
        jwks: &[],
        previous: None,
    })
    .expect("the sample content compiles");
    let openapi = body(&artifacts, paths::OPENAPI);
    Fixture {
        site: Arc::new(site),
        artifacts,
        openapi,
    }
}

fn body(artifacts: &ArtifactSet, path: &str) -> Value {
    let artifact = artifacts
        .get(path)
        .unwrap_or_else(|| panic!("{path} is compiled"));
    serde_json::from_slice(&artifact.identity.body).unwrap_or_else(|e| panic!("{path}: {e}"))
}

impl Fixture {
    /// Checks `instance` against `#/components/schemas/<name>` of the published document,
    /// formats included.
    fn check(&self, name: &str, what: &str, instance: &Value) {
        let schema = json!({
            "$ref": format!("#/components/schemas/{name}"),
            "components": self.openapi["components"],
        });
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("schema {name}: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{what} against {name}: {errors:#?}");
    }
}

#[test]
fn every_precompiled_json_answer_matches_its_published_schema() {
    let fixture = fixture();
    let mut checked = 0;
    for artifact in fixture.artifacts.sorted() {
        let path = artifact.path.as_str();
        // Every compiled document has its row in the endpoint table, and the row names the
        // schema of everything this service shapes itself (other JSON documents follow
        // standards of their own: `tests/agent_standards.rs` and the external tools).
        let route = crate::routes::find(path)
            .unwrap_or_else(|| panic!("{path} is compiled but has no row in the endpoint table"))
            .route();
        // `/{slug}` matches any one segment: only a content page may be found through it, so
        // a new document at a path of its own cannot hide behind the pages' row.
        if route.path.starts_with("/{slug}") {
            let slug = path.trim_start_matches('/').trim_end_matches(".md");
            assert!(
                fixture.site.pages.iter().any(|page| page.slug == slug),
                "{path} is compiled but is no page: give it a row of its own"
            );
        }
        let Some(name) = route.schema else {
            continue;
        };
        fixture.check(name, path, &body(&fixture.artifacts, path));
        checked += 1;
    }
    let site = &fixture.site;
    assert_eq!(checked, 2 + site.pages.len() + site.divisions.len());
}

/// `/openapi.json` lists exactly the published rows of the endpoint table, each with the
/// methods the router answers and, where the row names one, the schema of its answer. A
/// path added to either alone fails here.
#[test]
fn the_openapi_paths_are_the_endpoint_table() {
    let fixture = fixture();
    let documented = fixture.openapi["paths"].as_object().unwrap();
    let published: Vec<&crate::routes::Route> = crate::routes::ROUTES
        .iter()
        .filter(|route| route.published)
        .collect();
    let mut rows: Vec<&str> = published.iter().map(|route| route.path).collect();
    let mut keys: Vec<&str> = documented.keys().map(String::as_str).collect();
    rows.sort();
    keys.sort();
    assert_eq!(keys, rows, "the OpenAPI paths against the endpoint table");
    for route in published {
        let item = documented[route.path].as_object().unwrap();
        let mut methods: Vec<String> = item
            .keys()
            .filter(|key| ["get", "head", "post", "put", "patch", "delete"].contains(&key.as_str()))
            .map(|key| key.to_uppercase())
            .collect();
        let mut expected: Vec<String> = route.methods.iter().map(|m| m.to_string()).collect();
        methods.sort();
        expected.sort();
        assert_eq!(methods, expected, "the methods of {}", route.path);
        let Some(schema) = route.schema else {
            continue;
        };
        let operation = item.get("get").or_else(|| item.get("post")).unwrap();
        let success = ["200", "201"]
            .iter()
            .find_map(|status| operation["responses"].get(*status))
            .unwrap_or_else(|| panic!("{} has no success response", route.path));
        let schemas: Vec<&Value> = success["content"]
            .as_object()
            .unwrap()
            .values()
            .map(|content| &content["schema"]["$ref"])
            .collect();
        let wanted = format!("#/components/schemas/{schema}");
        assert!(
            schemas
                .iter()
                .any(|reference| *reference == &Value::from(wanted.clone())),
            "{} answers {schemas:?}, the table says {wanted}",
            route.path
        );
    }
}

/// What clients choke on is absent from everything published: no format JSON Schema does
/// not define, no `oneOf` of constants (in `/openapi.json` and every MCP tool's schemas).
#[test]
fn every_published_schema_keeps_to_standard_formats_and_plain_enums() {
    let fixture = fixture();
    super::tests::assert_standard("/openapi.json", &fixture.openapi);
    for tool in crate::mcp::tools::definitions(&fixture.site.company.name) {
        super::tests::assert_standard(tool["name"].as_str().unwrap(), &tool);
    }
}

#[test]
fn computed_answers_match_their_published_schemas() {
    let fixture = fixture();
    let model = ReadModel::build(Arc::clone(&fixture.site), &BaseUrl::parse(BASE).unwrap());
    let json = |artifact: crate::compile::Artifact| -> Value {
        serde_json::from_slice(&artifact.identity.body).unwrap()
    };
    // Every computed row of the endpoint table, through the row's own read, sample queries
    // and schema: a new computed endpoint fails here until its row has samples.
    let no_headers = hyper::HeaderMap::new();
    for route in &crate::routes::ROUTES {
        let crate::routes::AnsweredBy::Computed(computed) = route.answered_by else {
            continue;
        };
        let queries = computed.samples;
        assert!(
            !queries.is_empty(),
            "{}: give its row sample queries",
            route.path
        );
        let schema = route.schema.expect("a computed answer has a schema");
        for query in queries {
            let answer = (computed.read)(&model, Some(query), &no_headers)
                .unwrap_or_else(|refusal| panic!("{} {query}: {refusal:?}", route.path));
            fixture.check(schema, &format!("{}?{query}", route.path), &json(answer));
        }
    }
    let health = |status: &ContentStatus, store: &StoreHealth| -> Value {
        let document = health_document("rev", status, "content", SystemTime::now(), store);
        serde_json::to_value(&document).unwrap()
    };
    fixture.check(
        "Health",
        "health",
        &health(&ContentStatus::Ok, &StoreHealth::Ok),
    );
    let error = ContentError::at("pages/about.md", 3, "title", "empty: write some text here");
    let degraded = health(
        &ContentStatus::Error(vec![error]),
        &StoreHealth::Degraded {
            reason: "disk full".into(),
            retry_at: Instant::now() + Duration::from_secs(5),
        },
    );
    fixture.check("Health", "degraded health", &degraded);
}

#[tokio::test]
async fn auth_answers_match_their_published_schemas() {
    let fixture = fixture();
    let state = tempfile::tempdir().unwrap();
    let now = SystemTime::now();
    let service = AuthService::new(
        BaseUrl::parse(BASE).unwrap(),
        AuthPolicy::default(),
        Keyring::generate(crate::clock::unix_seconds(now)).unwrap(),
        Box::new(EmbeddedStore::open(state.path()).unwrap()),
        RateLimits::default(),
    )
    .unwrap();
    let post = |content_type: &'static str, body: &'static [u8]| PostRequest {
        content_type: Some(content_type),
        authorization: None,
        body,
    };
    let client = std::net::IpAddr::from([192, 0, 2, 1]);
    let registration = service
        .admit(Minting::Registration, client, now)
        .await
        .unwrap();
    let registration = service.register(
        registration,
        post("application/json", br#"{"type":"anonymous"}"#),
        now,
    );
    let registration: Value = serde_json::from_slice(&registration.body).unwrap();
    fixture.check("Registration", "registration", &registration);

    let token = service.admit(Minting::Token, client, now).await.unwrap();
    let form = "application/x-www-form-urlencoded";
    let token = service.token(token, post(form, b"grant_type=client_credentials"), now);
    let token: Value = serde_json::from_slice(&token.body).unwrap();
    fixture.check("TokenResponse", "token", &token);

    let refused_grant = service.admit(Minting::Token, client, now).await.unwrap();
    let refused_registration = service
        .admit(Minting::Registration, client, now)
        .await
        .unwrap();
    for refused in [
        service.token(refused_grant, post(form, b"grant_type=password"), now),
        service.register(refused_registration, post("application/json", b"[]"), now),
        crate::auth::endpoints::claim(),
    ] {
        let error: Value = serde_json::from_slice(&refused.body).unwrap();
        fixture.check("Error", "refusal", &error);
    }
}

#[test]
fn every_reference_in_the_published_document_resolves_to_one_definition() {
    let fixture = fixture();
    let schemas = fixture.openapi["components"]["schemas"]
        .as_object()
        .unwrap();
    // schemars numbers a second type with the same name (`Registration2`): names must be
    // unique so a `$ref` written by name means one type.
    for name in schemas.keys() {
        assert!(
            !name.ends_with(|c: char| c.is_ascii_digit()),
            "two types are published as {name}"
        );
    }
    fn refs(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    found.push(target.clone());
                }
                map.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    refs(&fixture.openapi, &mut found);
    assert!(found.len() > 20);
    for target in found {
        let pointer = target.trim_start_matches('#');
        assert!(
            fixture.openapi.pointer(pointer).is_some(),
            "{target} does not resolve"
        );
    }
}
