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

/// What one instance of `component` (compiled from `bytes`) holds in the instance pool.
pub fn footprint(component: &Component, bytes: &[u8]) -> super::share::Footprint {
    let mut fp = super::share::Footprint::default();
    let (mut memories, mut tables) = (0, 0);
    for payload in wasmparser::Parser::new(0).parse_all(bytes).flatten() {
        match payload {
            wasmparser::Payload::InstanceSection(section) => {
                fp.core_instances += section
                    .into_iter()
                    .flatten()
                    .filter(|i| matches!(i, wasmparser::Instance::Instantiate { .. }))
                    .count();
            }
            wasmparser::Payload::MemorySection(s) => memories += s.count() as usize,
            wasmparser::Payload::TableSection(s) => tables += s.count() as usize,
            _ => {}
        }
    }
    // wasmtime's own count, per instantiation, when it can tell; else the sections defined.
    match component.resources_required() {
        Some(r) => {
            fp.memories = r.num_memories as usize;
            fp.tables = r.num_tables as usize;
        }
        None => {
            fp.memories = memories;
            fp.tables = tables;
        }
    }
    fp.core_instances = fp.core_instances.max(1);
    fp
}
