//! `files`: read, write, list and search files, only inside the directories mounted for this
//! plugin by the operator's policy (WASI preopens; `..`, absolute paths and symlinks cannot leave
//! a mount). A write reads back what it wrote and fails if the bytes differ (the seed's
//! verify-write). The search is a regular-expression search ([`search`]).

mod search;

use std::io::{ErrorKind, Read};

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};
use serde::Deserialize;

/// Most bytes `read-file` returns unless asked for fewer.
const READ_LIMIT: u64 = 512 * 1024;
/// Most entries `list-directory` reports.
const LIST_LIMIT: usize = 1000;

#[derive(Deserialize)]
struct PathArg {
    path: String,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

/// The tool plugin.
pub struct Files;

fn info(name: &str, description: &str, parameters: &str, read_only: bool) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        description: description.into(),
        parameters: parameters.into(),
        read_only,
    }
}

impl Tool for Files {
    fn describe() -> Vec<ToolInfo> {
        vec![
            info(
                "read-file",
                "Read a UTF-8 text file (at most 512 KiB). Paths are absolute, inside a mount such as /workspace.",
                r#"{"type":"object","properties":{"path":{"type":"string","x-effect":"path-read"}},"required":["path"]}"#,
                true,
            ),
            info(
                "write-file",
                "Create or replace a text file with `content`, then read it back to verify.",
                r#"{"type":"object","properties":{"path":{"type":"string","x-effect":"path-write"},"content":{"type":"string"}},"required":["path","content"]}"#,
                false,
            ),
            info(
                "list-directory",
                "List a directory: one entry per line, directories end with `/`.",
                r#"{"type":"object","properties":{"path":{"type":"string","x-effect":"path-read"}},"required":["path"]}"#,
                true,
            ),
            info(
                "search-files",
                search::DESCRIPTION,
                search::PARAMETERS,
                true,
            ),
        ]
    }

    fn call(name: String, args: String) -> Result<String, ToolError> {
        match name.as_str() {
            "read-file" => read_file(&parse_args::<PathArg>(&args)?.path),
            "write-file" => {
                let a = parse_args::<WriteArgs>(&args)?;
                write_file(&a.path, &a.content)
            }
            "list-directory" => list_directory(&parse_args::<PathArg>(&args)?.path),
            "search-files" => search::search_files(&parse_args(&args)?),
            other => Err(ToolError::InvalidArgs(format!(
                "the files plugin has no tool named {other:?}; it has read-file, write-file, list-directory, search-files"
            ))),
        }
    }
}

/// Map an I/O error to what the model should understand.
pub(crate) fn io_error(path: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        ErrorKind::NotFound => ToolError::Failed(format!(
            "{path}: not found (paths must be absolute and inside a directory mounted for this plugin)"
        )),
        ErrorKind::PermissionDenied => ToolError::Denied(format!(
            "{path}: permission denied (outside the mounts, through a symlink that leaves one, or a read-only mount)"
        )),
        _ => ToolError::Failed(format!("{path}: {e}")),
    }
}

fn read_file(path: &str) -> Result<String, ToolError> {
    let file = std::fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut bytes = Vec::new();
    file.take(READ_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, &e))?;
    if bytes.len() as u64 > READ_LIMIT {
        return Err(ToolError::Failed(format!(
            "{path} is larger than {} KiB; read a smaller file or search it instead",
            READ_LIMIT / 1024
        )));
    }
    String::from_utf8(bytes).map_err(|_| ToolError::Failed(format!("{path} is not UTF-8 text")))
}

fn write_file(path: &str, content: &str) -> Result<String, ToolError> {
    std::fs::write(path, content).map_err(|e| io_error(path, &e))?;
    let back = std::fs::read(path).map_err(|e| io_error(path, &e))?;
    if back != content.as_bytes() {
        return Err(ToolError::Failed(format!(
            "wrote {path} but reading it back gave different content ({} bytes instead of {})",
            back.len(),
            content.len()
        )));
    }
    Ok(format!(
        "wrote {} bytes to {path} (verified)",
        content.len()
    ))
}

fn list_directory(path: &str) -> Result<String, ToolError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| io_error(path, &e))? {
        let entry = entry.map_err(|e| io_error(path, &e))?;
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    let total = names.len();
    names.truncate(LIST_LIMIT);
    let mut out = names.join("\n");
    if total > LIST_LIMIT {
        out.push_str(&format!("\n... and {} more", total - LIST_LIMIT));
    }
    Ok(out)
}

passepartout_sdk::export_tool!(Files);
