//! Files agents and crawlers look for, each generated from the site model so none can drift:
//! `/llms.txt`, `/robots.txt` (explicit AI-crawler groups and a `Content-Signal` line),
//! `/sitemap.xml`, the MCP server card and the agent-skills index (with `auth.md`'s digest).

use serde_json::json;
use sha2::{Digest, Sha256};

use super::{pages, JSON};
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::paths;

const TEXT: &str = "text/plain; charset=utf-8";
const XML: &str = "application/xml";

/// Crawlers named in `robots.txt`, so their operators see an explicit decision.
const AI_CRAWLERS: [&str; 10] = [
    "GPTBot",
    "OAI-SearchBot",
    "ChatGPT-User",
    "ClaudeBot",
    "Claude-User",
    "Google-Extended",
    "PerplexityBot",
    "CCBot",
    "Applebot-Extended",
    "Meta-ExternalAgent",
];

fn llms_txt(input: &CompileInput<'_>) -> Artifact {
    let site = input.site;
    let base = &input.config.base_url;
    let company = &site.company;
    let mut text = format!(
        "# {}\n\n> {}\n\n",
        company.name,
        company.tagline.as_deref().unwrap_or(&company.description)
    );
    text.push_str(&format!("{}\n\nEvery page below is Markdown. The same data is available as JSON at {} and over MCP at {}.\n\n", company.description, base.join(paths::API_COMPANY), base.join(paths::MCP)));
    text.push_str(&format!(
        "## Company\n\n- [{}]({}): overview, divisions, pages and contacts\n",
        company.name,
        base.join(paths::INDEX_MD)
    ));
    text.push_str(&format!(
        "\n## Divisions\n\n{}",
        pages::division_links(input)
    ));
    text.push_str(&format!(
        "\n## Pages\n\n{}",
        pages::page_links(input, &site.pages)
    ));
    text.push_str(&format!(
        "\n## API\n\n- [API and agents]({}): endpoints, MCP tools and authentication\n- [OpenAPI description]({}): machine-readable API\n- [auth.md]({}): optional anonymous registration and tokens\n- [API catalog]({})\n",
        base.join(paths::DOCS_MD),
        base.join(paths::OPENAPI),
        base.join(paths::AUTH_MD),
        base.join(paths::API_CATALOG)
    ));
    Artifact::new(paths::LLMS_TXT, TEXT, CachePolicy::Content, text)
}

fn robots_txt(input: &CompileInput<'_>) -> Artifact {
    let base = &input.config.base_url;
    let mut text = String::from(
        "# Public company information: readable by search engines and AI agents alike.\n\n",
    );
    for crawler in AI_CRAWLERS {
        text.push_str(&format!("User-agent: {crawler}\nAllow: /\n\n"));
    }
    text.push_str(
        "User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-input=yes, ai-train=yes\n\n",
    );
    text.push_str(&format!("Sitemap: {}\n", base.join(paths::SITEMAP)));
    Artifact::new(paths::ROBOTS_TXT, TEXT, CachePolicy::Content, text)
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn sitemap(input: &CompileInput<'_>) -> Artifact {
    let base = &input.config.base_url;
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
    let mut url = |path: &str, updated: Option<&str>| {
        xml.push_str(&format!(
            "  <url><loc>{}</loc>",
            escape_xml(&base.join(path))
        ));
        if let Some(updated) = updated {
            xml.push_str(&format!("<lastmod>{}</lastmod>", escape_xml(updated)));
        }
        xml.push_str("</url>\n");
    };
    url(paths::INDEX, None);
    url(paths::DOCS, None);
    for division in &input.site.divisions {
        url(&format!("/divisions/{}", division.id), None);
    }
    for page in &input.site.pages {
        url(&format!("/{}", page.slug), page.updated.as_deref());
    }
    xml.push_str("</urlset>\n");
    Artifact::new(paths::SITEMAP, XML, CachePolicy::Content, xml)
}

fn server_card(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let company = &input.site.company.name;
    let tools: Vec<serde_json::Value> = crate::mcp::tools::definitions(company)
        .into_iter()
        .map(|tool| json!({"name": tool["name"], "title": tool["title"], "description": tool["description"]}))
        .collect();
    let card = json!({
        "serverInfo": {
            "name": "dossier",
            "title": format!("{company} company information"),
            "version": env!("CARGO_PKG_VERSION"),
        },
        "description": format!("Public, read-only information about {company} as MCP tools and resources."),
        "transport": {"type": "streamable-http", "endpoint": base.join(paths::MCP)},
        "protocolVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
        "authentication": {
            "required": false,
            "schemes": ["bearer"],
            "protectedResourceMetadata": base.join(paths::PROTECTED_RESOURCE_MCP),
        },
        "tools": tools,
        "documentation": base.join(paths::DOCS),
    });
    Artifact::json(paths::MCP_SERVER_CARD, JSON, CachePolicy::Content, &card)
        .map_err(|e| CompileError::new("MCP server card", e))
}

fn agent_skills(input: &CompileInput<'_>, auth_md: &[u8]) -> Result<Artifact, CompileError> {
    let digest: String = Sha256::digest(auth_md)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let index = json!({
        "$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
        "skills": [{
            "name": "auth-md",
            "type": "skill-md",
            "description": format!("How to register anonymously with {} and get a bearer token (optional: all data is public).", input.site.company.name),
            "url": input.config.base_url.join(paths::AUTH_MD),
            "digest": format!("sha256:{digest}"),
        }]
    });
    Artifact::json(paths::AGENT_SKILLS, JSON, CachePolicy::Content, &index)
        .map_err(|e| CompileError::new("agent skills index", e))
}

pub fn all(input: &CompileInput<'_>, auth_md: &[u8]) -> Result<Vec<Artifact>, CompileError> {
    Ok(vec![
        llms_txt(input),
        robots_txt(input),
        sitemap(input),
        server_card(input)?,
        agent_skills(input, auth_md)?,
    ])
}
