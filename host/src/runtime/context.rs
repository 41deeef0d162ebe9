//! The action context a gate may ask the host for (`action-context`, WIT 0.1.1): the tool the
//! action under check names, by identity, and the effects the host derives for it. The
//! [`Catalog`] holds every loaded tool by the name it is offered under.

use std::collections::BTreeMap;

use serde::Serialize;

use super::capabilities::fs::Mount;
use super::effects::{EffectSpec, Effects, PathEffect, derive};

/// The tool an action names, as the host knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ToolIdentity {
    /// The plugin that offers it.
    pub plugin: String,
    /// That plugin's version.
    pub version: String,
    /// The tool's own name in that plugin (the name offered may be a policy alias).
    pub tool: String,
    /// What the tool declares: it changes nothing.
    pub read_only: bool,
    /// Whether its schema declares its effects; a tool that is not read-only and declares
    /// none is opaque.
    pub declares_effects: bool,
    /// The sha256 of the code behind it (a plugin's component; an MCP tool's pinned
    /// description): a plugin rebuilt under the same version is another tool. Empty in what
    /// was recorded before it was kept.
    #[serde(default)]
    pub component: String,
}

/// What a gate may learn about the action under check, beyond the action itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ActionContext {
    /// The tool, for a tool call naming a loaded tool.
    pub tool: Option<ToolIdentity>,
    /// What the action would do.
    pub effects: Effects,
}

/// One loaded tool, with what is needed to derive its actions' effects.
#[derive(Clone, Debug)]
struct Entry {
    identity: ToolIdentity,
    spec: EffectSpec,
    mounts: Vec<Mount>,
}

/// Tools the host offers beside the plugins' (an MCP server's, in gateway mode): asked about
/// the names the plugins do not have.
pub trait ExternalTools: Send + Sync + std::fmt::Debug {
    /// The identity of the tool offered as `name`, if it is one of these.
    fn identity(&self, name: &str) -> Option<ToolIdentity>;

    /// What gates learn about a call of the tool offered as `name` with `args`, if it is one
    /// of these: its identity, and the effects the operator mapped its arguments to (none
    /// when unmapped: it is opaque).
    fn context(
        &self,
        name: &str,
        args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<ActionContext>;

    /// Fill in what a call of the tool offered as `name` leaves out and the tool will be sent
    /// anyway (an MCP tool's mapped argument's schema default), so that gates, the journal and
    /// the person asked see the call as it will be made. By default, nothing.
    fn complete(&self, name: &str, args: &mut serde_json::Map<String, serde_json::Value>) {
        let _ = (name, args);
    }
}

/// Every loaded tool by the name it is offered under: the host's view of tool identity.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    tools: BTreeMap<String, Entry>,
    external: Option<std::sync::Arc<dyn ExternalTools>>,
}

impl Catalog {
    /// The tools of `plugins`.
    pub fn new<'a>(plugins: impl IntoIterator<Item = &'a super::Plugin>) -> Catalog {
        let mut tools = BTreeMap::new();
        for p in plugins {
            for t in &p.tools {
                let spec = p.effect_specs.get(&t.name).cloned().unwrap_or_default();
                let own = p.tool_aliases.get(&t.name).unwrap_or(&t.name);
                tools.insert(
                    t.name.clone(),
                    Entry {
                        identity: ToolIdentity {
                            plugin: p.id.name.clone(),
                            version: p.id.version.clone(),
                            tool: own.clone(),
                            read_only: t.read_only,
                            declares_effects: spec.declares(),
                            component: p.sha256.clone(),
                        },
                        spec,
                        mounts: p.grants.fs.clone(),
                    },
                );
            }
        }
        Catalog {
            tools,
            external: None,
        }
    }

    /// The same, with `external` tools beside the plugins'. They declare no effects of their
    /// own: gates see them as opaque (not read-only) unless the operator mapped their
    /// arguments to effects.
    pub fn with_external(mut self, external: std::sync::Arc<dyn ExternalTools>) -> Catalog {
        self.external = Some(external);
        self
    }

    /// The names of the plugins' tools.
    pub fn plugin_tools(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The identity of the tool offered as `name`.
    pub fn identity(&self, name: &str) -> Option<ToolIdentity> {
        match self.tools.get(name) {
            Some(e) => Some(e.identity.clone()),
            None => self.external.as_ref().and_then(|x| x.identity(name)),
        }
    }

    /// `action` as its tool will be called: what an external tool is sent though the action
    /// leaves it out is filled in ([`ExternalTools::complete`]). Plugin tools get their
    /// arguments as written.
    pub fn complete(&self, action: &mut crate::signal::Action) {
        if let (Some(tool), "tool", Some(x)) =
            (&action.tool, action.target.as_str(), &self.external)
            && !self.tools.contains_key(tool)
        {
            x.complete(tool, &mut action.args);
        }
    }

    /// What gates learn about `action`: its tool and its effects.
    pub fn context(&self, action: &crate::signal::Action) -> ActionContext {
        let entry = match (&action.tool, action.target.as_str()) {
            (Some(tool), "tool") => self.tools.get(tool),
            _ => None,
        };
        match entry {
            Some(e) => ActionContext {
                tool: Some(e.identity.clone()),
                effects: derive(&e.spec, &action.args, &e.mounts),
            },
            None => match (&action.tool, action.target.as_str(), &self.external) {
                (Some(tool), "tool", Some(x)) => x.context(tool, &action.args).unwrap_or_default(),
                _ => ActionContext::default(),
            },
        }
    }
}

impl super::bindings::action_context_api::Host for super::state::GateData {
    fn tool(&mut self) -> Option<super::bindings::action_context_api::ToolIdentity> {
        self.context
            .tool
            .as_ref()
            .map(|t| super::bindings::action_context_api::ToolIdentity {
                plugin: t.plugin.clone(),
                version: t.version.clone(),
                tool: t.tool.clone(),
                read_only: t.read_only,
                declares_effects: t.declares_effects,
            })
    }

    fn effects(&mut self) -> super::bindings::action_context_api::ActionEffects {
        use super::bindings::action_context_api as api;
        let fx = &self.context.effects;
        let path = |p: &PathEffect| api::PathEffect {
            guest: p.guest.clone(),
            host: p.host.clone(),
        };
        api::ActionEffects {
            programs: fx
                .programs
                .iter()
                .map(|p| api::ProgramRun {
                    program: p.program.clone(),
                    argv: p.argv.clone(),
                    line: p.line.clone(),
                    stdin: p.stdin.clone(),
                })
                .collect(),
            reads: fx.reads.iter().map(path).collect(),
            writes: fx.writes.iter().map(path).collect(),
            urls: fx
                .urls
                .iter()
                .map(|u| api::UrlEffect {
                    url: u.url.clone(),
                    scheme: u.scheme.clone(),
                    host: u.host.clone(),
                    port: u.port,
                    path: u.path.clone(),
                })
                .collect(),
            memory_writes: fx.memory_writes.clone(),
        }
    }
}

/// A tool or skill call has no action under check: a component that is both a tool and a gate
/// (the `guarded-tool-plugin` world) imports `action-context` for its gate, and its tool calls
/// get "no tool, no effects" from it.
impl super::bindings::action_context_api::Host for super::state::ToolData {
    fn tool(&mut self) -> Option<super::bindings::action_context_api::ToolIdentity> {
        None
    }

    fn effects(&mut self) -> super::bindings::action_context_api::ActionEffects {
        super::bindings::action_context_api::ActionEffects {
            programs: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            urls: Vec::new(),
            memory_writes: Vec::new(),
        }
    }
}
