package streamserver

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kinformer/kinformer/shard"
)

// RealisticPods is the profile of a multi-tenant cluster's pods (-profile realistic-pods):
// the resource served is still "pods", of kind Pod, but where the pods profile has one
// container shape in 100 ReplicaSets of 20 Deployments on 50 nodes, these look like a
// real cluster's, of any size:
//
//   - about 210 Deployments (one ReplicaSet each) in 60 namespaces, 30 named by words
//     (payments, kube-system, ingress-nginx, …) and 30 numbered (tenant-07, …), holding
//     the pods unevenly: some one or two replicas, a few hundreds of times more (weights
//     drawn log-normally, every Deployment at least one pod once there are as many pods);
//   - 1 to 4 containers per pod, the main one drawn from 18 application and
//     infrastructure specs (Go, Java, Node, Python, Ruby and .NET services, nginx, redis,
//     CoreDNS, ingress-nginx, cert-manager, …) and sidecars from 8 more: the service
//     mesh's proxy (every pod of a meshed namespace, injected as Istio does, with its
//     volumes, labels and annotations), a log shipper, three metrics exporters, a
//     database proxy, an OAuth proxy and a secrets agent; images with digests (most of
//     them), env lists of 3 to 30 entries (values, field, resource, secret and config-map
//     references), resources, probes, ports, securityContexts, volumeMounts, envFrom,
//     lifecycle hooks, affinity, topology spread, node selectors, pull secrets and
//     priority classes on some;
//   - what differs from pod to pod in a real cluster: the name's 5-character suffix, the
//     uid, the node (of 300, in 4 pools) and its IP, the pod's IP from the node's range,
//     creation, start and condition times, containerd container IDs, restart counts and
//     the last termination of a restarting container, and the projected service-account
//     volume kube-api-access-xxxxx, named anew in every pod and mounted by each of its
//     containers; with the two default tolerations, priority and qosClass, and
//     managedFields as kube-apiserver writes them for a ReplicaSet's pod (the controller
//     manager's Update of the template's fields, the kubelet's status Update).
//
// The spec of every pod of one Deployment is its template's: the same but for the
// kube-api-access volume's name and nodeName. Members come in the order the apiserver's
// Go structs write them, maps sorted by key; container statuses are in the kubelet's
// order (by name) and carry what a 1.33 kubelet adds (resources, volumeMounts, user).
// What admission plugins and webhooks add (the mesh's sidecar, its volumes, labels and
// annotations, kube-api-access, the tolerations, priority) is not in the controller
// manager's managedFields, whose field set is computed from the template (fieldsOf).
// There is no lazy mode: the profile makes at most LazyAbove pods, all at New (about 1.5
// s per 10,000 on two cores; 13.7 KB of JSON per pod, 9.2 KB in protobuf).
//
// Its watch events change what a kubelet changes (see kubeletState.variant), not only the
// resourceVersion: each pod has kubeletVariants other states, pre-encoded as byte
// patches of its template (JSON, PartialObjectMetadata and, with ProtobufObjects,
// protobuf), and its k-th event carries one of them in turn (kubeletVariant).
const RealisticPods = "realistic-pods"

const (
	// kubeletVariants is how many states other than the listed one each realistic pod
	// has for its watch events.
	kubeletVariants = 3
	// realisticNow is how long after epoch the realistic cluster is looked at: its pods
	// were created before.
	realisticNow = 30 * 24 * 3600
)

// rCluster is the realistic profile's cluster: its nodes and Deployments.
type rCluster struct {
	nodes   []rNode
	pools   map[string][]int // node indexes by pool
	deploys []*rDeploy
	digests map[string]string // image digests by repository:tag
}

type rNode struct {
	name, ip, pool string
	podBase        uint32 // the first pod address of its /22
	pods           int    // pods placed on it so far
}

// rDeploy is one Deployment and its one ReplicaSet, whose template every pod follows.
type rDeploy struct {
	ns, name, role string
	hash, rsName   string
	rsUID          string
	rsCreated      int64 // seconds after epoch
	weight         float64
	system         bool
	repo, tag      string // the main container's image
	pinned         bool   // the image is named by digest too

	labels, annotations obj // the pods', sorted, the stamp annotation aside
	tmplLabels, tmplAnn obj // the template's: what the controller manager wrote
	containers          []*ctrSpec
	volumes             []obj // the volumes of the template and the injected sidecars; kube-api-access aside
	tmplVolumes         int   // volumes[:tmplVolumes] are the template's
	saName              string
	saInTemplate        bool
	podSC               obj
	nodeSelector        obj
	imagePullSecrets    []obj
	affinity            obj
	tsc                 []obj
	priorityClass       string
	priority            int
	tgps                int
	dnsConfig           obj
	pool                string  // the node pool its pods run in ("" any but the system pool)
	flaky               float64 // the share of its pods with a restarting container
	readyDelay          int     // seconds from the last container's start to ready
	qos                 string
	statusOrder         []int // container indexes sorted by name: the kubelet's order
	kcmFields           obj   // the controller manager's managedFields entry's fieldsV1
	meshed              bool
	nsHash              uint64 // shard.Hash(ns)
}

// ctrSpec is one container of a Deployment's pods.
type ctrSpec struct {
	name                   string
	kind                   string // "redis", "nginx" or "": what a metrics exporter must read
	image                  string // as the spec names it
	statusImage, imageID   string // as the kubelet reports them
	command, args          []string
	workingDir             string
	ports, envFrom, env    []obj
	req, lim               [2]string // cpu, memory ("" none)
	storage                string    // ephemeral-storage request and limit ("" none)
	mounts                 []obj     // without kube-api-access
	liveness, readiness    obj
	startup, lifecycle, sc obj
	pullPolicy, msgPolicy  string
	uid, gid               int   // the image's user, when no securityContext sets one
	injected               bool  // added by a webhook, not in the template
	volumes                []obj // the pod volumes its own mounts need
}

// resources is the container's resources member.
func (c *ctrSpec) resources() obj {
	r := obj{}
	quant := func(q [2]string) obj {
		o := obj{}
		if q[0] != "" {
			o = append(o, field{"cpu", q[0]})
		}
		if c.storage != "" {
			o = append(o, field{"ephemeral-storage", c.storage})
		}
		if q[1] != "" {
			o = append(o, field{"memory", q[1]})
		}
		return o
	}
	if c.lim != [2]string{} {
		r = append(r, field{"limits", quant(c.lim)})
	}
	if c.req != [2]string{} {
		r = append(r, field{"requests", quant(c.req)})
	}
	return r
}

// apiMountPath is where the kube-api-access volume is mounted.
const apiMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// obj is the container as the pod spec has it, with the kube-api-access volume apiVol
// mounted last ("" for the template's, before admission).
func (c *ctrSpec) obj(apiVol string) obj {
	o := obj{{"name", c.name}, {"image", c.image}}
	if c.command != nil {
		o = append(o, field{"command", c.command})
	}
	if c.args != nil {
		o = append(o, field{"args", c.args})
	}
	if c.workingDir != "" {
		o = append(o, field{"workingDir", c.workingDir})
	}
	if c.ports != nil {
		o = append(o, field{"ports", c.ports})
	}
	if c.envFrom != nil {
		o = append(o, field{"envFrom", c.envFrom})
	}
	if c.env != nil {
		o = append(o, field{"env", c.env})
	}
	o = append(o, field{"resources", c.resources()})
	mounts := c.mounts
	if apiVol != "" {
		mounts = append(slices.Clip(mounts), obj{{"name", apiVol}, {"readOnly", true}, {"mountPath", apiMountPath}})
	}
	if len(mounts) > 0 {
		o = append(o, field{"volumeMounts", mounts})
	}
	for _, p := range []field{{"livenessProbe", c.liveness}, {"readinessProbe", c.readiness}, {"startupProbe", c.startup}, {"lifecycle", c.lifecycle}} {
		if p.v.(obj) != nil {
			o = append(o, p)
		}
	}
	o = append(o, field{"terminationMessagePath", "/dev/termination-log"}, field{"terminationMessagePolicy", c.msgPolicy},
		field{"imagePullPolicy", c.pullPolicy})
	if c.sc != nil {
		o = append(o, field{"securityContext", c.sc})
	}
	return o
}

// user is the uid and gid the container runs as: its securityContext's, the pod's, or
// its image's.
func (c *ctrSpec) user(podSC obj) (uid, gid int) {
	uid, gid = c.uid, c.gid
	for _, sc := range []obj{podSC, c.sc} {
		for _, f := range sc {
			switch f.k {
			case "runAsUser":
				uid = f.v.(int)
			case "runAsGroup":
				gid = f.v.(int)
			}
		}
	}
	return uid, gid
}

// status is the container's status in state s, as the kubelet writes it.
func (c *ctrSpec) status(d *rDeploy, apiVol string, s *ctrState) obj {
	last := obj{}
	if s.last != nil {
		last = obj{{"terminated", obj{{"exitCode", s.last.exitCode}, {"reason", s.last.reason},
			{"startedAt", tsu(s.last.startedAt)}, {"finishedAt", tsu(s.last.finishedAt)},
			{"containerID", "containerd://" + s.last.id}}}}
	}
	o := obj{{"name", c.name}, {"state", obj{{"running", obj{{"startedAt", tsu(s.startedAt)}}}}}, {"lastState", last},
		{"ready", true}, {"restartCount", s.restarts}, {"image", c.statusImage}, {"imageID", c.imageID},
		{"containerID", "containerd://" + s.id}, {"started", true}}
	if r := c.resources(); len(r) > 0 {
		o = append(o, field{"resources", r})
	}
	var mounts []obj
	for _, m := range append(slices.Clip(c.mounts), obj{{"name", apiVol}, {"readOnly", true}, {"mountPath", apiMountPath}}) {
		ms := obj{{"name", m[0].v}}
		ro := false
		for _, f := range m {
			switch f.k {
			case "mountPath":
				ms = append(ms, f)
			case "readOnly":
				ro = true
			}
		}
		if ro {
			ms = append(ms, field{"readOnly", true}, field{"recursiveReadOnly", "Disabled"})
		}
		mounts = append(mounts, ms)
	}
	o = append(o, field{"volumeMounts", mounts})
	uid, gid := c.user(d.podSC)
	groups := []int{gid}
	for _, f := range d.podSC {
		if f.k == "fsGroup" && f.v.(int) != gid {
			groups = append(groups, f.v.(int))
		}
	}
	return append(o, field{"user", obj{{"linux", obj{{"uid", uid}, {"gid", gid}, {"supplementalGroups", groups}}}}})
}

// tsu is the RFC 3339 time sec seconds after epoch.
func tsu(sec int64) string { return ts(epoch.Add(time.Duration(sec) * time.Second)) }

// Helpers for the container specs' members.

func env(name, value string) obj { return obj{{"name", name}, {"value", value}} }

func envField(name, path string) obj {
	return obj{{"name", name}, {"valueFrom", obj{{"fieldRef", obj{{"apiVersion", "v1"}, {"fieldPath", path}}}}}}
}

func envResource(name, container, resource string) obj {
	ref := obj{}
	if container != "" {
		ref = append(ref, field{"containerName", container})
	}
	ref = append(ref, field{"resource", resource}, field{"divisor", "0"})
	return obj{{"name", name}, {"valueFrom", obj{{"resourceFieldRef", ref}}}}
}

func envSecret(name, secret, key string) obj {
	return obj{{"name", name}, {"valueFrom", obj{{"secretKeyRef", obj{{"name", secret}, {"key", key}}}}}}
}

func envConfigMap(name, cm, key string) obj {
	return obj{{"name", name}, {"valueFrom", obj{{"configMapKeyRef", obj{{"name", cm}, {"key", key}}}}}}
}

func cport(name string, p int, proto string) obj {
	return obj{{"name", name}, {"containerPort", p}, {"protocol", proto}}
}

func probe(handler field, initial, timeout, period, failure int) obj {
	o := obj{handler}
	if initial > 0 {
		o = append(o, field{"initialDelaySeconds", initial})
	}
	return append(o, field{"timeoutSeconds", timeout}, field{"periodSeconds", period}, field{"successThreshold", 1},
		field{"failureThreshold", failure})
}

func httpGet(path string, port any) field {
	return field{"httpGet", obj{{"path", path}, {"port", port}, {"scheme", "HTTP"}}}
}

func tcpSocket(port any) field { return field{"tcpSocket", obj{{"port", port}}} }

func execCmd(cmd ...string) field { return field{"exec", obj{{"command", cmd}}} }

func grpcCheck(port int) field { return field{"grpc", obj{{"port", port}, {"service", ""}}} }

func mount(name, path string, readOnly bool) obj {
	o := obj{{"name", name}}
	if readOnly {
		o = append(o, field{"readOnly", true})
	}
	return append(o, field{"mountPath", path})
}

func emptyDir(name string) obj { return obj{{"name", name}, {"emptyDir", obj{}}} }

func configMapVolume(name, cm string) obj {
	return obj{{"name", name}, {"configMap", obj{{"name", cm}, {"defaultMode", 420}}}}
}

func secretVolume(name, secret string) obj {
	return obj{{"name", name}, {"secret", obj{{"secretName", secret}, {"defaultMode", 420}}}}
}

