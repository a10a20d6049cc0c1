//! Full-text search over the company: divisions, pages and contacts, ranked.
//!
//! Built once per content revision. Each searchable item is split into weighted fields
//! (a name counts more than a body), words are lowercased and folded to a simple singular,
//! and an inverted index maps each word to the items and weights it occurs with. A query
//! scores every item that contains any of its words; items matching more distinct query
//! words rank first, then by weight, so "calibration certificate" prefers the page that has
//! both words over one that repeats only one.

use std::collections::HashMap;

use serde::Serialize;

use crate::content::{Contact, Site};

/// One search hit, as returned by `search_company_info`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub kind: &'static str,
    pub id: String,
    pub title: String,
    pub snippet: String,
    pub uri: String,
    pub score: f64,
}

struct Item {
    /// For pages, the position in `Site::pages`: their text is read from there, not copied.
    page: Option<usize>,
    kind: &'static str,
    id: String,
    title: String,
    uri: String,
    /// Plain text for snippets.
    text: String,
}

pub struct SearchIndex {
    items: Vec<Item>,
    /// Each distinct word once; postings are indexed by the word's position here.
    terms: HashMap<String, usize>,
    postings: Vec<Vec<(usize, f64)>>,
}

const TITLE_WEIGHT: f64 = 5.0;
const SUMMARY_WEIGHT: f64 = 3.0;
const BODY_WEIGHT: f64 = 1.0;

/// Calls `each` with every word of `text`, lowercased and lightly singularized ("divisions"
/// and "division" are the same word). Lowercases once per text, so no word is allocated.
fn for_each_word(text: &str, mut each: impl FnMut(&str)) {
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let singular = if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
            &word[..word.len() - 1]
        } else {
            word
        };
        each(singular);
    }
}

fn contact_text(contact: &Contact) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(contact.email.clone());
    parts.extend(contact.phone.clone());
    parts.extend(contact.web.clone());
    if let Some(address) = &contact.address {
        parts.push(format!(
            "{}, {} {}, {}",
            address.street, address.postal_code, address.locality, address.country
        ));
    }
    parts.join(" · ")
}

impl SearchIndex {
    pub fn build(site: &Site) -> SearchIndex {
        let mut index = SearchIndex {
            items: Vec::new(),
            terms: HashMap::new(),
            postings: Vec::new(),
        };
        for division in &site.divisions {
            let lead = division
                .lead
                .as_ref()
                .map(|lead| format!("{} ({})", lead.name, lead.title))
                .unwrap_or_default();
            index.add(
                Item {
                    page: None,
                    kind: "division",
                    id: division.id.clone(),
                    title: division.name.clone(),
                    uri: format!("company://divisions/{}", division.id),
                    text: format!("{} {}", division.summary, division.description),
                },
                &[
                    (&division.name, TITLE_WEIGHT),
                    (&division.summary, SUMMARY_WEIGHT),
                    (&division.description, BODY_WEIGHT),
                    (&lead, SUMMARY_WEIGHT),
                    (&division.locations.join(" "), BODY_WEIGHT),
                ],
            );
            if let Some(contact) = &division.contact {
                let text = contact_text(contact);
                index.add(
                    Item {
                        page: None,
                        kind: "contact",
                        id: division.id.clone(),
                        title: format!("{} contact", division.name),
                        uri: format!("company://divisions/{}", division.id),
                        text: text.clone(),
                    },
                    &[
                        (&format!("{} contact", division.name), SUMMARY_WEIGHT),
                        (&text, BODY_WEIGHT),
                    ],
                );
            }
        }
        for (position, page) in site.pages.iter().enumerate() {
            index.add(
                Item {
                    page: Some(position),
                    kind: "page",
                    id: page.slug.clone(),
                    title: page.title.clone(),
                    uri: format!("company://pages/{}", page.slug),
                    text: String::new(),
                },
                &[
                    (&page.title, TITLE_WEIGHT),
                    (&page.summary, SUMMARY_WEIGHT),
                    (&page.body_markdown, BODY_WEIGHT),
                ],
            );
        }
        let company = &site.company;
        let text = contact_text(&company.contact);
        index.add(
            Item {
                page: None,
                kind: "contact",
                id: "company".into(),
                title: format!("{} contact", company.name),
                uri: "company://company".into(),
                text: text.clone(),
            },
            &[
                (
                    &format!("{} contact headquarters", company.name),
                    SUMMARY_WEIGHT,
                ),
                (&text, BODY_WEIGHT),
            ],
        );
        index
    }

    fn add(&mut self, item: Item, fields: &[(&String, f64)]) {
        let position = self.items.len();
        let mut weights: HashMap<usize, f64> = HashMap::new();
        for (text, weight) in fields {
            for_each_word(text, |word| {
                let term = match self.terms.get(word) {
                    Some(term) => *term,
                    None => {
                        let term = self.postings.len();
                        self.terms.insert(word.to_string(), term);
                        self.postings.push(Vec::new());
                        term
                    }
                };
                *weights.entry(term).or_insert(0.0) += weight;
            });
        }
        for (term, weight) in weights {
            // Repetition helps, but with diminishing returns.
            self.postings[term].push((position, weight.sqrt()));
        }
        self.items.push(item);
    }

