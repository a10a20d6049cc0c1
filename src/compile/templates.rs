//! Templates: built-in defaults, each overridable by a file of the same name in the templates
//! directory (`templates/` by default), so a company can restyle its pages and reword
//! `auth.md` without touching code. Read on every compile, so template edits hot-reload too.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use minijinja::Environment;
use sha2::{Digest, Sha256};

use super::artifact::exact_written;
use super::CompileError;
use crate::content::read_regular_file;

/// Every template, with its built-in text.
pub const DEFAULTS: [(&str, &str); 8] = [
    ("auth.md", include_str!("../../templates/auth.md")),
    ("base.html", include_str!("../../templates/base.html")),
    ("contact.html", include_str!("../../templates/contact.html")),
    ("index.html", include_str!("../../templates/index.html")),
    (
        "division.html",
        include_str!("../../templates/division.html"),
    ),
    ("page.html", include_str!("../../templates/page.html")),
    ("docs.html", include_str!("../../templates/docs.html")),
    ("style.css", include_str!("../../templates/style.css")),
];

/// The loaded templates, ready to render.
pub struct Templates {
    environment: Environment<'static>,
    /// Where overrides are read from, to name the file of a template error.
    dir: Option<PathBuf>,
    /// SHA-256 over every template's name and text: equal digests, equal output.
    digest: [u8; 32],
}

/// A template error located in its file: `templates/division.html:2: syntax error: …`.
fn template_error(dir: Option<&Path>, name: &str, error: &minijinja::Error) -> CompileError {
    let text = error.to_string();
    // minijinja ends its message with " (in NAME:LINE)"; the location is given separately.
    let reason = match text.rfind(" (in ") {
        Some(cut) => text[..cut].to_string(),
        None => text.clone(),
    };
    let template = error.name().unwrap_or(name);
    let file = match dir {
        Some(dir) => dir.join(template),
        None => PathBuf::from("built-in templates").join(template),
    };
    CompileError {
        document: "templates",
        reason,
        template: Some((file, error.line().unwrap_or(1))),
    }
}

/// `text` escaped for HTML.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// `{{ email | breakable }}`: escaped, with a line-break opportunity (`<wbr>`) before `@`
/// and after `.`, `/` and `-`, so a long address or URL wraps between its parts on a phone
/// instead of in the middle of a word.
fn breakable(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c == '@' {
            out.push_str("<wbr>");
        }
        out.push_str(&escape_html(c.encode_utf8(&mut [0; 4])));
        if matches!(c, '.' | '/' | '-') {
            out.push_str("<wbr>");
        }
    }
    out
}

/// `{{ text | linkify }}`: escaped, with every `http://` or `https://` address made a link
/// (a trailing `.`, `,` or `)` ends the sentence, not the address).
fn linkify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = ["https://", "http://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        out.push_str(&escape_html(&rest[..start]));
        let tail = &rest[start..];
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let url = tail[..end].trim_end_matches(['.', ',', ')', ';', ':']);
        let url = escape_html(url);
        out.push_str(&format!("<a href=\"{url}\">{url}</a>"));
        rest = &tail[tail[..end]
            .trim_end_matches(['.', ',', ')', ';', ':'])
            .len()..];
    }
    out.push_str(&escape_html(rest));
    out
}

/// The `place` filter. Every page's footer shows the headquarters' place, the same address
/// each time: the last one seen on this thread is kept, so it is read out of the template
/// value once rather than once per page.
fn place(value: minijinja::Value) -> Result<String, minijinja::Error> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(minijinja::Value, String)>> =
            const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| {
        if let Some((seen, place)) = last.as_ref() {
            if *seen == value {
                return Ok(place.clone());
            }
        }
        let address = <minijinja::value::ViaDeserialize<crate::content::model::Address> as minijinja::value::ArgType>::from_value(Some(&value))?;
        let place = address.0.place();
        *last = Some((value, place.clone()));
        Ok(place)
    })
}

/// The `safe` filter: as minijinja's own, except that text already marked safe is passed
/// on instead of copied twice (every page's body goes through `body_html | safe`).
fn safe(value: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    if value.is_safe() {
        return Ok(value);
    }
    let text = <String as minijinja::value::ArgType>::from_value(Some(&value))?;
    Ok(minijinja::Value::from_safe_string(text))
}

