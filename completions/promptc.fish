# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_promptc_global_optspecs
    string join \n color= width= no-mmap h/help V/version
end

function __fish_promptc_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_promptc_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_promptc_using_subcommand
    set -l cmd (__fish_promptc_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c promptc -n "__fish_promptc_needs_command" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_needs_command" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_needs_command" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_needs_command" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_needs_command" -s V -l version -d 'Print version'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "view" -d 'Show the raw history and the model view of a session, side by side'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "compile" -d 'Compile the request the agent sent (or would send on resume) at a turn and step'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "fingerprint" -d 'Fingerprint every step\'s request, component by component'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "steps" -d 'One row per step: observed and predicted prompt-cache use, and why'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "diff" -d 'Compare two sessions request by request and name every drift'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "check" -d 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "sessions" -d 'List the sessions under the Codex home and the Claude Code home, newest first'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "report" -d 'Tokens, cache hits, losses by cause and dollars across many sessions'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "watch" -d 'Follow a live session of either agent: each request\'s `steps` row once it is final'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c promptc -n "__fish_promptc_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c promptc -n "__fish_promptc_using_subcommand view" -l turn -d 'A turn: its number (from 1) or its turn id' -r
complete -c promptc -n "__fish_promptc_using_subcommand view" -l step -d 'A step (sampling request) within the turn, from 1' -r
complete -c promptc -n "__fish_promptc_using_subcommand view" -l format -d 'Output format' -r -f -a "text\t''
json\t''
html\t'One self-contained page: every request, its cache bar and its difference from the one before'"
complete -c promptc -n "__fish_promptc_using_subcommand view" -s o -l output -d 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand view" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand view" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand view" -l strict -d 'Fail on the first line that cannot be read, instead of skipping it with a warning'
complete -c promptc -n "__fish_promptc_using_subcommand view" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand view" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand view" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l turn -d 'A turn: its number (from 1) or its turn id' -r
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l step -d 'A step (sampling request) within the turn, from 1' -r
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l output-schema -d 'The JSON schema given to `codex exec --output-schema`, sent as `text.format`. Codex 0.104 and 0.122 record it; the other builds do not, and without it it is unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l strict -d 'Fail on the first line that cannot be read, instead of skipping it with a warning'
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l full -d 'Print long texts whole instead of folding them'
complete -c promptc -n "__fish_promptc_using_subcommand compile" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand compile" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l turn -d 'A turn: its number (from 1) or its turn id' -r
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l step -d 'A step (sampling request) within the turn, from 1' -r
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l strict -d 'Fail on the first line that cannot be read, instead of skipping it with a warning'
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand fingerprint" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l strict -d 'Fail on the first line that cannot be read, instead of skipping it with a warning'
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l no-tokens -d 'Skip token estimation (faster; estimated and predicted columns show `-`)'
complete -c promptc -n "__fish_promptc_using_subcommand steps" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand steps" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l turn -d 'A turn: its number (from 1) or its turn id' -r
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l step -d 'A step (sampling request) within the turn, from 1' -r
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l format -d 'Output format' -r -f -a "text\t''
json\t''
html\t'One self-contained page: every request, its cache bar and its difference from the one before'"
complete -c promptc -n "__fish_promptc_using_subcommand diff" -s o -l output -d 'Write the page to FILE instead of standard output (`--format html`; `-` is standard output)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l strict -d 'Fail on the first line that cannot be read'
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l no-tokens -d 'Skip token estimation (faster; the common prefix is given in items only)'
complete -c promptc -n "__fish_promptc_using_subcommand diff" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c promptc -n "__fish_promptc_using_subcommand check" -l baseline -d 'A JSON file of every step\'s fingerprint per file: any difference fails' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand check" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand check" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand check" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand check" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand check" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand check" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand check" -l update-baseline -d 'Write the baseline file from these files instead of comparing'
complete -c promptc -n "__fish_promptc_using_subcommand check" -l strict -d 'Fail on the first line that cannot be read'
complete -c promptc -n "__fish_promptc_using_subcommand check" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand check" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand check" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l agent -d 'Only this agent\'s sessions (default: both)' -r -f -a "codex\t'OpenAI Codex CLI rollouts'
claude\t'Claude Code transcripts'"
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l codex-home -d 'The Codex home (default: $CODEX_HOME, else ~/.codex)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l claude-home -d 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand sessions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c promptc -n "__fish_promptc_using_subcommand report" -l agent -d 'Only this agent\'s sessions (default: both)' -r -f -a "codex\t'OpenAI Codex CLI rollouts'
claude\t'Claude Code transcripts'"
complete -c promptc -n "__fish_promptc_using_subcommand report" -l codex-home -d 'The Codex home (default: $CODEX_HOME, else ~/.codex)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand report" -l claude-home -d 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand report" -l since -d 'Count requests from this day on (YYYY-MM-DD, in --timezone)' -r
complete -c promptc -n "__fish_promptc_using_subcommand report" -l until -d 'Count requests up to this day, inclusive (YYYY-MM-DD, in --timezone)' -r
complete -c promptc -n "__fish_promptc_using_subcommand report" -l timezone -d 'The time zone of dates and days: an IANA name (Europe/Paris) or UTC (default: the system\'s local zone)' -r
complete -c promptc -n "__fish_promptc_using_subcommand report" -l by -d 'Group requests by this' -r -f -a "day\t''
week\t''
month\t''
model\t''
session\t''
cwd\t''
cause\t''
agent\t''"
complete -c promptc -n "__fish_promptc_using_subcommand report" -l top -d 'Sessions listed in the table of those that lost the most' -r
complete -c promptc -n "__fish_promptc_using_subcommand report" -l format -d 'Output format' -r -f -a "text\t''
json\t''
html\t'One self-contained page (charts drawn as inline SVG; no network, no scripts)'"
complete -c promptc -n "__fish_promptc_using_subcommand report" -s o -l output -d 'Write the report to FILE instead of standard output (`-` is standard output)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand report" -l pricing -d 'A JSON price table that extends the built-in one (or replaces it, with `"replace": true`): `{"as_of": "...", "source": "...", "models": {"MODEL": {"input": 1.25, "cached_input": 0.125, "output": 10}}}`, USD per million tokens. A price may say the day it took effect and carry its earlier prices (`"from": "YYYY-MM-DD", "history": [{..., "from": ...}]`): each request is priced at its UTC day\'s; `"cache_write"` prices cache writes. See PRICING.md' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand report" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand report" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand report" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand report" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l agent -d 'Only this agent\'s sessions for `latest`, session ids and `--next` (default: both); the file given must be this agent\'s (an empty one is taken as its)' -r -f -a "codex\t'OpenAI Codex CLI rollouts'
claude\t'Claude Code transcripts'"
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l codex-home -d 'The Codex home to look `latest` and session ids up in (default: $CODEX_HOME, else ~/.codex)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l claude-home -d 'The Claude Code home, which holds `projects/` (default: $CLAUDE_CONFIG_DIR, else ~/.claude)' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l interval -d 'How often to look for new bytes, in milliseconds' -r
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l tools -d 'A JSON array of tool specs (as the Responses API or, for Claude Code, the Messages API takes them), or a captured request with a `tools` field. Without it the tools are unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l instructions -d 'Codex: the base instructions text, as sent (the `instructions` field, or from Codex 0.162 the leading developer message). Without it: `session_meta.base_instructions` or a `turn_context` override when recorded, else unknown' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l system -d 'Claude Code: the system blocks, as sent (a JSON array of blocks or a string, or a captured request with a `system` field). Builds before 2.1.3xx do not record them' -r -F
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l format -d 'Output format' -r -f -a "text\t''
json\t''"
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l next -d 'Also follow the next session either agent starts: when a newer session appears under the homes, switch to it'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l exit-on-drift -d 'Exit with status 1 at the first unexpected drift (a prefix that broke)'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l json -d 'Short for `--format json`'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l no-tokens -d 'Skip token estimation (faster; estimated and predicted columns show `-`)'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c promptc -n "__fish_promptc_using_subcommand completions" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand completions" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand completions" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand completions" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand man" -l color -d 'When to use colour on stdout and stderr' -r -f -a "auto\t''
always\t''
never\t''"
complete -c promptc -n "__fish_promptc_using_subcommand man" -l width -d 'Output width in columns (default: $COLUMNS, else 100)' -r
complete -c promptc -n "__fish_promptc_using_subcommand man" -l no-mmap -d 'Does nothing: promptc reads every rollout into memory. Kept so that scripts that pass it still run'
complete -c promptc -n "__fish_promptc_using_subcommand man" -s h -l help -d 'Print help'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "view" -d 'Show the raw history and the model view of a session, side by side'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "compile" -d 'Compile the request the agent sent (or would send on resume) at a turn and step'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "fingerprint" -d 'Fingerprint every step\'s request, component by component'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "steps" -d 'One row per step: observed and predicted prompt-cache use, and why'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "diff" -d 'Compare two sessions request by request and name every drift'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "check" -d 'Check invariants of sessions and compare their fingerprints with a baseline (for CI)'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "sessions" -d 'List the sessions under the Codex home and the Claude Code home, newest first'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "report" -d 'Tokens, cache hits, losses by cause and dollars across many sessions'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "watch" -d 'Follow a live session of either agent: each request\'s `steps` row once it is final'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "man" -d 'Print the man page (roff)'
complete -c promptc -n "__fish_promptc_using_subcommand help; and not __fish_seen_subcommand_from view compile fingerprint steps diff check sessions report watch completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