// restricted is the securityContext of the restricted Pod Security Standard (uid 0: the
// image's).
func restricted(uid int) obj {
	o := obj{{"capabilities", obj{{"drop", []string{"ALL"}}}}}
	if uid > 0 {
		o = append(o, field{"runAsUser", uid})
	}
	return append(o, field{"runAsNonRoot", true}, field{"readOnlyRootFilesystem", true},
		field{"allowPrivilegeEscalation", false}, field{"seccompProfile", obj{{"type", "RuntimeDefault"}}})
}

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// digest is the image digest of ref (repository:tag), drawn the first time.
func (c *rCluster) digest(g *gen, ref string) string {
	d, ok := c.digests[ref]
	if !ok {
		d = g.hex(64)
		c.digests[ref] = d
	}
	return d
}

// image sets the container's image members for repo:tag, named by digest too when pinned.
func (c *rCluster) image(g *gen, s *ctrSpec, repo, tag string, pinned bool) {
	d := c.digest(g, repo+":"+tag)
	s.image, s.statusImage, s.imageID = repo+":"+tag, repo+":"+tag, repo+"@sha256:"+d
	if pinned {
		s.image += "@sha256:" + d
	}
	s.pullPolicy = "IfNotPresent"
}

// The applications' usual environment, from which each Deployment draws more entries.
func commonEnv(d *rDeploy) []obj {
	svc := d.name + "." + d.ns + ".svc.cluster.local"
	return []obj{
		env("LOG_FORMAT", "json"),
		env("ENVIRONMENT", "production"),
		env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.monitoring.svc.cluster.local:4317"),
		env("OTEL_SERVICE_NAME", d.name),
		env("OTEL_RESOURCE_ATTRIBUTES", "service.namespace="+d.ns+",deployment.environment=production,k8s.cluster.name=prod-eu1"),
		envField("POD_NAME", "metadata.name"),
		envField("POD_NAMESPACE", "metadata.namespace"),
		envField("POD_IP", "status.podIP"),
		envField("NODE_NAME", "spec.nodeName"),
		env("REDIS_URL", "redis://redis."+d.ns+".svc.cluster.local:6379/0"),
		envSecret("SENTRY_DSN", "sentry", "dsn"),
		env("KAFKA_BROKERS", "kafka-0.kafka-headless.messaging.svc.cluster.local:9092,kafka-1.kafka-headless.messaging.svc.cluster.local:9092,kafka-2.kafka-headless.messaging.svc.cluster.local:9092"),
		env("HTTP_CLIENT_TIMEOUT", "5s"),
		env("CACHE_TTL_SECONDS", "300"),
		env("FEATURE_FLAGS_URL", "http://flagd.platform-api.svc.cluster.local:8013"),
		env("AUTH_JWKS_URL", "https://auth.acme.io/.well-known/jwks.json"),
		env("TZ", "UTC"),
		env("MAX_DB_CONNECTIONS", "20"),
		env("AWS_REGION", "eu-west-1"),
		env("S3_BUCKET", "acme-prod-"+d.ns),
		env("RATE_LIMIT_RPS", "200"),
		env("PUBLIC_URL", "https://"+d.name+".acme.io"),
		envConfigMap("SUPPORT_EMAIL", d.name+"-config", "support-email"),
		env("SERVICE_ADDR", svc),
		envSecret("API_SIGNING_KEY", d.name+"-secrets", "signing-key"),
		env("GRACEFUL_SHUTDOWN_TIMEOUT", "25s"),
		env("METRICS_ENABLED", "true"),
		env("TRACING_SAMPLE_RATE", "0.05"),
		envConfigMap("TENANT_PLAN", d.name+"-config", "plan"),
		env("UPSTREAM_AUTH_URL", "http://auth.identity.svc.cluster.local:8080"),
	}
}

// withEnv is the container's own env followed by entries drawn from commonEnv, so that
// the list has between 3 and 30 entries (most of them 6 to 16).
func withEnv(g *gen, d *rDeploy, own []obj) []obj {
	want := 3 + int(math.Round(math.Abs(g.r.NormFloat64())*9+float64(g.r.IntN(6))))
	want = max(min(want, 30), len(own), 3)
	out := slices.Clone(own)
	have := map[string]bool{}
	for _, e := range own {
		have[e[0].v.(string)] = true
	}
	pool := commonEnv(d)
	for _, j := range g.r.Perm(len(pool)) {
		if len(out) >= want {
			break
		}
		if name := pool[j][0].v.(string); !have[name] {
			have[name] = true
			out = append(out, pool[j])
		}
	}
	return out
}

var cpuSizes = []string{"50m", "100m", "200m", "250m", "500m", "1", "2"}
var memSizes = []string{"64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi"}

// sized draws the container's resources, cpu and memory from sizes cpuAt and memAt on,
// in one of the patterns real Deployments use.
func sized(g *gen, s *ctrSpec, cpuAt, memAt int) {
	cpu := cpuSizes[min(cpuAt+g.r.IntN(3), len(cpuSizes)-1)]
	mem := memSizes[min(memAt+g.r.IntN(3), len(memSizes)-1)]
	up := func(sizes []string, v string) string {
		return sizes[min(slices.Index(sizes, v)+1, len(sizes)-1)]
	}
	switch x := g.r.Float64(); {
	case x < 0.5: // requests, a memory limit
		s.req, s.lim = [2]string{cpu, mem}, [2]string{"", pick(g, mem, up(memSizes, mem))}
	case x < 0.7: // requests equal to limits
		s.req, s.lim = [2]string{cpu, mem}, [2]string{cpu, mem}
	case x < 0.95:
		s.req, s.lim = [2]string{cpu, mem}, [2]string{up(cpuSizes, cpu), up(memSizes, mem)}
	}
}

// The main containers: one builder per application or infrastructure spec.

type mainSpec func(c *rCluster, g *gen, d *rDeploy) *ctrSpec

func appContainer(c *rCluster, g *gen, d *rDeploy, name string) *ctrSpec {
	s := &ctrSpec{name: name, msgPolicy: pick(g, "File", "File", "FallbackToLogsOnError")}
	c.image(g, s, d.repo, d.tag, d.pinned)
	return s
}

func goAPI(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.ports = []obj{cport("http", 8080, "TCP"), cport("metrics", 9090, "TCP")}
	s.env = withEnv(g, d, []obj{env("PORT", "8080"), env("LOG_LEVEL", pick(g, "info", "info", "debug", "warn")),
		envResource("GOMAXPROCS", "", "limits.cpu"), envResource("GOMEMLIMIT", "", "limits.memory"),
		envSecret("DATABASE_URL", d.name+"-db", "url")})
	sized(g, s, 1, 1)
	s.liveness = probe(httpGet("/healthz", "http"), 0, 1, 10, 3)
	s.readiness = probe(httpGet("/readyz", "http"), 0, 1, 5, 3)
	s.sc, s.uid, s.gid = restricted(65532), 65532, 65532
	return s
}

func goGRPC(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.args = []string{"serve", "--grpc-addr=:50051", "--metrics-addr=:9090"}
	s.ports = []obj{cport("grpc", 50051, "TCP"), cport("metrics", 9090, "TCP")}
	s.env = withEnv(g, d, []obj{env("LOG_LEVEL", "info"), envResource("GOMAXPROCS", "", "limits.cpu")})
	sized(g, s, 1, 1)
	s.liveness = probe(grpcCheck(50051), 10, 1, 10, 3)
	s.readiness = probe(grpcCheck(50051), 0, 1, 5, 3)
	s.sc, s.uid, s.gid = restricted(65532), 65532, 65532
	return s
}

func goWorker(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.args = []string{"worker", "--concurrency=" + pick(g, "4", "8", "16")}
	s.ports = []obj{cport("metrics", 9090, "TCP")}
	s.env = withEnv(g, d, []obj{env("LOG_LEVEL", "info"), env("KAFKA_CONSUMER_GROUP", d.ns+"-"+d.name),
		envSecret("DATABASE_URL", d.name+"-db", "url")})
	sized(g, s, 1, 1)
	s.liveness = probe(httpGet("/healthz", 9090), 0, 1, 10, 3)
	s.sc, s.uid, s.gid = restricted(65532), 65532, 65532
	return s
}

func javaSpring(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.ports = []obj{cport("http", 8080, "TCP"), cport("management", 8081, "TCP")}
	s.env = withEnv(g, d, []obj{
		env("JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=75.0 -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Dfile.encoding=UTF-8"),
		env("SPRING_PROFILES_ACTIVE", "prod,kubernetes"), env("SERVER_PORT", "8080"), env("MANAGEMENT_SERVER_PORT", "8081"),
		env("SPRING_DATASOURCE_URL", "jdbc:postgresql://"+d.ns+"-db.databases.svc.cluster.local:5432/"+strings.ReplaceAll(d.name, "-", "_")),
		envSecret("SPRING_DATASOURCE_USERNAME", d.name+"-db", "username"), envSecret("SPRING_DATASOURCE_PASSWORD", d.name+"-db", "password"),
		env("LOGGING_LEVEL_ROOT", "INFO"), env("MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE", "health,info,prometheus"),
		env("SPRING_KAFKA_BOOTSTRAP_SERVERS", "kafka-bootstrap.messaging.svc.cluster.local:9092"),
	})
	sized(g, s, 3, 4)
	d.readyDelay += 30 + g.r.IntN(60) // a JVM warming up
	s.startup = probe(httpGet("/actuator/health/liveness", "management"), 20, 3, 5, 30)
	s.liveness = probe(httpGet("/actuator/health/liveness", "management"), 0, 3, 10, 3)
	s.readiness = probe(httpGet("/actuator/health/readiness", "management"), 0, 3, 5, 3)
	s.lifecycle = obj{{"preStop", obj{{"sleep", obj{{"seconds", 10}}}}}}
	s.sc, s.uid, s.gid = obj{{"runAsUser", 1001}, {"runAsNonRoot", true}, {"allowPrivilegeEscalation", false}}, 1001, 0
	s.mounts = []obj{mount("tmp", "/tmp", false)}
	s.volumes = []obj{emptyDir("tmp")}
	return s
}

func nodeWeb(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.ports = []obj{cport("http", 3000, "TCP")}
	s.env = withEnv(g, d, []obj{env("NODE_ENV", "production"), env("PORT", "3000"), env("HOSTNAME", "0.0.0.0"),
		env("NEXT_TELEMETRY_DISABLED", "1"), env("API_BASE_URL", "http://api."+d.ns+".svc.cluster.local:8080"),
		envSecret("SESSION_SECRET", d.name+"-secrets", "session-secret")})
	sized(g, s, 1, 2)
	s.liveness = probe(httpGet("/api/health", "http"), 10, 2, 10, 3)
	s.readiness = probe(httpGet("/api/health", "http"), 5, 2, 5, 3)
	s.sc, s.uid, s.gid = obj{{"runAsUser", 1000}, {"runAsGroup", 1000}, {"runAsNonRoot", true}, {"allowPrivilegeEscalation", false}}, 1000, 1000
	return s
}

func nodeAPI(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.command = []string{"node", "dist/server.js"}
	s.ports = []obj{cport("http", 8080, "TCP")}
	s.env = withEnv(g, d, []obj{env("NODE_ENV", "production"), env("PORT", "8080"),
		env("NODE_OPTIONS", "--max-old-space-size=384 --enable-source-maps"), envSecret("MONGODB_URI", d.name+"-db", "uri")})
	sized(g, s, 1, 2)
	s.liveness = probe(httpGet("/health/live", 8080), 15, 1, 10, 3)
	s.readiness = probe(httpGet("/health/ready", 8080), 0, 1, 5, 3)
	s.sc, s.uid, s.gid = restricted(1000), 1000, 1000
	s.mounts = []obj{mount("tmp", "/tmp", false)}
	s.volumes = []obj{emptyDir("tmp")}
	return s
}

func pyDjango(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.command = []string{"gunicorn"}
	s.args = []string{"app.wsgi:application", "--bind=0.0.0.0:8000", "--workers=4", "--threads=2", "--timeout=30", "--access-logfile=-"}
	s.ports = []obj{cport("http", 8000, "TCP")}
	s.envFrom = []obj{{{"configMapRef", obj{{"name", d.name + "-config"}}}}, {{"secretRef", obj{{"name", d.name + "-secrets"}}}}}
	s.env = withEnv(g, d, []obj{env("DJANGO_SETTINGS_MODULE", "app.settings.production"), env("PYTHONUNBUFFERED", "1"),
		envSecret("DATABASE_URL", d.name+"-db", "url"), env("ALLOWED_HOSTS", "*")})
	sized(g, s, 2, 2)
	s.liveness = probe(httpGet("/healthz/", 8000), 10, 5, 20, 3)
	s.readiness = probe(httpGet("/healthz/", 8000), 5, 5, 10, 3)
	s.uid, s.gid = 0, 0
	return s
}

func pyCelery(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.command = []string{"celery"}
	s.args = []string{"-A", "app", pick(g, "worker", "worker", "beat"), "--loglevel=INFO", "--concurrency=" + pick(g, "2", "4", "8")}
	s.env = withEnv(g, d, []obj{envSecret("CELERY_BROKER_URL", d.name+"-secrets", "broker-url"),
		env("DJANGO_SETTINGS_MODULE", "app.settings.production"), env("PYTHONUNBUFFERED", "1")})
	sized(g, s, 1, 2)
	s.liveness = probe(execCmd("celery", "-A", "app", "inspect", "ping", "-d", "celery@$(POD_NAME)"), 30, 10, 60, 3)
	return s
}

