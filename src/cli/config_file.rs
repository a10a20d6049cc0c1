//! `dossier.toml`: the settings of a site, so that `build`, `serve`, `check` and `keys` need
//! no flags when run in its directory.
//!
//! A key is the long name of a flag (`base-url`, `state`, `trusted-proxy`…), and the file
//! only fills in what neither a flag nor an environment variable gave: precedence is flag,
//! then environment, then file, then default. That is done before clap parses for real, by
//! adding the file's values to the command line as flags, so every value goes through the
//! same parser and the same checks as when typed (a bad address in the file is refused like
//! `--addr nonsense`). Keys are flat rather than per command, as a site has one base URL and
//! one state directory whichever command reads them; a key a command has no flag for is
//! left to the commands that do. A key no command knows is an error with its line and the
//! nearest known key, like a mistake in the content.
//!
//! Relative paths in the file are relative to the file, so `dossier --config site/dossier.toml
//! build` run from elsewhere reads `site/content`.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory};

use super::Cli;

/// The file read from the current directory when `--config` is not given.
pub const FILE_NAME: &str = "dossier.toml";

/// Flags whose values are paths, resolved against the file's directory.
const PATH_KEYS: &[&str] = &[
    "content",
    "out",
    "state",
    "templates",
    "from",
    "tls-cert",
    "tls-key",
];

/// What went wrong with the file: it names the file, and the line where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}:{line}: {message}")]
    Key {
        file: String,
        line: usize,
        message: String,
    },
}

/// `argv` with the file's settings added as flags where neither a flag nor the environment
/// set them. Without `--config` and without `dossier.toml` here, `argv` unchanged.
pub fn apply(argv: Vec<OsString>) -> Result<Vec<OsString>, ConfigFileError> {
    let command = Cli::command();
    // Parse leniently once to learn the subcommand, `--config`, and where each value came
    // from; the real parse (with its errors and `--help`) happens afterwards.
    let Ok(matches) = command
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(argv.iter())
    else {
        return Ok(argv);
    };
    let Some((leaf, leaf_matches)) = leaf_command(&command, &matches) else {
        return Ok(argv);
    };
    // `init` writes a site and `schema` writes files of its own: neither reads one.
    if matches!(leaf.get_name(), "init" | "schema") {
        return Ok(argv);
    }
    let named = leaf_matches
        .get_one::<PathBuf>("config")
        .or_else(|| matches.get_one::<PathBuf>("config"))
        .cloned();
    let file = match named {
        Some(file) => file,
        None if Path::new(FILE_NAME).is_file() => PathBuf::from(FILE_NAME),
        None => return Ok(argv),
    };
    let text = std::fs::read_to_string(&file).map_err(|source| ConfigFileError::Read {
        file: file.display().to_string(),
        source,
    })?;
    let settings = Settings::parse(&file, &text)?;

    let mut argv = argv;
    argv.extend(settings.flags_for(&leaf, leaf_matches));
    Ok(argv)
}

/// The deepest subcommand named on the command line (`keys rotate`), with its matches.
fn leaf_command<'a>(
    command: &clap::Command,
    matches: &'a ArgMatches,
) -> Option<(clap::Command, &'a ArgMatches)> {
    let (name, sub_matches) = matches.subcommand()?;
    let sub = command.find_subcommand(name)?.clone();
    match leaf_command(&sub, sub_matches) {
        Some(deeper) => Some(deeper),
        None => Some((sub, sub_matches)),
    }
}

/// Every long flag of every command: the keys a file may hold (`config` aside).
pub fn known_keys() -> BTreeSet<String> {
    fn walk(command: &clap::Command, keys: &mut BTreeSet<String>) {
        for argument in command.get_arguments() {
            if let Some(long) = argument.get_long() {
                if !matches!(long, "help" | "version" | "config") {
                    keys.insert(long.to_string());
                }
            }
        }
        for sub in command.get_subcommands() {
            walk(sub, keys);
        }
    }
    let mut keys = BTreeSet::new();
    walk(&Cli::command(), &mut keys);
    keys
}

/// The parsed file: each key with its values as they would be typed, and its line.
struct Settings {
    entries: Vec<(String, Vec<String>)>,
}

