//! Host bindings generated from `wit/`, one module per world, sharing the `types` and `host`
//! interfaces so that an `Action` is the same Rust type whichever role it goes to.

/// The `gate-plugin` world; home of the shared interfaces.
#[allow(missing_docs)]
pub mod gate {
    wasmtime::component::bindgen!({
        world: "gate-plugin",
        path: "../wit",
        additional_derives: [PartialEq, Eq, serde::Serialize],
    });
}

/// The `tool-plugin` world.
#[allow(missing_docs)]
pub mod tool {
    wasmtime::component::bindgen!({
        world: "tool-plugin",
        path: "../wit",
        with: {
            "passepartout:plugin/types": super::gate::passepartout::plugin::types,
            "passepartout:plugin/host": super::gate::passepartout::plugin::host,
        },
    });
}

/// The `skill-plugin` world.
#[allow(missing_docs)]
pub mod skill {
    wasmtime::component::bindgen!({
        world: "skill-plugin",
        path: "../wit",
        with: {
            "passepartout:plugin/types": super::gate::passepartout::plugin::types,
            "passepartout:plugin/host": super::gate::passepartout::plugin::host,
            "passepartout:plugin/memory": super::tool::passepartout::plugin::memory,
        },
    });
}

pub use gate::passepartout::plugin::action_context as action_context_api;
pub use gate::passepartout::plugin::host as host_api;
pub use gate::passepartout::plugin::types;
pub use tool::passepartout::plugin::memory as memory_api;
pub use tool::passepartout::plugin::process as process_api;

/// The same worlds with `async` exports, for calls under hard deadlines
/// ([`super::Deadlines::Hard`]): a call is a future that the host drops at the deadline, even
/// while the guest waits in a host call. Every type and import is the one above.
#[allow(missing_docs)]
pub mod hard {
    /// `gate-plugin`, async exports.
    pub mod gate {
        wasmtime::component::bindgen!({
            world: "gate-plugin",
            path: "../wit",
            exports: { default: async },
            with: {
                "passepartout:plugin/types": super::super::gate::passepartout::plugin::types,
                "passepartout:plugin/host": super::super::gate::passepartout::plugin::host,
                "passepartout:plugin/action-context": super::super::gate::passepartout::plugin::action_context,
            },
        });
    }

    /// `tool-plugin`, async exports.
    pub mod tool {
        wasmtime::component::bindgen!({
            world: "tool-plugin",
            path: "../wit",
            exports: { default: async },
            with: {
                "passepartout:plugin/types": super::super::gate::passepartout::plugin::types,
                "passepartout:plugin/host": super::super::gate::passepartout::plugin::host,
                "passepartout:plugin/process": super::super::tool::passepartout::plugin::process,
                "passepartout:plugin/memory": super::super::tool::passepartout::plugin::memory,
            },
        });
    }

    /// `skill-plugin`, async exports.
    pub mod skill {
        wasmtime::component::bindgen!({
            world: "skill-plugin",
            path: "../wit",
            exports: { default: async },
            with: {
                "passepartout:plugin/types": super::super::gate::passepartout::plugin::types,
                "passepartout:plugin/host": super::super::gate::passepartout::plugin::host,
                "passepartout:plugin/memory": super::super::tool::passepartout::plugin::memory,
            },
        });
    }
}
