//! Every public URL path the service answers, named once. Documents link to these and the
//! router dispatches on them, so a link can never point somewhere the router does not serve.

pub const INDEX: &str = "/";
pub const INDEX_MD: &str = "/index.md";
pub const DOCS: &str = "/docs";
pub const DOCS_MD: &str = "/docs.md";
pub const STYLE: &str = "/style.css";
pub const LLMS_TXT: &str = "/llms.txt";
pub const ROBOTS_TXT: &str = "/robots.txt";
pub const SITEMAP: &str = "/sitemap.xml";
/// The MCP server card where the server-card extension puts it: `<mcp url>/server-card`.
pub const MCP_SERVER_CARD: &str = "/mcp/server-card";
/// The earlier location and shape of the card, kept for scanners that still look there.
pub const MCP_SERVER_CARD_LEGACY: &str = "/.well-known/mcp/server-card.json";
/// The AI Catalog: where a client that knows only the domain finds the server card.
pub const AI_CATALOG: &str = "/.well-known/ai-catalog.json";
pub const FAVICON: &str = "/favicon.svg";
pub const AGENT_SKILLS: &str = "/.well-known/agent-skills/index.json";

/// First path segments that site paths use; a page slug may not take one of them.
pub const RESERVED_SLUGS: [&str; 15] = [
    "api",
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
pub const API_COMPANY: &str = "/api/company";
pub const API_HEALTH: &str = "/api/health";
pub const API_SEARCH: &str = "/api/search";
pub const OPENAPI: &str = "/openapi.json";
pub const API_CATALOG: &str = "/.well-known/api-catalog";
pub const PROTECTED_RESOURCE: &str = "/.well-known/oauth-protected-resource";
pub const PROTECTED_RESOURCE_MCP: &str = "/.well-known/oauth-protected-resource/mcp";
pub const AUTHORIZATION_SERVER: &str = "/.well-known/oauth-authorization-server";
pub const JWKS: &str = "/.well-known/jwks.json";
pub const AUTH_MD: &str = "/auth.md";
/// The same bytes as [`AUTH_MD`], where scanners also look.
pub const AUTH_MD_WELL_KNOWN: &str = "/.well-known/auth.md";

pub const AGENT_IDENTITY: &str = "/agent/identity";
pub const AGENT_IDENTITY_CLAIM: &str = "/agent/identity/claim";
pub const OAUTH_AUTHORIZE: &str = "/oauth2/authorize";
pub const OAUTH_TOKEN: &str = "/oauth2/token";
pub const OAUTH_REVOKE: &str = "/oauth2/revoke";
pub const MCP: &str = "/mcp";

/// The paths of one division and one page, built here only, like the constants above.
pub fn division(id: &str) -> String {
    format!("/divisions/{id}")
}

pub fn division_markdown(id: &str) -> String {
    format!("/divisions/{id}.md")
}

pub fn division_llms_txt(id: &str) -> String {
    format!("/divisions/{id}/llms.txt")
}

pub fn api_division(id: &str) -> String {
    format!("/api/divisions/{id}")
}

pub fn page(slug: &str) -> String {
    format!("/{slug}")
}

pub fn page_markdown(slug: &str) -> String {
    format!("/{slug}.md")
}

pub fn api_page(slug: &str) -> String {
    format!("/api/pages/{slug}")
}
