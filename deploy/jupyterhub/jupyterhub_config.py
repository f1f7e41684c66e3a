"""A class on one machine: JupyterHub for the agent-memory series, set by environment variables.

One server, the Littlest JupyterHub's way: one hub, one proxy, one shared Python environment
with the series installed (this project's venv: `pip install -e ".[dev]"` brings
jupyterhub, the proxy and the idle culler), every learner's Jupyter server a local process in
their own home folder, which gets their own copy of the notebooks on first start. Start it
with

    .venv/bin/jupyterhub -f deploy/jupyterhub/jupyterhub_config.py

in the folder that keeps the hub's state (its database and cookie secret). README.md beside
this file says what each setting means; the settings (all optional):

LESSON_HUB_IP, LESSON_HUB_PORT   where learners connect (127.0.0.1:8000)
LESSON_HUB_API_PORT              the hub's own API, for the proxy and the servers (8081)
LESSON_HUB_PROXY_API_PORT        the proxy's API, for the hub (8001)
LESSON_HUB_USERS                 "system" (default): learners are this machine's accounts,
                                 logging in with their password (PAM), each server running
                                 as its learner; "test": any name, no password, every server
                                 as the hub's own user in LESSON_HUB_HOMES/<name> (NOT for a
                                 class: no isolation at all)
LESSON_HUB_HOMES                 "test" users' homes (/tmp/lesson-hub-homes)
LESSON_HUB_ADMINS, LESSON_HUB_LEARNERS   comma-separated names (no list: anyone who can log in)
LESSON_HUB_NOTEBOOKS             which notebooks each learner gets, by number: "all" (default)
                                 or e.g. "00,01,02"; both editions (notebooks/zh too)
LESSON_HUB_MODEL                 "kernel" (default): the offline model runs inside each
                                 kernel; "served": one model for the class, a hub-managed
                                 service behind a key, that every kernel is pointed at
LESSON_HUB_MODEL_PORT            the served model's port on 127.0.0.1 (8765)
LESSON_HUB_MODEL_WORKERS         its processes (2; one per core you can spare)
LESSON_SERVE_API_KEY             its key (default: a new random one at each hub start)
LESSON_HUB_CULL_AFTER            seconds idle before a learner's server is stopped (3600)
LESSON_HUB_SPAWN_LIMIT           servers starting at once before the hub answers 429 (10)
LESSON_HUB_ADMIN_TOKEN           a token for class scripts (a service with admin rights)
"""

