//! The endpoint table: one row per public path, saying everything the rest of the code
//! needs to know about it.
//!
//! A row gives the path (with `{name}` for a segment that varies, as OpenAPI writes it),
//! the methods it answers, how it is answered (a compiled document, a read computed from
//! the query, or the dynamic core), the label `/metrics` counts it under, whether a bearer
//! token is checked there, whether `serve --dynamic-only` keeps it, and the schema of its
//! JSON answer. Routing, `Allow`, 405 and preflight answers, the metric labels and the
//! contract test's path → schema map are all read from [`ROUTES`], and a test holds the
//! OpenAPI document to it (`compile::documents::openapi`), so a path exists in one place.

use std::collections::HashMap;
use std::sync::LazyLock;

use hyper::header::HeaderMap;
use hyper::Method;

use crate::compile::Artifact;
use crate::paths;
use crate::read_api::{self, ReadRefusal};
use crate::read_model::ReadModel;

/// How a row is answered.
#[derive(Clone, Copy)]
pub(crate) enum AnsweredBy {
    /// A compiled document of the live version (404 when this version has none there).
    Document,
    /// Computed per request from the read model and the query, and then served like a
    /// document (ETag, 304, HEAD).
    Computed(Computed),
    /// The dynamic core: what the router hands to the auth service, the store or MCP.
    Core(Core),
}

/// A read computed per request.
#[derive(Clone, Copy)]
pub(crate) struct Computed {
    /// The answer from the model, the query string and the request headers. A row whose
    /// methods include POST takes the same parameters as a form or JSON body
    /// ([`read_api::posted_query`]).
    pub read: fn(&ReadModel, Option<&str>, &HeaderMap) -> Result<Artifact, ReadRefusal>,
    /// Without a query, the compiled document at the same path answers instead.
    pub document_without_query: bool,
    /// A search: counted against the caller's share of searches (`--search-rate-limit`),
    /// and answered from the search index, which in the moments after a start it waits for.
    pub is_search: bool,
    /// The label `/metrics` counts computed answers under.
    pub metric: &'static str,
    /// Query strings the contract test answers and checks against the row's schema (at
    /// least one; a row without them fails that test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub samples: &'static [&'static str],
}

/// The endpoints of the dynamic core, each answered by its own code in the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Core {
    Health,
    Register,
    Claim,
    Authorize,
    Token,
    Revoke,
    Mcp,
}

/// One public path.
pub(crate) struct Route {
    /// The path, with `{name}` for a varying segment (or `{name}.ext` for one with a fixed
    /// ending), exactly as `/openapi.json` lists it.
    pub path: &'static str,
    /// The methods it answers besides `OPTIONS`, which every path answers.
    pub methods: &'static [Method],
    pub answered_by: AnsweredBy,
    /// The label `/metrics` counts its requests under.
    pub metric: &'static str,
    /// Where a bearer token presented here is checked, and the protected-resource metadata a
    /// 401 points at; `None` where tokens are not looked at.
    pub bearer: Option<&'static str>,
    /// Served by `serve --dynamic-only`, which leaves the compiled documents to a CDN.
    pub dynamic_only: bool,
    /// The `components.schemas` entry of `/openapi.json` its JSON answer follows; `None`
    /// for answers another standard defines, and for pages and text. (Read by the contract
    /// tests, which validate every answer against it and hold `/openapi.json` to this table.)
    #[cfg_attr(not(test), allow(dead_code))]
    pub schema: Option<&'static str>,
    /// Listed in `/openapi.json` (Markdown twins and the stylesheet are not).
    #[cfg_attr(not(test), allow(dead_code))]
    pub published: bool,
}

const READ: &[Method] = &[Method::GET, Method::HEAD];
const POST: &[Method] = &[Method::POST];
const READ_OR_POST: &[Method] = &[Method::GET, Method::HEAD, Method::POST];

