//! The module graph runs one way: a module uses only modules of its own layer or below.
//!
//! The layers follow the flow of data, written once here: what every stage shares, then
//! reading content (and the auth core, which needs no content), then what is compiled from
//! it, then the version being served, then the edges that serve and reload it, then the
//! command line. The test reads every `crate::` path in the code (doc comments and test
//! modules aside) and fails on one that climbs, naming the file and the line; a second test
//! fails on a cycle among the module files. A crate per layer would enforce the same; one
//! crate and these tests are cheaper on a 2-core machine.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first.
const LAYERS: &[&[&str]] = &[
    // What the service promises and every stage shares: settings and limits, URLs, time,
    // query bounds, the thread pool.
    &["clock", "config", "paths", "query", "parallel", "suggest"],
    // Content read into the site model; the shapes written onto the wire (which embed the
    // model); the auth core (keys, tokens, store).
    &["content", "wire", "auth"],
    // Everything made from the model: artifacts, listings and search, the read model and
    // the reads computed from it, the endpoint table, MCP, schemas, health.
    &[
        "compile",
        "listing",
        "search",
        "read_model",
        "read_api",
        "routes",
        "links",
        "mcp",
        "schema",
        "health",
    ],
    // One version being served, and where its bodies are kept.
    &["live", "spool"],
    // The edges: HTTP, hot reload, key pick-up, and the checker of deployments (a client).
    &["serve", "reload", "key_watch", "doctor"],
    // Flags, startup, exit codes.
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The code of a file without its test module, and without comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let end = text
        .find("#[cfg(test)]\nmod ")
        .or_else(|| text.find("#[cfg(test)]\npub mod "))
        .unwrap_or(text.len());
    text[..end]
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

/// Every path named on `line` through `crate::…`, or `super::…` read from inside
/// `parent` (the module above the file's own), including inside `{a, b::c}` groups:
/// `serve::App` for `use crate::serve::App;`.
fn paths_named(line: &str, parent: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (prefix, base) in [("crate::", ""), ("super::", parent)] {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            rest = &rest[at + prefix.len()..];
            let items: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for item in items {
                let path: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let path = path.trim_end_matches(':');
                if path.is_empty() {
                    continue;
                }
                paths.push(if base.is_empty() {
                    path.to_string()
                } else {
                    format!("{base}::{path}")
                });
            }
        }
    }
    paths
}

/// The module above `module` (`serve` for `serve::router`; the crate root, "", for `serve`).
fn parent_of(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(parent, _)| parent)
}

/// Files that are test modules of their parent (`#[cfg(test)] mod name;`): tests may
/// reach anywhere, as the integration tests do.
fn test_only(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let dir = match file.file_name().and_then(|name| name.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().map(Path::to_path_buf),
            _ => Some(file.with_extension("")),
        };
        let Some(dir) = dir else { continue };
        for declared in text.split("#[cfg(test)]\nmod ").skip(1) {
            if let Some(name) = declared.split(';').next().filter(|n| !n.contains(' ')) {
                found.push(dir.join(format!("{name}.rs")));
                found.push(dir.join(name).join("mod.rs"));
            }
        }
    }
    found
}

/// Each `file:line: a -> b` where module `a` uses `b` of a higher layer.
fn climbing_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let tests = test_only(&files);
    files.retain(|file| !tests.contains(file));
    let mut climbing = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let Some(first) = relative.components().next() else {
            continue;
        };
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            climbing.push(format!(
                "{}: module `{module}` has no layer in LAYERS",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let own_path = module_path(src, &file);
        for (number, line) in code_lines(&text) {
            for path in paths_named(line, parent_of(&own_path)) {
                let used = path.split("::").next().unwrap_or_default().to_string();
                if used == module {
                    continue;
                }
                match layer_of(&used) {
                    Some(theirs) if theirs > own => climbing.push(format!(
                        "{}:{number}: `{module}` (layer {own}) uses `{used}` (layer {theirs})",
                        relative.display()
                    )),
                    Some(_) => {}
                    None => climbing.push(format!(
                        "{}:{number}: `{used}` has no layer in LAYERS",
                        relative.display()
                    )),
                }
            }
        }
    }
    climbing
}

#[test]
fn modules_import_only_their_own_layer_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let climbing = climbing_imports(&src);
    assert!(
        climbing.is_empty(),
        "imports that climb a layer (see src/layering.rs):\n{}",
        climbing.join("\n")
    );
}

/// The module a file is (`serve::connection` for `serve/connection.rs`).
fn module_path(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// Every module `module` names through `crate::…` or `super::…`, as far as it is a file.
fn modules_used(module: &str, text: &str, known: &HashSet<String>) -> HashSet<String> {
    let mut used = HashSet::new();
    for (_, line) in code_lines(text) {
        for mut path in paths_named(line, parent_of(module)) {
            // The longest prefix that is a module file: `serve::connection::Peer` is
            // `serve::connection`.
            while !path.is_empty() && !known.contains(&path) {
                path = parent_of(&path).to_string();
            }
            let related = path == module
                || module.starts_with(&format!("{path}::"))
                || path.starts_with(&format!("{module}::"));
            if !path.is_empty() && !related {
                used.insert(path);
            }
        }
    }
    used
}

/// A cycle among the module files, if there is one (a parent and its children aside:
/// `mod.rs` declares its children and may re-export them).
fn a_cycle(src: &Path) -> Option<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let tests = test_only(&files);
    files.retain(|file| !tests.contains(file));
    let known: HashSet<String> = files.iter().map(|file| module_path(src, file)).collect();
    let graph: HashMap<String, HashSet<String>> = files
        .iter()
        .map(|file| {
            let module = module_path(src, file);
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let used = modules_used(&module, &text, &known);
            (module, used)
        })
        .collect();
    // Depth-first search; a module met again while still on the path closes a cycle.
    fn visit(
        module: &str,
        graph: &HashMap<String, HashSet<String>>,
        path: &mut Vec<String>,
        done: &mut HashSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|on| on == module) {
            let mut cycle = path[start..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_string());
        let mut next: Vec<&String> = graph.get(module).into_iter().flatten().collect();
        next.sort();
        for used in next {
            if let Some(cycle) = visit(used, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_string());
        None
    }
    let mut modules: Vec<&String> = graph.keys().collect();
    modules.sort();
    let mut done = HashSet::new();
    for module in modules {
        if let Some(cycle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn no_module_file_depends_on_itself_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if let Some(cycle) = a_cycle(&src) {
        panic!("a cycle among modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_reader_finds_every_form_of_import() {
    assert_eq!(paths_named("use crate::serve::App;", ""), ["serve::App"]);
    assert_eq!(
        paths_named("use crate::{config::SiteConfig, live, paths};", ""),
        ["config::SiteConfig", "live", "paths"]
    );
    assert_eq!(
        paths_named("let x = crate::serve::DEFAULT + crate::clock::now();", ""),
        ["serve::DEFAULT", "clock::now"]
    );
    assert_eq!(
        paths_named("use super::{era, jsonrpc::Failure};", "mcp"),
        ["mcp::era", "mcp::jsonrpc::Failure"]
    );
    let text = "use crate::paths;\n/// [`crate::serve`]\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\n";
    let lines: Vec<usize> = code_lines(text).map(|(number, _)| number).collect();
    assert_eq!(lines, [1, 3]);
}
