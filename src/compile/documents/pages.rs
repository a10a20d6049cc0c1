//! The site people read: HTML pages rendered from templates, each with a Markdown twin for
//! agents (`Accept: text/markdown`, or the `.md` path directly).
//!
//! - `/` and `/index.md`: the company overview, with schema.org `Organization` JSON-LD;
//! - `/divisions/<id>` and `.md`: one per division;
//! - `/<slug>` and `/<slug>.md`: one per content page;
//! - `/docs` and `/docs.md`: the API for humans, generated from the OpenAPI description and
//!   `auth.md`, so it cannot drift from either;
//! - `/style.css`.

use std::sync::Arc;

use hyper::header::{HeaderValue, LINK};
use minijinja::context;
use pulldown_cmark::{html, Event, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};

use super::auth_md::MARKDOWN;
use super::operation::{self, Context, Operations};
use crate::compile::templates::Templates;
use crate::compile::{exact_bytes, Artifact, CachePolicy, CompileError, CompileInput};
use crate::content::{Contact, Division, Page};
use crate::paths;

pub const HTML: &str = "text/html; charset=utf-8";
pub const CSS: &str = "text/css; charset=utf-8";

/// The Markdown extensions pages may use.
pub const MARKDOWN_OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// CommonMark to HTML. Raw HTML in the source is shown as text, never passed through, and
/// only links and images that cannot run code keep their target (see [`is_safe_url`]); the
/// others are rendered inert: a link becomes its text, an image its alt text.
pub fn markdown_to_html(markdown: &str) -> String {
    let options = MARKDOWN_OPTIONS;
    // Link and image ends must match their starts: a refused start hides its end too.
    let mut refused: Vec<bool> = Vec::new();
    let events = Parser::new_ext(markdown, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { ref dest_url, .. } | Tag::Image { ref dest_url, .. }) => {
            let safe = is_safe_url(dest_url);
            refused.push(!safe);
            safe.then_some(event)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => {
            let was_refused = refused.pop().unwrap_or(false);
            (!was_refused).then_some(event)
        }
        other => Some(other),
    });
    let mut events: Vec<Event<'_>> = events.collect();
    // Headings get ids, so `/page#how-we-hire` lands on its heading.
    let mut ids = HeadingIds::default();
    for index in 0..events.len() {
        if matches!(events[index], Event::Start(Tag::Heading { id: None, .. })) {
            let next = ids.next(&heading_text(&events[index + 1..]));
            if let Event::Start(Tag::Heading { id, .. }) = &mut events[index] {
                *id = Some(next.into());
            }
        }
    }
    // HTML is somewhat longer than its Markdown (tags, escapes): starting at one and a half
    // times, it is rarely grown.
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

/// The text of a heading whose start precedes `events`.
fn heading_text(events: &[Event<'_>]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            Event::End(TagEnd::Heading(_)) => break,
            Event::Text(part) | Event::Code(part) => text.push_str(part),
            _ => {}
        }
    }
    text
}

/// Heading ids as GitHub makes them: lowercase, letters, digits, `-` and `_` kept, spaces
/// made `-`, the rest dropped; a repeated id gets `-1`, `-2`…
#[derive(Default)]
struct HeadingIds {
    seen: std::collections::HashMap<String, usize>,
}

impl HeadingIds {
    fn next(&mut self, text: &str) -> String {
        let id: String = text
            .trim()
            .chars()
            .flat_map(char::to_lowercase)
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let count = self.seen.entry(id.clone()).or_insert(0);
        let unique = if *count == 0 {
            id
        } else {
            format!("{id}-{count}")
        };
        *count += 1;
        unique
    }
}

/// The ids [`markdown_to_html`] gives a page's headings, in order: the anchors a link into
/// the page may name.
pub fn heading_ids(markdown: &str) -> Vec<String> {
    let mut ids = HeadingIds::default();
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, MARKDOWN_OPTIONS).collect();
    (0..events.len())
        .filter(|index| matches!(events[*index], Event::Start(Tag::Heading { .. })))
        .map(|index| ids.next(&heading_text(&events[index + 1..])))
        .collect()
}

