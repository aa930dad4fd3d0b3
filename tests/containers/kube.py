"""A Kubernetes pod template, run as a podman pod: each container's image, command, args, env, mounts and
security context are read from the manifest (so a test checks the file, not a copy), in the kubelet's order:
init containers one after another (a native sidecar, `restartPolicy: Always`, is started and left running;
a plain one must exit 0), then the containers. `podman kube play` is not used: it failed here on a first try,
and it would hide which part of the manifest a failure comes from.

What the manifest leaves to the cluster, the test's `Cluster` supplies: what its images stand for, the
contents of its ConfigMaps and Secrets, and its volumes as host folders with Kubernetes' permissions (an
emptyDir is world-writable; a PersistentVolumeClaim is a root-owned folder, group-writable only with the
pod's fsGroup). Any key the translation does not know fails the test, rather than being silently dropped."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.containers.engine import Made, logs, podman, wait_exit

POD_KEYS = {"containers", "initContainers", "volumes", "restartPolicy", "hostAliases", "securityContext"}
CONTAINER_KEYS = {"name", "image", "command", "args", "env", "volumeMounts", "securityContext", "ports"}
CONTAINER_KEYS |= {"readinessProbe", "restartPolicy"}


@dataclass
class Cluster:
    """What the manifests name and the cluster provides."""

    folder: Path
    images: dict[str, str]  # the manifest's image -> the local image standing for it
    config_maps: dict[str, dict[str, str]]  # name -> {file name: contents}
    secrets: dict[tuple[str, str], str]  # (secret, key) -> value
    claims: dict[str, Path] = field(default_factory=dict)  # PersistentVolumeClaims, shared by every pod

    def claim(self, name: str) -> Path:
        if name not in self.claims:
            self.claims[name] = self.folder_for(f"pvc-{name}", 0o755)
        return self.claims[name]

    def folder_for(self, name: str, mode: int) -> Path:
        path = self.folder / name
        path.mkdir(parents=True)
        path.chmod(mode)
        return path


@dataclass
class Pod:
    """One pod of a template: its podman pod, its volumes as host folders, its containers by name."""

    cluster: Cluster
    spec: dict[str, Any]
    name: str
    things: Made
    env: dict[str, str] = field(default_factory=dict)  # set by the controller (JOB_COMPLETION_INDEX)
    volumes: dict[str, Path] = field(default_factory=dict)

    def create(self, add_hosts: dict[str, str]) -> None:
        """The podman pod with the template's hostAliases (and the test world's `add_hosts`), its volumes."""
        unknown = set(self.spec) - POD_KEYS | set(self.spec.get("securityContext", {})) - {"fsGroup"}
        assert not unknown, f"the pod spec uses {unknown}, which this test does not translate"
        hosts = dict(add_hosts)
        for alias in self.spec.get("hostAliases", []):
            hosts.update(dict.fromkeys(alias["hostnames"], alias["ip"]))
        self.things.pods.append(self.name)
        podman("pod", "create", "--name", self.name, *(f"--add-host={h}:{ip}" for h, ip in hosts.items()))
        for volume in self.spec.get("volumes", []):
            self.volumes[volume["name"]] = self._volume(volume)

    def _volume(self, volume: dict[str, Any]) -> Path:
        group = self.spec.get("securityContext", {}).get("fsGroup")
        if "configMap" in volume:
            path = self.cluster.folder_for(f"{self.name}-{volume['name']}", 0o755)
            for file, text in self.cluster.config_maps[volume["configMap"]["name"]].items():
                (path / file).write_text(text)
            return path
        if "emptyDir" in volume:
            path = self.cluster.folder_for(f"{self.name}-{volume['name']}", 0o777)
        elif "persistentVolumeClaim" in volume:
            path = self.cluster.claim(volume["persistentVolumeClaim"]["claimName"])
        else:
            raise AssertionError(f"volume {volume['name']}: a kind this test does not translate: {volume}")
        if group is not None:  # what the kubelet does for fsGroup: the group owns it, setgid, group-writable
            os.chown(path, -1, int(group))
            path.chmod(path.stat().st_mode | 0o2070)
        return path

    def run_args(self, container: dict[str, Any]) -> list[str]:
        """`podman run` arguments for one container of the template (without -d or --rm)."""
        unknown = set(container) - CONTAINER_KEYS
        assert not unknown, f"container {container['name']} uses {unknown}, which this test does not translate"
        args = ["--pod", self.name, "--name", self.container(container["name"])]
        if "command" in container:  # Kubernetes' command replaces the image's ENTRYPOINT, args its CMD
            args.append(f"--entrypoint={json.dumps(container['command'])}")
        for env in container.get("env", []):
            if "value" in env:
                value = env["value"]
            else:
                ref = env["valueFrom"]["secretKeyRef"]
                value = self.cluster.secrets[(ref["name"], ref["key"])]
            args += ["-e", f"{env['name']}={value}"]
        args += [arg for k, v in self.env.items() for arg in ("-e", f"{k}={v}")]
        for mount in container.get("volumeMounts", []):
            mode = ":ro" if mount.get("readOnly") else ""
            args += ["-v", f"{self.volumes[mount['name']]}:{mount['mountPath']}{mode}"]
        args += self._security(container.get("securityContext", {}))
        return [*args, self.cluster.images[container["image"]], *container.get("args", [])]

    def _security(self, context: dict[str, Any]) -> list[str]:
        args = []
        if "runAsUser" in context:
            args += ["--user", str(context["runAsUser"])]
        if context.get("runAsNonRoot"):  # the kubelet refuses to start a container that would run as root
            assert context.get("runAsUser", 1) != 0, "runAsNonRoot with runAsUser 0"
        if context.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        group = self.spec.get("securityContext", {}).get("fsGroup")
        if group is not None:
            args += ["--group-add", str(group)]
        return args

    def container(self, name: str) -> str:
        return f"{self.name}-{name}"

    def start(self, container: dict[str, Any]) -> str:
        """Start one container, detached; it is removed with the test's other things."""
        name = self.container(container["name"])
        self.things.containers.append(name)
        podman("run", "-d", *self.run_args(container))
        return name


def run_pod(pod: Pod) -> dict[str, str]:
    """The kubelet's order: init containers one by one (a native sidecar is started and left running, a plain
    one must exit 0 first), then every container. Returns container name -> podman container name."""
    for init in pod.spec.get("initContainers", []):
        name = pod.start(init)
        if init.get("restartPolicy") != "Always":
            code = wait_exit(name)
            assert code == 0, f"init container {init['name']} exited {code}:\n{logs(name)[-3000:]}"
    return {c["name"]: pod.start(c) for c in pod.spec["containers"]}


def probe(pod: Pod, container: dict[str, Any]) -> int:
    """The container's exec readiness probe, run once in it: its exit code (0 is ready)."""
    command = container["readinessProbe"]["exec"]["command"]
    return podman("exec", pod.container(container["name"]), *command, check=False, timeout=30).returncode
