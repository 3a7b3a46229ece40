//! The built-in approval policy: it applies the operator's `--policy` file.
//! Without one every operation is allowed.
//!
//! ```toml
//! read_only_users = ["viewer"]   # these users may only browse and read
//! script = false                 # execute and curl are refused
//! ask = ["script"]               # categories a person approves first
//!
//! [navigation]                   # where tabs may go (globs on the host)
//! allow = ["*.example.com", "127.0.0.1"]  # if set, nowhere else
//! deny = ["ads.example.com"]
//! ask = ["pay.example.com"]
//!
//! [curl]                         # where curl may go; defaults to [navigation]
//! allow = ["api.example.com"]
//! ```

use wabp_plugin_sdk::{Category, PluginError, PolicyPlugin, PolicyRequest, Value, Verdict};

struct StandardPolicy;

impl PolicyPlugin for StandardPolicy {
    fn decide(settings: &Value, request: &PolicyRequest) -> Result<Verdict, PluginError> {
        decide(settings, request)
    }
}

wabp_plugin_sdk::export_policy_plugin!(StandardPolicy);

fn category_name(category: Category) -> &'static str {
    match category {
        Category::Navigation => "navigation",
        Category::Mutation => "mutation",
        Category::Input => "input",
        Category::Script => "script",
        Category::Read => "read",
        Category::Lifecycle => "lifecycle",
    }
}

fn strings<'a>(value: &'a Value, key: &str) -> Result<Vec<&'a str>, PluginError> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().ok_or_else(|| PluginError::invalid(format!("policy: {key} lists strings"))))
            .collect(),
        Some(_) => Err(PluginError::invalid(format!("policy: {key} is a list of strings"))),
    }
}

fn decide(settings: &Value, request: &PolicyRequest) -> Result<Verdict, PluginError> {
    let category = category_name(request.category);
    // Read-only users browse (open tabs, navigate: within the lists below)
    // and read; they don't click, type, run script or touch the engine.
    if let Some(user) = &request.user
        && strings(settings, "read_only_users")?.contains(&user.as_str())
        && !matches!(request.category, Category::Read | Category::Navigation)
    {
        return Ok(Verdict::Deny(format!("user {user} may only read ({} is {category})", request.operation)));
    }
    if request.category == Category::Script && settings.get("script") == Some(&Value::Bool(false)) {
        return Ok(Verdict::Deny(format!("script is off ({} runs the caller's own code)", request.operation)));
    }
    // Where the operation goes: navigation by [navigation], curl by [curl]
    // (or [navigation] when it has none).
    let lists = match (request.category, request.operation.as_str()) {
        (Category::Navigation, _) => settings.get("navigation"),
        (_, "curl") => settings.get("curl").or_else(|| settings.get("navigation")),
        _ => None,
    };
    if let (Some(lists), Some(url)) = (lists, &request.target_url) {
        let host = host_of(url);
        let matches = |key| -> Result<bool, PluginError> {
            Ok(strings(lists, key)?.iter().any(|pattern| glob(pattern, host)))
        };
        if matches("deny")? {
            return Ok(Verdict::Deny(format!("{} to {host} is denied", request.operation)));
        }
        let allow = strings(lists, "allow")?;
        if !allow.is_empty() && !url.starts_with("about:blank") && !allow.iter().any(|p| glob(p, host)) {
            return Ok(Verdict::Deny(format!("{host} is not on the allowed list for {}", request.operation)));
        }
        if matches("ask")? {
            return Ok(Verdict::Ask(format!("Confirm {} to {url}", request.operation)));
        }
    }
    if strings(settings, "ask")?.contains(&category) {
        let on = request.target_url.as_deref().or(request.tab_url.as_deref()).map(|u| format!(" on {u}")).unwrap_or_default();
        return Ok(Verdict::Ask(format!("Confirm {}{on}", request.operation)));
    }
    Ok(Verdict::Allow)
}