/// A compiled document anyone may read.
const fn document(path: &'static str) -> Route {
    Route {
        path,
        methods: READ,
        answered_by: AnsweredBy::Document,
        metric: "document",
        bearer: None,
        dynamic_only: false,
        schema: None,
        published: true,
    }
}

/// A document of the read API: a token may be presented, and `--dynamic-only` keeps it
/// (the core checks tokens there).
const fn api_document(path: &'static str, schema: &'static str) -> Route {
    Route {
        bearer: Some(paths::PROTECTED_RESOURCE),
        dynamic_only: true,
        schema: Some(schema),
        ..document(path)
    }
}

/// A read of the API computed per request (each one a search): its label is also the row's,
/// since there is no document at its path.
const fn searched(
    path: &'static str,
    read: fn(&ReadModel, Option<&str>, &HeaderMap) -> Result<Artifact, ReadRefusal>,
    metric: &'static str,
    schema: &'static str,
    samples: &'static [&'static str],
) -> Route {
    Route {
        answered_by: AnsweredBy::Computed(Computed {
            read,
            document_without_query: false,
            is_search: true,
            metric,
            samples,
        }),
        metric,
        ..api_document(path, schema)
    }
}

/// An endpoint of the dynamic core.
const fn core(
    path: &'static str,
    methods: &'static [Method],
    core: Core,
    metric: &'static str,
) -> Route {
    Route {
        path,
        methods,
        answered_by: AnsweredBy::Core(core),
        metric,
        bearer: None,
        dynamic_only: true,
        schema: None,
        published: true,
    }
}

/// Not listed in `/openapi.json`.
const fn unpublished(route: Route) -> Route {
    Route {
        published: false,
        ..route
    }
}

/// Every public path. Literal paths are found by a hash lookup; among the rows with `{…}`
/// the first that matches wins, so a more particular one comes first.
pub(crate) static ROUTES: [Route; 39] = [
    // Pages for people, and their Markdown twins.
    document(paths::INDEX),
    unpublished(document(paths::INDEX_MD)),
    document(paths::DOCS),
    unpublished(document(paths::DOCS_MD)),
    unpublished(document(paths::STYLE)),
    document(paths::FAVICON),
    unpublished(document("/divisions/{division_id}.md")),
    document("/divisions/{division_id}/llms.txt"),
    document("/divisions/{division_id}"),
    // Agent discovery.
    document(paths::LLMS_TXT),
    document(paths::ROBOTS_TXT),
    document(paths::SITEMAP),
    document(paths::MCP_SERVER_CARD),
    document(paths::MCP_SERVER_CARD_LEGACY),
    document(paths::AI_CATALOG),
    document(paths::AGENT_SKILLS),
    document(paths::AGENT_SKILL),
    document(paths::AUTH_MD),
    document(paths::AUTH_MD_WELL_KNOWN),
    document(paths::OPENAPI),
    Route {
        schema: Some("Linkset"),
        ..document(paths::API_CATALOG)
    },
    document(paths::PROTECTED_RESOURCE),
    document(paths::PROTECTED_RESOURCE_MCP),
    document(paths::AUTHORIZATION_SERVER),
    document(paths::JWKS),
    // The read API.
    Route {
        answered_by: AnsweredBy::Computed(Computed {
            read: |model, query, _| read_api::company_page(model, query),
            document_without_query: true,
            is_search: false,
            metric: "company_page",
            samples: &["limit=2", "limit=1000"],
        }),
        ..api_document(paths::API_COMPANY, "CompanyDocument")
    },
    api_document("/api/divisions/{division_id}", "DivisionDocument"),
    api_document("/api/pages/{slug}", "PageDocument"),
    searched(
        paths::API_SEARCH,
        |model, query, _| read_api::search(model, query),
        "search",
        "SearchResults",
        &["q=calibration", "q=sensors&limit=1", "q=zzzz-nothing"],
    ),
    Route {
        schema: Some("Health"),
        bearer: Some(paths::PROTECTED_RESOURCE),
        ..core(paths::API_HEALTH, READ, Core::Health, "health")
    },
    // NLWeb: the search, in NLWeb's shape, under the same protected resource as the read
    // API (a token presented here is checked, one in the query string refused). NLWeb
    // clients also POST their parameters.
    Route {
        methods: READ_OR_POST,
        ..searched(
            paths::ASK,
            read_api::ask,
            "ask",
            "AskAnswer",
            &[
                "",
                "query=calibration",
                "query=careers&mode=summarize&query_id=x",
                "query=zzzz-nothing",
            ],
        )
    },
    // The dynamic core.
    Route {
        schema: Some("Registration"),
        ..core(paths::AGENT_IDENTITY, POST, Core::Register, "register")
    },
    core(paths::AGENT_IDENTITY_CLAIM, POST, Core::Claim, "claim"),
    core(
        paths::OAUTH_AUTHORIZE,
        READ_OR_POST,
        Core::Authorize,
        "authorize",
    ),
    Route {
        schema: Some("TokenResponse"),
        ..core(paths::OAUTH_TOKEN, POST, Core::Token, "token")
    },
    core(paths::OAUTH_REVOKE, POST, Core::Revoke, "revoke"),
    Route {
        bearer: Some(paths::PROTECTED_RESOURCE_MCP),
        ..core(paths::MCP, POST, Core::Mcp, "mcp")
    },
    // Content pages last: `/{slug}` matches any one segment.
    unpublished(document("/{slug}.md")),
    document("/{slug}"),
];

