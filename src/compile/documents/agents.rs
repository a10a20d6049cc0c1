//! Files agents and crawlers look for, each generated from the site model so none can drift:
//! `/llms.txt`, `/robots.txt` (explicit AI-crawler groups and a `Content-Signal` line),
//! `/sitemap.xml`, the MCP server card (current and earlier shape) with the AI Catalog that
//! points at it, the agent-skills index (with `auth.md`'s digest) and a favicon.

use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::operation::{self, Context, Operations};
use super::{pages, JSON};
use crate::compile::{Artifact, CachePolicy, CompileError, CompileInput};
use crate::content::Page;
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
    text.push_str("\n## Divisions\n\n");
    pages::push_division_links(&mut text, input);
    if site.pages.len() <= LLMS_INLINE_PAGES {
        text.push_str("\n## Pages\n\n");
        pages::push_page_links(&mut text, input, site.pages.iter().map(|page| &**page));
    } else {
        // Too many to read in one go: each division's pages are in its own llms.txt.
        text.push_str("\n## Pages by division\n\n");
        for division in &site.divisions {
            text.push_str(&format!(
                "- [{}: all pages]({})\n",
                division.name,
                base.join(&division_llms_path(&division.id))
            ));
        }
        let loose: Vec<&Page> = site
            .pages
            .iter()
            .map(|page| &**page)
            .filter(|p| p.division.is_none())
            .collect();
        if !loose.is_empty() {
            text.push_str("\n## Other pages\n\n");
            pages::push_page_links(
                &mut text,
                input,
                loose.iter().take(LLMS_INLINE_PAGES).copied(),
            );
        }
        if loose.len() > LLMS_INLINE_PAGES {
            text.push_str(&format!(
                "\n{} more pages belong to no division: search them with the MCP tool `search_company_info`, or see {}.\n",
                loose.len() - LLMS_INLINE_PAGES,
                base.join(paths::SITEMAP)
            ));
        }
    }
    text.push_str(&format!(
        "\n## API\n\n- [API and agents]({}): endpoints, MCP tools and authentication\n- [OpenAPI description]({}): machine-readable API\n- [auth.md]({}): optional anonymous registration and tokens\n- [API catalog]({})\n- NLWeb: ask a question in words at `{}?query=…` (JSON, or server-sent events); the answer lists the pages that answer it\n",
        base.join(paths::DOCS_MD),
        base.join(paths::OPENAPI),
        base.join(paths::AUTH_MD),
        base.join(paths::API_CATALOG),
        base.join(paths::ASK)
    ));
    Artifact::new(paths::LLMS_TXT, TEXT, CachePolicy::Content, text)
}

/// Up to this many pages, `/llms.txt` lists every page; above it, it links one llms.txt per
/// division instead, so the root file stays small enough for an agent to read whole.
pub const LLMS_INLINE_PAGES: usize = 100;

fn division_llms_path(id: &str) -> String {
    paths::division_llms_txt(id)
}

/// `/divisions/<id>/llms.txt`: one division and every page in it.
fn division_llms_txts(input: &CompileInput<'_>) -> Vec<Artifact> {
    let site = input.site;
    let base = &input.config.base_url;
    site.divisions
        .iter()
        .map(|division| {
            let mut text = format!(
                "# {}: {}\n\n> {}\n\n{}\n\n- [Division overview]({})\n- [Everything about {}]({})\n",
                site.company.name,
                division.name,
                division.summary,
                division.description,
                base.join(&paths::division_markdown(&division.id)),
                site.company.name,
                base.join(paths::LLMS_TXT),
            );
            let pages: Vec<&Page> = site
                .pages
                .iter()
                .map(|page| &**page)
                .filter(|p| p.division.as_deref() == Some(division.id.as_str()))
                .collect();
            if !pages.is_empty() {
                text.push_str("\n## Pages\n\n");
                pages::push_page_links(&mut text, input, pages);
            }
            Artifact::new(division_llms_path(&division.id), TEXT, CachePolicy::Content, text)
        })
        .collect()
}

