# shellcheck shell=bash
# Sourced by the scripts that set up and run published programs listed in a table of named rows
# (examples/modded-nanogpt/records.txt, examples/llmc/scripts.txt): the one reading of such a
# table. A table holds '#' comment lines and rows of whitespace-separated fields, the name first.

# table_row TABLE NAME: the row's fields after its name, on one line; nothing when the table has
# no such row (so `read -r ... < <(table_row ...)` fails).
table_row() {
  awk -v r="$2" '!/^#/ && $1 == r { $1 = ""; print substr($0, 2) }' "$1"
}

# table_names TABLE: every row's name, one per line.
table_names() {
  awk '!/^#/ && NF { print $1 }' "$1"
}

# unknown_name TOOL TABLE NAME: says on standard error that NAME is not in TABLE, and which are.
unknown_name() {
  echo "$1: unknown name '$3' (the names in $2: $(table_names "$2" | tr '\n' ' '))" >&2
}
