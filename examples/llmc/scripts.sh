# shellcheck shell=bash
# Sourced by examples/llmc/run.sh and scripts/setup-llmc.sh: reading scripts.txt beside this
# file, the one table of the llm.c runs both know.
llmc_table=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/scripts.txt

# llmc_fields NAME: the run's commit, script and published step time on one line; nothing when
# the table has no such run.
llmc_fields() {
  awk -v r="$1" '!/^#/ && $1 == r { print $2, $3, $4 }' "$llmc_table"
}

# llmc_names: every run's name, one per line.
llmc_names() {
  awk '!/^#/ && NF { print $1 }' "$llmc_table"
}

# unknown_llmc TOOL NAME: says on standard error that NAME is not in the table, and which are.
unknown_llmc() {
  echo "$1: unknown run '$2' (the names in $llmc_table: $(llmc_names | tr '\n' ' '))" >&2
}
