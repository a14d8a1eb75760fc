"""deploy/: the compose file, the Kubernetes manifests and the Caddyfile, checked statically.

No Docker engine or cluster runs here, so each file goes through its own
tool's checker instead: the Compose specification's JSON schema (through
check-jsonschema's vendored copy), Kubernetes' OpenAPI schemas (through
kubernetes-validate, strict: unknown fields are errors) and `caddy validate`.
Each checker is first shown a broken copy, so a checker that passes
everything fails here. Then what docs/deploy.md promises of these files is
asserted: the roles, the order of start-up, the probes and the drain.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
KUBERNETES = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
KUBERNETES_VERSION = "1.33.0"


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def resources() -> list[dict[str, Any]]:
    return [doc for path in KUBERNETES for doc in yaml.safe_load_all(path.read_text()) if doc]


def of_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in resources() if r["kind"] == kind}


def check_compose(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_compose_file_passes_the_compose_specification(tmp_path: Path) -> None:
    broken = tmp_path / "compose.yaml"
    broken.write_text(
        COMPOSE.read_text().replace("service_completed_successfully", "service_finished", 1)
    )
    assert check_compose(broken).returncode == 1
    checked = check_compose(COMPOSE)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_kubernetes_manifests_pass_the_api_schemas() -> None:
    broken = of_kind("Deployment")["svc-gateway"]
    broken["spec"]["template"]["spec"]["terminationGracePeriod"] = 30
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)
    for resource in resources():
        kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)


@pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy is not installed")
def test_the_caddyfile_passes_caddy_validate(tmp_path: Path) -> None:
    def validate(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["caddy", "validate", "--adapter", "caddyfile", "--config", str(path)],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        )

    broken = tmp_path / "Caddyfile"
    broken.write_text((DEPLOY / "Caddyfile").read_text().replace("lb_policy", "lb_polcy"))
    assert validate(broken).returncode != 0
    checked = validate(DEPLOY / "Caddyfile")
    assert checked.returncode == 0, checked.stderr


def test_compose_migrates_once_before_two_gateways_and_runs_each_daemon_apart() -> None:
    services = compose()["services"]
    assert services["migrate"]["command"][-1] == "migrate"
    gateways = [
        name for name, s in services.items() if s.get("command", [])[-1:] == ["--production"]
    ]
    assert sorted(gateways) == ["gateway-1", "gateway-2"]
    for name in gateways:
        after = services[name]["depends_on"]
        assert after["migrate"]["condition"] == "service_completed_successfully"
        env = services[name]["environment"]
        assert env["SMTP_ENABLED"] == env["OUTBOUND_ENABLED"] == env["IMAP_ENABLED"] == "false"
        assert env["POP3_ENABLED"] == env["SIEVE_ENABLED"] == "false"
        assert env["STORAGE_DRIVER"] == "s3" and env["S3_ENDPOINT"] == "http://minio:9000"
    daemons = {
        name: s["command"][-1]
        for name, s in services.items()
        if s.get("command", [""])[:3] == ["python", "-m", "mta"]
    }
    assert daemons == {
        "smtp": "smtp",
        "submission": "submission",
        "imap": "imap",
        "pop3": "pop3",
        "managesieve": "managesieve",
        "outbound": "outbound",
        "jmap": "jmap",
    }
    assert services["outbound"]["environment"]["OUTBOUND_ENABLED"] == "true"
    # Every process of the image reads large mail from one private bucket: no shared volume.
    for name, service in services.items():
        if "build" in service:
            assert service["environment"]["MAIL_BLOB_STORE"] == "s3", name
            assert service["environment"]["MAIL_S3_BUCKET"] != service["environment"]["S3_BUCKET"]
            assert "volumes" not in service, name
    assert set(services["proxy"]["depends_on"]) >= {"gateway-1", "gateway-2"}
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["minio"]["image"].startswith("minio/minio")


def test_kubernetes_probes_drain_and_disruption_budgets() -> None:
    deployments = of_kind("Deployment")
    assert set(deployments) == {
        "svc-gateway",
        "svc-smtp",
        "svc-submission",
        "svc-imap",
        "svc-pop3",
        "svc-managesieve",
        "svc-outbound",
        "svc-jmap",
    }
    gateway = deployments["svc-gateway"]["spec"]
    assert gateway["replicas"] >= 2
    pod = gateway["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    config = of_kind("ConfigMap")["svc-config"]["data"]
    # preStop, then SIGTERM's drain (SHUTDOWN_TIMEOUT), then cleanup (5 s), before SIGKILL.
    assert pod["terminationGracePeriodSeconds"] > pre_stop + float(config["SHUTDOWN_TIMEOUT"]) + 5
    for name, deployment in deployments.items():
        spec = deployment["spec"]["template"]["spec"]
        assert "preStop" in spec["containers"][0]["lifecycle"], name
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items(), name
    budgets = of_kind("PodDisruptionBudget")
    assert "svc-gateway" in budgets
    for budget in budgets.values():
        wanted = budget["spec"]["selector"]["matchLabels"]
        matched = [
            d
            for d in deployments.values()
            if wanted.items() <= d["spec"]["template"]["metadata"]["labels"].items()
        ]
        assert len(matched) == 1, budget["metadata"]["name"]
    for service in of_kind("Service").values():
        wanted = service["spec"]["selector"]
        assert any(
            wanted.items() <= d["spec"]["template"]["metadata"]["labels"].items()
            for d in deployments.values()
        ), service["metadata"]["name"]
    assert config["MAIL_BLOB_STORE"] == "s3" and config["MAIL_S3_BUCKET"] != config["S3_BUCKET"]
    # The gateways serve HTTP only; each daemon turns itself on in its own Deployment.
    daemons = ("SMTP", "SUBMISSION", "IMAP", "POP3", "SIEVE", "OUTBOUND")
    assert {config[f"{name}_ENABLED"] for name in daemons} == {"false"}
    services = of_kind("Service")
    for name, daemon, public in (
        ("svc-imap", "IMAP", {"imap": 143, "imaps": 993}),
        ("svc-pop3", "POP3", {"pop3": 110, "pop3s": 995}),
    ):
        container = deployments[name]["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert container["command"] == ["python", "-m", "mta", name.removeprefix("svc-")]
        assert env[f"{daemon}_ENABLED"] == "true"
        # Unprivileged ports in the pod (runAsNonRoot), the standard ones outside.
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {
            port: int(env[f"{daemon}{'S' if port.endswith('s') else ''}_PORT"]) for port in public
        }
        assert all(port > 1024 for port in ports.values())
        spec = services[name]["spec"]
        assert {p["name"]: p["port"] for p in spec["ports"]} == public
        assert {p["targetPort"] for p in spec["ports"]} == set(public)
        # The client's address reaches the per-IP sign-in budget.
        assert spec["externalTrafficPolicy"] == "Local"
    assert of_kind("PersistentVolumeClaim") == {}
    job = of_kind("Job")["svc-migrate"]["spec"]["template"]["spec"]
    assert job["containers"][0]["command"][-1] == "migrate"
    images = {
        c["image"]
        for r in resources()
        if r["kind"] in ("Deployment", "Job")
        for c in r["spec"]["template"]["spec"]["containers"]
    }
    assert len(images) == 1


def test_every_variable_the_files_set_is_one_the_code_reads() -> None:
    """A misspelt variable would be ignored silently at run time; here it fails."""
    sources = "\n".join(
        path.read_text()
        for package in ("common", "gateway", "oauth", "content", "mail", "mta")
        for path in (ROOT / package).rglob("*.py")
    )
    services = compose()["services"]
    names = {name for s in services.values() for name in s.get("environment", {})}
    names |= set(of_kind("ConfigMap")["svc-config"]["data"])
    for deployment in of_kind("Deployment").values():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            names |= {e["name"] for e in container.get("env", [])}
    ours = {n for n in names if not n.startswith(("POSTGRES_", "MINIO_", "SITE_"))}
    unread = sorted(n for n in ours if not re.search(rf"[\"']{n}[\"']", sources))
    assert unread == []
