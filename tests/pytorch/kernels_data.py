"""The cost models' shipped tables (kernels-db/data/<name>.toml) that the PyTorch checks take
their figures from, so that each check's expectation follows the same constants the simulator
reads."""
import os
import tomllib

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "kernels-db", "data")


def kernels_data(name):
    """kernels-db/data/NAME.toml, parsed (NAME: "gpus" or "models")."""
    with open(os.path.join(DATA, f"{name}.toml"), "rb") as f:
        return tomllib.load(f)
