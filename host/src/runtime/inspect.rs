//! Reading a component without running it: its imports and exports, by interface name.

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Component;

/// What a component imports and exports (WIT interface names with versions).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Interfaces {
    /// Imported interfaces, sorted, e.g. `wasi:filesystem/types@0.2.6`.
    pub imports: Vec<String>,
    /// Exported interfaces, sorted, e.g. `passepartout:plugin/gate@0.1.0`.
    pub exports: Vec<String>,
}

/// The imports and exports of a compiled (never instantiated) component.
pub fn interfaces(engine: &Engine, component: &Component) -> Interfaces {
    let ty = component.component_type();
    let mut imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_owned()).collect();
    let mut exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_owned()).collect();
    imports.sort();
    exports.sort();
    Interfaces { imports, exports }
}