/// What the content may be used for (contentsignals.org): everything; it is public.
const CONTENT_SIGNAL: &str = "search=yes, ai-input=yes, ai-train=yes";

fn robots_txt(input: &CompileInput<'_>) -> Artifact {
    let base = &input.config.base_url;
    let mut text = String::from(
        "# Public company information: readable by search engines and AI agents alike.\n\n",
    );
    // Groups do not inherit from one another: a crawler named in a group of its own reads only
    // that group, so each carries the signal.
    for crawler in AI_CRAWLERS.iter().chain(["*"].iter()) {
        text.push_str(&format!(
            "User-agent: {crawler}\nAllow: /\nContent-Signal: {CONTENT_SIGNAL}\n\n"
        ));
    }
    text.push_str(&format!("Sitemap: {}\n", base.join(paths::SITEMAP)));
    // Where an agent that knows only the domain finds what this site offers it.
    text.push_str(&format!("Agentmap: {}\n", base.join(paths::AI_CATALOG)));
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
        url(&paths::division(&division.id), None);
    }
    for page in &input.site.pages {
        url(&paths::page(&page.slug), page.updated.as_deref());
    }
    xml.push_str("</urlset>\n");
    Artifact::new(paths::SITEMAP, XML, CachePolicy::Content, xml)
}

/// The media types the server-card extension and the AI Catalog define.
const SERVER_CARD_TYPE: &str = "application/mcp-server-card+json";
const AI_CATALOG_TYPE: &str = "application/ai-catalog+json";
/// The only `$schema` the server-card extension's `schema.json` accepts.
const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
const SKILLS_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Every MCP protocol version `/mcp` speaks, newest first.
fn protocol_versions() -> Vec<&'static str> {
    crate::mcp::MODERN_VERSIONS
        .into_iter()
        .chain(crate::mcp::LEGACY_VERSIONS)
        .collect()
}

/// The card's reverse-DNS `name`: the base URL's host reversed, then `/company-info`
/// (`info.example.com` → `com.example.info/company-info`). An IP literal has no DNS
/// order, so its characters are kept as they are, with `:` and brackets made dots.
fn card_name(input: &CompileInput<'_>) -> String {
    let host = input.config.base_url.host();
    let reversed = if host.parse::<std::net::Ipv4Addr>().is_ok() || host.starts_with('[') {
        host.trim_matches(['[', ']']).replace(':', ".")
    } else {
        host.rsplit('.').collect::<Vec<_>>().join(".")
    };
    format!("{reversed}/company-info")
}

#[derive(Serialize)]
struct ServerCard {
    #[serde(rename = "$schema")]
    schema: &'static str,
    name: String,
    version: &'static str,
    title: String,
    description: String,
    #[serde(rename = "websiteUrl")]
    website_url: String,
    remotes: [Remote; 1],
    icons: Vec<crate::mcp::Icon>,
}

#[derive(Serialize)]
struct Remote {
    #[serde(rename = "type")]
    kind: &'static str,
    url: String,
    #[serde(rename = "supportedProtocolVersions")]
    supported_protocol_versions: Vec<&'static str>,
}

/// The MCP server card (SEP-2127), as the 2026-07 server-card extension serves it: at
/// `<mcp url>/server-card`, with the schema's fields only (it allows no others).
fn server_card(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let company = &input.site.company;
    let card = ServerCard {
        schema: SERVER_CARD_SCHEMA,
        name: card_name(input),
        version: env!("CARGO_PKG_VERSION"),
        title: crate::mcp::server_title(company),
        // The same words as `serverInfo.description`, as the extension asks.
        description: crate::mcp::server_description(company),
        website_url: base.join(paths::INDEX),
        remotes: [Remote {
            kind: "streamable-http",
            url: base.join(paths::MCP),
            supported_protocol_versions: protocol_versions(),
        }],
        icons: crate::mcp::server_icons(company, base),
    };
    Artifact::json(
        paths::MCP_SERVER_CARD,
        SERVER_CARD_TYPE,
        CachePolicy::Content,
        &card,
    )
    .map_err(|e| CompileError::new("MCP server card", e))
}

