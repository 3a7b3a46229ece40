//! The caller's cookies: `/cookies`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use wabp_core::engine::cookies::{Cookie, CookieFilter, NewCookie};

use super::{json, to_json};
use crate::{Operation, Scope};

#[derive(Deserialize, JsonSchema)]
struct ReadCookies {
    /// Only the cookies a request to this URL carries.
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct SetCookies {
    /// The cookies to set: each with `url`, or `domain` (and `path`).
    #[serde(default)]
    cookies: Option<Vec<NewCookie>>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteCookies {
    /// Only the cookies a request to this URL carries.
    #[serde(default)]
    url: Option<String>,
    /// Only cookies of this name.
    #[serde(default)]
    name: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Cookies {
    cookies: Vec<Cookie>,
}

#[derive(Serialize, JsonSchema)]
struct CookiesSet {
    set: usize,
}

#[derive(Serialize, JsonSchema)]
struct CookiesDeleted {
    deleted: usize,
}

pub fn operations() -> Vec<Operation> {
    vec![
        Operation::new(
            "get_cookies",
            "The caller's cookies (httpOnly included), or those a request to `url` carries.",
            |ctx, input: ReadCookies| async move {
                json(to_json(&Cookies {
                    cookies: ctx.engine.cookies(&ctx.caller, input.url.as_deref()).await?,
                })?)
            },
        )
        .get("/cookies")
        .tool("browser_get_cookies")
        .answers::<Cookies>(),
        Operation::new(
            "set_cookies",
            "Set cookies in the caller's browser context, e.g. a logged-in session imported from elsewhere.",
            |ctx, input: SetCookies| async move {
                let cookies = input.cookies.ok_or_else(|| {
                    wabp_core::Error::invalid("\"cookies\" is required: a list of {name, value, url | domain+path, ...}")
                })?;
                json(to_json(&CookiesSet {
                    set: ctx.engine.set_cookies(&ctx.caller, cookies).await?,
                })?)
            },
        )
        .post("/cookies")
        .tool("browser_set_cookies")
        .answers::<CookiesSet>()
        .scope(Scope::Act),
        Operation::new(
            "delete_cookies",
            "Delete the caller's cookies: all of them, or those a request to `url` carries, or those named `name`.",
            |ctx, input: DeleteCookies| async move {
                let filter = CookieFilter {
                    url: input.url,
                    name: input.name,
                };
                json(to_json(&CookiesDeleted {
                    deleted: ctx.engine.delete_cookies(&ctx.caller, filter).await?,
                })?)
            },
        )
        .delete("/cookies")
        .tool("browser_delete_cookies")
        .answers::<CookiesDeleted>()
        .scope(Scope::Act),
    ]
}
