//! JSON Schemas of the site model, for every surface that publishes them: the OpenAPI
//! components and the MCP tools' output schemas. One definition, so the schemas and
//! `model.rs` are kept in step in one place (tests validate live data against both).

use serde_json::{json, Map, Value};

fn r(prefix: &str, name: &str) -> Value {
    json!({"$ref": format!("{prefix}{name}")})
}

/// `Address`, `Contact`, `Company`, `Division`, `Page`, the read API's documents
/// (`CompanyDocument`, `PageListing`, `PageDocument`, `DivisionDocument`, `SearchResults`)
/// and their parts, with `$ref`s
/// written as `prefix` + name (`#/components/schemas/` or `#/$defs/`).
pub fn model_schemas(prefix: &str) -> Map<String, Value> {
    let contact = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "email": {"type": "string", "format": "email"},
            "phone": {"type": "string"},
            "address": r(prefix, "Address"),
            "web": {"type": "string", "format": "uri"}
        }
    });
    let definitions = json!({
        "Address": {
            "type": "object",
            "additionalProperties": false,
            "required": ["street", "locality", "postal_code", "country"],
            "properties": {
                "street": {"type": "string"},
                "locality": {"type": "string"},
                "region": {"type": "string"},
                "postal_code": {"type": "string"},
                "country": {"type": "string", "pattern": "^[A-Z]{2}$", "description": "ISO 3166-1 alpha-2"}
            }
        },
        "Contact": contact,
        "Company": {
            "type": "object",
            "additionalProperties": false,
            "required": ["name", "description", "founded", "headquarters", "contact"],
            "properties": {
                "name": {"type": "string"},
                "legal_name": {"type": "string"},
                "tagline": {"type": "string"},
                "description": {"type": "string"},
                "industry": {"type": "string"},
                "founded": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["year"],
                    "properties": {"year": {"type": "integer"}, "date": {"type": "string", "format": "date"}, "place": {"type": "string"}}
                },
                "headquarters": r(prefix, "Address"),
                "employees": {"type": "integer", "minimum": 0},
                "contact": r(prefix, "Contact"),
                "links": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["title", "url"],
                        "properties": {"title": {"type": "string"}, "url": {"type": "string", "format": "uri"}}
                    }
                },
                "identifiers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["scheme", "value"],
                        "properties": {"scheme": {"type": "string"}, "value": {"type": "string"}}
                    }
                },
            }
        },
        "Lei": {"type": "string", "pattern": "^[A-Z0-9]{18}[0-9]{2}$", "description": "Legal Entity Identifier (ISO 17442); its check digits are verified at build time."},
        "RelatedOrganization": {
            "type": "object",
            "additionalProperties": false,
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "url": {"type": "string", "format": "uri"},
                "lei": r(prefix, "Lei"),
                "country": {"type": "string", "pattern": "^[A-Z]{2}$"}
            }
        },
        "Division": {
            "type": "object",
            "additionalProperties": false,
            "required": ["id", "name", "summary", "description"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                "name": {"type": "string"},
                "summary": {"type": "string"},
                "description": {"type": "string"},
                "lead": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name", "title"],
                    "properties": {"name": {"type": "string"}, "title": {"type": "string"}}
                },
                "established": {"type": "integer"},
                "locations": {"type": "array", "items": {"type": "string"}},
                "contact": r(prefix, "Contact")
            }
        },
        "Page": {
            "type": "object",
            "additionalProperties": false,
            "required": ["slug", "title", "summary", "body_markdown"],
            "properties": {
                "slug": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                "title": {"type": "string"},
                "summary": {"type": "string"},
                "division": {"type": "string", "description": "The id of the division this page belongs to."},
                "updated": {"type": "string", "format": "date"},
                "contact": r(prefix, "Contact"),
                "body_markdown": {"type": "string", "description": "The page text, CommonMark."}
            }
        }
    });
    // The read API's documents (`/api/company`, `/api/pages/…`, `/api/divisions/…`,
    // `/api/search`), kept apart only to stay within the `json!` macro's recursion limit.
    let cursor = json!({"type": "string", "description": "Present when more items follow: pass it back as `cursor` to continue."});
    let documents = json!({
        "PageListing": {
            "type": "object",
            "additionalProperties": false,
            "required": ["slug", "title", "summary", "url", "api_url"],
            "properties": {
                "slug": {"type": "string"},
                "title": {"type": "string"},
                "summary": {"type": "string"},
                "division": {"type": "string"},
                "updated": {"type": "string", "format": "date"},
                "url": {"type": "string", "format": "uri", "description": "The page for people: cite this."},
                "api_url": {"type": "string", "format": "uri", "description": "The page as JSON, with its Markdown."}
            }
        },
        "CompanyDocument": {
            "type": "object",
            "additionalProperties": false,
            "required": ["company", "divisions", "pages"],
            "properties": {
                "company": r(prefix, "Company"),
                "divisions": {"type": "array", "items": r(prefix, "Division")},
                "pages": {"type": "array", "items": r(prefix, "PageListing")},
                "next_cursor": cursor.clone()
            }
        },
        "PageDocument": {
            "type": "object",
            "additionalProperties": false,
            "required": ["page", "url"],
            "properties": {
                "page": r(prefix, "Page"),
                "url": {"type": "string", "format": "uri"},
                "division_url": {"type": "string", "format": "uri"}
            }
        },
        "DivisionDocument": {
            "type": "object",
            "additionalProperties": false,
            "required": ["division", "url", "pages"],
            "properties": {
                "division": r(prefix, "Division"),
                "url": {"type": "string", "format": "uri"},
                "pages": {"type": "array", "items": r(prefix, "PageListing")}
            }
        },
        "SearchResults": {
            "type": "object",
            "additionalProperties": false,
            "required": ["query", "results"],
            "properties": {
                "query": {"type": "string"},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["kind", "id", "title", "snippet", "uri", "url", "score"],
                    "properties": {
                        "kind": {"enum": ["division", "page", "contact"]},
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "snippet": {"type": "string"},
                        "uri": {"type": "string"},
                        "url": {"type": "string", "format": "uri"},
                        "score": {"type": "number"}
                    }
                }},
                "next_cursor": cursor
            }
        }
    });
    // The optional fields of a full company profile, kept apart only to stay within the
    // `json!` macro's recursion limit.
    let profile = json!({
                "logo": {"type": "string", "format": "uri"},
                "same_as": {"type": "array", "items": {"type": "string", "format": "uri"}, "description": "The same company elsewhere: Wikidata, LinkedIn, registries."},
                "lei": r(prefix, "Lei"),
                "registration": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["number", "jurisdiction"],
                    "properties": {
                        "number": {"type": "string"},
                        "jurisdiction": {"type": "string", "pattern": "^[A-Z]{2}(-[A-Z0-9]{1,3})?$", "description": "ISO 3166-1 alpha-2 or ISO 3166-2"},
                        "registry": {"type": "string"}
                    }
                },
                "legal_form": {"type": "string"},
                "vat_id": {"type": "string", "pattern": "^[A-Z]{2}[0-9A-Z]{2,13}$"},
                "tax_id": {"type": "string"},
                "industry_codes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["scheme", "code"],
                        "properties": {
                            "scheme": {"enum": ["NAICS", "ISIC"]},
                            "code": {"type": "string", "pattern": "^([0-9]{2,6}|[A-U])$"},
                            "name": {"type": "string"}
                        }
                    }
                },
                "leadership": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["name", "role"],
                        "properties": {"name": {"type": "string"}, "role": {"type": "string"}, "url": {"type": "string", "format": "uri"}}
                    }
                },
                "locations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["name", "type", "address"],
                        "properties": {
                            "name": {"type": "string"},
                            "type": {"enum": ["headquarters", "office", "factory", "laboratory", "warehouse", "store", "data-center", "service-center"]},
                            "address": r(prefix, "Address"),
                            "geo": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["latitude", "longitude"],
                                "properties": {
                                    "latitude": {"type": "number", "minimum": -90, "maximum": 90},
                                    "longitude": {"type": "number", "minimum": -180, "maximum": 180}
                                }
                            }
                        }
                    }
                },
                "parent": r(prefix, "RelatedOrganization"),
                "subsidiaries": {"type": "array", "items": r(prefix, "RelatedOrganization")},
                "certifications": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "issuer": {"type": "string"},
                            "identifier": {"type": "string"},
                            "valid_until": {"type": "string", "format": "date"},
                            "url": {"type": "string", "format": "uri"}
                        }
                    }
                }
    });
    let mut definitions = match definitions {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Value::Object(documents) = documents {
        definitions.extend(documents);
    }
    if let (Some(Value::Object(company)), Value::Object(profile)) = (
        definitions
            .get_mut("Company")
            .and_then(|company| company.get_mut("properties")),
        profile,
    ) {
        company.extend(profile);
    }
    definitions
}
