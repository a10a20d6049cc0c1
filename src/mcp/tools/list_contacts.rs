//! `list_contacts`: how to reach the company, its divisions and the people behind its
//! pages.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::arguments::Id;
use super::list_pages::ListArguments;
use super::{page, NextCursor, Tool};
use crate::config::BaseUrl;
use crate::content::{Contact, Site};
use crate::listing::{division_url, page_url, DEFAULT_LIMIT, MAX_LIMIT};
use crate::read_model::ReadModel;

pub(crate) struct ListContacts;

#[derive(Serialize, JsonSchema)]
pub(crate) struct ContactEntry<'a> {
    #[schemars(extend("enum" = ["company", "division", "page"]))]
    scope: &'static str,
    id: &'a str,
    name: &'a str,
    contact: &'a Contact,
    /// Where the contact is published.
    #[schemars(url)]
    url: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct ContactList<'a> {
    contacts: Vec<ContactEntry<'a>>,
    /// Pass it as `cursor` to get the next items; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    next_cursor: NextCursor,
}

/// Every contact (the company's, then each division's, then each page's), only
/// `division`'s when given.
fn contacts<'a>(site: &'a Site, base: &BaseUrl, division: Option<&str>) -> Vec<ContactEntry<'a>> {
    let mut contacts = Vec::new();
    if division.is_none() {
        contacts.push(ContactEntry {
            scope: "company",
            id: "company",
            name: &site.company.name,
            contact: &site.company.contact,
            url: base.join("/#contact"),
        });
    }
    for entry in &site.divisions {
        if division.is_some_and(|id| id != entry.id) {
            continue;
        }
        if let Some(contact) = &entry.contact {
            contacts.push(ContactEntry {
                scope: "division",
                id: &entry.id,
                name: &entry.name,
                contact,
                url: division_url(base, &entry.id),
            });
        }
    }
    for entry in &site.pages {
        if division.is_some_and(|id| entry.division.as_deref() != Some(id)) {
            continue;
        }
        if let Some(contact) = &entry.contact {
            contacts.push(ContactEntry {
                scope: "page",
                id: &entry.slug,
                name: &entry.title,
                contact,
                url: page_url(base, &entry.slug),
            });
        }
    }
    contacts
}

/// One page of `limit` contacts after `cursor`, only `division`'s when given.
fn contact_page<'a>(
    site: &'a Site,
    base: &BaseUrl,
    division: Option<&str>,
    limit: usize,
    cursor: Option<&Id>,
) -> Result<ContactList<'a>, String> {
    let mut all = contacts(site, base, division);
    // `scope:id` is unique: a division and a page may share an id.
    let keys: Vec<String> = all
        .iter()
        .map(|c| format!("{}:{}", c.scope, c.id))
        .collect();
    let positions: Vec<usize> = (0..all.len()).collect();
    let (chosen, next_cursor) = page(&positions, |i| keys[*i].as_str(), limit, cursor)?;
    // What `page` chose is one run of positions.
    let (start, end) = match (chosen.first(), chosen.last()) {
        (Some(first), Some(last)) => (*first, *last + 1),
        _ => (0, 0),
    };
    all.truncate(end);
    all.drain(..start);
    Ok(ContactList {
        contacts: all,
        next_cursor,
    })
}

/// The first [`MAX_LIMIT`] contacts: the text of the `company://contacts` resource.
pub(crate) fn all_contacts<'a>(site: &'a Site, base: &BaseUrl) -> ContactList<'a> {
    contact_page(site, base, None, MAX_LIMIT, None).unwrap_or(ContactList {
        contacts: Vec::new(),
        next_cursor: None,
    })
}

impl Tool for ListContacts {
    type Arguments = ListArguments;
    type Output<'a> = ContactList<'a>;
    const NAME: &'static str = "list_contacts";
    const TITLE: &'static str = "List contacts";
    const USE_FOR: &'static str = "for whom to reach";

    fn description(company: &str) -> String {
        format!("Lists how to reach {company}: the company's own contact, each division's and each page's (press, careers, security, ...), with email, phone, web and address where known, and the URL of where it is published. Optionally only one division's; {DEFAULT_LIMIT} at a time (pass nextCursor back as cursor for more).")
    }

    fn run<'a>(
        model: &'a ReadModel,
        arguments: &'a ListArguments,
    ) -> Result<ContactList<'a>, String> {
        let site = model.site();
        contact_page(
            site,
            model.base(),
            arguments.division(site)?,
            arguments.limit.get(),
            arguments.cursor.as_ref(),
        )
    }

    fn prepared(_: &Site) -> Vec<Map<String, Value>> {
        vec![Map::new()]
    }
}