/// Whether a link target in a page may become a live `href` / `src`: relative references,
/// and absolute ones with the schemes `http`, `https`, `mailto` and `tel`. The scheme is
/// read the way a browser reads it, after dropping the tabs, newlines and leading control
/// characters it ignores (`java\tscript:` is `javascript:`). Entities are already decoded
/// by the Markdown parser.
pub fn is_safe_url(url: &str) -> bool {
    let cleaned: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme_end = cleaned.find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)));
    match scheme_end {
        Some(end) if cleaned[end..].starts_with(':') && end > 0 => {
            let scheme = cleaned[..end].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto" | "tel")
        }
        // No scheme: a path, query or fragment on this site.
        _ => true,
    }
}

/// Templates plus the context every page shares, converted to template values once per
/// compile: converting the site for each of thousands of pages would cost quadratic time.
pub struct Renderer<'a> {
    templates: &'a Templates,
    shared: minijinja::Value,
    base: &'a crate::config::BaseUrl,
}

impl<'a> Renderer<'a> {
    pub fn new(input: &'a CompileInput<'_>, templates: &'a Templates) -> Renderer<'a> {
        Renderer {
            templates,
            shared: context! {
                company => minijinja::Value::from_serialize(&input.site.company),
                base => input.config.base_url.as_str(),
            },
            base: &input.config.base_url,
        }
    }

    fn page(
        &self,
        path: &str,
        markdown_path: &str,
        template: &'static str,
        extra: minijinja::Value,
        extra_links: &str,
    ) -> Result<Artifact, CompileError> {
        // The first occurrence of a key wins, so `extra` must not repeat shared keys.
        let context = minijinja::value::merge_maps([
            context! { markdown_url => markdown_path },
            extra,
            self.shared.clone(),
        ]);
        let html = self.templates.render_body(template, context)?;
        // llms.txt (2026-08): every page names its Markdown twin and the site's llms.txt, in
        // the head (`<link>`, see base.html) and here, for agents that read headers only.
        // And the AI catalog, where an agent finds the MCP server card.
        let mut links = format!(
            "<{}>; rel=\"alternate\"; type=\"text/markdown\", <{}>; rel=\"describedby\"; type=\"text/plain\", <{}>; rel=\"ai-catalog\"",
            self.base.join(markdown_path),
            self.base.join(paths::LLMS_TXT),
            self.base.join(paths::AI_CATALOG),
        );
        if !extra_links.is_empty() {
            links = format!("{extra_links}, {links}");
        }
        let links =
            HeaderValue::from_str(&links).map_err(|e| CompileError::new("Link header", e))?;
        Ok(
            Artifact::new(path.to_string(), HTML, CachePolicy::Content, html)
                .with_markdown(markdown_path)
                .with_header(LINK, links),
        )
    }
}

/// A page as the index and division templates list it: every field but the text, which a
/// list of 10,000 pages would otherwise copy into the template engine on every compile.
#[derive(serde::Serialize)]
struct Listed<'a> {
    slug: &'a str,
    title: &'a str,
    summary: &'a str,
    division: Option<&'a str>,
    updated: Option<&'a str>,
    contact: Option<&'a Contact>,
}

