//! JSON Schemas derived from the Rust types that produce the bytes.
//!
//! Every body this service publishes a schema for (the site model, the read API's documents,
//! health, registration, token and error answers, the MCP tools' arguments and results) is a
//! serde type with `#[derive(JsonSchema)]`. The OpenAPI components and the MCP tools' input
//! and output schemas are generated from those types here, so a field added to a struct is
//! in its schema at once, and a unit test that validates real responses against these
//! schemas fails in `cargo test` when the two ever disagree.
//!
//! Schemas describe what is *sent* (the serialize contract): an optional field that is
//! skipped when empty is simply not required, never `null`.

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// Where the named definitions of a set of schemas live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Definitions {
    /// `#/components/schemas/<Name>`, for an OpenAPI document.
    OpenApi,
    /// `#/$defs/<Name>`, for a standalone schema such as an MCP tool's.
    Standalone,
}

fn settings(definitions: Definitions, contract: Contract) -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| {
        settings.definitions_path = match definitions {
            Definitions::OpenApi => "/components/schemas".into(),
            Definitions::Standalone => "/$defs".into(),
        };
        settings.meta_schema = None;
        settings.contract = contract;
        settings.transforms = vec![Box::new(NotNullable), Box::new(StandardOnly)];
    })
}

/// A set of schemas whose named parts are shared as definitions.
pub(crate) struct Schemas {
    generator: SchemaGenerator,
}

impl Schemas {
    pub(crate) fn new(definitions: Definitions) -> Schemas {
        Schemas {
            generator: settings(definitions, Contract::Serialize).into_generator(),
        }
    }

    /// The schema of `T`: a `$ref` to its definition for a named struct or enum (added to
    /// the definitions), the schema itself for a primitive.
    pub(crate) fn schema_for<T: JsonSchema + ?Sized>(&mut self) -> Value {
        let mut schema = self.generator.subschema_for::<T>();
        NotNullable.transform(&mut schema);
        StandardOnly.transform(&mut schema);
        schema.to_value()
    }

    /// Every named definition used so far, by name.
    pub(crate) fn into_definitions(mut self) -> Map<String, Value> {
        self.generator.take_definitions(true)
    }
}

/// The standalone schema of what `T` serializes to, with the definitions it uses under
/// `$defs`, without a `$schema` or `title` (MCP tool schemas are plain objects).
pub(crate) fn standalone<T: JsonSchema + ?Sized>() -> Value {
    root::<T>(Contract::Serialize)
}

/// The standalone schema of what `T` accepts when deserialized: arguments and requests.
pub(crate) fn accepted<T: JsonSchema + ?Sized>() -> Value {
    root::<T>(Contract::Deserialize)
}

fn root<T: JsonSchema + ?Sized>(contract: Contract) -> Value {
    let mut value = settings(Definitions::Standalone, contract)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(object) = value.as_object_mut() {
        object.remove("title");
    }
    value
}

/// The name `T` is defined under, for a `$ref` written by hand.
pub(crate) fn name_of<T: JsonSchema + ?Sized>() -> String {
    T::schema_name().into_owned()
}

/// Drops the `null` that schemars adds for `Option<T>`: every optional field is skipped when
/// `None` (`skip_serializing_if`), so `null` is never sent.
#[derive(Debug, Clone)]
struct NotNullable;

impl Transform for NotNullable {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(Value::Array(types)) = schema.get_mut("type") {
            types.retain(|kind| kind != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                schema.insert("type".into(), only);
            }
        }
        let null = |variant: &Value| variant.get("type").is_some_and(|kind| kind == "null");
        if let Some(Value::Array(variants)) = schema.get("anyOf") {
            if variants.len() == 2 && variants.iter().any(null) {
                let kept = variants.iter().find(|variant| !null(variant)).cloned();
                if let Some(Value::Object(kept)) = kept {
                    schema.remove("anyOf");
                    for (key, value) in kept {
                        schema.insert(key, value);
                    }
                }
            }
        }
        transform_subschemas(self, schema);
    }
}

/// The formats JSON Schema 2020-12 defines; a client may refuse or warn about any other.
pub(crate) const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keeps to what every JSON Schema client understands. schemars writes Rust's integer
/// widths as formats (`uint32`, `int64`, …) that are not JSON Schema's, which clients log
/// as unknown on every call: they become the `minimum` and `maximum` they mean. And an enum
/// of unit variants comes out as a `oneOf` of `const`s, which some generated clients cannot
/// read: it becomes a plain `enum`.
#[derive(Debug, Clone)]
struct StandardOnly;

