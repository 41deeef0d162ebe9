//! Loading refuses, with a clear error, what it cannot run safely; one bad plugin does not stop
//! the others.

use passepartout::runtime::{LoadError, Policy, loader};
use passepartout_tests::{
    HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM, HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, source,
};

use crate::fresh_runtime;

fn load_err(
    wasm: &str,
    manifest: &str,
    edit: impl FnOnce(String) -> String,
    policy: &str,
) -> LoadError {
    let (rt, _cache) = fresh_runtime();
    let policy = Policy::parse(policy).expect("policy");
    match rt.load(&source(wasm, manifest, edit), &policy) {
        Ok(p) => panic!("{} should not load", p.id),
        Err(e) => e,
    }
}

#[test]
fn a_grant_the_runtime_cannot_enforce_is_refused() {
    let err = load_err(
        HOSTILE_TOOL_WASM,
        HOSTILE_TOOL_MANIFEST,
        |m| {
            m.replace(
                "[capabilities]\n",
                "[capabilities]\nnet = [\"https://example.com/\"]\n",
            )
        },
        "[plugins.hostile-tool]\nnet = [\"https://example.com/\"]\n",
    );
    assert!(
        matches!(&err, LoadError::Unenforceable { grant, .. } if grant.contains("https://example.com/")),
        "{err:?}"
    );
    assert!(err.to_string().contains("allow-list"), "{err}");
}

#[test]
fn a_network_request_without_a_grant_loads_with_nothing() {
    let (rt, _cache) = fresh_runtime();
    let plugin = rt
        .load(
            &source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
                m.replace(
                    "[capabilities]\n",
                    "[capabilities]\nnet = [\"https://example.com/\"]\n",
                )
            }),
            &Policy::default(),
        )
        .expect("loads: asking is not getting");
    assert!(plugin.grants.net.is_empty());
}

#[test]
fn a_gate_may_not_ask_for_capabilities() {
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m + "\n[capabilities]\nenv = [\"HOME\"]\n",
        "",
    );
    assert!(
        matches!(&err, LoadError::Invalid { message, .. } if message.contains("a gate gets no filesystem")),
        "{err:?}"
    );
}

#[test]
fn kinds_must_match_the_exports() {
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m.replace("kinds = [\"gate\"]", "kinds = [\"tool\"]"),
        "",
    );
    assert!(
        matches!(&err, LoadError::Invalid { message, .. } if message.contains("does not export passepartout:plugin/tool")),
        "{err:?}"
    );
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m.replace("kinds = [\"gate\"]", "kinds = [\"gate\", \"skill\"]"),
        "",
    );
    assert!(err.to_string().contains("skill"), "{err}");
}

#[test]
fn a_bad_manifest_names_the_file_and_the_line() {
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m.replace("priority = 10", "priority = \"high\""),
        "",
    );
    let text = err.to_string();
    assert!(matches!(err, LoadError::Config { .. }), "{text}");
    assert!(
        text.contains("plugin.toml") && text.contains("line 5"),
        "{text}"
    );
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m.replace("name = \"hostile-gate\"", "name = \"Hostile Gate\""),
        "",
    );
    assert!(err.to_string().contains("lowercase"), "{err}");
    let err = load_err(
        HOSTILE_GATE_WASM,
        HOSTILE_GATE_MANIFEST,
        |m| m + "\nsuperpowers = true\n",
        "",
    );
    assert!(err.to_string().contains("superpowers"), "{err}");
}

#[test]
fn a_mount_of_a_missing_directory_is_refused() {
    let err = load_err(
        HOSTILE_TOOL_WASM,
        HOSTILE_TOOL_MANIFEST,
        |m| m,
        "[plugins.hostile-tool]\nfs = [{ guest = \"/data\", host = \"/nonexistent/passepartout\", access = \"read-only\" }]\n",
    );
    assert!(
        err.to_string().contains("/nonexistent/passepartout"),
        "{err}"
    );
}

#[test]
fn an_unknown_policy_key_is_an_error_not_a_silent_grant() {
    let err = Policy::parse("[plugins.files]\nfilesystem = []\n").expect_err("unknown key");
    assert!(err.to_string().contains("filesystem"), "{err}");
    // The TOML error itself is kept, with its place in the file.
    let passepartout::runtime::policy::PolicyError::Toml(toml) = err else {
        panic!("a TOML error: {err}");
    };
    assert!(toml.span().is_some(), "{toml}");
}

