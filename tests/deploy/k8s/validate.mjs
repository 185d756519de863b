// Checks deploy/kubernetes/*.yaml: every object against the Kubernetes API
// schema (kubernetes-models, and @kubernetes-models/prometheus-operator for
// the ServiceMonitor; installed into ./node_modules by
// scripts/install-deps.sh), then what the schema cannot say: the choices
// docs/deploy.md promises (NVIDIA runtime class, the pod-resources socket
// read-only, no capabilities, requests that match the measured footprint),
// that the pieces refer to each other (selectors, port names, the config
// path), and the agent's config in the ConfigMap through
// `ofu agent --check-config`.
//
//   node validate.mjs MANIFEST_DIR OFU_BINARY VERSION
//
// The schemas check types, required fields, enums and formats; they do not
// reject unknown field names (Kubernetes' OpenAPI does not forbid them, the
// API server's strict field validation does), so the fields that matter are
// checked by path below.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

const [manifestDir, ofu, version] = process.argv.slice(2);
let failures = 0;
const check = (ok, message) => {
  if (!ok) {
    failures++;
    console.error(`FAIL: ${message}`);
  }
  return ok;
};

// apiVersion + kind -> the model class of that API object.
async function modelFor(apiVersion, kind) {
  const [group, ver] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const module =
    group === "monitoring.coreos.com"
      ? `@kubernetes-models/prometheus-operator/${group}/${ver}/${kind}`
      : group === ""
        ? `kubernetes-models/${ver}/${kind}`
        : `kubernetes-models/${group}/${ver}/${kind}`;
  try {
    return (await import(module))[kind];
  } catch (e) {
    return undefined;
  }
}

function validationError(Model, object) {
  try {
    new Model(object).validate();
    return null;
  } catch (e) {
    return e.message;
  }
}

// Kubernetes quantities as numbers: CPU in cores, memory in bytes.
function quantity(text) {
  const m = /^([0-9.]+)(m|Ki|Mi|Gi)?$/.exec(String(text));
  if (!m) return NaN;
  const scale = { m: 1e-3, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2]] ?? 1;
  return Number(m[1]) * scale;
}

// 1. Schema.
const objects = [];
for (const file of readdirSync(manifestDir).filter((f) => f.endsWith(".yaml")).sort()) {
  for (const doc of parseAllDocuments(readFileSync(join(manifestDir, file), "utf8"))) {
    if (!check(doc.errors.length === 0, `${file}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`)) continue;
    const object = doc.toJS();
    if (object === null) continue;
    const where = `${file}: ${object.kind}/${object.metadata?.name}`;
    const Model = await modelFor(object.apiVersion, object.kind);
    if (!check(Model !== undefined, `${where}: no schema for ${object.apiVersion} ${object.kind}`)) continue;
    const error = validationError(Model, object);
    check(error === null, `${where}: ${error}`);
    objects.push({ file, object, Model });
  }
}
const find = (kind) => objects.filter((o) => o.object.kind === kind).map((o) => o.object);
for (const kind of ["Namespace", "ServiceAccount", "ConfigMap", "DaemonSet", "Service", "ServiceMonitor"]) {
  check(find(kind).length === 1, `expected one ${kind}, found ${find(kind).length}`);
}
if (failures > 0) process.exit(1);

// The schema check can fail: the DaemonSet with a port that is not a number.
{
  const { object, Model } = objects.find((o) => o.object.kind === "DaemonSet");
  const broken = structuredClone(object);
  broken.spec.template.spec.containers[0].ports[0].containerPort = "9477/tcp";
  check(validationError(Model, broken) !== null, "the schema accepted a DaemonSet whose containerPort is a string");
}

// 2. What docs/deploy.md promises.
const [namespace] = find("Namespace");
for (const { object, file } of objects) {
  if (object.kind !== "Namespace") {
    check(object.metadata.namespace === namespace.metadata.name, `${file}: ${object.kind} not in ${namespace.metadata.name}`);
  }
}
const [ds] = find("DaemonSet");
const pod = ds.spec.template.spec;
check(pod.runtimeClassName === "nvidia", `runtimeClassName is ${pod.runtimeClassName}, not nvidia`);
check(!pod.hostPID && !pod.hostNetwork && !pod.hostIPC, "the pod shares a host namespace");
check(pod.automountServiceAccountToken === false, "the pod mounts a service account token it does not need");
for (const [key, value] of Object.entries(ds.spec.selector.matchLabels)) {
  check(ds.spec.template.metadata.labels[key] === value, `the DaemonSet's selector ${key}=${value} misses its pods`);
}
check(pod.containers.length === 1, "one container");
const [agent] = pod.containers;
check(agent.image === `ofu:${version}`, `image ${agent.image}, not ofu:${version} (make image)`);
check(ds.metadata.labels["app.kubernetes.io/version"] === version, "app.kubernetes.io/version is not the project's version");

