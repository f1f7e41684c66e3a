"""A class on Kubernetes, checked as far as a machine without Docker or Kubernetes allows.

deploy/kubernetes/ holds Zero to JupyterHub's Helm values and the offline model's manifest;
binder/ is what jupyter-repo2docker builds the learners' image from. Checked here:

- repo2docker's own detection picks binder/ (not the root environment.yml and its
  `-e .[dev]`), and its `--no-build` dry run prints a Dockerfile that installs the package
  from binder/requirements.txt without the dev extra, runs binder/postBuild and starts
  through binder/start; the build context repo2docker itself assembles (its own code, a
  stand-in for the Docker client) holds no tests, benchmarks, CI or maintainer scripts;
- binder/postBuild and binder/start, run for real: every learner gets both editions of the
  notebooks in their home, and what they changed is never overwritten;
- offline-model.yaml against Kubernetes' own schemas (kubernetes-validate, from PyPI);
- values.yaml against VALUES_SCHEMA below: the Zero to JupyterHub chart's schema is not in
  any package this project can install, so this is a documented subset of it, holding only
  the keys the file uses, each with the type the chart gives it and no other key allowed
  (a misspelt key fails); the values must also agree with offline-model.yaml;
- the model's start-up command from offline-model.yaml, run as the container runs it (on a
  free port here): a request without the key is refused with 401, a learner's kernel with
  the variables of values.yaml reaches it.

What is not checked here (no Docker, no cluster): that the image builds, that helm renders
the chart with these values, that the network policies are enforced.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
KUBE = ROOT / "deploy" / "kubernetes"
BINDER = ROOT / "binder"
BIN = Path(sys.executable).parent
NOTEBOOKS = sorted(p.relative_to(ROOT / "notebooks").as_posix()
                   for p in [*(ROOT / "notebooks").glob("*.ipynb"),
                             *(ROOT / "notebooks" / "zh").glob("*.ipynb")])


def _picked():
    """The build pack repo2docker's own detection picks for this repository, as its build
    does it (app.py: the first of its build packs whose detect() is true, in the folder)."""
    from repo2docker.app import Repo2Docker

    app = Repo2Docker()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        picked = next(bp for bp in (BP(base_image=app.base_image) for BP in app.buildpacks)
                      if bp.detect())
    finally:
        os.chdir(here)
    picked.platform = app.platform or "linux/amd64"  # as app.py sets it
    return picked


def values() -> dict:
    return yaml.safe_load((KUBE / "values.yaml").read_text(encoding="utf-8"))


def manifest() -> dict[str, dict]:
    docs = yaml.safe_load_all((KUBE / "offline-model.yaml").read_text(encoding="utf-8"))
    return {d["kind"]: d for d in docs if d}


# ------------------------------------------------------------------ the learners' image

def test_repo2docker_picks_binder_and_installs_the_package_without_the_dev_extra():
    from repo2docker.buildpacks import PythonBuildPack

    picked = _picked()
    assert isinstance(picked, PythonBuildPack), type(picked).__name__
    here = os.getcwd()
    os.chdir(ROOT)
    try:  # binder/ takes precedence over the root files; its runtime.txt sets Python
        assert picked.binder_dir == "binder" and picked.python_version == "3.11"
    finally:
        os.chdir(here)
    lines = [line.split("#")[0].strip()
             for line in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()]
    assert [line for line in lines if line] == ["."], lines  # the package, no extra

    # the dry run, as a teacher would type it (the learners' uid on Zero to JupyterHub)
    run = subprocess.run([str(BIN / "jupyter-repo2docker"), "--no-build", "--debug", "--no-run",
                          "--user-id", "1000", "--user-name", "jovyan", str(ROOT)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    dockerfile = run.stdout + run.stderr  # --debug prints the Dockerfile
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in dockerfile, dockerfile
    assert "[dev]" not in dockerfile and "env update" not in dockerfile, (
        "the image must not install the root environment.yml or the dev extra")
    assert "RUN ./binder/postBuild" in dockerfile
    assert 'ENV R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in dockerfile
    assert "COPY --chown=1000:1000 src/ ${REPO_DIR}/" in dockerfile


class _CapturingDocker:
    """Stands in for the Docker client: keeps the build context repo2docker sends it."""

    def build(self, fileobj, **kwargs):
        self.context = tarfile.open(fileobj=io.BytesIO(fileobj.read()))
        self.kwargs = kwargs
        return iter(())


def test_the_image_holds_neither_the_tests_nor_the_dev_tools():
    picked = _picked()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        docker = _CapturingDocker()
        list(picked.build(docker, "agent-memory:test", 0, {"NB_USER": "jovyan", "NB_UID": "1000"},
                          [], {}))
    finally:
        os.chdir(here)
    names = set(docker.context.getnames())
    source = {n.removeprefix("src/") for n in names if n.startswith("src/")}
    for needed in ("pyproject.toml", "lesson_lib/__init__.py", "lesson_lib/offline/server.py",
                   "binder/requirements.txt", "binder/postBuild", "binder/start",
                   *(f"notebooks/{nb}" for nb in NOTEBOOKS)):
        assert needed in source, f"{needed} is missing from the image's build context"
    tops = {n.split("/")[0] for n in source}
    for left_out in ("tests", "benchmarks", "scripts", ".ci", ".git", ".venv", "conftest.py",
                     "lesson_lib.egg-info"):
        assert left_out not in tops, f"{left_out} would be copied into every learner's image"
    assert not [n for n in source if "__pycache__" in n or ".ipynb_checkpoints" in n]


def _runnable(folder: Path) -> None:
    for script in ("postBuild", "start"):
        mode = (folder / script).stat().st_mode
        assert mode & stat.S_IXUSR, f"binder/{script} must be executable (git add --chmod=+x)"


def test_postbuild_and_start_give_every_learner_both_editions_and_keep_their_work(tmp_path):
    """binder/postBuild as repo2docker runs it (in the repository's copy, the package
    installed), then binder/start as the entrypoint runs it before a learner's server."""
    _runnable(BINDER)
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", repo / "notebooks")
    shutil.copytree(BINDER, repo / "binder")
    prefix = tmp_path / "prefix"  # stands in for ${NB_PYTHON_PREFIX}
    env = {k: v for k, v in os.environ.items() if not k.startswith("LESSON_")}
    env.update(NB_PYTHON_PREFIX=str(prefix), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    built = subprocess.run(["./binder/postBuild"], cwd=repo, env=env, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    master = prefix / "share" / "agent-memory" / "notebooks"
    try:
        assert sorted(p.relative_to(master).as_posix() for p in master.rglob("*.ipynb")) == \
            NOTEBOOKS

        home = tmp_path / "home" / "jovyan"  # a learner's new, empty home volume
        home.mkdir(parents=True)

        def start() -> subprocess.CompletedProcess:
            return subprocess.run(
                [str(repo / "binder" / "start"), sys.executable, "-c",
                 "import os, sys; print('server started in', os.getcwd()); sys.exit(7)"],
                cwd=home, env={**env, "HOME": str(home)}, capture_output=True, text=True,
                timeout=60)

        first = start()
        # the command ran (exec: its output and its exit status are the container's)
        assert first.returncode == 7 and "server started in" in first.stdout, first
        assert first.stderr == ""
        mine = sorted(p.relative_to(home / "notebooks").as_posix()
                      for p in (home / "notebooks").rglob("*.ipynb"))
        assert mine == NOTEBOOKS
        assert {p.relative_to(home).parts[0] for p in home.rglob("*")} == {"notebooks"}
        changed = home / "notebooks" / "zh" / "02_messages_are_memory.ipynb"
        changed.write_text("my own work", encoding="utf-8")  # writable: it is theirs
        (home / "notebooks" / "01_the_stateless_model.ipynb").unlink()
        again = start()
        assert again.returncode == 7, again
        assert changed.read_text(encoding="utf-8") == "my own work"
        assert (home / "notebooks" / "01_the_stateless_model.ipynb").exists()
    finally:
        for folder in [master, *master.rglob("*")]:  # postBuild made the master read-only
            folder.chmod(folder.stat().st_mode | stat.S_IWUSR)


# ------------------------------------------------------------------ the Helm values

_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_ENV_VALUE = {"anyOf": [_STR, {"type": "object", "required": ["valueFrom"],
                                "properties": {"valueFrom": {"type": "object"}},
                                "additionalProperties": False}]}


def _obj(properties: dict, required: tuple = ()) -> dict:
    return {"type": "object", "properties": properties, "additionalProperties": False,
            "required": list(required)}


# The keys values.yaml uses, with the types the Zero to JupyterHub chart (4.x,
# jupyterhub/values.schema.yaml) gives them, and no other key at these levels: a subset
# of the chart's schema, written here because the chart's own values.schema.json is not
# published in a package this project can install (it ships inside the Helm chart only).
# hub.config is free-form in the chart too (traitlets configuration, read by JupyterHub).
VALUES_SCHEMA = _obj({
    "hub": _obj({
        "config": {"type": "object", "additionalProperties": {"type": "object"}},
        "concurrentSpawnLimit": {"type": ["integer", "null"], "minimum": 0},
    }),
    "singleuser": _obj({
        "image": _obj({"name": _STR, "tag": _STR,
                       "pullPolicy": {"enum": [None, "", "IfNotPresent", "Always", "Never"]}},
                      required=("name", "tag")),
        "defaultUrl": {"type": ["string", "null"]},
        "memory": _obj({"guarantee": {"type": ["number", "string", "null"]},
                        "limit": {"type": ["number", "string", "null"]}}),
        "cpu": _obj({"guarantee": {"type": ["number", "null"]},
                     "limit": {"type": ["number", "null"]}}),
        "storage": _obj({"capacity": _STR}),
        "extraEnv": {"type": "object", "additionalProperties": _ENV_VALUE},
        "networkPolicy": _obj({
            "enabled": _BOOL,
            "egressAllowRules": _obj({name: _BOOL for name in (
                "cloudMetadataServer", "dnsPortsCloudMetadataServer",
                "dnsPortsKubeSystemNamespace", "dnsPortsPrivateIPs", "nonPrivateIPs",
                "privateIPs")}),
            "egress": {"type": "array", "items": {"type": "object"}},  # k8s egress rules
        }),
    }),
    "cull": _obj({"enabled": _BOOL, "timeout": {"type": "integer", "minimum": 1},
                  "every": {"type": "integer", "minimum": 1}}),
}, required=("hub", "singleuser", "cull"))


def test_the_values_use_the_charts_keys_and_types():
    jsonschema.validate(values(), VALUES_SCHEMA)
    # the check can fail: a misspelt key, a wrong type
    typo = values()
    typo["singleuser"]["memmory"] = typo["singleuser"].pop("memory")
    with pytest.raises(jsonschema.ValidationError, match="memmory"):
        jsonschema.validate(typo, VALUES_SCHEMA)
    wrong = values()
    wrong["cull"]["timeout"] = "an hour"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, VALUES_SCHEMA)


def test_the_values_and_the_model_manifest_agree():
    from lesson_lib.offline import MODEL_ID

    user = values()["singleuser"]
    kinds = manifest()
    pod = kinds["Deployment"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    service = kinds["Service"]
    env = user["extraEnv"]
    # the learners' kernels are pointed at the model's Service, with the model's own name
    assert env["LESSON_BACKEND"] == "openai" and env["LESSON_MODEL"] == MODEL_ID
    url = re.fullmatch(r"http://([a-z0-9-]+):(\d+)/v1", env["OPENAI_BASE_URL"])
    assert url, env["OPENAI_BASE_URL"]
    assert url[1] == service["metadata"]["name"]
    assert int(url[2]) == service["spec"]["ports"][0]["port"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    # one key, from one Secret, on both sides
    ref = env["OPENAI_API_KEY"]["valueFrom"]["secretKeyRef"]
    served_key = next(e for e in container["env"] if e["name"] == "LESSON_SERVE_API_KEY")
    assert served_key["valueFrom"]["secretKeyRef"] == ref
    assert not [a for a in container["command"] if "key" in a.lower()], "the key goes in env"
    # the same image: the model is the series' own
    assert container["image"] == f"{user['image']['name']}:{user['image']['tag']}"
    # the learners' egress reaches the model's pods on its port, and the model lets in
    # learners' servers only, on that port, and calls nothing
    port = container["ports"][0]["containerPort"]
    rule = user["networkPolicy"]["egress"][0]
    assert rule["to"][0]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert rule["ports"] == [{"port": port, "protocol": "TCP"}]
    assert container["command"][container["command"].index("--port") + 1] == str(port)
    policy = kinds["NetworkPolicy"]["spec"]
    assert policy["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": {"component": "singleuser-server"}}}]
    assert policy["egress"] == [] and set(policy["policyTypes"]) == {"Ingress", "Egress"}
    # nothing leaves the room: the learners' servers reach no address outside the cluster
    rules = user["networkPolicy"]["egressAllowRules"]
    assert user["networkPolicy"]["enabled"] and rules["nonPrivateIPs"] is False
    assert rules["privateIPs"] is False and rules["cloudMetadataServer"] is False


def test_the_model_manifest_passes_kubernetes_schemas():
    import kubernetes_validate

    docs = manifest()
    assert set(docs) == {"Deployment", "Service", "NetworkPolicy"}, set(docs)
    for doc in docs.values():
        kubernetes_validate.validate(doc, "1.30.0", strict=True)  # raises if invalid
    broken = manifest()["Deployment"]
    broken["spec"]["template"]["spec"]["containers"][0]["commands"] = ["python"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, "1.30.0", strict=True)


# ------------------------------------------------------------------ the served model, for real

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _status(url: str, key: str | None) -> int:
    request = urllib.request.Request(
        url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_model_services_command_serves_only_with_its_key(tmp_path):
    """offline-model.yaml's command, as its container runs it (a free port here instead of
    the pod's own 8765), its key from the environment as the Secret gives it; then a
    learner's kernel with values.yaml's variables (the address rewritten to this port)."""
    container = manifest()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    command = list(container["command"])
    assert command[:3] == ["python", "-m", "lesson_lib.offline"]
    port = _free_port()
    command[command.index("--port") + 1] = str(port)
    command[0] = sys.executable
    key = secrets.token_urlsafe(24)  # what `kubectl create secret` stores (README.md)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LESSON_BACKEND", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LESSON_MODEL")}
    env["LESSON_SERVE_API_KEY"] = key
    model = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        first = model.stderr.readline()
        assert f":{port}/v1" in first and key not in first, first
        base = f"http://127.0.0.1:{port}/v1"
        assert _status(base + "/models", None) == 401  # no key: refused
        assert _status(base + "/models", "sk-not-the-class-key") == 401
        assert _status(base + "/models", key) == 200
        # a learner's kernel: the variables values.yaml gives every learner's server
        learner = dict(env)
        del learner["LESSON_SERVE_API_KEY"]
        for name, value in values()["singleuser"]["extraEnv"].items():
            learner[name] = key if name == "OPENAI_API_KEY" else value
        learner["OPENAI_BASE_URL"] = base  # the Service's address, here on 127.0.0.1
        said = subprocess.run(
            [sys.executable, "-c",
             "from lesson_lib.llm import chat, describe_backend\n"
             "print(describe_backend())\n"
             "print(chat([{'role': 'user', 'content': 'My name is Xiaoming.'}]).content)"],
            env=learner, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert said.returncode == 0, said.stderr
        assert f"served at {base}" in said.stdout and "Xiaoming" in said.stdout, said.stdout
        assert key not in said.stdout + said.stderr
        learner["OPENAI_API_KEY"] = "sk-a-learners-guess"
        refused = subprocess.run(
            [sys.executable, "-c", "from lesson_lib.llm import chat\n"
             "chat([{'role': 'user', 'content': 'hi'}])"],
            env=learner, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "401" in refused.stderr, refused.stderr[-2000:]
    finally:
        model.terminate()
        model.wait(timeout=30)
        model.stderr.close()
