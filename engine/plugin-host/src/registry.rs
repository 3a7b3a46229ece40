//! The registry: plugin slots (built-in or folder), the lookup maps built
//! from them, and loading/reloading. A lookup hands out an `Arc` of the
//! current version, so swaps never disturb calls in flight.

use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wabp_model::plugin::{
    ActionHandler, ActionSpec, ApprovalPolicy, MarkupRenderer, PluginInfo, PluginRegistry,
    RequestInterceptor, WaitHeuristic, WaitSpec,
};

use crate::error::{Error, Result};
use crate::loaded::{Exports, InterceptorPlugin, LoadedPlugin, PolicyPlugin, WaitPlugin};
use crate::manifest::Manifest;
use crate::runtime::{Runtime, content_hash};

/// Where a plugin came from. Folder plugins override built-in ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Builtin(String),
    Folder(PathBuf),
}

impl Source {
    fn describe(&self) -> String {
        match self {
            Source::Builtin(_) => "builtin".into(),
            Source::Folder(path) => path.display().to_string(),
        }
    }
}

struct Slot {
    source: Source,
    /// The manifest as last read, even if loading it failed.
    manifest: Option<Manifest>,
    active: Option<Arc<LoadedPlugin>>,
    last_error: Option<String>,
    /// The bytes whose load failed, so an unchanged broken file isn't retried.
    failed_hash: Option<[u8; 32]>,
    loaded_at_ms: u64,
}

#[derive(Default)]
struct Lookup {
    actions: BTreeMap<String, (Arc<LoadedPlugin>, ActionSpec)>,
    markup: BTreeMap<String, Arc<LoadedPlugin>>,
    waits: BTreeMap<String, (Arc<WaitPlugin>, WaitSpec)>,
    /// By plugin name: a folder plugin of the same name replaces a built-in.
    policies: BTreeMap<String, Arc<PolicyPlugin>>,
    /// By plugin name, like policies.
    interceptors: BTreeMap<String, Arc<InterceptorPlugin>>,
}

