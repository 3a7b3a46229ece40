//! wabp embedded in a Rust program: launch an engine, open a page, read its
//! JSON snapshot, act by ref, selector and point, and read what the actions
//! answered. `cargo run --example embed [URL]` (default: a page of its own).

use wabp::embed::{BrowserConfig, Target, Wabp};

const PAGE: &str = "data:text/html,<title>Greeter</title><h1>Greeter</h1>\
<label>Name <input id=name></label>\
<button id=greet onclick=\"out.textContent='Hello '+document.getElementById('name').value\">Greet</button>\
<p id=out></p><button id=count style='position:absolute;left:20px;top:200px;width:120px;height:40px' \
onclick='this.textContent=Number(this.textContent)+1'>0</button>";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::args().nth(1).unwrap_or_else(|| PAGE.to_string());
    let wabp = Wabp::launch(BrowserConfig::default()).await?;
    let tab = wabp.open_tab(&url).await?;

    // Every element of the JSON snapshot has a ref_id.
    let snapshot = tab.snapshot_json().await?;
    println!("title: {}", snapshot["page_title"]);
    let name_ref = find(&snapshot["elements"], "textbox", "Name")
        .ok_or_else(|| anyhow::anyhow!("no Name field in {snapshot}"))?;
    println!("name field: {name_ref}");

    // By ref, by selector, by point: each answers the action's envelope.
    tab.fill(Target::Ref(name_ref), "Ada").await?;
    let clicked = tab.click(Target::Selector("#greet".into())).await?;
    println!(
        "greet click: {} event(s), recorded as {}",
        clicked.events.len(),
        clicked.action_id.as_deref().unwrap_or("-")
    );
    let greeting = tab
        .evaluate("document.getElementById('out').textContent")
        .await?;
    println!("greeting: {}", greeting.as_str().unwrap_or_default());
    tab.click(Target::Point(80.0, 220.0)).await?;
    println!(
        "counter: {}",
        tab.evaluate("document.getElementById('count').textContent")
            .await?
    );

    // A stale ref fails loudly, with the engine's code.
    tab.navigate("about:blank").await?;
    if let Err(e) = tab.click(Target::Ref("e1".into())).await {
        println!("after navigating away: {}", e.code.as_str());
    }
    println!("actions loaded: {}", wabp.actions().len());
    wabp.shutdown().await;
    Ok(())
}

/// The ref of the first element with this role and name.
fn find(elements: &serde_json::Value, role: &str, name: &str) -> Option<String> {
    for element in elements.as_array()? {
        if element["role"] == role && element["name"] == name {
            return element["ref_id"].as_str().map(str::to_string);
        }
        if let Some(found) = find(&element["children"], role, name) {
            return Some(found);
        }
    }
    None
}