func pyInference(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.args = []string{"--model-store=/models", "--workers=2", "--http-port=8000", "--grpc-port=8001", "--metrics-port=8002"}
	s.ports = []obj{cport("http", 8000, "TCP"), cport("grpc", 8001, "TCP"), cport("metrics", 8002, "TCP")}
	s.env = withEnv(g, d, []obj{env("MODEL_NAME", d.name), env("MODEL_VERSION", "2025-02-17"), env("OMP_NUM_THREADS", "4"),
		env("HF_HUB_OFFLINE", "1"), envSecret("MODEL_REGISTRY_TOKEN", "model-registry", "token")})
	s.req, s.lim, s.storage = [2]string{"2", "8Gi"}, [2]string{"4", "8Gi"}, "20Gi"
	d.readyDelay += 40 + g.r.IntN(80) // loading the model
	s.startup = probe(httpGet("/v2/health/ready", "http"), 30, 5, 10, 60)
	s.readiness = probe(httpGet("/v2/health/ready", "http"), 0, 5, 10, 3)
	s.liveness = probe(httpGet("/v2/health/live", "http"), 0, 5, 15, 3)
	s.mounts = []obj{mount("models", "/models", false), mount("dshm", "/dev/shm", false)}
	s.volumes = []obj{emptyDir("models"), {{"name", "dshm"}, {"emptyDir", obj{{"medium", "Memory"}, {"sizeLimit", "2Gi"}}}}}
	return s
}

func railsPuma(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.command = []string{"bundle", "exec", "puma", "-C", "config/puma.rb"}
	s.workingDir = "/app"
	s.ports = []obj{cport("http", 3000, "TCP")}
	s.env = withEnv(g, d, []obj{env("RAILS_ENV", "production"), env("RAILS_LOG_TO_STDOUT", "true"), env("RAILS_MAX_THREADS", "5"),
		env("WEB_CONCURRENCY", "2"), envSecret("DATABASE_URL", d.name+"-db", "url"), envSecret("SECRET_KEY_BASE", d.name+"-secrets", "secret-key-base")})
	sized(g, s, 2, 3)
	s.liveness = probe(httpGet("/up", "http"), 20, 3, 10, 3)
	s.readiness = probe(httpGet("/up", "http"), 10, 3, 5, 3)
	s.sc, s.uid, s.gid = obj{{"runAsUser", 1000}, {"runAsNonRoot", true}}, 1000, 1000
	return s
}

func railsSidekiq(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.command = []string{"bundle", "exec", "sidekiq", "-C", "config/sidekiq.yml"}
	s.workingDir = "/app"
	s.env = withEnv(g, d, []obj{env("RAILS_ENV", "production"), env("RAILS_LOG_TO_STDOUT", "true"), env("SIDEKIQ_CONCURRENCY", "10"),
		envSecret("DATABASE_URL", d.name+"-db", "url"), envSecret("SECRET_KEY_BASE", d.name+"-secrets", "secret-key-base")})
	sized(g, s, 2, 3)
	s.liveness = probe(execCmd("sh", "-c", "test -f /tmp/sidekiq_alive"), 30, 1, 30, 3)
	s.sc, s.uid, s.gid = obj{{"runAsUser", 1000}, {"runAsNonRoot", true}}, 1000, 1000
	return s
}

func dotnetAPI(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := appContainer(c, g, d, d.name)
	s.ports = []obj{cport("http", 8080, "TCP")}
	s.env = withEnv(g, d, []obj{env("ASPNETCORE_URLS", "http://+:8080"), env("ASPNETCORE_ENVIRONMENT", "Production"),
		env("DOTNET_gcServer", "1"), env("DOTNET_GCHeapHardLimitPercent", "0x4B"),
		envSecret("ConnectionStrings__Default", d.name+"-db", "connection-string")})
	sized(g, s, 2, 3)
	s.liveness = probe(httpGet("/health/live", "http"), 10, 3, 10, 3)
	s.readiness = probe(httpGet("/health/ready", "http"), 5, 3, 10, 3)
	s.sc, s.uid, s.gid = restricted(1654), 1654, 1654
	s.mounts = []obj{mount("tmp", "/tmp", false)}
	s.volumes = []obj{emptyDir("tmp")}
	return s
}

func nginxStatic(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: "nginx", kind: "nginx", msgPolicy: "File", uid: 101, gid: 101}
	if d.system || d.repo == "" {
		c.image(g, s, "docker.io/nginxinc/nginx-unprivileged", "1.27.3-alpine", g.r.IntN(2) == 0)
	} else { // a site built on nginx's image
		s.name = d.name
		c.image(g, s, d.repo, d.tag, d.pinned)
	}
	s.ports = []obj{cport("http", 8080, "TCP")}
	s.env = withEnv(g, d, []obj{env("NGINX_ENTRYPOINT_QUIET_LOGS", "1"), env("NGINX_PORT", "8080")})
	sized(g, s, 0, 0)
	s.liveness = probe(httpGet("/healthz", "http"), 0, 1, 10, 3)
	s.readiness = probe(httpGet("/healthz", "http"), 0, 1, 5, 3)
	s.mounts = []obj{mount("nginx-conf", "/etc/nginx/conf.d", true), mount("cache", "/var/cache/nginx", false), mount("run", "/var/run", false)}
	s.volumes = []obj{configMapVolume("nginx-conf", d.name+"-nginx"), emptyDir("cache"), emptyDir("run")}
	s.sc = restricted(101)
	return s
}

func redisServer(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: "redis", kind: "redis", msgPolicy: "File", uid: 999, gid: 999}
	c.image(g, s, "docker.io/library/redis", pick(g, "7.2.5-alpine", "7.4.1-alpine"), g.r.IntN(2) == 0)
	s.args = []string{"--appendonly", "no", "--maxmemory", "200mb", "--maxmemory-policy", "allkeys-lru", "--save", ""}
	s.ports = []obj{cport("redis", 6379, "TCP")}
	s.env = []obj{env("REDIS_REPLICATION_MODE", "master"), envSecret("REDIS_PASSWORD", d.name+"-auth", "password"), env("ALLOW_EMPTY_PASSWORD", "no")}
	s.req, s.lim = [2]string{"100m", "256Mi"}, [2]string{"", "256Mi"}
	s.liveness = probe(tcpSocket("redis"), 15, 5, 10, 5)
	s.readiness = probe(execCmd("sh", "-c", "redis-cli -a \"$REDIS_PASSWORD\" ping | grep PONG"), 5, 2, 5, 3)
	s.mounts = []obj{mount("data", "/data", false)}
	s.volumes = []obj{emptyDir("data")}
	s.sc = obj{{"runAsUser", 999}, {"runAsGroup", 999}, {"runAsNonRoot", true}, {"allowPrivilegeEscalation", false}}
	return s
}

func coreDNS(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: "coredns", msgPolicy: "File"}
	c.image(g, s, "registry.k8s.io/coredns/coredns", "v1.11.3", false)
	s.args = []string{"-conf", "/etc/coredns/Corefile"}
	s.ports = []obj{cport("dns", 53, "UDP"), cport("dns-tcp", 53, "TCP"), cport("metrics", 9153, "TCP")}
	s.req, s.lim = [2]string{"100m", "70Mi"}, [2]string{"", "170Mi"}
	s.mounts = []obj{mount("config-volume", "/etc/coredns", true)}
	s.volumes = []obj{{{"name", "config-volume"}, {"configMap", obj{{"name", "coredns"},
		{"items", []obj{{{"key", "Corefile"}, {"path", "Corefile"}}}}, {"defaultMode", 420}}}}}
	s.liveness = probe(httpGet("/health", 8080), 60, 5, 10, 5)
	s.readiness = probe(httpGet("/ready", 8181), 0, 1, 10, 3)
	s.sc = obj{{"capabilities", obj{{"add", []string{"NET_BIND_SERVICE"}}, {"drop", []string{"ALL"}}}},
		{"readOnlyRootFilesystem", true}, {"allowPrivilegeEscalation", false}}
	s.env = nil
	return s
}

func ingressNginx(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: "controller", msgPolicy: "File", uid: 101, gid: 82}
	c.image(g, s, "registry.k8s.io/ingress-nginx/controller", "v1.11.3", true)
	s.args = []string{"/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
		"--election-id=ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx",
		"--configmap=$(POD_NAMESPACE)/ingress-nginx-controller", "--validating-webhook=:8443",
		"--validating-webhook-certificate=/usr/local/certificates/cert", "--validating-webhook-key=/usr/local/certificates/key",
		"--enable-metrics=true"}
	s.ports = []obj{cport("http", 80, "TCP"), cport("https", 443, "TCP"), cport("metrics", 10254, "TCP"), cport("webhook", 8443, "TCP")}
	s.env = []obj{envField("POD_NAME", "metadata.name"), envField("POD_NAMESPACE", "metadata.namespace"), env("LD_PRELOAD", "/usr/local/lib/libmimalloc.so")}
	s.req = [2]string{"100m", "90Mi"}
	s.liveness = probe(httpGet("/healthz", 10254), 10, 1, 10, 5)
	s.readiness = probe(httpGet("/healthz", 10254), 10, 1, 10, 3)
	s.lifecycle = obj{{"preStop", obj{{"exec", obj{{"command", []string{"/wait-shutdown"}}}}}}}
	s.mounts = []obj{mount("webhook-cert", "/usr/local/certificates/", true)}
	s.volumes = []obj{secretVolume("webhook-cert", "ingress-nginx-admission")}
	s.sc = obj{{"capabilities", obj{{"add", []string{"NET_BIND_SERVICE"}}, {"drop", []string{"ALL"}}}}, {"runAsUser", 101},
		{"runAsNonRoot", true}, {"readOnlyRootFilesystem", false}, {"allowPrivilegeEscalation", false},
		{"seccompProfile", obj{{"type", "RuntimeDefault"}}}}
	return s
}

// controller is an infrastructure controller (cert-manager, kube-state-metrics,
// metrics-server, Argo CD's, the Prometheus operator): d.repo:d.tag with flags.
func controller(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: d.name, msgPolicy: "File", uid: 65534, gid: 65534}
	c.image(g, s, d.repo, d.tag, d.pinned)
	s.args = []string{"--v=2", "--leader-elect=true", "--leader-election-namespace=$(POD_NAMESPACE)",
		"--metrics-bind-address=:9402", "--health-probe-bind-address=:9403"}
	s.ports = []obj{cport("http-metrics", 9402, "TCP"), cport("http-healthz", 9403, "TCP")}
	s.env = []obj{envField("POD_NAMESPACE", "metadata.namespace"), envField("POD_NAME", "metadata.name"),
		envResource("GOMEMLIMIT", "", "limits.memory")}
	s.req, s.lim = [2]string{"10m", "64Mi"}, [2]string{"", "512Mi"}
	s.liveness = probe(httpGet("/livez", "http-healthz"), 10, 15, 10, 8)
	s.readiness = probe(httpGet("/readyz", "http-healthz"), 5, 5, 10, 3)
	s.sc = restricted(0)
	return s
}

func grafana(c *rCluster, g *gen, d *rDeploy) *ctrSpec {
	s := &ctrSpec{name: "grafana", msgPolicy: "File", uid: 472, gid: 472}
	c.image(g, s, "docker.io/grafana/grafana", "11.3.1", false)
	s.ports = []obj{cport("grafana", 3000, "TCP")}
	s.env = []obj{envSecret("GF_SECURITY_ADMIN_USER", "grafana-admin", "admin-user"), envSecret("GF_SECURITY_ADMIN_PASSWORD", "grafana-admin", "admin-password"),
		env("GF_PATHS_DATA", "/var/lib/grafana/"), env("GF_PATHS_LOGS", "/var/log/grafana"), env("GF_PATHS_PLUGINS", "/var/lib/grafana/plugins"),
		env("GF_PATHS_PROVISIONING", "/etc/grafana/provisioning"), env("GF_SERVER_ROOT_URL", "https://grafana.acme.io"),
		env("GF_AUTH_GENERIC_OAUTH_ENABLED", "true"), envSecret("GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET", "grafana-oauth", "client-secret")}
	s.req, s.lim = [2]string{"100m", "256Mi"}, [2]string{"", "512Mi"}
	s.liveness = probe(httpGet("/api/health", 3000), 60, 30, 10, 10)
	s.readiness = probe(httpGet("/api/health", 3000), 0, 1, 10, 3)
	s.mounts = []obj{mount("config", "/etc/grafana/grafana.ini", false), mount("storage", "/var/lib/grafana", false),
		mount("dashboards", "/var/lib/grafana/dashboards", false)}
	s.mounts[0] = append(s.mounts[0], field{"subPath", "grafana.ini"})
	s.volumes = []obj{configMapVolume("config", "grafana"), emptyDir("storage"), emptyDir("dashboards")}
	s.sc = restricted(472)
	return s
}

// The sidecars.

