//! The plugin host's errors: a manifest, a file, a plugin that failed to
//! load or refused a call. Each names the plugin it is about.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("plugin.toml: {0}")]
    Manifest(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("plugin {plugin}: {message}")]
    Load { plugin: String, message: String },
    #[error(
        "plugin {plugin} imports {interface}, which its manifest does not grant (capabilities = [{granted}])"
    )]
    Ungranted {
        plugin: String,
        interface: String,
        granted: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
