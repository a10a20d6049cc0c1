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
        settings.transforms = vec![Box::new(NotNullable)];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{Company, Page};

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
