//! The typed site model: what a company's content *is*, after it has been read and checked.
//!
//! These types are both the schema authors write against (`deny_unknown_fields` turns a typo
//! into an error instead of silently dropped data) and the shape every output is built from:
//! `/api/company`, the MCP tools and the pages all serialize from here, so they cannot disagree.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rules::{self, Problems};

/// Everything `content/` says, validated and cross-checked. Its JSON form is the body of
/// `/api/company`, which is how a `build/` carries the model back in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Site {
    pub company: Company,
    /// Ordered by `order`, then name.
    pub divisions: Vec<Division>,
    /// Ordered by `order`, then title. Shared, so a reload takes an unchanged page from
    /// the previous site without copying it ([`super::load_reusing`]).
    pub pages: Vec<Arc<Page>>,
}

/// `content/company.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Company {
    /// The JSON Schema an editor checks this file against (`dossier schema` writes it);
    /// read by editors, ignored by dossier.
    #[serde(rename = "$schema", default, skip_serializing)]
    pub schema: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tagline: Option<String>,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub industry: Option<String>,
    pub founded: Founded,
    pub headquarters: Address,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub employees: Option<u32>,
    pub contact: Contact,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<Identifier>,
    /// The company's logo: an absolute http(s) URL of an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub logo: Option<String>,
    /// The same company elsewhere: Wikidata, LinkedIn, Crunchbase, a registry page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(inner(url))]
    pub same_as: Vec<String>,
    /// Legal Entity Identifier (ISO 17442), checked with its check digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(rules::LEI_PATTERN))]
    pub lei: Option<String>,
    /// Entry in a company register.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// e.g. `Delaware corporation`, `GmbH`, `société anonyme`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_form: Option<String>,
    /// VAT number with its country prefix, e.g. `DE123456789`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[A-Z]{2}[0-9A-Z]{2,13}$"))]
    pub vat_id: Option<String>,
    /// Tax identification number (e.g. a US EIN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub industry_codes: Vec<IndustryCode>,
    /// The people who lead the company, with their roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leadership: Vec<Leader>,
    /// Sites beyond the headquarters (or the headquarters again, with coordinates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<Location>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<RelatedOrganization>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subsidiaries: Vec<RelatedOrganization>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certifications: Vec<Certification>,
}

/// An entry in a company register.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "CompanyRegistration")]
pub struct Registration {
    pub number: String,
    /// ISO 3166-1 alpha-2 country, or ISO 3166-2 subdivision such as `US-DE`.
    #[schemars(pattern(r"^[A-Z]{2}(-[A-Z0-9]{1,3})?$"))]
    pub jurisdiction: String,
    /// The register's name, e.g. `Delaware Division of Corporations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// Industry classification systems a code can come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum IndustryScheme {
    /// North American Industry Classification System: 2 to 6 digits.
    #[serde(rename = "NAICS")]
    Naics,
    /// UN ISIC Rev. 4: a section letter, or 2 to 4 digits.
    #[serde(rename = "ISIC")]
    Isic,
}

impl IndustryScheme {
    pub fn label(self) -> &'static str {
        match self {
            IndustryScheme::Naics => "NAICS",
            IndustryScheme::Isic => "ISIC",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndustryCode {
    pub scheme: IndustryScheme,
    #[schemars(pattern(r"^([0-9]{2,6}|[A-U])$"))]
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Leader {
    pub name: String,
    /// e.g. `Chief Executive Officer`.
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub url: Option<String>,
}

/// What a location is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LocationType {
    Headquarters,
    Office,
    Factory,
    Laboratory,
    Warehouse,
    Store,
    DataCenter,
    ServiceCenter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Location {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: LocationType,
    pub address: Address,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geo: Option<Geo>,
}

/// WGS 84 coordinates in decimal degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Geo {
    #[schemars(range(min = -90.0, max = 90.0))]
    pub latitude: f64,
    #[schemars(range(min = -180.0, max = 180.0))]
    pub longitude: f64,
}

/// A parent company or a subsidiary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelatedOrganization {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(rules::LEI_PATTERN))]
    pub lei: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(r"^[A-Z]{2}$"))]
    pub country: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Certification {
    /// e.g. `ISO 9001:2015`.
    pub name: String,
    /// Who certified it, e.g. the certification body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The certificate's number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date"))]
    pub valid_until: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Founded {
    pub year: u16,
    /// The exact founding date, `YYYY-MM-DD`, in `year`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub street: String,
    pub locality: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub postal_code: String,
    /// ISO 3166-1 alpha-2, e.g. `DE`.
    #[schemars(pattern(r"^[A-Z]{2}$"))]
    pub country: String,
}

/// How to reach the company, a division or the people behind a page. Every part is optional
/// here; the company itself must give at least an email.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(email)]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(url)]
    pub web: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub title: String,
    #[schemars(url)]
    pub url: String,
}

