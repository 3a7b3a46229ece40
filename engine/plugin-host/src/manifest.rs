//! `plugin.toml`: what a plugin is, what it may do and its limits.

use serde::Deserialize;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Action,
    Markup,
    Wait,
    Policy,
    Interceptor,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Action => "action",
            Kind::Markup => "markup",
            Kind::Wait => "wait",
            Kind::Policy => "policy",
            Kind::Interceptor => "interceptor",
        }
    }
}

/// A host capability: one WIT interface of `wabp:plugin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    Input,
    Page,
    Script,
    Navigation,
    Log,
    Clock,
}

impl Capability {
    pub const ALL: [Capability; 6] = [
        Capability::Input,
        Capability::Page,
        Capability::Script,
        Capability::Navigation,
        Capability::Log,
        Capability::Clock,
    ];

    pub fn interface(self) -> &'static str {
        match self {
            Capability::Input => "input",
            Capability::Page => "page",
            Capability::Script => "script",
            Capability::Navigation => "navigation",
            Capability::Log => "log",
            Capability::Clock => "clock",
        }
    }

    pub fn from_interface(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.interface() == name)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Per-call deadline.
    pub timeout_ms: Option<u64>,
    /// Memory limit of one instance (a warm instance keeps what it grew).
    pub memory_mb: Option<u64>,
    /// Idle instances kept warm between calls (0: a fresh instance for
    /// every call). Default 4, at most 16.
    pub warm_instances: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub kind: Kind,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// The component's file name beside the manifest.
    #[serde(default = "default_component")]
    pub component: String,
    pub limits: Option<Limits>,
}

fn default_component() -> String {
    "plugin.wasm".into()
}

pub const DEFAULT_MEMORY_MB: u64 = 64;
/// Idle instances a plugin keeps unless its manifest says otherwise.
pub const DEFAULT_WARM_INSTANCES: u32 = 4;
/// The most idle instances a manifest may ask for.
pub const MAX_WARM_INSTANCES: u32 = 16;

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest> {
        let manifest: Manifest =
            toml::from_str(text).map_err(|e| Error::Manifest(e.to_string()))?;
        if manifest.name.is_empty()
            || !manifest
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(Error::Manifest(format!(
                "name {:?} must be non-empty ASCII letters, digits, '-' or '_'",
                manifest.name
            )));
        }
        if manifest.component.contains('/') || manifest.component.contains("..") {
            return Err(Error::Manifest(
                "component must be a file name beside plugin.toml".into(),
            ));
        }
        Ok(manifest)
    }

    pub fn grants(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    pub fn timeout(&self) -> std::time::Duration {
        let default = match self.kind {
            Kind::Action => 60_000,
            Kind::Markup => 5_000,
            Kind::Wait => 2_000,
            // Asked before every operation: it must be quick.
            Kind::Policy => 1_000,
            // Asked about every request while loaded.
            Kind::Interceptor => 1_000,
        };
        std::time::Duration::from_millis(
            self.limits
                .as_ref()
                .and_then(|l| l.timeout_ms)
                .unwrap_or(default),
        )
    }

    pub fn memory_bytes(&self) -> usize {
        (self
            .limits
            .as_ref()
            .and_then(|l| l.memory_mb)
            .unwrap_or(DEFAULT_MEMORY_MB) as usize)
            << 20
    }

    /// How many idle instances to keep between calls.
    pub fn warm_instances(&self) -> usize {
        self.limits
            .as_ref()
            .and_then(|l| l.warm_instances)
            .unwrap_or(DEFAULT_WARM_INSTANCES)
            .min(MAX_WARM_INSTANCES) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let m = Manifest::parse("name = \"a\"\nversion = \"1\"\nkind = \"action\"\ncapabilities = [\"input\", \"log\"]\n[limits]\ntimeout_ms = 5").unwrap();
        assert!(m.grants(Capability::Input) && !m.grants(Capability::Script));
        assert_eq!(m.timeout().as_millis(), 5);
        assert_eq!(m.warm_instances(), DEFAULT_WARM_INSTANCES as usize);
        let cold = Manifest::parse(
            "name = \"a\"\nversion = \"1\"\nkind = \"policy\"\n[limits]\nwarm_instances = 0",
        )
        .unwrap();
        assert_eq!(cold.warm_instances(), 0);
        let greedy = Manifest::parse(
            "name = \"a\"\nversion = \"1\"\nkind = \"policy\"\n[limits]\nwarm_instances = 900",
        )
        .unwrap();
        assert_eq!(greedy.warm_instances(), MAX_WARM_INSTANCES as usize);
        assert!(Manifest::parse("name = \"a\"\nversion = \"1\"\nkind = \"bogus\"").is_err());
        assert!(Manifest::parse("name = \"a b\"\nversion = \"1\"\nkind = \"wait\"").is_err());
        assert!(
            Manifest::parse(
                "name = \"a\"\nversion = \"1\"\nkind = \"wait\"\ncapabilities = [\"fs\"]"
            )
            .is_err()
        );
    }
}
