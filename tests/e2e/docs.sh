#!/usr/bin/env bash
# The documents cannot drift from the program: the option table of
# docs/usage.md lists exactly the options `cprof --help` prints, each with
# the help's own synopsis; every option README.md and docs/*.md mention, and
# every option of their `cprof` command lines, exists; README command 1 is
# quoted as the Makefile's demo target runs it; every relative link and
# every source path the documents name exists; THIRD-PARTY-NOTICES.md names
# the versions third_party/versions pins. Needs no BPF.
# tag: quick
source "$(dirname "$0")/../lib.sh"

USAGE=$ROOT/docs/usage.md
README=$ROOT/README.md
NOTICES=$ROOT/THIRD-PARTY-NOTICES.md
DOCS=("$README" "$ROOT"/docs/*.md "$NOTICES")
# Options of other programs that the README names.
README_FOREIGN=()
# Paths the documents name that are announced but not in the tree yet.
PLANNED_PATHS=()

if ! "$CPROF" --help >"$TMP/help" 2>"$TMP/help.err"; then
	not_ok help_runs "$(cat "$TMP/help.err")"
	finish
	exit
fi

# Synopses: the text of an option line up to the first two spaces, e.g.
# "-p, --pid PID[,PID...]" or "--format FORMAT". Option lines start with two
# spaces and a short option, or six spaces and a long one.
mapfile -t synopses < <(awk '/^  -[A-Za-z], --[a-z]/ || /^      --[a-z]/ {
	sub(/^ +/, ""); i = index($0, "  "); print (i ? substr($0, 1, i - 1) : $0) }' "$TMP/help")
declare -A is_synopsis=() is_option=()
for syn in "${synopses[@]}"; do
	is_synopsis[$syn]=1
	[[ $syn =~ ^(-[A-Za-z]),\  ]] && is_option[${BASH_REMATCH[1]}]=1
	[[ $syn =~ (--[a-z][a-z-]*) ]] && is_option[${BASH_REMATCH[1]}]=1
done
if [ "${#synopses[@]}" -ge 20 ] && [ -n "${is_option[--pid]:-}" ] && [ -n "${is_option[-p]:-}" ] &&
	[ -n "${is_option[--spool-max-bytes]:-}" ]; then
	ok help_lists_options
else
	not_ok help_lists_options "read ${#synopses[@]} options from --help: ${synopses[*]}"
fi

# unknown_options FILE [FOREIGN...]: the --words of FILE that are neither a
# cprof option nor one of FOREIGN, space-separated.
unknown_options() {
	local f=$1 o out=""
	shift
	local -A foreign=()
	for o in "$@"; do foreign[$o]=1; done
	while read -r o; do
		[ -n "${is_option[$o]:-}" ] || [ -n "${foreign[$o]:-}" ] || out+=" $o"
	done < <(grep -oE -- '(^|[^A-Za-z0-9_-])--[a-z][a-z-]*' "$f" | sed 's/^[^-]*//' | sort -u)
	echo "${out# }"
}

bad=$(unknown_options "$TMP/help")
if [ -z "$bad" ]; then ok help_mentions_only_its_options; else
	not_ok help_mentions_only_its_options "--help mentions options it does not define: $bad"; fi

# The table of docs/usage.md: rows whose first cell is `-...`.
if [ ! -f "$USAGE" ]; then
	not_ok usage_exists "$USAGE missing"
	finish
	exit
fi
mapfile -t rows < <(awk -F'|' '/^\| *`-/ { c = $2; gsub(/^ *`|` *$/, "", c); print c }' "$USAGE")
declare -A is_row=()
for row in "${rows[@]}"; do is_row[$row]=1; done
for syn in "${synopses[@]}"; do
	[[ $syn =~ (--[a-z][a-z-]*) ]] && long=${BASH_REMATCH[1]}
	if [ -n "${is_row[$syn]:-}" ]; then ok "usage_documents_$long"; else
		not_ok "usage_documents_$long" "docs/usage.md has no table row \`$syn\` (as cprof --help writes it)"; fi
done
# ... and the other way: every row that names a long option is one of the help's synopses.
bad=""
for row in "${rows[@]}"; do
	[[ $row =~ --[a-z] ]] && [ -z "${is_synopsis[$row]:-}" ] && bad+=" \`$row\`"
done
if [ -z "$bad" ]; then ok usage_rows_are_help_options; else
	not_ok usage_rows_are_help_options "rows of docs/usage.md that cprof --help does not list:$bad"; fi
bad=$(unknown_options "$USAGE")
if [ -z "$bad" ]; then ok usage_mentions_only_real_options; else
	not_ok usage_mentions_only_real_options "docs/usage.md mentions options cprof does not have: $bad"; fi

