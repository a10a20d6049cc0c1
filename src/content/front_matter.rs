//! Splits a Markdown page into its TOML front matter and its body, and nothing else.

/// A page split at its `+++` fences.
#[derive(Debug, PartialEq)]
pub(super) struct Split<'a> {
    pub front_matter: &'a str,
    /// File line of the first front matter line.
    pub front_matter_line: usize,
    pub body: &'a str,
    /// File line where the body starts.
    pub body_line: usize,
}

#[derive(Debug, PartialEq)]
pub(super) struct SplitError {
    pub line: usize,
    pub message: &'static str,
}

const FENCE: &str = "+++";

pub(super) fn split(text: &str) -> Result<Split<'_>, SplitError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end() != FENCE {
        return Err(SplitError {
            line: 1,
            message: "missing front matter: start the page with a `+++` line, then TOML fields such as `title = \"...\"`, then another `+++` line",
        });
    }
    let start = first.len();
    let mut offset = start;
    for (line_number, line) in (2..).zip(lines) {
        if line.trim_end() == FENCE {
            return Ok(Split {
                front_matter: &text[start..offset],
                front_matter_line: 2,
                body: &text[offset + line.len()..],
                body_line: line_number + 1,
            });
        }
        offset += line.len();
    }
    Err(SplitError {
        line: 1,
        message: "unclosed front matter: no closing `+++` line was found",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_front_matter_from_body() {
        let split = split("+++\ntitle = \"A\"\n+++\n\n# Body\n").unwrap();
        assert_eq!(split.front_matter, "title = \"A\"\n");
        assert_eq!(split.body, "\n# Body\n");
        assert_eq!(split.body_line, 4);
    }

    #[test]
    fn crlf_and_bom_are_accepted() {
        let split = split("\u{feff}+++\r\ntitle = \"A\"\r\n+++\r\nBody").unwrap();
        assert_eq!(split.front_matter, "title = \"A\"\r\n");
        assert_eq!(split.body, "Body");
    }

    #[test]
    fn missing_or_unclosed_fences_are_errors() {
        assert_eq!(split("# Just markdown").unwrap_err().line, 1);
        assert!(split("+++\ntitle = \"A\"\n")
            .unwrap_err()
            .message
            .contains("unclosed"));
        assert!(split("").is_err());
    }
}
