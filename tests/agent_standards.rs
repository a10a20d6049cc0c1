//! What agents of late 2026 look for, served by the real server over a socket: auth.md at
//! both locations, the Agent Skills index, the AI Catalog and the MCP server card (current
//! and earlier shape), llms.txt links on every page, and the company profile in JSON-LD and
//! `/api/company`.

use crate::common;

use common::{Reply, TestServer};
use hyper::StatusCode;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn assert_static(reply: &Reply, content_type: &str) {
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.header("content-type"), content_type);
    assert_eq!(reply.header("access-control-allow-origin"), "*");
    assert!(reply.header("etag").starts_with('"'));
}

#[tokio::test]
async fn auth_md_is_served_at_both_locations_and_listed_in_the_skills_index() {
    let server = TestServer::start().await;
    let plain = server.get("/auth.md", &[]).await;
    let well_known = server.get("/.well-known/auth.md", &[]).await;
    assert_static(&well_known, "text/markdown; charset=utf-8");
    assert_eq!(plain.body, well_known.body);
    assert_eq!(plain.header("etag"), well_known.header("etag"));

    let index = server
        .get("/.well-known/agent-skills/index.json", &[])
        .await
        .json();
    assert_eq!(
        index["$schema"],
        "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
    );
    // One entry per artifact: the skill, whose digest is over the bytes served.
    let skills = index["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1, "{index}");
    let skill = &skills[0];
    assert_eq!(skill["type"], "skill-md");
    let url = skill["url"].as_str().unwrap();
    let path = url.strip_prefix(&server.url("")).unwrap();
    assert!(path.starts_with("/.well-known/agent-skills/") && path.ends_with("/SKILL.md"));
    let served = server.get(path, &[]).await;
    assert_static(&served, "text/markdown; charset=utf-8");
    assert_eq!(
        skill["digest"],
        format!("sha256:{:x}", Sha256::digest(&served.body)).as_str()
    );
    // A skill-md starts with front matter naming it (lowercase, digits, hyphens) and saying
    // what it is for, then the instructions: auth.md's.
    let text = served.text();
    let front = text.strip_prefix("---\n").unwrap();
    let (front, body) = front.split_once("\n---\n\n").unwrap();
    let field = |name: &str| {
        front
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name}: ")))
            .unwrap()
            .to_string()
    };
    let name = field("name");
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    assert_eq!(skill["name"], name.as_str());
    assert_eq!(path, format!("/.well-known/agent-skills/{name}/SKILL.md"));
    let description: String = serde_json::from_str(&field("description")).unwrap();
    assert_eq!(skill["description"], description.as_str());
    assert_eq!(body.as_bytes(), &plain.body[..]);
    server.stop().await;
}

