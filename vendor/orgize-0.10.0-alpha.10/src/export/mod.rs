//! Export `Org` struct to various formats.

mod event;
mod html;
mod markdown;
mod traverse;

pub use event::{Container, Event};
pub use html::{HtmlEscape, HtmlExport};
pub use markdown::MarkdownExport;
pub use traverse::{from_fn, from_fn_with_ctx, FromFn, FromFnWithCtx, TraversalContext, Traverser};