#[test]
fn a_plugin_directory_loads_what_it_can_and_reports_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = dir.path().join("hostile-gate");
    std::fs::create_dir(&good).expect("mkdir");
    std::fs::copy(HOSTILE_GATE_WASM, good.join("hostile_gate.wasm")).expect("copy");
    std::fs::copy(HOSTILE_GATE_MANIFEST, good.join("plugin.toml")).expect("copy");
    std::fs::create_dir(dir.path().join("no-manifest")).expect("mkdir");
    let garbage = dir.path().join("garbage");
    std::fs::create_dir(&garbage).expect("mkdir");
    std::fs::write(
        garbage.join("plugin.toml"),
        "name = \"garbage\"\nversion = \"1.0.0\"\nkinds = [\"gate\"]\n",
    )
    .expect("write");
    std::fs::write(garbage.join("plugin.wasm"), b"\0asm but not really").expect("write");

    let (rt, _cache) = fresh_runtime();
    let mut sources = loader::dir_sources(dir.path(), &Default::default());
    sources.extend(crate::builtins(&["shell-guard", "files", "eval"]));
    // The hostile gate also comes as a duplicate from a second source.
    sources.push(source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m));
    let report = rt.load_all(&sources, &Policy::default());
    let errors = report.errors;
    let names: Vec<&str> = report.plugins.iter().map(|p| p.id.name.as_str()).collect();
    assert_eq!(names, ["hostile-gate", "shell-guard", "files", "eval"]);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("no-manifest") && m.contains("plugin.toml")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("plugin \"garbage\" 1.0.0") && m.contains("does not compile")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("two plugins are named \"hostile-gate\"")),
        "{messages:#?}"
    );
}

#[test]
fn a_fifo_a_device_or_a_huge_file_in_a_plugin_folder_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = |name: &str| {
        let f = dir.path().join(name);
        std::fs::create_dir(&f).expect("mkdir");
        f
    };
    let manifest =
        |name: &str| format!("name = \"{name}\"\nversion = \"1.0.0\"\nkinds = [\"gate\"]\n");
    // A plugin.toml that is a FIFO: opening it for reading would wait for a writer forever.
    let fifo = folder("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("plugin.toml"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // A component that is /dev/zero: reading it never ends, and takes all memory.
    let zero = folder("zero");
    std::fs::write(zero.join("plugin.toml"), manifest("zero")).expect("write");
    std::os::unix::fs::symlink("/dev/zero", zero.join("plugin.wasm")).expect("link");
    // A sparse 8 GiB component.
    let huge = folder("huge");
    std::fs::write(huge.join("plugin.toml"), manifest("huge")).expect("write");
    std::fs::File::create(huge.join("plugin.wasm"))
        .and_then(|f| f.set_len(8 << 30))
        .expect("sparse file");

    let (tx, rx) = std::sync::mpsc::channel();
    let path = dir.path().to_owned();
    std::thread::spawn(move || {
        let _ = tx.send(loader::dir_sources(&path, &Default::default()));
    });
    let sources = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the plugin directory is read without waiting on a FIFO or a device");
    let (rt, _cache) = fresh_runtime();
    let report = rt.load_all(&sources, &Policy::default());
    assert!(report.plugins.is_empty());
    let messages: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    for (folder, why) in [
        ("fifo", "not a regular file"),
        ("zero", "not a regular file"),
        ("huge", "over the limit"),
    ] {
        assert!(
            messages
                .iter()
                .any(|m| m.contains(folder) && m.contains(why)),
            "{folder}: {why}: {messages:#?}"
        );
    }
}

#[test]
fn a_plugin_reads_its_configuration_into_a_type_and_hears_what_does_not_fit() {
    // The SDK's `config_as`: the operator's [plugins.NAME.config] read into the plugin's type;
    // a value of the wrong type is an error naming it, never a silent default.
    let (rt, _scratch) = crate::fresh_runtime();
    let call = |policy: &str| {
        crate::hostile_tool(&rt, policy)
            .call_tool("typed-config", "{}")
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        call("[plugins.hostile-tool.config]\ncopies = 3\n"),
        Ok("copies = 3".into())
    );
    let wrong = call("[plugins.hostile-tool.config]\ncopies = \"many\"\n").expect_err("refused");
    assert!(
        wrong.contains("does not fit") && wrong.contains("\"many\""),
        "{wrong}"
    );
    let missing = call("").expect_err("refused");
    assert!(missing.contains("missing field `copies`"), "{missing}");
}