/// The label of requests that matched no row, or no document at a row's path.
pub(crate) const NOT_FOUND_METRIC: &str = "not_found";
/// The label of requests refused before routing (a bad `Host`, an oversized query).
pub(crate) const REFUSED_METRIC: &str = "refused";

/// Which row a path belongs to, by its place in [`ROUTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RouteId(u8);

impl RouteId {
    pub(crate) fn route(self) -> &'static Route {
        &ROUTES[self.0 as usize]
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Literal paths by path, and the rows with `{…}` in table order.
struct Index {
    literal: HashMap<&'static str, RouteId>,
    templates: Vec<RouteId>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut index = Index {
        literal: HashMap::new(),
        templates: Vec::new(),
    };
    for (position, route) in ROUTES.iter().enumerate() {
        let id = RouteId(position as u8);
        if route.path.contains('{') {
            index.templates.push(id);
        } else {
            index.literal.insert(route.path, id);
        }
    }
    index
});

/// The row `path` belongs to, if any.
pub(crate) fn find(path: &str) -> Option<RouteId> {
    let index = &*INDEX;
    if let Some(id) = index.literal.get(path) {
        return Some(*id);
    }
    index
        .templates
        .iter()
        .copied()
        .find(|id| matches(id.route().path, path))
}

/// Whether `path` fits `template`: literal segments equal, `{name}` any non-empty segment,
/// `{name}.ext` a non-empty segment ending in `.ext`.
fn matches(template: &str, path: &str) -> bool {
    let (Some(template), Some(path)) = (template.strip_prefix('/'), path.strip_prefix('/')) else {
        return false;
    };
    let mut wanted = template.split('/');
    let mut given = path.split('/');
    loop {
        match (wanted.next(), given.next()) {
            (None, None) => return true,
            (Some(pattern), Some(segment)) if segment_matches(pattern, segment) => {}
            _ => return false,
        }
    }
}

fn segment_matches(pattern: &str, segment: &str) -> bool {
    if !pattern.starts_with('{') {
        return pattern == segment;
    }
    match pattern.split_once('}') {
        Some((_, "")) => !segment.is_empty(),
        Some((_, ending)) => segment.len() > ending.len() && segment.ends_with(ending),
        None => false,
    }
}