const sc = agent.securityContext ?? {};
check(sc.allowPrivilegeEscalation === false && sc.privileged !== true, "privilege escalation is not closed");
check(sc.readOnlyRootFilesystem === true, "the root file system is writable");
check(JSON.stringify(sc.capabilities?.drop) === '["ALL"]' && !sc.capabilities?.add, "capabilities are not all dropped");

// The kubelet's pod-resources directory, from the host, read-only, where the
// config says the socket is.
const podResources = pod.volumes.find((v) => v.hostPath?.path === "/var/lib/kubelet/pod-resources");
const podResourcesMount =
  podResources && agent.volumeMounts.find((m) => m.name === podResources.name);
check(podResourcesMount?.readOnly === true, "the pod-resources directory is not mounted read-only");

// Requests from docs/BENCHMARKS.md ("ofu agent"): peak RSS 12.5-14.1 MiB, plus
// about 8 MiB for the kubelet plugin's gRPC; CPU 0.2-0.5 % of a core at 10 Hz
// on 8 GPUs (the DaemonSet runs 1 Hz). Requests below the footprint get the
// pod evicted first; far above it they reserve what the node's jobs need.
const { requests = {}, limits = {} } = agent.resources ?? {};
const mib = quantity(requests.memory) / 1024 ** 2;
check(mib >= 22 && mib <= 64, `memory request ${requests.memory}: not within 22-64 Mi (measured ~22 MiB)`);
const cpu = quantity(requests.cpu);
check(cpu >= 0.005 && cpu <= 0.05, `cpu request ${requests.cpu}: not within 5m-50m (measured 2-5m)`);
check(quantity(limits.memory) >= 2 * quantity(requests.memory), "memory limit under twice the request");

// Service and ServiceMonitor find the agent's port by name.
const [svc] = find("Service");
const [sm] = find("ServiceMonitor");
const portName = agent.ports[0].name;
check(svc.spec.ports.some((p) => p.targetPort === portName), `the Service does not target port ${portName}`);
for (const [key, value] of Object.entries(svc.spec.selector)) {
  check(ds.spec.template.metadata.labels[key] === value, `the Service's selector ${key}=${value} misses the pods`);
}
for (const [key, value] of Object.entries(sm.spec.selector.matchLabels)) {
  check(svc.metadata.labels[key] === value, `the ServiceMonitor's selector ${key}=${value} misses the Service`);
}
check(sm.spec.endpoints.every((e) => svc.spec.ports.some((p) => p.name === e.port)), "a ServiceMonitor endpoint names no Service port");
for (const probe of [agent.livenessProbe, agent.readinessProbe]) {
  check(probe?.httpGet?.path === "/healthz" && probe.httpGet.port === portName, "a probe does not ask /healthz");
}

// 3. The agent's config, as the agent reads it.
const [cm] = find("ConfigMap");
const configVolume = pod.volumes.find((v) => v.configMap?.name === cm.metadata.name);
const configMount = configVolume && agent.volumeMounts.find((m) => m.name === configVolume.name);
check(configMount !== undefined && agent.args.join(" ") === `agent --config ${configMount.mountPath}/agent.toml`,
  `the container does not read the ConfigMap's agent.toml: ${agent.args.join(" ")}`);
const dir = mkdtempSync(join(tmpdir(), "ofu-k8s-test-"));
try {
  writeFileSync(join(dir, "agent.toml"), cm.data["agent.toml"]);
  const out = execFileSync(ofu, ["agent", "--check-config", "--config", join(dir, "agent.toml")], { encoding: "utf8" });
  check(out.includes(`listen 0.0.0.0:${agent.ports[0].containerPort}`), `the agent does not listen on the pod's port: ${out}`);
  check(out.includes("store off"), `the agent keeps history on a read-only file system: ${out}`);
} catch (e) {
  check(false, `ofu agent --check-config on the ConfigMap's agent.toml: ${e.message}`);
} finally {
  rmSync(dir, { recursive: true });
}
const socket = /kubelet_socket = "([^"]+)"/.exec(cm.data["agent.toml"])?.[1];
check(socket?.startsWith(`${podResourcesMount?.mountPath}/`), `kubelet_socket ${socket} is not in the mounted directory`);

console.log(`${objects.length} objects in ${manifestDir}: ${failures === 0 ? "valid" : `${failures} failures`}`);
process.exit(failures === 0 ? 0 : 1);
