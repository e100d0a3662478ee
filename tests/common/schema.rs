//! A validator for the part of JSON Schema (draft 2020-12) that docs/schema/*.json use: `type`
//! (one or a list), `enum`, `const`, `pattern`, `minimum`, `maximum`, `properties`,
//! `required`, `additionalProperties`, `items`, `prefixItems`, `minItems`, `maxItems`, `anyOf`
//! and `$ref` to `#/$defs/NAME`. A keyword outside this set fails the validation, so that a
//! schema never passes because a keyword was ignored. (The `jsonschema` crate would pull an
//! HTTP client and a TLS stack by default, and dozens of crates without it, for what these
//! hundred lines do.)

use serde_json::Value;

/// Annotations and identifiers: they constrain nothing.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description"];

/// The problems of `v` against `schema` (empty when it is valid), each with its JSON pointer.
pub fn validate(schema: &Value, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, v, "", &mut out);
    out
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn check(root: &Value, s: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    let Some(s) = s.as_object() else {
        out.push(format!("{at}: schema is not an object"));
        return;
    };
    for (k, arg) in s {
        match k.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let target = arg
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .and_then(|name| root.get("$defs")?.get(name));
                match target {
                    Some(t) => check(root, t, v, at, out),
                    None => out.push(format!("{at}: unresolved $ref {arg}")),
                }
            }
            "type" => {
                let names: Vec<&str> = match arg {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if !names.iter().any(|t| type_ok(t, v)) {
                    out.push(format!("{at}: {} is not of type {arg}", brief(v)));
                }
            }
            "enum" => {
                if !arg.as_array().is_some_and(|a| a.contains(v)) {
                    out.push(format!("{at}: {} is not one of {arg}", brief(v)));
                }
            }
            "const" => {
                if arg != v {
                    out.push(format!("{at}: {} is not {arg}", brief(v)));
                }
            }
            "pattern" => {
                let re = regex::Regex::new(arg.as_str().unwrap_or("(")).ok();
                if let (Some(text), Some(re)) = (v.as_str(), &re) {
                    if !re.is_match(text) {
                        out.push(format!("{at}: {} does not match {arg}", brief(v)));
                    }
                } else if re.is_none() {
                    out.push(format!("{at}: bad pattern {arg}"));
                }
            }
            "minimum" | "maximum" => {
                if let (Some(x), Some(bound)) = (v.as_f64(), arg.as_f64()) {
                    let ok = if k == "minimum" {
                        x >= bound
                    } else {
                        x <= bound
                    };
                    if !ok {
                        out.push(format!("{at}: {x} is out of its {k} {bound}"));
                    }
                }
            }
            "anyOf" => {
                let alts = arg.as_array().cloned().unwrap_or_default();
                let fits = alts.iter().any(|a| {
                    let mut o = Vec::new();
                    check(root, a, v, at, &mut o);
                    o.is_empty()
                });
                if !fits {
                    out.push(format!("{at}: {} fits none of anyOf", brief(v)));
                }
            }
            "properties" | "required" | "additionalProperties" => object(root, s, k, v, at, out),
            "items" | "prefixItems" | "minItems" | "maxItems" => array(root, s, k, v, at, out),
            other => out.push(format!(
                "{at}: keyword {other} is not supported by this validator"
            )),
        }
    }
}

fn object(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    k: &str,
    v: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    let Some(o) = v.as_object() else { return };
    let props = s.get("properties").and_then(Value::as_object);
    match k {
        "properties" => {
            for (name, sub) in props.into_iter().flatten() {
                if let Some(x) = o.get(name) {
                    check(root, sub, x, &format!("{at}/{name}"), out);
                }
            }
        }
        "required" => {
            for name in s[k]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !o.contains_key(name) {
                    out.push(format!("{at}: required property {name} is missing"));
                }
            }
        }
        _ => {
            for (name, x) in o {
                if props.is_some_and(|p| p.contains_key(name)) {
                    continue;
                }
                match &s[k] {
                    Value::Bool(false) => out.push(format!("{at}: property {name} is not allowed")),
                    Value::Bool(true) => {}
                    sub => check(root, sub, x, &format!("{at}/{name}"), out),
                }
            }
        }
    }
}

fn array(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    k: &str,
    v: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    let Some(a) = v.as_array() else { return };
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    match k {
        "prefixItems" => {
            for (i, (sub, x)) in prefix.into_iter().flatten().zip(a).enumerate() {
                check(root, sub, x, &format!("{at}/{i}"), out);
            }
        }
        "items" => {
            let skip = prefix.map_or(0, Vec::len);
            for (i, x) in a.iter().enumerate().skip(skip) {
                check(root, &s[k], x, &format!("{at}/{i}"), out);
            }
        }
        _ => {
            let n = s[k].as_u64().unwrap_or(0) as usize;
            if (k == "minItems" && a.len() < n) || (k == "maxItems" && a.len() > n) {
                out.push(format!("{at}: {} items, {k} {n}", a.len()));
            }
        }
    }
}

/// A value shortened for a message.
fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}