/// A registry identifier such as an LEI or a VAT number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identifier {
    pub scheme: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub title: String,
}

/// `content/divisions/<id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Division {
    /// The JSON Schema an editor checks this file against (`dossier schema` writes it);
    /// read by editors, ignored by dossier.
    #[serde(rename = "$schema", default, skip_serializing)]
    pub schema: Option<String>,
    /// Stable identifier used in URLs and references; lowercase letters, digits and dashes.
    #[schemars(pattern(rules::ID_PATTERN))]
    pub id: String,
    pub name: String,
    pub summary: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead: Option<Person>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub established: Option<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<Contact>,
    /// Position in listings; lower comes first.
    #[serde(default, skip_serializing)]
    pub order: i32,
}

/// The front matter of `content/pages/<slug>.md`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageFrontMatter {
    pub title: String,
    /// Defaults to the file name without `.md`.
    #[serde(default)]
    pub slug: Option<String>,
    pub summary: String,
    /// The `id` of the division this page belongs to, if any.
    #[serde(default)]
    pub division: Option<String>,
    /// Last substantive update, `YYYY-MM-DD`.
    #[serde(default)]
    pub updated: Option<String>,
    #[serde(default)]
    pub contact: Option<Contact>,
    #[serde(default)]
    pub order: i32,
}

/// A page: front matter plus its Markdown body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Page {
    #[schemars(pattern(rules::ID_PATTERN))]
    pub slug: String,
    pub title: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub division: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date"))]
    pub updated: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // Boxed: most pages have none, and inline it would be 200 bytes of every page record
    // (20 MB at 100,000 pages). A plain comment: doc comments become the published schema's
    // descriptions.
    pub contact: Option<Box<Contact>>,
    /// The page text as the author wrote it (CommonMark).
    pub body_markdown: super::PageText,
    #[serde(skip)]
    pub order: i32,
}

impl Company {
    pub fn check(&self, problems: &mut Problems) {
        rules::text(problems, "name", &self.name);
        rules::optional_text(problems, "legal_name", self.legal_name.as_deref());
        rules::optional_text(problems, "tagline", self.tagline.as_deref());
        rules::text(problems, "description", &self.description);
        rules::optional_text(problems, "industry", self.industry.as_deref());
        rules::year(problems, "founded.year", self.founded.year);
        rules::optional_text(problems, "founded.place", self.founded.place.as_deref());
        self.headquarters.check(problems, "headquarters");
        self.contact.check(problems, "contact");
        if self.contact.email.is_none() {
            problems.add(
                "contact.email",
                "missing: the company needs a contact email",
            );
        }
        for (i, link) in self.links.iter().enumerate() {
            rules::text(problems, &format!("links[{i}].title"), &link.title);
            rules::url(problems, &format!("links[{i}].url"), &link.url);
        }
        for (i, identifier) in self.identifiers.iter().enumerate() {
            rules::text(
                problems,
                &format!("identifiers[{i}].scheme"),
                &identifier.scheme,
            );
            rules::text(
                problems,
                &format!("identifiers[{i}].value"),
                &identifier.value,
            );
            if identifier.scheme.eq_ignore_ascii_case("LEI") {
                rules::lei(
                    problems,
                    &format!("identifiers[{i}].value"),
                    &identifier.value,
                );
            }
        }
        self.check_profile(problems);
    }