/// Where a CDN in front must send requests on to the dynamic core, read from the table: the
/// rows `--dynamic-only` serves. A first segment all of whose rows it serves becomes a
/// prefix (`/api/`), so one proxy rule covers every id under it; any other such row is its
/// exact path (`/mcp`, whose server card beside it is a document; `/ask`).
pub(crate) struct ProxyRules {
    /// With their trailing slash, in table order.
    pub prefixes: Vec<String>,
    pub paths: Vec<&'static str>,
}

pub(crate) fn proxy_rules() -> ProxyRules {
    let first_segment = |path: &'static str| -> Option<&'static str> {
        let rest = path.strip_prefix('/')?;
        let (segment, _) = rest.split_once('/')?;
        (!segment.starts_with('{')).then_some(segment)
    };
    let mut prefixes: Vec<String> = Vec::new();
    for route in ROUTES.iter().filter(|route| route.dynamic_only) {
        let Some(segment) = first_segment(route.path) else {
            continue;
        };
        let prefix = format!("/{segment}/");
        let all_dynamic = ROUTES
            .iter()
            .filter(|other| {
                other.path.starts_with(&prefix) || other.path == &prefix[..prefix.len() - 1]
            })
            .all(|other| other.dynamic_only);
        if all_dynamic && !prefixes.contains(&prefix) {
            prefixes.push(prefix);
        }
    }
    let paths = ROUTES
        .iter()
        .filter(|route| route.dynamic_only)
        .map(|route| route.path)
        .filter(|path| {
            !prefixes
                .iter()
                .any(|prefix| path.starts_with(prefix.as_str()))
        })
        .collect();
    ProxyRules { prefixes, paths }
}

/// A label requests are counted under in `/metrics`, by its place in
/// [`MetricLabel::all`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MetricLabel(u8);

/// The labels, each once, in table order, then the two for unrouted requests; and each
/// row's label (and its computed answers'), looked up once.
struct Labels {
    names: Vec<&'static str>,
    of_route: Vec<(MetricLabel, MetricLabel)>,
}

static LABELS: LazyLock<Labels> = LazyLock::new(|| {
    let mut names: Vec<&'static str> = Vec::new();
    let mut label = |name: &'static str| -> MetricLabel {
        let position = names.iter().position(|n| *n == name).unwrap_or_else(|| {
            names.push(name);
            names.len() - 1
        });
        MetricLabel(position as u8)
    };
    let of_route = ROUTES
        .iter()
        .map(|route| {
            let plain = label(route.metric);
            let computed = match route.answered_by {
                AnsweredBy::Computed(computed) => label(computed.metric),
                _ => plain,
            };
            (plain, computed)
        })
        .collect();
    label(NOT_FOUND_METRIC);
    label(REFUSED_METRIC);
    Labels { names, of_route }
});

impl MetricLabel {
    /// Every label, in the order they are counted and printed.
    pub(crate) fn all() -> &'static [&'static str] {
        &LABELS.names
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    pub(crate) fn not_found() -> MetricLabel {
        MetricLabel((LABELS.names.len() - 2) as u8)
    }

    pub(crate) fn refused() -> MetricLabel {
        MetricLabel((LABELS.names.len() - 1) as u8)
    }
}

