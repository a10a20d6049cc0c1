//! The read model: what every reader of one content revision answers from (the site, the
//! public origin its URLs use, and the search index over it), built once per revision and
//! owned by the live version.
//!
//! MCP, the computed reads of the REST API (`/api/company?cursor=`, `/api/search`) and the
//! pages all read the same model, so a search through MCP and one through `/api/search`
//! can never see two different indexes, and neither protocol owns the data the other
//! serves.

use std::sync::Arc;

use crate::config::BaseUrl;
use crate::content::Site;
use crate::search::SearchIndex;

/// The site of one content revision, its origin and its search index.
pub struct ReadModel {
    site: Arc<Site>,
    base: BaseUrl,
    search: SearchIndex,
}

impl ReadModel {
    /// The model of `site`, served at `base`.
    pub fn build(site: Arc<Site>, base: &BaseUrl) -> ReadModel {
        ReadModel::build_reusing(site, base, None)
    }

    /// [`ReadModel::build`], reusing what it can of `previous` (the model of the version
    /// being replaced): the search terms of unchanged pages.
    pub fn build_reusing(
        site: Arc<Site>,
        base: &BaseUrl,
        previous: Option<&ReadModel>,
    ) -> ReadModel {
        // Terms from another origin would carry its URLs in their items; only reuse
        // same-origin ones.
        let earlier = previous
            .filter(|previous| previous.base == *base)
            .map(|previous| (previous.site.as_ref(), &previous.search));
        // An edit of pages in place patches the index; anything else builds it again,
        // reusing the stems of unchanged pages.
        let search = earlier
            .and_then(|(before, index)| index.patched(before, &site, base.as_str()))
            .unwrap_or_else(|| SearchIndex::build_reusing(&site, base.as_str(), earlier));
        ReadModel {
            site,
            base: base.clone(),
            search,
        }
    }

    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The public origin the answers' URLs use.
    pub fn base(&self) -> &BaseUrl {
        &self.base
    }

    pub fn search(&self) -> &SearchIndex {
        &self.search
    }
}
