//! # Passepartout
//!
//! An agent daemon in which a language model proposes actions, deterministic gates verify every
//! proposal before anything runs it, and a person approves what a gate flags. Every skill, gate
//! and tool is a WebAssembly component, run by [`runtime::Runtime`] under fuel, deadline and
//! memory limits with only the capabilities its manifest asks for and the operator's policy
//! grants.

#![deny(missing_docs)]

pub mod agent;
mod allocator;
pub mod approvals;
pub mod audit;
pub mod authoring;
pub mod blocking;
pub mod builtin;
pub mod cases;
pub mod clock;
pub mod daemon;
pub mod dirs;
pub mod gates;
pub mod gateway;
pub mod install;
pub mod journal;
#[cfg(test)]
mod logged;
pub mod memory;
pub mod pipeline;
pub mod policy_edit;
pub mod providers;
pub mod runtime;
pub mod settings;
pub mod signal;
pub mod terminal;
pub mod tls;