impl<'a> Listed<'a> {
    fn all(pages: impl IntoIterator<Item = &'a Page>) -> Vec<Listed<'a>> {
        pages
            .into_iter()
            .map(|page| Listed {
                slug: &page.slug,
                title: &page.title,
                summary: &page.summary,
                division: page.division.as_deref(),
                updated: page.updated.as_deref(),
                contact: page.contact.as_deref(),
            })
            .collect()
    }
}

fn markdown(path: String, text: String) -> Artifact {
    Artifact::new(path, MARKDOWN, CachePolicy::Content, exact_bytes(text)).negotiated()
}

/// `- [Division](BASE/divisions/<id>.md): summary` for every division, appended to `out`.
pub fn push_division_links(out: &mut String, input: &CompileInput<'_>) {
    for division in &input.site.divisions {
        push_link(
            out,
            &division.name,
            input.config.base_url.as_str(),
            &paths::division_markdown(&division.id),
            &division.summary,
        );
    }
}

/// `- [Title](BASE/<slug>.md): summary` for each of `pages`, appended to `out`. The home
/// page and llms.txt list every page: at 100,000 pages a `format!` per line was a third of
/// making the site's own documents (`perf`), so each line is pushed in place.
pub fn push_page_links<'a>(
    out: &mut String,
    input: &CompileInput<'_>,
    pages: impl IntoIterator<Item = &'a Page>,
) {
    let base = input.config.base_url.as_str();
    for page in pages {
        let path = paths::page_markdown(&page.slug);
        push_link(out, &page.title, base, &path, &page.summary);
    }
}

/// `- [text](base path): summary` and a newline.
fn push_link(out: &mut String, text: &str, base: &str, path: &str, summary: &str) {
    out.reserve(text.len() + base.len() + path.len() + summary.len() + 10);
    out.push_str("- [");
    out.push_str(text);
    out.push_str("](");
    out.push_str(base);
    out.push_str(path);
    out.push_str("): ");
    out.push_str(summary);
    out.push('\n');
}

fn contact_lines(contact: &Contact) -> String {
    let mut lines = String::new();
    if let Some(email) = &contact.email {
        lines.push_str(&format!("- Email: {email}\n"));
    }
    if let Some(phone) = &contact.phone {
        lines.push_str(&format!("- Phone: {phone}\n"));
    }
    if let Some(web) = &contact.web {
        lines.push_str(&format!("- Web: {web}\n"));
    }
    if let Some(address) = &contact.address {
        lines.push_str(&format!("- Address: {}\n", address.one_line()));
    }
    lines
}