impl Transform for StandardOnly {
    fn transform(&mut self, schema: &mut Schema) {
        let format = schema
            .get("format")
            .and_then(Value::as_str)
            .map(String::from);
        if let Some(format) = format.filter(|f| !STANDARD_FORMATS.contains(&f.as_str())) {
            schema.remove("format");
            let range: Option<(i128, i128)> = match format.as_str() {
                "uint8" => Some((0, u8::MAX.into())),
                "uint16" => Some((0, u16::MAX.into())),
                "uint32" => Some((0, u32::MAX.into())),
                "uint64" | "uint" => Some((0, i128::MAX)),
                "int8" => Some((i8::MIN.into(), i8::MAX.into())),
                "int16" => Some((i16::MIN.into(), i16::MAX.into())),
                "int32" => Some((i32::MIN.into(), i32::MAX.into())),
                _ => None,
            };
            if let Some((low, high)) = range {
                if schema.get("minimum").is_none() {
                    schema.insert("minimum".into(), (low as i64).into());
                }
                // A bound beyond what a JSON number holds exactly says nothing useful.
                if schema.get("maximum").is_none() && high <= i64::MAX as i128 {
                    schema.insert("maximum".into(), (high as i64).into());
                }
            }
        }
        let constants: Option<Vec<Value>> = match schema.get("oneOf") {
            Some(Value::Array(variants)) if !variants.is_empty() => variants
                .iter()
                .map(|variant| variant.get("const").cloned())
                .collect(),
            _ => None,
        };
        if let Some(constants) = constants {
            let all_strings = constants.iter().all(Value::is_string);
            schema.remove("oneOf");
            if all_strings {
                schema.insert("type".into(), "string".into());
            }
            schema.insert("enum".into(), Value::Array(constants));
        }
        transform_subschemas(self, schema);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{Company, Page};

    /// Every `format` in `schema` is a standard one, and no `oneOf` is a list of constants.
    pub(super) fn assert_standard(what: &str, schema: &Value) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(format)) = map.get("format") {
                    assert!(
                        STANDARD_FORMATS.contains(&format.as_str()),
                        "{what}: format {format}"
                    );
                }
                if let Some(Value::Array(variants)) = map.get("oneOf") {
                    assert!(
                        !variants.iter().all(|v| v.get("const").is_some()),
                        "{what}: a oneOf of constants"
                    );
                }
                map.values().for_each(|value| assert_standard(what, value));
            }
            Value::Array(items) => items.iter().for_each(|item| assert_standard(what, item)),
            _ => {}
        }
    }

    #[test]
    fn integer_widths_become_ranges_and_unit_enums_plain_enums() {
        let mut schemas = Schemas::new(Definitions::OpenApi);
        schemas.schema_for::<Company>();
        let definitions = schemas.into_definitions();
        let all = Value::Object(definitions.clone());
        assert_standard("Company", &all);
        let scheme = &definitions["IndustryScheme"];
        assert_eq!(scheme["type"], "string", "{scheme}");
        assert!(
            scheme["enum"].as_array().is_some_and(|e| e.len() > 1),
            "{scheme}"
        );
        let text = all.to_string();
        assert!(!text.contains("uint"), "{text}");
    }

    #[test]
    fn optional_fields_are_not_required_and_never_null() {
        let schema = standalone::<Page>();
        let text = schema.to_string();
        assert!(!text.contains("null"), "{text}");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"slug") && !required.contains(&"division"));
        assert_eq!(
            schema["properties"]["slug"]["pattern"],
            crate::content::rules::ID_PATTERN
        );
    }

    #[test]
    fn named_types_become_shared_definitions() {
        let mut schemas = Schemas::new(Definitions::OpenApi);
        let company = schemas.schema_for::<Company>();
        assert_eq!(company["$ref"], "#/components/schemas/Company");
        let definitions = schemas.into_definitions();
        assert!(definitions.contains_key("Company"));
        assert!(definitions.contains_key("Address"));
        assert_eq!(
            definitions["Company"]["properties"]["headquarters"]["$ref"],
            "#/components/schemas/Address"
        );
        assert_eq!(definitions["Company"]["additionalProperties"], false);
    }
}

#[cfg(test)]
mod contract;

/// The schemas content is written against, as `dossier schema` writes them: each file's
/// name and its schema. They are derived in deserialize mode from the same types that read
/// the content, so what an editor accepts is what `dossier check` accepts (a few rules,
/// such as the LEI check digits or that a page's division exists, only dossier can check).
pub(crate) fn content_schemas() -> Vec<(&'static str, Value)> {
    use crate::content::{Company, Division, PageFrontMatter};
    let described = |mut schema: Value, title: &str, description: &str| {
        if let Some(object) = schema.as_object_mut() {
            object.insert(
                "$schema".into(),
                "https://json-schema.org/draft/2020-12/schema".into(),
            );
            object.insert("title".into(), title.into());
            object.insert("description".into(), description.into());
        }
        schema
    };
    vec![
        (
            "company.schema.json",
            described(
                accepted::<Company>(),
                "dossier company.json",
                "content/company.json: the company itself.",
            ),
        ),
        (
            "division.schema.json",
            described(
                accepted::<Division>(),
                "dossier division",
                "content/divisions/<id>.json: one division.",
            ),
        ),
        (
            "page.schema.json",
            described(
                accepted::<PageFrontMatter>(),
                "dossier page front matter",
                "The TOML front matter of content/pages/<slug>.md, between the +++ lines.",
            ),
        ),
    ]
}
