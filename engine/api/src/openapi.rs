//! The OpenAPI 3.1 document of `/api/v1`, generated from the catalogue:
//! every operation with a REST route (plugin actions included, with the
//! schema their manifest declares). Path parameters come from the route,
//! the rest of the input is the query (GET, DELETE) or the JSON body (POST).

use serde_json::{Map, Value, json};

use crate::{Catalogue, Method, Operation};

/// `{name}` segments of a route.
pub fn path_parameters(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

/// The input schema's properties and required list, without `skip`.
fn split_schema(schema: &Value, skip: &[&str]) -> (Map<String, Value>, Vec<String>) {
    let mut properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    properties.retain(|k, _| !skip.contains(&k.as_str()));
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .filter(|k| !skip.contains(k))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    (properties, required)
}

fn operation_object(op: &Operation, path: &str, method: Method, status: u16) -> Value {
    let path_params = path_parameters(path);
    let properties = op.input_schema.get("properties").and_then(Value::as_object);
    let mut parameters: Vec<Value> = path_params
        .iter()
        .map(|name| {
            // A path parameter is always there: a string, never null.
            let property = properties.and_then(|p| p.get(*name));
            let description = property
                .and_then(|p| p.get("description"))
                .cloned()
                .unwrap_or_else(|| json!(""));
            let max_length = property
                .and_then(|p| p.get("maxLength"))
                .cloned()
                .unwrap_or_else(|| json!(crate::input::DEFAULT_MAX_STRING));
            json!({
                "name": name,
                "in": "path",
                "required": true,
                "schema": { "type": "string", "maxLength": max_length },
                "description": description,
            })
        })
        .collect();
    let (rest, required) = split_schema(&op.input_schema, &path_params);
    let mut object = Map::new();
    object.insert("operationId".into(), json!(op.name.replace(':', "_")));
    object.insert("summary".into(), json!(op.description));
    object.insert("x-wabp-scope".into(), json!(op.scope.as_str()));
    if let Some(tool) = &op.tool {
        object.insert("x-mcp-tool".into(), json!(tool));
    }
    match method {
        Method::Get | Method::Delete => {
            for (name, schema) in rest {
                parameters.push(json!({
                    "name": name,
                    "in": "query",
                    "required": required.contains(&name),
                    "schema": schema,
                }));
            }
        }
        Method::Post => {
            let mut body = op.input_schema.clone();
            if let Some(obj) = body.as_object_mut() {
                obj.insert("properties".into(), Value::Object(rest));
                if required.is_empty() {
                    obj.remove("required");
                } else {
                    obj.insert("required".into(), json!(required));
                }
            }
            object.insert(
                "requestBody".into(),
                json!({
                    "required": !required.is_empty(),
                    "content": { "application/json": { "schema": body } }
                }),
            );
        }
    }
    // Every operation acts for the caller the `userId` names (query or body).
    parameters.push(json!({
        "name": "userId",
        "in": "query",
        "required": false,
        "description": "Act as this user: only that user's tabs and records are visible (also accepted in a JSON body)",
        "schema": { "type": "string", "pattern": "^[A-Za-z0-9._@:-]{1,128}$", "maxLength": 128 },
    }));
    object.insert("parameters".into(), Value::Array(parameters));
    let content = match op
        .output_schema
        .get("contentMediaType")
        .and_then(Value::as_str)
    {
        Some(mime) => json!({ mime: { "schema": { "type": "string", "format": "binary" } } }),
        None => json!({ "application/json": { "schema": op.output_schema } }),
    };
    object.insert(
        "responses".into(),
        json!({
            status.to_string(): { "description": "success", "content": content },
            "400": error_response("the input is not valid"),
            "404": error_response("no such tab, record or action (another user's included)"),
            "default": error_response("an error, as {\"error\", \"code\"}"),
        }),
    );
    Value::Object(object)
}

/// The whole document.
pub fn document(catalogue: &Catalogue) -> Value {
    let mut paths: Map<String, Value> = Map::new();
    for op in catalogue.operations() {
        let Some(rest) = &op.rest else { continue };
        let entry = paths.entry(rest.path.clone()).or_insert_with(|| json!({}));
        if let Some(entry) = entry.as_object_mut() {
            entry.insert(
                rest.method.as_str().into(),
                operation_object(&op, &rest.path, rest.method, rest.status),
            );
        }
    }
    paths.insert(
        crate::ACTION_ROUTE.to_string(),
        json!({ "post": {
            "operationId": "plugin_action",
            "summary": "Run any plugin action by name (GET /plugins lists them); the body is its params plus the action options. Each action is also listed at its own path.",
            "x-wabp-scope": "act",
            "parameters": [
                { "name": "tab_id", "in": "path", "required": true, "schema": { "type": "string", "maxLength": crate::input::DEFAULT_MAX_STRING } },
                { "name": "name", "in": "path", "required": true, "schema": { "type": "string", "maxLength": 128 } }
            ],
            "requestBody": { "content": { "application/json": { "schema": { "type": "object", "additionalProperties": true } } } },
            "responses": {
                "200": { "description": "success", "content": { "application/json": { "schema": crate::input::schema_of::<wabp_core::Envelope>() } } },
                "404": error_response("no such tab or action"),
                "default": error_response("an error, as {\"error\", \"code\"}"),
            }
        }}),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "wabp",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The Agent Browser Protocol REST API and wabp's extensions. Every request is narrowed to its caller: the `userId` of the query or body. Bodies are JSON (Content-Type: application/json).",
        },
        "servers": [{ "url": "/api/v1" }],
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": { "type": "string", "description": "what was wrong" },
                        "code": { "type": "string", "description": "e.g. INVALID_REQUEST, TAB_NOT_FOUND" }
                    },
                    "required": ["error", "code"]
                }
            },
            "securitySchemes": {
                "bearer": { "type": "http", "scheme": "bearer", "description": "when the engine runs with --auth-token" }
            }
        },
    })
}
