//! Templates: built-in defaults, each overridable by a file of the same name in the templates
//! directory (`templates/` by default), so a company can restyle its pages and reword
//! `auth.md` without touching code. Read on every compile, so template edits hot-reload too.

use std::path::{Path, PathBuf};

use minijinja::Environment;

use super::CompileError;
use crate::content::read_regular_file;

/// Every template, with its built-in text.
const DEFAULTS: [(&str, &str); 8] = [
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
            environment
                .add_template_owned(name, text)
                .map_err(|e| template_error(dir, name, &e))?;
        }
        Ok(Templates {
            environment,
            dir: dir.map(Path::to_path_buf),
        })
    }

    pub fn render(
        &self,
        name: &'static str,
        context: minijinja::Value,
    ) -> Result<String, CompileError> {
        self.environment
            .get_template(name)
            .and_then(|template| template.render(context))
            .map_err(|e| template_error(self.dir.as_deref(), name, &e))
    }
}
