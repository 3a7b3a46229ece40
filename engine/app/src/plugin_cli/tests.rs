use super::build::{component_artifact, has_target, mentions_missing_target};
use super::scaffold::{relative_path, sdk_dependency, toml_string};
use super::*;

#[test]
fn names() {
    for ok in ["a", "fill-form", "shop_pack2"] {
        check_name(ok).unwrap();
    }
    for bad in ["", "2fast", "Fill", "a b", "a/b", "-x", &"x".repeat(65)] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn relative_paths() {
    let rel = relative_path(
        Path::new("/w/repo/target/x/p"),
        Path::new("/w/repo/plugins/sdk"),
    );
    assert_eq!(rel.unwrap(), PathBuf::from("../../../plugins/sdk"));
    assert_eq!(
        relative_path(Path::new("/tmp/p"), Path::new("/w/sdk")),
        None
    );
}

#[test]
fn a_git_sdk_is_a_git_dependency_with_the_kind_feature() {
    let (line, shown, lock) = sdk_dependency(
        &SdkSource::Git {
            url: "https://example.org/wabp.git".into(),
            rev: Some("v0.1".into()),
        },
        Path::new("/tmp/p"),
        PluginKind::Markup,
    )
    .unwrap();
    let parsed: toml::Table = toml::from_str(&line).expect("a TOML line");
    let dep = &parsed[SDK_PACKAGE];
    assert_eq!(dep["git"].as_str(), Some("https://example.org/wabp.git"));
    assert_eq!(dep["rev"].as_str(), Some("v0.1"));
    assert_eq!(dep["features"][0].as_str(), Some("markup"));
    assert_eq!(shown, "git https://example.org/wabp.git");
    assert!(lock.is_none(), "no lock to seed from a remote SDK");
}

#[test]
fn toml_strings_are_escaped() {
    assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
}

#[test]
fn finds_the_component_artifact() {
    let toml = Path::new("/p/Cargo.toml");
    let line = r#"{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","target":{"kind":["cdylib"],"name":"p"},"filenames":["/t/wasm32-wasip2/release/p.wasm"]}"#;
    assert_eq!(
        component_artifact(line, toml),
        Some(PathBuf::from("/t/wasm32-wasip2/release/p.wasm"))
    );
    let dep = r#"{"reason":"compiler-artifact","manifest_path":"/sdk/Cargo.toml","target":{"kind":["lib"]},"filenames":["/t/libsdk.rlib"]}"#;
    assert_eq!(component_artifact(dep, toml), None);
    assert_eq!(component_artifact("not json", toml), None);
}

#[test]
fn recognises_a_missing_target() {
    assert!(mentions_missing_target(
        "error[E0463]: can't find crate for `core`\n  = note: the `wasm32-wasip2` target may not be installed"
    ));
    assert!(!mentions_missing_target(
        "error[E0425]: cannot find value `x` in this scope"
    ));
    assert!(!has_target(Path::new("/nonexistent-sysroot")));
}

#[test]
fn new_refuses_a_non_empty_folder_and_bad_sdk() {
    let dir = std::env::temp_dir().join(format!("wabp-new-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("taken")).unwrap();
    std::fs::write(dir.join("taken").join("x"), "x").unwrap();
    let e = new_plugin(
        "taken",
        PluginKind::Action,
        &dir.join("taken"),
        &SdkSource::Auto,
    )
    .unwrap_err();
    assert!(e.to_string().contains("not empty"), "{e}");
    let e = new_plugin(
        "p",
        PluginKind::Action,
        &dir.join("p"),
        &SdkSource::Path(dir.clone()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("neither a wabp checkout"), "{e}");
    assert!(!dir.join("p").exists(), "nothing written on failure");
    let _ = std::fs::remove_dir_all(&dir);
}