/// schema.org `Organization`, for search engines and agents that read JSON-LD.
fn json_ld(input: &CompileInput<'_>) -> String {
    let company = &input.site.company;
    let base = input.config.base_url.as_str();
    let address = |a: &crate::content::model::Address| {
        json!({
            "@type": "PostalAddress",
            "streetAddress": a.street,
            "addressLocality": a.locality,
            "addressRegion": a.region,
            "postalCode": a.postal_code,
            "addressCountry": a.country,
        })
    };
    let organization = |o: &crate::content::model::RelatedOrganization| json!({"@type": "Organization", "name": o.name, "url": o.url, "leiCode": o.lei, "address": o.country.as_ref().map(|c| json!({"@type": "PostalAddress", "addressCountry": c}))});
    let code = |scheme| {
        let codes: Vec<&str> = company
            .industry_codes
            .iter()
            .filter(|c| c.scheme == scheme)
            .map(|c| c.code.as_str())
            .collect();
        match codes.as_slice() {
            [] => Value::Null,
            [one] => json!(one),
            many => json!(many),
        }
    };
    let mut identifiers: Vec<Value> = company
        .identifiers
        .iter()
        .map(|i| json!({"@type": "PropertyValue", "propertyID": i.scheme, "value": i.value}))
        .collect();
    if let Some(lei) = &company.lei {
        identifiers.push(json!({"@type": "PropertyValue", "propertyID": "LEI", "value": lei}));
    }
    if let Some(registration) = &company.registration {
        identifiers.push(json!({
            "@type": "PropertyValue",
            "propertyID": registration.registry.clone().unwrap_or_else(|| "company register".into()),
            "value": registration.number,
            "description": format!("Company register number, jurisdiction {}", registration.jurisdiction),
        }));
    }
    if let Some(form) = &company.legal_form {
        identifiers
            .push(json!({"@type": "PropertyValue", "propertyID": "legalForm", "value": form}));
    }
    let mut same_as: Vec<String> = company.same_as.clone();
    same_as.extend(
        company
            .links
            .iter()
            .map(|l| l.url.clone())
            .filter(|url| !company.same_as.contains(url)),
    );
    let locations: Vec<Value> = company
        .locations
        .iter()
        .map(|l| {
            json!({
                "@type": "Place",
                "name": l.name,
                "address": address(&l.address),
                "geo": l.geo.map(|g| json!({"@type": "GeoCoordinates", "latitude": g.latitude, "longitude": g.longitude})),
                "additionalProperty": {"@type": "PropertyValue", "name": "type", "value": l.kind},
            })
        })
        .collect();
    let departments: Vec<Value> = input
        .site
        .divisions
        .iter()
        .map(|division| {
            json!({
                "@type": "Organization",
                "name": division.name,
                "description": division.summary,
                "url": format!("{base}{}", paths::division(&division.id)),
                "email": division.contact.as_ref().and_then(|c| c.email.clone()),
                "telephone": division.contact.as_ref().and_then(|c| c.phone.clone()),
            })
        })
        .collect();
    let value = json!({
        "@context": "https://schema.org",
        "@type": "Organization",
        "name": company.name,
        "legalName": company.legal_name,
        "description": company.description,
        "slogan": company.tagline,
        "url": base,
        "foundingDate": company.founded.date.clone().unwrap_or_else(|| company.founded.year.to_string()),
        "logo": company.logo,
        "leiCode": company.lei,
        "vatID": company.vat_id,
        "taxID": company.tax_id,
        "naics": code(crate::content::model::IndustryScheme::Naics),
        "isicV4": code(crate::content::model::IndustryScheme::Isic),
        "employee": company.leadership.iter().map(|p| json!({"@type": "Person", "name": p.name, "jobTitle": p.role, "url": p.url})).collect::<Vec<_>>(),
        "location": locations,
        "parentOrganization": company.parent.as_ref().map(organization),
        "subOrganization": company.subsidiaries.iter().map(organization).collect::<Vec<_>>(),
        "hasCertification": company.certifications.iter().map(|c| json!({
            "@type": "Certification",
            "name": c.name,
            "issuedBy": c.issuer.as_ref().map(|issuer| json!({"@type": "Organization", "name": issuer})),
            "certificationIdentification": c.identifier,
            "expires": c.valid_until,
            "url": c.url,
        })).collect::<Vec<_>>(),
        "foundingLocation": company.founded.place,
        "address": address(&company.headquarters),
        "email": company.contact.email,
        "telephone": company.contact.phone,
        "numberOfEmployees": company.employees.map(|n| json!({"@type": "QuantitativeValue", "value": n})),
        "sameAs": same_as,
        "identifier": identifiers,
        "department": departments,
    });
    script_safe_json(&serde_json::to_string(&strip_nulls(value)).unwrap_or_default())
}

/// JSON that can sit inside `<script>`: `<`, `>` and `&` become `\u003c`, `\u003e` and
/// `\u0026` (and the line separators `\u2028` / `\u2029`), so no content (`</script>`,
/// `<!--`) can end or change the script element. The JSON means the same after.
pub fn script_safe_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            other => out.push(other),
        }
    }
    out
}

