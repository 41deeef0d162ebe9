//! Environment variables: by name only. A plugin sees a variable when its manifest asks for the
//! name and the policy grants it; the value is the daemon's own at load. Nothing else of the
//! daemon's environment is inherited.

use serde::Serialize;
use wasmtime_wasi::WasiCtxBuilder;

use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// One variable a plugin gets.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EnvGrant {
    /// Its name.
    pub name: String,
    /// Its value; never shown by `passepartout plugins`.
    #[serde(skip)]
    pub value: String,
    /// Whether the daemon had it set (unset variables are granted but stay unset).
    pub set: bool,
}

/// The environment capability ([`super::Factor`]).
pub struct Environment;

impl super::Factor for Environment {
    fn name(&self) -> &'static str {
        "environment"
    }
    fn what(&self) -> &'static str {
        "environment variables (wasi:cli/environment)"
    }
    fn owns(&self, interface: &str) -> bool {
        interface == "wasi:cli/environment"
    }
    fn baseline(&self) -> bool {
        true
    }
    fn asked(&self, asked: &CapabilityRequest) -> bool {
        !asked.env.is_empty()
    }
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut super::Grants,
    ) -> Result<(), super::GrantRefused> {
        grants.env = resolve(&asked.env, &policy.env);
        Ok(())
    }
    fn granted(&self, grants: &super::Grants) -> bool {
        !grants.env.is_empty()
    }
    fn grant_hint(&self, plugin: &str) -> String {
        format!("grant names under [plugins.{plugin}]: env = [\"LANG\"]")
    }
    fn sides(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &super::Grants,
    ) -> super::Sides {
        super::Sides::listed(
            &asked.env,
            &policy.env,
            grants.env.iter().map(|e| e.name.clone()).collect(),
        )
    }
    fn enforced(&self, grants: &super::Grants) -> String {
        // `apply` below sets these and nothing else; a program gets them plus PATH and LANG.
        if grants.env.is_empty() {
            return "empty environment: nothing of the daemon's is inherited".into();
        }
        format!(
            "only these variables are set, with the daemon's values at load: {}",
            grants
                .env
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The daemon's own secrets: never given to a plugin, whatever the policy says.
pub const WITHHELD: &[&str] = &[
    "PASSEPARTOUT_HMAC_SECRET",
    "OACP_HMAC_SECRET",
    "PASSEPARTOUT_APPROVER_SECRET",
];

/// The variables a plugin gets: asked for and granted (never one of [`WITHHELD`]).
pub fn resolve(asked: &[String], granted: &[String]) -> Vec<EnvGrant> {
    asked
        .iter()
        .filter(|name| granted.contains(name) && !WITHHELD.contains(&name.as_str()))
        .map(|name| {
            // ambient authority: reading the daemon's environment for a granted name.
            #[allow(
                clippy::disallowed_methods,
                reason = "a variable the policy grants this plugin, passed as it is"
            )]
            let value = std::env::var(name).ok();
            EnvGrant {
                name: name.clone(),
                set: value.is_some(),
                value: value.unwrap_or_default(),
            }
        })
        .collect()
}

/// Set the granted variables in a call's WASI context.
pub fn apply(builder: &mut WasiCtxBuilder, env: &[EnvGrant]) {
    for e in env.iter().filter(|e| e.set) {
        builder.env(&e.name, &e.value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_s_secrets_are_never_granted() {
        let asked: Vec<String> = WITHHELD
            .iter()
            .map(|s| (*s).to_owned())
            .chain(["HOME".into()])
            .collect();
        let got = resolve(&asked, &asked);
        assert_eq!(
            got.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
            ["HOME"]
        );
    }
}