pub struct Registry {
    runtime: Arc<Runtime>,
    slots: RwLock<Vec<Slot>>,
    lookup: RwLock<Arc<Lookup>>,
    changes: tokio::sync::watch::Sender<u64>,
    /// Serialises reloads: two scans never interleave.
    reload_lock: tokio::sync::Mutex<()>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Registry {
    pub fn new() -> Result<Arc<Registry>> {
        Ok(Arc::new(Registry {
            runtime: Runtime::shared()?,
            slots: RwLock::new(Vec::new()),
            lookup: RwLock::new(Arc::new(Lookup::default())),
            changes: tokio::sync::watch::channel(0).0,
            reload_lock: tokio::sync::Mutex::new(()),
        }))
    }

    /// Loads a built-in plugin; a failure here is a build defect, so it's an error.
    pub async fn load_builtin(&self, manifest_text: &str, bytes: Vec<u8>) -> Result<()> {
        let manifest = Manifest::parse(manifest_text)?;
        let source = Source::Builtin(manifest.name.clone());
        let plugin = LoadedPlugin::load(self.runtime.clone(), manifest.clone(), bytes).await?;
        self.put(source, Some(manifest), Ok(Arc::new(plugin)), None);
        Ok(())
    }

    /// Loads (or reloads) the plugin in one folder. On failure the previous
    /// version keeps serving and the error is recorded.
    pub async fn load_folder_plugin(&self, dir: &Path) -> Result<()> {
        let source = Source::Folder(dir.to_path_buf());
        let manifest_path = dir.join("plugin.toml");
        let read = |path: &Path| {
            std::fs::read(path).map_err(|e| Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let manifest = match read(&manifest_path)
            .and_then(|b| Manifest::parse(&String::from_utf8_lossy(&b)))
        {
            Ok(m) => m,
            Err(e) => {
                self.put(source, None, Err(e.to_string()), None);
                return Err(e);
            }
        };
        let bytes = match read(&dir.join(&manifest.component)) {
            Ok(b) => b,
            Err(e) => {
                self.put(source, Some(manifest), Err(e.to_string()), None);
                return Err(e);
            }
        };
        let hash = content_hash(&bytes);
        let unchanged = {
            let slots = self.slots.read();
            slots.iter().find(|s| s.source == source).is_some_and(|s| {
                s.active.as_ref().is_some_and(|a| {
                    a.hash == hash
                        && a.manifest.version == manifest.version
                        && a.manifest.capabilities == manifest.capabilities
                }) || s.failed_hash == Some(hash)
            })
        };
        if unchanged {
            return Ok(());
        }
        match LoadedPlugin::load(self.runtime.clone(), manifest.clone(), bytes).await {
            Ok(plugin) => {
                tracing::info!(plugin = %manifest.name, version = %manifest.version, dir = %dir.display(), provides = ?plugin.provides(), "plugin loaded");
                self.put(source, Some(manifest), Ok(Arc::new(plugin)), None);
                Ok(())
            }
            Err(e) => {
                tracing::warn!(plugin = %manifest.name, dir = %dir.display(), "plugin failed to load, previous version (if any) keeps serving: {e}");
                self.put(source, Some(manifest), Err(e.to_string()), Some(hash));
                Err(e)
            }
        }
    }

    /// Loads every plugin folder under `root`, and drops slots whose folder
    /// is gone. Individual failures are recorded, not returned.
    pub async fn scan(&self, root: &Path) {
        let _turn = self.reload_lock.lock().await;
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.join("plugin.toml").is_file())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        for dir in &dirs {
            let _ = self.load_folder_plugin(dir).await;
        }
        let removed = {
            let mut slots = self.slots.write();
            let before = slots.len();
            slots.retain(|s| match &s.source {
                Source::Folder(path) => !path.starts_with(root) || dirs.contains(path),
                Source::Builtin(_) => true,
            });
            before != slots.len()
        };
        if removed {
            self.rebuild();
        }
    }

    fn put(
        &self,
        source: Source,
        manifest: Option<Manifest>,
        outcome: std::result::Result<Arc<LoadedPlugin>, String>,
        failed_hash: Option<[u8; 32]>,
    ) {
        {
            let mut slots = self.slots.write();
            let index = match slots.iter().position(|s| s.source == source) {
                Some(i) => i,
                None => {
                    slots.push(Slot {
                        source: source.clone(),
                        manifest: None,
                        active: None,
                        last_error: None,
                        failed_hash: None,
                        loaded_at_ms: 0,
                    });
                    slots.len() - 1
                }
            };
            let slot = &mut slots[index];
            slot.manifest = manifest;
            match outcome {
                Ok(plugin) => {
                    slot.active = Some(plugin);
                    slot.last_error = None;
                    slot.failed_hash = None;
                    slot.loaded_at_ms = now_ms();
                }
                Err(error) => {
                    slot.last_error = Some(error);
                    slot.failed_hash = failed_hash;
                }
            }
            slots.sort_by(|a, b| a.source.cmp(&b.source));
        }
        self.rebuild();
    }

    /// Rebuilds the lookup maps: built-ins first, folder plugins override.
    fn rebuild(&self) {
        let mut lookup = Lookup::default();
        let slots = self.slots.read();
        for slot in slots.iter() {
            let Some(plugin) = &slot.active else { continue };
            let overriding = matches!(slot.source, Source::Folder(_));
            match &plugin.exports {
                Exports::Action { specs, .. } => {
                    for spec in specs {
                        if let Some((old, _)) = lookup
                            .actions
                            .insert(spec.name.clone(), (plugin.clone(), spec.clone()))
                        {
                            if overriding {
                                tracing::info!(
                                    "action {:?}: plugin {} overrides {}",
                                    spec.name,
                                    plugin.name,
                                    old.name
                                );
                            }
                        }
                    }
                }
                Exports::Markup { tags, .. } => {
                    for tag in tags {
                        if let Some(old) = lookup.markup.insert(tag.clone(), plugin.clone()) {
                            if overriding {
                                tracing::info!(
                                    "markup tag {tag:?}: plugin {} overrides {}",
                                    plugin.name,
                                    old.name
                                );
                            }
                        }
                    }
                }
                Exports::Policy { .. } => {
                    lookup.policies.insert(
                        plugin.name.to_string(),
                        Arc::new(PolicyPlugin(plugin.clone())),
                    );
                }
                Exports::Interceptor { .. } => {
                    lookup.interceptors.insert(
                        plugin.name.to_string(),
                        Arc::new(InterceptorPlugin(plugin.clone())),
                    );
                }
                Exports::Wait { specs, .. } => {
                    let wait = Arc::new(WaitPlugin(plugin.clone()));
                    for spec in specs {
                        if let Some((old, _)) = lookup
                            .waits
                            .insert(spec.name.clone(), (wait.clone(), spec.clone()))
                        {
                            if overriding {
                                tracing::info!(
                                    "wait type {:?}: plugin {} overrides {}",
                                    spec.name,
                                    plugin.name,
                                    old.0.name
                                );
                            }
                        }
                    }
                }
            }
        }
        drop(slots);
        *self.lookup.write() = Arc::new(lookup);
        self.changes.send_modify(|n| *n += 1);
    }

    fn current(&self) -> Arc<Lookup> {
        self.lookup.read().clone()
    }
}

impl PluginRegistry for Registry {
    fn action(&self, name: &str) -> Option<Arc<dyn ActionHandler>> {
        self.current()
            .actions
            .get(name)
            .map(|(p, _)| p.clone() as Arc<dyn ActionHandler>)
    }
    fn actions(&self) -> Vec<ActionSpec> {
        self.current()
            .actions
            .values()
            .map(|(_, spec)| spec.clone())
            .collect()
    }
    fn markup(&self, tag: &str) -> Option<Arc<dyn MarkupRenderer>> {
        self.current()
            .markup
            .get(tag)
            .map(|p| p.clone() as Arc<dyn MarkupRenderer>)
    }
    fn markup_tags(&self) -> Vec<String> {
        self.current().markup.keys().cloned().collect()
    }
    fn wait(&self, wait_type: &str) -> Option<Arc<dyn WaitHeuristic>> {
        self.current()
            .waits
            .get(wait_type)
            .map(|(w, _)| w.clone() as Arc<dyn WaitHeuristic>)
    }
    fn waits(&self) -> Vec<WaitSpec> {
        self.current()
            .waits
            .values()
            .map(|(_, spec)| spec.clone())
            .collect()
    }
    fn plugins(&self) -> Vec<PluginInfo> {
        let slots = self.slots.read();
        slots
            .iter()
            .map(|slot| {
                let manifest = slot
                    .active
                    .as_ref()
                    .map(|a| &a.manifest)
                    .or(slot.manifest.as_ref());
                let status = match (&slot.active, &slot.last_error) {
                    (Some(_), None) => "active",
                    (Some(_), Some(_)) => "reload_failed",
                    (None, _) => "failed",
                };
                PluginInfo {
                    name: manifest
                        .map(|m| m.name.clone())
                        .unwrap_or_else(|| slot.source.describe()),
                    kind: manifest
                        .map(|m| m.kind.as_str().to_string())
                        .unwrap_or_default(),
                    version: slot
                        .active
                        .as_ref()
                        .map(|a| a.manifest.version.clone())
                        .or_else(|| manifest.map(|m| m.version.clone()))
                        .unwrap_or_default(),
                    description: manifest.map(|m| m.description.clone()).unwrap_or_default(),
                    source: slot.source.describe(),
                    provides: slot
                        .active
                        .as_ref()
                        .map(|a| a.provides())
                        .unwrap_or_default(),
                    capabilities: manifest
                        .map(|m| {
                            m.capabilities
                                .iter()
                                .map(|c| c.interface().to_string())
                                .collect()
                        })
                        .unwrap_or_default(),
                    status: status.into(),
                    last_error: slot.last_error.clone(),
                    last_failure: slot
                        .active
                        .as_ref()
                        .and_then(|a| a.last_failure.lock().clone()),
                    loaded_at_ms: slot.loaded_at_ms,
                    instances: slot.active.as_ref().map(|a| a.instance_stats()),
                }
            })
            .collect()
    }
    fn policies(&self) -> Vec<Arc<dyn ApprovalPolicy>> {
        self.current()
            .policies
            .values()
            .map(|p| p.clone() as Arc<dyn ApprovalPolicy>)
            .collect()
    }
    fn interceptors(&self) -> Vec<Arc<dyn RequestInterceptor>> {
        self.current()
            .interceptors
            .values()
            .map(|p| p.clone() as Arc<dyn RequestInterceptor>)
            .collect()
    }
    fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