    /// The optional fields of a full company profile.
    fn check_profile(&self, problems: &mut Problems) {
        if let Some(date) = &self.founded.date {
            rules::date(problems, "founded.date", date);
            if !date.starts_with(&format!("{:04}-", self.founded.year)) {
                problems.add(
                    "founded.date",
                    format!("`{date}` is not in founded.year {}", self.founded.year),
                );
            }
        }
        if let Some(logo) = &self.logo {
            rules::url(problems, "logo", logo);
        }
        for (i, url) in self.same_as.iter().enumerate() {
            rules::url(problems, &format!("same_as[{i}]"), url);
        }
        if let Some(lei) = &self.lei {
            rules::lei(problems, "lei", lei);
        }
        if let Some(registration) = &self.registration {
            rules::text(problems, "registration.number", &registration.number);
            rules::jurisdiction(
                problems,
                "registration.jurisdiction",
                &registration.jurisdiction,
            );
            rules::optional_text(
                problems,
                "registration.registry",
                registration.registry.as_deref(),
            );
        }
        rules::optional_text(problems, "legal_form", self.legal_form.as_deref());
        if let Some(vat_id) = &self.vat_id {
            rules::vat_id(problems, "vat_id", vat_id);
        }
        rules::optional_text(problems, "tax_id", self.tax_id.as_deref());
        for (i, code) in self.industry_codes.iter().enumerate() {
            let field = format!("industry_codes[{i}].code");
            match code.scheme {
                IndustryScheme::Naics => rules::naics_code(problems, &field, &code.code),
                IndustryScheme::Isic => rules::isic_code(problems, &field, &code.code),
            }
            rules::optional_text(
                problems,
                &format!("industry_codes[{i}].name"),
                code.name.as_deref(),
            );
        }
        for (i, leader) in self.leadership.iter().enumerate() {
            rules::text(problems, &format!("leadership[{i}].name"), &leader.name);
            rules::text(problems, &format!("leadership[{i}].role"), &leader.role);
            if let Some(url) = &leader.url {
                rules::url(problems, &format!("leadership[{i}].url"), url);
            }
        }
        for (i, location) in self.locations.iter().enumerate() {
            rules::text(problems, &format!("locations[{i}].name"), &location.name);
            location
                .address
                .check(problems, &format!("locations[{i}].address"));
            if let Some(geo) = location.geo {
                rules::geo(
                    problems,
                    &format!("locations[{i}].geo"),
                    geo.latitude,
                    geo.longitude,
                );
            }
        }
        let related = self.parent.iter().map(|o| ("parent".to_string(), o)).chain(
            self.subsidiaries
                .iter()
                .enumerate()
                .map(|(i, o)| (format!("subsidiaries[{i}]"), o)),
        );
        for (at, organization) in related {
            rules::text(problems, &format!("{at}.name"), &organization.name);
            if let Some(url) = &organization.url {
                rules::url(problems, &format!("{at}.url"), url);
            }
            if let Some(lei) = &organization.lei {
                rules::lei(problems, &format!("{at}.lei"), lei);
            }
            if let Some(country) = &organization.country {
                rules::country(problems, &format!("{at}.country"), country);
            }
        }
        for (i, certification) in self.certifications.iter().enumerate() {
            let at = format!("certifications[{i}]");
            rules::text(problems, &format!("{at}.name"), &certification.name);
            rules::optional_text(
                problems,
                &format!("{at}.issuer"),
                certification.issuer.as_deref(),
            );
            rules::optional_text(
                problems,
                &format!("{at}.identifier"),
                certification.identifier.as_deref(),
            );
            if let Some(date) = &certification.valid_until {
                rules::date(problems, &format!("{at}.valid_until"), date);
            }
            if let Some(url) = &certification.url {
                rules::url(problems, &format!("{at}.url"), url);
            }
        }
    }
}

impl Address {
    fn check(&self, problems: &mut Problems, at: &str) {
        rules::text(problems, &format!("{at}.street"), &self.street);
        rules::text(problems, &format!("{at}.locality"), &self.locality);
        rules::optional_text(problems, &format!("{at}.region"), self.region.as_deref());
        rules::text(problems, &format!("{at}.postal_code"), &self.postal_code);
        rules::country(problems, &format!("{at}.country"), &self.country);
    }
}

impl Contact {
    pub fn check(&self, problems: &mut Problems, at: &str) {
        if let Some(email) = &self.email {
            rules::email(problems, &format!("{at}.email"), email);
        }
        if let Some(phone) = &self.phone {
            rules::phone(problems, &format!("{at}.phone"), phone);
        }
        if let Some(address) = &self.address {
            address.check(problems, &format!("{at}.address"));
        }
        if let Some(web) = &self.web {
            rules::url(problems, &format!("{at}.web"), web);
        }
        if self == &Contact::default() {
            problems.add(
                at,
                "empty: give at least one of email, phone, address or web",
            );
        }
    }
}

impl Division {
    pub fn check(&self, problems: &mut Problems) {
        rules::slug(problems, "id", &self.id);
        rules::text(problems, "name", &self.name);
        rules::text(problems, "summary", &self.summary);
        rules::text(problems, "description", &self.description);
        if let Some(lead) = &self.lead {
            rules::text(problems, "lead.name", &lead.name);
            rules::text(problems, "lead.title", &lead.title);
        }
        if let Some(year) = self.established {
            rules::year(problems, "established", year);
        }
        for (i, location) in self.locations.iter().enumerate() {
            rules::text(problems, &format!("locations[{i}]"), location);
        }
        if let Some(contact) = &self.contact {
            contact.check(problems, "contact");
        }
    }
}

impl PageFrontMatter {
    pub fn check(&self, problems: &mut Problems) {
        rules::text(problems, "title", &self.title);
        if let Some(slug) = &self.slug {
            rules::slug(problems, "slug", slug);
        }
        rules::text(problems, "summary", &self.summary);
        if let Some(updated) = &self.updated {
            rules::date(problems, "updated", updated);
        }
        if let Some(contact) = &self.contact {
            contact.check(problems, "contact");
        }
    }
}
