# Sourced by the setup scripts of published programs (setup-torchtitan-published.sh,
# setup-modded-nanogpt.sh): pinned_venv TOOL REQUIREMENTS VENV builds VENV with every package of
# REQUIREMENTS, or reuses it while it was built from the same file (a copy kept as
# VENV/.phantora-requirements). TOOL names the script in its messages.
pinned_venv() {
  local tool=$1 req=$2 venv=$3
  local stamp=$venv/.phantora-requirements
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp"; then
    echo "$tool: using $venv"
    return 0
  fi
  echo "$tool: installing $req into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$req"
  cp "$req" "$stamp"
}