/// The card in its earlier shape (`serverInfo`, `transport`, `capabilities`), at the
/// `.well-known` path scanners written before the extension still read.
fn legacy_server_card(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
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
        "protocolVersions": protocol_versions(),
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}, "completions": {}},
        "authentication": {
            "required": false,
            "schemes": ["bearer"],
            "protectedResourceMetadata": base.join(paths::PROTECTED_RESOURCE_MCP),
        },
        "tools": tools,
        "documentation": base.join(paths::DOCS),
        "serverCard": base.join(paths::MCP_SERVER_CARD),
    });
    Artifact::json(
        paths::MCP_SERVER_CARD_LEGACY,
        JSON,
        CachePolicy::Content,
        &card,
    )
    .map_err(|e| CompileError::new("MCP server card (legacy)", e))
}

/// Questions an agent would bring to this company (ARD recommends two to five): what it
/// does, whom to contact, and the first division and page by name.
fn representative_queries(input: &CompileInput<'_>) -> Vec<String> {
    let site = input.site;
    let company = &site.company.name;
    let mut queries = vec![
        format!("What does {company} do?"),
        format!("How do I contact {company}?"),
    ];
    if let Some(division) = site.divisions.first() {
        queries.push(format!(
            "What does the {} division of {company} offer?",
            division.name
        ));
    }
    if let Some(page) = site.pages.first() {
        queries.push(format!("{company}: {}", page.title));
    }
    queries
}

/// `/.well-known/ai-catalog.json`: the one artifact dossier offers, the MCP server card.
/// (No A2A agent card: dossier does not speak A2A, and a catalog must not say it does.)
fn ai_catalog(input: &CompileInput<'_>) -> Result<Artifact, CompileError> {
    let base = &input.config.base_url;
    let company = &input.site.company.name;
    let host = base.host();
    let catalog = json!({
        "specVersion": "1.0",
        "host": {
            "displayName": company,
            "identifier": host,
            "documentationUrl": base.join(paths::DOCS),
        },
        "entries": [{
            "identifier": format!("urn:air:{host}:mcp:company-info"),
            "displayName": crate::mcp::server_title(&input.site.company),
            "type": SERVER_CARD_TYPE,
            // The older name of `type`, which earlier readers look for.
            "mediaType": SERVER_CARD_TYPE,
            "url": base.join(paths::MCP_SERVER_CARD),
            "description": format!("Public, read-only information about {company} over MCP."),
            "version": env!("CARGO_PKG_VERSION"),
            "publisher": {"identifier": host, "displayName": company},
            "representativeQueries": representative_queries(input),
        }],
    });
    Artifact::json(
        paths::AI_CATALOG,
        AI_CATALOG_TYPE,
        CachePolicy::Content,
        &catalog,
    )
    .map_err(|e| CompileError::new("AI catalog", e))
}

/// Agent Skills discovery 0.2.0: the skill (front matter, then auth.md's instructions) and
/// the index that lists it with the digest of those bytes.
fn agent_skills(input: &CompileInput<'_>, auth_md: &[u8]) -> Result<[Artifact; 2], CompileError> {
    let description = format!(
        "How to register anonymously with {} and get a bearer token for its API and MCP server (optional: all data is public).",
        input.site.company.name
    );
    // A `skill-md` artifact starts with front matter naming the skill; the instructions are
    // auth.md's, which stays as it is at its own paths (scanners read its heading).
    let mut skill_md = format!(
        "---\nname: {}\ndescription: {}\n---\n\n",
        paths::AGENT_SKILL_NAME,
        serde_json::to_string(&description).unwrap_or_default()
    )
    .into_bytes();
    skill_md.extend_from_slice(auth_md);
    let digest: String = Sha256::digest(&skill_md)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let index = json!({
        "$schema": SKILLS_SCHEMA,
        "skills": [{
            "name": paths::AGENT_SKILL_NAME,
            "type": "skill-md",
            "description": description,
            "url": input.config.base_url.join(paths::AGENT_SKILL),
            "digest": format!("sha256:{digest}"),
        }]
    });
    let index = Artifact::json(paths::AGENT_SKILLS, JSON, CachePolicy::Content, &index)
        .map_err(|e| CompileError::new("agent skills index", e))?;
    let skill = Artifact::new(
        paths::AGENT_SKILL,
        "text/markdown; charset=utf-8",
        CachePolicy::Content,
        skill_md,
    );
    Ok([index, skill])
}

