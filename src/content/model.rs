//! The typed site model: what a company's content *is*, after it has been read and checked.
//!
//! These types are both the schema authors write against (`deny_unknown_fields` turns a typo
//! into an error instead of silently dropped data) and the shape every output is built from:
//! `/api/company`, the MCP tools and the pages all serialize from here, so they cannot disagree.

use serde::{Deserialize, Serialize};

use super::rules::{self, Problems};

/// Everything `content/` says, validated and cross-checked. Its JSON form is the body of
/// `/api/company`, which is how a `build/` carries the model back in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Site {
    pub company: Company,
    /// Ordered by `order`, then name.
    pub divisions: Vec<Division>,
    /// Ordered by `order`, then title.
    pub pages: Vec<Page>,
}

/// `content/company.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Company {
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Founded {
    pub year: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub street: String,
    pub locality: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub postal_code: String,
    /// ISO 3166-1 alpha-2, e.g. `DE`.
    pub country: String,
}

/// How to reach the company, a division or the people behind a page. Every part is optional
/// here; the company itself must give at least an email (checked in [`Company::check`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub title: String,
    pub url: String,
}

/// A registry identifier such as an LEI or a VAT number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identifier {
    pub scheme: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub title: String,
}

/// `content/divisions/<id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Division {
    /// Stable identifier used in URLs and references; lowercase letters, digits and dashes.
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
#[derive(Debug, Clone, PartialEq, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    pub slug: String,
    pub title: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub division: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<Contact>,
    /// The page text as the author wrote it (CommonMark).
    pub body_markdown: String,
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
