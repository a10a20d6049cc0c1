//! RFC 9264 linksets in their JSON form, as `/.well-known/api-catalog` (RFC 9727) serves
//! them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

/// The media type of the API catalog, with the RFC 9727 profile.
pub(crate) const LINKSET_CONTENT_TYPE: &str =
    "application/linkset+json; profile=\"https://www.rfc-editor.org/info/rfc9727\"";

/// An RFC 9264 linkset in its JSON form.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Linkset {
    pub(crate) linkset: Vec<LinkContext>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct LinkContext {
    #[schemars(url)]
    pub(crate) anchor: String,
    #[serde(flatten)]
    pub(crate) relations: BTreeMap<&'static str, Vec<LinkTarget>>,
}

#[derive(Serialize, JsonSchema)]
pub(crate) struct LinkTarget {
    #[schemars(url)]
    pub(crate) href: String,
    #[serde(rename = "type")]
    pub(crate) media_type: &'static str,
}