/// A monogram icon: the company's initial on a coloured square, so every client that shows
/// icons (browser tabs, MCP hosts reading the server card) has one without any setup.
fn favicon(input: &CompileInput<'_>) -> Artifact {
    let initial: String = input
        .site
        .company
        .name
        .chars()
        .find(|c| c.is_alphanumeric())
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_else(|| "·".into());
    let initial = escape_xml(&initial);
    let svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\"><rect width=\"64\" height=\"64\" rx=\"14\" fill=\"#1f3a5f\"/><text x=\"32\" y=\"44\" font-family=\"system-ui, sans-serif\" font-size=\"34\" font-weight=\"700\" text-anchor=\"middle\" fill=\"#ffffff\">{initial}</text></svg>\n"
    );
    Artifact::new(paths::FAVICON, "image/svg+xml", CachePolicy::Content, svg)
}

pub fn all(input: &CompileInput<'_>, auth_md: &[u8]) -> Result<Vec<Artifact>, CompileError> {
    let mut artifacts = division_llms_txts(input);
    artifacts.extend([
        llms_txt(input),
        robots_txt(input),
        sitemap(input),
        server_card(input)?,
        legacy_server_card(input)?,
        ai_catalog(input)?,
        favicon(input),
    ]);
    artifacts.extend(agent_skills(input, auth_md)?);
    Ok(artifacts)
}

/// The agent documents' operations in `/openapi.json`.
pub(crate) fn operations(context: &Context<'_>) -> Operations {
    use operation::{document_get, json_response, text, typed};
    vec![
        (
            paths::LLMS_TXT,
            text(
                "getLlmsTxt",
                "llms.txt: the site as a list of Markdown links",
                "text/plain",
            ),
        ),
        (
            paths::ROBOTS_TXT,
            text(
                "getRobotsTxt",
                "robots.txt with explicit AI-crawler groups",
                "text/plain",
            ),
        ),
        (
            paths::SITEMAP,
            text("getSitemap", "Sitemap of the HTML pages", "application/xml"),
        ),
        (
            paths::MCP_SERVER_CARD,
            document_get(
                "getMcpServerCard",
                "MCP server card (SEP-2127), at the MCP endpoint's URL + /server-card",
                typed("MCP server card.", "application/mcp-server-card+json"),
                "discovery",
            ),
        ),
        (
            paths::MCP_SERVER_CARD_LEGACY,
            document_get(
                "getMcpServerCardLegacy",
                "The MCP server card in its earlier shape, for older scanners",
                json_response(
                    "MCP server card (earlier shape).",
                    json!({"type": "object"}),
                ),
                "discovery",
            ),
        ),
        (
            paths::AI_CATALOG,
            document_get(
                "getAiCatalog",
                "AI Catalog: the artifacts this site offers (its MCP server card)",
                typed("AI Catalog.", "application/ai-catalog+json"),
                "discovery",
            ),
        ),
        (
            "/divisions/{division_id}/llms.txt",
            operation::with_id(
                text(
                    "getDivisionLlmsTxt",
                    "llms.txt for one division: its pages as Markdown links",
                    "text/plain",
                ),
                &context.division_id,
            ),
        ),
        (
            paths::FAVICON,
            text("getFavicon", "The site's icon", "image/svg+xml"),
        ),
        (
            paths::AGENT_SKILL,
            text(
                "getAgentSkill",
                "The skill: front matter (name, description), then auth.md's instructions",
                "text/markdown",
            ),
        ),
        (
            paths::AGENT_SKILLS,
            document_get(
                "getAgentSkills",
                "Agent skills index (the skill below, with its digest)",
                json_response("Agent skills index.", json!({"type": "object"})),
                "discovery",
            ),
        ),
    ]
}
