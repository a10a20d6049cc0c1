//! Every public URL path the service answers, named once. Documents link to these and the
//! endpoint table (`routes`) is written with them, so a link can never point somewhere the
//! router does not serve.

pub(crate) const INDEX: &str = "/";
pub(crate) const INDEX_MD: &str = "/index.md";
pub(crate) const DOCS: &str = "/docs";
pub(crate) const DOCS_MD: &str = "/docs.md";
pub(crate) const STYLE: &str = "/style.css";
pub(crate) const LLMS_TXT: &str = "/llms.txt";
pub(crate) const ROBOTS_TXT: &str = "/robots.txt";
pub(crate) const SITEMAP: &str = "/sitemap.xml";
/// The MCP server card where the server-card extension puts it: `<mcp url>/server-card`.
pub(crate) const MCP_SERVER_CARD: &str = "/mcp/server-card";
/// The earlier location and shape of the card, kept for scanners that still look there.
pub(crate) const MCP_SERVER_CARD_LEGACY: &str = "/.well-known/mcp/server-card.json";
/// The AI Catalog: where a client that knows only the domain finds the server card.
pub(crate) const AI_CATALOG: &str = "/.well-known/ai-catalog.json";
pub(crate) const FAVICON: &str = "/favicon.svg";
pub(crate) const AGENT_SKILLS: &str = "/.well-known/agent-skills/index.json";
/// The one skill: how to register and get a token, as an Agent Skills `SKILL.md`.
pub(crate) const AGENT_SKILL_NAME: &str = "company-api-access";
pub(crate) const AGENT_SKILL: &str = "/.well-known/agent-skills/company-api-access/SKILL.md";

/// First path segments that site paths use; a page slug may not take one of them.
pub(crate) const RESERVED_SLUGS: [&str; 16] = [
    "api",
    "ask",
    "docs",
    "divisions",
    "mcp",
    "oauth2",
    "agent",
    "auth",
    "index",
    "llms",
    "robots",
    "sitemap",
    "openapi",
    "style",
    "favicon",
    "well-known",
];
pub(crate) const API_COMPANY: &str = "/api/company";
pub(crate) const API_HEALTH: &str = "/api/health";
pub(crate) const API_SEARCH: &str = "/api/search";
pub(crate) const OPENAPI: &str = "/openapi.json";
pub(crate) const API_CATALOG: &str = "/.well-known/api-catalog";
pub(crate) const PROTECTED_RESOURCE: &str = "/.well-known/oauth-protected-resource";
pub(crate) const PROTECTED_RESOURCE_MCP: &str = "/.well-known/oauth-protected-resource/mcp";
pub(crate) const AUTHORIZATION_SERVER: &str = "/.well-known/oauth-authorization-server";
pub(crate) const JWKS: &str = "/.well-known/jwks.json";
pub(crate) const AUTH_MD: &str = "/auth.md";
/// The same bytes as [`AUTH_MD`], where scanners also look.
pub(crate) const AUTH_MD_WELL_KNOWN: &str = "/.well-known/auth.md";

pub(crate) const AGENT_IDENTITY: &str = "/agent/identity";
pub(crate) const AGENT_IDENTITY_CLAIM: &str = "/agent/identity/claim";
pub(crate) const OAUTH_AUTHORIZE: &str = "/oauth2/authorize";
pub(crate) const OAUTH_TOKEN: &str = "/oauth2/token";
pub(crate) const OAUTH_REVOKE: &str = "/oauth2/revoke";
pub(crate) const MCP: &str = "/mcp";
/// NLWeb's question endpoint.
pub(crate) const ASK: &str = "/ask";

/// The paths of one division and one page, built here only, like the constants above.
pub(crate) fn division(id: &str) -> String {
    format!("/divisions/{id}")
}

pub(crate) fn division_markdown(id: &str) -> String {
    format!("/divisions/{id}.md")
}

pub(crate) fn division_llms_txt(id: &str) -> String {
    format!("/divisions/{id}/llms.txt")
}

pub(crate) fn api_division(id: &str) -> String {
    format!("/api/divisions/{id}")
}

pub(crate) fn page(slug: &str) -> String {
    format!("/{slug}")
}

pub(crate) fn page_markdown(slug: &str) -> String {
    format!("/{slug}.md")
}

pub(crate) fn api_page(slug: &str) -> String {
    format!("/api/pages/{slug}")
}
