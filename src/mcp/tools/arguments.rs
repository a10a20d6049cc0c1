//! Tool arguments: the value types they are made of ([`Text`], [`Limit`]) and the one rule
//! for reading them ([`parse`]), so every tool refuses a bad argument the same way, in words
//! a model can act on.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A non-empty text argument of at most `MAX` characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text<const MAX: usize>(String);

/// The longest id, slug or cursor argument: far beyond any real one (ids are short words,
/// cursors a few dozen characters), and small enough that a call that quotes it back in an
/// error costs nothing.
pub(crate) const MAX_ID_CHARS: usize = 1000;

/// An id, slug or cursor argument: non-empty text (unknown ids are answered with the known
/// ones).
pub(crate) type Id = Text<MAX_ID_CHARS>;

impl<const MAX: usize> Text<MAX> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) if text.trim().is_empty() => {
                Err(D::Error::custom("must not be empty"))
            }
            Value::String(text) if MAX < usize::MAX && text.chars().count() > MAX => {
                Err(D::Error::custom(format!("is longer than {MAX} characters")))
            }
            Value::String(text) => Ok(Text(text)),
            _ => Err(D::Error::custom("must be a string")),
        }
    }
}

impl<const MAX: usize> JsonSchema for Text<MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = json_schema!({"type": "string", "minLength": 1});
        if MAX < usize::MAX {
            schema.insert("maxLength".into(), MAX.into());
        }
        schema
    }
}

/// How many items to return: from 1 to `MAX`, `DEFAULT` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit<const DEFAULT: usize, const MAX: usize>(usize);

impl<const DEFAULT: usize, const MAX: usize> Limit<DEFAULT, MAX> {
    pub(crate) fn get(self) -> usize {
        self.0
    }
}

impl<const DEFAULT: usize, const MAX: usize> Default for Limit<DEFAULT, MAX> {
    fn default() -> Self {
        Limit(DEFAULT)
    }
}

impl<'de, const DEFAULT: usize, const MAX: usize> Deserialize<'de> for Limit<DEFAULT, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)?.as_u64() {
            Some(n) if (1..=MAX as u64).contains(&n) => Ok(Limit(n as usize)),
            _ => Err(D::Error::custom(format!(
                "must be an integer from 1 to {MAX}"
            ))),
        }
    }
}

impl<const DEFAULT: usize, const MAX: usize> JsonSchema for Limit<DEFAULT, MAX> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "integer",
            "minimum": 1,
            "maximum": MAX,
            "default": DEFAULT,
            "description": "How many to return at most."
        })
    }
}

/// The arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArguments {}

/// `map` as `T`, or a message naming what is wrong: an unknown or missing argument (by
/// `schema`, the input schema derived from `T`), or a value of the wrong kind.
pub(crate) fn parse<T: DeserializeOwned>(
    schema: &Value,
    map: &Map<String, Value>,
) -> Result<T, String> {
    let names = |key: &str| -> Vec<&str> {
        match schema.get(key) {
            Some(Value::Object(properties)) => properties.keys().map(String::as_str).collect(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    };
    let allowed = names("properties");
    if let Some(unknown) = map.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(if allowed.is_empty() {
            format!("unknown argument `{unknown}`: this tool takes no arguments")
        } else {
            format!(
                "unknown argument `{unknown}`; this tool takes: {}",
                allowed.join(", ")
            )
        });
    }
    if let Some(missing) = names("required")
        .into_iter()
        .find(|name| !map.contains_key(*name))
    {
        return Err(format!("missing required argument `{missing}`"));
    }
    serde_path_to_error::deserialize(Value::Object(map.clone()))
        .map_err(|error| format!("argument `{}` {}", error.path(), error.inner()))
}