impl Templates {
    /// The defaults, with any file in `dir` taking the place of its namesake.
    pub fn load(dir: Option<&Path>) -> Result<Templates, CompileError> {
        let mut environment = Environment::new();
        environment.set_keep_trailing_newline(true);
        // `{{ address | address_lines | join(", ") }}`: the address in its country's order.
        environment.add_filter(
            "address_lines",
            |address: minijinja::value::ViaDeserialize<crate::content::model::Address>| {
                address.0.lines()
            },
        );
        // `{{ headquarters | place }}`: locality, region and country, as a fact line.
        environment.add_filter("place", place);
        environment.add_filter("safe", safe);
        environment.add_filter("breakable", |text: &str| {
            minijinja::Value::from_safe_string(breakable(text))
        });
        environment.add_filter("linkify", |text: &str| {
            minijinja::Value::from_safe_string(linkify(text))
        });
        // HTML templates escape what they print; Markdown and CSS are written as is.
        environment.set_auto_escape_callback(|name| {
            if name.ends_with(".html") {
                minijinja::AutoEscape::Html
            } else {
                minijinja::AutoEscape::None
            }
        });
        // The same reading rules as content: regular files inside the directory only.
        let root = dir.and_then(|dir| std::fs::canonicalize(dir).ok());
        let mut digest = Sha256::new();
        for (name, default) in DEFAULTS {
            let text = match (&root, dir.map(|dir| dir.join(name))) {
                (Some(root), Some(path)) if path.symlink_metadata().is_ok() => {
                    let bytes = read_regular_file(root, &path).map_err(|e| {
                        CompileError::new("templates", format!("{}: {e}", path.display()))
                    })?;
                    String::from_utf8(bytes).map_err(|_| {
                        CompileError::new(
                            "templates",
                            format!("{}: not valid UTF-8", path.display()),
                        )
                    })?
                }
                _ => default.to_string(),
            };
            for part in [name.as_bytes(), &[0], text.as_bytes(), &[0]] {
                digest.update(part);
            }
            environment
                .add_template_owned(name, text)
                .map_err(|e| template_error(dir, name, &e))?;
        }
        Ok(Templates {
            environment,
            dir: dir.map(Path::to_path_buf),
            digest: digest.finalize().into(),
        })
    }

    /// A digest of every template's text.
    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    pub fn render(
        &self,
        name: &'static str,
        context: minijinja::Value,
    ) -> Result<String, CompileError> {
        self.template(name)?
            .render(context)
            .map_err(|e| template_error(self.dir.as_deref(), name, &e))
    }

    /// [`Templates::render`] as a response body: exactly sized `Bytes` ([`exact_written`]).
    pub fn render_body(
        &self,
        name: &'static str,
        context: minijinja::Value,
    ) -> Result<Bytes, CompileError> {
        let template = self.template(name)?;
        exact_written(|out| {
            template
                .render_captured_to(context, out)
                .map(drop)
                .map_err(|e| template_error(self.dir.as_deref(), name, &e))
        })
    }

    fn template(&self, name: &'static str) -> Result<minijinja::Template<'_, '_>, CompileError> {
        self.environment
            .get_template(name)
            .map_err(|e| template_error(self.dir.as_deref(), name, &e))
    }
}

#[cfg(test)]
mod filter_tests {
    use super::{breakable, linkify};

    #[test]
    fn long_addresses_break_between_their_parts() {
        assert_eq!(
            breakable("press-office@x.example"),
            "press-<wbr>office<wbr>@x.<wbr>example"
        );
        assert_eq!(breakable("<a&b>"), "&lt;a&amp;b&gt;");
    }

    #[test]
    fn addresses_in_text_become_links_and_the_rest_stays_escaped() {
        assert_eq!(
            linkify("see https://x.example/auth.md. Or <b>"),
            "see <a href=\"https://x.example/auth.md\">https://x.example/auth.md</a>. Or &lt;b&gt;"
        );
        assert_eq!(linkify("no links"), "no links");
        assert_eq!(
            linkify("(http://a.example/x) and https://b.example"),
            "(<a href=\"http://a.example/x\">http://a.example/x</a>) and <a href=\"https://b.example\">https://b.example</a>"
        );
    }
}

#[cfg(test)]
mod template_filter_tests {
    use minijinja::{context, Environment, Value};

    fn environment() -> Environment<'static> {
        let mut environment = Environment::new();
        environment.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        environment.add_filter("place", super::place);
        environment.add_filter("safe", super::safe);
        environment
    }

    fn address(locality: &str, country: &str) -> Value {
        Value::from_serialize(serde_json::json!({
            "street": "1 Main St", "locality": locality, "postal_code": "1",
            "country": country,
        }))
    }

    /// The filter keeps the last address it read: another address must not get its place.
    #[test]
    fn place_follows_the_address_it_is_given() {
        let environment = environment();
        let render = |value: Value| {
            environment
                .render_str("{{ a | place }}", context! { a => value })
                .unwrap()
        };
        let boulder = render(address("Boulder", "US"));
        assert!(boulder.starts_with("Boulder, "), "{boulder}");
        assert_eq!(render(address("Boulder", "US")), boulder);
        let bremen = render(address("Bremen", "DE"));
        assert!(bremen.starts_with("Bremen, "), "{bremen}");
        assert_eq!(render(address("Boulder", "US")), boulder);
    }

    /// `safe` marks text as safe whether or not it already was; without it, text is escaped.
    #[test]
    fn safe_passes_markup_through_and_other_text_is_escaped() {
        let environment = environment();
        let render = |template: &str, value: Value| {
            environment
                .render_str(template, context! { x => value })
                .unwrap()
        };
        let plain = Value::from("<b>x</b>");
        let marked = Value::from_safe_string("<b>x</b>".into());
        assert_eq!(render("{{ x | safe }}", plain.clone()), "<b>x</b>");
        assert_eq!(render("{{ x | safe }}", marked), "<b>x</b>");
        assert_eq!(render("{{ x }}", plain), "&lt;b&gt;x&lt;&#x2f;b&gt;");
        assert_eq!(render("{{ 3 | safe }}", Value::UNDEFINED), "3");
    }
}
