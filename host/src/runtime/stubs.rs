//! Gates hold no capability: every import of theirs beyond our own interfaces is defined as a
//! function that traps (reported as a denial naming the import). This is wasmtime's
//! `define_unknown_imports_as_traps` minus one thing: it never stubs `passepartout:plugin/*`.
//! wasmtime's version defines a trapping instance under the import's exact name, which shadows
//! the semver-compatible instance the linker already has: a gate built against 0.1.0 importing
//! `passepartout:plugin/host@0.1.0` would find `config()` and `log()` trapping beside our
//! `@0.1.1`. Ours leaves those to the linker's semver-aware lookup.

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, LinkerInstance, ResourceType};

/// What a stubbed import returns when called: the import, by its full name. The call's error
/// is classified by this type ([`super::call`]), never by its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown import: `{0}` has not been defined")]
pub struct DeniedImport(pub String);

/// Our own WIT package: provided by the linker (any 0.1.x), never stubbed.
const OURS: &str = "passepartout:plugin/";

/// Define every import of `component` outside our package as a trap.
///
/// # Errors
/// The linker refuses a definition (a name defined twice: a wasmtime bug).
pub fn define_foreign_imports_as_traps<T: 'static>(
    linker: &mut Linker<T>,
    engine: &Engine,
    component: &Component,
) -> wasmtime::Result<()> {
    let imports: Vec<(String, ComponentItem)> = component
        .component_type()
        .imports(engine)
        .map(|(name, item)| (name.to_owned(), item.ty))
        .collect();
    for (name, item) in imports {
        // Ours, and the gates' empty environment and kept stderr, are the linker's.
        if name.starts_with(OURS)
            || super::capabilities::gate_io::LINKED
                .iter()
                .any(|l| name.starts_with(l))
        {
            continue;
        }
        let mut root = linker.root();
        stub(&mut root, engine, &name, &name, &item)?;
    }
    Ok(())
}

fn stub<T: 'static>(
    at: &mut LinkerInstance<'_, T>,
    engine: &Engine,
    name: &str,
    qualified: &str,
    item: &ComponentItem,
) -> wasmtime::Result<()> {
    match item {
        ComponentItem::ComponentFunc(_) => {
            let qualified = qualified.to_owned();
            at.func_new(name, move |_, _, _, _| {
                Err(wasmtime::Error::new(DeniedImport(qualified.clone())))
            })
        }
        ComponentItem::ComponentInstance(instance) => {
            let mut inner = at.instance(name)?;
            let exports: Vec<(String, ComponentItem)> = instance
                .exports(engine)
                .map(|(n, i)| (n.to_owned(), i.ty))
                .collect();
            for (export, item) in exports {
                stub(
                    &mut inner,
                    engine,
                    &export,
                    &format!("{qualified}#{export}"),
                    &item,
                )?;
            }
            Ok(())
        }
        ComponentItem::Resource(_) => at.resource(name, resource_type(name), |_, _| Ok(())),
        _ => Ok(()),
    }
}

/// The type a stubbed instance gives a resource it names: `wasi:io`'s own where the name is an
/// alias of one (gates get real `wasi:io` streams, [`super::capabilities::gate_io`], and an
/// instance using them must agree), else a placeholder nothing can make.
fn resource_type(name: &str) -> ResourceType {
    use wasmtime_wasi_io::poll::DynPollable;
    use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream, Error};
    match name {
        "input-stream" => ResourceType::host::<DynInputStream>(),
        "output-stream" => ResourceType::host::<DynOutputStream>(),
        "pollable" => ResourceType::host::<DynPollable>(),
        "error" | "io-error" => ResourceType::host::<Error>(),
        _ => ResourceType::host::<()>(),
    }
}
