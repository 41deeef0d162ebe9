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
///
/// Reads section headers only: code sections are skipped whole and data sections never
/// iterated, so a start does not page in the embedded components (18 MiB for `pii`), which
/// an idle daemon's resident memory would otherwise count.
pub fn footprint(component: &Component, bytes: &[u8]) -> super::share::Footprint {
    let (memories, tables) = sections(bytes);
    // wasmtime's own count of what one instantiation makes (vendor/README.md, patch 4): the
    // sections count a nested component instantiated twice once, and never see the adapter
    // modules wasmtime fuses between inner components. Each store is held to this count
    // (`state::MemoryCap`), so it must be exact.
    let mut fp = super::share::Footprint {
        core_instances: component.core_instances_required().max(1),
        ..Default::default()
    };
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
    fp
}

/// Memories and tables defined, counted over every nested module and component of `bytes`
/// (wasmtime's own count is used when it can tell: [`footprint`]).
fn sections(bytes: &[u8]) -> (usize, usize) {
    let mut counts = (0, 0);
    let mut stack = Vec::new();
    let mut parser = wasmparser::Parser::new(0);
    let mut data = bytes;
    // A component that does not parse was refused by the compiler before this; stop quietly.
    while let Ok(wasmparser::Chunk::Parsed { consumed, payload }) = parser.parse(data, true) {
        data = data.get(consumed..).unwrap_or_default();
        count(&payload, &mut counts);
        match payload {
            wasmparser::Payload::CodeSectionStart { size, .. } => {
                parser.skip_section();
                data = data.get(size as usize..).unwrap_or_default();
            }
            wasmparser::Payload::ModuleSection { parser: nested, .. }
            | wasmparser::Payload::ComponentSection { parser: nested, .. } => {
                stack.push(std::mem::replace(&mut parser, nested));
            }
            wasmparser::Payload::End(_) => match stack.pop() {
                Some(outer) => parser = outer,
                None => break,
            },
            _ => {}
        }
    }
    counts
}

/// Add what `payload` defines to `counts` (memories, tables).
fn count(payload: &wasmparser::Payload<'_>, counts: &mut (usize, usize)) {
    match payload {
        wasmparser::Payload::MemorySection(s) => counts.0 += s.count() as usize,
        wasmparser::Payload::TableSection(s) => counts.1 += s.count() as usize,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    /// What `sections` counts, by reading every payload (code entries included).
    fn counted_whole(bytes: &[u8]) -> (usize, usize) {
        let mut counts = (0, 0);
        for payload in wasmparser::Parser::new(0).parse_all(bytes).flatten() {
            super::count(&payload, &mut counts);
        }
        counts
    }

    #[test]
    fn skipping_code_counts_what_a_whole_read_counts() {
        for b in crate::builtin::BUILTIN {
            let counted = super::sections(b.component);
            assert_eq!(counted, counted_whole(b.component), "{}", b.dir);
            assert!(counted.0 >= 1, "{}: no memory counted: {counted:?}", b.dir);
        }
    }
}