/// `value` without `null` members and empty lists (schema.org leaves unknowns out).
pub(crate) fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// The optional profile fields, as Markdown list items and sections.
fn profile_markdown(company: &crate::content::model::Company) -> String {
    let mut md = String::new();
    let mut fact = |label: &str, value: Option<String>| {
        if let Some(value) = value {
            md.push_str(&format!("- {label}: {value}\n"));
        }
    };
    fact("Legal form", company.legal_form.clone());
    fact("LEI", company.lei.clone());
    fact(
        "Registered",
        company.registration.as_ref().map(|r| {
            let registry = r
                .registry
                .as_ref()
                .map(|n| format!(", {n}"))
                .unwrap_or_default();
            format!("{} ({}{registry})", r.number, r.jurisdiction)
        }),
    );
    fact("VAT ID", company.vat_id.clone());
    fact("Tax ID", company.tax_id.clone());
    for code in &company.industry_codes {
        let name = code
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        fact(
            "Industry code",
            Some(format!("{} {}{name}", code.scheme.label(), code.code)),
        );
    }
    if !company.leadership.is_empty() {
        md.push_str("\n## Leadership\n\n");
        for leader in &company.leadership {
            md.push_str(&format!("- {}: {}\n", leader.name, leader.role));
        }
    }
    if !company.locations.is_empty() {
        md.push_str("\n## Locations\n\n");
        for location in &company.locations {
            let kind = serde_json::to_value(location.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let geo = location
                .geo
                .map(|g| format!(" ({:.4}, {:.4})", g.latitude, g.longitude))
                .unwrap_or_default();
            md.push_str(&format!(
                "- {} ({kind}): {}{geo}\n",
                location.name,
                location.address.one_line()
            ));
        }
    }
    if company.parent.is_some() || !company.subsidiaries.is_empty() {
        md.push_str("\n## Group\n\n");
        if let Some(parent) = &company.parent {
            md.push_str(&format!("- Parent: {}\n", parent.name));
        }
        for subsidiary in &company.subsidiaries {
            let lei = subsidiary
                .lei
                .as_ref()
                .map(|l| format!(" (LEI {l})"))
                .unwrap_or_default();
            md.push_str(&format!("- Subsidiary: {}{lei}\n", subsidiary.name));
        }
    }
    if !company.certifications.is_empty() {
        md.push_str("\n## Certifications\n\n");
        for certification in &company.certifications {
            let issuer = certification
                .issuer
                .as_ref()
                .map(|i| format!(", by {i}"))
                .unwrap_or_default();
            let until = certification
                .valid_until
                .as_ref()
                .map(|d| format!(", valid until {d}"))
                .unwrap_or_default();
            md.push_str(&format!("- {}{issuer}{until}\n", certification.name));
        }
    }
    md
}

fn index(input: &CompileInput<'_>, renderer: &Renderer<'_>) -> Result<Vec<Artifact>, CompileError> {
    let site = input.site;
    let base = &input.config.base_url;
    let links = format!(
        "<{}>; rel=\"api-catalog\", <{}>; rel=\"service-desc\"; type=\"application/json\", <{}>; rel=\"service-doc\"; type=\"text/html\"",
        base.join(paths::API_CATALOG),
        base.join(paths::OPENAPI),
        base.join(paths::DOCS),
    );
    let html = renderer.page(
        paths::INDEX,
        paths::INDEX_MD,
        "index.html",
        context! {
            json_ld => json_ld(input),
            divisions => &site.divisions,
            pages => Listed::all(site.pages.iter().map(|page| &**page)),
        },
        &links,
    )?;

    let company = &site.company;
    let mut md = format!("# {}\n\n", company.name);
    if let Some(tagline) = &company.tagline {
        md.push_str(&format!("> {tagline}\n\n"));
    }
    md.push_str(&format!("{}\n\n", company.description));
    md.push_str(&format!(
        "- Founded: {}{}\n- Headquarters: {}\n",
        company.founded.year,
        company
            .founded
            .place
            .as_ref()
            .map(|p| format!(" in {p}"))
            .unwrap_or_default(),
        company.headquarters.place()
    ));
    if let Some(employees) = company.employees {
        md.push_str(&format!("- Employees: {employees}\n"));
    }
    md.push_str(&profile_markdown(company));
    md.push_str("\n## Divisions\n\n");
    push_division_links(&mut md, input);
    md.push_str("\n## Pages\n\n");
    push_page_links(&mut md, input, site.pages.iter().map(|page| &**page));
    md.push_str(&format!(
        "\n## Contact\n\n{}",
        contact_lines(&company.contact)
    ));
    md.push_str(&format!(
        "\n## For agents\n\n- [API and agents]({}): endpoints, MCP and authentication\n- [OpenAPI description]({})\n- [auth.md]({})\n- MCP endpoint: {}\n",
        base.join(paths::DOCS_MD),
        base.join(paths::OPENAPI),
        base.join(paths::AUTH_MD),
        base.join(paths::MCP)
    ));
    Ok(vec![html, markdown(paths::INDEX_MD.into(), md)])
}

fn division(
    input: &CompileInput<'_>,
    renderer: &Renderer<'_>,
    division: &Division,
) -> Result<Vec<Artifact>, CompileError> {
    let pages: Vec<&Page> = input
        .site
        .pages
        .iter()
        .map(|page| &**page)
        .filter(|page| page.division.as_deref() == Some(division.id.as_str()))
        .collect();
    let path = paths::division(&division.id);
    let md_path = format!("{path}.md");
    let html = renderer.page(
        &path,
        &md_path,
        "division.html",
        context! { division => division, division_pages => Listed::all(pages.iter().copied()) },
        "",
    )?;
    let mut md = format!(
        "# {}\n\n{}\n\n{}\n\n",
        division.name, division.summary, division.description
    );
    if let Some(lead) = &division.lead {
        md.push_str(&format!("- Led by: {}, {}\n", lead.name, lead.title));
    }
    if let Some(year) = division.established {
        md.push_str(&format!("- Established: {year}\n"));
    }
    if !division.locations.is_empty() {
        // One per line: "Longmont, Colorado, Tampere, Finland" would not say where one ends.
        md.push_str("- Locations:\n");
        for location in &division.locations {
            md.push_str(&format!("  - {location}\n"));
        }
    }
    if let Some(contact) = &division.contact {
        md.push_str(&format!("\n## Contact\n\n{}", contact_lines(contact)));
    }
    if !pages.is_empty() {
        md.push_str("\n## Pages\n\n");
        push_page_links(&mut md, input, pages.iter().copied());
    }
    Ok(vec![html, markdown(md_path, md)])
}

fn page(
    input: &CompileInput<'_>,
    renderer: &Renderer<'_>,
    page: &Page,
) -> Result<Vec<Artifact>, CompileError> {
    let division = page
        .division
        .as_ref()
        .and_then(|id| input.site.divisions.iter().find(|d| &d.id == id));
    // Pages usually start with their own H1; add one when they do not.
    let text = page.body_markdown.get();
    let body = if text.trim_start().starts_with("# ") {
        text.to_string()
    } else {
        format!("# {}\n\n{}", page.title, &*text)
    };
    let path = paths::page(&page.slug);
    let md_path = format!("{path}.md");
    let html = renderer.page(
        &path,
        &md_path,
        "page.html",
        context! { page => page, division => division, body_html => minijinja::Value::from_safe_string(markdown_to_html(&body)) },
        "",
    )?;
    let mut md = body;
    if !md.ends_with('\n') {
        md.push('\n');
    }
    if let Some(contact) = &page.contact {
        md.push_str(&format!("\n## Contact\n\n{}", contact_lines(contact)));
    }
    if let Some(updated) = &page.updated {
        md.push_str(&format!("\n_Last updated {updated}._\n"));
    }
    Ok(vec![html, markdown(md_path, md)])
}

/// One row per documented operation, in the OpenAPI description's order.
fn operation_rows(openapi: &Value) -> Vec<Value> {
    let mut rows = Vec::new();
    if let Some(paths) = openapi["paths"].as_object() {
        for (path, item) in paths {
            for method in ["get", "post", "put", "delete"] {
                if let Some(operation) = item.get(method) {
                    rows.push(json!({
                        "method": method.to_uppercase(),
                        "path": path,
                        "summary": operation["summary"],
                        "description": operation.get("description"),
                    }));
                }
            }
        }
    }
    rows
}

fn docs(
    input: &CompileInput<'_>,
    renderer: &Renderer<'_>,
    openapi: &Value,
    auth_md: &str,
) -> Result<Vec<Artifact>, CompileError> {
    let operations = operation_rows(openapi);
    let tools = crate::mcp::tools::definitions(&input.site.company.name);
    // auth.md starts with its own H1; inside /docs it becomes a section.
    let auth_body = auth_md.split_once('\n').map_or(auth_md, |(_, rest)| rest);
    let html = renderer.page(
        paths::DOCS,
        paths::DOCS_MD,
        "docs.html",
        context! {
            api => &openapi["info"].as_object().map(|info| json!({"description": info["description"], "openapi": openapi["openapi"]})),
            operations => &operations,
            tools => &tools,
            auth_html => markdown_to_html(auth_body),
        },
        "",
    )?;
    let base = input.config.base_url.as_str();
    let mut md = format!(
        "# API and agents\n\n{}\n\nMachine-readable: [OpenAPI]({base}/openapi.json), [API catalog]({base}/.well-known/api-catalog), [llms.txt]({base}/llms.txt). MCP: `POST {base}/mcp`.\n\n## Endpoints\n\n| Method | Path | What it does |\n|---|---|---|\n",
        openapi["info"]["description"].as_str().unwrap_or_default()
    );
    for operation in &operations {
        md.push_str(&format!(
            "| {} | `{}` | {} |\n",
            operation["method"].as_str().unwrap_or_default(),
            operation["path"].as_str().unwrap_or_default(),
            operation["summary"]
                .as_str()
                .unwrap_or_default()
                .replace('|', "\\|")
        ));
    }
    md.push_str("\n## MCP tools\n\n");
    for tool in &tools {
        md.push_str(&format!(
            "- `{}`: {}\n",
            tool["name"].as_str().unwrap_or_default(),
            tool["description"].as_str().unwrap_or_default()
        ));
    }
    md.push_str("\n## Authentication for agents\n");
    md.push_str(auth_body);
    Ok(vec![html, markdown(paths::DOCS_MD.into(), md)])
}

/// The HTML documents that are not a content page (the index, division pages, `/docs`),
/// their Markdown twins, and the stylesheet.
pub fn site_pages(
    input: &CompileInput<'_>,
    templates: &Templates,
    openapi: &Value,
    auth_md: &str,
) -> Result<Vec<Artifact>, CompileError> {
    let renderer = Renderer::new(input, templates);
    let mut artifacts = index(input, &renderer)?;
    for entry in &input.site.divisions {
        artifacts.extend(division(input, &renderer, entry)?);
    }
    artifacts.extend(docs(input, &renderer, openapi, auth_md)?);
    let css = templates.render("style.css", context! {})?;
    artifacts.push(Artifact::new(paths::STYLE, CSS, CachePolicy::Content, css));
    Ok(artifacts)
}

/// Every content page and its Markdown twin.
pub fn pages(
    input: &CompileInput<'_>,
    templates: &Templates,
) -> Result<Vec<Arc<Artifact>>, CompileError> {
    pages_of(input, templates, &input.site.pages)
}

/// [`pages`] for `of`, some of the site's pages.
pub fn pages_of(
    input: &CompileInput<'_>,
    templates: &Templates,
    of: &[Arc<Page>],
) -> Result<Vec<Arc<Artifact>>, CompileError> {
    let renderer = Renderer::new(input, templates);
    // Pages are independent: render them on every core (a site may have tens of thousands).
    let pages: Vec<&Page> = of.iter().map(|page| &**page).collect();
    let rendered = crate::parallel::map(pages, |entry| page(input, &renderer, entry));
    let mut artifacts = Vec::with_capacity(of.len() * 2);
    for rendered in rendered {
        artifacts.extend(rendered?.into_iter().map(Arc::new));
    }
    Ok(artifacts)
}

/// The pages' operations in `/openapi.json`.
pub(crate) fn operations(context: &Context<'_>) -> Operations {
    vec![
        (
            paths::INDEX,
            operation::page(
                "getIndex",
                "The company overview, with links to everything else",
            ),
        ),
        (
            paths::DOCS,
            operation::page(
                "getDocs",
                "This API described for people, with the agent flow",
            ),
        ),
        (
            "/divisions/{division_id}",
            operation::with_id(
                operation::page(
                    "getDivisionPage",
                    "One division, for people (and as Markdown)",
                ),
                &context.division_id,
            ),
        ),
        (
            "/{slug}",
            operation::with_id(
                operation::page(
                    "getContentPage",
                    "One content page, for people (and as Markdown)",
                ),
                &context.slug,
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_in_markdown_is_shown_as_text() {
        let html = markdown_to_html("Hello <script>alert(1)</script> **world**\n\n<iframe src=x>");
        assert!(
            !html.contains("<script>") && !html.contains("<iframe"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;") && html.contains("<strong>world</strong>"));
    }

    #[test]
    fn only_links_that_cannot_run_code_stay_links() {
        let page = "[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](vbscript:msgbox) \
             [d](data:text/html;base64,PHNjcmlwdD4=) [e](javascript&#58;alert(1)) \
             [f](&#106;avascript:alert(1)) [g](java&#9;script:alert(1)) [h][ref] \
             <javascript:alert(1)> ![i](javascript:alert(1)) [j](%20javascript:alert(1)) \
             [k](\u{1}javascript:alert(1))\n\n[ref]: javascript:alert(1)\n";
        let html = markdown_to_html(page);
        let targets: Vec<&str> = ["href=\"", "src=\""]
            .iter()
            .flat_map(|attribute| html.split(attribute).skip(1))
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert!(
            !targets.is_empty(),
            "the harmless relative link stays: {html}"
        );
        for target in &targets {
            let lower = target.to_ascii_lowercase();
            assert!(
                !["javascript:", "vbscript:", "data:"]
                    .iter()
                    .any(|s| lower.starts_with(s)),
                "{target} in {html}"
            );
        }
        assert!(!html.contains("<img"), "{html}");
        // The text survives, inert.
        for text in ["a", "b", "c", "d", "h", "i"] {
            assert!(
                html.contains(&format!("{text} ")) || html.contains(text),
                "{text}: {html}"
            );
        }
        let fine = markdown_to_html(
            "[w](https://example.com) [m](mailto:a@example.com) [t](tel:+15550100) \
             [r](/careers) [q](?x=1) [f](#top) [p](careers.md) <https://example.com/x>",
        );
        for href in [
            "https://example.com",
            "mailto:a@example.com",
            "tel:+15550100",
            "/careers",
            "?x=1",
            "#top",
            "careers.md",
            "https://example.com/x",
        ] {
            assert!(fine.contains(&format!("href=\"{href}\"")), "{href}: {fine}");
        }
        // A refused link inside an allowed one (or the reverse) keeps the tags balanced.
        let nested = markdown_to_html("[![x](javascript:1)](https://example.com)");
        assert_eq!(
            nested.matches("<a ").count(),
            nested.matches("</a>").count()
        );
    }

    #[test]
    fn json_in_script_cannot_end_the_element() {
        let json = serde_json::to_string("Desc <!--<script> </script> a & b \u{2028}").unwrap();
        let safe = script_safe_json(&json);
        for bad in ["<", ">", "&", "\u{2028}"] {
            assert!(!safe.contains(bad), "{safe}");
        }
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "Desc <!--<script> </script> a & b \u{2028}");
    }

    #[test]
    fn tables_render() {
        assert!(markdown_to_html("| a | b |\n|---|---|\n| 1 | 2 |\n").contains("<table>"));
    }
}
