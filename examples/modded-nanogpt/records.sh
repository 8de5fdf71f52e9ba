# shellcheck shell=bash
# Sourced by examples/modded-nanogpt/run.sh and scripts/setup-modded-nanogpt.sh: reading
# records.txt beside this file, the one table of the records both can run.
records_table=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/records.txt

# record_fields NAME: the record's commit, log and torch release on one line; nothing when the
# table has no such record.
record_fields() {
  awk -v r="$1" '!/^#/ && $1 == r { print $2, $3, $4 }' "$records_table"
}

# record_names: every record's name, one per line.
record_names() {
  awk '!/^#/ && NF { print $1 }' "$records_table"
}

# unknown_record TOOL NAME: says on standard error that NAME is not in the table, and which are.
unknown_record() {
  echo "$1: unknown record '$2' (the names in $records_table: $(record_names | tr '\n' ' '))" >&2
}