// meshProxy is Istio's sidecar, as its injector adds it (with the istio-cni plugin, so
// no init container): its container, and the pod's volumes, labels and annotations.
func meshProxy(c *rCluster, g *gen, d *rDeploy, mainC *ctrSpec) *ctrSpec {
	s := &ctrSpec{name: "istio-proxy", msgPolicy: "File", injected: true, uid: 1337, gid: 1337}
	c.image(g, s, "docker.io/istio/proxyv2", "1.24.2", false)
	s.args = []string{"proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning",
		"--proxyComponentLogLevel=misc:error", "--log_output_level=default:info"}
	s.ports = []obj{cport("http-envoy-prom", 15090, "TCP")}
	var ports []string
	for _, p := range mainC.ports {
		ports = append(ports, fmt.Sprintf(`    {"name":%q,"containerPort":%d,"protocol":"TCP"}`, p[0].v, p[1].v))
	}
	podPorts := "[\n" + strings.Join(ports, "\n    ,") + "\n]"
	if len(ports) == 0 {
		podPorts = "[\n]"
	}
	s.env = []obj{env("PILOT_CERT_PROVIDER", "istiod"), env("CA_ADDR", "istiod.istio-system.svc:15012"),
		envField("POD_NAME", "metadata.name"), envField("POD_NAMESPACE", "metadata.namespace"),
		envField("INSTANCE_IP", "status.podIP"), envField("SERVICE_ACCOUNT", "spec.serviceAccountName"),
		envField("HOST_IP", "status.hostIP"), env("ISTIO_CPU_LIMIT", "2"), env("PROXY_CONFIG", "{}\n"),
		env("ISTIO_META_POD_PORTS", podPorts), env("ISTIO_META_APP_CONTAINERS", mainC.name),
		envResource("GOMEMLIMIT", "istio-proxy", "limits.memory"), envResource("GOMAXPROCS", "istio-proxy", "limits.cpu"),
		env("ISTIO_META_CLUSTER_ID", "Kubernetes"), envField("ISTIO_META_NODE_NAME", "spec.nodeName"),
		env("ISTIO_META_INTERCEPTION_MODE", "REDIRECT"), env("ISTIO_META_WORKLOAD_NAME", d.name),
		env("ISTIO_META_OWNER", "kubernetes://apis/apps/v1/namespaces/"+d.ns+"/deployments/"+d.name),
		env("ISTIO_META_MESH_ID", "cluster.local"), env("TRUST_DOMAIN", "cluster.local")}
	s.req, s.lim = [2]string{"100m", "128Mi"}, [2]string{"2", "1Gi"}
	s.mounts = []obj{mount("workload-socket", "/var/run/secrets/workload-spiffe-uds", false),
		mount("credential-socket", "/var/run/secrets/credential-uds", false),
		mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials", false),
		mount("istiod-ca-cert", "/var/run/secrets/istio", false), mount("istio-data", "/var/lib/istio/data", false),
		mount("istio-token", "/var/run/secrets/tokens", false), mount("istio-envoy", "/etc/istio/proxy", false),
		mount("istio-podinfo", "/etc/istio/pod", false)}
	s.readiness = probe(httpGet("/healthz/ready", 15021), 0, 3, 15, 4)
	s.startup = probe(httpGet("/healthz/ready", 15021), 0, 3, 1, 600)
	s.sc = obj{{"capabilities", obj{{"drop", []string{"ALL"}}}}, {"privileged", false}, {"runAsUser", 1337},
		{"runAsGroup", 1337}, {"runAsNonRoot", true}, {"readOnlyRootFilesystem", true}, {"allowPrivilegeEscalation", false}}
	downward := func(path, field string) obj {
		return obj{{"path", path}, {"fieldRef", obj{{"apiVersion", "v1"}, {"fieldPath", field}}}}
	}
	s.volumes = []obj{emptyDir("workload-socket"), emptyDir("credential-socket"), emptyDir("workload-certs"),
		{{"name", "istio-envoy"}, {"emptyDir", obj{{"medium", "Memory"}}}}, emptyDir("istio-data"),
		{{"name", "istio-podinfo"}, {"downwardAPI", obj{{"items", []obj{downward("labels", "metadata.labels"),
			downward("annotations", "metadata.annotations")}}, {"defaultMode", 420}}}},
		{{"name", "istio-token"}, {"projected", obj{{"sources", []obj{{{"serviceAccountToken", obj{{"audience", "istio-ca"},
			{"expirationSeconds", 43200}, {"path", "istio-token"}}}}}}, {"defaultMode", 420}}}},
		configMapVolume("istiod-ca-cert", "istio-ca-root-cert")}
	return s
}

func logShipper(c *rCluster, g *gen, d *rDeploy, mainC *ctrSpec) *ctrSpec {
	s := &ctrSpec{name: "fluent-bit", msgPolicy: "File", uid: 65534, gid: 65534}
	c.image(g, s, "cr.fluentbit.io/fluent/fluent-bit", "3.2.4", false)
	s.args = []string{"--workdir=/fluent-bit/etc", "--config=/fluent-bit/etc/conf/fluent-bit.yaml"}
	s.ports = []obj{cport("http", 2020, "TCP")}
	s.env = []obj{env("FLUENT_LOKI_HOST", "loki-gateway.logging.svc.cluster.local"), env("FLUENT_LOKI_PORT", "80"),
		envField("POD_NAME", "metadata.name"), envField("POD_NAMESPACE", "metadata.namespace"), envField("NODE_NAME", "spec.nodeName"),
		env("APP_NAME", d.name)}
	s.req, s.lim = [2]string{"20m", "32Mi"}, [2]string{"", "128Mi"}
	s.liveness = probe(httpGet("/", "http"), 0, 1, 10, 3)
	s.readiness = probe(httpGet("/api/v1/health", "http"), 0, 1, 10, 3)
	s.mounts = []obj{mount("app-logs", "/var/log/app", true), mount("fluent-bit-config", "/fluent-bit/etc/conf", true)}
	s.volumes = []obj{emptyDir("app-logs"), configMapVolume("fluent-bit-config", d.name+"-fluent-bit")}
	s.sc = restricted(65534)
	// The application writes the logs it ships.
	mainC.mounts = append(slices.Clip(mainC.mounts), mount("app-logs", "/var/log/app", false))
	return s
}

func metricsExporter(c *rCluster, g *gen, d *rDeploy, mainC *ctrSpec) *ctrSpec {
	s := &ctrSpec{msgPolicy: "File", uid: 65534, gid: 65534}
	switch {
	case mainC.kind == "redis":
		s.name = "redis-exporter"
		c.image(g, s, "docker.io/oliver006/redis_exporter", "v1.67.0", false)
		s.ports = []obj{cport("metrics", 9121, "TCP")}
		s.env = []obj{env("REDIS_ADDR", "redis://localhost:6379"), envSecret("REDIS_PASSWORD", d.name+"-auth", "password"),
			env("REDIS_EXPORTER_INCL_SYSTEM_METRICS", "true")}
		s.liveness = probe(httpGet("/health", "metrics"), 0, 1, 10, 3)
	case mainC.kind == "nginx":
		s.name = "nginx-exporter"
		c.image(g, s, "docker.io/nginx/nginx-prometheus-exporter", "1.4.0", false)
		s.args = []string{"--nginx.scrape-uri=http://localhost:8080/stub_status", "--web.listen-address=:9113"}
		s.ports = []obj{cport("metrics", 9113, "TCP")}
		s.liveness = probe(httpGet("/metrics", "metrics"), 0, 1, 10, 3)
	default:
		s.name = "statsd-exporter"
		c.image(g, s, "docker.io/prom/statsd-exporter", "v0.28.0", false)
		s.args = []string{"--statsd.mapping-config=/etc/statsd/mapping.yaml", "--statsd.listen-udp=:9125", "--web.listen-address=:9102"}
		s.ports = []obj{cport("metrics", 9102, "TCP"), cport("statsd-udp", 9125, "UDP")}
		s.mounts = []obj{mount("statsd-mapping", "/etc/statsd", true)}
		s.volumes = []obj{configMapVolume("statsd-mapping", d.name+"-statsd-mapping")}
		s.readiness = probe(httpGet("/-/ready", "metrics"), 0, 1, 10, 3)
		s.liveness = probe(httpGet("/-/healthy", "metrics"), 0, 1, 10, 3)
	}
	s.req, s.lim = [2]string{"10m", "32Mi"}, [2]string{"100m", "64Mi"}
	s.sc = restricted(65534)
	return s
}

func dbProxy(c *rCluster, g *gen, d *rDeploy, _ *ctrSpec) *ctrSpec {
	s := &ctrSpec{name: "cloud-sql-proxy", msgPolicy: "File", uid: 65532, gid: 65532}
	c.image(g, s, "gcr.io/cloud-sql-connectors/cloud-sql-proxy", "2.14.3", false)
	s.args = []string{"--structured-logs", "--port=5432", "--max-sigterm-delay=30s", "--health-check", "--http-address=0.0.0.0",
		"--http-port=9801", "acme-prod:europe-west1:" + d.ns + "-pg"}
	s.env = []obj{env("CSQL_PROXY_PRIVATE_IP", "true"), env("CSQL_PROXY_AUTO_IAM_AUTHN", "true"), env("CSQL_PROXY_LAZY_REFRESH", "true")}
	s.req = [2]string{"50m", "64Mi"}
	s.startup = probe(httpGet("/startup", 9801), 0, 1, 1, 20)
	s.liveness = probe(httpGet("/liveness", 9801), 0, 5, 30, 4)
	s.sc = obj{{"runAsNonRoot", true}, {"allowPrivilegeEscalation", false}}
	return s
}

func oauthProxy(c *rCluster, g *gen, d *rDeploy, mainC *ctrSpec) *ctrSpec {
	s := &ctrSpec{name: "oauth2-proxy", msgPolicy: "File", uid: 65532, gid: 65532}
	c.image(g, s, "quay.io/oauth2-proxy/oauth2-proxy", "v7.7.1", true)
	upstream := 8080
	if len(mainC.ports) > 0 {
		upstream = mainC.ports[0][1].v.(int)
	}
	s.args = []string{"--http-address=0.0.0.0:4180", fmt.Sprintf("--upstream=http://127.0.0.1:%d", upstream), "--provider=oidc",
		"--email-domain=acme.io", "--cookie-secure=true", "--skip-provider-button=true", "--reverse-proxy=true"}
	s.ports = []obj{cport("proxy", 4180, "TCP")}
	s.env = []obj{envSecret("OAUTH2_PROXY_CLIENT_ID", d.name+"-oauth", "client-id"), envSecret("OAUTH2_PROXY_CLIENT_SECRET", d.name+"-oauth", "client-secret"),
		envSecret("OAUTH2_PROXY_COOKIE_SECRET", d.name+"-oauth", "cookie-secret"), env("OAUTH2_PROXY_OIDC_ISSUER_URL", "https://auth.acme.io/realms/staff")}
	s.req, s.lim = [2]string{"10m", "32Mi"}, [2]string{"", "128Mi"}
	s.liveness = probe(httpGet("/ping", "proxy"), 0, 1, 10, 3)
	s.readiness = probe(httpGet("/ready", "proxy"), 0, 1, 10, 3)
	s.sc = restricted(2000)
	return s
}

// secretsAgent is Vault's agent, which its injector adds to the pods of templates with
// its annotations.
func secretsAgent(c *rCluster, g *gen, d *rDeploy, mainC *ctrSpec) *ctrSpec {
	s := &ctrSpec{name: "vault-agent", msgPolicy: "File", injected: true, uid: 100, gid: 1000}
	c.image(g, s, "docker.io/hashicorp/vault", "1.18.3", false)
	s.command = []string{"/bin/sh", "-ec"}
	s.args = []string{"echo ${VAULT_CONFIG?} | base64 -d > /home/vault/config.json && vault agent -config=/home/vault/config.json"}
	s.env = []obj{env("NAMESPACE", d.ns), env("HOST_IP", "$(HOST_IP)"), env("POD_IP", "$(POD_IP)"),
		env("VAULT_LOG_LEVEL", "info"), env("VAULT_LOG_FORMAT", "standard"),
		env("VAULT_CONFIG", "eyJhdXRvX2F1dGgiOnsibWV0aG9kIjp7InR5cGUiOiJrdWJlcm5ldGVzIiwibW91bnRfcGF0aCI6ImF1dGgva3ViZXJuZXRlcyIsImNvbmZpZyI6eyJyb2xlIjoi"+d.name+"In19fX0=")}
	s.req, s.lim = [2]string{"250m", "64Mi"}, [2]string{"500m", "128Mi"}
	s.mounts = []obj{mount("home-sidecar", "/home/vault", false), mount("vault-secrets", "/vault/secrets", false)}
	s.volumes = []obj{{{"name", "home-sidecar"}, {"emptyDir", obj{{"medium", "Memory"}}}}, {{"name", "vault-secrets"}, {"emptyDir", obj{{"medium", "Memory"}}}}}
	s.sc = obj{{"capabilities", obj{{"drop", []string{"ALL"}}}}, {"runAsUser", 100}, {"runAsGroup", 1000}, {"runAsNonRoot", true},
		{"readOnlyRootFilesystem", true}, {"allowPrivilegeEscalation", false}}
	mainC.mounts = append(slices.Clip(mainC.mounts), mount("vault-secrets", "/vault/secrets", false))
	return s
}

// The namespaces: those named by words (the first seven the platform's), then tenants.
var wordNamespaces = []string{"kube-system", "istio-system", "ingress-nginx", "cert-manager", "monitoring", "logging", "argocd",
	"payments", "checkout", "storefront", "catalog", "search", "identity", "billing", "notifications", "shipping", "inventory",
	"recommendations", "analytics", "data-pipeline", "ml-serving", "messaging", "media", "growth", "internal-tools",
	"platform-api", "partner-gateway", "fraud-detection", "customer-support", "reporting"}

// systemDeploy is one of the platform's Deployments.
type systemDeploy struct {
	ns, name, repo, tag string
	spec                mainSpec
	weight              float64
}

