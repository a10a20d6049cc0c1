//! Files that let `build/` be uploaded unchanged to a static host, with the dynamic core
//! running elsewhere:
//!
//! - `_headers` (Netlify, Cloudflare Pages): one `/*` rule for what every response carries
//!   (CORS, `nosniff`, `Cache-Control`), `/*.md` for Markdown, and exact rules only where a
//!   host cannot infer the type from the file name or a document has extra headers (`Link`).
//!   So the rule count stays small however many pages there are.
//! - `_redirects`: a same-site rewrite for the protected-resource document (a file cannot
//!   also be the directory holding `…/mcp`), and with `--origin-url` proxy rules sending
//!   `/agent/*`, `/oauth2/*`, `/api/*` and the other paths the endpoint table answers per
//!   request (`/mcp`, `/ask`) to the dynamic core (Netlify syntax).
//! - `_routes.json` and `_worker.js` (Cloudflare Pages, whose `_redirects` cannot proxy to
//!   another host): only the rewrite and, with `--origin-url`, the dynamic paths run the
//!   worker.
//!
//! All of it is generated from the manifest, like the server's own responses.

use super::manifest::Manifest;
use crate::config::BaseUrl;
use crate::routes;

/// Cloudflare Pages limits (Netlify's are looser).
pub const MAX_HEADER_RULES: usize = 100;
pub const MAX_LINE_CHARS: usize = 2000;
pub const MAX_STATIC_REDIRECTS: usize = 2000;
pub const MAX_DYNAMIC_REDIRECTS: usize = 100;

/// Headers every response carries; the server adds the same ones in `serve::reply::finish`.
///
/// The pages run no scripts, load only their own stylesheet, and are never framed, so the
/// content security policy says exactly that: if a page ever carried injected markup, the
/// browser would still run nothing. It is sent with every response (it only matters for
/// HTML) because a static host matches header rules by path, not by type.
pub const COMMON_HEADERS: [(&str, &str); 6] = [
    ("Access-Control-Allow-Origin", "*"),
    (
        "Access-Control-Expose-Headers",
        "ETag, Link, WWW-Authenticate, Retry-After, Content-Length, MCP-Protocol-Version, Mcp-Session-Id",
    ),
    ("X-Content-Type-Options", "nosniff"),
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("Referrer-Policy", "strict-origin-when-cross-origin"),
    ("X-Frame-Options", "DENY"),
];

const MARKDOWN_TYPE: &str = "text/markdown; charset=utf-8";
const API_TYPE: &str = crate::wire::JSON;

/// The type a static host gives a file by its name, or `None` when it cannot tell.
fn inferred_type(file: &str) -> Option<&'static str> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let extension = name.rsplit_once('.').map(|(_, ext)| ext)?;
    Some(match extension {
        "html" => "text/html; charset=utf-8",
        "json" => "application/json",
        "css" => "text/css; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "xml" => "application/xml",
        "md" => MARKDOWN_TYPE,
        _ => return None,
    })
}

