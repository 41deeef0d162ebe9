//! Tool identity: the rules a tool's name and `describe()` output must follow, the names the
//! first-party plugins reserve, and policy aliases.
//!
//! A tool is known by its plugin and its name. The name is what the model and clients see, so
//! it must fit their rules (OpenAI and Anthropic accept `[a-zA-Z0-9_-]`), be unambiguous among
//! every loaded plugin, and never be one a first-party plugin uses, even when that plugin is
//! disabled: gates that trust a name (`shell`, `write-file`) must never judge a third-party
//! tool as the built-in one.

use std::collections::BTreeMap;

use super::types::ToolInfo;

/// The most tools one plugin may offer.
pub const MAX_TOOLS: usize = 64;
/// The longest description a tool may have, bytes.
pub const MAX_DESCRIPTION: usize = 4 << 10;
/// The largest parameters schema a tool may have, bytes.
pub const MAX_SCHEMA: usize = 64 << 10;

/// The tool names of the first-party plugins, with the plugin that offers each. Reserved even
/// when the plugin is disabled. (A test checks this against what the plugins describe.)
pub const RESERVED: &[(&str, &str)] = &[
    ("eval", "eval"),
    ("files", "list-directory"),
    ("files", "read-file"),
    ("files", "search-files"),
    ("files", "write-file"),
    ("http-fetch", "http-fetch"),
    ("memory", "memory-assign-id"),
    ("memory", "memory-get"),
    ("memory", "memory-outline"),
    ("memory", "memory-query"),
    ("shell", "shell"),
];

/// Whether `name` is a valid tool name: `^[a-z][a-z0-9-]{0,63}$`.
pub fn valid_name(name: &str) -> bool {
    lowercase_name(name, 64)
}

/// Whether `name` is at most `max` lowercase ASCII letters, digits and `-`, starting with a
/// letter: the rule of tool names, and (shorter) of MCP server names.
pub fn lowercase_name(name: &str, max: usize) -> bool {
    let mut chars = name.chars();
    name.len() <= max
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Shown for a name that breaks the rule (escaped, and cut when long).
fn shown(name: &str) -> String {
    let mut s: String = name.chars().take(80).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// Check what a plugin's `describe()` returned.
///
/// # Errors
/// The first rule broken, naming the tool and the rule.
pub fn check(tools: &[ToolInfo]) -> Result<(), String> {
    if tools.len() > MAX_TOOLS {
        return Err(format!(
            "describe lists {} tools; a plugin may offer at most {MAX_TOOLS}",
            tools.len()
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for t in tools {
        if !valid_name(&t.name) {
            return Err(format!(
                "tool name {}: a tool name must match ^[a-z][a-z0-9-]{{0,63}}$ (lowercase \
                 ASCII letters, digits and `-`, starting with a letter, at most 64)",
                shown(&t.name)
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(format!("describe lists the tool {:?} twice", t.name));
        }
        if t.description.len() > MAX_DESCRIPTION {
            return Err(format!(
                "tool {:?}: its description is {} bytes; at most {MAX_DESCRIPTION}",
                t.name,
                t.description.len()
            ));
        }
        if t.parameters.len() > MAX_SCHEMA {
            return Err(format!(
                "tool {:?}: its parameters schema is {} bytes; at most {MAX_SCHEMA}",
                t.name,
                t.parameters.len()
            ));
        }
        check_schema(&t.parameters).map_err(|why| format!("tool {:?}: {why}", t.name))?;
    }
    Ok(())
}

/// A tool's parameters must be a JSON Schema for an object: a JSON object whose `type`, when
/// given, is `"object"`, and whose `properties`, when given, map names to schema objects.
fn check_schema(text: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("parameters is not valid JSON: {e}"))?;
    let Some(schema) = value.as_object() else {
        return Err("parameters is not a JSON Schema object".into());
    };
    if let Some(ty) = schema.get("type")
        && ty != "object"
    {
        return Err(format!(
            "parameters has type {ty}; the arguments are always an object: use \"object\""
        ));
    }
    if let Some(props) = schema.get("properties") {
        let Some(props) = props.as_object() else {
            return Err("parameters.properties is not an object".into());
        };
        if let Some((name, _)) = props
            .iter()
            .find(|(_, v)| !v.is_object() && !v.is_boolean())
        {
            return Err(format!(
                "parameters.properties.{name} is not a schema (an object or a boolean)"
            ));
        }
    }
    Ok(())
}

/// Rename `tools` by the policy's `aliases` (the plugin's name -> the name offered). Returns
/// offered name -> the plugin's own name, for the aliased ones.
///
/// # Errors
/// An alias for a tool the plugin does not offer, or an alias that is not a valid tool name.
pub fn alias(
    tools: &mut [ToolInfo],
    aliases: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    // Every alias is resolved against the plugin's own names, never against another alias:
    // `{a = "b", b = "a"}` must not hand the model one tool's schema for the other.
    let own_names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let mut offered = BTreeMap::new();
    for (own, alias) in aliases {
        if !valid_name(alias) {
            return Err(format!(
                "policy.toml tool_aliases: {} is not a valid tool name (^[a-z][a-z0-9-]{{0,63}}$)",
                shown(alias)
            ));
        }
        if alias != own && own_names.contains(alias) {
            return Err(format!(
                "policy.toml tool_aliases: {alias:?} is already the name of another of this \
                 plugin's tools; pick a name it does not use"
            ));
        }
        let Some(i) = own_names.iter().position(|n| n == own) else {
            return Err(format!(
                "policy.toml tool_aliases names the tool {own:?}, which this plugin does not offer"
            ));
        };
        tools[i].name = alias.clone();
        offered.insert(alias.clone(), own.clone());
    }
    check(tools)?;
    Ok(offered)
}

/// The first-party plugin that reserves tool `name`, if any.
pub fn reserved_by(name: &str) -> Option<&'static str> {
    RESERVED
        .iter()
        .find(|(_, tool)| *tool == name)
        .map(|(plugin, _)| *plugin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_rule() {
        for good in ["a", "read-file", "x9", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in [
            "",
            "Shell",
            "9a",
            "-a",
            "a b",
            "a\nb",
            "a_b",
            "../../etc/passwd",
            "ѕhell",
            &"a".repeat(65),
            "a/b",
        ] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    fn info(name: &str) -> ToolInfo {
        ToolInfo {
            name: name.into(),
            description: String::new(),
            parameters: "{}".into(),
            read_only: false,
        }
    }

    #[test]
    fn aliases_never_swap_two_tools() {
        let mut tools = vec![info("a"), info("b")];
        let swap: BTreeMap<String, String> =
            [("a".into(), "b".into()), ("b".into(), "a".into())].into();
        let err = alias(&mut tools, &swap).expect_err("refused");
        assert!(err.contains("already the name"), "{err}");
        let mut tools = vec![info("a"), info("b")];
        let fine: BTreeMap<String, String> = [("a".into(), "vendor-a".into())].into();
        let map = alias(&mut tools, &fine).expect("renamed");
        assert_eq!(map.get("vendor-a").map(String::as_str), Some("a"));
        assert_eq!(tools[0].name, "vendor-a");
    }

    #[test]
    fn schemas_must_describe_an_object() {
        assert!(check_schema(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#).is_ok());
        assert!(check_schema("{}").is_ok());
        assert!(check_schema("[]").is_err());
        assert!(check_schema(r#"{"type":"string"}"#).is_err());
        assert!(check_schema(r#"{"properties":{"a":3}}"#).is_err());
        assert!(check_schema("{").is_err());
    }
}