/// The host of `scheme://[user@]host[:port]/...`; empty for URLs without one.
fn host_of(url: &str) -> &str {
    let Some((_, rest)) = url.split_once("://") else {
        return "";
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.starts_with('[') {
        return host.split_once(']').map_or(host, |(h, _)| &h[1..]);
    }
    host.split(':').next().unwrap_or("")
}

/// `*` matches any run of characters; case-insensitive (host names).
fn glob(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.to_ascii_lowercase(), text.to_ascii_lowercase());
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    if parts.is_empty() {
        return rest.is_empty();
    }
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use wabp_plugin_sdk::json;

    fn request(category: Category, operation: &str, target: Option<&str>, user: Option<&str>) -> PolicyRequest {
        PolicyRequest {
            category,
            operation: operation.into(),
            target_url: target.map(str::to_string),
            tab_url: Some("http://127.0.0.1/".into()),
            user: user.map(str::to_string),
        }
    }

    #[test]
    fn globs_and_hosts() {
        assert!(glob("*.example.com", "a.b.example.com"));
        assert!(!glob("*.example.com", "example.com"));
        assert!(glob("example.*", "EXAMPLE.org"));
        assert!(glob("127.0.0.1", "127.0.0.1"));
        assert!(!glob("127.0.0.1", "127.0.0.10"));
        assert_eq!(host_of("https://u:p@Shop.example.com:8443/x?y"), "Shop.example.com");
        assert_eq!(host_of("http://[::1]:80/"), "::1");
        assert_eq!(host_of("data:text/html,hi"), "");
    }

    #[test]
    fn without_settings_everything_is_allowed() {
        let r = request(Category::Script, "execute", None, Some("ada"));
        assert_eq!(decide(&json!({}), &r).unwrap(), Verdict::Allow);
    }

    #[test]
    fn domains_users_script_and_asks() {
        let settings = json!({
            "read_only_users": ["viewer"],
            "script": false,
            "ask": ["input"],
            "navigation": { "allow": ["*.example.com", "127.0.0.1"], "deny": ["ads.example.com"], "ask": ["pay.example.com"] },
        });
        let verdict = |r: PolicyRequest| decide(&settings, &r).unwrap();
        assert_eq!(verdict(request(Category::Navigation, "navigate", Some("http://127.0.0.1:9/a"), None)), Verdict::Allow);
        assert!(matches!(verdict(request(Category::Navigation, "navigate", Some("https://ads.example.com/"), None)), Verdict::Deny(r) if r.contains("denied")));
        assert!(matches!(verdict(request(Category::Navigation, "navigate", Some("https://other.org/"), None)), Verdict::Deny(r) if r.contains("allowed list")));
        assert!(matches!(verdict(request(Category::Navigation, "navigate", Some("https://pay.example.com/"), None)), Verdict::Ask(p) if p.contains("pay.example.com")));
        assert_eq!(verdict(request(Category::Navigation, "create_tab", Some("about:blank"), None)), Verdict::Allow);
        // curl falls back to [navigation].
        assert!(matches!(verdict(request(Category::Read, "curl", Some("https://other.org/"), None)), Verdict::Deny(_)));
        assert!(matches!(verdict(request(Category::Script, "execute", None, None)), Verdict::Deny(r) if r.contains("script is off")));
        assert!(matches!(verdict(request(Category::Mutation, "action:click", None, Some("viewer"))), Verdict::Deny(r) if r.contains("may only read")));
        assert_eq!(verdict(request(Category::Read, "snapshot", None, Some("viewer"))), Verdict::Allow);
        assert_eq!(verdict(request(Category::Navigation, "create_tab", Some("http://127.0.0.1/"), Some("viewer"))), Verdict::Allow);
        assert!(matches!(verdict(request(Category::Input, "action:type", None, Some("viewer"))), Verdict::Deny(_)));
        assert!(matches!(verdict(request(Category::Input, "action:type", None, None)), Verdict::Ask(p) if p.contains("127.0.0.1")));
    }
}