pub fn headers_file(manifest: &Manifest) -> String {
    let mut out = String::from("/*\n");
    for (name, value) in COMMON_HEADERS {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    out.push_str(&format!(
        "  Cache-Control: {}\n",
        super::artifact::CONTENT_CACHE_CONTROL
    ));
    out.push_str(&format!("/*.md\n  Content-Type: {MARKDOWN_TYPE}\n"));
    // Every /api/* document is JSON; one rule covers however many pages and divisions.
    out.push_str(&format!("/api/*\n  Content-Type: {API_TYPE}\n"));
    // Every HTML page names its Markdown twin and llms.txt in a `Link` header. A site with
    // more pages than the rule limit allows keeps those links in each page's `<link>`
    // elements only (dossier serve always sends both); the other headers always fit.
    let rules = |with_page_links: bool| -> Vec<String> {
        let mut rules = Vec::new();
        for (path, entry) in &manifest.artifacts {
            let type_needed = inferred_type(&entry.file) != Some(entry.content_type.as_str())
                && !(path.starts_with("/api/") && entry.content_type == API_TYPE);
            let is_page = entry.content_type.starts_with("text/html") && path != "/";
            let headers: Vec<_> = entry
                .headers
                .iter()
                .filter(|(name, _)| {
                    with_page_links || !(is_page && name.eq_ignore_ascii_case("link"))
                })
                .collect();
            if !type_needed && headers.is_empty() {
                continue;
            }
            let mut rule = format!("{path}\n");
            if type_needed {
                rule.push_str(&format!("  Content-Type: {}\n", entry.content_type));
            }
            for (name, value) in headers {
                rule.push_str(&format!("  {}: {value}\n", canonical(name)));
            }
            rules.push(rule);
        }
        rules
    };
    let mut chosen = rules(true);
    if chosen.len() + 3 > MAX_HEADER_RULES {
        chosen = rules(false);
    }
    for rule in chosen {
        out.push_str(&rule);
    }
    out
}

/// Whether a static host would not find `file` when asked for `path`: `/about` finds
/// `about.html` and `/` finds `index.html` by themselves; anything else needs a rewrite.
fn stored_elsewhere(path: &str, file: &str) -> bool {
    let file_path = format!("/{file}");
    !(file_path == path
        || file_path == format!("{path}.html")
        || (path == "/" && file == "index.html"))
}

/// `link` -> `Link`, `x-foo-bar` -> `X-Foo-Bar`.
fn canonical(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// Rewrites for paths whose file lives elsewhere (`…/index.json`), plus proxies.
pub fn redirects_file(manifest: &Manifest, origin: Option<&BaseUrl>) -> String {
    let mut out =
        String::from("# Same-site rewrites: these documents are stored under another file name.\n");
    for (path, entry) in &manifest.artifacts {
        if stored_elsewhere(path, &entry.file) {
            out.push_str(&format!("{path}  /{}  200\n", entry.file));
        }
    }
    match origin {
        Some(origin) => {
            out.push_str(
                "# The dynamic core (Netlify proxies; on Cloudflare Pages _worker.js does this).\n",
            );
            let proxied = routes::proxy_rules();
            for prefix in &proxied.prefixes {
                out.push_str(&format!(
                    "{prefix}*  {}{prefix}:splat  200!\n",
                    origin.as_str()
                ));
            }
            for path in proxied.paths {
                out.push_str(&format!("{path}  {}{path}  200!\n", origin.as_str()));
            }
        }
        None => out.push_str("# No --origin-url was given: the dynamic core is not proxied.\n"),
    }
    out
}

/// Which paths run the worker. Without an origin the worker could only answer 503 for the
/// dynamic paths, and would shadow files that exist (`/api/company`, `/api/pages/…`): so
/// only the rewrites run it, and the dynamic endpoints are simply absent.
pub fn routes_file(manifest: &Manifest, origin: Option<&BaseUrl>) -> String {
    let mut include: Vec<String> = Vec::new();
    if origin.is_some() {
        let proxied = routes::proxy_rules();
        include.extend(proxied.prefixes.iter().map(|p| format!("{p}*")));
        include.extend(proxied.paths.into_iter().map(String::from));
    }
    for (path, entry) in &manifest.artifacts {
        if stored_elsewhere(path, &entry.file) {
            include.push(path.clone());
        }
    }
    serde_json::to_string_pretty(&serde_json::json!({
        "version": 1,
        "include": include,
        "exclude": [],
    }))
    .unwrap_or_default()
        + "\n"
}

pub fn worker_file(manifest: &Manifest, origin: Option<&BaseUrl>) -> String {
    let rewrites: Vec<(String, String)> = manifest
        .artifacts
        .iter()
        .filter(|(path, entry)| stored_elsewhere(path, &entry.file))
        .map(|(path, entry)| (path.clone(), format!("/{}", entry.file)))
        .collect();
    let rewrites_js = serde_json::to_string(
        &rewrites
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
    .unwrap_or_else(|_| "{}".into());
    let origin_js =
        serde_json::to_string(&origin.map(BaseUrl::as_str)).unwrap_or_else(|_| "null".into());
    let proxied = routes::proxy_rules();
    let prefixes_js = serde_json::to_string(&proxied.prefixes).unwrap_or_default();
    let paths_js = serde_json::to_string(&proxied.paths).unwrap_or_default();
    format!(
        r#"// Generated by `dossier build` for Cloudflare Pages (advanced mode). _routes.json sends
// only the paths below here; everything else is a static asset with the _headers rules.
const ORIGIN = {origin_js}; // the dynamic core; the DOSSIER_ORIGIN variable overrides it
const DYNAMIC_PREFIXES = {prefixes_js};
const DYNAMIC_PATHS = {paths_js};
const REWRITES = {rewrites_js};

export default {{
  async fetch(request, env) {{
    const url = new URL(request.url);
    if (DYNAMIC_PATHS.includes(url.pathname) || DYNAMIC_PREFIXES.some((prefix) => url.pathname.startsWith(prefix))) {{
      const origin = (env && env.DOSSIER_ORIGIN) || ORIGIN;
      if (!origin) {{
        return new Response(JSON.stringify({{ error: "not_configured", error_description: "the dynamic core's origin is not configured" }}), {{
          status: 503,
          headers: {{ "Content-Type": "application/json", "Access-Control-Allow-Origin": "*" }},
        }});
      }}
      return fetch(new Request(origin + url.pathname + url.search, request));
    }}
    const file = REWRITES[url.pathname];
    if (file) {{
      return env.ASSETS.fetch(new Request(new URL(file, url), request));
    }}
    return env.ASSETS.fetch(request);
  }},
}};
"#
    )
}
