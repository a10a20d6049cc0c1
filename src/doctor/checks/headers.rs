//! Headers as served: CORS and preflights, validators, `Vary`, compression, nothing dynamic
//! cached, the `Link` header and security headers of `/`, the Markdown twin's type.

use bytes::Bytes;
use hyper::{Method, StatusCode};

use super::{fix, missing_fix};
use crate::doctor::{Doctor, Section};
use crate::paths;

pub(super) async fn check(doctor: &mut Doctor) {
    doctor.section = Section::Headers;
    let base = doctor.base.clone();

    // CORS on a read, as a browser-based agent sends it.
    let origin = [("origin", "https://agent.example")];
    if let Some(response) = doctor
        .send(Method::GET, paths::API_COMPANY, &origin, Bytes::new())
        .await
    {
        let allow = response.header("access-control-allow-origin");
        doctor.expect(
            allow == "*",
            "CORS: Access-Control-Allow-Origin on GET /api/company",
            "*",
            if allow.is_empty() {
                "none".to_string()
            } else {
                allow
            },
            fix::HEADERS,
        );
        let exposed = response
            .header("access-control-expose-headers")
            .to_ascii_lowercase();
        doctor.expect(
            exposed.contains("www-authenticate") && exposed.contains("etag"),
            "CORS: Access-Control-Expose-Headers names WWW-Authenticate and ETag",
            "ETag, Link, WWW-Authenticate, …",
            if exposed.is_empty() {
                "none".to_string()
            } else {
                exposed
            },
            fix::HEADERS,
        );
        let vary = response.header("vary").to_ascii_lowercase();
        doctor.expect(
            vary.contains("accept-encoding"),
            "Vary: Accept-Encoding on GET /api/company",
            "Accept-Encoding",
            if vary.is_empty() {
                "none".to_string()
            } else {
                vary
            },
            fix::HEADERS,
        );
        let etag = response.header("etag");
        if doctor.expect(
            etag.starts_with('"'),
            "ETag: a strong validator on GET /api/company",
            "\"…\"",
            if etag.is_empty() {
                "none".to_string()
            } else {
                etag.clone()
            },
            fix::HEADERS,
        ) {
            if let Some(again) = doctor
                .send(
                    Method::GET,
                    paths::API_COMPANY,
                    &[("if-none-match", &etag)],
                    Bytes::new(),
                )
                .await
            {
                doctor.expect(
                    again.status == StatusCode::NOT_MODIFIED,
                    "If-None-Match with that ETag: 304",
                    "304",
                    again.status.to_string(),
                    fix::HEADERS,
                );
            }
        }
    }

    // Preflights, answered before any authentication. MCP refuses foreign origins (the
    // DNS-rebinding defence), so its preflight comes from the site's own.
    for (path, method, headers, from) in [
        (
            paths::API_COMPANY,
            "GET",
            "authorization",
            "https://agent.example",
        ),
        (
            paths::MCP,
            "POST",
            "content-type, mcp-protocol-version, authorization",
            base.as_str(),
        ),
    ] {
        let request = [
            ("origin", from),
            ("access-control-request-method", method),
            ("access-control-request-headers", headers),
        ];
        let Some(response) = doctor
            .send(Method::OPTIONS, path, &request, Bytes::new())
            .await
        else {
            continue;
        };
        let allowed = response
            .header("access-control-allow-headers")
            .to_ascii_lowercase();
        let ok = response.status.is_success()
            && response.header("access-control-allow-origin") == "*"
            && headers.split(", ").all(|header| allowed.contains(header));
        doctor.expect(
            ok,
            format!("CORS preflight: OPTIONS {path} for {method} with {headers}"),
            format!(
                "2xx, Access-Control-Allow-Origin: *, Access-Control-Allow-Headers with {headers}"
            ),
            format!(
                "{}, allow-origin {:?}, allow-headers {:?}",
                response.status,
                response.header("access-control-allow-origin"),
                allowed
            ),
            if path == paths::MCP {
                fix::PROXY
            } else {
                fix::HEADERS
            },
        );
    }

    // Compression of a large document.
    if let Some(response) = doctor
        .send(
            Method::GET,
            paths::OPENAPI,
            &[("accept-encoding", "br, gzip")],
            Bytes::new(),
        )
        .await
    {
        let encoding = response.header("content-encoding");
        if matches!(encoding.as_str(), "br" | "gzip") {
            doctor.pass(format!("compression: GET /openapi.json sent as {encoding}"));
        } else {
            doctor.warn(
                "compression: GET /openapi.json with Accept-Encoding: br, gzip",
                "Content-Encoding: br or gzip",
                if encoding.is_empty() {
                    "identity".to_string()
                } else {
                    encoding
                },
                "turn on compression at the host, or build with --precompress for `serve --from`",
            );
        }
    }

    // Nothing dynamic cached: health comes from the core at every request.
    if let Some(response) = doctor.get(paths::API_HEALTH).await {
        let hit = ["age", "x-cache", "cf-cache-status", "x-cache-status"]
            .iter()
            .map(|name| (name, response.header(name)))
            .find(|(name, value)| {
                !value.is_empty() && (**name == "age" || value.to_ascii_lowercase().contains("hit"))
            });
        doctor.expect(
            response.status == StatusCode::OK && hit.is_none(),
            "GET /api/health comes from the core, not a cache",
            "200 with no Age and no cache hit",
            match hit {
                Some((name, value)) => format!("{} {name}: {value}", response.status),
                None => response.status.to_string(),
            },
            if response.status == StatusCode::OK {
                fix::NO_CACHE
            } else {
                missing_fix(response.status, true)
            },
        );
    }

    // The computed reads: answered per request by the core, so they must reach it.
    for path in ["/api/search?q=company", "/ask?query=company"] {
        if let Some(response) = doctor.get(path).await {
            let ok = response.status == StatusCode::OK && response.json().is_some();
            doctor.expect(
                ok,
                format!("GET {path} reaches the core"),
                "200 with JSON",
                format!("{} {}", response.status, response.media_type()),
                missing_fix(response.status, true),
            );
        }
    }

    // The home page: discovery links and security headers.
    if let Some(home) = doctor.get(paths::INDEX).await {
        let link = home.header("link");
        doctor.expect(
            link.contains("rel=\"api-catalog\"") && link.contains("rel=\"service-desc\""),
            "Link header on /: api-catalog and service-desc",
            format!("<{base}{}>; rel=\"api-catalog\", …", paths::API_CATALOG),
            if link.is_empty() {
                "none".to_string()
            } else {
                link
            },
            fix::HEADERS,
        );
        for (name, wanted) in [
            ("x-content-type-options", "nosniff"),
            ("content-security-policy", "default-src"),
            ("referrer-policy", ""),
        ] {
            let value = home.header(name);
            if !value.is_empty() && value.contains(wanted) {
                doctor.pass(format!("security header on /: {name}"));
            } else {
                doctor.warn(
                    format!("security header on /: {name}"),
                    if wanted.is_empty() {
                        "present".to_string()
                    } else {
                        wanted.to_string()
                    },
                    if value.is_empty() {
                        "none".to_string()
                    } else {
                        value
                    },
                    fix::HEADERS,
                );
            }
        }
    }
    if let Some(twin) = doctor.get(paths::INDEX_MD).await {
        doctor.expect(
            twin.status == StatusCode::OK && twin.media_type() == "text/markdown",
            "GET /index.md: text/markdown",
            "200 text/markdown",
            format!("{} {}", twin.status, twin.header("content-type")),
            fix::CONTENT_TYPE,
        );
    }
}
