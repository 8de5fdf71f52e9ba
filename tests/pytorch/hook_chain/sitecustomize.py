# A user's own sitecustomize, which Phantora's start-up hook must still run.
import os

os.environ["USER_SITECUSTOMIZE_RAN"] = "1"
