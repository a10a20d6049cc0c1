//! A page's Markdown text, which can move off the heap once it is read.
//!
//! At 100,000 pages the Markdown authors wrote is the largest thing the site model holds,
//! about 130 MB (heaptrack), and after the first compile it is read only now and then: a
//! search result's snippet, an MCP `resources/read`, the link check of an edited page. The
//! server therefore moves it where it keeps finished bodies ([`crate::spool`], files the
//! kernel pages in and out). Pages are shared between versions (`Arc`), so the move happens
//! in place, behind a lock held only to clone a `Bytes` handle or swap one;
//! [`crate::spool::Spool::take_texts`] does the moving.

use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

/// The text of one page: UTF-8, on the heap or in the spool, the same bytes either way.
pub struct PageText(Mutex<Bytes>);

impl PageText {
    fn lock(&self) -> MutexGuard<'_, Bytes> {
        // A clone of `Bytes` cannot panic, so a poisoned lock still holds good bytes.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The text, to read: a handle on the bytes, not a copy.
    pub fn get(&self) -> Text {
        Text(self.bytes())
    }

    /// The text's bytes, wherever they are.
    pub fn bytes(&self) -> Bytes {
        self.lock().clone()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the text in `elsewhere` from now on: the same bytes, held elsewhere (the
    /// spool). Bytes of another length are refused, so what was read stays what is served.
    pub fn move_to(&self, elsewhere: Bytes) {
        let mut bytes = self.lock();
        debug_assert_eq!(elsewhere, *bytes);
        if elsewhere.len() == bytes.len() {
            *bytes = elsewhere;
        }
    }
}

impl From<String> for PageText {
    fn from(text: String) -> PageText {
        PageText(Mutex::new(Bytes::from(
            text.into_bytes().into_boxed_slice(),
        )))
    }
}

impl From<&str> for PageText {
    fn from(text: &str) -> PageText {
        PageText::from(text.to_string())
    }
}

impl Clone for PageText {
    fn clone(&self) -> PageText {
        PageText(Mutex::new(self.bytes()))
    }
}

impl PartialEq for PageText {
    fn eq(&self, other: &PageText) -> bool {
        *self.get() == *other.get()
    }
}

impl std::fmt::Debug for PageText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.get(), f)
    }
}

impl serde::Serialize for PageText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.get())
    }
}

impl<'de> serde::Deserialize<'de> for PageText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<PageText, D::Error> {
        String::deserialize(deserializer).map(PageText::from)
    }
}

impl schemars::JsonSchema for PageText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// A page's text, read: dereferences to `str`.
#[derive(Clone)]
pub struct Text(Bytes);

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        // Made only from a `String`'s bytes, and replaced only by the same bytes (`move_to`), so
        // this never fails; checked anyway (a fast pass) so that no `unsafe` rests on it.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_moves_and_reads_the_same() {
        let text = PageText::from("# Hello\n\nworld");
        let elsewhere = Bytes::from_static(b"# Hello\n\nworld");
        assert_ne!(text.get().as_ptr(), elsewhere.as_ptr());
        text.move_to(elsewhere.clone());
        assert_eq!(text.get().as_ptr(), elsewhere.as_ptr());
        assert_eq!(text, PageText::from("# Hello\n\nworld"));
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            r##""# Hello\n\nworld""##
        );
    }
}