bad=$(unknown_options "$README" "${README_FOREIGN[@]}")
if [ -z "$bad" ]; then ok readme_mentions_only_real_options; else
	not_ok readme_mentions_only_real_options "README.md mentions options cprof does not have: $bad"; fi

# cprof command lines in code blocks and code spans of every document: each
# option up to the command (a bare --) or the end of the cprof command.
mapfile -t used < <(for f in "${DOCS[@]}"; do
	awk -v file="${f#"$ROOT"/}" '
		/^```/ { block = !block; next }
		{
			line = $0
			if (!block) {  # only code spans outside code blocks
				spans = ""
				while (match(line, /`[^`]*`/)) {
					spans = spans " ; " substr(line, RSTART + 1, RLENGTH - 2)
					line = substr(line, RSTART + RLENGTH)
				}
				line = spans
			}
			n = split(line, w, /[ \t]+/)
			for (i = 1; i <= n; i++) {
				if (w[i] != "cprof" && w[i] != "./cprof") continue
				for (j = i + 1; j <= n; j++) {
					if (w[j] == "--" || w[j] ~ /^(\||>|#|;|&&|\))/) break
					if (w[j] ~ /^-./) { o = w[j]; sub(/=.*/, "", o); print file ": " o }
				}
				i = j
			}
		}' "$f"
done)
bad=""
for u in "${used[@]}"; do
	[ -n "${is_option[${u##* }]:-}" ] || bad+="; $u"
done
[ "${#used[@]}" -gt 0 ] || bad="; no cprof command line found in the documents"
if [ -z "$bad" ]; then ok examples_use_real_options; else
	not_ok examples_use_real_options "${bad#; }"; fi

# README command 1: the opening is the two commands, and the command the
# Makefile's demo target runs is quoted exactly.
first_block=$(awk '/^```/ { if (b) exit; b = 1; next } b' "$README")
if [[ $first_block =~ ^\./build\.sh\ demo\ [^$'\n']*$'\n'\./build\.sh\ test\ [^$'\n']*$ ]]; then
	ok readme_opens_with_the_two_commands
else
	not_ok readme_opens_with_the_two_commands "first code block of README.md: $first_block"
fi
demo=$(awk '/^demo:/ { d = 1; next } d && /^\t/ { sub(/^\t@?/, ""); print; exit }' "$ROOT/Makefile")
if [ -n "$demo" ] && grep -qxF -- "$demo" "$README"; then ok readme_states_demo_command; else
	not_ok readme_states_demo_command "README.md does not quote the demo command on a line of its own: ${demo:-(no demo target)}"; fi

# Relative links ([text](path#anchor)) resolve from the document's directory.
bad=""
for f in "${DOCS[@]}"; do
	while read -r l; do
		[ -e "${f%/*}/$l" ] || bad+="; ${f#"$ROOT"/}: $l"
	done < <(grep -oE '\]\([^)#:]+(#[^)]*)?\)' "$f" | sed -E 's/^\]\(//; s/[#)].*//')
done
if [ -z "$bad" ]; then ok docs_links_resolve; else
	not_ok docs_links_resolve "links to nothing: ${bad#; }"; fi

# Source paths the documents name (src/..., bpf/..., tests/..., ...) exist;
# placeholders in capitals (TARGET, NAME) and globs are allowed.
bad=""
for f in "${DOCS[@]}"; do
	while read -r p; do
		[[ " ${PLANNED_PATHS[*]} " == *" $p "* ]] && continue
		[[ $p =~ (^|/)[A-Z][A-Z_]*(/|$) ]] && continue
		compgen -G "$ROOT/$p" >/dev/null || bad+="; ${f#"$ROOT"/}: $p"
	done < <(grep -oE '(^|[^A-Za-z0-9_./-])(src|bpf|tests|fixtures|third_party|bench|qemu)/[A-Za-z0-9_.*/-]*' "$f" |
		sed -E 's/^[^a-z]//; s/[.]+$//' | sort -u)
done
if [ -z "$bad" ]; then ok docs_paths_exist; else
	not_ok docs_paths_exist "paths that do not exist: ${bad#; }"; fi

# Every pin of third_party/versions is in the notices: NAME=VERSION for a
# source package (as apt-get source takes it), "NAME VERSION" for a binary one.
mapfile -t pins < <(awk '$1 == "source" { print $2 "=" $3 } $1 == "deb" { print $2 " " $3 }' \
	"$ROOT/third_party/versions")
notices=$(cat "$NOTICES")
bad=""
for pin in "${pins[@]}"; do
	[[ $notices == *"$pin"* ]] || bad+="; $pin"
done
[ "${#pins[@]}" -gt 0 ] || bad="; (no pins read from third_party/versions)"
if [ -z "$bad" ]; then ok notices_name_pinned_versions; else
	not_ok notices_name_pinned_versions "THIRD-PARTY-NOTICES.md does not name: ${bad#; }"; fi
finish
