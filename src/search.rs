//! Full-text search over the company: divisions, pages and contacts, ranked with BM25F.
//!
//! Built once per content revision. Each searchable item has weighted fields (a title counts
//! five times a body word, a summary three times), words are lowercased and reduced to their
//! English stem (Snowball, via `rust-stemmers`: "companies" and "company" are one word), and
//! an inverted index maps each stem to the items and weighted frequencies it occurs with.
//!
//! A query scores items with BM25 over those weighted frequencies (k1 = 1.2, b = 0.75): rare
//! words count more than common ones, repetition has diminishing returns, and long pages do
//! not win by length alone. On top of that, an item whose title *is* the query ranks first,
//! one that contains the query as a phrase gets a bonus, and the last query word also
//! matches as a prefix (so "calib" finds "calibration" while a user is typing).
//!
//! The same index answers `search_company_info` and `GET /api/search`. A reload builds it
//! again, taking the stems of every unchanged page from the previous index
//! ([`SearchIndex::build_reusing`]): stemming is most of the work, and one edit changes one
//! page.

// foldhash, not SipHash: only content inserts words; a query only looks up, so there is
// nothing for a client to flood.
use foldhash::HashMap;
use std::sync::Arc;

use rust_stemmers::{Algorithm, Stemmer};

use crate::content::{Contact, Page, Site};
use crate::wire::Hit;

/// One ranked item, before its snippet is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    position: usize,
    score: f64,
}

struct Item {
    /// Where the item's title, addresses and text come from.
    source: Source,
    kind: &'static str,
    /// `kind:id`, unique: what a cursor names. The id is what follows the colon.
    key: String,
    /// The title, [`normalized`]: compared with the query for the exact-title and phrase
    /// bonus.
    title_words: String,
    /// Weighted length: the sum of every word's field weight.
    length: f64,
    /// Each stem of the item once (its id in `terms`), with its weighted frequency: what
    /// the next build takes when the item's page has not changed.
    stems: Box<[(u32, f32)]>,
}

/// Where an item's title, addresses and snippet text come from.
enum Source {
    /// A page, by position in `Site::pages`: read or made from there, not copied (30 MB at
    /// 100,000 pages).
    Page(usize),
    /// A division or a contact: held here.
    Shown(Box<Shown>),
}

impl Item {
    /// The item's position in `Site::pages`, for a page.
    fn page(&self) -> Option<usize> {
        match self.source {
            Source::Page(position) => Some(position),
            Source::Shown(_) => None,
        }
    }
}

/// The title, addresses and snippet text of an item that is not a page.
struct Shown {
    title: String,
    uri: String,
    url: String,
    text: String,
}

/// The index's parts are shared between versions (`Arc`) so that [`SearchIndex::patched`]
/// makes the next version by copying only what an edit touches.
pub struct SearchIndex {
    items: Vec<Arc<Item>>,
    /// Each item's weighted length, by position: what scoring reads for every posting.
    lengths: Vec<f64>,
    /// Each distinct stem once, with its id: the position of its postings.
    terms: Arc<HashMap<String, u32>>,
    /// Every stem that occurs or occurred (a patched index keeps stems whose postings an
    /// edit emptied; they match nothing), in order, for prefix matches by binary search.
    sorted_terms: Arc<Vec<(String, u32)>>,
    /// Per stem: (item, weighted term frequency), in item order. Field weights are small
    /// whole numbers, so `f32` holds every frequency exactly.
    postings: Vec<Arc<Vec<(u32, f32)>>>,
    average_length: f64,
    /// Makes a page hit's `url`.
    base_url: String,
}

/// The index a build replaces, and the site it indexed: where unchanged pages' stems come
/// from.
struct Earlier<'a> {
    /// Page items by slug, with the page each was made from.
    pages: HashMap<&'a str, (&'a Page, &'a Item)>,
    /// Each earlier stem by its id there.
    stems: Vec<&'a str>,
    /// Earlier id to id in the index being built, once met (`u32::MAX` before).
    ids: Vec<u32>,
}

