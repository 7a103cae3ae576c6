//! Flags the real Claude Code CLI accepts (2.1.197's and 2.1.332's `--help`, kept in
//! tests/print/help/) that mean nothing to a headless reloop: interactive, cloud, IDE, browser and
//! UI switches. Print mode accepts each so a script written for `claude -p` runs unchanged, and
//! says on stderr that it is not honoured (tests/print_recorded.rs holds the lists to this).

/// The Claude Code flags accepted and not honoured (see the module's doc).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct Accepted {
    #[arg(long, hide = true, value_name = "auto|tokens")]
    autocompact: Option<String>,
    #[arg(long, hide = true, value_name = "FILE")]
    append_system_prompt_file: Option<String>,
    #[arg(long, hide = true)]
    ax_screen_reader: bool,
    #[arg(long, hide = true)]
    bare: bool,
    #[arg(long = "bg", alias = "background", hide = true)]
    background: bool,
    #[arg(long, hide = true)]
    brief: bool,
    #[arg(long, hide = true)]
    chrome: bool,
    #[arg(long, hide = true)]
    no_chrome: bool,
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "")]
    cloud: Option<String>,
    #[arg(long, hide = true)]
    desktop: bool,
    #[arg(long, hide = true)]
    disable_slash_commands: bool,
    #[arg(long, hide = true, value_name = "ID")]
    environment: Option<String>,
    #[arg(long, hide = true)]
    exclude_dynamic_system_prompt_sections: bool,
    #[arg(long, hide = true, num_args = 1.., value_name = "SPECS")]
    file: Vec<String>,
    #[arg(long, hide = true)]
    forward_subagent_text: bool,
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "")]
    from_pr: Option<String>,
    #[arg(long, hide = true)]
    ide: bool,
    #[arg(long, short = 'n', hide = true)]
    name: Option<String>,
    #[arg(long, hide = true)]
    plugin_url: Option<String>,
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "true")]
    prompt_suggestions: Option<String>,
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "")]
    remote_control: Option<String>,
    #[arg(long, hide = true)]
    remote_control_session_name_prefix: Option<String>,
    #[arg(long, hide = true)]
    restricted: bool,
    #[arg(long, hide = true)]
    safe_mode: bool,
    #[arg(long, hide = true, value_name = "on|off")]
    system_prompt_snapshot: Option<String>,
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "")]
    teleport: Option<String>,
    #[arg(long, hide = true)]
    tmux: bool,
    #[arg(long, short = 'w', hide = true, num_args = 0..=1, default_missing_value = "")]
    worktree: Option<String>,
}

impl Accepted {
    /// The flags given, each with why it is not honoured.
    pub fn unhonoured(&self) -> Vec<(&'static str, &'static str)> {
        const UI: &str = "reloop -p has no interactive or app interface";
        const CLOUD: &str = "reloop runs locally only";
        let given = [
            (self.autocompact.is_some(), "--autocompact", "the compaction window comes from the model's context"),
            (self.ax_screen_reader, "--ax-screen-reader", UI),
            (
                self.append_system_prompt_file.is_some(),
                "--append-system-prompt-file",
                "give the text with --append-system-prompt",
            ),
            (self.bare, "--bare", "hooks, skills and instruction files are read as usual"),
            (self.background, "--bg", UI),
            (self.brief, "--brief", "there is no SendUserMessage tool"),
            (self.chrome, "--chrome", UI),
            (self.no_chrome, "--no-chrome", UI),
            (self.cloud.is_some(), "--cloud", CLOUD),
            (self.desktop, "--desktop", UI),
            (self.disable_slash_commands, "--disable-slash-commands", "reloop has no slash commands or skills"),
            (self.environment.is_some(), "--environment", CLOUD),
            (
                self.exclude_dynamic_system_prompt_sections,
                "--exclude-dynamic-system-prompt-sections",
                "reloop's system prompt has no such sections",
            ),
            (!self.file.is_empty(), "--file", CLOUD),
            (self.forward_subagent_text, "--forward-subagent-text", "subagent text is not forwarded"),
            (self.from_pr.is_some(), "--from-pr", "sessions are not linked to pull requests"),
            (self.ide, "--ide", UI),
            (self.name.is_some(), "--name", "sessions are named by id"),
            (self.plugin_url.is_some(), "--plugin-url", "plugins are not loaded"),
            (self.prompt_suggestions.is_some(), "--prompt-suggestions", "no prompt suggestions are made"),
            (self.remote_control.is_some(), "--remote-control", UI),
            (self.remote_control_session_name_prefix.is_some(), "--remote-control-session-name-prefix", UI),
            (self.restricted, "--restricted", "the built-in tools are offered as the tool flags say"),
            (self.safe_mode, "--safe-mode", "customizations are loaded as the flags say"),
            (self.system_prompt_snapshot.is_some(), "--system-prompt-snapshot", "the journal keeps every request"),
            (self.teleport.is_some(), "--teleport", CLOUD),
            (self.tmux, "--tmux", UI),
            (self.worktree.is_some(), "--worktree", "no git worktree is made; the session works in its directory"),
        ];
        given.into_iter().filter(|(on, _, _)| *on).map(|(_, flag, why)| (flag, why)).collect()
    }
}
