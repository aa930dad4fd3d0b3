"""The Kubernetes files: every manifest valid against the Kubernetes schemas (kubernetes-validate, offline),
and each pod template run as a podman pod from the manifest itself (tests/containers/kube.py): the sidecar
pod and its forward-mode variant driven by a runner to a passing contract, and the Indexed Job's template
four times (JOB_COMPLETION_INDEX 0-3), then the merge Job's command, whose result equals an unsharded run.

The test world stands for the cluster around the pods: the agent image is a stand-in (world/agent.Containerfile)
fed by the manifest's environment; the upstreams run in the pod (`tools` on 9100 for docker/flakeproxy.yaml,
and for the forward variant api.openai.com and quotes.example.com on 443 over TLS from a test CA, which the
ConfigMap's config trusts with `proxy.upstream_ca`); the ConfigMap holds docker/flakeproxy.yaml; a runner
"elsewhere" (the pods' comments) runs in the pod and reaches `agent` and `flakeproxy` by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.conftest import REPO
from tests.containers.conftest import WORLD
from tests.containers.engine import Made, logs, made, podman, wait_exit, wait_log
from tests.containers.kube import Cluster, Pod, probe, run_pod
from tests.support.tls import make_ca

pytestmark = [pytest.mark.containers, pytest.mark.timeout(900)]
DOCKER = REPO / "docker"
MANIFESTS = sorted(DOCKER.glob("kubernetes-*.yaml"))
TOKEN = "t0ken-for-the-pod"
SECRET = {"name": "FLAKEPROXY_TOKEN", "valueFrom": {"secretKeyRef": {"name": "flakeproxy", "key": "token"}}}
CONFIG_MOUNT = {"name": "config", "mountPath": "/etc/flakeproxy", "readOnly": True}
#: The names docker/flakeproxy.yaml gives the agent, the sidecar and the upstream: in the pod, all local.
BY_NAME = {"agent": "127.0.0.1", "flakeproxy": "127.0.0.1", "tools": "127.0.0.1"}


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.fixture(scope="module")
def validate() -> Any:
    module = pytest.importorskip(
        "kubernetes_validate.utils",
        reason="kubernetes-validate is not installed (72 MB of schemas, so not a dev extra): "
        "`.venv/bin/pip install kubernetes-validate`, as scripts/test-containers does",
    )
    return module.validate


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
@pytest.mark.parametrize("version", ["1.29", "1.37"])  # native sidecars: on by default since 1.29; the newest
def test_every_manifest_is_valid_kubernetes(validate: Any, path: Path, version: str) -> None:
    for document in documents(path):
        validate(document, version, strict=True)


def test_the_validation_can_fail(validate: Any) -> None:
    pod = documents(DOCKER / "kubernetes-pod.yaml")[0]
    pod["spec"]["containers"][1]["volumeMount"] = []  # a typo for volumeMounts
    with pytest.raises(Exception, match="'volumeMount' was unexpected"):
        validate(pod, "1.37", strict=True)


def _cluster(folder: Path, image: str, agent_image: str, config: str, **files: str) -> Cluster:
    return Cluster(
        folder,
        images={"flakeproxy:local": image, "registry.example/finance-agent:staging": agent_image},
        config_maps={"flakeproxy-config": {"flakeproxy.yaml": config, **files}},
        secrets={("flakeproxy", "token"): TOKEN},
    )


def _runner(out: str, *extra: str) -> dict[str, Any]:
    """A runner job "elsewhere" (in the pod here), in the manifests' own terms."""
    command = ["flakeproxy", "contract", "run", "-c", "/etc/flakeproxy/flakeproxy.yaml", "-o", out, *extra]
    return {"name": "runner", "image": "flakeproxy:local", "command": command, "env": [SECRET],
            "volumeMounts": [CONFIG_MOUNT]}  # fmt: skip


def _results(container: str, folder: Path, out: str) -> dict[str, Any]:
    podman("cp", f"{container}:{out}/results.json", str(folder / "results.json"))
    return dict(json.loads((folder / "results.json").read_text()))


def _drive(pod: Pod, folder: Path) -> dict[str, Any]:
    """Run the runner in the pod to its end; its results.json (it must pass)."""
    runner = pod.start(_runner("/home/flakeproxy/out"))
    code = wait_exit(runner)
    assert code == 0, f"runner exit {code}:\n{logs(runner)[-4000:]}"
    return _results(runner, folder, "/home/flakeproxy/out")


def _sidecar(spec: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in spec["containers"] if c["name"] == "flakeproxy")


def test_the_sidecar_pod_runs_and_a_runner_drives_it(image: str, agent_image: str, tmp_path: Path) -> None:
    spec = documents(DOCKER / "kubernetes-pod.yaml")[0]["spec"]
    cluster = _cluster(tmp_path, image, agent_image, (DOCKER / "flakeproxy.yaml").read_text())
    with made() as things:
        pod = Pod(cluster, spec, things.name("pod"), things)
        pod.create(add_hosts=BY_NAME)
        pod.start({"name": "world-tools", "image": "flakeproxy:local",
                   "command": ["flakeproxy-demo-serve", "upstream", "--port", "9100"]})  # fmt: skip
        names = run_pod(pod)
        wait_log(names["flakeproxy"], "flakeproxy proxy ready")
        assert probe(pod, _sidecar(spec)) == 0, "the readiness probe failed on a ready sidecar"
        data = _drive(pod, tmp_path)
    assert data["score"]["passed"] is True
    # the agent's URLs from the manifest's env went through the sidecar's listeners
    listeners = {entry["listener"] for e in data["episodes"] for entry in e["journal"]}
    assert listeners == {"llm", "tools", "mcp"}, listeners


