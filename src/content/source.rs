//! Where a field lives in its file: maps dotted field paths to line numbers.
//!
//! serde reports *what* is wrong with a field; authors also need to know *where*. A content
//! file is small, so each one is scanned once into a table of `field path -> line`, and a
//! problem found later (a bad email, a broken reference) is reported at the line of its field,
//! or of the nearest enclosing field when the field itself is missing.

use std::collections::HashMap;

/// Line numbers of the fields in one file, keyed by path (`contact.email`, `links[1].url`).
#[derive(Debug, Default)]
pub(super) struct FieldLines {
    lines: HashMap<String, usize>,
    /// Line to report for problems that have no better place (the start of the data).
    first_line: usize,
}

impl FieldLines {
    /// The line of `path`, or of its closest recorded ancestor.
    pub(super) fn line_of(&self, path: &str) -> usize {
        let mut candidate = path;
        loop {
            if let Some(line) = self.lines.get(candidate) {
                return *line;
            }
            match candidate.rfind(['.', '[']) {
                Some(cut) => candidate = &candidate[..cut],
                None => return self.first_line,
            }
        }
    }

    /// Scans a JSON document. The text is expected to have parsed already; on malformed input
    /// the table is simply incomplete, never a panic.
    pub(super) fn from_json(text: &str) -> Self {
        let mut scanner = JsonScanner {
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
            lines: HashMap::new(),
            depth: 0,
        };
        scanner.skip_whitespace();
        let first_line = scanner.line;
        scanner.value(String::new());
        FieldLines {
            lines: scanner.lines,
            first_line,
        }
    }

    /// Scans TOML front matter whose first line is line `first_line` of the file. Records
    /// `[table]` headers and `key = value` lines, which is what front matter uses.
    pub(super) fn from_toml(text: &str, first_line: usize) -> Self {
        let mut lines = HashMap::new();
        let mut table = String::new();
        for (index, raw) in text.lines().enumerate() {
            let line_number = first_line + index;
            let line = raw.trim();
            if let Some(header) = line.strip_prefix('[') {
                let name = header.trim_start_matches('[');
                if let Some(end) = name.find(']') {
                    table = name[..end].trim().to_string();
                    lines.entry(table.clone()).or_insert(line_number);
                }
                continue;
            }
            if let Some((key, _)) = line.split_once('=') {
                let key = key.trim().trim_matches('"').trim_matches('\'');
                if key.is_empty() || key.starts_with('#') {
                    continue;
                }
                let path = if table.is_empty() {
                    key.to_string()
                } else {
                    format!("{table}.{key}")
                };
                lines.entry(path).or_insert(line_number);
            }
        }
        FieldLines { lines, first_line }
    }
}

struct JsonScanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    lines: HashMap<String, usize>,
    depth: usize,
}

/// serde_json refuses documents nested deeper than 128; stop scanning where it would.
const MAX_DEPTH: usize = 128;

impl JsonScanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
        }
        self.pos += 1;
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }

    fn value(&mut self, path: String) {
        self.skip_whitespace();
        if !path.is_empty() {
            self.lines.entry(path.clone()).or_insert(self.line);
        }
        match self.peek() {
            Some(b'{') => self.object(path),
            Some(b'[') => self.array(path),
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while let Some(byte) = self.peek() {
                    if matches!(byte, b',' | b'}' | b']') || byte.is_ascii_whitespace() {
                        break;
                    }
                    self.bump();
                }
            }
            None => {}
        }
    }

    fn object(&mut self, path: String) {
        self.depth += 1;
        self.bump(); // '{'
        while self.depth <= MAX_DEPTH {
            self.skip_whitespace();
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    break;
                }
                Some(b',') => self.bump(),
                Some(b'"') => {
                    let key_line = self.line;
                    let key = self.string();
                    let child = if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    };
                    self.lines.entry(child.clone()).or_insert(key_line);
                    self.skip_whitespace();
                    if self.peek() == Some(b':') {
                        self.bump();
                    }
                    self.value(child);
                }
                _ => break,
            }
        }
        self.depth -= 1;
    }

    fn array(&mut self, path: String) {
        self.depth += 1;
        self.bump(); // '['
        let mut index = 0;
        while self.depth <= MAX_DEPTH {
            self.skip_whitespace();
            match self.peek() {
                Some(b']') => {
                    self.bump();
                    break;
                }
                Some(b',') => self.bump(),
                Some(_) => {
                    let before = self.pos;
                    self.value(format!("{path}[{index}]"));
                    index += 1;
                    if self.pos == before {
                        break;
                    }
                }
                None => break,
            }
        }
        self.depth -= 1;
    }

    /// Reads a string literal and returns its raw contents (escapes are kept as written,
    /// which is fine for the plain keys content uses).
    fn string(&mut self) -> String {
        self.bump(); // opening quote
        let start = self.pos;
        while let Some(byte) = self.peek() {
            match byte {
                b'\\' => {
                    self.bump();
                    self.bump();
                }
                b'"' => break,
                _ => self.bump(),
            }
        }
        let text = String::from_utf8_lossy(&self.bytes[start..self.pos.min(self.bytes.len())])
            .into_owned();
        self.bump(); // closing quote
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_map_to_their_lines() {
        let text = "{\n  \"name\": \"A\",\n  \"contact\": {\n    \"email\": \"x\"\n  },\n  \"links\": [\n    {\"url\": \"u\"},\n    {\"url\": \"v\"}\n  ]\n}\n";
        let lines = FieldLines::from_json(text);
        assert_eq!(lines.line_of("name"), 2);
        assert_eq!(lines.line_of("contact"), 3);
        assert_eq!(lines.line_of("contact.email"), 4);
        assert_eq!(
            lines.line_of("contact.phone"),
            3,
            "missing field falls back to parent"
        );
        assert_eq!(lines.line_of("links[1].url"), 8);
        assert_eq!(lines.line_of("nothing"), 1);
    }

    #[test]
    fn json_strings_with_braces_and_escapes_do_not_confuse_the_scanner() {
        let text = "{\"a\": \"}{\\\"[\",\n\"b\": 1}";
        let lines = FieldLines::from_json(text);
        assert_eq!(lines.line_of("b"), 2);
    }

    #[test]
    fn deeply_nested_json_does_not_overflow() {
        let text = "[".repeat(100_000);
        let lines = FieldLines::from_json(&text);
        assert_eq!(lines.line_of("x"), 1);
    }

    #[test]
    fn toml_tables_and_keys_map_to_file_lines() {
        let text = "title = \"T\"\nslug = \"s\"\n\n[contact]\nemail = \"e\"\n";
        let lines = FieldLines::from_toml(text, 2);
        assert_eq!(lines.line_of("title"), 2);
        assert_eq!(lines.line_of("contact"), 5);
        assert_eq!(lines.line_of("contact.email"), 6);
        assert_eq!(lines.line_of("contact.phone"), 5);
    }
}
