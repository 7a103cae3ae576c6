use super::*;

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn a_project_command_expands_as_claude_code_sends_it() {
    // The recorded `/greet Alice Bob` (tests/print/recorded/*/settings_slash/custom).
    let dir = project(&[(
        "p/.claude/commands/greet.md",
        "---\ndescription: Greet someone\nargument-hint: NAME\nallowed-tools: Bash(echo:*)\n---\nGreet $ARGUMENTS warmly. First word: $1. Then run echo hi.\n",
    )]);
    let all = Sources::parse(None).unwrap();
    let got = expand("/greet Alice Bob", &dir.path().join("p"), None, &all).unwrap();
    assert_eq!(
        got.blocks,
        vec![
            "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>Alice Bob</command-args>\n",
            "Greet Alice Bob warmly. First word: Bob. Then run echo hi.\n",
        ]
    );
}

#[test]
fn a_command_without_arguments_has_no_args_line() {
    // The recorded `/jot` (crates/reloop-import/tests/recorded/*/rule_sources/command).
    let dir = project(&[("p/.claude/commands/jot.md", "---\ndescription: Jot a note\n---\nWrite alpha.\n")]);
    let all = Sources::parse(None).unwrap();
    for prompt in ["/jot", "/jot   "] {
        let got = expand(prompt, &dir.path().join("p"), None, &all).unwrap();
        assert_eq!(
            got.blocks,
            vec!["<command-message>jot</command-message>\n<command-name>/jot</command-name>\n", "Write alpha.\n"],
            "{prompt:?}"
        );
    }
}

#[test]
fn namespaced_and_user_commands_and_their_sources() {
    let dir = project(&[
        ("p/.claude/commands/ns/sub.md", "NAMESPACED-COMMAND-BODY args=[$ARGUMENTS]\n"),
        ("home/commands/ucmd.md", "USER-COMMAND-BODY args=[$ARGUMENTS]\n"),
    ]);
    let (cwd, user) = (dir.path().join("p"), dir.path().join("home"));
    let all = Sources::parse(None).unwrap();
    assert_eq!(
        expand("/ns:sub a b", &cwd, Some(&user), &all).unwrap().blocks[1],
        "NAMESPACED-COMMAND-BODY args=[a b]\n"
    );
    assert_eq!(expand("/ucmd x y", &cwd, Some(&user), &all).unwrap().blocks[1], "USER-COMMAND-BODY args=[x y]\n");
    let user_only = Sources::parse(Some("user")).unwrap();
    assert_eq!(expand("/ns:sub a b", &cwd, Some(&user), &user_only), None);
    assert!(expand("/ucmd", &cwd, Some(&user), &user_only).is_some());
    assert_eq!(expand("/ucmd", &cwd, Some(&user), &Sources::parse(Some("")).unwrap()), None);
}

#[test]
fn names_that_leave_the_folder_or_name_nothing_stay_text() {
    let dir = project(&[("secret.md", "SECRET"), ("p/.claude/commands/ok.md", "OK")]);
    let cwd = dir.path().join("p");
    let all = Sources::parse(None).unwrap();
    for prompt in ["/..:..:..:secret", "/", "/nosuch foo", "plain text", "/.hidden", "/a::b"] {
        assert_eq!(expand(prompt, &cwd, None, &all), None, "{prompt}");
    }
}

#[test]
fn substitution_leaves_other_dollars_alone() {
    assert_eq!(substitute("$ $x $0-$9 $ARGUMENTS$", "a b"), "$ $x a- a b$");
    assert_eq!(body("---\nx: 1\n---\nbody"), "body");
    assert_eq!(body("---\nno end"), "---\nno end");
}

#[test]
fn init_lists_project_commands_then_user_ones_as_the_sources_allow() {
    // The recorded order (settings_slash/custom): greet, ns:sub (project), ucmd (user).
    let dir = project(&[
        ("p/.claude/commands/greet.md", "x"),
        ("p/.claude/commands/ns/sub.md", "x"),
        ("p/.claude/commands/notes.txt", "not a command"),
        ("home/commands/ucmd.md", "x"),
        ("home/commands/greet.md", "listed once"),
    ]);
    let (cwd, user) = (dir.path().join("p"), dir.path().join("home"));
    assert_eq!(list(&cwd, Some(&user), &Sources::parse(None).unwrap()), ["greet", "ns:sub", "ucmd"]);
    assert_eq!(list(&cwd, Some(&user), &Sources::parse(Some("user")).unwrap()), ["greet", "ucmd"]);
    assert!(list(&cwd, Some(&user), &Sources::parse(Some("")).unwrap()).is_empty());
}
