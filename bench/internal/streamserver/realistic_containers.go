package streamserver

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The containers of the realistic corpus: what a Deployment's pods run (about twenty
// main specs of common stacks, and the sidecars that platforms add), and the helpers
// that write their parts as the apiserver does.

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

// status is the container's status as the kubelet writes it, with the values of its
// state t (see podText).
func (c *ctrSpec) status(d *rDeploy, apiVol string, t *ctrText) obj {
	o := obj{{"name", c.name}, {"state", obj{{"running", obj{{"startedAt", t.started}}}}}, {"lastState", t.last},
		{"ready", true}, {"restartCount", t.restarts}, {"image", c.statusImage}, {"imageID", c.imageID},
		{"containerID", "containerd://" + t.id}, {"started", true}}
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

// lastState is a containerStatus's lastState in state s: its last termination, or {}.
func lastState(s *ctrState) obj {
	if s.last == nil {
		return obj{}
	}
	return obj{{"terminated", obj{{"exitCode", s.last.exitCode}, {"reason", s.last.reason},
		{"startedAt", tsu(s.last.startedAt)}, {"finishedAt", tsu(s.last.finishedAt)},
		{"containerID", "containerd://" + s.last.id}}}}
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