var systemDeploys = []systemDeploy{
	{"kube-system", "coredns", "", "", coreDNS, 0.1},
	{"kube-system", "metrics-server", "registry.k8s.io/metrics-server/metrics-server", "v0.7.2", controller, 0.02},
	{"istio-system", "istiod", "docker.io/istio/pilot", "1.24.2", controller, 0.1},
	{"ingress-nginx", "ingress-nginx-controller", "", "", ingressNginx, 0.1},
	{"cert-manager", "cert-manager", "quay.io/jetstack/cert-manager-controller", "v1.16.2", controller, 0.02},
	{"cert-manager", "cert-manager-cainjector", "quay.io/jetstack/cert-manager-cainjector", "v1.16.2", controller, 0.02},
	{"cert-manager", "cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook", "v1.16.2", controller, 0.02},
	{"monitoring", "grafana", "", "", grafana, 0.02},
	{"monitoring", "kube-state-metrics", "registry.k8s.io/kube-state-metrics/kube-state-metrics", "v2.14.0", controller, 0.02},
	{"monitoring", "prometheus-operator", "quay.io/prometheus-operator/prometheus-operator", "v0.79.2", controller, 0.02},
	{"logging", "loki-gateway", "", "", nginxStatic, 0.03},
	{"argocd", "argocd-server", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.03},
	{"argocd", "argocd-repo-server", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.04},
	{"argocd", "argocd-applicationset-controller", "quay.io/argoproj/argocd", "v2.13.3", controller, 0.02},
}

// The roles of the application namespaces' Deployments, with the specs each may use.
var appRoles = []struct {
	role   string
	specs  []mainSpec
	weight float64
}{
	{"api", []mainSpec{goAPI, javaSpring, dotnetAPI, nodeAPI, pyDjango}, 2},
	{"web", []mainSpec{nodeWeb, nginxStatic, railsPuma}, 1.5},
	{"worker", []mainSpec{pyCelery, goWorker, railsSidekiq}, 1},
	{"consumer", []mainSpec{goWorker, javaSpring}, 1},
	{"grpc", []mainSpec{goGRPC}, 1.5},
	{"redis", []mainSpec{redisServer}, 0.1},
	{"gateway", []mainSpec{goAPI, nginxStatic}, 1},
	{"admin", []mainSpec{railsPuma, pyDjango}, 0.2},
	{"scheduler", []mainSpec{pyCelery}, 0.1},
	{"inference", []mainSpec{pyInference}, 0.7},
	{"webhook", []mainSpec{goAPI}, 0.3},
	{"indexer", []mainSpec{goWorker, javaSpring}, 0.6},
	{"graphql", []mainSpec{nodeAPI}, 1},
	{"sync", []mainSpec{goWorker}, 0.4},
}

// The tenants all run the one product, each its own copy of a few of its parts.
var tenantRoles = []struct {
	role string
	spec mainSpec
	repo string
}{
	{"api", goAPI, "ghcr.io/acme/saas-api"},
	{"web", nodeWeb, "ghcr.io/acme/saas-web"},
	{"worker", pyCelery, "ghcr.io/acme/saas-worker"},
	{"redis", redisServer, ""},
	{"scheduler", pyCelery, "ghcr.io/acme/saas-worker"},
}

var registries = []string{"ghcr.io/acme", "123456789012.dkr.ecr.eu-west-1.amazonaws.com", "europe-docker.pkg.dev/acme-prod/apps",
	"registry.gitlab.com/acme/platform"}

// realisticCluster draws the nodes and the Deployments.
func realisticCluster(g *gen) *rCluster {
	c := &rCluster{pools: map[string][]int{}, digests: map[string]string{}}
	seen := map[string]bool{}
	for _, p := range []struct {
		name string
		n    int
	}{{"default-pool", 170}, {"highmem-pool", 80}, {"spot-pool", 40}, {"system-pool", 10}} {
		groups := [3]string{g.hex(8), g.hex(8), g.hex(8)} // one instance group per zone
		for j := range p.n {
			name := ""
			for name == "" || seen[name] {
				name = fmt.Sprintf("gke-prod-eu1-%s-%s-%s", p.name, groups[j%3], g.suffix(4))
			}
			seen[name] = true
			i := len(c.nodes)
			c.pools[p.name] = append(c.pools[p.name], i)
			c.nodes = append(c.nodes, rNode{name: name, ip: fmt.Sprintf("10.132.%d.%d", i/250, 2+i%250), pool: p.name,
				podBase: 10<<24 | 64<<16 + uint32(i)*1024})
		}
	}

	tenants := g.r.Perm(64)[:30]
	slices.Sort(tenants)
	meshed := map[string]bool{}
	for _, sd := range systemDeploys {
		c.newDeploy(g, sd.ns, sd.name, "", sd.repo, sd.tag, sd.spec, sd.weight, true)
	}
	for _, ns := range wordNamespaces[7:] {
		meshed[ns] = g.r.Float64() < 0.45
		stem := ns
		if i := strings.IndexByte(ns, '-'); i > 0 {
			stem = ns[:i]
		}
		registry := pick(g, registries...)
		roles := g.r.Perm(len(appRoles))[:2+g.r.IntN(5)]
		if !slices.Contains(roles, 0) && !slices.Contains(roles, 1) {
			roles[0] = pick(g, 0, 1) // every application has an api or a web
		}
		slices.Sort(roles)
		for _, r := range roles {
			ar := appRoles[r]
			name := ar.role
			if g.r.IntN(3) > 0 {
				name = stem + "-" + ar.role
			}
			d := c.newDeploy(g, ns, name, ar.role, registry+"/"+stem+"-"+ar.role, "", pick(g, ar.specs...), ar.weight, false)
			d.meshed = meshed[ns]
		}
	}
	for _, t := range tenants {
		ns := fmt.Sprintf("tenant-%02d", t)
		mesh := g.r.Float64() < 0.4
		n := 3 + g.r.IntN(2)
		for _, tr := range tenantRoles[:n] {
			d := c.newDeploy(g, ns, tr.role, tr.role, tr.repo, "v3."+strconv.Itoa(12+g.r.IntN(3))+".0", tr.spec, 0.3, false)
			d.meshed = mesh
		}
	}
	for _, d := range c.deploys {
		c.finish(g, d)
	}
	return c
}

// newDeploy starts a Deployment: its names, times, weight and image (a drawn tag in
// repo, unless tag is given).
func (c *rCluster) newDeploy(g *gen, ns, name, role, repo, tag string, spec mainSpec, weight float64, system bool) *rDeploy {
	d := &rDeploy{ns: ns, name: name, role: role, system: system, repo: repo, tag: tag, nsHash: shard.Hash(ns)}
	d.hash = g.suffix(7 + g.r.IntN(4)) // pod-template-hash: 7 to 10 characters
	d.rsName, d.rsUID = name+"-"+d.hash, g.uid()
	d.rsCreated = int64(g.r.IntN(27 * 24 * 3600))
	if system {
		d.rsCreated = int64(g.r.IntN(24 * 3600))
	}
	d.weight = weight * math.Exp(g.r.NormFloat64()*1.4)
	if tag == "" {
		d.tag = pick(g, fmt.Sprintf("v%d.%d.%d", 1+g.r.IntN(4), g.r.IntN(40), g.r.IntN(12)),
			"sha-"+g.hex(7), fmt.Sprintf("2025.02.%02d-%s", 1+g.r.IntN(28), g.hex(6)))
	}
	d.pinned = g.r.Float64() < 0.7
	d.flaky = pick(g, 0.02, 0.05, 0.1, 0.3, 0.6)
	d.readyDelay = 2 + g.r.IntN(20)
	d.tgps = pick(g, 30, 30, 30, 60, 120)
	main := spec(c, g, d)
	d.containers = []*ctrSpec{main}
	c.deploys = append(c.deploys, d)
	return d
}

// finish adds the sidecars, the pod-level spec, the labels and annotations, and what
// follows from them (QoS class, the kubelet's container order, the controller manager's
// managedFields).
func (c *rCluster) finish(g *gen, d *rDeploy) {
	main := d.containers[0]
	if !d.system {
		slots := 3
		if d.meshed {
			slots = 2
		}
		var sidecars []func(*rCluster, *gen, *rDeploy, *ctrSpec) *ctrSpec
		isRedis := main.kind == "redis"
		if x := g.r.Float64(); isRedis && x < 0.6 || !isRedis && x < 0.2 {
			sidecars = append(sidecars, metricsExporter)
		}
		if g.r.Float64() < 0.15 && !isRedis {
			sidecars = append(sidecars, logShipper)
		}
		if g.r.Float64() < 0.12 && (d.role == "api" || d.role == "worker" || d.role == "consumer") {
			sidecars = append(sidecars, dbProxy)
		}
		if g.r.Float64() < 0.3 && (d.role == "admin" || d.ns == "internal-tools" || d.ns == "customer-support") {
			sidecars = append(sidecars, oauthProxy)
		}
		if g.r.Float64() < 0.08 && !isRedis {
			sidecars = append(sidecars, secretsAgent)
		}
		for _, add := range sidecars[:min(len(sidecars), slots)] {
			d.containers = append(d.containers, add(c, g, d, main))
		}
		if d.meshed {
			d.containers = append(d.containers, meshProxy(c, g, d, main))
		}
	}

	// Labels and annotations: the template's, then the injectors'.
	part := d.ns
	if strings.HasPrefix(part, "tenant-") {
		part = "saas"
	}
	if d.system || g.r.Float64() < 0.6 { // Helm's recommended labels
		d.tmplLabels = obj{{"app.kubernetes.io/instance", d.name}, {"app.kubernetes.io/name", d.name}, {"app.kubernetes.io/part-of", part}}
		if !d.system && g.r.IntN(2) == 0 {
			d.tmplLabels = append(d.tmplLabels, field{"app.kubernetes.io/version", strings.TrimPrefix(d.tag, "v")})
		}
		if d.role != "" {
			d.tmplLabels = append(d.tmplLabels, field{"app.kubernetes.io/component", d.role})
		}
	} else {
		d.tmplLabels = obj{{"app", d.name}, {"tier", cmp.Or(d.role, "system")}, {"team", pick(g, "core", "growth", "platform", "data", "sre")}}
	}
	d.tmplLabels = append(d.tmplLabels, field{"pod-template-hash", d.hash})
	if !d.system && g.r.Float64() < 0.3 {
		d.tmplAnn = append(d.tmplAnn, field{"prometheus.io/scrape", "true"}, field{"prometheus.io/port", "9090"}, field{"prometheus.io/path", "/metrics"})
	}
	if g.r.Float64() < 0.2 {
		d.tmplAnn = append(d.tmplAnn, field{"kubectl.kubernetes.io/restartedAt", tsu(d.rsCreated)})
	}
	if g.r.Float64() < 0.25 {
		d.tmplAnn = append(d.tmplAnn, field{"checksum/config", g.hex(64)})
	}
	if g.r.Float64() < 0.1 {
		d.tmplAnn = append(d.tmplAnn, field{"cluster-autoscaler.kubernetes.io/safe-to-evict", "true"})
	}
	d.labels, d.annotations = slices.Clone(d.tmplLabels), slices.Clone(d.tmplAnn)
	for _, s := range d.containers {
		switch s.name {
		case "istio-proxy":
			d.labels = append(d.labels, field{"security.istio.io/tlsMode", "istio"}, field{"service.istio.io/canonical-name", d.name},
				field{"service.istio.io/canonical-revision", "latest"})
			var vols []string
			for _, v := range s.volumes {
				vols = append(vols, strconv.Quote(v[0].v.(string)))
			}
			d.annotations = append(d.annotations, field{"istio.io/rev", "default"},
				field{"kubectl.kubernetes.io/default-container", main.name}, field{"kubectl.kubernetes.io/default-logs-container", main.name},
				field{"sidecar.istio.io/status", `{"initContainers":null,"containers":["istio-proxy"],"volumes":[` + strings.Join(vols, ",") +
					`],"imagePullSecrets":null,"revision":"default"}`})
			if !slices.ContainsFunc(d.annotations, func(f field) bool { return f.k == "prometheus.io/scrape" }) {
				d.annotations = append(d.annotations, field{"prometheus.io/path", "/stats/prometheus"}, field{"prometheus.io/port", "15020"},
					field{"prometheus.io/scrape", "true"})
			}
		case "vault-agent":
			tmpl := obj{{"vault.hashicorp.com/agent-inject", "true"}, {"vault.hashicorp.com/role", d.name},
				{"vault.hashicorp.com/agent-inject-secret-config", "secret/data/" + d.ns + "/" + d.name}}
			d.tmplAnn = append(d.tmplAnn, tmpl...)
			d.annotations = append(d.annotations, tmpl...)
			d.annotations = append(d.annotations, field{"vault.hashicorp.com/agent-inject-status", "injected"})
		}
	}
	for _, o := range []obj{d.tmplLabels, d.tmplAnn, d.labels, d.annotations} {
		slices.SortFunc(o, func(a, b field) int { return strings.Compare(a.k, b.k) })
	}
	if len(d.annotations) > 0 && d.annotations[0].k <= StampAnnotation {
		panic("streamserver: an annotation sorts before the stamp's: " + d.annotations[0].k)
	}

	// The pod-level spec.
	for _, s := range d.containers {
		for _, v := range s.volumes {
			if !slices.ContainsFunc(d.volumes, func(w obj) bool { return w[0].v == v[0].v }) {
				if !s.injected {
					d.volumes = slices.Insert(d.volumes, d.tmplVolumes, v)
					d.tmplVolumes++
				} else {
					d.volumes = append(d.volumes, v)
				}
			}
		}
	}
	d.saName, d.saInTemplate = "default", false
	if d.system || g.r.Float64() < 0.6 {
		d.saName, d.saInTemplate = d.name, true
	}
	switch x := g.r.Float64(); {
	case d.system:
		d.podSC = obj{{"runAsNonRoot", true}, {"seccompProfile", obj{{"type", "RuntimeDefault"}}}}
		d.nodeSelector = obj{{"kubernetes.io/os", "linux"}}
		if d.name == "coredns" {
			d.priorityClass, d.priority = "system-cluster-critical", 2000000000
		}
	case x < 0.35:
		d.podSC = obj{{"runAsUser", 1000}, {"runAsGroup", 1000}, {"runAsNonRoot", true}, {"fsGroup", 2000},
			{"seccompProfile", obj{{"type", "RuntimeDefault"}}}}
	case x < 0.5:
		d.podSC = obj{{"fsGroup", 1000}}
	}
	if d.podSC == nil {
		d.podSC = obj{}
	}
	if !d.system && g.r.Float64() < 0.1 || main.storage != "" {
		d.nodeSelector, d.pool = obj{{"cloud.google.com/gke-nodepool", "highmem-pool"}}, "highmem-pool"
	}
	if d.system {
		d.pool = "system-pool"
	}
	if g.r.Float64() < 0.25 && !d.system {
		d.imagePullSecrets = []obj{{{"name", pick(g, "ghcr-pull", "regcred", "gitlab-registry")}}}
	}
	selector := obj{{"app", d.name}} // the Deployment's selector
	if d.tmplLabels[0].k != "app" {
		selector = obj{{"app.kubernetes.io/instance", d.name}, {"app.kubernetes.io/name", d.name}}
	}
	if g.r.Float64() < 0.3 {
		d.affinity = obj{{"podAntiAffinity", obj{{"preferredDuringSchedulingIgnoredDuringExecution", []obj{{
			{"weight", 100}, {"podAffinityTerm", obj{{"labelSelector", obj{{"matchLabels", selector}}},
				{"topologyKey", "kubernetes.io/hostname"}}}}}}}}}
	}
	if g.r.Float64() < 0.2 {
		d.tsc = []obj{{{"maxSkew", 1}, {"topologyKey", "topology.kubernetes.io/zone"}, {"whenUnsatisfiable", "ScheduleAnyway"},
			{"labelSelector", obj{{"matchLabels", selector}}}}}
	}
	if !d.system && g.r.Float64() < 0.12 {
		d.priorityClass, d.priority = "high-priority", 1000000
	}
	if g.r.Float64() < 0.06 {
		d.dnsConfig = obj{{"options", []obj{{{"name", "ndots"}, {"value", "2"}}}}}
	}

	// What follows.
	d.qos = qosClass(d.containers)
	d.statusOrder = make([]int, len(d.containers))
	for i := range d.statusOrder {
		d.statusOrder[i] = i
	}
	slices.SortFunc(d.statusOrder, func(a, b int) int { return strings.Compare(d.containers[a].name, d.containers[b].name) })
	owner := obj{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", d.rsName}, {"uid", d.rsUID},
		{"controller", true}, {"blockOwnerDeletion", true}}
	tmplMeta := obj{{"generateName", d.rsName + "-"}, {"labels", d.tmplLabels}}
	if len(d.tmplAnn) > 0 {
		tmplMeta = append(tmplMeta, field{"annotations", d.tmplAnn})
	}
	tmplMeta = append(tmplMeta, field{"ownerReferences", []obj{owner}})
	d.kcmFields = obj{{"f:metadata", fieldsOf(tmplMeta)}, {"f:spec", fieldsOf(d.spec("", "", true))}}
}