impl<'a> Earlier<'a> {
    fn new(site: &'a Site, index: &'a SearchIndex) -> Earlier<'a> {
        let pages = index
            .items
            .iter()
            .filter_map(|item| {
                let page: &Page = site.pages.get(item.page()?)?;
                Some((page.slug.as_str(), (page, item.as_ref())))
            })
            .collect();
        let mut stems = vec![""; index.postings.len()];
        for (stem, id) in index.terms.iter() {
            stems[*id as usize] = stem;
        }
        Earlier {
            pages,
            ids: vec![u32::MAX; stems.len()],
            stems,
        }
    }

    /// The earlier item of `page`, if the page is the same.
    fn unchanged(&self, page: &Page) -> Option<&'a Item> {
        let (before, item) = self.pages.get(page.slug.as_str())?;
        (std::ptr::eq(*before, page) || *before == page).then_some(*item)
    }

    /// `item`'s stems with their ids in `index`.
    fn stems_of(&mut self, item: &Item, index: &mut SearchIndex) -> Vec<(u32, f32)> {
        item.stems
            .iter()
            .map(|(earlier, frequency)| {
                let slot = &mut self.ids[*earlier as usize];
                if *slot == u32::MAX {
                    *slot = index.intern(self.stems[*earlier as usize]);
                }
                (*slot, *frequency)
            })
            .collect()
    }
}

const TITLE_WEIGHT: f64 = 5.0;
const SUMMARY_WEIGHT: f64 = 3.0;
const BODY_WEIGHT: f64 = 1.0;
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Added when the item's title is exactly the query: always first.
const EXACT_TITLE_BONUS: f64 = 1000.0;
/// Added when the title contains the query as a phrase, and when the text does.
const TITLE_PHRASE_BONUS: f64 = 10.0;
const TEXT_PHRASE_BONUS: f64 = 3.0;
/// How many of the best-scoring items are checked for the query as a phrase in their text.
const PHRASE_CANDIDATES: usize = 50;
/// How much a prefix match of the last query word counts, relative to a whole word.
const PREFIX_WEIGHT: f64 = 0.5;
/// Prefixes shorter than this match too much to mean anything.
const MIN_PREFIX: usize = 3;
/// Distinct query stems scored; words beyond them are ignored (a 200-character query has
/// at most about 65 words, and each common one costs a pass over most items).
const MAX_QUERY_STEMS: usize = 16;
/// Stems a prefix may stand for ("s" would otherwise stand for a tenth of the language).
const MAX_PREFIX_STEMS: usize = 64;

fn stemmer() -> Stemmer {
    Stemmer::create(Algorithm::English)
}

/// Calls `each` with every word of `text`, lowercased.
fn for_each_word(text: &str, mut each: impl FnMut(&str)) {
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_alphanumeric()) {
        if !word.is_empty() {
            each(word);
        }
    }
}

/// Calls `each` with the stem of every word of `text`, lowercased.
fn for_each_stem(stemmer: &Stemmer, text: &str, mut each: impl FnMut(&str)) {
    for_each_word(text, |word| each(&stemmer.stem(word)));
}

/// The stemmer, and the term each word it has seen stems to in the index being made. A
/// site's text repeats a small vocabulary, so a word is looked up far more often than it is
/// new: at 100,000 pages, Snowball stemming was a third of the server's start-up CPU
/// (`perf`), and with this map it is a few percent. Term ids belong to one index, so one
/// `Stemming` serves one build or one patch and is dropped with it.
struct Stemming {
    stemmer: Stemmer,
    terms: HashMap<String, u32>,
}

impl Stemming {
    fn new() -> Stemming {
        Stemming {
            stemmer: stemmer(),
            terms: HashMap::default(),
        }
    }
}

fn contact_text(contact: &Contact) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(contact.email.clone());
    parts.extend(contact.phone.clone());
    parts.extend(contact.web.clone());
    if let Some(address) = &contact.address {
        parts.push(address.one_line());
    }
    parts.join(" · ")
}

