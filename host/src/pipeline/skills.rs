//! Skills: ordered by their dependencies (a skill after those it depends on), and the
//! highest-priority skill that triggers gives the prompt.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::PipelineError;
use crate::runtime::{Kind, Plugin};
use crate::signal::Signal;

/// The skills among `plugins`, dependencies first (ties by priority, highest first, then name).
///
/// # Errors
/// A dependency on a skill that is not loaded, or a cycle, named in full.
pub fn order(plugins: &[Arc<Plugin>]) -> Result<Vec<Arc<Plugin>>, PipelineError> {
    let mut skills: Vec<&Arc<Plugin>> = plugins.iter().filter(|p| p.is(Kind::Skill)).collect();
    skills.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| a.id.name.cmp(&b.id.name))
    });
    let by_name: BTreeMap<&str, &Arc<Plugin>> =
        skills.iter().map(|p| (p.id.name.as_str(), *p)).collect();
    for s in &skills {
        for dep in &s.manifest.depends_on {
            if !by_name.contains_key(dep.as_str()) {
                return Err(PipelineError::pipeline(format!(
                    "skill {:?} depends on {dep:?}, which is not a loaded skill",
                    s.id.name
                )));
            }
        }
    }
    // Depth-first, so a cycle is found with its path.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    fn visit<'a>(
        name: &'a str,
        by_name: &BTreeMap<&'a str, &'a Arc<Plugin>>,
        marks: &mut BTreeMap<&'a str, Mark>,
        path: &mut Vec<&'a str>,
        out: &mut Vec<Arc<Plugin>>,
    ) -> Result<(), PipelineError> {
        match marks.get(name) {
            Some(Mark::Done) => return Ok(()),
            Some(Mark::Visiting) => {
                let start = path.iter().position(|n| *n == name).unwrap_or(0);
                let mut cycle: Vec<&str> = path[start..].to_vec();
                cycle.push(name);
                return Err(PipelineError::pipeline(format!(
                    "skills depend on each other in a cycle: {}",
                    cycle.join(" -> ")
                )));
            }
            None => {}
        }
        let Some(plugin) = by_name.get(name) else {
            return Ok(());
        };
        marks.insert(name, Mark::Visiting);
        path.push(name);
        for dep in &plugin.manifest.depends_on {
            if let Some((dep_name, _)) = by_name.get_key_value(dep.as_str()) {
                visit(dep_name, by_name, marks, path, out)?;
            }
        }
        path.pop();
        marks.insert(name, Mark::Done);
        out.push((*plugin).clone());
        Ok(())
    }
    let mut marks = BTreeMap::new();
    let mut out = Vec::new();
    for s in &skills {
        visit(
            s.id.name.as_str(),
            &by_name,
            &mut marks,
            &mut Vec::new(),
            &mut out,
        )?;
    }
    Ok(out)
}

/// The prompt of the highest-priority skill that triggers on `signal`, if any. A skill that
/// fails is logged and skipped: a broken skill must not silence the user. A skill whose
/// manifest lists its sensors is not asked about signals from others (no instance is made).
pub async fn prompt(skills: &[Arc<Plugin>], signal: &Signal) -> Option<(String, String)> {
    let mut by_priority: Vec<&Arc<Plugin>> = skills
        .iter()
        .filter(|s| s.manifest.listens_to(signal.sensor()))
        .collect();
    if by_priority.is_empty() {
        return None;
    }
    let view = signal.view();
    by_priority.sort_by_key(|p| std::cmp::Reverse(p.priority));
    for skill in by_priority {
        match skill.skill_triggers_async(&view).await {
            Ok(true) => match skill.skill_prompt_async(&view).await {
                Ok(Some(p)) => return Some((skill.id.name.clone(), p)),
                Ok(None) => return None,
                Err(e) => tracing::warn!("{e}"),
            },
            Ok(false) => {}
            Err(e) => tracing::warn!("{e}"),
        }
    }
    None
}
