//! Content errors: every problem found in `content/`, located by file, line and field.
//!
//! The loader never stops at the first problem. It collects all of them so that one
//! `dossier build` run shows the author everything to fix, each as `file:line: field: message`.

use std::fmt;
use std::path::PathBuf;

/// One problem in one content file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ContentError {
    /// The file, relative to the content directory where possible.
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem concerns the file as a whole (e.g. unreadable).
    pub line: usize,
    /// Dotted path of the field (`contact.email`, `links[2].url`), or `-` when no field applies.
    pub field: String,
    pub message: String,
}

/// The line of a problem that concerns a whole file (unreadable, missing, too large).
pub(super) const NO_LINE: usize = 0;
/// The field of a problem no field names (a syntax error, a whole file).
pub(super) const NO_FIELD: &str = "-";

impl ContentError {
    /// A problem at `line` of `file`, in `field` (a dotted path such as `contact.email`).
    pub fn at(
        file: impl Into<PathBuf>,
        line: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ContentError {
        ContentError {
            file: file.into(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    /// A problem at `line` that no field names, such as a syntax error.
    pub fn at_line(
        file: impl Into<PathBuf>,
        line: usize,
        message: impl Into<String>,
    ) -> ContentError {
        ContentError::at(file, line, NO_FIELD, message)
    }

    /// A problem with `file` (or a directory) as a whole.
    pub fn whole_file(file: impl Into<PathBuf>, message: impl Into<String>) -> ContentError {
        ContentError::at(file, NO_LINE, NO_FIELD, message)
    }
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.field,
            self.message
        )
    }
}

/// Every problem found in one content tree, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentErrors(pub Vec<ContentError>);

impl ContentErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, error: ContentError) {
        self.0.push(error);
    }

    pub fn iter(&self) -> impl Iterator<Item = &ContentError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for ContentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ContentErrors {}