    /// The best `limit` hits for `query`; page snippets come from `site`.
    pub fn search(&self, site: &Site, query: &str, limit: usize) -> Vec<Hit> {
        let mut query_words: Vec<String> = Vec::new();
        for_each_word(query, |word| query_words.push(word.to_string()));
        query_words.sort();
        query_words.dedup();
        let mut scores: HashMap<usize, (usize, f64)> = HashMap::new();
        for word in &query_words {
            if let Some(term) = self.terms.get(word) {
                for (item, weight) in &self.postings[*term] {
                    let entry = scores.entry(*item).or_insert((0, 0.0));
                    entry.0 += 1;
                    entry.1 += weight;
                }
            }
        }
        let phrase = query.trim().to_lowercase();
        let mut ranked: Vec<(usize, usize, f64)> = scores
            .into_iter()
            .map(|(item, (matched, weight))| {
                let title_bonus = if !phrase.is_empty()
                    && self.items[item].title.to_lowercase().contains(&phrase)
                {
                    TITLE_WEIGHT
                } else {
                    0.0
                };
                (item, matched, weight + title_bonus)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(limit)
            .map(|(item, matched, weight)| {
                let item = &self.items[item];
                // Page text is not copied into the index; it is read from the site model.
                let page_text;
                let text = match item.page.and_then(|position| site.pages.get(position)) {
                    Some(page) => {
                        page_text =
                            format!("{} {}", page.summary, strip_markdown(&page.body_markdown));
                        &page_text
                    }
                    None => &item.text,
                };
                Hit {
                    kind: item.kind,
                    id: item.id.clone(),
                    title: item.title.clone(),
                    snippet: snippet(text, &query_words),
                    uri: item.uri.clone(),
                    score: ((matched as f64 + weight / 100.0) * 1000.0).round() / 1000.0,
                }
            })
            .collect()
    }
}

/// Markdown without its markup characters, for snippets.
fn strip_markdown(markdown: &str) -> String {
    markdown
        .lines()
        .map(|line| line.trim_start_matches(['#', '-', '*', '>', '|', ' ']))
        .filter(|line| !line.chars().all(|c| c == '-' || c == '|' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
        .replace("**", "")
        .replace(['*', '`', '|'], "")
}

/// About 160 characters around the first query word in `text`.
fn snippet(text: &str, query_words: &[String]) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = text.to_lowercase();
    let start = query_words
        .iter()
        .filter_map(|word| lower.find(word.as_str()))
        .min()
        .unwrap_or(0);
    let mut from = start.saturating_sub(60);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (from + 160).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.push_str(text[from..to].trim());
    if to < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        site: Site,
        index: SearchIndex,
    }

    impl Fixture {
        fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
            self.index.search(&self.site, query, limit)
        }
    }

    fn index() -> Fixture {
        let site =
            crate::content::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content"))
                .unwrap();
        let index = SearchIndex::build(&site);
        Fixture { site, index }
    }

    #[test]
    fn finds_the_obvious_page_first() {
        let index = index();
        let hits = index.search("calibration certificate", 5);
        assert_eq!(hits[0].id, "quality-and-accreditation", "{hits:#?}");
        let hits = index.search("security vulnerability", 3);
        assert_eq!(hits[0].id, "ridgeline-security");
        let hits = index.search("jobs careers hiring", 3);
        assert_eq!(hits[0].id, "careers");
    }

    #[test]
    fn finds_divisions_and_contacts() {
        let index = index();
        let hits = index.search("Field Sensors", 3);
        assert_eq!(
            (hits[0].kind, hits[0].id.as_str()),
            ("division", "field-sensors")
        );
        let hits = index.search("support email", 10);
        assert!(
            hits.iter()
                .any(|h| h.kind == "contact" && h.id == "customer-care"),
            "{hits:#?}"
        );
        let hits = index.search("Bremen", 10);
        assert!(hits.iter().any(|h| h.id == "calibration-labs"));
    }

    #[test]
    fn plurals_match_and_nonsense_finds_nothing() {
        let index = index();
        assert!(
            !index.search("laboratories", 5).is_empty()
                || !index.search("laboratory", 5).is_empty()
        );
        assert_eq!(
            index.search("division", 20).len(),
            index.search("divisions", 20).len()
        );
        assert!(index.search("xyzzy quux", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("!!! ???", 5).is_empty());
    }

    #[test]
    fn snippets_cut_on_character_boundaries() {
        let text = "ä".repeat(200) + " needle " + &"ö".repeat(200);
        let s = snippet(&text, &["needle".to_string()]);
        assert!(s.contains("needle"));
    }
}