def test_the_forward_pod_runs_and_its_agent_trusts_the_ca_from_the_init_container(
    image: str, agent_image: str, tmp_path: Path
) -> None:
    spec = documents(DOCKER / "kubernetes-pod.forward.yaml")[0]["spec"]
    ca = make_ca(tmp_path / "upstream-ca")
    ca.leaf(["api.openai.com", "quotes.example.com"])
    config = (DOCKER / "flakeproxy.forward.yaml").read_text()
    trust = "  intercept: targets\n  upstream_ca: /etc/flakeproxy/upstream-ca.pem\n"
    config = config.replace("  intercept: targets\n", trust)
    cluster = _cluster(tmp_path, image, agent_image, config, **{"upstream-ca.pem": ca.cert_file.read_text()})
    hosts = {"api.openai.com": "127.0.0.1", "quotes.example.com": "127.0.0.1", **BY_NAME}
    with made() as things:
        pod = Pod(cluster, spec, things.name("forward"), things)
        pod.create(add_hosts=hosts)
        pod.volumes |= {"world": WORLD, "upstream-ca": ca.folder}
        pod.start({"name": "world-https", "image": "flakeproxy:local", "securityContext": {"runAsUser": 0},
                   "command": ["python", "/world/tls_upstream.py", "/ca/api.openai.com.pem", "443"],
                   "volumeMounts": [{"name": "world", "mountPath": "/world"},
                                    {"name": "upstream-ca", "mountPath": "/ca"}]})  # fmt: skip
        names = run_pod(pod)
        wait_log(names["flakeproxy"], "flakeproxy proxy ready")
        assert probe(pod, _sidecar(spec)) == 0
        data = _drive(pod, tmp_path)
    assert data["score"]["passed"] is True
    seen = {urlsplit(entry["url"]).hostname for e in data["episodes"] for entry in e["journal"]}
    assert {"api.openai.com", "quotes.example.com"} <= seen, seen  # decrypted: the agent trusted the pod's CA


def _job_pods(cluster: Cluster, things: Made, spec: dict[str, Any], indexes: list[str]) -> dict[str, Pod]:
    """One pod of the template per index, all at once (parallelism 4), each with its upstream."""
    pods = {}
    for index in indexes:
        pod = Pod(cluster, spec, things.name(f"job-{index}"), things, env={"JOB_COMPLETION_INDEX": index})
        pod.create(add_hosts={"tools": "127.0.0.1"})
        pod.start({"name": "world-tools", "image": "flakeproxy:local",
                   "command": ["flakeproxy-demo-serve", "upstream", "--port", "9100"]})  # fmt: skip
        run_pod(pod)
        pods[index] = pod
    return pods


def _wait_runner(pod: Pod, name: str = "runner") -> None:
    code = wait_exit(pod.container(name))
    assert code == 0, f"{pod.name} {name}: exit {code}\n{logs(pod.container(name))[-4000:]}"


def verdicts(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["invariant"], c["scenario"], c["outcome"], c["reason"], tuple(c["episodes"])) for c in data["cells"]]


def test_the_indexed_job_in_four_pods_then_the_merge_equals_an_unsharded_run(
    image: str, agent_image: str, tmp_path: Path
) -> None:
    job, merge_job = documents(DOCKER / "kubernetes-indexed-job.yaml")
    spec = job["spec"]["template"]["spec"]
    assert job["spec"]["completions"] == 4
    cluster = _cluster(tmp_path, image, agent_image, (DOCKER / "flakeproxy.yaml").read_text())
    # the unsharded run, for comparison: the same template, its runner without --shards, in its own folder
    whole = copy.deepcopy(spec)
    [runner] = whole["containers"]
    runner["args"] = ["flakeproxy contract run -c /etc/flakeproxy/flakeproxy.yaml -o /results/whole"]
    with made() as things:
        pods = _job_pods(cluster, things, spec, ["0", "1", "2", "3"])
        pods |= _job_pods(cluster, things, whole, ["whole"])
        for pod in pods.values():
            _wait_runner(pod)
        merge = Pod(cluster, merge_job["spec"]["template"]["spec"], things.name("merge"), things)
        merge.create(add_hosts={})
        run_pod(merge)
        _wait_runner(merge, "merge")
    results = cluster.claims["flakeproxy-results"]
    merged = json.loads((results / "merged" / "results.json").read_text())
    unsharded = json.loads((results / "whole" / "results.json").read_text())
    assert sorted(p.name for p in results.iterdir()) == ["merged", "shard-0", "shard-1", "shard-2", "shard-3", "whole"]
    assert verdicts(merged) == verdicts(unsharded) and merged["score"] == unsharded["score"]
    assert merged["score"]["passed"] is True
