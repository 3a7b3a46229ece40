//! Generated bindings for the plugin worlds, in one place. The action
//! world generates the shared types and host interfaces; the others reuse
//! them with `with:` so one host implementation serves all.

pub mod action {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "action-handler",
        imports: { default: async },
        exports: { default: async },
    });
}

pub mod markup {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "markup-renderer",
        imports: { default: async },
        exports: { default: async },
        with: {
            "wabp:plugin/types": super::action::wabp::plugin::types,
            "wabp:plugin/log": super::action::wabp::plugin::log,
        },
    });
}

pub mod wait {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "wait-heuristic",
        imports: { default: async },
        exports: { default: async },
        with: {
            "wabp:plugin/types": super::action::wabp::plugin::types,
            "wabp:plugin/log": super::action::wabp::plugin::log,
        },
    });
}

pub mod policy {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "approval-policy",
        imports: { default: async },
        exports: { default: async },
        with: {
            "wabp:plugin/types": super::action::wabp::plugin::types,
            "wabp:plugin/log": super::action::wabp::plugin::log,
        },
    });
}

pub mod interceptor {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "request-interceptor",
        imports: { default: async },
        exports: { default: async },
        with: {
            "wabp:plugin/types": super::action::wabp::plugin::types,
            "wabp:plugin/log": super::action::wabp::plugin::log,
        },
    });
}

pub use action::wabp::plugin::types;
