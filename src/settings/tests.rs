use super::*;
use reloop_core::SourcedRule;
use serde_json::json;

#[test]
fn no_flag_reads_every_layer_and_an_empty_flag_reads_none() {
    let all = Sources::parse(None).unwrap();
    assert!(all.reads(Source::User) && all.reads(Source::Project) && all.reads(Source::Local));
    let none = Sources::parse(Some("")).unwrap();
    assert!(!none.reads(Source::User) && !none.reads(Source::Project) && !none.reads(Source::Local));
    let some = Sources::parse(Some("local, project")).unwrap();
    assert_eq!(some, Sources(vec![Source::Project, Source::Local]));
}

#[test]
fn an_unknown_source_is_refused() {
    let err = Sources::parse(Some("user,global")).unwrap_err().to_string();
    assert!(err.contains("\"global\""), "{err}");
}

#[test]
fn scalars_take_the_upper_layer_and_lists_are_joined_in_layer_order() {
    let mut merged = json!({"model": "u", "env": {"A": "u", "U": "1"}, "permissions": {"allow": ["x", "y"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "u"}]}]}});
    merge(
        &mut merged,
        json!({"model": "p", "env": {"A": "p"}, "permissions": {"allow": ["y", "z"], "deny": ["d"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "p"}]}]}}),
    );
    assert_eq!(
        merged,
        json!({"model": "p", "env": {"A": "p", "U": "1"}, "permissions": {"allow": ["x", "y", "z"], "deny": ["d"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "u"}]},
                               {"hooks": [{"type": "command", "command": "p"}]}]}})
    );
}

#[test]
fn layers_load_from_their_files_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (cwd, user) = (dir.path().join("proj"), dir.path().join("home"));
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("settings.json"), r#"{"model":"m-user","permissions":{"allow":["Read"]}}"#).unwrap();
    std::fs::write(cwd.join(".claude/settings.json"), r#"{"permissions":{"deny":["Bash"]}}"#).unwrap();
    std::fs::write(cwd.join(".claude/settings.local.json"), r#"{"model":"m-local"}"#).unwrap();
    let all = load(None, &Sources::parse(None).unwrap(), &cwd, Some(&user), None).unwrap();
    assert_eq!(all.model.as_deref(), Some("m-local"));
    assert_eq!(all.settings.permissions.allow, vec![SourcedRule::new("Read", RuleSource::UserSettings)]);
    assert_eq!(all.settings.permissions.deny, vec![SourcedRule::new("Bash", RuleSource::ProjectSettings)]);
    let user_only =
        load(Some(r#"{"model":"m-flag"}"#), &Sources::parse(Some("user")).unwrap(), &cwd, Some(&user), None).unwrap();
    assert_eq!(user_only.model.as_deref(), Some("m-flag"));
    assert!(user_only.settings.permissions.deny.is_empty());
    std::fs::write(cwd.join(".claude/settings.json"), r#"{"permissions":{"deny":"Bash"}}"#).unwrap();
    let err = load(None, &Sources::parse(None).unwrap(), &cwd, Some(&user), None).unwrap_err().to_string();
    assert!(err.contains(".claude/settings.json") && err.contains("permissions.deny"), "{err}");
}

#[test]
fn each_rule_keeps_the_first_layer_that_lists_it() {
    // rule_sources/allow_everywhere: the same allow rule in every file and the flags is the
    // user settings' (both versions read the layers user, project, local, --settings).
    let dir = tempfile::tempdir().unwrap();
    let (cwd, user) = (dir.path().join("proj"), dir.path().join("home"));
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("settings.json"), r#"{"permissions":{"allow":["Write"]}}"#).unwrap();
    std::fs::write(cwd.join(".claude/settings.json"), r#"{"permissions":{"allow":["Write"],"ask":["Edit"]}}"#).unwrap();
    std::fs::write(cwd.join(".claude/settings.local.json"), r#"{"permissions":{"allow":["Write","Bash"]}}"#).unwrap();
    let flag = r#"{"permissions":{"deny":["Bash(rm:*)"],"allow":["Read"]}}"#;
    let loaded = load(Some(flag), &Sources::parse(None).unwrap(), &cwd, Some(&user), None).unwrap();
    let rules = &loaded.settings.permissions;
    let named = |list: &[SourcedRule]| list.iter().map(|r| (r.text.clone(), r.source)).collect::<Vec<_>>();
    assert_eq!(
        named(&rules.allow),
        [
            ("Write".to_string(), Some(RuleSource::UserSettings)),
            ("Bash".to_string(), Some(RuleSource::LocalSettings)),
            ("Read".to_string(), Some(RuleSource::FlagSettings)),
        ]
    );
    assert_eq!(named(&rules.ask), [("Edit".to_string(), Some(RuleSource::ProjectSettings))]);
    assert_eq!(named(&rules.deny), [("Bash(rm:*)".to_string(), Some(RuleSource::FlagSettings))]);
    // Without the user layer the project's rule is the first, in a folder Claude Code trusts.
    let config = dir.path().join(".claude.json");
    let trust = json!({"projects": {cwd.display().to_string(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(&config, trust.to_string()).unwrap();
    let project_local = Sources::parse(Some("project,local")).unwrap();
    let trusted = load(None, &project_local, &cwd, Some(&user), Some(&config)).unwrap();
    assert_eq!(named(&trusted.settings.permissions.allow)[0], ("Write".to_string(), Some(RuleSource::ProjectSettings)));
    // Untrusted, the project's allow rules are dropped (its ask rule holds): the local file's
    // `Write` is the first (`rule_sources/allow_project`).
    let untrusted = load(None, &project_local, &cwd, Some(&user), None).unwrap();
    assert_eq!(named(&untrusted.settings.permissions.allow)[0], ("Write".to_string(), Some(RuleSource::LocalSettings)));
    assert_eq!(named(&untrusted.settings.permissions.ask), [("Edit".to_string(), Some(RuleSource::ProjectSettings))]);
}

/// A FIFO a repository puts in place of its settings file is refused at once, naming the file,
/// rather than waited on forever.
#[test]
fn a_fifo_in_place_of_a_settings_file_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    let fifo = cwd.join(".claude/settings.json");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = load(None, &Sources::parse(None).unwrap(), &cwd, None, None).unwrap_err().to_string();
    assert!(err.contains(".claude/settings.json") && err.contains("not a regular file"), "{err}");
}