// qosClass is the pod's QoS class (Guaranteed, Burstable or BestEffort) for its
// containers' resources.
func qosClass(cs []*ctrSpec) string {
	guaranteed, none := true, true
	for _, c := range cs {
		if c.req != [2]string{} || c.lim != [2]string{} {
			none = false
		}
		if c.lim[0] == "" || c.lim[1] == "" || c.req != c.lim {
			guaranteed = false
		}
	}
	switch {
	case none:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// spec is the pod spec: with template, the template's as the controller manager wrote it
// (before the admission plugins and webhooks), else the pod's on node nodeName with its
// kube-api-access volume apiVol.
func (d *rDeploy) spec(apiVol, nodeName string, template bool) obj {
	vols := d.volumes
	if template {
		vols = vols[:d.tmplVolumes]
	} else {
		vols = append(slices.Clip(vols), obj{{"name", apiVol}, {"projected", obj{{"sources", []obj{
			{{"serviceAccountToken", obj{{"expirationSeconds", 3607}, {"path", "token"}}}},
			{{"configMap", obj{{"name", "kube-root-ca.crt"}, {"items", []obj{{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}},
			{{"downwardAPI", obj{{"items", []obj{{{"path", "namespace"}, {"fieldRef", obj{{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}}}}},
		}}, {"defaultMode", 420}}}})
	}
	var ctrs []obj
	for _, c := range d.containers {
		if !template || !c.injected {
			ctrs = append(ctrs, c.obj(apiVol))
		}
	}
	s := obj{}
	if len(vols) > 0 {
		s = append(s, field{"volumes", vols})
	}
	s = append(s, field{"containers", ctrs}, field{"restartPolicy", "Always"}, field{"terminationGracePeriodSeconds", d.tgps},
		field{"dnsPolicy", "ClusterFirst"})
	if d.nodeSelector != nil {
		s = append(s, field{"nodeSelector", d.nodeSelector})
	}
	if d.saInTemplate || !template {
		s = append(s, field{"serviceAccountName", d.saName}, field{"serviceAccount", d.saName})
	}
	if !template {
		s = append(s, field{"nodeName", nodeName})
	}
	s = append(s, field{"securityContext", d.podSC})
	if d.imagePullSecrets != nil {
		s = append(s, field{"imagePullSecrets", d.imagePullSecrets})
	}
	if d.affinity != nil {
		s = append(s, field{"affinity", d.affinity})
	}
	s = append(s, field{"schedulerName", "default-scheduler"})
	if !template {
		s = append(s, field{"tolerations", []obj{
			{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
			{{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
		}})
	}
	if d.priorityClass != "" {
		s = append(s, field{"priorityClassName", d.priorityClass})
	}
	if !template {
		s = append(s, field{"priority", d.priority})
	}
	if d.dnsConfig != nil {
		s = append(s, field{"dnsConfig", d.dnsConfig})
	}
	s = append(s, field{"enableServiceLinks", true})
	if !template {
		s = append(s, field{"preemptionPolicy", "PreemptLowerPriority"})
	}
	if d.tsc != nil {
		s = append(s, field{"topologySpreadConstraints", d.tsc})
	}
	return s
}

// listKeys are the keys of the pod's associative lists (+listType=map), by member name;
// every other list is atomic.
var listKeys = map[string][]string{
	"containers": {"name"}, "env": {"name"}, "volumes": {"name"}, "imagePullSecrets": {"name"},
	"volumeMounts": {"mountPath"}, "ports": {"containerPort", "protocol"}, "ownerReferences": {"uid"},
	"topologySpreadConstraints": {"topologyKey", "whenUnsatisfiable"}, "podIPs": {"ip"}, "conditions": {"type"},
}

// atomicStructs are the members whose structs are +structType=atomic (as are the items
// of imagePullSecrets and ownerReferences): a field set names them whole.
var atomicStructs = map[string]bool{"fieldRef": true, "resourceFieldRef": true, "secretKeyRef": true,
	"configMapKeyRef": true, "labelSelector": true, "imagePullSecrets": true, "ownerReferences": true}

// fieldsOf is the fieldsV1 of the members of o, as kube-apiserver writes a field set:
// "f:<name>" for each member, "." for a struct or map that is itself set, "k:{…}" for the
// items of associative lists, sorted.
func fieldsOf(o obj) obj {
	out := make(obj, 0, len(o))
	for _, f := range o {
		out = append(out, field{"f:" + f.k, fieldsValue(f.k, f.v)})
	}
	slices.SortFunc(out, func(a, b field) int { return strings.Compare(a.k, b.k) })
	return out
}

func fieldsValue(name string, v any) any {
	switch v := v.(type) {
	case obj:
		if len(v) == 0 || atomicStructs[name] {
			return leaf
		}
		return append(obj{{".", leaf}}, fieldsOf(v)...)
	case []obj:
		keys, ok := listKeys[name]
		if !ok {
			return leaf
		}
		type item struct {
			vals []any
			f    field
		}
		var items []item
		for _, x := range v {
			var vals []any
			var kb strings.Builder
			kb.WriteString("k:{")
			for i, k := range keys {
				for _, m := range x {
					if m.k == k {
						vals = append(vals, m.v)
						if i > 0 {
							kb.WriteByte(',')
						}
						switch mv := m.v.(type) {
						case int:
							fmt.Fprintf(&kb, "%q:%d", k, mv)
						default:
							fmt.Fprintf(&kb, "%q:%q", k, mv)
						}
					}
				}
			}
			kb.WriteByte('}')
			var fv any = leaf
			if !atomicStructs[name] {
				fv = append(obj{{".", leaf}}, fieldsOf(x)...)
			}
			items = append(items, item{vals, field{kb.String(), fv}})
		}
		slices.SortFunc(items, func(a, b item) int {
			for i := range a.vals {
				var c int
				switch av := a.vals[i].(type) {
				case int:
					c = cmp.Compare(av, b.vals[i].(int))
				default:
					c = strings.Compare(av.(string), b.vals[i].(string))
				}
				if c != 0 {
					return c
				}
			}
			return 0
		})
		out := obj{{".", leaf}}
		for _, it := range items {
			out = append(out, it.f)
		}
		return out
	}
	return leaf
}

// A pod's kubelet-written state, what its watch events change.

// termState is a container's last termination.
type termState struct {
	exitCode              int
	reason                string
	startedAt, finishedAt int64 // seconds after epoch
	id                    string
}

// ctrState is a container's running state.
type ctrState struct {
	restarts  int
	startedAt int64
	id        string     // 64 hex digits, the containerd ID
	last      *termState // nil: it never terminated
}

// kubeletState is what the kubelet writes of a pod and its watch events change: its
// containers' states (in the kubelet's order, by name), when it last became ready (the
// Ready and ContainersReady conditions' lastTransitionTime) and the time of the kubelet's
// managedFields entry. A pod has at most one restarting container (last not nil), whose
// restartCount stays below 7 so that kubeletVariants more restarts keep its width.
type kubeletState struct {
	ctrs               []ctrState
	readyAt, updatedAt int64
}

// variant is the state after the pod's v-th change (v from 1 to kubeletVariants), for the
// pod whose uid hashes to seed (shard.Hash): a pod with a restarting container sees it
// restart v more times, gap seconds apart (a new container ID, the previous one's
// termination as lastState, the pod ready again a few seconds later); any other pod
// turns unready and ready again v times (new condition times). Every value keeps its
// width in JSON and in protobuf, so a variant is its pod's encoding with a few bytes
// replaced. It depends only on the values it changes and seed, so that the server finds
// the same variant from a pod's protobuf message (loadProtobuf) as from its generator.
func (ks *kubeletState) variant(seed uint64, v int) kubeletState {
	out := kubeletState{ctrs: slices.Clone(ks.ctrs), readyAt: ks.readyAt + int64(v)*kubeletGap(seed)}
	gap := kubeletGap(seed)
	for j := range out.ctrs {
		b := &ks.ctrs[j]
		if b.last == nil {
			continue
		}
		start := func(u int) int64 { return b.startedAt + int64(u)*gap }
		id := func(u int) string {
			if u == 0 {
				return b.id
			}
			return variantID(seed, j, u)
		}
		out.ctrs[j] = ctrState{restarts: b.restarts + v, startedAt: start(v), id: id(v),
			last: &termState{exitCode: b.last.exitCode, reason: b.last.reason, startedAt: start(v - 1),
				finishedAt: start(v) - 10 - int64(seed>>24%50), id: id(v - 1)}}
		out.readyAt = start(v) + 3 + int64(seed>>16%20)
	}
	out.updatedAt = out.readyAt
	return out
}

// kubeletGap is the seconds between a pod's changes: 10 to 60 minutes.
func kubeletGap(seed uint64) int64 { return int64(600 + seed%3000) }

// variantID is the ID of container j (in the kubelet's order) after the pod's u-th change.
func variantID(seed uint64, j, u int) string {
	b := make([]byte, 64)
	for w := range 4 {
		x := mix64(seed ^ uint64(j)<<40 ^ uint64(u)<<48 ^ uint64(w)<<56)
		for k := range 16 {
			b[16*w+k] = hexDigits[x>>(60-4*k)&15]
		}
	}
	return string(b)
}

// kubeletVariant is the variant (from 0) that the k-th change after the list carries
// (see EventAt), on n objects: the object's changes take the variants in turn, and an
// object deleted and added back keeps its last one.
func kubeletVariant(k int64, n int) int {
	if k%10 == 0 && k > 0 { // the ADDED after a DELETED
		k--
	}
	return int(k / int64(n) % kubeletVariants)
}

// podDraw is one realistic pod's own values, drawn in order from the seed, so that the
// pods can then be built and encoded in parallel.
type podDraw struct {
	d                             *rDeploy
	name, uid, vol, podIP         string
	node                          *rNode
	created, startTime, sandboxAt int64 // seconds after epoch
	ks                            kubeletState
}

var terminations = []struct {
	code   int
	reason string
}{{1, "Error"}, {137, "OOMKilled"}, {137, "Error"}, {143, "Error"}, {2, "Error"}, {0, "Completed"}}

// drawPods spreads n pods over the Deployments by their weights (each at least one pod
// once there are as many pods as Deployments) and draws each pod's values.
func (c *rCluster) drawPods(g *gen, n int) []podDraw {
	counts := make([]int, len(c.deploys))
	total := 0.0
	for _, d := range c.deploys {
		total += d.weight
	}
	if n < len(c.deploys) {
		for range n {
			x := g.r.Float64() * total
			i := 0
			for ; i < len(c.deploys)-1 && x >= c.deploys[i].weight; i++ {
				x -= c.deploys[i].weight
			}
			counts[i]++
		}
	} else {
		rest, given := n-len(c.deploys), 0
		fracs := make([]int, len(c.deploys))
		share := make([]float64, len(c.deploys))
		for i, d := range c.deploys {
			q := float64(rest) * d.weight / total
			counts[i] = 1 + int(q)
			given += int(q)
			share[i], fracs[i] = q-math.Floor(q), i
		}
		slices.SortStableFunc(fracs, func(a, b int) int { return cmp.Compare(share[b], share[a]) })
		for _, i := range fracs[:rest-given] {
			counts[i]++
		}
	}
	order := make([]int, 0, n)
	for i, k := range counts {
		for range k {
			order = append(order, i)
		}
	}
	g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })

	var general []int // the nodes of every pool but the system one
	for _, p := range []string{"default-pool", "highmem-pool", "spot-pool"} {
		general = append(general, c.pools[p]...)
	}
	seen := map[string]bool{}
	pods := make([]podDraw, n)
	for i, di := range order {
		d := c.deploys[di]
		p := &pods[i]
		p.d = d
		for p.name == "" || seen[p.name] {
			p.name = d.rsName + "-" + g.suffix(5)
		}
		seen[p.name] = true
		p.uid = g.uid()
		p.vol = "kube-api-access-" + g.suffix(5)
		nodes := general
		if d.pool != "" {
			nodes = c.pools[d.pool]
		}
		p.node = &c.nodes[nodes[g.r.IntN(len(nodes))]]
		a := p.node.podBase + 2 + uint32(p.node.pods%1020)
		p.node.pods++
		p.podIP = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&255, a>>8&255, a&255)

		// Most pods were made by their ReplicaSet's rollout, some later (rescheduled,
		// scaled up).
		p.created = d.rsCreated + int64(g.r.IntN(120))
		if g.r.Float64() < 0.25 {
			p.created = d.rsCreated + g.r.Int64N(max(realisticNow-3600-d.rsCreated, 1))
		}
		p.startTime = p.created + 1
		p.sandboxAt = p.created + 2 + int64(g.r.IntN(4))
		starts := make([]int64, len(d.containers)) // in the spec's order
		ready := int64(0)
		for j := range starts {
			starts[j] = p.sandboxAt + 1 + int64(g.r.IntN(30)) + int64(j)
			ready = max(ready, starts[j])
		}
		ready += int64(d.readyDelay)
		p.ks.ctrs = make([]ctrState, len(d.containers))
		for j, ci := range d.statusOrder {
			p.ks.ctrs[j] = ctrState{startedAt: starts[ci], id: g.hex(64)}
		}
		if g.r.Float64() < d.flaky {
			ci := 0 // mostly the application itself
			if g.r.IntN(10) >= 7 {
				ci = g.r.IntN(len(d.containers))
			}
			cs := &p.ks.ctrs[slices.Index(d.statusOrder, ci)]
			first := cs.startedAt
			cs.restarts = 1 + g.r.IntN(5)
			cs.startedAt = p.created + 3600 + g.r.Int64N(max(realisticNow-p.created-7200, 1))
			t := terminations[g.r.IntN(len(terminations))]
			last := &termState{exitCode: t.code, reason: t.reason, startedAt: first,
				finishedAt: cs.startedAt - 10 - int64(g.r.IntN(290)), id: g.hex(64)}
			if cs.restarts > 1 {
				last.startedAt = max(first, cs.startedAt-600-int64(g.r.IntN(86400)))
			}
			cs.last = last
			ready = max(ready, cs.startedAt+int64(d.readyDelay))
		}
		p.ks.readyAt, p.ks.updatedAt = ready, ready
	}
	return pods
}

// at is the time sec seconds after epoch.
func at(sec int64) time.Time { return epoch.Add(time.Duration(sec) * time.Second) }

// kubeletFields is the fieldsV1 of the kubelet's status Update of a pod of IP podIP.
func kubeletFields(podIP string) obj {
	cond := fset(".", "f:lastProbeTime", "f:lastTransitionTime", "f:status", "f:type")
	return obj{{"f:status", obj{
		{"f:conditions", obj{{`k:{"type":"ContainersReady"}`, cond}, {`k:{"type":"Initialized"}`, cond},
			{`k:{"type":"PodReadyToStartContainers"}`, cond}, {`k:{"type":"Ready"}`, cond}}},
		{"f:containerStatuses", leaf}, {"f:hostIP", leaf}, {"f:hostIPs", leaf}, {"f:phase", leaf}, {"f:podIP", leaf},
		{"f:podIPs", obj{{".", leaf}, {`k:{"ip":"` + podIP + `"}`, fset(".", "f:ip")}}},
		{"f:startTime", leaf}}}}
}

// fields is the realistic pod's metadata and the fields after it (spec, status), in
// kubelet state ks.
func (p *podDraw) fields(o Options, ks *kubeletState) (obj, []field) {
	d := p.d
	owners := []obj{{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", d.rsName}, {"uid", d.rsUID},
		{"controller", true}, {"blockOwnerDeletion", true}}}
	var managed []obj
	if !o.NoManagedFields {
		managed = []obj{managedEntry("kube-controller-manager", at(p.created), d.kcmFields, ""), p.kubeletEntry(ks)}
	}
	md := metaFields(p.name, d.rsName+"-", d.ns, p.uid, at(p.created), d.labels, d.annotations, owners, managed)
	return md, []field{{"spec", d.spec(p.vol, p.node.name, false)}, {"status", p.status(ks)}}
}

// kubeletEntry is the kubelet's managedFields entry in state ks.
func (p *podDraw) kubeletEntry(ks *kubeletState) obj {
	return managedEntry("kubelet", at(ks.updatedAt), kubeletFields(p.podIP), "status")
}

// status is the pod's status in kubelet state ks.
func (p *podDraw) status(ks *kubeletState) obj {
	d := p.d
	cond := func(t string, sec int64) obj {
		return obj{{"type", t}, {"status", "True"}, {"lastProbeTime", nil}, {"lastTransitionTime", tsu(sec)}}
	}
	statuses := make([]obj, len(d.containers))
	for j, ci := range d.statusOrder {
		statuses[j] = d.containers[ci].status(d, p.vol, &ks.ctrs[j])
	}
	return obj{
		{"phase", "Running"},
		{"conditions", []obj{cond("PodReadyToStartContainers", p.sandboxAt), cond("Initialized", p.startTime),
			cond("Ready", ks.readyAt), cond("ContainersReady", ks.readyAt), cond("PodScheduled", p.created)}},
		{"hostIP", p.node.ip},
		{"hostIPs", []obj{{{"ip", p.node.ip}}}},
		{"podIP", p.podIP},
		{"podIPs", []obj{{{"ip", p.podIP}}}},
		{"startTime", tsu(p.startTime)},
		{"containerStatuses", statuses},
		{"qosClass", d.qos},
	}
}

// The JSON that comes before an object's metadata, whole and as PartialObjectMetadata.
const (
	podJSONPrefix     = `{"kind":"Pod","apiVersion":"v1","metadata":`
	partialJSONPrefix = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":`
)

// podEncoder encodes realistic pods into buffers it reuses.
type podEncoder struct{ e encoder }

// bytes is v encoded, valid until the next call.
func (pe *podEncoder) bytes(v any) []byte {
	pe.e.buf, pe.e.at, pe.e.kinds = pe.e.buf[:0], pe.e.at[:0], pe.e.kinds[:0]
	pe.e.value(v)
	return pe.e.buf
}

// template is newTemplate's, encoded in the reused buffer.
func (pe *podEncoder) template(o obj) template {
	b := pe.bytes(o)
	e := &pe.e
	if len(e.kinds) != 2 || e.kinds[0] == e.kinds[1] || max(e.kinds[0], e.kinds[1]) > holeStamp {
		panic("streamserver: an object must have exactly one resourceVersion and one stamp hole")
	}
	return template{buf: bytes.Clone(b), at: [2]int{e.at[0], e.at[1]}, kinds: [2]hole{e.kinds[0], e.kinds[1]}}
}

// piece is where the encoding of a part of the pod is in its template's buf: the
// kubelet's managedFields entry or the status, which variants change.
func (pe *podEncoder) piece(buf []byte, part any) (int, []byte) {
	b := bytes.Clone(pe.bytes(part))
	i := bytes.Index(buf, b)
	if i < 0 || bytes.Contains(buf[i+1:], b) {
		panic("streamserver: a realistic pod's kubelet fields are not found once in its encoding")
	}
	return i, b
}

// encode makes the pod's item: its templates and its kubelet variants, found by
// encoding the parts of the pod that a variant changes (its status and the kubelet's
// managedFields entry) and comparing them with the pod's.
func (p *podDraw) encode(o Options, pe *podEncoder) item {
	md, rest := p.fields(o, &p.ks)
	full, partial := wholeAndPartial("Pod", md, rest...)
	it := item{name: p.name, ns: p.d.ns, nsHash: p.d.nsHash, uidHash: shard.Hash(p.uid),
		full: pe.template(full), meta: pe.template(partial)}
	if !bytes.HasPrefix(it.full.buf, []byte(podJSONPrefix)) || !bytes.HasPrefix(it.meta.buf, []byte(partialJSONPrefix)) {
		panic("streamserver: a pod's JSON does not start as expected")
	}
	type part struct {
		at   int
		base []byte
		of   func(ks *kubeletState) any
	}
	statusAt, statusBase := pe.piece(it.full.buf, rest[1].v)
	parts := []part{{statusAt, statusBase, func(ks *kubeletState) any { return p.status(ks) }}}
	if !o.NoManagedFields {
		entryAt, entryBase := pe.piece(it.full.buf, p.kubeletEntry(&p.ks))
		parts = append(parts, part{entryAt, entryBase, func(ks *kubeletState) any { return p.kubeletEntry(ks) }})
	}
	metaFrom, metaTo := len(podJSONPrefix), len(podJSONPrefix)+len(it.meta.buf)-len(partialJSONPrefix)-1
	kv := &podVariants{}
	for v := range kubeletVariants {
		ks := p.ks.variant(it.uidHash, v+1)
		type change struct {
			s patchSpan
			b []byte
		}
		var changes []change
		for _, pt := range parts {
			b := pe.bytes(pt.of(&ks))
			if len(b) != len(pt.base) {
				panic(fmt.Sprintf("streamserver: pod %s's kubelet variant %d changes a part's length", p.name, v))
			}
			for _, s := range diffSpans(pt.base, b, [2]int{-1, -1}) {
				changes = append(changes, change{patchSpan{s.at + uint32(pt.at), s.n}, bytes.Clone(b[s.at : s.at+s.n])})
			}
		}
		slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.s.at, b.s.at) })
		spans := make([]patchSpan, len(changes))
		var data []byte
		for i, c := range changes {
			spans[i] = c.s
			data = append(data, c.b...)
		}
		kv.full.set(v, spans, it.full.buf, data, 0)
		var inMeta []patchSpan
		for _, s := range spans {
			if int(s.at) >= metaFrom && int(s.at+s.n) <= metaTo {
				inMeta = append(inMeta, s)
			}
		}
		kv.meta.set(v, inMeta, it.full.buf, data, len(partialJSONPrefix)-len(podJSONPrefix))
	}
	it.kubelet = kv
	return it
}

// genRealisticPods makes n pods of the realistic profile (see RealisticPods): drawn in
// order from the seed, then built and encoded in parallel.
func genRealisticPods(g *gen, n int) []item {
	c := realisticCluster(g)
	pods := c.drawPods(g, n)
	items := make([]item, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pe := &podEncoder{e: encoder{buf: make([]byte, 0, 64<<10)}}
			for i := w; i < n; i += workers {
				items[i] = pods[i].encode(g.opts, pe)
			}
		})
	}
	wg.Wait()
	return items
}

// Kubelet variants as patches of an object's templates.

// patchSpan replaces n bytes at offset at of a template's buf (where its holes are cut out).
type patchSpan struct{ at, n uint32 }

// patchSet is an object's kubeletVariants variants in one encoding: variant v replaces
// each of spans[v] with the next bytes of data[v]. Spans are in ascending order, never
// across a hole, and replace bytes with as many: a variant has its object's size.
type patchSet struct {
	spans [kubeletVariants][]patchSpan
	data  [kubeletVariants][]byte
}

// set sets variant v to spans, shifted by shift, whose bytes are the next ones of data,
// the spans being in order; but the spans whose bytes are base's (at their unshifted
// offsets) are left out.
func (p *patchSet) set(v int, spans []patchSpan, base, data []byte, shift int) {
	p.spans[v], p.data[v] = nil, nil
	for _, s := range spans {
		b := data[:s.n]
		data = data[s.n:]
		if bytes.Equal(b, base[s.at:s.at+s.n]) {
			continue
		}
		p.spans[v] = append(p.spans[v], patchSpan{uint32(int(s.at) + shift), s.n})
		p.data[v] = append(p.data[v], b...)
	}
}

// podVariants are a realistic pod's kubelet variants: JSON whole and as
// PartialObjectMetadata, and protobuf (set by loadProtobuf).
type podVariants struct {
	full, meta, pb patchSet
}

// diffSpans are the spans where variant differs from base (which is as long, and has
// its holes at the same offsets, holes), runs less than 8 bytes apart joined unless a
// hole is between them.
func diffSpans(base, variant []byte, holes [2]int) []patchSpan {
	var spans []patchSpan
	for i := 0; i < len(base); {
		if base[i] == variant[i] {
			i++
			continue
		}
		s := i
		for i < len(base) && base[i] != variant[i] {
			i++
		}
		for _, h := range holes {
			if s < h && h < i {
				panic("streamserver: a kubelet variant changes the bytes around a hole")
			}
		}
		if k := len(spans) - 1; k >= 0 {
			prev := &spans[k]
			end := int(prev.at + prev.n)
			between := false
			for _, h := range holes {
				between = between || end <= h && h <= s
			}
			if s-end < 8 && !between {
				prev.n = uint32(i) - prev.at
				continue
			}
		}
		spans = append(spans, patchSpan{uint32(s), uint32(i - s)})
	}
	return spans
}

// writePatched writes the object of template t as write does, with the spans replaced by
// data.
func (t *template) writePatched(w *bufio.Writer, rv, stamp []byte, spans []patchSpan, data []byte) {
	prev, h := 0, 0
	holesTo := func(end int) { // the holes before end, with the bytes before each
		for ; h < len(t.at) && t.at[h] <= end; h++ {
			w.Write(t.buf[prev:t.at[h]])
			if t.kinds[h] == holeRV {
				w.Write(rv)
			} else {
				w.Write(stamp)
			}
			prev = t.at[h]
		}
	}
	for _, s := range spans {
		holesTo(int(s.at))
		w.Write(t.buf[prev:s.at])
		w.Write(data[:s.n])
		data = data[s.n:]
		prev = int(s.at + s.n)
	}
	holesTo(len(t.buf))
	w.Write(t.buf[prev:])
}

// appendPatched is writePatched for a byte slice (tests).
func (t *template) appendPatched(b, rv, stamp []byte, spans []patchSpan, data []byte) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	t.writePatched(w, rv, stamp, spans, data)
	_ = w.Flush()
	return append(b, buf.Bytes()...)
}

// emitKubelet is emit of a realistic pod's change: its kubelet variant v.
func (w *watcher) emitKubelet(typ int, it *item, rv []byte, v int) {
	kv := it.kubelet
	if w.pb {
		if len(rv) != len(it.rvs) {
			w.emitProtobuf(typ, it, rv) // which fails the watch
			return
		}
		putStamp(&w.stamp, time.Now().UnixNano())
		w.writeProtobufEventHead(protobufEventType[typ], it.pb.size(len(rv)))
		it.pb.writePatched(w.bw, rv, w.stamp[:], kv.pb.spans[v], kv.pb.data[v])
		w.bw.WriteString(unknownTail)
		w.events++
		return
	}
	putStamp(&w.stamp, time.Now().UnixNano())
	w.bw.WriteString(eventPrefix[typ])
	if w.metaOnly {
		it.meta.writePatched(w.bw, rv, w.stamp[:], kv.meta.spans[v], kv.meta.data[v])
	} else {
		it.full.writePatched(w.bw, rv, w.stamp[:], kv.full.spans[v], kv.full.data[v])
	}
	w.bw.WriteString(eventSuffix)
	w.events++
}

// The kubelet variants in protobuf.

// pbSpot is where a value is in a message: its bytes' offset and length.
type pbSpot struct{ at, n int }

// pbKubelet is where a realistic pod's message has the values of its kubeletState.
type pbKubelet struct {
	updated pbSpot   // the kubelet's managedFields time's seconds (n 0: no managedFields)
	ready   []pbSpot // the Ready and ContainersReady conditions' lastTransitionTime's seconds
	ctrs    []pbCtr  // by containerStatuses
}

// pbCtr is where a containerStatus has its values: restartCount, the running state's
// startedAt seconds, the hex of containerID, and the last termination's startedAt and
// finishedAt seconds and containerID hex (n 0: no last termination).
type pbCtr struct {
	restarts, started, id             pbSpot
	lastStarted, lastFinished, lastID pbSpot
}

// pbWalk calls fn for each field of msg (which starts at offset base of the whole
// message): for a varint its value, offset and length, for a length-delimited field its
// bytes and their offset.
func pbWalk(msg []byte, base int, fn func(num int, val []byte, v uint64, at, n int) error) error {
	for i := 0; i < len(msg); {
		key, n, err := readVarint(msg[i:])
		if err != nil {
			return err
		}
		i += n
		num, wt := int(key>>3), int(key&7)
		switch wt {
		case wireVarint:
			v, n, err := readVarint(msg[i:])
			if err != nil {
				return err
			}
			if err := fn(num, nil, v, base+i, n); err != nil {
				return err
			}
			i += n
		case wireBytes:
			l, n, err := readVarint(msg[i:])
			if err != nil || l > uint64(len(msg)-i-n) {
				return fmt.Errorf("field %d: truncated", num)
			}
			i += n
			if err := fn(num, msg[i:i+int(l)], 0, base+i, int(l)); err != nil {
				return err
			}
			i += int(l)
		case wire64:
			i += 8
		case wire32:
			i += 4
		default:
			return fmt.Errorf("field %d: wire type %d", num, wt)
		}
	}
	return nil
}

// pbEach calls fn for every field num of msg (at base).
func pbEach(msg []byte, base, num int, fn func(val []byte, v uint64, at, n int) error) error {
	return pbWalk(msg, base, func(f int, val []byte, v uint64, at, n int) error {
		if f != num {
			return nil
		}
		return fn(val, v, at, n)
	})
}

// pbSeconds finds the seconds of a metav1.Time message, relative to epoch.
func pbSeconds(msg []byte, base int) (int64, pbSpot, error) {
	var sec int64
	var spot pbSpot
	err := pbEach(msg, base, 1, func(_ []byte, v uint64, at, n int) error {
		sec, spot = int64(v)-epoch.Unix(), pbSpot{at, n}
		return nil
	})
	if err == nil && spot.n == 0 {
		err = errors.New("a time without seconds")
	}
	return sec, spot, err
}

const containerdPrefix = "containerd://"

// pbContainerID finds the hex of a containerID string.
func pbContainerID(val []byte, at int) (string, pbSpot, error) {
	hex, ok := bytes.CutPrefix(val, []byte(containerdPrefix))
	if !ok || len(hex) != 64 {
		return "", pbSpot{}, fmt.Errorf("containerID %q", val)
	}
	return string(hex), pbSpot{at + len(containerdPrefix), 64}, nil
}

// pbNameAndTime reads a message's string field 1 and the seconds of its time field 4 (a
// managedFields entry's manager and time, a condition's type and lastTransitionTime),
// with where those seconds are; found says whether field 4 was there.
func pbNameAndTime(msg []byte, at int) (name string, sec int64, spot pbSpot, found bool, err error) {
	err = pbWalk(msg, at, func(num int, val []byte, _ uint64, at, _ int) error {
		var err error
		switch num {
		case 1:
			name = string(val)
		case 4:
			sec, spot, err = pbSeconds(val, at)
			found = true
		}
		return err
	})
	return name, sec, spot, found, err
}

// readKubelet reads a realistic pod's message (Pod: metadata 1, status 3) for its
// kubeletState and where each of its values is.
func readKubelet(msg []byte) (kubeletState, pbKubelet, error) {
	var ks kubeletState
	var loc pbKubelet
	err := pbWalk(msg, 0, func(num int, val []byte, _ uint64, at, _ int) error {
		switch num {
		case 1: // ObjectMeta: managedFields 17, each {manager 1, time 4}
			return pbEach(val, at, 17, func(entry []byte, _ uint64, at, _ int) error {
				manager, sec, spot, found, err := pbNameAndTime(entry, at)
				if err == nil && manager == "kubelet" && found {
					ks.updatedAt, loc.updated = sec, spot
				}
				return err
			})
		case 3: // PodStatus: conditions 2, containerStatuses 8
			return pbWalk(val, at, func(num int, val []byte, _ uint64, at, _ int) error {
				switch num {
				case 2: // PodCondition: type 1, lastTransitionTime 4
					typ, sec, spot, _, err := pbNameAndTime(val, at)
					if err == nil && (typ == "Ready" || typ == "ContainersReady") {
						ks.readyAt = sec
						loc.ready = append(loc.ready, spot)
					}
					return err
				case 8:
					cs, c, err := readContainerStatus(val, at)
					ks.ctrs = append(ks.ctrs, cs)
					loc.ctrs = append(loc.ctrs, c)
					return err
				}
				return nil
			})
		}
		return nil
	})
	switch {
	case err != nil:
	case len(loc.ready) != 2:
		err = fmt.Errorf("%d Ready and ContainersReady conditions, want 2", len(loc.ready))
	case len(ks.ctrs) == 0:
		err = errors.New("no containerStatuses")
	}
	return ks, loc, err
}

// readContainerStatus reads a ContainerStatus (state 2 and lastState 3, ContainerStates
// {running 2 {startedAt 1}, terminated 3 {exitCode 1, reason 3, startedAt 5, finishedAt 6,
// containerID 7}}; restartCount 5, containerID 8).
func readContainerStatus(msg []byte, base int) (ctrState, pbCtr, error) {
	var cs ctrState
	var c pbCtr
	err := pbWalk(msg, base, func(num int, val []byte, v uint64, at, n int) error {
		switch num {
		case 2:
			return pbEach(val, at, 2, func(running []byte, _ uint64, at, _ int) error {
				return pbEach(running, at, 1, func(t []byte, _ uint64, at, _ int) error {
					var err error
					cs.startedAt, c.started, err = pbSeconds(t, at)
					return err
				})
			})
		case 3:
			return pbEach(val, at, 3, func(term []byte, _ uint64, at, _ int) error {
				cs.last = &termState{}
				return pbWalk(term, at, func(num int, val []byte, v uint64, at, _ int) error {
					var err error
					switch num {
					case 1:
						cs.last.exitCode = int(v)
					case 3:
						cs.last.reason = string(val)
					case 5:
						cs.last.startedAt, c.lastStarted, err = pbSeconds(val, at)
					case 6:
						cs.last.finishedAt, c.lastFinished, err = pbSeconds(val, at)
					case 7:
						cs.last.id, c.lastID, err = pbContainerID(val, at)
					}
					return err
				})
			})
		case 5:
			cs.restarts, c.restarts = int(v), pbSpot{at, n}
		case 8:
			var err error
			cs.id, c.id, err = pbContainerID(val, at)
			return err
		}
		return nil
	})
	if err == nil && (c.started.n == 0 || c.id.n == 0 || c.restarts.n == 0) {
		err = errors.New("a containerStatus without its running state, containerID or restartCount")
	}
	return cs, c, err
}

// loadProtobuf sets the pod's protobuf variants from msg, its message as listed, whose
// template is it.pb: the values of its kubeletState that each variant changes, patched
// in place.
func (kv *podVariants) loadProtobuf(msg []byte, it *item) error {
	ks, loc, err := readKubelet(msg)
	if err != nil {
		return fmt.Errorf("kubelet fields: %w", err)
	}
	// toBuf is the offset in it.pb.buf of offset at of msg, which has the holes' bytes.
	toBuf := func(at int) int {
		cut := 0
		for h, hat := range it.pb.at {
			width := stampWidth
			if it.pb.kinds[h] == holeRV {
				width = len(it.rvs)
			}
			if hat+cut < at {
				cut += width
			}
		}
		return at - cut
	}
	type change struct {
		at  int
		val []byte
	}
	for v := range kubeletVariants {
		vs := ks.variant(it.uidHash, v+1)
		var changes []change
		var bad error
		varint := func(spot pbSpot, old, new uint64) {
			if old == new || spot.n == 0 {
				return
			}
			b := appendVarint(nil, new)
			if len(b) != spot.n {
				bad = fmt.Errorf("variant %d: a varint of %d bytes becomes %d", v, spot.n, len(b))
			}
			changes = append(changes, change{spot.at, b})
		}
		secs := func(spot pbSpot, old, new int64) {
			varint(spot, uint64(old+epoch.Unix()), uint64(new+epoch.Unix()))
		}
		hex := func(spot pbSpot, old, new string) {
			if old != new {
				changes = append(changes, change{spot.at, []byte(new)})
			}
		}
		secs(loc.updated, ks.updatedAt, vs.updatedAt)
		for _, r := range loc.ready {
			secs(r, ks.readyAt, vs.readyAt)
		}
		if len(vs.ctrs) != len(loc.ctrs) {
			return fmt.Errorf("variant %d: %d containers, %d in the message", v, len(vs.ctrs), len(loc.ctrs))
		}
		for j, c := range loc.ctrs {
			b, n := &ks.ctrs[j], &vs.ctrs[j]
			varint(c.restarts, uint64(b.restarts), uint64(n.restarts))
			secs(c.started, b.startedAt, n.startedAt)
			hex(c.id, b.id, n.id)
			if (b.last == nil) != (n.last == nil) {
				return fmt.Errorf("variant %d: container %d's last state appears or goes", v, j)
			}
			if b.last != nil {
				secs(c.lastStarted, b.last.startedAt, n.last.startedAt)
				secs(c.lastFinished, b.last.finishedAt, n.last.finishedAt)
				hex(c.lastID, b.last.id, n.last.id)
			}
		}
		if bad != nil {
			return bad
		}
		slices.SortFunc(changes, func(a, b change) int { return a.at - b.at })
		spans := make([]patchSpan, len(changes))
		var data []byte
		for i, ch := range changes {
			spans[i] = patchSpan{uint32(toBuf(ch.at)), uint32(len(ch.val))}
			data = append(data, ch.val...)
		}
		kv.pb.spans[v], kv.pb.data[v] = spans, data
	}
	return nil
}