/// Lowercase words joined by single spaces: the form phrases are matched in.
fn normalized(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl SearchIndex {
    /// An index of nothing: every search finds no results.
    pub fn empty(base_url: &str) -> SearchIndex {
        SearchIndex {
            items: Vec::new(),
            lengths: Vec::new(),
            terms: Arc::default(),
            sorted_terms: Arc::default(),
            postings: Vec::new(),
            average_length: 0.0,
            base_url: base_url.to_string(),
        }
    }

    /// Indexes `site`; `base_url` makes each hit's `url`.
    pub fn build(site: &Site, base_url: &str) -> SearchIndex {
        SearchIndex::build_reusing(site, base_url, None)
    }

    /// [`SearchIndex::build`], taking the stems of each page that is the same as in
    /// `previous` (an index of another version, and the site it indexed) from there. The
    /// result ranks exactly as a clean build does.
    pub fn build_reusing(
        site: &Site,
        base_url: &str,
        previous: Option<(&Site, &SearchIndex)>,
    ) -> SearchIndex {
        let mut earlier = previous.map(|(site, index)| Earlier::new(site, index));
        let mut stemming = Stemming::new();
        let mut index = SearchIndex::empty(base_url);
        for division in &site.divisions {
            let lead = division
                .lead
                .as_ref()
                .map(|lead| format!("{} ({})", lead.name, lead.title))
                .unwrap_or_default();
            let url = format!("{base_url}{}", crate::paths::division(&division.id));
            index.add(
                &mut stemming,
                Item::new(
                    "division",
                    &division.id,
                    &division.name,
                    format!("company://divisions/{}", division.id),
                    url.clone(),
                    format!("{} {}", division.summary, division.description),
                ),
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
                let title = format!("{} contact", division.name);
                index.add(
                    &mut stemming,
                    Item::new(
                        "contact",
                        &division.id,
                        &title,
                        format!("company://divisions/{}", division.id),
                        url,
                        text.clone(),
                    ),
                    &[(&title, SUMMARY_WEIGHT), (&text, BODY_WEIGHT)],
                );
            }
        }
        for (position, page) in site.pages.iter().enumerate() {
            let item = page_item(position, page);
            let reused = earlier.as_mut().and_then(|earlier| {
                let before = earlier.unchanged(page)?;
                Some((earlier.stems_of(before, &mut index), before.length))
            });
            match reused {
                Some((stems, length)) => index.push(item, stems, length),
                None => index.add(
                    &mut stemming,
                    item,
                    &page_fields(page, &page.body_markdown.get()),
                ),
            }
        }
        let company = &site.company;
        let text = contact_text(&company.contact);
        let title = format!("{} contact", company.name);
        index.add(
            &mut stemming,
            Item::new(
                "contact",
                "company",
                &title,
                "company://company".into(),
                format!("{base_url}/#contact"),
                text.clone(),
            ),
            &[
                (&format!("{title} headquarters"), SUMMARY_WEIGHT),
                (&text, BODY_WEIGHT),
            ],
        );
        let mut sorted_terms: Vec<(String, u32)> = index
            .terms
            .iter()
            .map(|(stem, term)| (stem.clone(), *term))
            .collect();
        sorted_terms.sort_unstable();
        index.sorted_terms = Arc::new(sorted_terms);
        index.average_length = average_length(&index.lengths);
        // Grown by doubling, the lists of common stems end up to half empty: 10 MB at
        // 100,000 pages.
        for postings in &mut index.postings {
            Arc::make_mut(postings).shrink_to_fit();
        }
        index
    }

    /// `self` (the index of `before`) made the index of `now` by re-indexing only the pages
    /// that differ, when that is all that changed: the same company and divisions, and the
    /// same pages in the same places. `None` otherwise (then [`SearchIndex::build_reusing`]).
    /// Ranks exactly as a clean build does: every score is a sum over the query's stems in
    /// the query's order, and lengths are whole numbers, so their sum is exact in any order.
    pub fn patched(&self, before: &Site, now: &Site, base_url: &str) -> Option<SearchIndex> {
        let same_place = before.pages.len() == now.pages.len()
            && before.company == now.company
            && before.divisions == now.divisions
            && before
                .pages
                .iter()
                .zip(&now.pages)
                .all(|(a, b)| a.slug == b.slug);
        if !same_place {
            return None;
        }
        let offset = match now.pages.len() {
            0 => 0,
            _ => self.items.iter().position(|item| item.page() == Some(0))?,
        };
        let mut index = SearchIndex {
            items: self.items.clone(),
            lengths: self.lengths.clone(),
            terms: Arc::clone(&self.terms),
            sorted_terms: Arc::clone(&self.sorted_terms),
            postings: self.postings.clone(),
            average_length: 0.0,
            base_url: base_url.to_string(),
        };
        let mut stemming = Stemming::new();
        for (position, (old, page)) in before.pages.iter().zip(&now.pages).enumerate() {
            if Arc::ptr_eq(old, page) || old == page {
                continue;
            }
            let at = offset + position;
            let item_id = at as u32;
            for (term, _) in index.items[at].stems.iter() {
                let postings = Arc::make_mut(&mut index.postings[*term as usize]);
                if let Ok(found) = postings.binary_search_by_key(&item_id, |(item, _)| *item) {
                    postings.remove(found);
                }
            }
            let mut item = page_item(position, page);
            let text = page.body_markdown.get();
            let (stems, length) = index.stems_of(&mut stemming, &page_fields(page, &text));
            for (term, frequency) in &stems {
                let postings = Arc::make_mut(&mut index.postings[*term as usize]);
                let place = postings.partition_point(|(item, _)| *item < item_id);
                // The copy just made is exactly full: room for one, not twice its size.
                postings.reserve_exact(1);
                postings.insert(place, (item_id, *frequency));
            }
            item.length = length;
            item.stems = stems.into_boxed_slice();
            index.lengths[at] = length;
            index.items[at] = Arc::new(item);
        }
        index.average_length = average_length(&index.lengths);
        Some(index)
    }

    /// The id of `stem`, added if new. Ids only place postings: no result depends on them.
    /// A stem new to an index that is already sorted (a patched one) also takes its place in
    /// the sorted list.
    fn intern(&mut self, stem: &str) -> u32 {
        if let Some(term) = self.terms.get(stem) {
            return *term;
        }
        let term = self.postings.len() as u32;
        Arc::make_mut(&mut self.terms).insert(stem.to_string(), term);
        self.postings.push(Arc::default());
        if !self.sorted_terms.is_empty() {
            let sorted = Arc::make_mut(&mut self.sorted_terms);
            let place = sorted.partition_point(|(known, _)| known.as_str() < stem);
            sorted.insert(place, (stem.to_string(), term));
        }
        term
    }

    /// The stems of `fields` (ids, with weighted frequencies, by id) and the weighted length.
    fn stems_of(
        &mut self,
        stemming: &mut Stemming,
        fields: &[(&str, f64)],
    ) -> (Vec<(u32, f32)>, f64) {
        let mut frequencies: HashMap<u32, f32> = HashMap::default();
        let mut length = 0.0;
        for (text, weight) in fields {
            for_each_word(text, |word| {
                let term = match stemming.terms.get(word) {
                    Some(term) => *term,
                    None => {
                        let term = self.intern(&stemming.stemmer.stem(word));
                        stemming.terms.insert(word.to_string(), term);
                        term
                    }
                };
                *frequencies.entry(term).or_insert(0.0) += *weight as f32;
                length += weight;
            });
        }
        let mut stems: Vec<(u32, f32)> = frequencies.into_iter().collect();
        stems.sort_unstable_by_key(|(term, _)| *term);
        (stems, length)
    }

    /// Stems `fields` and adds the item.
    fn add(&mut self, stemming: &mut Stemming, item: Item, fields: &[(&str, f64)]) {
        let (stems, length) = self.stems_of(stemming, fields);
        self.push(item, stems, length);
    }

    /// Adds an item whose stems are known.
    fn push(&mut self, mut item: Item, stems: Vec<(u32, f32)>, length: f64) {
        let position = self.items.len() as u32;
        for (term, frequency) in &stems {
            Arc::make_mut(&mut self.postings[*term as usize]).push((position, *frequency));
        }
        item.length = length;
        item.stems = stems.into_boxed_slice();
        self.lengths.push(length);
        self.items.push(Arc::new(item));
    }

    /// BM25 of one stem's postings, added into `scores` (one slot per item), scaled by
    /// `factor`.
    fn score_term(&self, term: u32, factor: f64, scores: &mut [f64]) {
        let postings = &self.postings[term as usize];
        let n = self.items.len() as f64;
        let df = postings.len() as f64;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (item, frequency) in postings.iter() {
            let frequency = f64::from(*frequency);
            let length = self.lengths[*item as usize] / self.average_length;
            let tf = frequency * (K1 + 1.0) / (frequency + K1 * (1.0 - B + B * length));
            scores[*item as usize] += factor * idf * tf;
        }
    }

    /// The stems that start with `prefix`, from the sorted list.
    fn stems_with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, u32)> {
        let first = self
            .sorted_terms
            .partition_point(|(stem, _)| stem.as_str() < prefix);
        self.sorted_terms[first..]
            .iter()
            .take_while(move |(stem, _)| stem.starts_with(prefix))
            .filter(|(_, term)| !self.postings[*term as usize].is_empty())
            .take(MAX_PREFIX_STEMS)
            .map(|(stem, term)| (stem.as_str(), *term))
    }

    /// The unique key of a ranked item, for cursors.
    pub fn key(&self, ranked: &Ranked) -> &str {
        &self.items[ranked.position].key
    }

    /// Every item matching `query`, best first; page text comes from `site`.
    pub fn rank(&self, site: &Site, query: &str) -> Vec<Ranked> {
        let stemmer = stemmer();
        let mut stems: Vec<String> = Vec::new();
        // The work is one pass over each stem's postings: bounded, whatever the query. The
        // first words are kept, in the order they were written.
        for_each_stem(&stemmer, query, |stem| {
            if stems.len() < MAX_QUERY_STEMS && !stems.iter().any(|known| known == stem) {
                stems.push(stem.to_string());
            }
        });
        let mut scores = vec![0.0; self.items.len()];
        for stem in &stems {
            if let Some(term) = self.terms.get(stem) {
                self.score_term(*term, 1.0, &mut scores);
            }
        }
        // The word being typed: its prefix matches other words, at half weight.
        let last = normalized(query)
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        if last.chars().count() >= MIN_PREFIX && !query.ends_with(char::is_whitespace) {
            for (stem, term) in self.stems_with_prefix(&last) {
                if !stems.iter().any(|known| known == stem) {
                    self.score_term(term, PREFIX_WEIGHT, &mut scores);
                }
            }
        }
        let phrase = normalized(query);
        let mut ranked: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .map(|(position, score)| {
                let title = &self.items[position].title_words;
                let bonus = if phrase.is_empty() {
                    0.0
                } else if *title == phrase {
                    EXACT_TITLE_BONUS
                } else if title.contains(&phrase) {
                    TITLE_PHRASE_BONUS
                } else {
                    0.0
                };
                (position, score + bonus)
            })
            .collect();
        let order = |ranked: &mut [(usize, f64)]| {
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        };
        order(&mut ranked);
        // Phrases in the text are looked for among the best candidates only: page text is
        // read from the site model, not kept twice.
        if phrase.contains(' ') {
            let head = ranked.len().min(PHRASE_CANDIDATES);
            for (position, score) in &mut ranked[..head] {
                if normalized(&self.text_of(site, &self.items[*position])).contains(&phrase) {
                    *score += TEXT_PHRASE_BONUS;
                }
            }
            order(&mut ranked[..head]);
        }
        ranked
            .into_iter()
            .map(|(position, score)| Ranked { position, score })
            .collect()
    }

    /// The hits for `ranked` items of a search for `query`, with snippets around its words.
    pub fn hits(&self, site: &Site, query: &str, ranked: &[Ranked]) -> Vec<Hit> {
        let words: Vec<String> = normalized(query).split(' ').map(str::to_string).collect();
        ranked
            .iter()
            .map(|ranked| {
                let item = &self.items[ranked.position];
                let text = self.text_of(site, item);
                let id = &item.key[item.kind.len() + 1..];
                let (title, uri, url) = match &item.source {
                    Source::Shown(shown) => {
                        (shown.title.clone(), shown.uri.clone(), shown.url.clone())
                    }
                    Source::Page(position) => (
                        site.pages
                            .get(*position)
                            .map(|page| page.title.clone())
                            .unwrap_or_default(),
                        format!("company://pages/{id}"),
                        format!("{}{}", self.base_url, crate::paths::page(id)),
                    ),
                };
                Hit {
                    kind: item.kind,
                    id: id.to_string(),
                    title,
                    snippet: snippet(&text, &words),
                    uri,
                    url,
                    score: (ranked.score * 1000.0).round() / 1000.0,
                }
            })
            .collect()
    }

    /// Every hit for `query`, best first.
    pub fn search(&self, site: &Site, query: &str) -> Vec<Hit> {
        let ranked = self.rank(site, query);
        self.hits(site, query, &ranked)
    }

    /// An item's plain text: page text is read from the site model, not kept twice.
    fn text_of(&self, site: &Site, item: &Item) -> String {
        match &item.source {
            Source::Page(position) => site
                .pages
                .get(*position)
                .map(|page| {
                    format!(
                        "{} {}",
                        page.summary,
                        strip_markdown(&page.body_markdown.get())
                    )
                })
                .unwrap_or_default(),
            Source::Shown(shown) => shown.text.clone(),
        }
    }
}