impl RouteId {
    /// The label of this row's requests: `computed` when a computed read answered.
    pub(crate) fn metric(self, computed: bool) -> MetricLabel {
        let (plain, computed_label) = LABELS.of_route[self.index()];
        if computed {
            computed_label
        } else {
            plain
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_rules_cover_exactly_the_rows_the_core_serves() {
        let rules = proxy_rules();
        let covered = |path: &str| {
            rules.paths.contains(&path)
                || rules
                    .prefixes
                    .iter()
                    .any(|prefix| path.starts_with(prefix.as_str()))
        };
        for route in ROUTES.iter() {
            assert_eq!(covered(route.path), route.dynamic_only, "{}", route.path);
        }
        // Exact paths are written as they are into _redirects and _worker.js: a template
        // there would match nothing.
        assert!(rules.paths.iter().all(|path| !path.contains('{')));
        assert_eq!(rules.prefixes, ["/api/", "/agent/", "/oauth2/"]);
        assert_eq!(rules.paths, ["/ask", "/mcp"]);
    }

    #[test]
    fn paths_find_their_rows() {
        for (path, row) in [
            ("/", "/"),
            ("/about", "/{slug}"),
            ("/about.md", "/{slug}.md"),
            ("/index.md", "/index.md"),
            ("/divisions/field-sensors", "/divisions/{division_id}"),
            ("/divisions/field-sensors.md", "/divisions/{division_id}.md"),
            (
                "/divisions/field-sensors/llms.txt",
                "/divisions/{division_id}/llms.txt",
            ),
            ("/api/pages/careers", "/api/pages/{slug}"),
            ("/api/company", "/api/company"),
            ("/mcp", "/mcp"),
            ("/mcp/server-card", "/mcp/server-card"),
        ] {
            let found = find(path).map(|id| id.route().path);
            assert_eq!(found, Some(row), "{path}");
        }
        for path in [
            "",
            "//",
            "/api/pages/",
            "/api/pages/a/b",
            "/divisions/",
            "/a/b",
            "/api/nothing",
        ] {
            assert_eq!(find(path).map(|id| id.route().path), None, "{path}");
        }
    }

    #[test]
    fn every_row_is_one_path_and_fits_in_a_route_id() {
        assert!(ROUTES.len() <= u8::MAX as usize);
        let mut seen: Vec<&str> = ROUTES.iter().map(|route| route.path).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), ROUTES.len());
        // A literal row is never shadowed, and a template row is reachable.
        for (position, route) in ROUTES.iter().enumerate() {
            let example = route
                .path
                .replace("{division_id}", "field-sensors")
                .replace("{slug}", "careers");
            assert_eq!(
                find(&example).map(RouteId::index),
                Some(position),
                "{}",
                route.path
            );
        }
    }

    #[test]
    fn metric_labels_are_each_listed_once_and_unrouted_ones_last() {
        let all = MetricLabel::all();
        assert_eq!(all[MetricLabel::not_found().index()], NOT_FOUND_METRIC);
        assert_eq!(all[MetricLabel::refused().index()], REFUSED_METRIC);
        let company = find(paths::API_COMPANY).unwrap();
        assert_eq!(all[company.metric(false).index()], "document");
        assert_eq!(all[company.metric(true).index()], "company_page");
        let mut unique = all.to_vec();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
    }

    /// A page's slug is its path's one segment, so every fixed first segment of a row must
    /// be one no page may take (or the page and the row would claim the same path).
    #[test]
    fn every_fixed_first_segment_is_a_reserved_slug() {
        for route in &ROUTES {
            let first = route
                .path
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap();
            if first.is_empty() || first.starts_with('{') {
                continue;
            }
            let word = first.trim_start_matches('.').split('.').next().unwrap();
            assert!(
                paths::RESERVED_SLUGS.contains(&word),
                "{}: `{word}` is not in paths::RESERVED_SLUGS",
                route.path
            );
        }
    }

    /// The CLI reference's `/metrics` section lists the labels as they are.
    #[test]
    fn the_cli_reference_lists_every_metric_label() {
        let reference = include_str!("../docs/cli.md");
        let list = reference
            .split("dossier_requests_total{route,status}` (route: ")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .expect("the metrics section of docs/cli.md");
        let listed: Vec<&str> = list
            .split(',')
            .map(|label| label.trim().trim_matches('`'))
            .collect();
        assert_eq!(listed, MetricLabel::all());
    }

    #[test]
    fn the_read_api_states_its_schemas_and_checks_tokens() {
        for route in ROUTES.iter().filter(|r| r.path.starts_with("/api/")) {
            assert!(route.schema.is_some(), "{} has no schema", route.path);
            assert_eq!(
                route.bearer,
                Some(paths::PROTECTED_RESOURCE),
                "{}",
                route.path
            );
            assert!(route.dynamic_only, "{}", route.path);
        }
    }
}