impl Settings {
    fn parse(file: &Path, text: &str) -> Result<Settings, ConfigFileError> {
        let name = file.display().to_string();
        let table: toml::Table =
            text.parse()
                .map_err(|error: toml::de::Error| ConfigFileError::Syntax {
                    file: name.clone(),
                    message: error.message().to_string(),
                })?;
        let base = file.parent().unwrap_or(Path::new(""));
        let known = known_keys();
        let mut entries = Vec::new();
        for (key, value) in &table {
            let line = line_of(text, key);
            let problem = |message: String| ConfigFileError::Key {
                file: name.clone(),
                line,
                message,
            };
            if !known.contains(key) {
                let hint = crate::suggest::nearest(key, known.iter().map(String::as_str))
                    .map(|near| format!("; did you mean `{near}`?"))
                    .unwrap_or_default();
                return Err(problem(format!(
                    "unknown key `{key}`{hint} (the keys are the long flags; see docs/cli.md)"
                )));
            }
            let values =
                match value {
                    toml::Value::Array(items) => items
                        .iter()
                        .map(scalar)
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| problem(format!("`{key}`: a list of plain values")))?,
                    other => vec![scalar(other)
                        .ok_or_else(|| problem(format!("`{key}`: a string, number or boolean")))?],
                };
            let values = if PATH_KEYS.contains(&key.as_str()) {
                values
                    .into_iter()
                    .map(|value| base.join(value).display().to_string())
                    .collect()
            } else {
                values
            };
            entries.push((key.clone(), values));
        }
        Ok(Settings { entries })
    }

    /// The flags to add for `command`: its own keys that neither a flag nor the environment
    /// set.
    fn flags_for(&self, command: &clap::Command, matches: &ArgMatches) -> Vec<OsString> {
        let mut flags = Vec::new();
        for argument in command.get_arguments() {
            let Some(long) = argument.get_long() else {
                continue;
            };
            let Some((_, values)) = self.entries.iter().find(|(key, _)| key == long) else {
                continue;
            };
            let given = |id: &str| {
                matches!(
                    matches.value_source(id),
                    Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                )
            };
            // A flag that was given wins; so does one it conflicts with (`serve --from
            // build` leaves the file's `content` aside).
            let conflicting = command.get_arg_conflicts_with(argument);
            if given(argument.get_id().as_str())
                || conflicting
                    .iter()
                    .any(|other| given(other.get_id().as_str()))
            {
                continue;
            }
            match argument.get_action() {
                ArgAction::SetTrue | ArgAction::SetFalse => {
                    if values.iter().any(|value| value == "true") {
                        flags.push(OsString::from(format!("--{long}")));
                    }
                }
                _ => {
                    for value in values {
                        flags.push(OsString::from(format!("--{long}={value}")));
                    }
                }
            }
        }
        flags
    }
}

/// A TOML value as it would be typed after its flag.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(text) => Some(text.clone()),
        toml::Value::Integer(number) => Some(number.to_string()),
        toml::Value::Float(number) => Some(number.to_string()),
        toml::Value::Boolean(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// The line where `key` is set (1 when it cannot be found, which a key that parsed from a
/// flat table always can).
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            let line = line
                .strip_prefix('"')
                .and_then(|rest| rest.strip_prefix(key))
                .and_then(|rest| rest.strip_prefix('"'))
                .or_else(|| line.strip_prefix(key));
            line.is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(text: &str, argv: &[&str]) -> Result<Vec<String>, ConfigFileError> {
        let settings = Settings::parse(Path::new("site/dossier.toml"), text)?;
        let command = Cli::command();
        let matches = command
            .clone()
            .try_get_matches_from(argv)
            .expect("argv parses");
        let (leaf, leaf_matches) = leaf_command(&command, &matches).expect("a subcommand");
        Ok(settings
            .flags_for(&leaf, leaf_matches)
            .into_iter()
            .map(|flag| flag.to_string_lossy().into_owned())
            .collect())
    }

    #[test]
    fn the_file_fills_in_what_no_flag_gave_and_paths_are_relative_to_it() {
        let text = "base-url = \"https://info.example.com\"\nstate = \"state\"\nno-watch = true\ntrusted-proxy = [\"10.0.0.0/8\", \"192.0.2.1\"]\n";
        let added = flags(text, &["dossier", "serve", "--state", "/var/lib/x"]).unwrap();
        assert_eq!(
            added,
            [
                "--base-url=https://info.example.com",
                "--no-watch",
                "--trusted-proxy=10.0.0.0/8",
                "--trusted-proxy=192.0.2.1",
            ]
        );
        // `build` has no --no-watch or --trusted-proxy: those keys are serve's.
        let added = flags(text, &["dossier", "build"]).unwrap();
        assert_eq!(
            added,
            ["--base-url=https://info.example.com", "--state=site/state"]
        );
        let added = flags(text, &["dossier", "keys", "list"]).unwrap();
        assert_eq!(added, ["--state=site/state"]);
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_line_and_the_nearest_key() {
        let error = flags(
            "addr = \"127.0.0.1:9000\"\n\nbase_url = \"x\"\n",
            &["dossier", "build"],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "site/dossier.toml:3: unknown key `base_url`; did you mean `base-url`? (the keys are the long flags; see docs/cli.md)"
        );
        let error = flags("[serve]\naddr = 1\n", &["dossier", "build"])
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("site/dossier.toml:1: unknown key `serve`"),
            "{error}"
        );
        let error = flags("base-url = [[1]]\n", &["dossier", "build"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("a list of plain values"), "{error}");
        let error = flags("base-url = \n", &["dossier", "build"])
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("site/dossier.toml: "), "{error}");
    }

    #[test]
    fn every_key_is_a_long_flag_of_some_command() {
        let keys = known_keys();
        for key in [
            "base-url",
            "origin-url",
            "content",
            "templates",
            "out",
            "state",
            "addr",
            "search-rate-limit",
            "trusted-proxy",
            "client-ip-header",
            "store",
            "tls-cert",
            "tls-key",
            "access-log",
            "metrics-addr",
            "workers",
        ] {
            assert!(keys.contains(key), "{key}");
        }
        for key in PATH_KEYS {
            assert!(keys.contains(*key), "{key}");
        }
    }
}