#[tokio::test]
async fn the_ai_catalog_leads_to_a_server_card_that_matches_the_server() {
    let server = TestServer::start().await;
    let reply = server.get("/.well-known/ai-catalog.json", &[]).await;
    assert_static(&reply, "application/ai-catalog+json");
    let catalog = reply.json();
    assert_eq!(catalog["specVersion"], "1.0");
    let entries = catalog["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "only what dossier speaks: {entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["type"], "application/mcp-server-card+json");
    assert!(entry["identifier"]
        .as_str()
        .unwrap()
        .starts_with("urn:air:127.0.0.1:"));
    let card_url = entry["url"].as_str().unwrap();
    assert_eq!(card_url, server.url("/mcp/server-card"));
    // ARD requires a display name, and recommends two to five representative queries.
    assert!(
        !entry["displayName"].as_str().unwrap().is_empty(),
        "{entry}"
    );
    let queries = entry["representativeQueries"].as_array().unwrap();
    assert!((2..=5).contains(&queries.len()), "{entry}");

    let reply = server.get("/mcp/server-card", &[]).await;
    assert_static(&reply, "application/mcp-server-card+json");
    let card = reply.json();
    // The server-card schema allows no other members.
    let allowed = [
        "$schema",
        "_meta",
        "description",
        "icons",
        "name",
        "remotes",
        "repository",
        "title",
        "version",
        "websiteUrl",
    ];
    for key in card.as_object().unwrap().keys() {
        assert!(allowed.contains(&key.as_str()), "unexpected member {key}");
    }
    assert_eq!(
        card["$schema"],
        "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    );
    let name = card["name"].as_str().unwrap();
    let (namespace, server_name) = name.split_once('/').unwrap();
    assert!(!namespace.is_empty() && !server_name.is_empty() && !server_name.contains('/'));
    for field in ["title", "description"] {
        let text = card[field].as_str().unwrap();
        assert!((1..=100).contains(&text.chars().count()), "{field}: {text}");
    }
    assert_eq!(card["websiteUrl"], server.url("/"));
    let remote = &card["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], server.url("/mcp"));
    let versions: Vec<&str> = remote["supportedProtocolVersions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        versions,
        ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    );
    // Every icon resolves (the favicon is ours; the logo is the company's own URL).
    let favicon = card["icons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|icon| icon["mimeType"] == "image/svg+xml")
        .unwrap();
    assert_eq!(favicon["src"], server.url("/favicon.svg"));
    let svg = server.get("/favicon.svg", &[]).await;
    assert_static(&svg, "image/svg+xml");
    assert!(svg.text().starts_with("<svg"));

    // The card agrees with what the server says once connected.
    let discover = server
        .send(
            hyper::Method::POST,
            "/mcp",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        )
        .await
        .json();
    let info = &discover["result"]["serverInfo"];
    assert_eq!(info["version"], card["version"]);
    assert_eq!(entry["displayName"], card["title"]);
    for field in ["title", "description", "icons"] {
        assert_eq!(
            info[field], card[field],
            "serverInfo.{field} against the card"
        );
    }

    // The earlier shape stays where older scanners look, and points at the new one.
    let legacy = server.get("/.well-known/mcp/server-card.json", &[]).await;
    assert_static(&legacy, "application/json");
    let legacy = legacy.json();
    assert_eq!(legacy["transport"]["endpoint"], server.url("/mcp"));
    assert_eq!(legacy["serverCard"], card_url);
    // No A2A card: dossier does not speak A2A.
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        assert_eq!(server.get(path, &[]).await.status, StatusCode::NOT_FOUND);
    }
    server.stop().await;
}

#[tokio::test]
async fn every_page_links_its_markdown_and_llms_txt() {
    let server = TestServer::start().await;
    let company = server.get("/api/company", &[]).await.json();
    let division = company["divisions"][0]["id"].as_str().unwrap().to_string();
    let page = company["pages"][0]["slug"].as_str().unwrap().to_string();
    for (path, markdown) in [
        ("/".to_string(), "/index.md".to_string()),
        (
            format!("/divisions/{division}"),
            format!("/divisions/{division}.md"),
        ),
        (format!("/{page}"), format!("/{page}.md")),
        ("/docs".to_string(), "/docs.md".to_string()),
    ] {
        let reply = server.get(&path, &[]).await;
        let link = reply.header("link");
        assert!(
            link.contains(&format!(
                "<{}>; rel=\"alternate\"; type=\"text/markdown\"",
                server.url(&markdown)
            )),
            "{path}: {link}"
        );
        assert!(
            link.contains(&format!(
                "<{}>; rel=\"describedby\"",
                server.url("/llms.txt")
            )),
            "{path}: {link}"
        );
        // minijinja writes `/` in attributes as `&#x2f;`; a browser reads the same URL.
        let html = reply.text().replace("&#x2f;", "/");
        assert!(html.contains(&format!(
            "<link rel=\"alternate\" type=\"text/markdown\" href=\"{markdown}\">"
        )));
        assert!(html.contains("<link rel=\"describedby\" type=\"text/plain\" href=\"/llms.txt\">"));
        // And where an agent finds the MCP server card.
        assert!(
            link.contains(&format!(
                "<{}>; rel=\"ai-catalog\"",
                server.url("/.well-known/ai-catalog.json")
            )),
            "{path}: {link}"
        );
        assert!(html.contains(
            "<link rel=\"ai-catalog\" type=\"application/ai-catalog+json\" href=\"/.well-known/ai-catalog.json\">"
        ));
    }
    // Each division has its own llms.txt with its pages.
    let llms = server
        .get(&format!("/divisions/{division}/llms.txt"), &[])
        .await;
    assert_static(&llms, "text/plain; charset=utf-8");
    let text = llms.text();
    assert!(text.starts_with("# "), "{text}");
    for page in company["pages"].as_array().unwrap() {
        let listed = text.contains(&server.url(&format!("/{}.md", page["slug"].as_str().unwrap())));
        assert_eq!(listed, page["division"] == division.as_str(), "{page}");
    }
    server.stop().await;
}

/// The JSON-LD block of the home page.
fn json_ld(html: &str) -> Value {
    let start = html.find("<script type=\"application/ld+json\">").unwrap();
    let rest = &html[start..];
    let json = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    serde_json::from_str(json).unwrap()
}

#[tokio::test]
async fn the_company_profile_reaches_json_ld_and_the_api() {
    let server = TestServer::start().await;
    let ld = json_ld(&server.get("/", &[]).await.text());
    assert_eq!(ld["@type"], "Organization");
    assert_eq!(ld["leiCode"], "5493001CBLTRDG0A4X19");
    assert_eq!(ld["foundingDate"], "2004-03-15");
    assert_eq!(ld["naics"], "334519");
    assert_eq!(ld["isicV4"], "2651");
    assert_eq!(ld["taxID"], "84-1234567");
    assert!(ld["logo"].as_str().unwrap().starts_with("https://"));
    let same_as: Vec<&str> = ld["sameAs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(same_as
        .iter()
        .any(|url| url.starts_with("https://www.wikidata.org/")));
    assert_eq!(ld["employee"][0]["jobTitle"], "Chief Executive Officer");
    let place = &ld["location"][1];
    assert_eq!(place["@type"], "Place");
    assert_eq!(place["geo"]["@type"], "GeoCoordinates");
    assert!(place["geo"]["latitude"].is_number());
    assert_eq!(ld["subOrganization"][0]["leiCode"], "5493000GLACIERSE9K57");
    assert_eq!(ld["hasCertification"][0]["@type"], "Certification");
    let registration = ld["identifier"]
        .as_array()
        .unwrap()
        .iter()
        .find(|id| id["value"] == "3786521")
        .unwrap();
    assert!(registration["description"]
        .as_str()
        .unwrap()
        .contains("US-DE"));

    let company = server.get("/api/company", &[]).await.json()["company"].clone();
    assert_eq!(company["lei"], "5493001CBLTRDG0A4X19");
    assert_eq!(company["registration"]["jurisdiction"], "US-DE");
    assert_eq!(company["industry_codes"][0]["scheme"], "NAICS");
    assert_eq!(company["locations"][2]["type"], "service-center");
    assert_eq!(company["certifications"].as_array().unwrap().len(), 3);

    // Addresses in each country's order, on the page and in Markdown.
    let html = server.get("/", &[]).await.text();
    assert!(
        html.contains("2750 Pearl Street<br>Boulder, Colorado 80302<br>United States"),
        "US order, as envelope lines"
    );
    let markdown = server.get("/index.md", &[]).await.text();
    assert!(
        markdown.contains("Am Mittelhafen 14, 48155 Münster, Germany"),
        "{markdown}"
    );
    assert!(
        markdown.contains("160-0023, Tokyo Shinjuku-ku, 3-2-1 Nishi-Shinjuku, Japan"),
        "{markdown}"
    );
    server.stop().await;
}