import os
import pwd
import secrets
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821  (JupyterHub's config loader provides get_config)

SERIES = Path(__file__).resolve().parents[2]  # the project: notebooks/ and lesson_lib
BIN = Path(sys.executable).parent  # the environment the hub runs in, with the series in it
MODEL_ID = "offline-rule-based-teacher"  # lesson_lib.offline.MODEL_ID (not imported: the
# hub's config stays readable without loading the lesson's package)


def setting(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def names(name: str) -> set[str]:
    return {n.strip() for n in os.environ.get(name, "").split(",") if n.strip()}


# ------------------------------------------------------------------ where it listens
ip = setting("LESSON_HUB_IP", "127.0.0.1")
c.JupyterHub.bind_url = f"http://{ip}:{int(setting('LESSON_HUB_PORT', '8000'))}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(setting("LESSON_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{int(setting('LESSON_HUB_PROXY_API_PORT', '8001'))}"
# the proxy: the pure-Python configurable-http-proxy that `pip install -e ".[dev]"` brings
# (no Node.js needed); the npm one works the same if you put it first on the hub's PATH
if (BIN / "configurable-http-proxy").exists() and not shutil.which("configurable-http-proxy",
                                                                   path=os.environ.get("PATH")):
    c.ConfigurableHTTPProxy.command = [str(BIN / "configurable-http-proxy")]
c.JupyterHub.cleanup_servers = True  # the hub stops learners' servers when it stops

# ------------------------------------------------------------------ who logs in
users = setting("LESSON_HUB_USERS", "system")
if users not in ("system", "test"):
    sys.exit(f"LESSON_HUB_USERS={users!r}: use 'system' (this machine's accounts) or 'test'")
c.Authenticator.admin_users = names("LESSON_HUB_ADMINS")
if names("LESSON_HUB_LEARNERS"):
    c.Authenticator.allowed_users = names("LESSON_HUB_LEARNERS")
else:
    c.Authenticator.allow_all = True
if users == "test":
    c.JupyterHub.authenticator_class = "dummy"  # any name; no password: for tests only
    c.JupyterHub.spawner_class = "simple"  # SimpleLocalProcessSpawner: one OS user for all
    homes = Path(setting("LESSON_HUB_HOMES", "/tmp/lesson-hub-homes"))
    c.SimpleLocalProcessSpawner.home_dir_template = str(homes / "{username}")
    c.Spawner.notebook_dir = str(homes / "{username}")
    if os.geteuid() == 0:  # a container's root: Jupyter refuses root without this
        c.Spawner.args.append("--ServerApp.allow_root=True")
else:
    c.JupyterHub.authenticator_class = "pam"  # the machine's accounts and passwords
    c.JupyterHub.spawner_class = "localprocess"  # each server runs as its learner
    c.Spawner.notebook_dir = "~"

# every learner's server: the series' environment, JupyterLab, their notebooks first
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab/tree/notebooks"
# nothing leaves the room: JupyterLab neither offers nor fetches its news feed, and does not
# look for a newer version of itself (the server's switches, and the defaults a learner's lab
# starts with, from lab-settings/overrides.json beside this file)
c.Spawner.args.extend(["--LabApp.news_url=None",
                       "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                       f"--LabApp.app_settings_dir={Path(__file__).resolve().parent / 'lab-settings'}"])
c.Spawner.start_timeout = 120  # a busy machine: many learners start at the bell
c.Spawner.http_timeout = 120
c.JupyterHub.concurrent_spawn_limit = int(setting("LESSON_HUB_SPAWN_LIMIT", "10"))

# ------------------------------------------------------------------ each learner's notebooks
wanted = setting("LESSON_HUB_NOTEBOOKS", "all")


def _series_notebooks() -> list[Path]:
    """The notebooks a learner gets, relative to notebooks/: both editions."""
    found = []
    for edition in (SERIES / "notebooks", SERIES / "notebooks" / "zh"):
        for nb in sorted(edition.glob("*.ipynb")):
            if wanted == "all" or nb.name.split("_")[0] in {w.strip() for w in wanted.split(",")}:
                found.append(nb.relative_to(SERIES / "notebooks"))
    return found


def give_notebooks(spawner) -> None:
    """Before a learner's server starts: copy the series' notebooks they do not have yet into
    notebooks/ in their home (a notebook they changed is never overwritten), theirs alone."""
    if users == "test":
        home = Path(spawner.home_dir)
        owner = None
    else:
        account = pwd.getpwnam(spawner.user.name)  # a real account: the hub runs as root
        home, owner = Path(account.pw_dir), (account.pw_uid, account.pw_gid)
    made = []
    for relative in _series_notebooks():
        target = home / "notebooks" / relative
        # as root in a learner's home, follow none of their symbolic links: a link named
        # notebooks -> /etc must not make the hub write or chown there
        chain = [home / "notebooks", *(home / "notebooks" / p for p in relative.parents[:-1]
                                       if str(p) != "."), target]
        if any(p.is_symlink() for p in chain):
            spawner.log.warning("%s: %s is a symbolic link; its notebooks are not copied",
                                spawner.user.name, next(p for p in chain if p.is_symlink()))
            continue
        if not os.path.lexists(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SERIES / "notebooks" / relative, target)
            made.append(target)
    if owner is not None:  # as root: the learner owns their copies and the folders
        for path in {home / "notebooks", *made, *(p.parent for p in made)}:
            os.chown(path, *owner, follow_symlinks=False)
            path.chmod(0o700 if path.is_dir() else 0o600)


c.Spawner.pre_spawn_hook = give_notebooks

# ------------------------------------------------------------------ the offline model
model = setting("LESSON_HUB_MODEL", "kernel")
if model not in ("kernel", "served"):
    sys.exit(f"LESSON_HUB_MODEL={model!r}: use 'kernel' (in each kernel) or 'served'")
services, roles = [], []
if model == "served":
    port = int(setting("LESSON_HUB_MODEL_PORT", "8765"))
    key = os.environ.get("LESSON_SERVE_API_KEY") or secrets.token_urlsafe(24)
    services.append({
        "name": "offline-model",
        "command": [sys.executable, "-m", "lesson_lib.offline", "serve", "--port", str(port),
                    "--workers", setting("LESSON_HUB_MODEL_WORKERS", "2")],
        "environment": {"LESSON_SERVE_API_KEY": key},  # in the environment: not in `ps`
    })
    c.Spawner.environment = {  # every learner's kernel, as lesson_lib.llm reads them
        "LESSON_BACKEND": "openai",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": key,
        "LESSON_MODEL": MODEL_ID,
    }

# ------------------------------------------------------------------ the idle culler
services.append({
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={int(setting('LESSON_HUB_CULL_AFTER', '3600'))}",
                "--cull-every=300"],
})
roles.append({"name": "idle-culler", "services": ["idle-culler"],
              "scopes": ["list:users", "read:users:activity", "read:servers",
                         "delete:servers"]})

# ------------------------------------------------------------------ a token for class scripts
admin_token = os.environ.get("LESSON_HUB_ADMIN_TOKEN")
if admin_token:
    services.append({"name": "class-admin", "api_token": admin_token})
    roles.append({"name": "class-admin", "services": ["class-admin"],
                  "scopes": ["admin:users", "admin:servers", "tokens", "list:services", "read:services",
                             "access:servers", "list:users"]})

c.JupyterHub.services = services
c.JupyterHub.load_roles = roles