impl Item {
    /// An item that is not a page, before its stems.
    fn new(
        kind: &'static str,
        id: &str,
        title: &str,
        uri: String,
        url: String,
        text: String,
    ) -> Item {
        Item {
            source: Source::Shown(Box::new(Shown {
                title: title.to_string(),
                uri,
                url,
                text,
            })),
            kind,
            key: format!("{kind}:{id}"),
            title_words: normalized(title),
            length: 0.0,
            stems: Box::default(),
        }
    }
}

/// A page's item, before its stems.
fn page_item(position: usize, page: &Page) -> Item {
    Item {
        source: Source::Page(position),
        kind: "page",
        key: format!("page:{}", page.slug),
        title_words: normalized(&page.title),
        length: 0.0,
        stems: Box::default(),
    }
}

/// A page's searchable fields with their weights (`text`: its body, read).
fn page_fields<'a>(page: &'a Page, text: &'a str) -> [(&'a str, f64); 3] {
    [
        (&page.title, TITLE_WEIGHT),
        (&page.summary, SUMMARY_WEIGHT),
        (text, BODY_WEIGHT),
    ]
}

/// The average weighted length of the items (at least 1, so no length divides by 0).
fn average_length(lengths: &[f64]) -> f64 {
    let total: f64 = lengths.iter().sum();
    (total / lengths.len().max(1) as f64).max(1.0)
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
            let mut hits = self.index.search(&self.site, query);
            hits.truncate(limit);
            hits
        }
    }

    fn index() -> Fixture {
        let site =
            crate::content::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("content"))
                .unwrap();
        let index = SearchIndex::build(&site, "https://x.example");
        Fixture { site, index }
    }

    /// An index patched edit after edit ranks every query exactly as a clean build of the
    /// same site: words added and removed, a stem that only an edit brings (and its prefix
    /// matches), and a stem an edit takes away (which must stop matching prefixes).
    #[test]
    fn a_patched_index_ranks_as_a_clean_build() {
        let base = "https://x.example";
        let mut site = index().site;
        let mut index = SearchIndex::build(&site, base);
        let queries = [
            "calibration certificate",
            "quality",
            "qual",
            "zebrafinch",
            "zebraf",
            "zebr",
            "support email",
            "sustainability report",
            "acc",
            "history of the company",
        ];
        let edits: [&dyn Fn(&mut Page); 4] = [
            &|page| {
                page.body_markdown = format!(
                    "{}\nA zebrafinch and zebrafinches.\n",
                    &*page.body_markdown.get()
                )
                .into()
            },
            &|page| page.body_markdown = "Nothing left but quality.".into(),
            &|page| page.summary = format!("{} accredited", page.summary),
            &|page| {
                page.body_markdown = page
                    .body_markdown
                    .get()
                    .replace("zebrafinch", "lark")
                    .into()
            },
        ];
        for round in 0..12 {
            let before = site.clone();
            let position = (round * 5) % site.pages.len();
            let mut page = site.pages[position].as_ref().clone();
            edits[round % edits.len()](&mut page);
            site.pages[position] = Arc::new(page);
            index = index
                .patched(&before, &site, base)
                .expect("an edit in place patches");
            let clean = SearchIndex::build(&site, base);
            for query in queries {
                assert_eq!(
                    index.rank(&site, query),
                    clean.rank(&site, query),
                    "{query:?} after round {round}"
                );
                assert_eq!(index.search(&site, query), clean.search(&site, query));
            }
        }
        // More stems share a prefix than a prefix may stand for: the ones an edit emptied
        // must not take the places of live ones.
        let words = |set: char| -> String {
            (0..70u8)
                .map(|i| {
                    format!(
                        "zzpref{set}{}{} ",
                        (b'a' + i / 26) as char,
                        (b'a' + i % 26) as char
                    )
                })
                .collect()
        };
        for set in ['a', 'b'] {
            let before = site.clone();
            let mut page = site.pages[0].as_ref().clone();
            page.body_markdown = words(set).into();
            site.pages[0] = Arc::new(page);
            index = index.patched(&before, &site, base).unwrap();
            let clean = SearchIndex::build(&site, base);
            assert_eq!(
                index.rank(&site, "zzpref"),
                clean.rank(&site, "zzpref"),
                "{set}"
            );
            assert!(!clean.rank(&site, "zzpref").is_empty());
        }
        let mut reordered = site.clone();
        reordered.pages.swap(0, 1);
        assert!(index.patched(&site, &reordered, base).is_none());
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
        assert_eq!(hits[0].url, "https://x.example/careers");
    }

    #[test]
    fn an_exact_title_ranks_first() {
        let index = index();
        for page in &index.site.pages {
            let hits = index.search(&page.title, 3);
            assert_eq!(hits[0].id, page.slug, "{}: {hits:#?}", page.title);
        }
        for division in &index.site.divisions {
            let hits = index.search(&division.name, 3);
            assert_eq!(
                (hits[0].kind, hits[0].id.as_str()),
                ("division", division.id.as_str())
            );
        }
    }

    #[test]
    fn finds_divisions_and_contacts() {
        let index = index();
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
    fn stems_prefixes_and_nonsense() {
        let index = index();
        // "companies" and "company" are one stem: the same items match.
        let ids = |q| {
            index
                .search(q, 100)
                .into_iter()
                .map(|h| h.id)
                .collect::<Vec<_>>()
        };
        let mut plural = ids("companies");
        let mut singular = ids("company");
        plural.sort();
        singular.sort();
        assert!(!singular.is_empty());
        assert_eq!(plural, singular);
        assert_eq!(ids("divisions").len(), ids("division").len());
        // A word being typed matches as a prefix.
        assert!(
            ids("calib").contains(&"calibration-labs".to_string()),
            "{:?}",
            ids("calib")
        );
        assert!(ids("ca").is_empty() || ids("ca").len() < ids("calibration").len() + 50);
        assert!(index.search("xyzzy quux", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("!!! ???", 5).is_empty());
    }

    #[test]
    fn words_beyond_the_sixteenth_are_not_scored() {
        let index = index();
        let filler: Vec<String> = (0..MAX_QUERY_STEMS).map(|i| format!("xq{i}zz")).collect();
        let first = format!("calibration {}", filler.join(" "));
        assert!(!index.search(&first, 5).is_empty());
        let last = format!("{} calibration", filler.join(" "));
        assert!(index.search(&last, 5).is_empty());
    }

    #[test]
    fn a_phrase_beats_the_same_words_apart() {
        let index = index();
        let hits = index.search("field service", 10);
        let position = |id: &str| hits.iter().position(|h| h.id == id);
        assert!(position("customer-care").is_some(), "{hits:#?}");
    }

    #[test]
    fn snippets_cut_on_character_boundaries() {
        let text = "ä".repeat(200) + " needle " + &"ö".repeat(200);
        let s = snippet(&text, &["needle".to_string()]);
        assert!(s.contains("needle"));
    }
}
