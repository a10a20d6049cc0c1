//! Every MCP method, from a parsed request to its result bytes or a [`Failure`].

use bytes::Bytes;
use hyper::StatusCode;
use serde_json::{json, Map, Value};

use super::era::{Era, LATEST_LEGACY, LEGACY_VERSIONS};
use super::jsonrpc::{self, Failure};
use super::prepared::{capabilities, object, page_of_cursor, to_bytes, Prepared};
use super::tools::{self, Outcome, TOOLS};
use super::{prompts, SearchBudget};

pub(super) fn status_for(code: i64, era: Era) -> StatusCode {
    match (code, era) {
        (jsonrpc::PARSE_ERROR | jsonrpc::INVALID_REQUEST | jsonrpc::UNSUPPORTED_VERSION, _) => {
            StatusCode::BAD_REQUEST
        }
        (jsonrpc::INVALID_PARAMS | jsonrpc::HEADER_MISMATCH, Era::Modern) => {
            StatusCode::BAD_REQUEST
        }
        (jsonrpc::METHOD_NOT_FOUND, Era::Modern) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// `params.<name>` as text, or invalid params with `message`.
fn required_text<'a>(
    params: &'a Map<String, Value>,
    name: &str,
    message: &'static str,
) -> Result<&'a str, Failure> {
    params
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::new(jsonrpc::INVALID_PARAMS, message))
}

fn no_cursor(params: &Map<String, Value>) -> Result<(), Failure> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(Failure::new(
            jsonrpc::INVALID_PARAMS,
            "invalid cursor: this list has one page",
        )),
    }
}

fn dynamic(prepared: &Prepared, era: Era, result: Map<String, Value>, cacheable: bool) -> Bytes {
    Bytes::from(prepared.for_era(era, to_bytes(&result), cacheable))
}

pub(super) fn dispatch(
    prepared: &Prepared,
    era: Era,
    method: &str,
    params: &Map<String, Value>,
    searches: SearchBudget<'_>,
) -> Result<Bytes, Failure> {
    let not_found = || {
        Failure::new(
            jsonrpc::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    };
    match (era, method) {
        (Era::Legacy, "initialize") => {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            let version = requested
                .filter(|v| LEGACY_VERSIONS.contains(v))
                .unwrap_or(LATEST_LEGACY);
            let result = object(json!({
                "protocolVersion": version,
                "capabilities": capabilities(Era::Legacy),
                "serverInfo": prepared.server_info,
                "instructions": prepared.instructions,
            }));
            Ok(Bytes::from(to_bytes(&result)))
        }
        (Era::Legacy, "ping" | "logging/setLevel") => Ok(Bytes::from_static(b"{}")),
        (Era::Modern, "server/discover") => Ok(prepared.discover.clone()),
        (_, "tools/list") => {
            no_cursor(params)?;
            Ok(prepared.tools_list.for_era(era).clone())
        }
        (_, "tools/call") => {
            let name = required_text(params, "name", "params.name (the tool) is required")?;
            let empty = Map::new();
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(arguments)) => arguments,
                Some(_) => {
                    return Err(Failure::new(
                        jsonrpc::INVALID_PARAMS,
                        "params.arguments must be an object",
                    ))
                }
            };
            let Some(position) = tools::position(name) else {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("unknown tool `{name}`; tools: {}", tools::names()),
                ));
            };
            if let Some(prepared) = prepared.prepared_call(position, arguments) {
                return Ok(prepared.for_era(era).clone());
            }
            if TOOLS[position].is_search() {
                if let Err(wait) = searches.spend() {
                    let seconds = wait.as_secs().max(1);
                    let message = format!("too many searches from this address; try again in {seconds} s, or read what you need with get_page, get_division or list_pages");
                    let result = Outcome::ToolError(message).result_bytes();
                    return Ok(Bytes::from(prepared.for_era(era, result, false)));
                }
            }
            let outcome = tools::call_at(position, &prepared.model, arguments);
            Ok(Bytes::from(prepared.for_era(
                era,
                outcome.result_bytes(),
                false,
            )))
        }
        (_, "resources/list") => {
            let page = match params.get("cursor") {
                None | Some(Value::Null) => 0,
                Some(Value::String(cursor)) => page_of_cursor(cursor)
                    .filter(|page| *page < prepared.resource_pages())
                    .ok_or_else(|| Failure::new(jsonrpc::INVALID_PARAMS, "invalid cursor"))?,
                Some(_) => return Err(Failure::new(jsonrpc::INVALID_PARAMS, "invalid cursor")),
            };
            Ok(prepared.resources_page(page, era))
        }
        (_, "resources/templates/list") => {
            no_cursor(params)?;
            Ok(prepared.templates_list.for_era(era).clone())
        }
        (_, "resources/read") => {
            let uri = required_text(params, "uri", "params.uri is required")?;
            if let Some(precomputed) = prepared.fixed_reads.get(uri) {
                return Ok(precomputed.for_era(era).clone());
            }
            match prepared.read_result(uri) {
                Some(legacy) => Ok(Bytes::from(prepared.for_era(era, legacy, true))),
                None => Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("resource not found: {uri}"),
                )
                .with_data(json!({"uri": uri}))),
            }
        }
        (_, "prompts/list") => {
            no_cursor(params)?;
            Ok(prepared.prompts_list.for_era(era).clone())
        }
        (_, "prompts/get") => {
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if name != prompts::BRIEFING {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("unknown prompt `{name}`; prompts: {}", prompts::BRIEFING),
                ));
            }
            let division = params
                .get("arguments")
                .and_then(|a| a.get("division"))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty());
            let result = prompts::briefing(prepared.model.site(), division)
                .map_err(|message| Failure::new(jsonrpc::INVALID_PARAMS, message))?;
            Ok(dynamic(prepared, era, object(result), false))
        }
        (_, "completion/complete") => {
            let reference = params.get("ref").cloned().unwrap_or(Value::Null);
            let argument = params.get("argument");
            let name = argument.and_then(|a| a.get("name")).and_then(Value::as_str);
            let value = argument
                .and_then(|a| a.get("value"))
                .and_then(Value::as_str);
            let (Some(name), Some(value)) = (name, value) else {
                return Err(Failure::new(
                    jsonrpc::INVALID_PARAMS,
                    "params.argument needs a name and a value",
                ));
            };
            let result = prompts::complete(prepared.model.site(), &reference, name, value)
                .map_err(|message| Failure::new(jsonrpc::INVALID_PARAMS, message))?;
            Ok(dynamic(prepared, era, object(result), false))
        }
        _ => Err(not_found()),
    }
}
